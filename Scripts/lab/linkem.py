#!/usr/bin/env python3
"""linkem: an L2 userspace delay line between two interfaces (the kernel here has no netem), one model per direction.

    linkem.py --a IFACE_A --b IFACE_B --profile PROFILE.json --csv OUT.csv [--clock first-rtp|start] [--seed N]

Frames read on A (AF_PACKET) leave on B ("fwd", publisher -> SFU) and the other way round ("rev"). Each direction:
  loss     Bernoulli from a seeded RNG, applied on arrival (reason "loss");
  rate     a virtual serialization clock: done = max(now, done_prev) + bits / rate (rate_kbps 0 = unlimited);
  queue    drop-tail limited in time: a frame whose done - now would exceed queue_ms is dropped (reason "queue");
  delay    fixed one-way delay_ms after serialization;
  jitter   uniform +-jitter_ms on the delay, never reordering (t_out = max(t_out, t_out_prev)).
A send() that fails (ENOBUFS, EMSGSIZE) counts as a drop (reason "tx:ERRNO").

PROFILE: {"name": "P1", "duration_s": 100, "seed": 1,
          "fwd": [{"at_s": 0, "rate_kbps": 2000, "delay_ms": 25, "jitter_ms": 0, "loss": 0, "queue_ms": 300}, ...],
          "rev": [{"at_s": 0, "delay_ms": 25}, ...]}
Each entry takes effect at at_s on the timeline and inherits what it leaves out from the entry before (the defaults:
rate 0, delay 0, jitter 0, loss 0, queue 300 ms). The timeline's zero is the bridge's start (--clock start) or the
first RTP/RTCP packet seen forward (--clock first-rtp, the default: both publishers are then measured from their first
media packet, whatever their signalling took); before it, the first entries apply.

CSV (one line per frame, times in seconds on the timeline, monotonic clock):
  t_in,t_out,dir,bytes,drop,qdelay_ms,late_us
t_out is the real departure (empty for a drop), qdelay_ms the time in the bottleneck (queue + own serialization,
computed on arrival), late_us how late the real departure was against the model. Lines starting with # are comments:
the first gives t0 on CLOCK_MONOTONIC and CLOCK_REALTIME (to line up other logs). IPv4 UDP/TCP checksums are
recomputed on the way (veth leaves them to an offload that never happens here). SIGTERM/SIGINT: flushes, prints one
summary JSON line on standard output and exits 0. Python 3 standard library only; run it under chrt -f 50.
"""

import argparse
import array
import collections
import ctypes
import errno
import json
import os
import random
import select
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
PACKET_IGNORE_OUTGOING = 23
SOL_PACKET = 263
DEFAULTS = {"rate_kbps": 0.0, "delay_ms": 0.0, "jitter_ms": 0.0, "loss": 0.0, "queue_ms": 300.0}


def checksum_fix(frame):
    """Returns the frame with its IPv4 UDP or TCP checksum recomputed (other frames unchanged)."""
    if len(frame) < 34 or frame[12:14] != b"\x08\x00":
        return frame
    ihl = (frame[14] & 0x0F) * 4
    proto = frame[23]
    if proto not in (6, 17):
        return frame
    frag = struct.unpack_from("!H", frame, 20)[0]
    if frag & 0x3FFF:  # a fragment: its L4 header is elsewhere
        return frame
    total = struct.unpack_from("!H", frame, 16)[0]
    start = 14 + ihl
    end = 14 + total
    if end > len(frame) or end - start < (20 if proto == 6 else 8):
        return frame
    offset = start + (16 if proto == 6 else 6)
    buf = bytearray(frame[:end])
    buf[offset:offset + 2] = b"\x00\x00"
    segment = bytes(buf[start:end])
    if len(segment) % 2:
        segment += b"\x00"
    pseudo = frame[26:34] + struct.pack("!BBH", 0, proto, end - start)
    words = array.array("H", pseudo + segment)
    if sys.byteorder == "little":
        words.byteswap()
    s = sum(words)
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    c = (~s) & 0xFFFF
    if proto == 17 and c == 0:
        c = 0xFFFF
    struct.pack_into("!H", buf, offset, c)
    return bytes(buf) + frame[end:]


def is_rtp(frame):
    """Whether the frame is IPv4 UDP whose payload is RTP or RTCP (RFC 7983: first byte 128-191)."""
    if len(frame) < 44 or frame[12:14] != b"\x08\x00" or frame[23] != 17:
        return False
    ihl = (frame[14] & 0x0F) * 4
    first = frame[14 + ihl + 8] if len(frame) > 14 + ihl + 8 else 0
    return 128 <= first <= 191


class Direction:
    def __init__(self, name, timeline, rng):
        self.name = name
        self.timeline = timeline  # [(at_s, params)], sorted
        self.rng = rng
        self.index = 0
        self.params = timeline[0][1]
        self.done = 0.0          # the serialization clock
        self.last_out = 0.0      # for jitter without reordering
        self.queue = collections.deque()  # (t_out_model, t_in, frame, qdelay)
        self.counts = collections.Counter()
        self.bytes = collections.Counter()

    def update(self, t):
        while self.index + 1 < len(self.timeline) and t >= self.timeline[self.index + 1][0]:
            self.index += 1
            self.params = self.timeline[self.index][1]

    def admit(self, now, t, frame):
        """Returns (t_out_model, qdelay_s) or (None, reason)."""
        self.update(t)
        p = self.params
        if p["loss"] > 0 and self.rng.random() < p["loss"]:
            return None, "loss"
        rate = p["rate_kbps"] * 1000.0
        start = max(now, self.done)
        done = start + (len(frame) + 24) * 8.0 / rate if rate > 0 else start  # + preamble, FCS, gap
        if done - now > p["queue_ms"] / 1000.0:
            return None, "queue"
        self.done = done
        delay = p["delay_ms"] / 1000.0
        if p["jitter_ms"] > 0:
            delay = max(0.0, delay + self.rng.uniform(-p["jitter_ms"], p["jitter_ms"]) / 1000.0)
        out = max(done + delay, self.last_out)
        self.last_out = out
        return out, done - now


def load_timeline(entries):
    timeline = []
    current = dict(DEFAULTS)
    for entry in sorted(entries or [{"at_s": 0}], key=lambda e: e.get("at_s", 0)):
        current = dict(current)
        for key in DEFAULTS:
            if key in entry:
                current[key] = float(entry[key])
        timeline.append((float(entry.get("at_s", 0)), current))
    return timeline


def open_socket(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    try:
        s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    except OSError:
        pass  # older kernels: outgoing frames are filtered by pkttype below
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    s.bind((iface, 0))
    s.setblocking(False)
    return s


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", required=True, help="the publisher side interface")
    parser.add_argument("--b", required=True, help="the SFU side interface")
    parser.add_argument("--profile", required=True)
    parser.add_argument("--csv", required=True)
    parser.add_argument("--clock", choices=["first-rtp", "start"], default="first-rtp")
    parser.add_argument("--seed", type=int)
    args = parser.parse_args()
    with open(args.profile) as f:
        profile = json.load(f)
    seed = args.seed if args.seed is not None else int(profile.get("seed", 1))
    directions = {
        "fwd": Direction("fwd", load_timeline(profile.get("fwd")), random.Random(seed)),
        "rev": Direction("rev", load_timeline(profile.get("rev")), random.Random(seed + 1)),
    }
    try:  # 1 us timer slack: the select() timeouts are the departure times
        ctypes.CDLL(None, use_errno=True).prctl(29, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    sock_a, sock_b = open_socket(args.a), open_socket(args.b)
    out_sock = {"fwd": sock_b, "rev": sock_a}
    csv = open(args.csv, "w", buffering=1 << 16)
    mono0, real0 = time.monotonic(), time.time()
    t0 = [None if args.clock == "first-rtp" else mono0]
    csv.write("# linkem t0_monotonic=%s t0_realtime=%s clock=%s profile=%s seed=%d\n"
              % ("pending" if t0[0] is None else "%.6f" % mono0, "%.6f" % real0, args.clock,
                 profile.get("name", os.path.basename(args.profile)), seed))
    csv.write("t_in,t_out,dir,bytes,drop,qdelay_ms,late_us\n")
    pending_lines = []  # lines written before t0 is known, as (t_in_mono, ...) fixed up once it is
    stop = [False]

    def on_signal(signum, frame):
        stop[0] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # A parent may hand its blocked signals down (swift-corelibs-foundation's Process does): without this, SIGTERM
    # would wait forever and the SIGKILL after it would lose the CSV's tail and the summary.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    lateness = []
    errors = collections.Counter()

    def rel(t):
        return t - (t0[0] if t0[0] is not None else mono0)

    def record(t_in, t_out, d, size, drop, qdelay, late):
        line = (t_in, t_out, d, size, drop, qdelay, late)
        if t0[0] is None:
            pending_lines.append(line)
        else:
            write(line)

    def write(line):
        t_in, t_out, d, size, drop, qdelay, late = line
        csv.write("%.6f,%s,%s,%d,%s,%s,%s\n" % (
            rel(t_in), "" if t_out is None else "%.6f" % rel(t_out), d, size, drop,
            "" if qdelay is None else "%.3f" % (qdelay * 1000), "" if late is None else "%d" % (late * 1e6)))

    poller = select.poll()
    poller.register(sock_a, select.POLLIN)
    poller.register(sock_b, select.POLLIN)
    fd_dir = {sock_a.fileno(): ("fwd", sock_a), sock_b.fileno(): ("rev", sock_b)}
    while not stop[0]:
        now = time.monotonic()
        # Departures due.
        for name, d in directions.items():
            q = d.queue
            while q and q[0][0] <= now + 0.00005:
                t_model, t_in, frame, qdelay = q.popleft()
                sent = time.monotonic()
                try:
                    out_sock[name].send(frame)
                    late = sent - t_model
                    lateness.append(late)
                    record(t_in, sent, name, len(frame), "", qdelay, late)
                    d.counts["sent"] += 1
                    d.bytes["sent"] += len(frame)
                except OSError as error:
                    reason = "tx:" + errno.errorcode.get(error.errno, str(error.errno))
                    errors[reason] += 1
                    record(t_in, None, name, len(frame), reason, qdelay, None)
                    d.counts[reason] += 1
                now = time.monotonic()
        nexts = [d.queue[0][0] for d in directions.values() if d.queue]
        wait_ms = 1000.0 if not nexts else (min(nexts) - time.monotonic()) * 1000
        # poll() counts whole milliseconds (rounding up): wait in it only while a departure is over 1.5 ms away, then
        # look without waiting and sleep (nanosleep, 1 us timer slack) in slices of at most 0.3 ms.
        try:
            events = poller.poll(int(wait_ms - 1) if wait_ms > 1.5 else 0)
        except InterruptedError:
            continue
        if not events and 0 < wait_ms <= 1.5:
            time.sleep(min(wait_ms / 1000, 0.0003))
        for fd, _ in events:
            name, sock = fd_dir[fd]
            d = directions[name]
            for _ in range(64):
                try:
                    frame, address = sock.recvfrom(65600)
                except BlockingIOError:
                    break
                except OSError:
                    break
                if address[2] == PACKET_OUTGOING:
                    continue
                now = time.monotonic()
                if t0[0] is None and name == "fwd" and is_rtp(frame):
                    t0[0] = now
                    for line in pending_lines:
                        write(line)
                    pending_lines.clear()
                    csv.write("# t0_monotonic=%.6f t0_realtime=%.6f (first RTP forward)\n"
                              % (now, real0 + (now - mono0)))
                    csv.flush()  # link-compare's kernel shaper schedules its changes from this line
                d.counts["in"] += 1
                d.bytes["in"] += len(frame)
                t_out, extra = d.admit(now, rel(now) if t0[0] is not None else -1.0, frame)
                if t_out is None:
                    d.counts[extra] += 1
                    record(now, None, name, len(frame), extra, None, None)
                    continue
                d.queue.append((t_out, now, checksum_fix(frame), extra))
    for line in pending_lines:
        write(line)
    csv.close()
    lateness.sort()

    def pct(values, q):
        return round(values[min(len(values) - 1, int(q * len(values)))] * 1e6) if values else None

    summary = {
        "linkem": "summary", "profile": profile.get("name"), "seconds": round(time.monotonic() - mono0, 3),
        "t0_monotonic": t0[0], "t0_realtime": None if t0[0] is None else real0 + (t0[0] - mono0),
        "late_us": {"p50": pct(lateness, 0.5), "p99": pct(lateness, 0.99), "max": pct(lateness, 1.0)},
        "tx_errors": dict(errors),
    }
    for name, d in directions.items():
        summary[name] = dict(d.counts, bytes_in=d.bytes["in"], bytes_sent=d.bytes["sent"], queued_at_exit=len(d.queue))
    print(json.dumps(summary, separators=(",", ":")), flush=True)


if __name__ == "__main__":
    main()
