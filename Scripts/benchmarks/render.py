"""BENCHMARKS.md from a run's results (results.json): one text table per section, the WHIP comparison as Markdown, and
the goals judged from the figures.

Pure functions of the results (no processes, no files): tests/test_render.py renders a fixture. The tables keep the
layout the bash scripts printed, so that a new BENCHMARKS.md diffs line by line against an older one.
"""

from stats import f2, goals, ivf_payload_bytes, ms_of_fps, number, per_frame_ms, ratio

RULE = "-"


def rule(width):
    return RULE * width


def render_vp8(s, settings):
    out = [
        "",
        "VP8 real-time encode, 1 thread, cpu-used -6, CBR, %d frames, best of %d alternating runs (encode time only)"
        % (settings["frames"], settings["runs"]),
        "(wall: fps and ms/frame of the encode calls; CPU: ours = encoding thread incl. refilling the frame, vpxenc =",
        " user+sys of the process incl. reading the file; ratio = speed ours/vpxenc, > 1 means ours is faster)",
        "%-9s %-9s %5s | %-20s %-20s | %-20s | %-6s | %-13s | %s"
        % ("clip", "size", "kbps", "ours I420 (wall)", "ours NV12 (wall)", "vpxenc (wall)", "ratio",
           "CPU ms ours/vpxenc", "bitstream"),
        rule(128),
    ]
    for row in s["rows"]:
        out.append(
            "%-9s %-9s %5s | %7s fps %6s ms | %7s fps %6s ms | %7s fps %6s ms | %6s | %5s / %-5s | %s"
            % (row["clip"], row["size"], row["kbps"], number(row["ours_fps"]), f2(ms_of_fps(row["ours_fps"])),
               number(row["nv12_fps"]), f2(ms_of_fps(row["nv12_fps"])), "%.2f" % row["vpxenc_fps"],
               f2(ms_of_fps(row["vpxenc_fps"])), f2(ratio(row["ours_fps"], row["vpxenc_fps"])),
               number(row["ours_cpu_ms"]), f2(row["vpxenc_cpu_ms"]),
               "identical" if row["identical"] else "DIFFERENT"))
    return out


def render_conversion(s, settings):
    out = [
        "",
        "Conversion at %s, %d frames, best of %d (ffmpeg: -benchmark rtime, 1 thread, includes demuxing)"
        % (s["size"], settings["frames"], settings["runs"]),
        "%-28s | %-14s | %-14s | %s" % ("conversion", "ours ms/frame", "ffmpeg ms/frame", "ours/ffmpeg (time)"),
        rule(80),
    ]
    for row in s["rows"]:
        name = "%s -> %s" % (row["format"], row["output"].upper())
        if row.get("skipped"):
            out.append("%-28s | %s" % (name, "skipped: this build's FrameConverter cannot convert %s" % row["format"]))
            continue
        out.append("%-28s | %14s | %14s | %s" % (name, number(row["ours_ms"]), "%.3f" % row["ffmpeg_ms"],
                                                f2(ratio(round(row["ours_ms"], 3), round(row["ffmpeg_ms"], 3)))))
    return out


def render_capture(s, settings):
    out = [
        "",
        "Capture path (synthetic camera -> CameraVideoCapturer -> delegate), %d frames after 100 of warm-up"
        % s["frames"],
        "%-10s %-6s %-8s | %12s | %16s" % ("size", "layout", "delegate", "frames/s", "mallocs/frame"),
        rule(64),
    ]
    for row in s["rows"]:
        out.append("%-10s %-6s %-8s | %12.0f | %16s" % (row["size"], row["layout"], row["delegate"], row["fps"],
                                                        number(row["mallocs_per_frame"])))
    return out


def render_vivid_capture(s, settings):
    out = [
        "",
        "V4L2 capture path on vivid (QEMU guest), 640x480 -> NV12, 100 frames after 10 of warm-up",
        "%-6s %-8s | %8s | %16s" % ("format", "delegate", "fps", "mallocs/frame"),
        rule(46),
    ]
    if s.get("skipped"):
        return out + ["skipped: the vivid guest could not run (Scripts/vivid-vm)"]
    for row in s["rows"]:
        out.append("%-6s %-8s | %8.1f | %16s" % (row["format"], row["delegate"], row["fps"],
                                                 number(row["mallocs_per_frame"])))
    return out


def _mb(kb):
    return "%6.0f MB" % (kb // 1024)


def render_pipeline(s, settings):
    frames, runs = settings["frames"], settings["runs"]
    out = [
        "",
        "Whole pipeline: camera frames -> VP8 (IVF), %d frames of testsrc2 with temporal noise, unpaced, 1 thread,"
        % frames,
        "CBR, best of %d alternating runs by CPU. Per frame: wall ms / CPU ms (user+sys) / peak RSS MB, each of the whole"
        % runs,
        "process (start-up included) by wait4, as /usr/bin/time reads them, for ours as for the peers.",
        "ratio = peer CPU per frame / ours (> 1: ours is faster); out = frames and KB written (IVF payload for GStreamer).",
        "%-9s %-4s | %-22s | %-22s | %-22s | %-6s %-6s | %-8s | %s"
        % ("size", "src", "ours", "ffmpeg", "GStreamer", "ffmpeg", "gst", "allocs/f", "out: ours / ffmpeg / gst"),
        rule(140),
    ]
    for row in s["rows"]:
        o, f, g = row["ours"], row["ffmpeg"], row.get("gst")

        def cells(t):
            return "%6s %6s %s" % (f2(per_frame_ms(t["wall_s"], frames)), f2(per_frame_ms(t["cpu_s"], frames)),
                                   _mb(t["max_rss_kb"]))

        gst_cells = cells(g) if g else "%6s %6s %s" % ("0.00", "0.00", _mb(0))
        out.append(
            "%-9s %-4s | %s | %s | %s | %6s %6s | %8s | %s / %s / %s"
            % (row["size"], row["format"], cells(o), cells(f), gst_cells, f2(ratio(f["cpu_s"], o["cpu_s"])),
               f2(ratio(g["cpu_s"], o["cpu_s"])) if g else "n/a", number(o["mallocs_per_frame"]),
               "%s f %d KB" % (o["encoded"], o["bytes"] // 1024),
               "%s f %d KB" % (f["ivf_frames"], ivf_payload_bytes(f["ivf_bytes"], f["ivf_frames"]) // 1024),
               "%d KB" % (g["bytes"] // 1024) if g else "n/a (no jpegparse)"))
        alone = row.get("vpxenc_alone")
        if alone:
            out.append(
                "  vpxenc alone, %s I420 from the YUYV frames: %s CPU ms/frame (process user+sys, best of %d, runs"
                " alternating with the three above)" % (row["size"], f2(per_frame_ms(alone["cpu_s"], frames)), runs))
    return out


def render_vivid_live(s, settings):
    frames = s["frames"]
    out = [
        "",
        "Live in the vivid guest (emulated CPU: compare ratios only): 640x480 YUYV at vivid's rate -> VP8, %d frames"
        % frames,
        "CPU ms/frame = the process's user+sys / frames (start-up included); ratio = peer / ours (> 1: ours is faster)",
        "%-10s | %8s | %12s | %8s | %8s | %6s" % ("tool", "frames", "CPU ms/frame", "wall s", "RSS MB", "ratio"),
        rule(68),
    ]
    if s.get("skipped"):
        return out + ["skipped: the vivid guest could not run (Scripts/vivid-vm)"]
    names = {"ours": "ours", "ffmpeg": "ffmpeg", "gst": "GStreamer"}
    ours_cpu = None
    for row in s["rows"]:
        cpu = float(f2(per_frame_ms(row["cpu_s"], frames)))
        if row["tool"] == "ours":
            ours_cpu = cpu
        out.append("%-10s | %8s | %12s | %8s | %8.0f | %6s"
                   % (names[row["tool"]], frames, f2(cpu), "%.1f" % row["wall_s"], row["max_rss_kb"] // 1024,
                      f2(ratio(cpu, ours_cpu)) if ours_cpu is not None else "-"))
    o = s.get("ours_line", {})
    out.append("  ours: granted %s, %s frames encoded, %s dropped, %s bytes, %s heap allocations per frame (V4L2 to VP8)"
               % tuple(number(o.get(k, "")) for k in ("granted", "encoded", "dropped", "bytes", "mallocs_per_frame")))
    return out


def _latency_rows(label, histograms):
    rows = []
    for name, key in (("delegate", "deliveryLatencyMs"), ("encoded", "latencyMs")):
        h = histograms[key]
        rows.append("%-30s %-9s | %6s | " % (label, name, h["count"])
                    + " ".join("%7.2f" % h[k] for k in ("p50", "p90", "p99", "p999", "max")))
    return rows


def render_latency(s, settings):
    out = [
        "",
        "Latency (HDR histogram), capture timestamp -> delegate and -> encoded VP8 frame, ms, paced at the camera's rate",
        "%-30s %-9s | %6s | %7s %7s %7s %7s %7s" % ("where", "to", "frames", "p50", "p90", "p99", "p99.9", "max"),
        rule(90),
    ]
    out += _latency_rows("host, synthetic %s@%d" % (s["size"], s["fps"]), s["host"])
    if s.get("guest"):
        out += _latency_rows("vivid guest (emulated) 640x480", s["guest"])
    elif s.get("guest_failed"):
        out.append("vivid guest: no latency figures (the guest run above failed)")
    return out


def render_memory(s, settings):
    first, second = s["frames"]
    out = [
        "",
        "Memory against capture length: capturer-probe capture (synthetic, unpaced, loopback scored as it goes), peak RSS",
        "%-10s | %16s | %16s | %s" % ("size", "%d frames (KiB)" % first, "%d frames (KiB)" % second, "growth"),
        rule(62),
    ]
    for row in s["rows"]:
        before, after = row["rss_kib"]
        out.append("%-10s | %16s | %16s | %+.1f %%" % (row["size"], before, after, (after - before) * 100 / before))
    return out


def render_send(s, settings):
    frames, fps = s["frames"], s["fps"]
    out = [
        "",
        "Call send path: YUYV frames -> VP8 -> RTP on loopback, paced at %d fps, %d frames, best of %d" % (
            fps, frames, settings["runs"]),
        "alternating runs by CPU.",
        "CPU ms/frame = sender process user+sys / frames; ratio = ffmpeg / ours (> 1: ours is cheaper);",
        "decoded = frames our receiver decoded from each sender (ours / ffmpeg).",
        "%-9s | %-24s | %-24s | %-6s | %s" % ("size", "ours: CPU ms, pkts, drops", "ffmpeg: CPU ms, pkts", "ratio",
                                              "decoded"),
        rule(90),
    ]
    for row in s["rows"]:
        o, f = row["ours"], row["ffmpeg"]
        out.append("%-9s | %8s %8s %5s | %8s %8s %5s | %6s | %s / %s"
                   % (row["size"], f2(per_frame_ms(o["cpu_s"], frames)), number(o.get("packets", "?")),
                      number(o.get("dropped", "?")), f2(per_frame_ms(f["cpu_s"], frames)),
                      number(f.get("packets", "?")), "-", f2(ratio(f["cpu_s"], o["cpu_s"])),
                      number(o.get("decoded", "?")), number(f.get("decoded", "?"))))
    return out


def render_send_allocations(s, settings):
    out = [
        "",
        "WebRTC send path: heap allocations per packet of the sender alone, %d frames at 640x480, 800 kbit/s"
        % s["frames"],
        "%-34s | %8s | %s" % ("configuration", "packets", "allocations/packet"),
        rule(66),
    ]
    for row in s["rows"]:
        out.append("%-34s | %8s | %s" % (row["configuration"], number(row["packets"]),
                                         number(row["mallocs_per_packet"])))
    if "congestion_instructions" in s:
        out.append("(WebRTCConnection's figure counts its feedback too: parsing each transport-wide feedback message "
                   "and its report allocate, 10 a second; the send path itself allocates nothing.)")
    if s.get("congestion_instructions") is not None:
        out.append("pacer + send-side estimator: %s instructions per packet (callgrind)"
                   % number(s["congestion_instructions"]))
    return out


def render_idle(s, settings):
    out = [
        "",
        "Idle WebRTC connections on loopback: threads, wake-ups and CPU",
        "%-6s %-8s | %7s | %14s | %16s | %s" % ("pairs", "seconds", "threads", "wake-ups/s", "per connection",
                                                 "CPU ms per connection-minute"),
        rule(90),
    ]
    for row in s["rows"]:
        out.append("%-6s %-8s | %7s | %14s | %16s | %s"
                   % (row["pairs"], row["seconds"], number(row["threads"]), number(row["wakeups_per_s"]),
                      number(row["wakeups_per_s_per_connection"]), number(row["cpu_ms_per_connection_per_min"])))
    return out


def render_scale(s, settings):
    out = [
        "",
        "Scale: synthetic camera -> capturer -> VP8, %d frames per stream, unpaced" % settings["frames"],
        "%-10s %-7s | %10s | %12s | %14s | %s" % ("size", "streams", "fps/stream", "CPU ms/frame", "CPU us/Mpixel",
                                                   "CPU %"),
        rule(72),
    ]
    for row in s["rows"]:
        width, height = (int(v) for v in row["size"].split("x"))
        out.append("%-10s %-7s | %10s | %12s | %14.0f | %.0f"
                   % (row["size"], row["streams"], number(row["fps_per_stream"]), number(row["cpu_ms_per_frame"]),
                      row["cpu_ms_per_frame"] * 1e9 / (width * height), 100 * row["cpu_s"] / row["wall_s"]))
    return out


def layer_pixels(streams, size):
    """The pixels of every layer in `streams` (capture-bench's "320x180@150,640x360@500,…") over those of `size`."""
    def pixels(dimensions):
        width, height = (int(v) for v in dimensions.split("x"))
        return width * height
    return sum(pixels(layer.split("@")[0]) for layer in streams.split(",")) / pixels(size)


def render_simulcast(s, settings):
    out = [
        "",
        "Simulcast against one stream: SendPipeline with libwebrtc's VP8 simulcast layers for the size (L layers of T",
        "temporal layers) against the same pipeline with one stream of T temporal layers, on the same frames: a",
        "testsrc2 clip with temporal noise (%d frames) played twice, the first pass as warm-up, the second measured;"
        % s["clip_frames"],
        "unpaced, each frame once the previous one's layers are all out, libvpx frame dropping off; best of %d runs"
        % s["runs"],
        "alternating between the two in one process, each by its CPU.",
        "CPU ms/frame = the encoder thread's CPU (layout, libyuv scaling, every layer's encode) / frames;",
        "process = the whole process's (filling the frames too); ratio = simulcast / one stream (encoder thread).",
        "pixels = the layers' pixels / the input's: libwebrtc's three layers at 1280x720 (320x180, 640x360, 1280x720)",
        "are 1.31x the pixels of one, so about 1.3x the CPU is the expected cost (its two at 640x480: 1.25x); the",
        "lowest layer, below 352x288, is encoded at libvpx speed -4 as libwebrtc does (-6 above), dearer per pixel.",
        "allocs/frame = heap allocations of every thread in the measured window (malloc interposer).",
        "No GStreamer or Chromium figures: neither has a simulcast encoder that runs alone on given frames",
        "(GStreamer has no simulcast VP8 encoder element; Chromium's is inside its WebRTC stack). Chromium as a",
        "simulcast publisher is measured end to end in the Janus lab test",
        "(Tests/CaptureLabTests/Janus/JanusSimulcastTests.swift).",
        "%-9s %2s %2s %5s | %-38s | %6s | %-22s | %5s | %-22s | %s"
        % ("size", "L", "T", "kbps", "layers: size@kbit/s", "pixels", "CPU ms: simulcast/one", "ratio",
           "process: simulcast/one", "allocs/frame: simulcast/one"),
        rule(140),
    ]
    for row in s["rows"]:
        out.append("%-9s %2d %2d %5d | %-38s | %5.2fx | %9.2f / %-10.2f | %5s | %9.2f / %-10.2f | %s / %s"
                   % (row["size"], row["layers"], row["temporal_layers"], row["kbps"],
                      row["streams"].replace(",", " "), layer_pixels(row["streams"], row["size"]),
                      row["simulcast_thread_cpu_ms_per_frame"], row["single_thread_cpu_ms_per_frame"],
                      f2(row["ratio"]), row["simulcast_process_cpu_ms_per_frame"],
                      row["single_process_cpu_ms_per_frame"], number(row["simulcast_mallocs_per_frame"]),
                      number(row["single_mallocs_per_frame"])))
        if row["active"] < row["layers"]:
            out.append("  (only %d of the %d layers on at %d kbit/s)" % (row["active"], row["layers"], row["kbps"]))
        if row["layers"] < row["wanted_layers"]:
            out.append("  (%d layers asked for: the size allows %d)" % (row["wanted_layers"], row["layers"]))
        if row.get("threads", 1) > 1:
            out.append("  (libvpx had %d threads at %s: compare the process figures)" % (row["threads"], row["size"]))
    return out


SECTIONS = [
    ("vp8", render_vp8),
    ("conversion", render_conversion),
    ("capture", render_capture),
    ("vivid_capture", render_vivid_capture),
    ("pipeline", render_pipeline),
    ("vivid_live", render_vivid_live),
    ("latency", render_latency),
    ("memory", render_memory),
    ("send", render_send),
    ("send_allocations", render_send_allocations),
    ("idle", render_idle),
    ("scale", render_scale),
    ("simulcast", render_simulcast),
]


#: The start of each text section's first line, by which update_markdown finds it in an earlier BENCHMARKS.md.
TITLES = {
    "vp8": "VP8 real-time encode", "conversion": "Conversion at ", "capture": "Capture path (synthetic camera",
    "vivid_capture": "V4L2 capture path on vivid", "pipeline": "Whole pipeline:", "vivid_live": "Live in the vivid",
    "latency": "Latency (HDR histogram)", "memory": "Memory against capture length", "send": "Call send path:",
    "send_allocations": "WebRTC send path:", "idle": "Idle WebRTC connections", "scale": "Scale:",
    "simulcast": "Simulcast against one stream:",
}
#: The sections the goals are judged on: updating one alone would leave the goals stale, so they need a full run.
GOAL_SECTIONS = {"pipeline", "vivid_live", "latency", "memory"}


def updatable(name):
    """Whether update_markdown can splice section `name` alone into a BENCHMARKS.md (a text section no goal reads)."""
    return name in TITLES and name not in GOAL_SECTIONS


def update_markdown(text, results, when):
    """`text` (a BENCHMARKS.md) with the text sections of `results` put in place of the same sections' earlier
    figures (or, when it has none, after the section before it), each named under the "Written by" line as rerun
    alone on `when`; every other line as it was. Sections are the blank-line-separated paragraphs of the first code
    block, each found by its title (TITLES)."""
    names = [name for name, _ in SECTIONS if name in results["sections"]]
    refused = [name for name in results["sections"] if not updatable(name)]
    if refused:
        raise ValueError("cannot update %s alone (a full run writes it)" % ", ".join(refused))
    lines = text.split("\n")
    try:
        start = lines.index("```")
        end = lines.index("```", start + 1)
    except ValueError:
        raise ValueError("no text report (a code block) to update") from None
    paragraphs, current = [], None
    for line in lines[start + 1:end]:
        if not line.strip():
            current = None
        elif current is None:
            current = [line]
            paragraphs.append(current)
        else:
            current.append(line)

    def name_of(paragraph):
        return next((name for name, title in TITLES.items() if paragraph[0].startswith(title)), None)

    order = [name for name, _ in SECTIONS]
    for name in names:
        new = [line for line in render_section(name, results) if line]
        found = [i for i, p in enumerate(paragraphs) if name_of(p) == name]
        if found:
            paragraphs[found[0]] = new
            continue
        before = set(order[:order.index(name)])
        at = max([i + 1 for i, p in enumerate(paragraphs) if name_of(p) in before], default=0)
        paragraphs.insert(at, new)
    block = []
    for paragraph in paragraphs:
        block += [""] + paragraph
    lines[start + 1:end] = block
    written = next((i for i, line in enumerate(lines[:start]) if line.startswith("Written by ")), None)
    if written is not None:
        for name in reversed(names):
            note = ("Section `%s` rerun alone on %s (load average %s), spliced in by `harness.py run --only %s"
                    " --update`." % (name, when, results["machine"]["load"], name))
            prefix = "Section `%s` rerun alone" % name
            stale = [i for i in range(written + 1, start) if lines[i].startswith(prefix)]
            if stale:
                lines[stale[0]] = note
            else:
                lines.insert(written + 1, note)
    return "\n".join(lines)


def render_section(name, results):
    """The text lines of one section of `results` (empty when it did not run)."""
    for section, function in SECTIONS:
        if section == name and name in results["sections"]:
            return function(results["sections"][name], results["settings"])
    if name == "webrtc" and name in results["sections"]:
        return render_webrtc(results["sections"]["webrtc"])
    if name == "link" and name in results["sections"]:
        s = results["sections"]["link"]
        return ["", "SKIPPED: shaped-link comparison (%s)" % s["skipped_all"]] if "skipped_all" in s else s["text"]
    return []


def goal_figures(results):
    """The figures the goals are judged on, from the sections that ran."""
    sections, figures = results["sections"], {"size": results["settings"]["goal_size"]}
    frames = results["settings"]["frames"]
    for row in sections.get("pipeline", {}).get("rows", []):
        if row["size"] != figures["size"]:
            continue
        fmt = row["format"]
        figures[fmt + "_ours"] = float(f2(per_frame_ms(row["ours"]["cpu_s"], frames)))
        figures[fmt + "_ffmpeg"] = float(f2(per_frame_ms(row["ffmpeg"]["cpu_s"], frames)))
        figures[fmt + "_gst"] = float(f2(per_frame_ms(row["gst"]["cpu_s"], frames))) if row.get("gst") else 0.0
        figures[fmt + "_allocs"] = row["ours"]["mallocs_per_frame"]
        if row.get("vpxenc_alone"):
            figures["vpxenc"] = float(f2(per_frame_ms(row["vpxenc_alone"]["cpu_s"], frames)))
    live = sections.get("vivid_live", {})
    if "mallocs_per_frame" in live.get("ours_line", {}):
        figures["vivid_allocs"] = live["ours_line"]["mallocs_per_frame"]
    if "latency" in sections:
        figures["p99"] = sections["latency"]["host"]["deliveryLatencyMs"]["p99"]
    growths = [float("%+.1f" % ((a - b) * 100 / b)) for b, a in
               (row["rss_kib"] for row in sections.get("memory", {}).get("rows", []))]
    if growths:
        figures["memory_growth"] = max(growths)
    return figures


def render_goals(results):
    smoke = results["settings"].get("smoke")
    return ["", "Goals%s:" % (" (smoke run: not judged)" if smoke else "")] + goals(goal_figures(results))


def render_report(results):
    """The text report: every section that ran, in the bash scripts' order (the WHIP comparison excluded)."""
    lines = []
    for name, _ in SECTIONS:
        lines += render_section(name, results)
    return lines


# --- the WHIP comparison (formerly Scripts/webrtc-bench), Markdown ---------------------------------------------------

PUBLISHERS = ("ours", "gstreamer", "aiortc")

SETTINGS_THAT_DIFFER = """\
Settings that differ: ours sends a key frame every 10 s (publish's keyFrameInterval = 10 x fps) where GStreamer
and aiortc use 3000 frames; Janus asks every publisher for one every 10 s (fir_freq). aiortc (through FFmpeg's
libvpx wrapper) leaves the initial rc buffer at libvpx's 4000 ms and sets the optimal one to 5/6 of the size
(833 ms; ours and GStreamer: 500/600 ms), drops no frames (ours and GStreamer: below 30 % buffer), sets no
max-intra-rate (ours and GStreamer: 900 %), uses cpu-used -6 at every size and PyAV's own libvpx build (a newer
libvpx than Debian's); its bit rate is pinned to the target here (it would follow REMB, as ours does).
GStreamer's transceiver has do-nack (RTX) on, as ours and aiortc offer RTX. SRTP: each publisher's line above
names the profile Janus negotiated with it (GStreamer 1.22's dtls element offers only AES128_CM_SHA1_80).
Conversion from YUYV: ours libyuv (FrameConverter), GStreamer videoconvert (1 thread) to I420, aiortc
libswscale (PyAV reformat) to yuv420p."""


def _json_field(report, key):
    value = report.get(key)
    return "?" if value is None else number(value)


def render_webrtc(s):
    if "skipped_all" in s:
        return ["", "SKIPPED: WebRTC publish comparison (%s)" % s["skipped_all"]]
    fps, seconds, runs = s["fps"], s["seconds"], s["runs"]
    m = s["machine"]
    out = [
        "",
        "# WHIP publishers into Janus: CPU per frame",
        "",
        "- Machine: %s cores, %s, kernel %s; load average at start: %s" % (m["cores"], m["cpu"], m["kernel"],
                                                                         s["load_start"]),
        "- Source: testsrc2 + temporal noise, raw YUYV from one file, paced at %d fps; %d s per run, best of %d by CPU"
        " ms/frame among the runs that kept up with real time (runs alternate between publishers)"
        % (fps, seconds, runs),
        "- VP8 (all): libvpx real-time (deadline 1), CBR, 1 thread, quantizer 2–56, undershoot 100 %, overshoot 15 %,"
        " rc buffer 1000 ms, noise sensitivity 4, static threshold 1, one token partition, no lag",
        "- Janus 1.1.2 VideoRoom (Scripts/webrtc-peers lab), one room per target bit rate, its REMB = the target",
        "- ours: capturer-probe %s built from %s (libvpx %s, Debian); GStreamer: %s webrtcbin + vp8enc (libvpx %s);"
        " aiortc %s (PyAV's bundled libvpx %s)"
        % (s["versions"]["probe"], s["versions"]["build"], s["versions"]["libvpx"], s["versions"]["gstreamer"],
           s["versions"]["libvpx"], s["versions"]["aiortc"], s["versions"]["libvpx_pyav"]),
        "",
    ]
    for reason in s.get("skipped", []):
        out += ["", "!!!!! SKIPPED: %s !!!!!" % reason, ""]
    out += [
        "CPU ms/frame = user+sys of the publisher process (wait4, as /usr/bin/time reads it, start-up and teardown included)",
        "/ frames sent;",
        "kbit/s sent = bytes out of the publisher namespace's veth (Ethernet/IP/UDP, SRTP, RTCP, ICE, DTLS and WHIP HTTP",
        "included) per second of video (frames / %d); wall s and peak RSS from wait4." % fps,
        "",
        "| size | publisher | frames sent | kbit/s sent | CPU ms/frame | wall s | peak RSS MiB | ratio (peer CPU / ours) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    warnings = []
    for size in s["sizes"]:
        best = size["best"]
        ours = best.get("ours")
        for name in PUBLISHERS:
            row = best.get(name)
            if row is None:
                reason = "SKIPPED" if name in s.get("unavailable", []) else "FAILED"
                out.append("| %s | %s | %s | | | | | |" % (size["size"], name, reason))
                continue
            cpu = round(per_frame_ms(row["cpu_s"], row["frames"]), 2)
            ours_cpu = round(per_frame_ms(ours["cpu_s"], ours["frames"]), 2) if ours else 0
            out.append("| %s (%d kbit/s) | %s | %d | %.0f | %.2f | %.2f | %.1f | %s |"
                       % (size["size"], size["kbps"], name, row["frames"],
                          row["tx_bytes"] * 8 / 1000 / (row["frames"] / fps), cpu, row["wall_s"],
                          row["max_rss_kb"] / 1024, "%.2f" % (cpu / ours_cpu) if ours_cpu > 0 else "n/a"))
            if row["frames"] * 100 < seconds * fps * 97:
                warnings.append("WARNING: %s at %s sent %d frames, fewer than 97 %% of %d: it fell behind"
                                % (name, size["size"], row["frames"], seconds * fps))
    out += warnings
    out += [
        "",
        "While sending (the sampler's window, start-up and teardown left out; frames = window x %d; best of %d by this"
        % (fps, runs),
        "figure, so a row may come from another run than the table above):",
        "",
        "| size | publisher | window s | CPU ms/frame while sending | ratio (peer / ours) | start-up + teardown CPU s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for size in s["sizes"]:
        steady = size["best_steady"]
        ours = steady.get("ours")
        for name in PUBLISHERS:
            row = steady.get(name)
            if row is None:
                continue
            mine = round(row["steady_ms"], 2)
            base = round(ours["steady_ms"], 2) if ours else 0
            out.append("| %s | %s | %.1f | %.2f | %s | %.2f |"
                       % (size["size"], name, row["window_s"], mine,
                          "%.2f" % (mine / base) if base > 0 and mine > 0 else "n/a",
                          row["cpu_s"] - row["steady_ms"] * row["frames"] / 1000 if row["window_s"] > 0 else 0))
    out += ["", "Each best run's own report (VP8/RTP figures as the publisher counts them):"]
    for size in s["sizes"]:
        for name in PUBLISHERS:
            row = size["best"].get(name)
            if row is None:
                continue
            r, srtp = row.get("report", {}), s.get("srtp", {}).get(name) or "?"
            j = lambda key: _json_field(r, key)  # noqa: E731
            if name == "ours":
                text = ("frames %s captured / %s encoded, %s packets, %s kbit/s of SRTP (target %s, last REMB %s), key"
                        " frames %s, connected after %s ms, %s"
                        % (j("framesCaptured"), j("framesEncoded"), j("packets"), j("bitrateKbps"),
                           j("targetBitrateKbps"), j("lastRembKbps"), j("keyFramesSent"), j("connectedMs"), srtp))
            elif name == "gstreamer":
                text = ("%s packets, %s kbit/s of RTP out of rtpvp8pay, connected after %s ms, CPU at first frame %s s,"
                        " %s" % (j("packets"), j("rtpKbps"), j("connectedMs"), j("cpuSecondsAtFirstFrame"), srtp))
            else:
                text = ("%s packets, %s kbit/s of RTP payload (target %s), connected after %s ms, CPU at first frame"
                        " %s s, %s" % (j("packets"), j("rtpPayloadKbps"), j("targetBitrateKbps"), j("connectedMs"),
                                       j("cpuSecondsAtFirstFrame"), srtp))
            out.append("- %s %s: %s" % (size["size"], name, text))
    out += ["", SETTINGS_THAT_DIFFER, "Load average at the end: %s." % s["load_end"]]
    return out


# --- the shaped-link comparison (Scripts/lab/link-compare), Markdown ------------------------------------------------

def render_link(s):
    if "skipped_all" in s:
        return ["", "SKIPPED: shaped-link comparison (%s)" % s["skipped_all"]]
    return [
        "", "# Through a shaped link: ours vs Chromium (send-side BWE)", "",
        "Scripts/lab/link-compare %s: Chromium's WHIP publisher (file fake camera) and ours (`capturer-probe publish "
        "--congestion-control transport-wide --bitrate 1700`, `--start-bitrate 300` where it has it) one after the "
        "other, the same Y4M clip (640x480, 30 fps), "
        "through Scripts/lab/linkem.py (a userspace delay line, per-packet log) into Janus (no REMB, TWCC every "
        "100 ms); a Chromium viewer samples inbound-rtp every 500 ms. Goal margins from issue 20: reaction +1 s, "
        "utilisation -10 points, recovery +5 s, queue delay and freezes no worse. One run each%s." % (
            " ".join(s["profiles"]), ", %s" % s["written"] if s.get("written") else ""),
    ] + s["markdown"]


# --- the whole file -------------------------------------------------------------------------------------------------

def render_markdown(results):
    """BENCHMARKS.md: the machine, the text report in a code block, the WHIP comparison as Markdown, the goals."""
    m = results["machine"]
    lines = [
        "# Benchmarks",
        "",
        "Written by `Scripts/bench` on %s. Figures are for this machine only." % results["written"],
        "",
        "- CPU: %s, %s cores" % (m["cpu"], m["cores"]),
        "- Kernel: %s; load average when written: %s" % (m["kernel"], m["load"]),
        "- ffmpeg: %s; GStreamer: %s" % (m["ffmpeg"], m["gstreamer"]),
        "- libvpx: %s; %s" % (m["libvpx"], m["swift"]),
        "",
        "```",
    ]
    lines += render_report(results)
    lines.append("```")
    if "webrtc" in results["sections"]:
        lines += render_webrtc(results["sections"]["webrtc"])
    if "link" in results["sections"]:
        lines += render_link(results["sections"]["link"])
    lines += render_goals(results)
    return "\n".join(lines) + "\n"
