"""Read + write cycles per second of the real-servo plugins on their emulated buses.

For each plugin (``dynamixel`` at the 4 Mbps setting, ``feetech`` at 1 Mbps, the SO-101's
rate) and 1, 6 and 20 servos: the emulator (``dxl_emulator`` / ``sts_emulator``, a child
process on a pseudo-terminal) answers the plugin, which runs through the vendor's SDK.
Each cycle is one group sync read and one group sync write, as in the node.

Beside the measured rate, the wire figure for the same packets: bytes per cycle at 10
bits per byte (8N1) at the baud rate, with no return delay and no USB latency. The
bytes are counted by the emulator and checked against the hand count from the packet
formats (``wire_bytes``). A pty has no baud rate, so the measured figure is what the
host side (SDK + plugin + emulator) manages; on a real bus the lower of the two
applies, and each servo's return delay and a USB adapter's latency timer add to it.

    python benchmarks/bench_hardware.py [--seconds 3] [--plugin dynamixel|feetech]
"""

from __future__ import annotations

import argparse
import statistics
import time

from servo_sim.emulators import dxl_emulator, sts_emulator
from servo_sim.hardware import HardwareSystem
from servo_sim.model import Command, parse_config

BITS_PER_BYTE = 10  # start + 8 data + stop
SIZES = (1, 6, 20)


def wire_bytes(plugin: str, n: int) -> int:
    """Bytes on the wire per cycle (both directions), from the packet formats."""
    if plugin == "dynamixel":
        # sync read: 14 + 1 per id; status: 11 + 10 data; sync write: 14 + (1 + 18) per id
        return 14 + n + n * (11 + 10) + 14 + n * (1 + 18)
    # Feetech: sync read: FF FF FE LEN 82 addr len ids.. CHK = 8 + n; status: FF FF id LEN
    # err data(15) CHK = 21; sync write: 8 + (1 + 7) per id
    return 8 + n + n * (6 + 15) + 8 + n * (1 + 7)


PLUGINS = {
    "dynamixel": (dxl_emulator.EmulatorProcess, 4_000_000,
                  lambda i: {"id": i, "torque_constant": 1.78}, {}),
    "feetech": (sts_emulator.EmulatorProcess, 1_000_000, lambda i: {"id": i},
                {"min_position": -3.0, "max_position": 3.0}),
}


def run(plugin: str, n: int, seconds: float) -> dict[str, float]:
    emulator, baud, settings, limits = PLUGINS[plugin]
    names = [f"j{i}" for i in range(n)]
    with emulator(list(range(1, n + 1))) as bus:
        hardware = {"plugin": plugin, "port": bus.port, "baud_rate": baud,
                    **{m: settings(i + 1) for i, m in enumerate(names)}}
        hw = HardwareSystem(parse_config({"hardware": hardware,
                                          "motors": [{"name": m, **limits} for m in names]}))
        assert hw.start(), hw.component.reason
        for m in names:
            hw.command(m, Command.POSITION, 0.5)
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
    # Protocol 2.0's byte stuffing adds a byte now and then: within 1 % of the hand count
    assert abs(bytes_per_cycle / wire_bytes(plugin, n) - 1) < 0.01, (bytes_per_cycle, n)
    durations.sort()
    return {"servos": n, "cycles_per_s": cycles / sum(durations),
            "p50_ms": statistics.median(durations) * 1e3,
            "p99_ms": durations[int(0.99 * (cycles - 1))] * 1e3,
            "bytes_per_cycle": bytes_per_cycle,
            "bus_cycles_per_s": baud / (bytes_per_cycle * BITS_PER_BYTE)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per servo count")
    parser.add_argument("--plugin", choices=sorted(PLUGINS), action="append",
                        help="the plugin(s) to measure (default: both)")
    args = parser.parse_args()
    for plugin in args.plugin or list(PLUGINS):
        baud = PLUGINS[plugin][1]
        print(f"{plugin} plugin, {baud / 1e6:g} Mbps setting, emulated bus (pty)")
        print(f"{'servos':>6} {'cycles/s':>9} {'p50 ms':>7} {'p99 ms':>7} "
              f"{'bytes/cycle':>11} {'bus cycles/s':>12} {'measured/bus':>12}")
        for n in SIZES:
            r = run(plugin, n, args.seconds)
            print(f"{r['servos']:>6} {r['cycles_per_s']:>9.0f} {r['p50_ms']:>7.3f} "
                  f"{r['p99_ms']:>7.3f} {r['bytes_per_cycle']:>11.0f} "
                  f"{r['bus_cycles_per_s']:>12.0f} "
                  f"{r['cycles_per_s'] / r['bus_cycles_per_s']:>12.2f}")


if __name__ == "__main__":
    main()
