#!/usr/bin/env python3
"""A WHIP endpoint for tests (Python 3 standard library only).

    whip-test-server.py --answer FILE [--port 0] [--slow SECONDS] [--tls CERT KEY]

Prints the bound port on the first line of stdout, then serves until killed. The behaviour is chosen by path:

  POST /whip/ok             201, body = the answer file, relative Location (/whip/resource/ok-<n>), ETag,
                            Accept-Patch, two Link headers (the second with two comma-separated ice-servers).
                            406 unless Content-Type is exactly application/sdp (like simple-whip-server).
  POST /whip/redirect       307 to /whip/ok (relative Location).
  POST /whip/redirect-loop  307 to itself.
  POST /whip/forbidden      403 with a two-line body.
  POST /whip/error          500 with a body.
  POST /whip/garbage        201 with a Location but a body that is not SDP.
  POST /whip/slow           sleeps --slow seconds (default 5) before answering.
  POST /whip/dribble        201 with its headers at once, then the answer a byte every 100 ms.
  POST /whip/huge           201 with a Location and a 2 MiB body.
  POST /whip/huge-error     500 whose 2 MiB body starts with one line of text.
  POST /whip/moved          302 to /whip/ok (which WHIP must not follow).
  POST /whip/chunked        201 like /whip/ok's, the answer in chunks (Transfer-Encoding: chunked).
  POST /whip/until-close    201 without Content-Length: the answer, then the connection closes (the body's end).
  POST /whip/not-http       bytes that are not HTTP, then the connection closes.
  POST /whip/huge-header    201 whose head has a 1 MiB header field.
  POST /whip/cut            201 with the answer's Content-Length, half the answer, then the connection closes.
  POST /whip/turn-link?port=P[&patch=405]
                            201 like /whip/ok, with one Link: <turn:127.0.0.1:P?transport=udp>; rel="ice-server";
                            username="u"; credential="p" (a local coturn's); with patch=405 the resource's PATCHes are
                            refused (405, Allow: DELETE), as by an endpoint without trickle.
  PATCH /whip/resource/*    204; 415 unless Content-Type is exactly application/trickle-ice-sdpfrag;
                            412 if If-Match is present and differs from the resource's ETag;
                            405 (Allow: DELETE) for a refuse-* resource.
  DELETE /whip/resource/*   200.
  GET /log                  the requests so far (method, path, headers, body) as JSON; not itself logged.

Every other request gets 404 (and is logged). With --tls, HTTPS only, with that certificate and key (PEM); with
--require-client-certificate as well, every handshake fails (no client certificate is trusted): the server sends an
alert.
"""

import argparse
import urllib.parse
import os
import ssl
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = []
LOG_LOCK = threading.Lock()
COUNTER = [0]


def make_handler(answer, slow):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):  # keep stderr quiet
            pass

        def record(self, body):
            with LOG_LOCK:
                LOG.append({
                    "method": self.command,
                    "path": self.path,
                    "headers": [[k, v] for k, v in self.headers.items()],
                    "body": body.decode("utf-8", "replace"),
                })

        def read_body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length > 0 else b""

        def reply(self, status, body=b"", headers=()):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            if status != 204:  # RFC 9110 §8.6: no Content-Length in a 204
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if body:
                self.wfile.write(body)

        def write_slowly(self, pieces, pause=0.0):
            """Writes `pieces`; a client that hangs up is the expected end, not an error."""
            try:
                for piece in pieces:
                    self.wfile.write(piece)
                    if pause:
                        time.sleep(pause)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def reply_huge(self, status, headers, first=b""):
            size = 2 * 1024 * 1024
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            body = first + b"x" * (size - len(first))
            self.write_slowly(body[i:i + 65536] for i in range(0, size, 65536))

        def do_GET(self):
            if self.path == "/log":
                with LOG_LOCK:
                    body = json.dumps(LOG).encode()
                self.reply(200, body, [("Content-Type", "application/json")])
                return
            self.record(b"")
            self.reply(404)

        def do_POST(self):
            body = self.read_body()
            self.record(body)
            path = self.path
            with LOG_LOCK:
                COUNTER[0] += 1
                n = COUNTER[0]
            if path == "/whip/ok":
                if self.headers.get("Content-Type") != "application/sdp":
                    self.reply(406, b"Unsupported content type\n")
                    return
                self.reply(201, answer, [
                    ("Content-Type", "application/sdp"),
                    ("Location", "/whip/resource/ok-%d" % n),
                    ("ETag", '"etag-%d"' % n),
                    ("Accept-Patch", "application/trickle-ice-sdpfrag"),
                    ("Link", '<stun:stun.example.net:3478>; rel="ice-server"'),
                    ("Link", '<turn:turn.example.net:3478?transport=udp>; rel="ice-server"; username="user";'
                             ' credential="pass, word"; credential-type="password", '
                             '<turns:turn.example.net:5349>; rel="ice-server"; username="u2"; credential="c2"'),
                ])
            elif path.startswith("/whip/turn-link?"):
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
                port = int(query.get("port", ["3478"])[0])
                kind = "refuse" if query.get("patch") == ["405"] else "turn"
                self.reply(201, answer, [
                    ("Content-Type", "application/sdp"),
                    ("Location", "/whip/resource/%s-%d" % (kind, n)),
                    ("ETag", '"etag-%d"' % n),
                    ("Link", '<turn:127.0.0.1:%d?transport=udp>; rel="ice-server"; username="u"; credential="p"'
                             % port),
                ])
            elif path == "/whip/redirect":
                self.reply(307, b"", [("Location", "ok")])
            elif path == "/whip/redirect-loop":
                self.reply(307, b"", [("Location", "/whip/redirect-loop")])
            elif path == "/whip/forbidden":
                self.reply(403, b"Unauthorized: bad token\nsecond line\n", [("Content-Type", "text/plain")])
            elif path == "/whip/error":
                self.reply(500, b"Internal error: Janus is down\n", [("Content-Type", "text/plain")])
            elif path == "/whip/garbage":
                self.reply(201, b"<html>this is not SDP</html>\n", [
                    ("Content-Type", "application/sdp"),
                    ("Location", "/whip/resource/garbage-%d" % n),
                ])
            elif path == "/whip/dribble":
                self.send_response(201)
                self.send_header("Location", "/whip/resource/dribble-%d" % n)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.write_slowly((answer[i:i + 1] for i in range(len(answer))), pause=0.1)
            elif path == "/whip/huge":
                self.reply_huge(201, [("Content-Type", "application/sdp"), ("Location", "/whip/resource/huge-%d" % n)])
            elif path == "/whip/huge-error":
                self.reply_huge(500, [("Content-Type", "text/plain")], first=b"Internal error: too much\n")
            elif path == "/whip/moved":
                self.reply(302, b"", [("Location", "/whip/ok")])
            elif path == "/whip/chunked":
                self.send_response(201)
                self.send_header("Content-Type", "application/sdp")
                self.send_header("Location", "/whip/resource/chunked-%d" % n)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                pieces = [answer[i:i + 100] for i in range(0, len(answer), 100)]
                self.write_slowly([b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces] + [b"0\r\n\r\n"])
            elif path == "/whip/until-close":
                self.send_response(201)
                self.send_header("Content-Type", "application/sdp")
                self.send_header("Location", "/whip/resource/until-close-%d" % n)
                self.send_header("Connection", "close")
                self.end_headers()
                self.write_slowly([answer])
                self.close_connection = True
            elif path == "/whip/not-http":
                self.write_slowly([b"\x00\x01\xffnot HTTP at all\r\n\r\n" * 8])
                self.close_connection = True
            elif path == "/whip/huge-header":
                head = b"HTTP/1.1 201 Created\r\nX-Padding: " + b"x" * (1 << 20) + b"\r\nContent-Length: 0\r\n\r\n"
                self.write_slowly(head[i:i + 65536] for i in range(0, len(head), 65536))
                self.close_connection = True
            elif path == "/whip/cut":
                self.send_response(201)
                self.send_header("Location", "/whip/resource/cut-%d" % n)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.write_slowly([answer[:len(answer) // 2]])
                self.close_connection = True
            elif path == "/whip/slow":
                time.sleep(slow)
                self.reply(201, answer, [("Location", "/whip/resource/slow-%d" % n)])
            else:
                self.reply(404)

        def do_PATCH(self):
            body = self.read_body()
            self.record(body)
            if not self.path.startswith("/whip/resource/"):
                self.reply(404)
            elif self.path.startswith("/whip/resource/refuse-"):
                self.reply(405, b"Trickle ICE is not supported\n", [("Allow", "DELETE")])
            elif self.headers.get("Content-Type") != "application/trickle-ice-sdpfrag":
                self.reply(415, b"Unsupported media type\n")
            else:
                expected = '"etag-%s"' % self.path.rsplit("-", 1)[-1]
                match = self.headers.get("If-Match")
                if match is not None and match != expected:
                    self.reply(412, b"Precondition failed\n")
                else:
                    self.reply(204)

        def do_DELETE(self):
            self.record(self.read_body())
            if self.path.startswith("/whip/resource/"):
                self.reply(200)
            else:
                self.reply(404)

    return Handler


def main():
    parser = argparse.ArgumentParser(description="A WHIP endpoint for tests.")
    parser.add_argument("--answer", required=True, help="the SDP answer file to serve")
    parser.add_argument("--port", type=int, default=0, help="the port (0: any free port)")
    parser.add_argument("--slow", type=float, default=5.0, help="seconds /whip/slow waits")
    parser.add_argument("--ready", help="write '<port> <pid>' to this file once listening")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), help="serve HTTPS with this certificate and key")
    parser.add_argument("--require-client-certificate", action="store_true",
                        help="with --tls: require a client certificate (none is trusted: every handshake fails)")
    arguments = parser.parse_args()
    with open(arguments.answer, "rb") as file:
        answer = file.read()
    server = ThreadingHTTPServer(("127.0.0.1", arguments.port), make_handler(answer, arguments.slow))
    server.daemon_threads = True
    if arguments.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(arguments.tls[0], arguments.tls[1])
        if arguments.require_client_certificate:
            context.verify_mode = ssl.CERT_REQUIRED
        # The handshake happens in the handler's thread (a failed one must not stop the accepting loop).
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    print(server.server_address[1], flush=True)
    # A test process that dies (killed by a time limit, or crashed) cannot stop its servers: each watches its parent
    # and exits when it is gone, so that no orphan keeps a port, a file or a descriptor of a later run.
    parent = os.getppid()

    def exit_with_parent():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=exit_with_parent, daemon=True).start()
    if arguments.ready:
        with open(arguments.ready + ".tmp", "w") as ready:
            ready.write(f"{server.server_address[1]} {os.getpid()}\n")
        os.rename(arguments.ready + ".tmp", arguments.ready)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
