"""servo_sim: simulated servo motors with Webots Motor/Servo semantics, for ROS 2 and without."""

from pkgutil import extend_path

# The ROS types (servo_sim.msg, servo_sim.srv) are generated into the colcon install's copy
# of this package; extending the path finds them when running from a checkout too.
__path__ = extend_path(__path__, __name__)

__version__ = "0.1.0"
