"""The shaped-link comparison (issue 20 sections 6/7): Scripts/lab/link-compare P1 runs Chromium's WHIP publisher and
ours (capturer-probe publish --congestion-control transport-wide) one after the other through the linkem.py delay line
(2 -> 0.5 -> 2 Mbit/s, RTT 50 ms, 300 ms queue) into Janus, and tabulates reaction, queueing, utilisation, recovery and
the viewer's freezes side by side. Its own lab (namespaces <prefix>-pub, -link, -sfu) comes up and down inside it.
Environment: LINK_PROFILES (default P1; e.g. "P1 P3 P6"), LINK_SCALE (multiplies the profiles' times).
"""

import json
import os
import subprocess


def run(bench, probe, env=os.environ):
    # Kept in the run directory (not the scratch one, deleted at the end): the bridge CSVs, the viewers' series.
    out = os.path.join(os.path.dirname(bench.rec.directory), "link")
    profiles = env.get("LINK_PROFILES", "P1").split()
    argv = ["Scripts/lab/link-compare", *profiles, "--probe", probe, "--out", out]
    if env.get("LINK_SCALE"):
        argv += ["--scale", env["LINK_SCALE"]]
    proc = subprocess.run(argv, capture_output=True, text=True)
    try:
        with open(os.path.join(out, "results.json")) as f:
            results = json.load(f)
    except (OSError, ValueError):
        return {"skipped_all": "link-compare produced no results (%d): %s"
                % (proc.returncode, proc.stderr.strip().splitlines()[-1:]), "failed": True}
    return {
        "profiles": profiles, "written": results.get("written"), "probe": results.get("probe"),
        "text": proc.stdout.splitlines(), "markdown": results.get("markdown", []),
        "runs": [{k: r.get(k) for k in ("publisher", "profile", "error", "bridge", "figures")} for r in results["runs"]],
        "failed": proc.returncode != 0,
    }
