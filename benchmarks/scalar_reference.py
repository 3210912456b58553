"""A plain per-motor Python loop doing the dynamic-mode arithmetic of SPEC §2.2.

This is the benchmark baseline (``bench_model.py``) and, in the tests, a scalar
cross-check of the vectorised bank: written straight from the SPEC pseudo-code, one
float at a time, with none of the bank's array tricks.
"""

from __future__ import annotations

import math


class ScalarMotor:
    """One motor's parameters, commands and state as Python floats."""

    def __init__(self, bank, i: int) -> None:
        """Copy motor ``i``'s parameters and state from a ``MotorBank``."""
        self.dt = bank.dt
        self.rotational = bool(bank.rotational[i])
        for name in ("inertia", "spring_constant", "damping_constant", "static_friction",
                     "consumption_factor", "gravity_mass", "gravity_distance", "gravity",
                     "gravity_angle",
                     "external_load", "min_stop", "max_stop", "position", "velocity",
                     "motor_force", "energy", "error_integral", "previous_error",
                     "command_velocity"):
            setattr(self, name, float(getattr(bank, name)[i]))
        self.stops = bool(bank.stops[i])
        self.sync_commands(bank, i)

    def sync_commands(self, bank, i: int) -> None:
        """Take motor ``i``'s current commands from the bank (commands are not tested here)."""
        for name in ("target_position", "target_velocity", "acceleration", "available_force",
                     "control_p", "control_i", "control_d", "applied_force"):
            setattr(self, name, float(getattr(bank, name)[i]))
        self.force_control = bool(bank.force_control[i])

    def step(self) -> None:
        dt = self.dt
        x, v = self.position, self.velocity
        motor_on = not self.force_control and self.available_force > 0

        v_cmd = 0.0
        if motor_on:
            if math.isinf(self.target_position):  # velocity control
                v_des = self.target_velocity
            else:  # PID position control
                error = self.target_position - x
                self.error_integral += error * dt
                derivative = (error - self.previous_error) / dt
                self.previous_error = error
                u = (self.control_p * error + self.control_i * self.error_integral
                     + self.control_d * derivative)
                limit = abs(self.target_velocity)
                v_des = max(-limit, min(limit, u))
            if self.acceleration != -1:
                step = self.acceleration * dt
                v_des = self.command_velocity + max(-step, min(step,
                                                               v_des - self.command_velocity))
            v_cmd = v_des
        self.command_velocity = v_cmd

        load = self.external_load
        weight = self.gravity_mass * self.gravity
        if self.rotational:
            load -= weight * self.gravity_distance * math.cos(x - self.gravity_angle)
        else:
            load -= weight * math.cos(self.gravity_angle)
        if self.force_control:
            load += self.applied_force

        # implicit spring and damper: J (v'-v)/dt = f + load - K (x + v' dt) - B v'
        mass = self.inertia / dt + self.spring_constant * dt + self.damping_constant
        momentum = self.inertia / dt * v + load - self.spring_constant * x
        limit = self.available_force if motor_on else self.static_friction
        force = max(-limit, min(limit, v_cmd * mass - momentum))
        v_new = (momentum + force) / mass
        x_new = x + v_new * dt
        if self.stops:
            if x_new > self.max_stop:
                x_new, v_new = self.max_stop, 0.0
            elif x_new < self.min_stop:
                x_new, v_new = self.min_stop, 0.0
        self.position, self.velocity = x_new, v_new
        self.motor_force = force if motor_on else 0.0
        self.energy += abs(self.motor_force) * self.consumption_factor * dt


def step_all(motors: list[ScalarMotor]) -> None:
    """One time step of every motor: the per-motor loop the bank replaces."""
    for motor in motors:
        motor.step()
