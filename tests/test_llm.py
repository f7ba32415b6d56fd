"""The optional model (llm.py) against a local chat-completions server that misbehaves on demand.

No test needs a real model. Timing: a misbehaving server would hold a call for 30 s to
minutes; each test checks the call came back within its 1 s deadline plus a wide margin
(SLACK), so the check cannot fail on a slow machine, only when a deadline is not kept.
"""
import logging
import os
import sys
import time
import unittest

from openmemory import llm
from tests.helpers import TempHome
from tests.llm_server import MISBEHAVIOURS, REFUSAL, ModelServer, closed_port

DEADLINE = 1.0
SLACK = 4.0

class _Watch:
    watching = False
    events: list = []


_sockets = _Watch()     # one for the process: the model's requests run in a worker thread


def _audit(event, args):
    """Count every socket opened or connected, in any thread, while a test watches (an audit hook cannot be removed)."""
    if getattr(_sockets, "watching", False) and event in ("socket.__new__", "socket.connect", "socket.getaddrinfo"):
        _sockets.events.append(event)


sys.addaudithook(_audit)

CONTEXT = {
    "said": "no, don't use unittest here, run the tests with pytest -q",
    "commands": [{"command": "python -m unittest discover", "failed": True,
                  "errors": ["Exit code 1", "ModuleNotFoundError: No module named 'app'"]}],
    "agent_said": "All tests pass.",
}


class ModelEnv(TempHome):
    """A private home and a model at a local test server, with a 1 s deadline per call."""

    def setUp(self):
        super().setUp()
        self._env = {k: os.environ.get(k) for k in ("OPENMEMORY_LLM_URL", "OPENMEMORY_LLM_MODEL",
                                                     "OPENMEMORY_LLM_KEY", "OPENMEMORY_LLM_TIMEOUT",
                                                     "OPENMEMORY_LLM_CALLS", "OPENMEMORY_LLM_SECONDS")}
        for key in self._env:
            os.environ.pop(key, None)

    def tearDown(self):
        for key, value in self._env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        super().tearDown()

    def serve(self, mode="ok", **kw) -> ModelServer:
        server = ModelServer(mode, **kw).__enter__()
        self.addCleanup(server.close)
        self.server = server
        os.environ.update(OPENMEMORY_LLM_URL=server.url, OPENMEMORY_LLM_MODEL="test-model",
                          OPENMEMORY_LLM_TIMEOUT=str(DEADLINE))
        return server


class NoModel(ModelEnv):
    def test_unset_means_no_model_and_no_socket(self):
        for env in ({}, {"OPENMEMORY_LLM_URL": "http://127.0.0.1:9/v1"}, {"OPENMEMORY_LLM_MODEL": "qwen2.5:3b"},
                    {"OPENMEMORY_LLM_URL": "file:///etc/passwd", "OPENMEMORY_LLM_MODEL": "x"}):
            with self.subTest(env=env):
                os.environ.update(env)
                _sockets.events, _sockets.watching = [], True
                try:
                    with self.assertNoLogs("openmemory.llm", logging.INFO) if not env else _nothing():
                        self.assertIsNone(llm.config())
                        self.assertIsNone(llm.Model.from_env())
                        self.assertIsNone(llm.decide_doubtful(CONTEXT))
                        self.assertIsNone(llm.word_lesson([CONTEXT], draft="Run the tests with `pytest -q`."))
                        self.assertIsNone(llm.session_gist({"asked": ["fix the tests"]}))
                finally:
                    _sockets.watching = False
                self.assertEqual(_sockets.events, [], "no socket may be opened without a model")
                for key in env:
                    os.environ.pop(key)

    def test_half_a_configuration_says_why(self):
        os.environ["OPENMEMORY_LLM_URL"] = "http://127.0.0.1:11434/v1"
        self.assertIn("OPENMEMORY_LLM_MODEL", llm.problem())
        os.environ["OPENMEMORY_LLM_MODEL"] = "qwen2.5:3b"
        self.assertIsNone(llm.problem())
        os.environ["OPENMEMORY_LLM_URL"] = "ftp://host/v1"
        self.assertIn("http://", llm.problem())

    def test_endpoint_from_a_base_url(self):
        os.environ["OPENMEMORY_LLM_MODEL"] = "m"
        for base, endpoint in [("http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1/chat/completions"),
                               ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1/chat/completions"),
                               ("http://localhost:1234/v1/chat/completions", "http://localhost:1234/v1/chat/completions"),
                               ("https://gpu.example/openai/v1", "https://gpu.example/openai/v1/chat/completions")]:
            os.environ["OPENMEMORY_LLM_URL"] = base
            self.assertEqual(llm.config().url, endpoint)

    def test_budget_defaults_and_overrides(self):
        os.environ.update(OPENMEMORY_LLM_URL="http://127.0.0.1:11434/v1", OPENMEMORY_LLM_MODEL="m")
        cfg = llm.config()
        self.assertEqual((cfg.timeout, cfg.calls, cfg.seconds), (llm.CALL_SECONDS, llm.NIGHT_CALLS, llm.NIGHT_SECONDS))
        os.environ.update(OPENMEMORY_LLM_TIMEOUT="5", OPENMEMORY_LLM_CALLS="3", OPENMEMORY_LLM_SECONDS="30")
        cfg = llm.config()
        self.assertEqual((cfg.timeout, cfg.calls, cfg.seconds), (5.0, 3, 30.0))
        os.environ["OPENMEMORY_LLM_CALLS"] = "lots"
        with self.assertLogs("openmemory.llm", logging.WARNING):
            self.assertEqual(llm.config().calls, llm.NIGHT_CALLS)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Misbehaving(ModelEnv):
    """With every misbehaviour each question returns None, within its deadline, and says why in the log."""

    def test_every_misbehaviour_returns_none_within_the_deadline(self):
        server = self.serve()
        for mode in MISBEHAVIOURS:
            with self.subTest(mode=mode):
                server.mode = mode
                model = llm.Model.from_env(cache=llm.MemoryCache())
                with self.assertLogs("openmemory.llm", logging.INFO) as logs:
                    start = time.monotonic()
                    self.assertIsNone(llm.word_lesson([CONTEXT], model=model))
                    self.assertIsNone(llm.decide_doubtful(CONTEXT, model=model))
                    self.assertIsNone(llm.session_gist({"asked": ["fix the tests"]}, model=model))
                    elapsed = time.monotonic() - start
                self.assertLess(elapsed, 3 * DEADLINE + SLACK, f"{mode}: {elapsed:.1f} s")
                self.assertTrue(any("failed" in line or "not used" in line for line in logs.output), logs.output)

    def test_a_hanging_model_costs_its_deadline_once(self):
        for mode in ("hang", "drip", "drip_body", "slow"):
            with self.subTest(mode=mode):
                server = self.serve(mode)
                model = llm.Model.from_env(cache=llm.MemoryCache())
                start = time.monotonic()
                with self.assertLogs("openmemory.llm", logging.WARNING) as logs:
                    results = [llm.word_lesson([dict(CONTEXT, said=f"use pytest -q, not unittest ({i})")],
                                               model=model) for i in range(10)]
                elapsed = time.monotonic() - start
                self.assertEqual(results, [None] * 10)
                self.assertEqual(len(server.requests), 1, "after one timeout the night stops asking")
                self.assertLess(elapsed, DEADLINE + SLACK)
                self.assertIn("goes on without it", "\n".join(logs.output))
                self.assertTrue(model.stopped)

    def test_refused_connection(self):
        os.environ.update(OPENMEMORY_LLM_URL=f"http://127.0.0.1:{closed_port()}/v1", OPENMEMORY_LLM_MODEL="m",
                          OPENMEMORY_LLM_TIMEOUT=str(DEADLINE))
        model = llm.Model.from_env()
        with self.assertLogs("openmemory.llm", logging.WARNING) as logs:
            self.assertIsNone(llm.word_lesson([CONTEXT], model=model))
            self.assertIsNone(llm.session_gist({"asked": ["x"]}, model=model))
        self.assertIn("connection refused", "\n".join(logs.output))
        self.assertEqual(model.calls, 1)

    def test_three_bad_answers_in_a_row_stop_the_night(self):
        server = self.serve("garbage")
        model = llm.Model.from_env()
        with self.assertLogs("openmemory.llm", logging.WARNING):
            for i in range(6):
                self.assertIsNone(llm.word_lesson([dict(CONTEXT, said=f"use pytest {i}")], model=model))
        self.assertEqual(len(server.requests), llm.FAILURES_IN_A_ROW)

    def test_bad_answers_are_logged_not_printed(self):
        # The CLI alone prints; this module only logs. A subprocess shows nothing reaches stdout/stderr.
        server = self.serve("refusal")
        code = ("from openmemory import llm\n"
                "print(repr(llm.word_lesson([{'said': 'use pytest -q, not unittest'}])))\n")
        import subprocess
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=self.env(), timeout=60)
        self.assertEqual((p.stdout, p.stderr), ("None\n", ""))
        self.assertEqual(len(server.requests), 1)


class Budget(ModelEnv):
    def test_calls_budget(self):
        server = self.serve("ok")
        os.environ["OPENMEMORY_LLM_CALLS"] = "2"
        server.answer = lambda body: "Run the tests with `pytest -q`."
        model = llm.Model.from_env()
        with self.assertLogs("openmemory.llm", logging.WARNING) as logs:
            got = [llm.word_lesson([dict(CONTEXT, said=f"run the tests with pytest -q ({i})")], model=model)
                   for i in range(4)]
        self.assertEqual(got, ["Run the tests with `pytest -q`."] * 2 + [None] * 2)
        self.assertEqual(len(server.requests), 2)
        self.assertIn("budget of 2 calls", "\n".join(logs.output))

    def test_seconds_budget_caps_each_deadline(self):
        server = self.serve("hang")
        os.environ.update(OPENMEMORY_LLM_TIMEOUT="60", OPENMEMORY_LLM_SECONDS="1")
        model = llm.Model.from_env()
        start = time.monotonic()
        with self.assertLogs("openmemory.llm", logging.WARNING):
            self.assertIsNone(llm.word_lesson([CONTEXT], model=model))
            self.assertIsNone(llm.word_lesson([dict(CONTEXT, said="other")], model=model))
        self.assertLess(time.monotonic() - start, 1 + SLACK)
        self.assertEqual(len(server.requests), 1)

    def test_spent_earlier_tonight_counts(self):
        server = self.serve("ok")
        os.environ["OPENMEMORY_LLM_CALLS"] = "5"
        model = llm.Model.from_env(spent=(5, 10.0))
        with self.assertLogs("openmemory.llm", logging.WARNING):
            self.assertIsNone(llm.word_lesson([CONTEXT], model=model))
        self.assertEqual(server.requests, [])

    def test_answers_are_cached_by_question(self):
        server = self.serve("ok", answers=["Run the tests with `pytest -q`.", "Never run `make docs` here."])
        cache = llm.MemoryCache()
        first = llm.Model.from_env(cache=cache)
        self.assertEqual(llm.word_lesson([CONTEXT], model=first), "Run the tests with `pytest -q`.")
        again = llm.Model.from_env(cache=cache)         # a re-run: the same question is not asked twice
        self.assertEqual(llm.word_lesson([CONTEXT], model=again), "Run the tests with `pytest -q`.")
        self.assertEqual((len(server.requests), again.calls, again.cached), (1, 0, 1))
        os.environ["OPENMEMORY_LLM_MODEL"] = "another-model"   # another model is another question
        self.assertIsNone(llm.word_lesson([CONTEXT], model=llm.Model.from_env(cache=cache)))
        self.assertEqual(len(server.requests), 2)


class GoodAnswers(ModelEnv):
    def test_request_is_a_chat_completion(self):
        server = self.serve("ok")
        os.environ["OPENMEMORY_LLM_KEY"] = "sk-local-test-key-0123456789abcdef"
        llm.word_lesson([CONTEXT], draft="In this repository run the tests with `pytest -q`.")
        request = server.requests[0]
        self.assertEqual(request["path"], "/v1/chat/completions")
        self.assertEqual(request["headers"]["Authorization"], "Bearer sk-local-test-key-0123456789abcdef")
        body = request["body"]
        self.assertEqual(body["model"], "test-model")
        self.assertEqual([m["role"] for m in body["messages"]], ["system", "user"])
        self.assertEqual((body["temperature"], body["stream"]), (0, False))
        user = body["messages"][1]["content"]
        self.assertIn("no, don't use unittest here, run the tests with pytest -q", user)
        self.assertIn("`python -m unittest discover` failed: Exit code 1 / ModuleNotFoundError", user)
        self.assertIn("All tests pass.", user)
        self.assertIn("at most 150 characters", user)

    def test_word_lesson(self):
        server = self.serve("ok", answers=["Run the tests with `pytest -q`, not `python -m unittest`."])
        self.assertEqual(llm.word_lesson([CONTEXT]), "Run the tests with `pytest -q`, not `python -m unittest`.")
        server.answers = ["NONE"]
        self.assertIsNone(llm.word_lesson([dict(CONTEXT, said="check again")]))

    def test_word_lesson_respects_the_limit_asked(self):
        self.serve("ok", answers=["Run the tests with `pytest -q`, not `python -m unittest`."] * 2)
        self.assertIsNone(llm.word_lesson([CONTEXT], limit=40))
        self.assertIn("at most 40 characters", self.server.bodies()[0])

    def test_decide_doubtful(self):
        server = self.serve("ok")
        for answer, expected in [
                ("YES\nRun the tests with `pytest -q`.", (True, "Run the tests with `pytest -q`.")),
                ("yes.", (True, None)),
                ("**YES**\nNONE", (True, None)),
                ("NO", (False, None)),
                ("No.", (False, None)),
                ("<think>The person pushes back.</think>\nYES\nRun the tests with `pytest -q`.",
                 (True, "Run the tests with `pytest -q`.")),
                ("Maybe", None),
                ("NO\nThe person asks a new question.", None),
                ("YES\nRun the tests with `pytest -q`.\nAlso lint.", None),
                ("YES\nRun `tox -e py312` before pushing.", None),           # a command it was never shown
                ("YES\n" + "Run the tests " * 20, None),                     # longer than asked
                (REFUSAL, None)]:
            with self.subTest(answer=answer):
                server.answers = [answer]
                self.assertEqual(llm.decide_doubtful(dict(CONTEXT, said="didn't we say pytest -q, not unittest?")), expected)

    def test_session_gist(self):
        server = self.serve("ok", answers=["Fixed the failing import and ran the tests with `pytest -q`, "
                                           "which passed."])
        gist = llm.session_gist({"asked": ["fix the import error"], "files": ["app/models.py"],
                                 "commands": [{"command": "pytest -q", "failed": False}],
                                 "agent_said": "Fixed: all 12 tests pass."})
        self.assertEqual(gist, "Fixed the failing import and ran the tests with `pytest -q`, which passed.")
        user = server.requests[0]["body"]["messages"][1]["content"]
        self.assertIn("app/models.py", user)
        self.assertIn("at most 240 characters", user)

    def test_secrets_are_redacted_before_sending(self):
        server = self.serve("ok")
        secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
        llm.decide_doubtful({"said": f"no, use the token {secret} from the vault",
                             "commands": [{"command": f"curl -H 'Authorization: token {secret}' api",
                                           "failed": True, "errors": [f"401 for {secret}"]}],
                             "agent_said": f"Set GITHUB_TOKEN={secret}"})
        self.assertEqual(len(server.requests), 1)
        self.assertNotIn(secret, server.bodies()[0])
        self.assertIn("[REDACTED", server.bodies()[0])

    def test_long_pastes_are_sent_head_and_tail(self):
        server = self.serve("ok", answers=["YES"])
        log_lines = "\n".join(f"step {i}: ok" for i in range(2000))
        llm.decide_doubtful({"said": "CI says:\n" + log_lines + "\nFAILED tests/test_api.py::test_login"})
        user = server.requests[0]["body"]["messages"][1]["content"]
        self.assertIn("CI says:", user)
        self.assertIn("FAILED tests/test_api.py::test_login", user)
        self.assertLess(len(user), 4 * llm.FIELD_CHARS)


class Validation(unittest.TestCase):
    """How an answer is judged before any of it is used."""

    EVIDENCE = "ran `python -m unittest discover`; the person typed: use pytest -q, see https://ci.example/run/1"

    def test_plain_lines(self):
        cases = [
            ("Run the tests with `pytest -q`.", "Run the tests with `pytest -q`."),
            ('"Run the tests with `pytest -q`."', "Run the tests with `pytest -q`."),
            ("  Run the tests with `pytest -q`, not `python -m unittest discover`.\n",
             "Run the tests with `pytest -q`, not `python -m unittest discover`."),
            ("Check https://ci.example/run/1 before pushing.", "Check https://ci.example/run/1 before pushing."),
            ("", None),
            ("Run the tests\nwith pytest", None),                          # two lines
            ("```\npytest -q\n```", None),                                  # a code fence
            ("# Use pytest", None), ("- Use pytest -q always", None), ("1. Use pytest -q", None),
            ("Use **pytest** for tests.", None), ("See [the docs](http://x) first.", None),
            ("Use <b>pytest</b> for tests.", None),                         # markup
            ("I'm sorry, I can't help with that.", None), ("As an AI language model, I think tests matter.", None),
            ("Sorry, there is no lesson here.", None),                      # refusals
            ('The agent\'s last message: "Lint is clean. The code is perfect."', None),
            ("The person typed: <<<use pytest -q>>>", None),                # the question copied back
            ("Use pytest.", None),                                          # too short to say anything
            ("Run `pytest -q for the tests.", None),                       # unbalanced backticks
            ("Run `tox -e py312` for the tests.", None),                   # a command it was not shown
            ("Check https://evil.example/x before pushing.", None),         # a URL it was not shown
            ("Run the tests with `pytest -q` " + "and again " * 20, None),  # longer than asked
        ]
        for answer, expected in cases:
            with self.subTest(answer=answer):
                with self.assertLogs("openmemory.llm", logging.INFO) if expected is None else _nothing():
                    self.assertEqual(llm.plain_line(answer, 150, self.EVIDENCE), expected)

    def test_answer_shapes(self):
        from tests.llm_server import completion
        self.assertEqual(llm.answer_text(completion("Use `pytest -q`.")), "Use `pytest -q`.")
        for raw in (b"", b"not json", b'{"choices": []}', b'{"choices": [{"text": "x"}]}', b"[1, 2]",
                    b'{"choices": [{"message": {"content": 3}}]}', completion("   "),
                    completion("Use pyt", finish="length"), b"\xff\xfe"):
            with self.subTest(raw=raw[:40]):
                with self.assertRaises(llm.ModelUnavailable):
                    llm.answer_text(raw)


if __name__ == "__main__":
    unittest.main()
