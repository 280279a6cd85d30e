"""The simulcast section's table, and splicing one section into an earlier BENCHMARKS.md (harness.py run --only
SECTION --update FILE) without touching the rest of it."""

import copy
import json
import os
import unittest

import render
import sections

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")

#: capture-bench simulcast's line, as sections.Bench.simulcast keeps it (release build, 1280x720, L1T3).
SIMULCAST_ROW = {
    "size": "1280x720", "layers": 3, "active": 3, "temporal_layers": 3, "kbps": 2500,
    "streams": "320x180@150,640x360@500,1280x720@1850", "frames": 150, "threads": 1,
    "simulcast_thread_cpu_ms_per_frame": 12.203, "single_thread_cpu_ms_per_frame": 9.184, "ratio": 1.329,
    "simulcast_process_cpu_ms_per_frame": 12.508, "single_process_cpu_ms_per_frame": 9.492,
    "simulcast_kbps_actual": 1842, "single_kbps_actual": 2498, "simulcast_mallocs_per_frame": 0.0,
    "single_mallocs_per_frame": 0.0, "wanted_layers": 3,
}


def fixture():
    with open(os.path.join(FIXTURES, "results-2026-11-24.json")) as f:
        return json.load(f)


def markdown():
    with open(os.path.join(FIXTURES, "BENCHMARKS-2026-11-24.md")) as f:
        return f.read()


def simulcast_results(**changes):
    results = fixture()
    results["sections"] = {"simulcast": {"clip_frames": 150, "runs": 5, "rows": [dict(SIMULCAST_ROW, **changes)]}}
    results["written"] = "2026-11-29 01:00 UTC"
    return results


class SimulcastTableTests(unittest.TestCase):
    def test_the_row(self):
        lines = render.render_simulcast(simulcast_results()["sections"]["simulcast"], {})
        self.assertIn("1280x720   3  3  2500 | 320x180@150 640x360@500 1280x720@1850  |  1.31x |"
                      "     12.20 / 9.18       |  1.33 |     12.51 / 9.49       | 0.0 / 0.0", lines)
        self.assertTrue(any("best of 5 runs" in line for line in lines))

    def test_libwebrtcs_layers_pixels(self):
        self.assertEqual(render.layer_pixels("320x180@150,640x360@500,1280x720@1850", "1280x720"), 1.3125)
        self.assertEqual(render.layer_pixels("320x240@203,640x480@597", "640x480"), 1.25)

    def test_fewer_layers_than_asked_and_layers_off_are_said(self):
        section = simulcast_results(layers=2, active=1, wanted_layers=3, threads=2)["sections"]["simulcast"]
        lines = render.render_simulcast(section, {})
        self.assertIn("  (only 1 of the 2 layers on at 2500 kbit/s)", lines)
        self.assertIn("  (3 layers asked for: the size allows 2)", lines)
        self.assertIn("  (libvpx had 2 threads at 1280x720: compare the process figures)", lines)

    def test_settings_cover_both_sizes_and_temporal_patterns(self):
        full, smoke = sections.settings(False, env={}), sections.settings(True)
        self.assertEqual(full["simulcast_specs"], [["1280x720", 3, 2500], ["640x480", 2, 800]])
        self.assertEqual(full["simulcast_temporal"], [3, 1])
        self.assertEqual([layers for _, layers, _ in smoke["simulcast_specs"]], [3, 2])


class UpdateTests(unittest.TestCase):
    def test_every_text_section_is_one_titled_paragraph(self):
        results = fixture()
        for name, _ in render.SECTIONS:
            lines = render.render_section(name, results)
            if not lines:
                continue
            self.assertEqual(lines[0], "", name)
            self.assertTrue(lines[1].startswith(render.TITLES[name]), name)
            self.assertNotIn("", lines[1:], name)

    def test_a_new_section_goes_after_the_one_before_it_and_nothing_else_moves(self):
        before = markdown()
        after = render.update_markdown(before, simulcast_results(), "2026-11-29 01:00 UTC")
        table = [line for line in render.render_section("simulcast", simulcast_results()) if line]
        old, new = before.split("\n"), after.split("\n")
        scale = next(i for i, line in enumerate(old) if line.startswith("Scale:"))
        scale_end = next(i for i in range(scale, len(old)) if old[i] in ("", "```"))
        note = ("Section `simulcast` rerun alone on 2026-11-29 01:00 UTC (load average %s), spliced in by"
                " `harness.py run --only simulcast --update`." % fixture()["machine"]["load"])
        written = next(i for i, line in enumerate(old) if line.startswith("Written by "))
        expected = old[:written + 1] + [note] + old[written + 1:scale_end] + [""] + table + old[scale_end:]
        self.assertEqual(new, expected)

    def test_a_second_update_replaces_the_first(self):
        once = render.update_markdown(markdown(), simulcast_results(), "2026-11-29 01:00 UTC")
        results = simulcast_results(simulcast_thread_cpu_ms_per_frame=13.0, ratio=1.4)
        results["machine"]["load"] = "0.50 0.50 0.50"
        twice = render.update_markdown(once, results, "2026-11-29 02:00 UTC")
        self.assertEqual(len(twice.split("\n")), len(once.split("\n")))
        self.assertIn("|     13.00 / 9.18       |  1.40 |", twice)
        self.assertNotIn("12.20", twice)
        self.assertEqual(twice.count("Section `simulcast` rerun alone"), 1)
        self.assertIn("rerun alone on 2026-11-29 02:00 UTC (load average 0.50 0.50 0.50)", twice)
        self.assertEqual(render.update_markdown(twice, results, "2026-11-29 02:00 UTC"), twice)

    def test_an_existing_section_is_replaced_in_place(self):
        results = fixture()
        results["sections"] = {"scale": copy.deepcopy(results["sections"]["scale"])}
        results["sections"]["scale"]["rows"][0]["cpu_ms_per_frame"] = 99.5
        old = markdown().split("\n")
        new = render.update_markdown(markdown(), results, "now").split("\n")
        note = new.index("Section `scale` rerun alone on now (load average %s), spliced in by `harness.py run --only"
                         " scale --update`." % results["machine"]["load"])
        self.assertTrue(new[note - 1].startswith("Written by "))
        del new[note]
        changed = [(a, b) for a, b in zip(old, new) if a != b]
        self.assertEqual(len(new), len(old))
        self.assertEqual(len(changed), 1)
        self.assertIn("99.5", changed[0][1])

    def test_goal_and_lab_sections_need_a_full_run(self):
        for name in ("pipeline", "latency", "memory", "vivid_live", "webrtc", "link"):
            self.assertFalse(render.updatable(name), name)
            results = fixture()
            results["sections"] = {name: {}}
            with self.assertRaises(ValueError):
                render.update_markdown(markdown(), results, "now")
        self.assertTrue(render.updatable("simulcast"))


if __name__ == "__main__":
    unittest.main()
