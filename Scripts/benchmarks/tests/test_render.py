"""Rendering: the figures of the BENCHMARKS.md of 2026-11-24 (Scripts/bench's last full run, before the harness),
as results.json, render back to that file line for line, but for deliberate changes: the text tables' code block now
closes before the WHIP comparison, whose Markdown tables were shown as text inside it, and the process times are
said to come from wait4 (the system call /usr/bin/time reads them with; the harness calls it itself)."""

import copy
import json
import os
import unittest

import render

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def fixture():
    with open(os.path.join(FIXTURES, "results-2026-11-24.json")) as f:
        return json.load(f)


class RenderTests(unittest.TestCase):
    def test_the_last_bash_run_renders_back(self):
        with open(os.path.join(FIXTURES, "BENCHMARKS-2026-11-24.md")) as f:
            expected = f.read()
        self.assertEqual(render.render_markdown(fixture()).splitlines(), expected.splitlines())

    def test_a_section_that_did_not_run_renders_nothing(self):
        results = fixture()
        del results["sections"]["vivid_capture"], results["sections"]["webrtc"]
        text = render.render_markdown(results)
        self.assertNotIn("V4L2 capture path on vivid", text)
        self.assertNotIn("WHIP publishers", text)
        self.assertIn("Capture path (synthetic camera", text)

    def test_a_guest_that_could_not_run(self):
        results = fixture()
        results["sections"]["vivid_live"] = {"frames": 100, "skipped": True}
        del results["sections"]["latency"]["guest"]
        results["sections"]["latency"]["guest_failed"] = True
        text = render.render_markdown(results)
        self.assertIn("skipped: the vivid guest could not run (Scripts/vivid-vm)", text)
        self.assertIn("vivid guest: no latency figures (the guest run above failed)", text)
        self.assertIn("V4L2 in the guest not run", text)

    def test_smoke_goals_are_not_judged_and_webrtc_may_be_skipped(self):
        results = copy.deepcopy(fixture())
        results["settings"]["smoke"] = True
        results["sections"]["webrtc"] = {"skipped_all": "no janus: Scripts/webrtc-peers install"}
        lines = render.render_markdown(results).splitlines()
        self.assertIn("Goals (smoke run: not judged):", lines)
        self.assertIn("SKIPPED: WebRTC publish comparison (no janus: Scripts/webrtc-peers install)", lines)

    def test_a_publisher_that_failed_or_could_not_be_installed(self):
        results = fixture()
        webrtc = results["sections"]["webrtc"]
        del webrtc["sizes"][0]["best"]["aiortc"], webrtc["sizes"][0]["best"]["gstreamer"]
        webrtc["unavailable"] = ["gstreamer"]
        webrtc["skipped"] = ["GStreamer webrtcbin publisher: could not install"]
        lines = render.render_webrtc(webrtc)
        self.assertIn("| 640x480 | gstreamer | SKIPPED | | | | | |", lines)
        self.assertIn("| 640x480 | aiortc | FAILED | | | | | |", lines)
        self.assertIn("!!!!! SKIPPED: GStreamer webrtcbin publisher: could not install !!!!!", lines)

    def test_goal_figures_come_from_the_goal_size(self):
        figures = render.goal_figures(fixture())
        self.assertEqual((figures["YUYV_ours"], figures["YUYV_ffmpeg"], figures["vpxenc"]), (8.80, 9.27, 8.31))
        self.assertEqual((figures["MJPG_allocs"], figures["vivid_allocs"], figures["memory_growth"]), (6.0, 0.0, 5.3))


if __name__ == "__main__":
    unittest.main()
