"""Read + write cycles per second of the dynamixel plugin on an emulated bus.

For 1, 6 and 20 servos: the emulator (``servo_sim.hardware.dxl_emulator``, a child
process on a pseudo-terminal) answers the plugin, which runs through the real
dynamixel-sdk at the 4 Mbps setting. Each cycle is one group sync read (Present
Current/Velocity/Position) and one group sync write (the goals), as in the node.

Beside the measured rate, the theoretical bus figure for the same packets: the bytes
actually exchanged per cycle (counted by the emulator) at 10 bits per byte (8N1) and
4 Mbps, with no return delay and no USB latency. A pty has no baud rate, so the
measured figure is what the host side (SDK + plugin + emulator) manages; on a real
bus the lower of the two applies, and a USB adapter's latency timer adds to each read.

    python benchmarks/bench_hardware.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from servo_sim.hardware import HardwareSystem
from servo_sim.hardware.dxl_emulator import EmulatorProcess
from servo_sim.model import Motor, parse_config

BAUD = 4_000_000
BITS_PER_BYTE = 10  # start + 8 data + stop


def run(n: int, seconds: float) -> dict[str, float]:
    names = [f"j{i}" for i in range(n)]
    with EmulatorProcess(list(range(1, n + 1))) as bus:
        hardware = {"plugin": "dynamixel", "port": bus.port, "baud_rate": BAUD,
                    **{m: {"id": i + 1, "torque_constant": 1.78} for i, m in enumerate(names)}}
        hw = HardwareSystem(parse_config({"hardware": hardware,
                                          "motors": [{"name": m} for m in names]}))
        assert hw.start(), hw.component.reason
        for m in names:
            hw.command(m, Motor.set_position, 0.5)
        hw.step(50)  # warm up; the settings are written
        before = bus.counts()
        durations = []
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            hw.cycle()
            durations.append(time.perf_counter() - t0)
        after = bus.counts()
        assert hw.active, hw.component.reason
        hw.shutdown()
    cycles = len(durations)
    assert after["0x82"] - before["0x82"] == cycles == after["0x83"] - before["0x83"]
    wire = (after["bytes_in"] - before["bytes_in"] + after["bytes_out"] - before["bytes_out"])
    bytes_per_cycle = wire / cycles
    bus_cycle_s = bytes_per_cycle * BITS_PER_BYTE / BAUD
    durations.sort()
    return {"servos": n, "cycles_per_s": cycles / sum(durations),
            "p50_ms": statistics.median(durations) * 1e3,
            "p99_ms": durations[int(0.99 * (cycles - 1))] * 1e3,
            "bytes_per_cycle": bytes_per_cycle, "bus_cycles_per_s": 1.0 / bus_cycle_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per servo count")
    args = parser.parse_args()
    print(f"dynamixel plugin, Protocol 2.0, {BAUD / 1e6:g} Mbps setting, emulated bus (pty)")
    print(f"{'servos':>6} {'cycles/s':>9} {'p50 ms':>7} {'p99 ms':>7} {'bytes/cycle':>11} "
          f"{'bus cycles/s':>12} {'measured/bus':>12}")
    for n in (1, 6, 20):
        r = run(n, args.seconds)
        print(f"{r['servos']:>6} {r['cycles_per_s']:>9.0f} {r['p50_ms']:>7.3f} "
              f"{r['p99_ms']:>7.3f} {r['bytes_per_cycle']:>11.0f} "
              f"{r['bus_cycles_per_s']:>12.0f} {r['cycles_per_s'] / r['bus_cycles_per_s']:>12.2f}")


if __name__ == "__main__":
    main()
