#!/usr/bin/env python3
"""The benchmark harness: runs our tools and the peers' (ffmpeg, GStreamer, vpxenc, aiortc, Janus), keeps every
run's raw JSON, and renders BENCHMARKS.md from it. Documentation/Benchmarks.md says what the figures mean.

    harness.py run [--smoke] [--only SECTION,…] [--out DIR] [--write FILE | --update FILE]
        Runs the sections (all by default, in the order below) and writes DIR/runs/NNNN-SECTION-TOOL.json (one per
        process: its command, exit status, CPU, wall, peak RSS and output, and what was read from it) and
        DIR/results.json (each section's best runs and the machine). A full run of every section also writes
        BENCHMARKS.md (or --write FILE). --smoke: every section on tiny sizes and few frames, on the debug build, no
        vivid guest, nothing judged, nothing written but the run directory (Scripts/bench --smoke, run by
        Scripts/test, so that the harness cannot rot). DIR defaults to .build/benchmarks/<UTC time>[-smoke]/:
        .build/ is ignored by git, so runs (per-machine, noisy, large) stay out of commits as the media do.
        --update FILE: splice the sections that ran into FILE (an earlier BENCHMARKS.md) in place of their old figures,
        the rest of it untouched, noting the rerun under its "Written by" line (text sections the goals do not read,
        e.g. `run --only simulcast --update BENCHMARKS.md`).
    harness.py render DIR [--write FILE | --update FILE]
        Renders BENCHMARKS.md from DIR/results.json (to standard output, or FILE), or splices its sections into FILE.
    harness.py test
        The harness's own unit tests (tests/: best of N, ratios, verdicts, rendering).

Sections: vp8, conversion, capture, vivid (the capture path and the live comparison in the QEMU guest), pipeline,
latency, memory, send, send_allocations, idle, scale, simulcast (SendPipeline's simulcast against one stream),
webrtc (root and the Janus lab; Scripts/webrtc-bench runs it alone), link (root: ours vs Chromium through a shaped
link, Scripts/lab/link-compare P1; LINK_PROFILES, LINK_SCALE). Environment, as for the bash scripts it replaces:
FRAMES, RUNS, SEND_FRAMES, LATENCY_FRAMES, VIVID_FRAMES,
BENCH_VIVID=0 (no guest); for webrtc SECONDS_PER_RUN, PROBE (a capturer-probe to use), BENCH_VENV (aiortc's venv),
WEBRTC_PEERS_NS / WEBRTC_PEERS_NET (the lab's namespace prefix and /24, default wb and 10.78.0).
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import render  # noqa: E402
import sections  # noqa: E402
import tools  # noqa: E402
import link  # noqa: E402
import webrtc  # noqa: E402

ORDER = ["vp8", "conversion", "capture", "vivid", "pipeline", "latency", "memory", "send", "send_allocations", "idle",
         "scale", "simulcast", "webrtc", "link"]
LAB_SECTIONS = {"webrtc", "link"}
TOOLS = ["ffmpeg", "ffprobe", "vpxenc", "gst-launch-1.0"]


def log(text):
    print("bench: " + text, file=sys.stderr, flush=True)


def first_line(argv, index=0):
    try:
        lines = subprocess.run(argv, capture_output=True, text=True).stdout.splitlines()
        return lines[index] if len(lines) > index else "?"
    except OSError:
        return "?"


def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
        "load": " ".join(open("/proc/loadavg").read().split()[:3]),
        "ffmpeg": (first_line(["ffmpeg", "-version"]).split() + ["?"] * 3)[2],
        "gstreamer": first_line(["gst-launch-1.0", "--version"], 1),
        "libvpx": first_line(["pkg-config", "--modversion", "vpx"]),
        "swift": first_line(["swift", "--version"]),
    }


def build(smoke):
    """Builds capture-bench and capturer-probe (debug for a smoke run, else release); returns their directory."""
    config = [] if smoke else ["-c", "release"]
    log("building capture-bench and capturer-probe (%s)…" % ("debug, smoke mode" if smoke else "release"))
    for product in ("capture-bench", "capturer-probe"):
        tools.quiet(["swift", "build", *config, "--product", product])
    return tools.quiet(["swift", "build", *config, "--show-bin-path"]).strip()


def run(args):
    smoke = args.smoke
    only = args.only.split(",") if args.only else ORDER
    unknown = [name for name in only if name not in ORDER]
    if unknown:
        sys.exit("bench: unknown section(s) %s (sections: %s)" % (", ".join(unknown), ", ".join(ORDER)))
    if args.update:
        refused = [name for name in only if not render.updatable(name)]
        if smoke:
            sys.exit("bench: --update takes no smoke run's figures")
        if refused:
            sys.exit("bench: --update cannot splice %s alone (the goals read it, or it is no text section): a full run"
                     " writes it" % ", ".join(refused))
    settings = sections.settings(smoke)
    lab_only = set(only) <= LAB_SECTIONS
    if not smoke and not lab_only:
        subprocess.run(["Scripts/install-deps", "--test"], check=True)
    missing = [tool for tool in (TOOLS if not lab_only else ["ffmpeg"]) if not shutil.which(tool)]
    if missing:
        sys.exit("bench: %s not installed (Scripts/install-deps --test)" % ", ".join(missing))
    stamp = datetime.datetime.now(datetime.timezone.utc)
    out = args.out or os.path.join(".build", "benchmarks", stamp.strftime("%Y%m%d-%H%M%S") + ("-smoke" if smoke else ""))
    os.makedirs(out, exist_ok=True)
    bin_dir = build(smoke) if not lab_only or not os.environ.get("PROBE") else None
    probe = os.environ.get("PROBE") or os.path.join(bin_dir, "capturer-probe")
    results = {
        "written": stamp.strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(),
        "settings": settings, "sections": {},
    }
    work = tempfile.mkdtemp(prefix="bench-")
    bench = sections.Bench(settings, bin_dir or os.path.dirname(probe), probe, tools.Recorder(out), work, log)
    failed = False

    def done(name, summary):
        results["sections"][name] = summary
        with open(os.path.join(out, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
        for line in render.render_section(name, results):
            print(line, flush=True)

    try:
        for name in only:
            log("section %s…" % name)
            if name == "vivid":
                if not settings["vivid"]:
                    continue
                done("vivid_capture", bench.vivid_capture())
                done("vivid_live", bench.vivid_live())
            elif name == "latency":
                live = results["sections"].get("vivid_live", {})
                done("latency", bench.latency(guest=live.get("latency"),
                                              guest_failed=settings["vivid"] and "vivid_live" in results["sections"]
                                              and not live.get("latency")))
            elif name == "webrtc":
                if os.getuid() != 0:
                    done("webrtc", {"skipped_all": "Scripts/webrtc-bench needs root for its network namespaces"})
                elif not shutil.which("janus"):
                    done("webrtc", {"skipped_all": "no janus: Scripts/webrtc-peers install"})
                else:
                    summary = webrtc.run(bench, smoke, probe, results["machine"])
                    failed = failed or summary.get("failed", False)
                    done("webrtc", summary)
            elif name == "link":
                if smoke:
                    done("link", {"skipped_all": "smoke run (Scripts/lab/link-compare P1 takes about 4 minutes)"})
                elif os.getuid() != 0:
                    done("link", {"skipped_all": "the shaped-link comparison needs root for its network namespaces"})
                elif not (shutil.which("janus") and shutil.which("chromium")):
                    done("link", {"skipped_all": "no janus or chromium: Scripts/webrtc-peers install"})
                else:
                    summary = link.run(bench, probe)
                    failed = failed or summary.get("failed", False)
                    done("link", summary)
            else:
                done(name, getattr(bench, name)())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if only == ORDER:
        for line in render.render_goals(results):
            print(line)
    log("every run's record is in %s/runs, the results in %s/results.json" % (out, out))
    if args.update:
        update(args.update, results)
    elif not smoke and (args.write or only == ORDER):
        target = args.write or "BENCHMARKS.md"
        with open(target, "w") as f:
            f.write(render.render_markdown(results))
        log("wrote %s" % target)
    return 1 if failed else 0


def update(path, results):
    """Splices the sections of `results` into the BENCHMARKS.md at `path`."""
    with open(path) as f:
        text = f.read()
    text = render.update_markdown(text, results, results["written"])
    with open(path, "w") as f:
        f.write(text)
    log("updated %s: %s" % (path, ", ".join(results["sections"])))


def render_command(args):
    with open(os.path.join(args.directory, "results.json")) as f:
        results = json.load(f)
    if args.update:
        update(args.update, results)
        return 0
    text = render.render_markdown(results)
    if args.write:
        with open(args.write, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def test_command(_):
    suite = unittest.defaultTestLoader.discover(os.path.join(HERE, "tests"), top_level_dir=HERE)
    return 0 if unittest.TextTestRunner(verbosity=1).run(suite).wasSuccessful() else 1


def main():
    os.chdir(os.path.join(HERE, "..", ".."))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("run", help="run the sections, keep every run, write BENCHMARKS.md after a full run")
    p.add_argument("--smoke", action="store_true", help="tiny sizes, debug build, nothing judged or written")
    p.add_argument("--only", help="comma-separated sections: " + ",".join(ORDER))
    p.add_argument("--out", help="the run directory (default .build/benchmarks/<UTC time>)")
    p.add_argument("--write", help="write the Markdown report here (default BENCHMARKS.md after a full run)")
    p.add_argument("--update", help="splice the sections that ran into this BENCHMARKS.md (text sections only)")
    p.set_defaults(function=run)
    p = commands.add_parser("render", help="render BENCHMARKS.md from a run directory's results.json")
    p.add_argument("directory")
    p.add_argument("--write", help="the file to write (default: standard output)")
    p.add_argument("--update", help="splice DIR's sections into this BENCHMARKS.md instead")
    p.set_defaults(function=render_command)
    p = commands.add_parser("test", help="the harness's unit tests")
    p.set_defaults(function=test_command)
    args = parser.parse_args()
    sys.exit(args.function(args))


if __name__ == "__main__":
    main()
