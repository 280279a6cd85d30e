"""The harness's arithmetic: parsing, best of N, ratios, verdicts."""

import unittest

import stats


class ParsingTests(unittest.TestCase):
    def test_fields_are_numbers_when_they_are_numbers(self):
        fields = stats.parse_fields("vp8 size=640x480 frames=150 fps=406.0 copy=true cpu_used=-6")
        self.assertEqual(fields, {"size": "640x480", "frames": 150, "fps": 406.0, "copy": "true", "cpu_used": -6})

    def test_a_tools_float_renders_as_the_tool_printed_it(self):
        for text in ("0.2", "2.28", "406.0", "0.01", "10.01", "2.509", "47185.123456789"):
            self.assertEqual(stats.number(stats.coerce(text)), text)

    def test_last_line_with_prefix(self):
        self.assertEqual(stats.last_line("a\npipeline x=1\nnoise\n", "pipeline "), "pipeline x=1")
        self.assertEqual(stats.last_line("", "x"), "")

    def test_vpxenc_progress_and_ffmpeg_rtime(self):
        self.assertEqual(stats.vpxenc_fps("Pass 1/1 frame  150/150 ... (409.06 fps)\rPass 1/1 (410.00 fps)"), 410.0)
        self.assertEqual(stats.ffmpeg_rtime("bench: utime=0.3s stime=0.0s rtime=0.292s"), 0.292)

    def test_busybox_time_row(self):
        row = stats.parse_busybox_time("ours 4.50 0.22 0m 5.02s 163840 ")
        self.assertAlmostEqual(row["cpu_s"], 4.72)
        self.assertAlmostEqual(row["wall_s"], 5.02)
        self.assertEqual(row["max_rss_kb"], 40960)


class BestOfTests(unittest.TestCase):
    def test_lowest_and_the_earlier_run_on_a_tie(self):
        runs = [{"cpu_s": 2, "run": 0}, {"cpu_s": 1, "run": 1}, {"cpu_s": 1, "run": 2}]
        self.assertEqual(stats.best(runs, "cpu_s")["run"], 1)
        self.assertEqual(stats.best(runs, "cpu_s", lowest=False)["run"], 0)
        self.assertIsNone(stats.best([], "cpu_s"))

    def test_runs_that_fell_behind_count_only_when_none_kept_up(self):
        runs = [{"frames": 272, "cpu_ms": 3.0}, {"frames": 300, "cpu_ms": 3.5}, {"frames": 292, "cpu_ms": 3.4}]
        self.assertEqual(stats.best_kept_up(runs, "cpu_ms", 300)["cpu_ms"], 3.4)  # 292 >= 97 % of 300
        behind = [{"frames": 200, "cpu_ms": 3.0}, {"frames": 250, "cpu_ms": 2.0}]
        self.assertEqual(stats.best_kept_up(behind, "cpu_ms", 300)["cpu_ms"], 2.0)


class RatioAndVerdictTests(unittest.TestCase):
    def test_ratio_guards_zero(self):
        self.assertEqual(stats.ratio(3.4, 0), 0.0)
        self.assertEqual(stats.f2(stats.ratio(0.51, 0.44)), "1.16")

    def test_per_frame_and_fps(self):
        self.assertAlmostEqual(stats.per_frame_ms(1.29, 300), 4.3)
        self.assertEqual(stats.ms_of_fps(0), 0.0)
        self.assertEqual(stats.f2(stats.ms_of_fps(406.0)), "2.46")

    def test_goals(self):
        figures = {"size": "1280x720", "YUYV_ours": 8.80, "YUYV_ffmpeg": 9.27, "YUYV_gst": 8.67, "MJPG_ours": 10.60,
                   "MJPG_ffmpeg": 12.80, "MJPG_gst": 10.27, "vpxenc": 8.31, "YUYV_allocs": 0.0, "MJPG_allocs": 6.0,
                   "vivid_allocs": 0.0, "p99": 0.478, "memory_growth": 5.3}
        self.assertEqual(stats.goals(figures), [
            "- 1280x720 YUYV -> VP8 at >= 1.3x both peers: ffmpeg 1.05x, GStreamer 0.99x: missed",
            "- 1280x720 MJPG -> VP8 at >= 1.3x both peers: ffmpeg 1.21x, GStreamer 0.97x: missed",
            "  (the same libvpx with the same settings bounds any pipeline by the peer's CPU / vpxenc's alone: ffmpeg"
            " 1.12x, GStreamer 1.04x on YUYV)",
            "- Within 5 % of vpxenc alone (YUYV, capture and conversion included): ours 8.80 against 8.31 CPU"
            " ms/frame, +5.9 %: missed",
            "- Zero heap allocations per frame, capture to encoded frame: YUYV 0.0, MJPG 6.0, V4L2 in the guest 0.0:"
            " missed",
            "- p99 capture -> delegate under 2 ms on the host: 0.478 ms: met",
            "- Memory flat in capture length (within 15 %): worst growth +5.3 %: met",
        ])

    def test_goals_met_and_not_measured(self):
        lines = stats.goals({"size": "1280x720", "YUYV_ours": 1.0, "YUYV_ffmpeg": 1.3, "YUYV_gst": 1.4,
                             "vpxenc": 1.0, "YUYV_allocs": 0.0, "MJPG_allocs": 0.01, "memory_growth": -2.0})
        self.assertTrue(lines[0].endswith("ffmpeg 1.30x, GStreamer 1.40x: met"))
        self.assertTrue(lines[3].endswith("ours 1.00 against 1.00 CPU ms/frame, +0.0 %: met"))
        self.assertIn("V4L2 in the guest not run: met", lines[4])
        self.assertEqual(lines[5], "- p99 capture -> delegate under 2 ms on the host: ? ms: missed")
        self.assertEqual(lines[6], "- Memory flat in capture length (within 15 %): worst growth 0 %: met")


if __name__ == "__main__":
    unittest.main()
