#!/usr/bin/env python3
"""Serves Fixtures/webrtc/viewer.html to headless Chromium and waits for the page's result.

The page POSTs progress lines to /log (copied to standard error) and its result JSON to /result. The result is printed
as one line on standard output (and written to --result FILE); then the server exits: 0 when the page reported
"ok": true, 1 otherwise. If no result arrives within --timeout seconds it prints {"ok": false, "error": "timeout ..."}
and exits 2. A "snapshot" field (a PNG data URL of the video, sent when the page was opened with shot=1) is removed
from the result and written to --screenshot FILE instead. With --stamp-script FILE, FILE is served as /stamp.js (the
frame-stamp reader the page loads; without it /stamp.js is 404 and the page reads no stamps).

Standard library only. Usage:
  viewer-server.py [--bind 127.0.0.1] [--port 8000] [--page viewer.html] [--timeout 60] [--result FILE]
                   [--ready FILE] [--screenshot FILE] [--stamp-script FILE]
"""

import argparse
import base64
import http.server
import json
import os
import sys
import threading
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_page = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "webrtc", "viewer.html")
    parser.add_argument("--bind", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--page", default=default_page)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--result", help="also write the result JSON here")
    parser.add_argument("--ready", help="create this file once the server listens")
    parser.add_argument("--screenshot", help="write the page's PNG snapshot here")
    parser.add_argument("--stamp-script", help="serve this file as /stamp.js")
    args = parser.parse_args()

    with open(args.page, "rb") as page_file:
        page = page_file.read()
    stamp_script = None
    if args.stamp_script:
        with open(args.stamp_script, "rb") as script_file:
            stamp_script = script_file.read()
    done = threading.Event()
    outcome: dict = {}
    started = time.monotonic()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format, *arguments):  # noqa: A002 (the base class's name)
            pass

        def reply(self, status: int, body: bytes = b"", content_type: str = "text/plain") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):  # noqa: N802 (the base class's name)
            if self.path.split("?")[0] in ("/", "/viewer.html"):
                self.reply(200, page, "text/html; charset=utf-8")
            elif self.path.split("?")[0] == "/stamp.js" and stamp_script is not None:
                self.reply(200, stamp_script, "text/javascript; charset=utf-8")
            else:
                self.reply(404)

        def do_POST(self):  # noqa: N802
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            path = self.path.split("?")[0]
            if path == "/log":
                elapsed = time.monotonic() - started
                text = body.decode("utf-8", "replace")
                print(f"[viewer {elapsed:6.2f}s] {text}", file=sys.stderr, flush=True)
                self.reply(204)
            elif path == "/result":
                try:
                    result = json.loads(body)
                except ValueError as error:
                    result = {"ok": False, "error": f"unparsable result: {error}"}
                self.reply(204)
                if not done.is_set():
                    outcome["result"] = result
                    done.set()
            else:
                self.reply(404)

    server = http.server.ThreadingHTTPServer((args.bind, args.port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"viewer-server: listening on http://{args.bind}:{server.server_address[1]}/", file=sys.stderr, flush=True)
    if args.ready:
        with open(args.ready, "w") as ready:
            ready.write(f"{server.server_address[1]}\n")

    status = 0
    if done.wait(args.timeout):
        result = outcome["result"]
        snapshot = result.pop("snapshot", None)
        if snapshot and args.screenshot:
            data = snapshot.split(",", 1)[-1]
            with open(args.screenshot, "wb") as image:
                image.write(base64.b64decode(data))
            result["screenshot"] = args.screenshot
        if not result.get("ok"):
            status = 1
    else:
        result = {"ok": False, "error": f"timeout: no result from the viewer within {args.timeout:g} s"}
        status = 2
    line = json.dumps(result, separators=(",", ":"))
    if args.result:
        with open(args.result, "w") as file:
            file.write(line + "\n")
    print(line, flush=True)
    server.shutdown()
    return status


if __name__ == "__main__":
    sys.exit(main())
