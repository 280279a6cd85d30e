"""The harness's arithmetic: parsing the tools' lines, best of N, ratios, per-frame figures, goal verdicts.

Pure functions only (no processes, no files), so that tests/test_stats.py covers them. Figures are kept raw (the
tools' own values, seconds from /usr/bin/time); rounding happens when rendering, with C's printf rules (Python's %
formatting), as the bash scripts' awk did.
"""

import re


def coerce(text):
    """A tool's printed value as a number when it is one (int, then float), else the text itself."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_fields(line):
    """The `key=value` pairs of one capture-bench line (its first word, the subcommand, has no `=`)."""
    fields = {}
    for word in line.split():
        key, sep, value = word.partition("=")
        if sep:
            fields[key] = coerce(value)
    return fields


def last_line(text, prefix=""):
    """The last non-empty line of `text` that starts with `prefix` ("" when there is none)."""
    lines = [line for line in text.splitlines() if line.strip() and line.startswith(prefix)]
    return lines[-1] if lines else ""


def parse_time(text):
    """/usr/bin/time -f "%e %U %S %M" output: {wall_s, user_s, sys_s, cpu_s, max_rss_kb}."""
    wall, user, system, rss = text.split()[-4:]
    return {
        "wall_s": float(wall),
        "user_s": float(user),
        "sys_s": float(system),
        "cpu_s": float(user) + float(system),
        "max_rss_kb": int(rss),
    }


def parse_busybox_time(line):
    """One row of the vivid guest's busybox `time -v` summary ("TOOL user sys 0m 4.20s rss"): its seconds of CPU,
    its wall seconds and its peak RSS in KiB (busybox's figure is ru_maxrss, already KiB, times 4 KiB pages)."""
    tool, user, system, minutes, seconds, rss = line.split()[:6]
    return {
        "tool": tool,
        "cpu_s": float(user) + float(system),
        "wall_s": float(minutes.rstrip("m")) * 60 + float(seconds.rstrip("s")),
        "max_rss_kb": int(rss) // 4,
    }


def vpxenc_fps(log):
    """The last "(N fps)" vpxenc printed on its progress line (encode calls only)."""
    found = re.findall(r"\(([0-9.]+) fps\)", log.replace("\r", "\n"))
    return float(found[-1]) if found else 0.0


def ffmpeg_rtime(log):
    """The rtime (seconds) of ffmpeg -benchmark's last report."""
    found = re.findall(r"rtime=([0-9.]+)s", log)
    return float(found[-1]) if found else 0.0


def best(runs, key, lowest=True):
    """The run with the lowest (or highest) `key`; on a tie the earlier run, as the bash scripts kept it."""
    chosen = None
    for run in runs:
        if chosen is None or (run[key] < chosen[key] if lowest else run[key] > chosen[key]):
            chosen = run
    return chosen


def best_kept_up(runs, key, expected_frames, share=0.97):
    """The run with the lowest `key` among those that sent at least `share` of `expected_frames`; if none did, the
    lowest among all (a starved run that fell behind real time counts only when no run kept up)."""
    kept_up = [run for run in runs if run["frames"] * 100 >= expected_frames * share * 100]
    return best(kept_up or runs, key)


def ratio(a, b):
    """a / b, 0 when b is not positive (awk's guard in the bash scripts)."""
    return a / b if b > 0 else 0.0


def per_frame_ms(seconds, frames):
    """Milliseconds per frame of `seconds` over `frames`."""
    return seconds * 1000 / frames if frames else 0.0


def ms_of_fps(fps):
    """Milliseconds per frame at `fps` (0 when there is no rate)."""
    return 1000 / fps if fps > 0 else 0.0


def growth_percent(before, after):
    """How much `after` exceeds `before`, in percent."""
    return (after - before) * 100 / before


def verdict(met):
    return "met" if met else "missed"


def f2(value):
    return "%.2f" % value


def ivf_payload_bytes(size, frames):
    """The VP8 bytes of an IVF file of `size` bytes and `frames` frames (32-byte file header, 12 per frame)."""
    return size - 32 - 12 * frames


def goals(figures):
    """The issue's goals, each a line judged from `figures` (a dict; any missing figure reads as not measured).

    Keys: YUYV_ours, YUYV_ffmpeg, YUYV_gst (and MJPG_…): CPU ms per frame at the goal size; vpxenc: vpxenc alone's;
    YUYV_allocs, MJPG_allocs, vivid_allocs: heap allocations per frame; p99: capture -> delegate p99 ms on the host;
    memory_growth: the worst growth in percent (None when none was measured); size: the goal size.
    """
    size = figures.get("size", "?")
    lines = []
    for fmt in ("YUYV", "MJPG"):
        ours = figures.get(fmt + "_ours", 0)
        vs_ffmpeg = ratio(figures.get(fmt + "_ffmpeg", 0), ours)
        vs_gst = ratio(figures.get(fmt + "_gst", 0), ours)
        lines.append(
            "- %s %s -> VP8 at >= 1.3x both peers: ffmpeg %sx, GStreamer %sx: %s"
            % (size, fmt, f2(vs_ffmpeg), f2(vs_gst), verdict(round(vs_ffmpeg, 2) >= 1.3 and round(vs_gst, 2) >= 1.3))
        )
    vpxenc = figures.get("vpxenc")
    lines.append(
        "  (the same libvpx with the same settings bounds any pipeline by the peer's CPU / vpxenc's alone: ffmpeg"
        " %sx, GStreamer %sx on YUYV)"
        % (f2(ratio(figures.get("YUYV_ffmpeg", 0), vpxenc or 0)), f2(ratio(figures.get("YUYV_gst", 0), vpxenc or 0)))
    )
    ours = figures.get("YUYV_ours")
    above = (ours or 0) - (vpxenc or 1)
    lines.append(
        "- Within 5 %% of vpxenc alone (YUYV, capture and conversion included): ours %s against %s CPU ms/frame,"
        " %+.1f %%: %s"
        % (
            f2(ours) if ours is not None else "?",
            f2(vpxenc) if vpxenc is not None else "?",
            above * 100 / (vpxenc or 1),
            verdict(ours is not None and vpxenc is not None and round(ours, 2) <= 1.05 * round(vpxenc, 2)),
        )
    )
    yuyv, mjpg, vivid = figures.get("YUYV_allocs"), figures.get("MJPG_allocs"), figures.get("vivid_allocs")
    lines.append(
        "- Zero heap allocations per frame, capture to encoded frame: YUYV %s, MJPG %s, V4L2 in the guest %s: %s"
        % (
            number(yuyv) if yuyv is not None else "?",
            number(mjpg) if mjpg is not None else "?",
            number(vivid) if vivid is not None else "not run",
            verdict(yuyv is not None and mjpg is not None and yuyv < 0.05 and mjpg < 0.05),
        )
    )
    p99 = figures.get("p99")
    lines.append(
        "- p99 capture -> delegate under 2 ms on the host: %s ms: %s"
        % (number(p99) if p99 is not None else "?", verdict(p99 is not None and p99 < 2))
    )
    growth = figures.get("memory_growth")
    worst = max([0.0] + ([growth] if growth is not None else []))
    lines.append(
        "- Memory flat in capture length (within 15 %%): worst growth %s %%: %s"
        % ("%+.1f" % worst if worst > 0 else "0", verdict(worst <= 15))
    )
    return lines


def number(value):
    """A value as the tool printed it: integers plainly, floats in their shortest form (Swift's and Python's
    shortest round-trip forms agree), anything else as text."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return repr(value)
    return str(value)
