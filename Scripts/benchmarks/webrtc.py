"""The WHIP publishers into Janus (formerly Scripts/webrtc-bench): CPU per frame of ours (`capturer-probe publish`),
GStreamer's webrtcbin (Scripts/publishers/gst_whip_publish.py) and aiortc (Scripts/publishers/aiortc_whip_publish.py)
sending the same frames with the same VP8 settings into one Janus VideoRoom, in the real-peer lab.

Bash sets the lab up: Scripts/lab/bench-publishers installs the two peers, Scripts/webrtc-peers lab-up starts Janus
and the namespaces (lab-down stops them, always). Here: the rooms (janus_room.py, in the publisher's namespace), the
runs (alternating between publishers), a sampler per run (sampler.py), and the best runs.

Source: one file of raw YUYV frames per size (testsrc2 with temporal noise), read by all three: ours through its
replay camera, GStreamer through rawvideoparse, aiortc through av.VideoFrame.from_ndarray. Each converts YUYV to I420
itself and paces the frames at 30 fps from the moment its PeerConnection is up. Janus: a room per bit rate whose REMB
equals the target.

Measured per run: wait4's CPU (user+sys), wall and peak RSS of the publisher (start-up, signalling, ICE/DTLS, sending
and teardown included) and the bytes leaving the publisher namespace's veth (IP/UDP, SRTP, RTP, RTCP and signalling
included). A sampler also reads the process's CPU time and the veth's counter every 100 ms, for CPU per frame while
sending. Best run = lowest CPU ms/frame among the runs that sent at least 97 % of the frames.
"""

import os
import subprocess
import threading
import time

import stats
import tools

HERE = os.path.dirname(os.path.abspath(__file__))
FPS = 30


def lab_env(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def srtp_profile(lab):
    """Janus's view of the publisher's session: the SRTP profile it negotiated ("" when not seen)."""
    import json

    out = subprocess.run(["Scripts/webrtc-peers", "admin", lab], capture_output=True, text=True).stdout
    for line in out.splitlines():
        try:
            handle = json.loads(line)
        except ValueError:
            continue
        if handle.get("dtls_state") == "connected" and any(m.get("recv") for m in handle.get("media", [])):
            return handle.get("srtp_profile", "?")
    return ""


def run(bench, smoke, probe, machine, env=os.environ):
    """Runs the comparison; returns the section's summary (or {"skipped_all": reason} when the lab cannot run)."""
    specs = [("160x120", 300)] if smoke else [("640x480", 800), ("1280x720", 1500)]
    runs = 1 if smoke else int(env.get("RUNS", 3))
    seconds = 2 if smoke else int(env.get("SECONDS_PER_RUN", 10))
    os.environ.setdefault("WEBRTC_PEERS_NS", "wb")
    os.environ.setdefault("WEBRTC_PEERS_NET", "10.78.0")
    peers = lab_env(tools.quiet(["Scripts/lab/bench-publishers"] + ([env["BENCH_VENV"]] if "BENCH_VENV" in env
                                                                     else [])))
    publishers, skipped, unavailable = ["ours"], [], []
    for name in ("gstreamer", "aiortc"):
        if peers.get(name) == "ok":
            publishers.append(name)
        else:
            skipped.append(peers.get(name, name + ": not checked"))
            unavailable.append(name)
    install = subprocess.run(["Scripts/webrtc-peers", "install"], capture_output=True, text=True)
    if install.returncode != 0:
        return {"skipped_all": "the Janus lab could not be installed (Scripts/webrtc-peers install): %s"
                % (install.stdout + install.stderr).strip().splitlines()[-1:]}
    lab = bench.path("lab")
    up = subprocess.run(["Scripts/webrtc-peers", "lab-up", lab], capture_output=True, text=True)
    if up.returncode != 0:
        raise RuntimeError("lab-up failed:\n" + up.stderr[-2000:])
    try:
        return _runs(bench, specs, runs, seconds, probe, lab, lab_env(up.stdout), peers, publishers, skipped,
                     unavailable, machine)
    finally:
        subprocess.run(["Scripts/webrtc-peers", "lab-down", lab], capture_output=True)


def _runs(bench, specs, runs, seconds, probe, lab, env, peers, publishers, skipped, unavailable, machine):
    pub_ns, pub_addr = env["pub_ns"], env["pub_addr"]
    whip_base = env["whip_url"].split("/endpoint/")[0]
    veth = subprocess.run(["ip", "-n", pub_ns, "-o", "addr", "show", "to", pub_addr], capture_output=True,
                          text=True).stdout.split()[1]
    build = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    if subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "Sources", "Package.swift"]).returncode != 0:
        build += " + uncommitted changes"
    gst_version = subprocess.run(["gst-launch-1.0", "--version"], capture_output=True, text=True).stdout
    section = {
        "fps": FPS, "seconds": seconds, "runs": runs, "machine": machine,
        "load_start": " ".join(open("/proc/loadavg").read().split()[:3]),
        "versions": {
            "probe": subprocess.run([probe, "--version"], capture_output=True, text=True).stdout.strip() or "?",
            "build": build or "?", "libvpx": peers.get("libvpx", "?"),
            "gstreamer": (gst_version.splitlines()[1:2] or ["?"])[0].replace("GStreamer ", ""),
            "aiortc": peers.get("aiortc_version", "?"), "libvpx_pyav": peers.get("libvpx_pyav", "?"),
        },
        "skipped": skipped, "unavailable": unavailable, "srtp": {}, "sizes": [],
    }
    failed = False
    for size, kbps in specs:
        url = tools.quiet(["Scripts/webrtc-peers", "exec-pub", "/usr/bin/python3", os.path.join(HERE, "janus_room.py"),
                           env["janus_url"], whip_base, str(kbps)]).strip()
        # Enough frames that nobody loops (ours and aiortc would; GStreamer's filesrc ends): the run, its start, a
        # margin.
        clip = bench.clip("clip-%s.yuyv" % size, size, (seconds + 4) * FPS, "yuyv422")
        results = {name: [] for name in publishers}
        for run_index in range(runs):
            for name in publishers:
                bench.log("%s run %d/%d: %s" % (size, run_index + 1, runs, name))
                try:
                    figures = _run_one(bench, name, size, kbps, clip, url, seconds, probe, lab, pub_ns, veth, peers,
                                       section["srtp"], {"size": size, "kbps": kbps, "run": run_index})
                except tools.ToolFailed as error:
                    bench.log("%s at %s failed: %s" % (name, size, error))
                    failed = True
                    continue
                bench.log("  %d frames, %.2f CPU ms/frame (%.2f while sending)"
                          % (figures["frames"], stats.per_frame_ms(figures["cpu_s"], figures["frames"]),
                             figures["steady_ms"]))
                results[name].append(figures)
        os.unlink(clip)
        expected = seconds * FPS
        for name in results:
            for figures in results[name]:
                figures["cpu_ms"] = stats.per_frame_ms(figures["cpu_s"], figures["frames"])
        section["sizes"].append({
            "size": size, "kbps": kbps,
            "best": {n: stats.best_kept_up(r, "cpu_ms", expected) for n, r in results.items() if r},
            # The while-sending table has its own best run (lowest CPU while sending, among the runs that kept up).
            "best_steady": {n: stats.best_kept_up(r, "steady_ms", expected) for n, r in results.items() if r},
        })
    section["load_end"] = " ".join(open("/proc/loadavg").read().split()[:3])
    section["failed"] = failed
    return section


def _run_one(bench, name, size, kbps, clip, url, seconds, probe, lab, pub_ns, veth, peers, srtp, params):
    cpu_used = stats_cpu_used(size)
    if name == "ours":
        cmd = [probe, "publish", "--whip", url, "--device", "replay:%s:YUYV:%s@%d" % (clip, size, FPS), "--target",
               size, "--fps-limit", str(FPS), "--bitrate", str(kbps), "--seconds", str(seconds), "--json"]
    elif name == "gstreamer":
        cmd = ["/usr/bin/python3", "Scripts/publishers/gst_whip_publish.py", "--whip", url, "--file", clip, "--format",
               "yuy2", "--size", size, "--fps", str(FPS), "--bitrate", str(kbps), "--cpu-used", str(cpu_used),
               "--seconds", str(seconds)]
    else:
        cmd = [os.path.join(peers["venv"], "bin", "python"), "Scripts/publishers/aiortc_whip_publish.py", "--whip",
               url, "--file", clip, "--format", "yuyv422", "--size", size, "--fps", str(FPS), "--bitrate", str(kbps),
               "--seconds", str(seconds)]

    def tx_bytes():
        return int(subprocess.run(["ip", "netns", "exec", pub_ns, "cat", "/sys/class/net/%s/statistics/tx_bytes"
                                   % veth], capture_output=True, text=True).stdout)

    tx0 = tx_bytes()
    start = time.monotonic()
    # timeout -> (webrtc-peers exec-pub execs ip netns exec, which execs) the publisher: the sampler's depth 1.
    process, out, err = tools.launch(["timeout", "-k", "5", str(seconds + 45), "Scripts/webrtc-peers", "exec-pub",
                                      *cmd])
    sampler = subprocess.Popen(["ip", "netns", "exec", pub_ns, "/usr/bin/python3", os.path.join(HERE, "sampler.py"),
                                str(process.pid), veth, str(kbps), "1"], stdout=subprocess.PIPE, text=True)
    admin = None
    if name not in srtp:
        # Once per publisher: Janus's view of the session half-way through (the SRTP profile it negotiated).
        def look():
            time.sleep(seconds / 2)
            srtp[name] = srtp_profile(lab)

        admin = threading.Thread(target=look)
        admin.start()
    result = tools.finish(process, out, err, start)
    window = sampler.communicate()[0].split() or ["0", "0", "0"]
    if admin:
        admin.join()
    tx = tx_bytes() - tx0
    report = tools.load_json_output(result.stdout)
    frames = report.get("framesSent")
    window_s, window_cpu = float(window[0]), float(window[1])
    steady = window_cpu * 1000 / (window_s * FPS) if window_s > 0 else 0.0
    bench.rec.record("webrtc", name, result, params, json=report, tx_bytes=tx, window=window)
    if result.status != 0:
        raise tools.ToolFailed(result)
    if not isinstance(frames, int) or frames <= 0:
        raise tools.ToolFailed(result)
    return dict(result.time, frames=frames, tx_bytes=tx, window_s=window_s, steady_ms=steady, report=report)


def stats_cpu_used(size):
    width, height = (int(v) for v in size.split("x"))
    return -4 if width * height < 352 * 288 else -6
