"""A local chat-completions server for the tests: answers as scripted, or misbehaves on demand.

It speaks the OpenAI-compatible wire format that Ollama, llama.cpp's server, LM Studio and
vLLM speak (POST <base>/chat/completions, a JSON body with `model` and `messages`; a JSON
reply with choices[0].message.content), on 127.0.0.1 only, and records every request.

Modes (set `server.mode`):
  ok         answer with the next scripted answer (server.answers, or server.answer(body))
  slow       answer properly, but only after server.delay seconds
  hang       read the request and never answer
  drip       send a well-formed reply one byte a second, status line first
  drip_body  send the status line and headers at once, then the body one byte a second
  error500   HTTP 500 with an error object
  garbage    HTTP 200 with a body that is not JSON
  truncated  HTTP 200 with a chat completion cut in the middle
  shape      HTTP 200 with JSON that is not a chat completion
  big        HTTP 200 with a chat completion whose answer is 10 KB
  refusal    HTTP 200 with a well-formed refusal
  empty      HTTP 200 with an empty answer
  length     HTTP 200 with an answer cut at max_tokens (finish_reason "length")
  close      read the request and close the connection without a reply
"""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MISBEHAVIOURS = ("slow", "hang", "drip", "drip_body", "error500", "garbage", "truncated", "shape", "big",
                 "refusal", "empty", "length", "close")
REFUSAL = "I'm sorry, but I can't help with that request."


def completion(text: str, finish: str = "stop", model: str = "test-model") -> bytes:
    """A chat-completions reply as the servers send it."""
    return json.dumps({
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1764547200, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }).encode("utf-8")


class ModelServer:
    """`with ModelServer() as server:` serves on server.url (a base URL ending in /v1)."""

    def __init__(self, mode: str = "ok", answers=None, delay: float = 30.0):
        self.mode = mode
        self.answers = list(answers or [])
        self.answer = None              # or a callable(body: dict) -> str
        self.delay = delay
        self.requests = []              # {"path", "headers", "body"} of every request, in order
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.stop.set()                 # wakes every handler that sleeps, hangs or drips
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    def bodies(self) -> list:
        """Every request body as text, in order (what left the machine)."""
        with self._lock:
            return [r["raw"] for r in self.requests]

    def next_answer(self, body: dict) -> str:
        if self.answer is not None:
            return self.answer(body)
        with self._lock:
            return self.answers.pop(0) if self.answers else "Run the tests with `pytest -q`."


def _handler(server: ModelServer):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):   # quiet: tests print nothing
            pass

        def do_GET(self):
            self._send(404, b'{"error": "not found"}')

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace")
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            with server._lock:
                server.requests.append({"path": self.path, "headers": dict(self.headers), "raw": raw,
                                        "body": body})
            if not self.path.endswith("/chat/completions") or not isinstance(body, dict):
                return self._send(404, b'{"error": {"message": "not found"}}')
            try:
                self._behave(server.mode, body)
            except (BrokenPipeError, ConnectionResetError):
                pass                    # the client gave up, as it should

        def _behave(self, mode, body):
            if mode == "ok":
                return self._send(200, completion(server.next_answer(body)))
            if mode == "slow":
                if server.stop.wait(server.delay):
                    return
                return self._send(200, completion(server.next_answer(body)))
            if mode == "hang":
                server.stop.wait(600)
                return
            if mode in ("drip", "drip_body"):
                reply = completion(server.next_answer(body))
                head = (f"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(reply)}\r\n\r\n").encode()
                if mode == "drip_body":
                    self.wfile.write(head)
                    self.wfile.flush()
                    head = b""
                for i in range(len(head + reply)):
                    self.wfile.write((head + reply)[i:i + 1])
                    self.wfile.flush()
                    if server.stop.wait(1.0):
                        return
                return
            if mode == "error500":
                return self._send(500, b'{"error": {"message": "model failed to load", "type": "server_error"}}')
            if mode == "garbage":
                return self._send(200, b"<html><body>502 Bad Gateway</body></html>\x00\xff", "text/html")
            if mode == "truncated":
                whole = completion(server.next_answer(body))
                return self._send(200, whole[: len(whole) // 2])
            if mode == "shape":
                return self._send(200, json.dumps({"result": "Run the tests with `pytest -q`."}).encode())
            if mode == "big":
                return self._send(200, completion("Always " + "run the whole suite again " * 400))
            if mode == "refusal":
                return self._send(200, completion(REFUSAL))
            if mode == "empty":
                return self._send(200, completion(""))
            if mode == "length":
                return self._send(200, completion("Run the tests with `pytest", finish="length"))
            if mode == "close":
                self.close_connection = True
                self.connection.shutdown(2)
                return
            raise ValueError(f"unknown mode {mode!r}")

        def _send(self, status, data, kind="application/json"):
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (a connection there is refused)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
