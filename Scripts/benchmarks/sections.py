"""The sections of a benchmark run: each runs its tools (runs alternating between ours and the peers, so that a
slower stretch of the machine lands on all of them alike), keeps every run's record, and returns its summary (the
best runs' raw figures) for results.json.

What each section measures, and why so, is told in Documentation/Benchmarks.md; the comments here say how.
"""

import filecmp
import os
import random
import re
import shutil
import subprocess
import time

import stats
import tools

FPS = 30
#: Every WebRTC send-path configuration whose allocations per packet are counted (label, capture-bench flags).
SEND_ALLOCATION_SPECS = [
    ("plain RTP", ["--srtp", "no"]),
    ("SRTP AES_CM_128_HMAC_SHA1_80", ["--srtp", "cm80"]),
    ("SRTP AEAD_AES_128_GCM", ["--srtp", "gcm"]),
    ("WebRTC (RTX, mid, CVO), no SRTP", ["--webrtc", "yes", "--srtp", "no"]),
    ("WebRTC + SRTP AES_CM_80", ["--webrtc", "yes", "--srtp", "cm80"]),
    ("WebRTC + SRTP AEAD_AES_128_GCM", ["--webrtc", "yes", "--srtp", "gcm"]),
]


def settings(smoke, env=os.environ):
    """Sizes, frame counts and runs: tiny in smoke mode (every section exercised, nothing judged), else the full run
    (FRAMES, RUNS, SEND_FRAMES, LATENCY_FRAMES, VIVID_FRAMES and BENCH_VIVID=0 override it, as they did for bash)."""
    if smoke:
        return {
            "smoke": True, "frames": 8, "runs": 1, "vivid": False, "vp8_specs": [["160x120", 200]],
            "conv_size": "160x120", "capture_frames": 20, "capture_sizes": ["160x120"],
            "pipeline_sizes": ["160x120"], "scale_sizes": ["160x120", "320x240"], "streams": [1, 2],
            "stream_size": "160x120", "send_sizes": ["160x120"], "send_frames": 15, "latency_size": "160x120",
            "latency_frames": 30, "memory_sizes": ["160x120"], "memory_frames": [9, 30], "goal_size": "160x120",
            "idle_specs": [[1, 2]], "vivid_frames": 100,
            "simulcast_specs": [["960x540", 3, 1200], ["480x270", 2, 600]], "simulcast_temporal": [3, 1],
        }
    return {
        "smoke": False, "frames": int(env.get("FRAMES", 150)), "runs": int(env.get("RUNS", 3)),
        "vivid": env.get("BENCH_VIVID", "1") == "1", "vp8_specs": [["640x480", 800], ["1280x720", 1500]],
        "conv_size": "1280x720", "capture_frames": 1000, "capture_sizes": ["640x480", "1280x720", "1920x1080"],
        "pipeline_sizes": ["640x480", "1280x720", "1920x1080"],
        "scale_sizes": ["320x240", "640x480", "1280x720", "1920x1080"], "streams": [1, 2, 4],
        "stream_size": "640x480", "send_sizes": ["640x480", "1280x720"],
        "send_frames": int(env.get("SEND_FRAMES", 300)), "latency_size": "1280x720",
        "latency_frames": int(env.get("LATENCY_FRAMES", 1800)), "memory_sizes": ["640x480", "1280x720", "1920x1080"],
        "memory_frames": [90, 900], "goal_size": "1280x720", "idle_specs": [[1, 20], [8, 60]],
        "vivid_frames": int(env.get("VIVID_FRAMES", 100)),
        "simulcast_specs": [["1280x720", 3, 2500], ["640x480", 2, 800]], "simulcast_temporal": [3, 1],
    }


def kbps_for(size):
    return {"160x120": 300, "320x240": 300, "640x480": 800, "1280x720": 1500}.get(size, 2500)


def cpu_used_for(size):
    width, height = (int(v) for v in size.split("x"))
    return -4 if width * height < 352 * 288 else -6


def ffmpeg_vp8(size):
    """VP8Encoder's settings (WebRTC's real-time configuration) as ffmpeg output options."""
    k = kbps_for(size)
    return ("-threads 1 -filter_threads 1 -pix_fmt yuv420p -c:v libvpx -deadline realtime -cpu-used %d -threads 1"
            " -b:v %dk -minrate %dk -maxrate %dk -bufsize %d -rc_init_occupancy %d -qmin 2 -qmax 56"
            " -undershoot-pct 100 -overshoot-pct 15 -static-thresh 1 -noise-sensitivity 4 -drop-threshold 30"
            " -max-intra-rate 900 -lag-in-frames 0 -g 3000 -auto-alt-ref 0"
            % (cpu_used_for(size), k, k, k, k * 1000, k * 500)).split()


def gst_vp8enc(size):
    """The same settings as vp8enc properties."""
    return ("vp8enc deadline=1 cpu-used=%d threads=1 end-usage=cbr target-bitrate=%d min-quantizer=2 max-quantizer=56"
            " undershoot=100 overshoot=15 buffer-size=1000 buffer-initial-size=500 buffer-optimal-size=600"
            " static-threshold=1 noise-sensitivity=4 dropframe-threshold=30 max-intra-bitrate=900"
            " keyframe-max-dist=3000 lag-in-frames=0 token-partitions=0"
            % (cpu_used_for(size), kbps_for(size) * 1000)).split()


def vpxenc_args(size, kbps, cpu_used, frames, source, output):
    width, height = size.split("x")
    return ["vpxenc", "--codec=vp8", "--rt", "--cpu-used=%s" % cpu_used, "--threads=1", "--end-usage=cbr",
            "--lag-in-frames=0", "--static-thresh=1", "--min-q=2", "--max-q=56", "--undershoot-pct=100",
            "--overshoot-pct=15", "--buf-sz=1000", "--buf-initial-sz=500", "--buf-optimal-sz=600",
            "--target-bitrate=%s" % kbps, "--noise-sensitivity=4", "--token-parts=0", "--drop-frame=30",
            "--resize-allowed=0", "--kf-max-dist=3000", "--max-intra-rate=900", "--timebase=1/%d" % FPS,
            "--fps=%d/1" % FPS, "--limit=%d" % frames, "--i420", "-w", width, "-h", height, "--ivf", "-o", output,
            source]


def ivf_frames(path):
    with open(path, "rb") as f:
        header = f.read(32)
    return int.from_bytes(header[24:28], "little")


class Bench:
    """One benchmark run: the binaries, the scratch directory for media (deleted at the end), the recorder."""

    def __init__(self, settings, bin_dir, probe, recorder, work, log):
        self.s, self.bin, self.probe, self.rec, self.work, self.log = settings, bin_dir, probe, recorder, work, log
        self.interposer = os.path.join(bin_dir, "libMallocInterposerSwift.so")

    def path(self, name):
        return os.path.join(self.work, name)

    def clip(self, name, size, frames, pix_fmt, fmt="rawvideo", noise=True, extra=()):
        """A test clip: ffmpeg's testsrc2 (with temporal noise unless told otherwise) in the given pixel format."""
        source = "testsrc2=size=%s:rate=%d" % (size, FPS) + (",noise=alls=6:allf=t" if noise else "")
        path = self.path(name)
        tools.quiet(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", source, "-frames:v", str(frames),
                     "-pix_fmt", pix_fmt, *extra, "-f", fmt, path])
        return path

    def bench(self, section, tool, args, params=None, preload=False):
        """Runs capture-bench ARGS; returns its record with `fields`, the key=value pairs of its last line."""
        env = {"LD_PRELOAD": self.interposer} if preload else None
        result = tools.run([os.path.join(self.bin, "capture-bench"), *args], env=env)
        return self.rec.record(section, tool, result, params,
                               fields=stats.parse_fields(stats.last_line(result.stdout)))

    # --- VP8 alone against vpxenc ---------------------------------------------------------------------------------

    def vp8(self):
        s, frames, rows = self.s, self.s["frames"], []
        for size, kbps in s["vp8_specs"]:
            for content in ("testsrc2", "noisy"):
                clip = self.clip("%s-%s.yuv" % (content, size), size, frames, "yuv420p", noise=content == "noisy")
                ours, nv12, ref = [], [], []
                cpu_used = -6
                for run in range(s["runs"]):
                    params = {"size": size, "kbps": kbps, "clip": content, "run": run}
                    args = ["vp8", "--input", clip, "--size", size, "--frames", str(frames), "--kbps", str(kbps),
                            "--fps", str(FPS), "--runs", "1"]
                    record = self.bench("vp8", "ours-i420", args + ["--layout", "i420", "--ivf", self.path("o.ivf")],
                                        params)
                    ours.append(record["fields"])
                    cpu_used = record["fields"]["cpu_used"]
                    result = tools.run(vpxenc_args(size, kbps, cpu_used, frames, clip, self.path("v.ivf")))
                    fps = stats.vpxenc_fps(result.stderr + result.stdout)
                    ref.append(self.rec.record("vp8", "vpxenc", result, params, fps=fps,
                                               cpu_ms=stats.per_frame_ms(result.time["cpu_s"], frames)))
                    nv12.append(self.bench("vp8", "ours-nv12", args + ["--layout", "nv12"], params)["fields"])
                rows.append({
                    "clip": content, "size": size, "kbps": kbps,
                    "ours_fps": max(r["fps"] for r in ours), "nv12_fps": max(r["fps"] for r in nv12),
                    "vpxenc_fps": max(r["fps"] for r in ref),
                    "ours_cpu_ms": min(r["thread_cpu_ms_per_frame_incl_fill"] for r in ours),
                    "vpxenc_cpu_ms": min(r["cpu_ms"] for r in ref),
                    "identical": filecmp.cmp(self.path("o.ivf"), self.path("v.ivf"), shallow=False),
                })
                os.unlink(clip)
        return {"rows": rows}

    # --- conversion against ffmpeg --------------------------------------------------------------------------------

    def conversion(self):
        s, size, frames = self.s, self.s["conv_size"], self.s["frames"]
        yuyv = self.clip("in.yuyv", size, frames, "yuyv422")
        mjpeg = self.clip("in.mjpeg", size, frames, "yuvj420p", fmt="mjpeg", extra=["-q:v", "3"])
        rows = []
        for fmt, output in (("YUYV", "nv12"), ("YUYV", "i420"), ("MJPG", "i420"), ("MJPG", "nv12")):
            source = yuyv if fmt == "YUYV" else mjpeg
            params = {"format": fmt, "output": output, "size": size}
            record = self.bench("conversion", "ours", ["convert", "--input", source, "--format", fmt, "--size", size,
                                                       "--output", output, "--frames", str(frames), "--runs",
                                                       str(s["runs"])], params)
            if "skipped" in record["fields"]:
                rows.append({"format": fmt, "output": output, "skipped": True})
                continue
            if fmt == "YUYV":
                inputs = ["-f", "rawvideo", "-pix_fmt", "yuyv422", "-s", size, "-i", source]
            else:
                inputs = ["-i", source]
            rtimes = []
            for run in range(s["runs"]):
                result = tools.run(["ffmpeg", "-hide_banner", "-benchmark", "-threads", "1", *inputs, "-pix_fmt",
                                    "nv12" if output == "nv12" else "yuv420p", "-filter_threads", "1", "-f",
                                    "rawvideo", "-y", "/dev/null"])
                rtime = stats.ffmpeg_rtime(result.stdout + result.stderr)
                self.rec.record("conversion", "ffmpeg", result, dict(params, run=run), rtime_s=rtime)
                rtimes.append(rtime)
            rows.append({"format": fmt, "output": output, "ours_ms": record["fields"]["ms_per_frame"],
                         "ffmpeg_ms": stats.per_frame_ms(min(rtimes), frames)})
        return {"size": size, "rows": rows}

    # --- the capture path's allocations ---------------------------------------------------------------------------

    def capture(self):
        s, rows = self.s, []
        specs = [(size, "nv12", "no") for size in s["capture_sizes"]]
        specs += [(s["capture_sizes"][0], "i420", "no"), (s["capture_sizes"][0], "nv12", "yes")]
        for size, layout, copy in specs:
            fields = self.bench("capture", "ours", ["capture", "--size", size, "--layout", layout, "--frames",
                                                    str(s["capture_frames"]), "--copy", copy],
                                {"size": size, "layout": layout, "copy": copy}, preload=True)["fields"]
            rows.append({"size": size, "layout": layout, "delegate": "copies" if copy == "yes" else "counts",
                         "fps": fields["fps"], "mallocs_per_frame": fields["mallocs_per_frame"]})
        return {"frames": s["capture_frames"], "rows": rows}

    def guest(self, section, command, files, memory=None, seconds=300):
        """Runs `command` in the vivid guest (Scripts/vivid-vm) with `files` carried in; its Run, or None."""
        argv = ["Scripts/vivid-vm", "-q", "-t", str(seconds)] + (["-m", str(memory)] if memory else [])
        for f in files:
            argv += ["-f", f]
        result = tools.run(argv + ["--", command], check=False)
        self.rec.record(section, "vivid-vm", result)
        return result if result.status == 0 else None

    def vivid_capture(self):
        """The capture path's allocations on a real V4L2 device: vivid in the QEMU guest at its 25 fps. The binary
        keeps its host path, so that its rpath finds the one interposer library (two copies would not share their
        counters)."""
        bench = os.path.join(self.bin, "capture-bench")
        command = ""
        for fmt in ("YUYV", "UYVY", "NV12"):
            for copy in ("no", "yes"):
                command += ("LD_PRELOAD=%s %s capture --device /dev/video0 --size 640x480 --layout nv12 --format %s"
                            " --frames 100 --warmup 10 --copy %s; " % (self.interposer, bench, fmt, copy))
        result = self.guest("vivid_capture", command, [bench, self.interposer])
        if result is None:
            return {"skipped": True}
        rows = []
        for line in result.stdout.splitlines():
            if line.startswith("device="):
                f = stats.parse_fields(line)
                rows.append({"format": f["format"], "delegate": "copies" if f["copy"] == "true" else "counts",
                             "fps": f["fps"], "mallocs_per_frame": f["mallocs_per_frame"]})
        return {"rows": rows}

    # --- the whole pipeline against ffmpeg and GStreamer ------------------------------------------------------------

    def pipeline(self):
        s, frames = self.s, self.s["frames"]
        gst_jpeg = subprocess.run(["gst-inspect-1.0", "jpegparse"], capture_output=True).returncode == 0
        rows = []
        for size in s["pipeline_sizes"]:
            width, height = size.split("x")
            yuyv = self.clip("p.yuyv", size, frames, "yuyv422")
            mjpeg = self.clip("p.mjpeg", size, frames, "yuvj420p", fmt="mjpeg", extra=["-q:v", "3"])
            if size == s["goal_size"]:
                # vpxenc alone on the same frames, decoded to I420 (the 5 % goal): encode only, no conversion.
                tools.quiet(["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuyv422", "-s", size, "-i",
                             yuyv, "-pix_fmt", "yuv420p", "-f", "rawvideo", self.path("p.yuv")])
            for fmt in ("YUYV", "MJPG"):
                source = yuyv if fmt == "YUYV" else mjpeg
                runs = {"ours": [], "ffmpeg": [], "gst": [], "vpxenc": []}
                for run in range(s["runs"]):
                    params = {"size": size, "format": fmt, "run": run}
                    result = tools.run(
                        [os.path.join(self.bin, "capture-bench"), "pipeline", "--input", source, "--format", fmt,
                         "--size", size, "--frames", str(frames), "--kbps", str(kbps_for(size)), "--fps", str(FPS),
                         "--ivf", self.path("ours.ivf")], env={"LD_PRELOAD": self.interposer})
                    f = stats.parse_fields(stats.last_line(result.stdout, "pipeline "))
                    runs["ours"].append(self.rec.record("pipeline", "ours", result, params, fields=f))
                    if fmt == "MJPG":
                        inputs = ["-f", "mjpeg", "-framerate", str(FPS)]
                    else:
                        inputs = ["-f", "rawvideo", "-pix_fmt", "yuyv422", "-s", size, "-framerate", str(FPS)]
                    out = self.path("ffmpeg.ivf")
                    result = tools.run(["ffmpeg", "-v", "error", "-y", "-threads", "1", *inputs, "-i", source,
                                        "-frames:v", str(frames), *ffmpeg_vp8(size), "-f", "ivf", out])
                    runs["ffmpeg"].append(self.rec.record("pipeline", "ffmpeg", result, params,
                                                          ivf_frames=ivf_frames(out), ivf_bytes=os.path.getsize(out)))
                    if fmt == "YUYV" or gst_jpeg:
                        if fmt == "MJPG":
                            src = ["filesrc", "location=" + source, "!", "jpegparse", "!", "jpegdec"]
                        else:
                            src = ["filesrc", "location=" + source, "!", "rawvideoparse", "format=yuy2",
                                   "width=" + width, "height=" + height, "framerate=%d/1" % FPS]
                        out = self.path("gst.vp8")
                        result = tools.run(["gst-launch-1.0", "-q", *src, "!", "videoconvert", "n-threads=1", "!",
                                            "video/x-raw,format=I420", "!", *gst_vp8enc(size), "!", "filesink",
                                            "location=" + out])
                        runs["gst"].append(self.rec.record("pipeline", "gst", result, params,
                                                           bytes=os.path.getsize(out)))
                    if size == s["goal_size"] and fmt == "YUYV":
                        result = tools.run(vpxenc_args(size, kbps_for(size), cpu_used_for(size), frames,
                                                       self.path("p.yuv"), self.path("v.ivf")))
                        runs["vpxenc"].append(self.rec.record("pipeline", "vpxenc", result, params))
                row = {"size": size, "format": fmt}
                # The process's times (/usr/bin/time's figures, as for the peers) over capture-bench's own cpu_s and wall_s.
                row["ours"] = stats.best([dict(r["fields"], **r["time"]) for r in runs["ours"]], "cpu_s")
                row["ffmpeg"] = stats.best([dict(r["time"], ivf_frames=r["ivf_frames"], ivf_bytes=r["ivf_bytes"])
                                            for r in runs["ffmpeg"]], "cpu_s")
                if runs["gst"]:
                    row["gst"] = stats.best([dict(r["time"], bytes=r["bytes"]) for r in runs["gst"]], "cpu_s")
                if runs["vpxenc"]:
                    row["vpxenc_alone"] = stats.best([r["time"] for r in runs["vpxenc"]], "cpu_s")
                rows.append(row)
                self.log_row("pipeline", row)
        return {"rows": rows}

    def log_row(self, section, row):
        self.log("%s: %s" % (section, {k: v for k, v in row.items() if not isinstance(v, dict)}))

    # --- live in the vivid guest ----------------------------------------------------------------------------------

    def vivid_live(self):
        """Ours, `ffmpeg -f v4l2` and `gst-launch-1.0 v4l2src`, each capturing vivid's 640x480 YUYV at its rate and
        encoding VP8 with the settings above, timed by busybox's `time -v` in the guest (ffmpeg and GStreamer carried
        in with their libraries and the four plugins the pipeline needs); then capturer-probe's latency histograms
        on the same node. The guest's CPU is emulated: only the ratios mean anything."""
        vf = self.s["vivid_frames"]
        bench, gstlib = os.path.join(self.bin, "capture-bench"), "/usr/lib/x86_64-linux-gnu/gstreamer-1.0"
        timev = "time -v -o /tmp/t"
        report = ('echo "$1 $(grep -E "User time|System time|Maximum resident|Elapsed" /tmp/t | sed "s/.*: //"'
                  ' | tr "\\n" " ")"')
        c = "row() { %s; }; cd /tmp; export HOME=/tmp GST_REGISTRY=/tmp/registry.bin GST_REGISTRY_FORK=no" % report
        c += " GST_PLUGIN_SYSTEM_PATH=%s;" % gstlib
        c += (" LD_PRELOAD=%s %s %s pipeline --device /dev/video0 --format YUYV --size 640x480 --frames %d --fps 25"
              " --kbps %d --ivf /tmp/ours.ivf >/tmp/ours.line && row ours;"
              % (self.interposer, timev, bench, vf, kbps_for("640x480")))
        c += (" %s ffmpeg -v error -y -f v4l2 -input_format yuyv422 -video_size 640x480 -framerate 25 -i /dev/video0"
              " -frames:v %d %s -f ivf /tmp/ffmpeg.ivf && row ffmpeg;" % (timev, vf, " ".join(ffmpeg_vp8("640x480"))))
        c += (" %s gst-launch-1.0 -q v4l2src device=/dev/video0 num-buffers=%d ! video/x-raw,format=YUY2,width=640,"
              "height=480 ! videoconvert n-threads=1 ! video/x-raw,format=I420 ! %s ! filesink location=/tmp/gst.vp8"
              " >/dev/null && row gst;" % (timev, vf, " ".join(gst_vp8enc("640x480"))))
        c += ' echo "ours-line $(cat /tmp/ours.line)";'
        c += (" %s capture --device /dev/video0 --target 640x480 --frames %d --bitrate %d --json >/tmp/latency.json"
              ' 2>/dev/null && echo "latency-json $(tr -d "\\n" </tmp/latency.json)"'
              % (self.probe, vf, kbps_for("640x480")))
        files = [bench, self.probe, self.interposer, shutil.which("ffmpeg"), shutil.which("gst-launch-1.0")]
        files += ["%s/libgst%s.so" % (gstlib, p) for p in ("coreelements", "video4linux2", "videoconvertscale", "vpx")]
        result = self.guest("vivid_live", c, files, memory=2048, seconds=900)
        if result is None:
            return {"frames": vf, "skipped": True}
        rows, ours_line, latency = [], {}, None
        for line in result.stdout.splitlines():
            word = line.split(" ", 1)[0]
            if word in ("ours", "ffmpeg", "gst") and len(line.split()) >= 6:
                rows.append(stats.parse_busybox_time(line))
            elif word == "ours-line":
                ours_line = stats.parse_fields(line[len("ours-line "):])
            elif word == "latency-json":
                latency = tools.load_json_output(line[len("latency-json "):])
        return {"frames": vf, "rows": rows, "ours_line": ours_line, "latency": latency}

    # --- latency and memory (capturer-probe) ------------------------------------------------------------------------

    def probe_json(self, section, args, params=None):
        result = tools.run([self.probe, *args, "--json"])
        data = tools.load_json_output(result.stdout)
        self.rec.record(section, "capturer-probe", result, params, json=data)
        return data

    def latency(self, guest=None, guest_failed=False):
        s = self.s
        data = self.probe_json("latency", ["capture", "--device", "synthetic", "--target", s["latency_size"],
                                           "--frames", str(s["latency_frames"]), "--bitrate",
                                           str(kbps_for(s["latency_size"]))])
        keep = ("count", "p50", "p90", "p99", "p999", "max")
        pick = (lambda d: {k: {f: d[k][f] for f in keep} for k in ("deliveryLatencyMs", "latencyMs")})
        out = {"size": s["latency_size"], "fps": FPS, "host": pick(data)}
        if guest:
            out["guest"] = pick(guest)
        elif guest_failed:
            out["guest_failed"] = True
        return out

    def memory(self):
        s, rows = self.s, []
        for size in s["memory_sizes"]:
            rss = []
            for n in s["memory_frames"]:
                data = self.probe_json("memory", ["capture", "--device", "synthetic", "--target", size, "--frames",
                                                  str(n), "--unpaced", "--bitrate", str(kbps_for(size))],
                                       {"size": size, "frames": n})
                rss.append(tools.json_value(data, "peakRSSKiB"))
            rows.append({"size": size, "rss_kib": rss})
        return {"frames": s["memory_frames"], "rows": rows}

    # --- the call's send path against ffmpeg -f rtp -----------------------------------------------------------------

    def receiver(self, port, frames):
        """capturer-probe receive on a loopback port, in the background: (process, stdout path, start)."""
        return tools.launch([self.probe, "receive", "--port", str(port), "--frames", str(frames), "--seconds",
                             str(frames // FPS + 20), "--json"], stdout_path=self.path("recv-%d.json" % port))

    def send(self):
        s, frames, rows = self.s, self.s["send_frames"], []
        for size in s["send_sizes"]:
            k = kbps_for(size)
            clip = self.clip("s.yuyv", size, frames, "yuyv422")
            ours, theirs = [], []
            for run in range(s["runs"]):
                params = {"size": size, "run": run}
                for name in ("ours", "ffmpeg"):
                    port = 20000 + 2 * random.randrange(10000)
                    start = time.monotonic()
                    receiver, out, err = self.receiver(port, frames)
                    time.sleep(1)
                    if name == "ours":
                        argv = [self.probe, "send", "--device", "replay:%s:YUYV:%s@%d" % (clip, size, FPS), "--to",
                                "127.0.0.1:%d" % port, "--bitrate", str(k), "--frames", str(frames), "--json"]
                    else:
                        argv = ["ffmpeg", "-v", "error", "-re", "-threads", "1", "-f", "rawvideo", "-pix_fmt",
                                "yuyv422", "-s", size, "-framerate", str(FPS), "-i", clip, "-frames:v", str(frames),
                                *ffmpeg_vp8(size), "-f", "rtp", "-payload_type", "96",
                                "rtp://127.0.0.1:%d?pkt_size=1200" % port]
                    try:
                        sent = tools.run(argv)
                    except BaseException:
                        receiver.kill()
                        tools.finish(receiver, out, err, start)
                        raise
                    received = tools.finish(receiver, out, err, start)
                    report = tools.load_json_output(sent.stdout) if name == "ours" else {}
                    seen = tools.load_json_output(received.stdout)
                    self.rec.record("send", "%s-receiver" % name, received, params, json=seen)
                    record = self.rec.record("send", name, sent, params, json=report)
                    figures = dict(record["time"], decoded=tools.json_value(seen, "framesDecoded"))
                    if name == "ours":
                        figures.update(packets=tools.json_value(report, "packets"),
                                       dropped=tools.json_value(report, "droppedAtEncoderQueue"))
                        ours.append(figures)
                    else:
                        figures.update(packets=tools.json_value(seen, "packets"))
                        theirs.append(figures)
            rows.append({"size": size, "ours": stats.best(ours, "cpu_s"), "ffmpeg": stats.best(theirs, "cpu_s")})
            self.log_row("send", rows[-1])
        return {"frames": frames, "fps": FPS, "rows": rows}

    # --- allocations per packet, idle connections, scale ------------------------------------------------------------

    def send_allocations(self):
        frames, rows = self.s["send_frames"], []
        for label, flags in SEND_ALLOCATION_SPECS:
            f = self.bench("send_allocations", "ours", ["send", "--isolated", "yes", "--size", "640x480", "--kbps",
                                                        "800", "--frames", str(frames), "--warmup", "30", *flags],
                           {"configuration": label}, preload=True)["fields"]
            rows.append({"configuration": label, "packets": f["packets"], "mallocs_per_packet": f["mallocs_per_packet"]})
        # The WebRTC connection's send path (issue 18): send(frame:at:) and the pollTransmit that follows, on two
        # connections joined in memory, every 30th frame a key frame of four times the size.
        f = self.bench("send_allocations", "connection", ["connection", "--frames", str(frames), "--warmup", "30",
                                                          "--bytes", "4000"], preload=True)["fields"]
        rows.append({"configuration": "WebRTCConnection + its feedback", "packets": f["packets"],
                     "mallocs_per_packet": f["mallocs_per_packet"]})
        # The congestion controller alone (issue 20): the pacer and the send-side estimator per packet, and its cost in
        # instructions by callgrind (stable on this noisy machine: the difference of two lengths, per packet).
        packets = frames * 5
        f = self.bench("send_allocations", "congestion", ["congestion", "--packets", str(packets), "--warmup", "2000"],
                       preload=True)["fields"]
        rows.append({"configuration": "pacer + send-side estimator", "packets": f["packets"],
                     "mallocs_per_packet": f["mallocs_per_packet"]})
        return {"frames": frames, "rows": rows, "congestion_instructions": self.congestion_instructions(packets)}

    def congestion_instructions(self, packets):
        """Instructions per packet of `capture-bench congestion` under callgrind: (I(2N) - I(N)) / N, so that start-up
        and warm-up cancel out; None without valgrind. Valgrind cannot read Swift's DWARF, so it runs a stripped copy
        (next to the original, for its rpath)."""
        if not shutil.which("valgrind") or not shutil.which("strip"):
            return None
        original = os.path.join(self.bin, "capture-bench")
        copy = os.path.join(self.bin, "capture-bench-callgrind")
        tools.quiet(["strip", "--strip-debug", "-o", copy, original])
        counts = []
        for n in (packets, 2 * packets):
            out = self.path("callgrind.%d.out" % n)
            result = tools.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, copy, "congestion",
                                "--packets", str(n), "--warmup", "2000"])
            found = re.search(r"Collected : (\d+)", result.stderr)
            if not found:
                return None
            counts.append(int(found.group(1)))
        return round((counts[1] - counts[0]) / packets)

    def idle(self):
        rows = []
        for pairs, seconds in self.s["idle_specs"]:
            f = self.bench("idle", "ours", ["idle", "--pairs", str(pairs), "--seconds", str(seconds)],
                           {"pairs": pairs, "seconds": seconds})["fields"]
            rows.append(dict(f, pairs=pairs, seconds=seconds))
        return {"rows": rows}

    def scale(self):
        s, rows = self.s, []
        specs = [(size, 1) for size in s["scale_sizes"]] + [(s["stream_size"], n) for n in s["streams"] if n != 1]
        for size, streams in specs:
            f = self.bench("scale", "ours", ["pipeline", "--size", size, "--streams", str(streams), "--frames",
                                             str(s["frames"]), "--kbps", str(kbps_for(size)), "--fps", str(FPS)],
                           {"size": size, "streams": streams})["fields"]
            rows.append({"size": size, "streams": streams, "fps_per_stream": f["fps_per_stream"],
                         "cpu_ms_per_frame": f["cpu_ms_per_frame"], "cpu_s": f["cpu_s"], "wall_s": f["wall_s"]})
        return {"rows": rows}

    # --- simulcast against one stream (issue 21) ------------------------------------------------------------------

    def simulcast(self):
        """capture-bench simulcast: SendPipeline with simulcast (libwebrtc's layers for the size) and with one stream
        on the same frames, runs alternating between the two in one process, the best of each by the encoder thread's
        CPU, for each size and temporal layer count. The clip is played twice: its first pass is the warm-up (by its
        end every encoder's output buffer has grown to the clip's largest frame), the second is measured, so that the
        allocations (every thread's, counted by the preloaded malloc interposer) are the steady state's. The rates put
        every layer on: 2500 kbit/s is libwebrtc's for 1280x720 (150 + 500 + 1850 over its three layers), 800 the
        harness's for 640x480 (203 + 597 over two)."""
        s, frames, rows = self.s, self.s["frames"], []
        for size, layers, kbps in s["simulcast_specs"]:
            clip = self.clip("simulcast-%s.yuv" % size, size, frames, "yuv420p")
            for temporal in s["simulcast_temporal"]:
                params = {"size": size, "layers": layers, "temporal_layers": temporal, "kbps": kbps}
                f = self.bench("simulcast", "ours", ["simulcast", "--input", clip, "--size", size, "--layers",
                                                     str(layers), "--temporal-layers", str(temporal), "--frames",
                                                     str(2 * frames), "--warmup", str(frames), "--kbps", str(kbps),
                                                     "--runs", str(s["runs"])], params, preload=True)["fields"]
                rows.append(dict(f, size=size, wanted_layers=layers, temporal_layers=temporal, kbps=kbps))
                self.log_row("simulcast", rows[-1])
            os.unlink(clip)
        return {"clip_frames": frames, "runs": s["runs"], "rows": rows}
