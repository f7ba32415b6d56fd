"""Measure the SessionStart hook (not a unit test: prints figures).

    python3 -m tests.bench_session_start [--runs 30]

Times, as subprocesses the way Claude Code runs a hook (sh -c, the event on stdin), the
command `openmemory setup` installs (the interpreter by absolute path): a session start
that looked within the hour (the usual case), one that opens the database and finds the
last sleep recent, one that finds a night due but nothing new to learn from (it leaves no
stamp, so each start looks), and, for scale, the interpreter starting and doing nothing.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _time(command: str, env: dict, event: bytes, before=None) -> float:
    if before:
        before()
    start = time.perf_counter()
    subprocess.run(["/bin/sh", "-c", command], input=event, env=env, capture_output=True, check=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="om-bench-start-") as tmp:
        env = dict(os.environ, OPENMEMORY_HOME=f"{tmp}/home", CLAUDE_CONFIG_DIR=f"{tmp}/claude",
                   PYTHONPATH=str(ROOT), PATH="/usr/bin:/bin")
        subprocess.run([sys.executable, "-m", "openmemory", "sleep"], env=env, capture_output=True, check=True)
        due = dict(env, OPENMEMORY_HOME=f"{tmp}/due")  # slept long ago, nothing new since
        subprocess.run([sys.executable, "-m", "openmemory", "sleep", "--now", "2020-01-01T03:00:00Z"], env=due,
                       capture_output=True, check=True)
        event = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "session_id": "s",
                            "transcript_path": f"{tmp}/t.jsonl", "cwd": tmp}).encode()
        hook = f"{shlex.quote(sys.executable)} -m openmemory hook"
        stamp = Path(tmp) / "home" / "catch-up.stamp"
        cases = [("python, nothing else", f"{shlex.quote(sys.executable)} -c pass", None, env),
                 ("hook, looked within the hour", hook, None, env),
                 ("hook, opens the database, sleep recent", hook, lambda: stamp.unlink(missing_ok=True), env),
                 ("hook, night due, nothing new", hook, None, due)]
        for name, command, before, case_env in cases:
            times = sorted(_time(command, case_env, event, before) for _ in range(args.runs))
            print(f"{name:<40} min {times[0] * 1000:4.0f} ms   median {statistics.median(times) * 1000:4.0f} ms"
                  f"   max {times[-1] * 1000:4.0f} ms")


if __name__ == "__main__":
    main()
