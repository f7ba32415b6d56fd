"""Measure the SessionEnd hook on a heavy transcript (not a unit test: prints figures).

    python3 -m tests.bench_hook [--mb 5] [--runs 5] [--sessions 2000] [--shape heavy|chatty]

Builds a transcript in the shape Claude Code 2.1.328 writes (a long session whose bytes are
mostly `api-request-shape`, `api-request-blob` and `attachment` prompt_snapshot records, as
the e2e harness's real transcripts are) and times, as subprocesses the way Claude Code runs
them: `openmemory hook` with inline ingest, `openmemory hook` when it detaches, and
`openmemory ingest --quiet` over many unchanged transcripts plus the changed one.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.fixtures import Transcript, project_folder  # noqa: E402


def _filler(n: int, seed: str) -> str:
    """n characters of plausible prose (varied by seed, so lines are not all identical)."""
    words = ("the tool returns a list of matching files sorted by modification time use it when "
             "you need to find files by name patterns").split()
    shift = len(seed) % len(words)
    sentence = " ".join(words[shift:] + words[:shift]) + f" ({seed}). "
    return (sentence * (n // len(sentence) + 1))[:n]


def heavy_transcript(config_dir, target_bytes: int, cwd: str = "/home/dev/shop", session_id=None) -> Path:
    """Write a 2.1.328-shaped transcript of about target_bytes where Claude Code (config_dir) would."""
    t = Transcript(style="2.1.328", cwd=cwd, session_id=session_id)
    sid = t.session_id
    tools = [{"name": f"Tool{i}", "description": _filler(1800, str(i)),
              "input_schema": {"type": "object", "properties": {"arg": {"type": "string"}}}}
             for i in range(18)]
    turn = size = counted = 0
    while size < target_bytes:
        turn += 1
        t.user(f"step {turn}: run the checks for module {turn % 17} and fix what fails")
        # What 2.1.328 writes around each request: the request's shape, its message blobs,
        # a prompt snapshot that grows with the conversation, and the request record.
        t.raw({"type": "api-request-shape", "sessionId": sid, "shapeHash": uuid.uuid4().hex,
               "timestamp": "2026-11-02T09:00:00.000Z", "version": "2.1.328",
               "shape": {"system": [_filler(6000, "sys")], "tools": tools}})
        t.raw({"type": "api-request-blob", "sessionId": sid, "hash": uuid.uuid4().hex,
               "message": {"role": "user", "content": [{"type": "text", "text": _filler(9000, str(turn))}]}})
        t._envelope("attachment", attachment={"type": "prompt_snapshot",
                                              "messages": [_filler(2000, str(j)) for j in range(min(turn, 30))]})
        t.raw({"type": "api-request", "sessionId": sid, "id": str(uuid.uuid4()),
               "timestamp": "2026-11-02T09:00:00.000Z", "version": "2.1.328", "querySource": "repl_main_thread",
               "params": {"model": "claude-opus-5-5", "max_tokens": 32000}})
        failing = turn % 5 == 0
        t.assistant(f"Running the checks for module {turn % 17}.", tools=[
            ("Bash", {"command": f"pytest -q tests/test_mod{turn % 17}.py"},
             (f"Exit code 1\nFAILED tests/test_mod{turn % 17}.py::test_case - AssertionError"
              if failing else "12 passed in 0.4s\n" + _filler(1500, "out")), failing),
            ("Read", {"file_path": f"{cwd}/src/mod{turn % 17}.py"}, _filler(3000, "src"), False)])
        t.assistant("Done with this step." if not failing else "One test fails; fixing it.")
        t.raw({"type": "cost-state", "sessionId": sid, "totalCostUSD": 0.01 * turn})
        size += sum(len(json.dumps(r, separators=(",", ":"))) + 1 for r in t.records[counted:])
        counted = len(t.records)
    return t.write(project_folder(Path(config_dir), cwd))


def chatty_transcript(config_dir, target_bytes: int, cwd: str = "/home/dev/shop") -> Path:
    """The worst case per byte: a transcript of small conversation records only (many tool calls)."""
    t = Transcript(style="2.1.328", cwd=cwd)
    turn = size = counted = 0
    while size < target_bytes:
        turn += 1
        failing = turn % 4 == 0
        t.user(f"step {turn}: fix the failing test in module {turn % 17}")
        t.assistant("Looking.", tools=[
            ("Bash", {"command": f"pytest -q tests/test_mod{turn}.py"},
             "Exit code 1\nE   assert 1 == 2" if failing else "ok " * 100, failing),
            ("Read", {"file_path": f"{cwd}/src/mod{turn}.py"}, "x = 1\n" * 100, False),
            ("Edit", {"file_path": f"{cwd}/src/mod{turn}.py", "old_string": "a", "new_string": "b"}, "ok", False)])
        t.assistant("Done.")
        t.noise()
        size += sum(len(json.dumps(r, separators=(",", ":"))) + 1 for r in t.records[counted:])
        counted = len(t.records)
    return t.write(project_folder(Path(config_dir), cwd))


def _time(argv, env, stdin=b"") -> float:
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sessions", type=int, default=2000, help="unchanged transcripts for ingest --quiet")
    ap.add_argument("--shape", choices=("heavy", "chatty"), default="heavy",
                    help="heavy: 2.1.328's large request/attachment records; chatty: small records only")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="om-bench-") as tmp:
        tmp = Path(tmp)
        claude = tmp / "claude"
        build = heavy_transcript if a.shape == "heavy" else chatty_transcript
        path = build(claude, int(a.mb * 1024 * 1024))
        env = dict(os.environ, OPENMEMORY_HOME=str(tmp / "om"), CLAUDE_CONFIG_DIR=str(claude),
                   PYTHONPATH=str(ROOT), HOME=str(tmp / "home"))
        print(f"transcript: {path.stat().st_size / 1e6:.2f} MB, {sum(1 for _ in open(path))} lines")
        payload = json.dumps({"session_id": "x", "transcript_path": str(path), "cwd": "/home/dev/shop",
                              "hook_event_name": "SessionEnd", "reason": "other"}).encode()
        py = [sys.executable, "-m", "openmemory"]
        base = statistics.median(_time([sys.executable, "-c", "pass"], env) for _ in range(a.runs))
        imp = statistics.median(_time(py + ["paths"], env) for _ in range(a.runs))
        print(f"python startup {base * 1000:.0f} ms; `openmemory paths` {imp * 1000:.0f} ms")
        inline = []
        for _ in range(a.runs):
            os.utime(path)  # changed: the hook reads it again
            inline.append(_time(py + ["hook", "--detach", "never"], env, payload))
        print(f"hook, inline ingest of the changed transcript: median {statistics.median(inline) * 1000:.0f} ms, "
              f"max {max(inline) * 1000:.0f} ms")
        detached = []
        for _ in range(a.runs):
            os.utime(path)
            detached.append(_time(py + ["hook", "--detach", "always"], env, payload))
            time.sleep(statistics.median(inline))  # let the detached ingest finish before the next run
        print(f"hook, detached: median {statistics.median(detached) * 1000:.0f} ms, max {max(detached) * 1000:.0f} ms")
        small = Transcript(style="2.1.328", cwd="/home/dev/other")
        small.user("hello")
        small.assistant("hi")
        for i in range(a.sessions):
            small.session_id = str(uuid.uuid4())
            small.write(project_folder(claude, f"/home/dev/p{i % 40}"))
        subprocess.run(py + ["ingest", "--quiet"], env=env, check=True)
        quiet = []
        for _ in range(a.runs):
            os.utime(path)
            quiet.append(_time(py + ["ingest", "--quiet"], env, payload))
        print(f"ingest --quiet over {a.sessions + 1} transcripts (1 changed): median "
              f"{statistics.median(quiet) * 1000:.0f} ms, max {max(quiet) * 1000:.0f} ms")
        unchanged = statistics.median(_time(py + ["ingest", "--quiet"], env, payload) for _ in range(a.runs))
        print(f"ingest --quiet, nothing changed: median {unchanged * 1000:.0f} ms")


if __name__ == "__main__":
    main()
