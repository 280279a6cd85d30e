"""Running the tools and keeping what each run said.

Every process the harness times is waited for with wait4(2), which gives its CPU time (user and system, its waited-for
children included) and peak RSS as /usr/bin/time reported them, to the microsecond. Every run is kept as one JSON
file in the run directory's runs/ (what ran, how long it took, what it printed), before anything is made of it.
"""

import json
import os
import subprocess
import tempfile
import time


class Run:
    """One finished process: its exit status, output and times."""

    def __init__(self, argv, status, stdout, stderr, wall_s, user_s, sys_s, max_rss_kb, env=None):
        self.argv, self.status, self.stdout, self.stderr, self.env = argv, status, stdout, stderr, env or {}
        self.time = {
            "wall_s": wall_s,
            "user_s": user_s,
            "sys_s": sys_s,
            "cpu_s": user_s + sys_s,
            "max_rss_kb": max_rss_kb,
        }


class ToolFailed(Exception):
    def __init__(self, run):
        tail = "\n".join((run.stdout + run.stderr).strip().splitlines()[-5:])
        super().__init__("%s exited with %s:\n%s" % (" ".join(run.argv[:3]), run.status, tail))
        self.run = run


def launch(argv, env=None, stdout_path=None):
    """Starts argv (stdout and stderr to files, so that no pipe fills); returns (process, stdout, stderr paths)."""
    out = stdout_path
    if out is None:
        fd, out = tempfile.mkstemp(prefix="bench-out-")
        os.close(fd)
    err = out + ".err"
    full_env = dict(os.environ, **(env or {}))
    with open(out, "wb") as o, open(err, "wb") as e:
        process = subprocess.Popen(argv, stdout=o, stderr=e, env=full_env)
    process.bench_env = env or {}
    return process, out, err


def finish(process, out, err, start, keep=False):
    """Waits for a launched process with wait4; returns its Run."""
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    with open(out, errors="replace") as o, open(err, errors="replace") as e:
        stdout, stderr = o.read(), e.read()
    if not keep:
        os.unlink(out)
    os.unlink(err)
    return Run(process.args, process.returncode, stdout, stderr, wall, usage.ru_utime, usage.ru_stime,
               usage.ru_maxrss, getattr(process, "bench_env", None))


def run(argv, env=None, check=True):
    """Runs argv to its end; returns its Run (raises ToolFailed on a non-zero exit when `check`)."""
    start = time.monotonic()
    process, out, err = launch(argv, env)
    result = finish(process, out, err, start)
    if check and result.status != 0:
        raise ToolFailed(result)
    return result


def quiet(argv, **kwargs):
    """Runs a preparation step (ffmpeg making a clip, a build): its output is shown only when it fails."""
    result = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s" % (" ".join(argv[:4]), result.returncode,
                                                          (result.stdout + result.stderr).strip()[-800:]))
    return result.stdout


class Recorder:
    """Writes each run as runs/NNNN-SECTION-TOOL.json under the run directory."""

    def __init__(self, directory):
        self.directory = os.path.join(directory, "runs")
        os.makedirs(self.directory, exist_ok=True)
        self.count = 0

    def record(self, section, tool, result, params=None, **figures):
        """Keeps `result` (a Run) with the parameters of the run and what was read from it; returns the record."""
        self.count += 1
        record = {
            "section": section,
            "tool": tool,
            "params": params or {},
            "argv": [str(a) for a in result.argv],
            "env": result.env,
            "status": result.status,
            "time": result.time,
            "stdout": result.stdout[-20000:],
            "stderr": result.stderr[-4000:],
        }
        record.update(figures)
        name = "%04d-%s-%s.json" % (self.count, section, tool)
        with open(os.path.join(self.directory, name), "w") as f:
            json.dump(record, f, indent=1)
        return record


def load_json_output(text):
    """The JSON object a tool printed (its first `{` to the end), or {} when there is none."""
    start = text.find("{")
    if start < 0:
        return {}
    try:
        return json.loads(text[start:])
    except ValueError:
        lines = [line for line in text.splitlines() if line.lstrip().startswith("{")]
        try:
            return json.loads(lines[-1]) if lines else {}
        except ValueError:
            return {}


def json_value(data, path):
    """data[key][key]… for a dotted path; a first key missing at the top level is looked for under "statistics"
    (capturer-probe nests its counters there); None when absent."""
    keys = path.split(".")
    if keys[0] not in data:
        data = data.get("statistics", {})
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data
