"""Samples a publisher while it sends: run in the publisher's namespace (for its veth) by webrtc.py.

    python3 sampler.py PID IFACE KBPS DEPTH

Waits for the publisher (the descendant DEPTH levels below PID: 1 for timeout -> publisher), reads its CPU time
(/proc/PID/stat) and the veth's tx bytes every 100 ms until it exits, then prints "window_s window_cpu_s
window_tx_bytes": the window runs from 1 s after media starts (the first 100 ms step above a quarter of the target
rate) to 0.5 s before it stops (shorter margins for short runs); "0 0 0" when there was no such window.
"""

import os
import sys
import time


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return None


def main():
    pid, iface, kbps, depth = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    tick = os.sysconf("SC_CLK_TCK")
    target = None
    deadline = time.monotonic() + 10
    while target is None and time.monotonic() < deadline:
        level = [pid]
        for _ in range(depth):
            level = [c for p in level for c in (children(p) or [])]
        if level:
            target = level[0]
        else:
            time.sleep(0.01)
    if target is None:
        print("0 0 0")
        return
    samples = []
    while True:
        try:
            with open(f"/proc/{target}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/sys/class/net/{iface}/statistics/tx_bytes") as f:
                tx = int(f.read())
        except (OSError, ValueError):
            break
        samples.append((time.monotonic(), (int(fields[11]) + int(fields[12])) / tick, tx))
        time.sleep(0.1)
    step = kbps * 1000 / 8 * 0.1 / 4
    busy = [i for i in range(1, len(samples)) if samples[i][2] - samples[i - 1][2] > step]
    if len(busy) < 3:
        print("0 0 0")
        return
    t0, t1 = samples[busy[0] - 1][0], samples[busy[-1]][0]
    a = min(1.0, (t1 - t0) * 0.25)
    b = min(0.5, (t1 - t0) * 0.1)
    inside = [s for s in samples if t0 + a <= s[0] <= t1 - b]
    if len(inside) < 2:
        print("0 0 0")
        return
    first, last = inside[0], inside[-1]
    print(f"{last[0] - first[0]:.3f} {last[1] - first[1]:.3f} {last[2] - first[2]}")


if __name__ == "__main__":
    main()
