"""A local HTTP server answering from a script, for the tests of retries and errors."""

from __future__ import annotations

import http.server
import threading
import unittest
from dataclasses import dataclass, field


@dataclass
class Answer:
    status: int
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    hang: bool = False  # wait until the server closes instead of answering
    drop: bool = False  # close the connection without answering


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    connection: int  # the client's port: one per connection


def problem(status: int, title: str, **extra: object) -> bytes:
    import json

    return json.dumps({"type": "about:blank", "title": title, "status": status, **extra}).encode()


class FakeServer:
    """Serves answers in order on a port the system chose; records each request.
    Stops (and releases hanging handlers) at the test's cleanup."""

    def __init__(self, test: unittest.TestCase, answers: list[Answer], keep_alive: bool = False) -> None:
        self.answers = list(answers)
        self.seen: list[Seen] = []
        self.closing = threading.Event()
        lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def log_message(self, *args: object) -> None:
                pass

            def handle_any(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                with lock:
                    outer.seen.append(Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body, self.client_address[1]))
                    answer = outer.answers.pop(0) if outer.answers else Answer(500, b"script exhausted")
                if answer.hang:
                    outer.closing.wait(60)
                    return
                if answer.drop:
                    self.close_connection = True
                    return
                self.send_response(answer.status)
                for k, v in answer.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()

        def stop() -> None:
            self.closing.set()
            self.httpd.shutdown()
            self.httpd.server_close()
            thread.join(10)

        test.addCleanup(stop)
