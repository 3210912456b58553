"""pip install of servo_sim's ROS-free layers (model, CLI); colcon builds with CMake."""

from pathlib import Path

from setuptools import find_packages, setup

here = Path(__file__).parent

setup(
    name="servo_sim",
    version="0.1.0",
    description="Simulated servo motors with Webots Motor semantics, for ROS 2 and without it",
    long_description=(here / "README.md").read_text(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=["servo_sim", "servo_sim.*"]),
    package_data={"servo_sim.model": ["profiles.yaml"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/servo_sim"]),
        ("share/servo_sim", ["package.xml", "plugin.xml"]),
        ("share/servo_sim/config", sorted(str(p.relative_to(here))
                                          for p in (here / "config").glob("*.*"))),
    ],
    # the vendor SDKs of the dynamixel and feetech hardware plugins (pure Python; pinned
    # in requirements/ros-*.txt; feetech-servo-sdk < 2 as LeRobot pins it)
    install_requires=["numpy>=1.24", "PyYAML>=6", "dynamixel-sdk>=3.7",
                      "feetech-servo-sdk>=1.0,<2"],
    extras_require={
        "plot": ["matplotlib>=3.6"],
        # the servo panel (servo-sim-panel) without rqt: Qt 5 bindings from PyPI
        "panel": ["PyQt5>=5.15", "pyqtgraph>=0.13"],
        # the Robot Raconteur door (servo-sim-rr)
        "rr": ["robotraconteur>=1.2.9,<1.3", "robotraconteurcompanion>=0.4,<0.5"],
        # MuJoCo as the motors' body (physics: mujoco); the engine without its viewer,
        # tested with 4.0.0; numba compiles the servo law for it (tested with 0.68.1)
        "mujoco": ["mujoco-core>=4.0,<4.1", "numba>=0.68,<0.69"],
        # pytest < 9: ROS 2 Jazzy's launch_testing plugin uses the py.path hook arguments
        # that pytest 9 removed; lark: launch's parser, for the ROS tests when ROS is sourced
        "test": ["pytest>=7,<9", "hypothesis>=6.80", "ruff>=0.5", "matplotlib>=3.6",
                 "rosbags>=0.9", "lark>=1.1", "PyQt5>=5.15", "pyqtgraph>=0.13",
                 "pytest-qt>=4.2", "robotraconteur>=1.2.9,<1.3",
                 "robotraconteurcompanion>=0.4,<0.5", "mujoco-core>=4.0,<4.1",
                 "numba>=0.68,<0.69",
                 # SciPy's bounded least squares checks the coupled motors' solve
                 "scipy>=1.10"],
    },
    entry_points={"console_scripts": [
        "servo-sim = servo_sim.cli:main",
        "servo-sim-dxl-emulator = servo_sim.emulators.dxl_emulator:main",
        "servo-sim-sts-emulator = servo_sim.emulators.sts_emulator:main",
        "servo-sim-so101 = servo_sim.emulators.virtual_arm:main",
        # the ROS 2 node (as `ros2 run servo_sim servo_sim_node`) and a small client
        "servo_sim_node = servo_sim.ros.entry:node_main",
        "servo-sim-client = servo_sim.ros.entry:client_main",
        # the servo panel (Qt), also an rqt plugin where rqt is installed (plugin.xml)
        "servo-sim-panel = servo_sim.panel.main:main",
        # the motors as Robot Raconteur com.robotraconteur.servo.Servo services
        "servo-sim-rr = servo_sim.rr.main:main",
    ]},
)
