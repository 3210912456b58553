"""The hardware plugin layer: lifecycle, capabilities, registry and the sim plugin."""

from __future__ import annotations

import logging
import math
import re
import sys
import textwrap
from typing import ClassVar

import numpy as np
import pytest
from conftest import REPO

from servo_sim.hardware import (
    API_VERSION,
    CallbackReturn,
    Capabilities,
    CommandRefusedError,
    HardwareComponent,
    HardwareSystem,
    LifecycleState,
    Mode,
    PluginError,
    StateFlags,
    command_modes,
    discover,
    load_plugin,
)
from servo_sim.hardware import system as system_module
from servo_sim.hardware.base import API_1_TO_2
from servo_sim.hardware.sim import SimHardware
from servo_sim.model import Command, ConfigError, Motor, Simulation, load_config, parse_config
from servo_sim.model.commands import COMMAND
from servo_sim.resources import default_config_path

STEPS_PER_RETRY = system_module.RECOVERY_PERIOD_MS // 8


def two_motors(**hardware):
    return parse_config({"basic_time_step_ms": 8, "hardware": hardware,
                         "motors": [{"name": "a"}, {"name": "b"}]})


class Recorder(HardwareComponent):
    """A plugin that holds the position it reads and records the callbacks called.

    ``script`` maps a callback name to the returns it gives, in order (then SUCCESS).
    """

    script: ClassVar[dict[str, list]] = {}
    caps = Capabilities.all_webots()

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.script = {k: list(v) for k, v in type(self).script.items()}

    def _next(self, name: str) -> CallbackReturn:
        self.calls.append(name)
        queue = self.script.get(name)
        ret = queue.pop(0) if queue else CallbackReturn.SUCCESS
        if isinstance(ret, Exception):
            raise ret
        if ret is not CallbackReturn.SUCCESS:
            self.reason = f"{name} scripted {ret.value}"
        return ret

    def on_configure(self): return self._next("on_configure")
    def on_activate(self): return self._next("on_activate")
    def on_deactivate(self): return self._next("on_deactivate")
    def on_cleanup(self): return self._next("on_cleanup")
    def on_shutdown(self): return self._next("on_shutdown")
    def on_error(self): return self._next("on_error")
    def read(self, time, period): return self._next("read")
    def write(self, time, period): return self._next("write")

    def capabilities(self, index):
        return type(self).caps


def recorder(**script) -> type[Recorder]:
    return type("Scripted", (Recorder,), {"script": script})


# --------------------------------------------------------------------------- sim plugin


def test_sim_plugin_is_the_model_step_for_step():
    """The node's path (HardwareSystem + sim plugin) gives the model's trajectory exactly."""
    config = load_config(default_config_path())
    hw, sim = HardwareSystem(config), Simulation(config)
    assert hw.start() and hw.active and hw.simulated
    hw.command("arm", Command.POSITION, 1.0)
    hw.command("gripper", Command.FORCE, 5.0)
    sim.motor("arm").set_position(1.0)
    sim.motor("gripper").set_force(5.0)
    hw.step(300)
    sim.step(300)
    for name in ("position", "velocity", "motor_force", "energy"):
        np.testing.assert_array_equal(getattr(hw.sim.bank, name), getattr(sim.bank, name))
    np.testing.assert_array_equal(hw.sim.bank.position_sensor.value,
                                  sim.bank.position_sensor.value)
    assert hw.sim.time_ms == sim.time_ms == 2400


def test_sim_flags_and_capabilities():
    hw = HardwareSystem(load_config(default_config_path()))
    hw.start()
    assert hw.flags("arm") == StateFlags.READY | StateFlags.ENABLED
    assert hw.component.capabilities(0) == (Capabilities.all_webots()
                                            | Capabilities.TRAPEZOIDAL_COMMAND)
    hw.deactivate()
    assert hw.flags("arm") == StateFlags.READY


def test_reset_keeps_the_plugin_bound():
    hw = HardwareSystem(load_config(default_config_path()))
    hw.start()
    hw.command("arm", Command.POSITION, 1.0)
    hw.step(100)
    hw.reset()
    assert hw.sim.time_ms == 0 and hw.sim.motor("arm").position == 0.0
    hw.command("arm", Command.POSITION, 0.5)
    hw.step(200)
    assert hw.sim.motor("arm").position == pytest.approx(0.5, abs=1e-3)


def test_command_modes_from_the_command_arrays():
    sim = Simulation(two_motors())
    a, b = sim.motor("a"), sim.motor("b")
    assert list(command_modes(sim.bank)) == [Mode.POSITION, Mode.POSITION]
    a.set_position(math.inf)
    b.set_force(1.0)
    assert list(command_modes(sim.bank)) == [Mode.VELOCITY, Mode.EFFORT]
    a.set_available_force(0.0)
    b.set_position(0.0)
    assert list(command_modes(sim.bank)) == [Mode.OFF, Mode.POSITION]


# --------------------------------------------------------------------------- lifecycle


def test_lifecycle_follows_ros2_control():
    hw = HardwareSystem(two_motors(), recorder())
    assert hw.state is LifecycleState.UNCONFIGURED
    assert hw.start() and hw.state is LifecycleState.ACTIVE
    hw.cycle()
    assert hw.deactivate() and hw.state is LifecycleState.INACTIVE
    assert hw.cleanup() and hw.state is LifecycleState.UNCONFIGURED
    hw.shutdown()
    assert hw.state is LifecycleState.FINALIZED
    assert hw.component.calls == ["on_configure", "on_activate", "read", "write",
                                  "on_deactivate", "on_cleanup", "on_shutdown"]
    with pytest.raises(RuntimeError, match="on_configure needs state unconfigured, not finalized"):
        hw.configure()


def test_shutdown_from_active_deactivates_and_cleans_up_first():
    hw = HardwareSystem(two_motors(), recorder())
    hw.start()
    hw.shutdown()
    assert hw.component.calls[-3:] == ["on_deactivate", "on_cleanup", "on_shutdown"]


def test_failure_keeps_the_state_is_retried_and_logged_once(caplog):
    failures = [CallbackReturn.FAILURE] * 3
    hw = HardwareSystem(two_motors(), recorder(on_configure=failures))
    with caplog.at_level(logging.WARNING, "servo_sim"):
        assert not hw.start()
        assert hw.state is LifecycleState.UNCONFIGURED
        hw.step(3 * STEPS_PER_RETRY)  # two more failed retries, one a recovery period
        assert hw.state is LifecycleState.UNCONFIGURED
        hw.step(1)
        assert hw.state is LifecycleState.ACTIVE
    assert hw.component.calls.count("on_configure") == 4
    assert [r.getMessage() for r in caplog.records] == [
        "hardware 'sim': on_configure failed: on_configure scripted failure; retrying "
        "every 1 s"]


def test_a_failed_activate_at_start_is_retried_by_the_cycle(caplog):
    """As the node starts its hardware (one try, then the cycle's retries): the log line
    says "retrying every 1 s", and the cycle does, from inactive too."""
    hw = HardwareSystem(two_motors(), recorder(on_activate=[CallbackReturn.FAILURE] * 2))
    with caplog.at_level(logging.WARNING, "servo_sim"):
        assert not hw.start()
        assert hw.state is LifecycleState.INACTIVE
        hw.step(STEPS_PER_RETRY + 1)  # a recovery period on: activate fails, cleaned up
        assert hw.state is LifecycleState.UNCONFIGURED
        hw.step(STEPS_PER_RETRY + 1)  # the next: configured and activated
        assert hw.state is LifecycleState.ACTIVE
    assert hw.component.calls[:6] == ["on_configure", "on_activate", "on_activate",
                                      "on_cleanup", "on_configure", "on_activate"]
    assert [r.getMessage() for r in caplog.records] == [
        "hardware 'sim': on_activate failed: on_activate scripted failure; retrying "
        "every 1 s"]


def test_start_goes_on_from_the_state_a_failed_try_left():
    """A failed activation leaves the plugin inactive: the next try activates it only."""
    hw = HardwareSystem(two_motors(), recorder(on_activate=[CallbackReturn.FAILURE]))
    assert not hw.start()
    assert hw.state is LifecycleState.INACTIVE
    assert hw.start() and hw.state is LifecycleState.ACTIVE
    assert hw.component.calls == ["on_configure", "on_activate", "on_activate"]
    assert hw.start()  # active: nothing to do
    assert hw.component.calls == ["on_configure", "on_activate", "on_activate"]


@pytest.mark.parametrize("script, attempts, calls", [
    ({"on_configure": [CallbackReturn.FAILURE] * 2}, 3,
     ["on_configure", "on_configure", "on_configure", "on_activate"]),
    ({"on_activate": [CallbackReturn.FAILURE] * 2}, 3,
     ["on_configure", "on_activate", "on_activate", "on_activate"]),
    ({"on_configure": [CallbackReturn.FAILURE], "on_activate": [CallbackReturn.ERROR]}, 3,
     ["on_configure", "on_configure", "on_activate", "on_error", "on_configure",
      "on_activate"]),
])
def test_start_tries_again_while_it_fails(script, attempts, calls):
    hw = HardwareSystem(two_motors(), recorder(**script))
    assert hw.start(attempts=attempts, retry_s=0.0), hw.component.reason
    assert hw.state is LifecycleState.ACTIVE and hw.component.calls == calls


def test_start_gives_up_when_the_tries_run_out_or_the_plugin_is_finalized():
    hw = HardwareSystem(two_motors(), recorder(on_configure=[CallbackReturn.FAILURE] * 3))
    assert not hw.start(attempts=3, retry_s=0.0)
    assert hw.state is LifecycleState.UNCONFIGURED
    assert hw.component.calls == ["on_configure"] * 3
    assert hw.component.reason == "on_configure scripted failure"

    hw = HardwareSystem(two_motors(), recorder(on_configure=[CallbackReturn.ERROR],
                                               on_error=[CallbackReturn.FAILURE]))
    assert not hw.start(attempts=3, retry_s=0.0)
    assert hw.state is LifecycleState.FINALIZED
    assert hw.component.calls == ["on_configure", "on_error"]  # no further try
    assert hw.component.reason == "on_error scripted failure"
    with pytest.raises(ValueError, match="attempts = 0: must be >= 1"):
        hw.start(attempts=0)


def test_commands_refused_unless_active_and_state_unchanged():
    hw = HardwareSystem(two_motors(), recorder())
    with pytest.raises(CommandRefusedError, match="motor 'a': set_position refused: hardware "
                       "'sim' is unconfigured"):
        hw.command("a", Command.POSITION, 1.0)
    assert hw.sim.motor("a").get_target_position() == 0.0
    # getters are the view's, not commands; sensors are served whatever the state
    with pytest.raises(TypeError, match="motor 'a': command .*get_max_velocity.*: not a "
                       r"row of the command table"):
        hw.command("a", Motor.get_max_velocity)
    hw.command("a", Command.ENABLE_POSITION, 8)
    assert hw.sim.motor("a").get_position_sampling_period() == 8


def test_read_error_halts_commands_then_recovers(caplog):
    plugin = recorder(read=[CallbackReturn.ERROR])
    hw = HardwareSystem(two_motors(), plugin)
    hw.start()
    with caplog.at_level(logging.INFO, "servo_sim"):
        assert not hw.cycle()
        assert hw.state is LifecycleState.UNCONFIGURED
        assert hw.component.calls[-2:] == ["read", "on_error"]  # no write after a bad read
        with pytest.raises(CommandRefusedError, match=r"is unconfigured \(read scripted error\)"):
            hw.command("b", Command.VELOCITY, 1.0)
        hw.step(STEPS_PER_RETRY - 1)  # retried a recovery period after the error
        assert hw.state is LifecycleState.UNCONFIGURED
        hw.step(1)
        assert hw.state is LifecycleState.ACTIVE
    assert "hardware 'sim': read: read scripted error; commands halted" in caplog.text
    assert "hardware 'sim': recovered (was: read scripted error)" in caplog.text
    hw.command("b", Command.VELOCITY, 1.0)


def test_write_error_and_exceptions_go_through_on_error():
    hw = HardwareSystem(two_motors(), recorder(write=[OSError("bus unplugged")]))
    hw.start()
    assert hw.cycle()  # the read worked; the write raised
    assert hw.state is LifecycleState.UNCONFIGURED
    assert hw.component.reason == "write raised OSError: bus unplugged"


def test_on_error_failure_finalizes():
    plugin = recorder(read=[CallbackReturn.ERROR], on_error=[CallbackReturn.FAILURE])
    hw = HardwareSystem(two_motors(), plugin)
    hw.start()
    hw.cycle()
    assert hw.state is LifecycleState.FINALIZED
    hw.step(2 * STEPS_PER_RETRY)  # never retried
    assert hw.state is LifecycleState.FINALIZED


def test_failed_init_is_a_config_error_naming_the_plugin():
    class Picky(Recorder):
        def on_init(self, info):
            super().on_init(info)
            return self.fail(f"setting 'port' = {info.settings.get('port')!r}: missing")

    with pytest.raises(ConfigError, match=r"<dict>: hardware 'sim': setting 'port' = None: "
                       "missing"):
        HardwareSystem(two_motors(), Picky)


# --------------------------------------------------------------------------- capabilities


def test_capabilities_gate_commands():
    class PositionOnly(Recorder):
        caps = Capabilities.POSITION_COMMAND | Capabilities.VELOCITY_LIMIT

    hw = HardwareSystem(two_motors(), PositionOnly)
    hw.start()
    hw.command("a", Command.POSITION, 1.0)
    hw.command("a", Command.VELOCITY, 2.0)
    for call, args, need in ((Command.CONTROL_PID, (1.0, 0.0, 0.0), "pid_gains"),
                             (Command.TORQUE, (1.0,), "effort_command"),
                             (Command.AVAILABLE_FORCE, (1.0,), "available_force"),
                             (Command.ACCELERATION, (1.0,), "acceleration_limit"),
                             (Command.POSITION, (math.inf,), "velocity_command")):
        why = f"motor 'a': {call.name} not supported by hardware 'sim' \\(needs {need}\\)"
        with pytest.raises(CommandRefusedError, match=why):
            hw.command("a", call, *args)
    m = hw.sim.motor("a")
    assert (m.get_control_pid(), m.get_available_force(), m.get_acceleration(),
            m.get_target_position()) == ((10.0, 0.0, 0.0), 10.0, -1.0, 1.0)


@pytest.mark.parametrize("lacking", [0, 1])
def test_a_coupled_group_takes_a_command_only_if_every_motor_of_it_can(lacking):
    """Coupled motors ('w::a', 'w::b') relay commands: a command to either is refused,
    naming the motor that lacks the capability, when one of the two lacks it (the first
    or the second), and changes neither; what both can do goes to both."""
    names = ("w::a", "w::b")

    class OneLacksForce(Recorder):
        def capabilities(self, index):
            caps = Capabilities.all_webots()
            return caps & ~Capabilities.AVAILABLE_FORCE if index == lacking else caps

    hw = HardwareSystem(parse_config({"basic_time_step_ms": 8, "motors": [
        {"name": n, "max_torque": 10.0} for n in names]}), OneLacksForce)
    hw.start()
    for commanded in names:
        with pytest.raises(CommandRefusedError, match=re.escape(
                f"motor {names[lacking]!r}: set_available_force not supported by hardware "
                "'sim' (needs available_force)")):
            hw.command(commanded, Command.AVAILABLE_FORCE, 1.0)
        assert [hw.sim.motor(n).get_available_force() for n in names] == [10.0, 10.0]
        hw.command(commanded, Command.POSITION, 0.5)
        assert [hw.sim.motor(n).get_target_position() for n in names] == [0.5, 0.5]


# --------------------------------------------------------------------------- config


def test_hardware_group_in_both_config_forms():
    model = two_motors(plugin="dynamixel", port="/dev/ttyUSB0", a={"id": 1})
    assert model.hardware == {"plugin": "dynamixel", "port": "/dev/ttyUSB0", "a": {"id": 1}}
    ros = parse_config({"servo_sim": {"ros__parameters": {
        "motors": ["a"], "hardware.plugin": "dynamixel", "hardware.a.id": 1}}})
    assert ros.hardware == {"plugin": "dynamixel", "a": {"id": 1}}
    assert parse_config({"motors": [{"name": "a"}]}).hardware == {"plugin": "sim"}


@pytest.mark.parametrize("hardware, message", [
    ("dynamixel", "field 'hardware' = 'dynamixel': must be a mapping with a 'plugin'"),
    ({"plugin": 3}, "field 'hardware.plugin' = 3: must be a plugin name"),
])
def test_bad_hardware_group(hardware, message):
    with pytest.raises(ConfigError, match=f"^<dict>: {message}$"):
        parse_config({"hardware": hardware, "motors": [{"name": "a"}]})


# --------------------------------------------------------------------------- registry


def test_builtins_and_unknown_names():
    assert load_plugin("sim") is SimHardware
    assert {"sim", "dynamixel", "feetech"} <= set(discover())
    with pytest.raises(PluginError, match=r"unknown hardware plugin 'simm' \(known: "
                       r"dynamixel, feetech, sim; or give 'package.module:Class'\)"):
        load_plugin("simm")
    with pytest.raises(PluginError, match="unknown hardware plugin 'simm'"):
        HardwareSystem(two_motors(plugin="simm"))


@pytest.fixture
def plugin_site(tmp_path, monkeypatch):
    """A site directory with a module of plugins and a distribution declaring entry points."""
    (tmp_path / "acme_servo.py").write_text(textwrap.dedent(f"""
        from servo_sim.hardware import CallbackReturn, HardwareComponent

        class Good(HardwareComponent):
            def read(self, time, period): return CallbackReturn.SUCCESS
            def write(self, time, period): return CallbackReturn.SUCCESS

        class Old(Good):
            API_VERSION = {API_VERSION - 1}

        class NotAPlugin:
            pass
    """))
    dist = tmp_path / "acme_servo-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme_servo\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent("""
        [servo_sim.hardware]
        acme = acme_servo:Good
        acme_old = acme_servo:Old
        acme_broken = acme_servo_missing_module:Servo
        sim = acme_servo:Good
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("acme_servo", None)


def test_entry_points_found_broken_ones_skipped(plugin_site, caplog):
    with caplog.at_level(logging.WARNING, "servo_sim"):
        found = discover()
    assert found["acme"].__name__ == "Good" and found["sim"] is SimHardware
    assert "acme_broken" not in found and "acme_old" not in found
    assert ("hardware plugin 'acme_broken' (acme_servo_missing_module:Servo): cannot load: "
            "ModuleNotFoundError: No module named 'acme_servo_missing_module'; skipped"
            in caplog.text)
    assert ("hardware plugin 'acme_old': written for API_VERSION 1, this servo_sim "
            f"provides 2: {API_1_TO_2}; skipped" in caplog.text)
    assert "hardware plugin 'sim' from entry point acme_servo:Good ignored" in caplog.text
    with pytest.raises(PluginError, match=r"'acme_broken'.*cannot load"):
        load_plugin("acme_broken")
    hw = HardwareSystem(two_motors(plugin="acme"))
    assert hw.start() and hw.plugin_name == "acme"


def test_dotted_path(plugin_site):
    assert load_plugin("acme_servo:Good").__name__ == "Good"
    with pytest.raises(PluginError, match=r"'acme_servo:NotAPlugin': .* is not a subclass of "
                       "servo_sim.hardware.HardwareComponent"):
        load_plugin("acme_servo:NotAPlugin")
    with pytest.raises(PluginError, match="'acme_servo:Nope': cannot load: AttributeError"):
        load_plugin("acme_servo:Nope")


def test_sim_plugin_saturates_silently_like_the_model(recwarn):
    """Absurd gains overflow inside the step by design; no numpy warning escapes."""
    hw = HardwareSystem(load_config(default_config_path()))
    hw.start()
    hw.command("arm", Command.CONTROL_PID, 1e308, 0.0, 1e308)
    hw.command("arm", Command.POSITION, 1.0)
    hw.step(50)
    assert np.isfinite(hw.sim.bank.position).all()
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_an_activation_error_during_recovery_is_retried_too():
    plugin = recorder(read=[CallbackReturn.ERROR],
                      on_activate=[CallbackReturn.SUCCESS, CallbackReturn.ERROR])
    hw = HardwareSystem(two_motors(), plugin)
    hw.start()
    hw.step(1 + STEPS_PER_RETRY)  # read error, then a retry whose activation errs
    assert hw.state is LifecycleState.UNCONFIGURED
    assert hw.component.calls[-4:] == ["on_error", "on_configure", "on_activate", "on_error"]
    hw.step(STEPS_PER_RETRY)
    assert hw.state is LifecycleState.ACTIVE


# --------------------------------------------------------------------------- interfaces (API 2)


class Declared(Recorder):
    """Reads the position it declared, writes it as its state; touches what it is told."""

    STATE_INTERFACES = ("position", "velocity")
    COMMAND_INTERFACES = ("mode", "target_position")
    touch: ClassVar[str] = ""  # "commands.enabled": read() touches that

    def read(self, time, period):
        if self.touch:
            kind, name = self.touch.split(".")
            getattr(getattr(self, kind), name)
        self.state.position[:] = [0.25, -0.5]
        self.state.velocity[:] = [1.0, 2.0]
        return super().read(time, period)

    def write(self, time, period):
        self.seen = self.commands.mode.copy(), self.commands.target_position.copy()
        return super().write(time, period)


def test_an_undeclared_interface_says_where_to_declare_it():
    hw = HardwareSystem(two_motors(), Declared)
    hw.start()
    with pytest.raises(AttributeError, match=r"^hardware plugin 'sim': command interface "
                       r"'enabled' is not declared: add it to Declared.COMMAND_INTERFACES$"):
        hw.component.commands.enabled  # noqa: B018
    with pytest.raises(AttributeError, match=r"^hardware plugin 'sim': state interface "
                       r"'effort' is not declared: add it to Declared.STATE_INTERFACES$"):
        hw.component.state.effort  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'torque'"):
        hw.component.commands.torque  # noqa: B018
    # inside a cycle: an error like any other (on_error, retried), the reason says it
    touching = type("Touching", (Declared,), {"touch": "commands.applied_force"})
    hw = HardwareSystem(two_motors(), touching)
    hw.start()
    assert not hw.cycle() and hw.state is LifecycleState.UNCONFIGURED
    assert hw.component.reason == (
        "read raised AttributeError: hardware plugin 'sim': command interface "
        "'applied_force' is not declared: add it to Touching.COMMAND_INTERFACES")


def test_command_views_are_read_only_and_interfaces_cannot_be_replaced():
    hw = HardwareSystem(two_motors(), Declared)
    hw.start()
    commands, state = hw.component.commands, hw.component.state
    with pytest.raises(ValueError, match="read-only"):
        commands.target_position[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        commands.mode[:] = Mode.OFF
    with pytest.raises(AttributeError, match=r"command interface 'target_position' cannot "
                       r"be replaced \(read-only\)"):
        commands.target_position = np.ones(2)
    with pytest.raises(AttributeError, match=r"state interface 'position' cannot be "
                       r"replaced: write into it \(self.state.position\[i\] = ...\)"):
        state.position = np.ones(2)
    assert hw.sim.motor("a").get_target_position() == 0.0
    assert commands.names == ("mode", "target_position")
    assert state.names == ("position", "velocity")


@pytest.mark.parametrize("attribute, value, why", [
    ("COMMAND_INTERFACES", ("target_position", "torque"),
     "Bad.COMMAND_INTERFACES: unknown interface 'torque' (known: mode, target_position, "
     "target_velocity, velocity_setpoint, speed_limit, force_control, applied_force, "
     "available_force, control_p, control_i, control_d, acceleration, enabled)"),
    ("STATE_INTERFACES", ("position", "motor_force"),
     "Bad.STATE_INTERFACES: unknown interface 'motor_force' (known: position, velocity, "
     "effort)"),
    ("STATE_INTERFACES", "position",
     "Bad.STATE_INTERFACES = 'position': must be a tuple of interface names"),
])
def test_an_unknown_declared_interface_fails_on_init(attribute, value, why):
    bad = type("Bad", (Recorder,), {attribute: value})
    with pytest.raises(PluginError, match=f"^<dict>: hardware 'sim': {re.escape(why)}$"):
        HardwareSystem(two_motors(), bad)


def test_an_api_1_plugin_is_refused_saying_what_changed(plugin_site):
    with pytest.raises(PluginError) as refused:
        load_plugin("acme_old")
    assert str(refused.value) == (
        "hardware plugin 'acme_old': written for API_VERSION 1, this servo_sim provides 2: "
        "API 2 gives a plugin the state and command interfaces it declares in "
        "STATE_INTERFACES and COMMAND_INTERFACES (self.state, self.commands) instead of the "
        "MotorBank (self.bank, info.bank; motor_force is now 'effort', command_modes(bank) "
        "the 'mode' command interface), and the system holds the position-controlled "
        "motors at activation (no bank.supervisor.hold); see docs/hardware.md, 'From API 1 "
        "to API 2'")
    assert "From API 1 to API 2" in [h.strip() for h in re.findall(
        r"^### (.+)$", (REPO / "docs" / "hardware.md").read_text(), flags=re.M)]


def test_a_plugin_has_no_bank_but_the_sim_plugin_does():
    hw = HardwareSystem(two_motors(), Declared)
    with pytest.raises(AttributeError, match=r"Declared.bank: a plugin is not given the "
                       "MotorBank since API_VERSION 2"):
        hw.component.bank  # noqa: B018
    assert not any(v is hw.sim.bank for v in vars(hw.info).values())
    assert HardwareSystem(two_motors()).component.bank is not None


def test_the_state_a_plugin_writes_is_the_model_state_the_node_publishes():
    hw = HardwareSystem(two_motors(), Declared)
    hw.command("a", Command.ENABLE_POSITION, 8)
    hw.start()
    bank = hw.sim.bank
    assert hw.component.state.position is bank.position  # no copy
    assert np.shares_memory(hw.component.commands.target_position, bank.target_position)
    assert hw.cycle()
    np.testing.assert_array_equal(bank.position, [0.25, -0.5])
    np.testing.assert_array_equal(bank.velocity, [1.0, 2.0])
    assert hw.sim.motor("a").position == 0.25  # what /joint_states publishes
    assert bank.position_sensor.value[0] == 0.25  # the sensor samples it
    hw.command("b", Command.POSITION, 0.75)  # a command is seen without a copy
    hw.command("a", Command.POSITION, math.inf)
    assert hw.component.commands.target_position[1] == 0.75
    hw.cycle()
    mode, target = hw.component.seen
    assert list(mode) == [Mode.VELOCITY, Mode.POSITION] and target[1] == 0.75


def test_a_real_device_holds_where_it_was_read_before_on_activate():
    class Moved(Declared):
        def on_configure(self):
            self.state.position[:] = [0.5, 0.125]
            return super().on_configure()

        def on_activate(self):
            self.at_activation = (self.commands.mode.copy(),
                                  self.commands.target_position.copy())
            return super().on_activate()

    hw = HardwareSystem(two_motors(), Moved)
    assert hw.start()
    mode, target = hw.component.at_activation
    assert list(mode) == [Mode.POSITION, Mode.POSITION] and list(target) == [0.5, 0.125]
    assert hw.sim.motor("a").get_target_position() == 0.5  # the getter says so too
    hw.command("a", Command.POSITION, 1.0)
    hw.command("b", Command.POSITION, math.inf)  # velocity control: not held
    assert hw.deactivate() and hw.activate()
    mode, target = hw.component.at_activation
    assert list(mode) == [Mode.POSITION, Mode.VELOCITY]
    assert target[0] == 0.5 and target[1] == math.inf


def test_a_reset_leaves_the_interfaces_on_the_models_rows():
    """The model resets in place: the interfaces the plugin holds are the bank's rows
    before and after, nobody rebinds them, and they read the reset state."""
    simulated = type("Simulated", (Declared,), {"SIMULATED": True})
    hw = HardwareSystem(two_motors(), simulated)
    hw.start()
    held, target = hw.component.state.position, hw.component.commands.target_position
    hw.command("a", Command.POSITION, 0.3)
    hw.cycle()
    assert held.tolist() == [0.25, -0.5] and target[0] == 0.3  # the plugin's read, a command
    hw.reset()
    assert hw.component.state.position is held is hw.sim.bank.position
    assert held.tolist() == [0.0, 0.0] and target.tolist() == [0.0, 0.0]  # the config's
    assert np.shares_memory(hw.component.commands.target_position,
                            hw.sim.bank.target_position)
    hw.cycle()
    assert hw.sim.motor("b").position == -0.5


def test_the_plugin_example_of_the_docs_runs_as_documented(tmp_path, monkeypatch, capsys):
    text = (REPO / "docs" / "hardware.md").read_text()
    section = text[text.index("### Writing a plugin"):text.index("### From API 1 to API 2")]
    plugin, use = re.findall(r"```python\n(.+?)```", section, flags=re.S)
    (tmp_path / "echo_servo.py").write_text(plugin)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        exec(compile(use, "docs/hardware.md", "exec"), {})
    finally:
        sys.modules.pop("echo_servo", None)
    expected = [line[2:] for line in use.splitlines() if line.startswith("# ")]
    assert capsys.readouterr().out.splitlines() == expected


# --------------------------------------------------------------------------- the table's needs

#: Per command of the table: its arguments and the capabilities of which any one lets it
#: through (typed here from the plugins' docs, not read from the table); none: always.
NEEDS = {
    "set_position": ((1.0,), "position_command"),
    "set_velocity": ((2.0,), "velocity_command or velocity_limit"),
    "set_acceleration": ((1.0,), "acceleration_limit"),
    "set_available_force": ((1.0,), "available_force"),
    "set_available_torque": ((1.0,), "available_force"),
    "set_force": ((1.0,), "effort_command"),
    "set_torque": ((-1.0,), "effort_command"),
    "set_control_pid": ((1.0, 0.0, 0.0), "pid_gains"),
    "halt": ((), "position_command"),
    "trapezoidal_move": ((0.5, 0.0, 1.0, 1.0), "trapezoidal_command"),
    "enable": ((), ""),
    "disable": ((), ""),
    "e_stop": ((), ""),
    "reset_e_stop": ((), ""),
    "enable_position": ((8,), ""),
    "enable_force_feedback": ((8,), ""),
    "enable_torque_feedback": ((8,), ""),
}
SINGLE_CAPABILITIES = [c for c in Capabilities if c.value and c.value & (c.value - 1) == 0]


@pytest.mark.parametrize("command", sorted(NEEDS))
def test_each_command_needs_any_one_of_its_capabilities_and_no_other(command):
    """A device with one capability only takes a command exactly when that capability is
    one of the command's (or the command needs none: enable, the e-stop, the sensors);
    refused, the command changes nothing and the reason names what it needs."""
    args, needs = NEEDS[command]
    call = COMMAND[command]
    for capability in SINGLE_CAPABILITIES:
        one = type("One", (Recorder,), {"caps": capability})
        hw = HardwareSystem(two_motors(), one)
        assert hw.start()
        m = hw.sim.motor("a")
        before = (m.get_target_position(), m.get_velocity(), m.get_acceleration(),
                  m.get_available_force(), m.get_control_pid(), m.mode)
        if not needs or capability.name.lower() in needs.split(" or "):
            hw.command("a", call, *args)
        else:
            with pytest.raises(CommandRefusedError, match=re.escape(
                    f"motor 'a': {command} not supported by hardware 'sim' (needs {needs})")):
                hw.command("a", call, *args)
            assert (m.get_target_position(), m.get_velocity(), m.get_acceleration(),
                    m.get_available_force(), m.get_control_pid(), m.mode) == before


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_set_position_to_infinity_needs_velocity_command_either_way(sign):
    """+-inf selects velocity control: a position-only device refuses it, a velocity-only
    device takes it (and refuses a finite target)."""
    for caps, infinite_ok in ((Capabilities.POSITION_COMMAND, False),
                              (Capabilities.VELOCITY_COMMAND, True)):
        hw = HardwareSystem(two_motors(), type("One", (Recorder,), {"caps": caps}))
        assert hw.start()
        if infinite_ok:
            hw.command("a", Command.POSITION, sign * math.inf)
            assert hw.sim.motor("a").get_target_position() == sign * math.inf
            with pytest.raises(CommandRefusedError, match=r"\(needs position_command\)"):
                hw.command("a", Command.POSITION, sign * 1.0)
        else:
            with pytest.raises(CommandRefusedError, match=r"\(needs velocity_command\)"):
                hw.command("a", Command.POSITION, sign * math.inf)
            hw.command("a", Command.POSITION, sign * 1.0)
            assert hw.sim.motor("a").get_target_position() == sign * 1.0
