"""MCP calls through real pipes while a first sleep runs over a big store: how many calls,
how many failed, how many acknowledged notes are not in the database afterwards.

    python3 -m tests.locks            # what the unit test runs: 1,500 sessions, 4 servers,
                                      # the servers' busy timeout cut to 0.25 s (a scale model)
    python3 -m tests.locks --full     # 5,000 sessions, 8 servers, the default 5 s busy timeout
    python3 -m tests.locks --judge    # either, with the judge on: a local OpenAI-compatible endpoint
                                      # (tests/llm_server.py) that thinks JUDGE_DELAY_S a question
    python3 -m tests.locks --held     # no servers: how long each of a first night's write
                                      # transactions holds the lock (over --full's 5,000 sessions)

Each server calls `remember` (a unique note), `recall` and `show` (the first memory recall
returned, else the note just stored) in turn until the sleep ends (and at least 30 calls).
Figures: calls, calls while the sleep ran, failed (a JSON-RPC error or a tool result with
isError), notes acknowledged, notes lost (acknowledged, not stored); the store's passages
and, with the judge, the questions it was asked.
"""
import argparse
import json
import os
import re
import select
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests import synthetic  # noqa: E402

PROJECT = "/home/dev/shop"
SHORT = {"sessions": 1500, "servers": 4, "busy_ms": 250}
FULL = {"sessions": 5000, "servers": 8, "busy_ms": None}
JUDGE_DELAY_S = 0.2         # a local model's answer takes about this long (a small one on a GPU)
JUDGE_CALLS = 200           # the night's cap of calls, over the default 60: the judge busy most of the night
REF = re.compile(r"\[([epl]\d+)\]")   # the first id a reply names: recall's best hit, a note's


def environment(tmp: Path, **extra) -> dict:
    env = dict(os.environ, OPENMEMORY_HOME=str(tmp / "om-home"), CLAUDE_CONFIG_DIR=str(tmp / "claude"),
               HOME=str(tmp / "user-home"), PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("OPENMEMORY_DEBUG", None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def during_a_sleep(tmp: Path, sessions: int, servers: int, busy_ms: int | None, judge: bool = False) -> dict:
    """Ingest `sessions` dense sessions into a memory under tmp, then run a first sleep (with
    the judge through a local endpoint, if judge) while `servers` MCP servers are called; the
    figures, and the failed replies."""
    from tests.llm_server import ModelServer
    if not judge:
        return _during_a_sleep(tmp, sessions, servers, busy_ms, {})
    with ModelServer("ok") as model:
        model.answer = _judge_answer
        r = _during_a_sleep(tmp, sessions, servers, busy_ms, {
            "OPENMEMORY_LLM_URL": model.url, "OPENMEMORY_LLM_MODEL": "locks-judge",
            "OPENMEMORY_LLM_CALLS": JUDGE_CALLS})
        r["judge_asked"] = len(model.requests)
    return r


def _judge_answer(body: dict) -> str:
    """A judge that thinks a while and finds nothing lasting; a gist for a session."""
    time.sleep(JUDGE_DELAY_S)
    system = body["messages"][0]["content"]
    if "You judge" in system:
        return json.dumps({"correction": True, "lasting": False, "lesson": "", "scope": "project",
                           "why": "a one-off"})
    return "The session ran the tests and fixed the checkout."


def _during_a_sleep(tmp: Path, sessions: int, servers: int, busy_ms: int | None, model_env: dict) -> dict:
    from openmemory import store
    synthetic.write_dense(tmp / "claude", sessions)
    env = environment(tmp)
    subprocess.run([sys.executable, "-m", "openmemory", "ingest", "--quiet"], env=env, cwd=str(tmp), check=True,
                   timeout=1800)
    server_env = environment(tmp, CLAUDE_PROJECT_DIR=PROJECT,
                             **({"OPENMEMORY_BUSY_TIMEOUT_MS": busy_ms} if busy_ms is not None else {}))
    procs = [subprocess.Popen([sys.executable, "-m", "openmemory", "serve"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=str(tmp), env=server_env)
             for _ in range(servers)]
    night = subprocess.Popen([sys.executable, "-m", "openmemory", "sleep", "--now", synthetic.NIGHT],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment(tmp, **model_env),
                             cwd=str(tmp))
    tally = {"calls": 0, "during": 0, "failed": [], "acknowledged": [], "shown": 0}
    lock = threading.Lock()

    def client(n, proc):
        i, ref = 0, None
        while True:
            running = night.poll() is None
            if not running and i >= 30:
                return
            i += 1
            text = None
            if i % 3 == 1:
                text = f"client {n} note {i}: deploy with the blue pipeline zebra{n}x{i}"
                reply = _exchange(proc, _call("remember", {"text": text}, i))
            elif i % 3 == 2:
                reply = _exchange(proc, _call("recall", {"query": "checkout invoice webhook"}, i))
            else:
                reply = _exchange(proc, _call("show", {"id": ref}, i))
            result = reply.get("result") or {}
            said = "".join(c.get("text", "") for c in result.get("content") or [])
            found = REF.search(said) if i % 3 != 0 else None
            ref = found.group(1) if found else ref
            with lock:
                tally["calls"] += 1
                tally["during"] += running and night.poll() is None
                if "error" in reply or result.get("isError") is not False:
                    tally["failed"].append(reply)
                elif text is not None:
                    tally["acknowledged"].append(text)
                elif i % 3 == 0:
                    tally["shown"] += 1

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(n, p)) for n, p in enumerate(procs)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(1800)
        out, err = night.communicate(timeout=1800)
    finally:
        for proc in procs + [night]:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream:
                    stream.close()
    with store.connect(tmp / "om-home" / "memory.db") as db:
        stored = {n["gist"] for n in db.episodes(kind="note")}
        lessons = len(db.all_lessons())
        passages = db.counts()["passages"]["total"]
    return {"sessions": sessions, "servers": servers, "busy_ms": busy_ms, "sleep_rc": night.returncode,
            "passages": passages, "shown": tally["shown"],
            "sleep_stderr": err.decode(errors="replace")[-2000:], "lessons": lessons,
            "seconds": round(time.monotonic() - started, 1), "calls": tally["calls"], "during": tally["during"],
            "failed": tally["failed"], "acknowledged": len(tally["acknowledged"]),
            "lost": [t for t in tally["acknowledged"] if t not in stored]}


def held(tmp: Path, sessions: int) -> dict:
    """A first night over `sessions` dense sessions, in this process: its CPU and wall time, and
    per write transaction (store.Transaction, the outermost) how long it held the lock."""
    os.environ.update(OPENMEMORY_HOME=str(tmp / "om-home"), CLAUDE_CONFIG_DIR=str(tmp / "claude"),
                      HOME=str(tmp / "user-home"))
    from openmemory import sleep, store
    synthetic.write_dense(tmp / "claude", sessions)
    subprocess.run([sys.executable, "-m", "openmemory", "ingest", "--quiet"], env=environment(tmp), check=True,
                   timeout=1800)
    times, real_enter, real_exit = [], store.Transaction.__enter__, store.Transaction.__exit__

    def enter(self):
        real_enter(self)
        self.began = (time.perf_counter(), time.process_time()) if self._outer else None

    def leave(self, *exc):
        try:
            return real_exit(self, *exc)
        finally:
            if self.began:
                times.append((time.perf_counter() - self.began[0], time.process_time() - self.began[1]))
    store.Transaction.__enter__, store.Transaction.__exit__ = enter, leave
    try:
        with store.connect() as db:
            wall, cpu = time.perf_counter(), time.process_time()
            sleep.night(db, synthetic.NIGHT)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            counted = db.counts()
    finally:
        store.Transaction.__enter__, store.Transaction.__exit__ = real_enter, real_exit
    return {"sessions": sessions, "passages": counted["passages"]["total"], "lessons": counted["lessons"],
            "night_wall": wall, "night_cpu": cpu, "transactions": len(times),
            "max_wall": max(w for w, _ in times), "max_cpu": max(c for _, c in times)}


def line(r: dict) -> str:
    judge = f", the judge asked {r['judge_asked']} questions" if "judge_asked" in r else ""
    return (f"during a first sleep over {r['sessions']:,} sessions ({r['passages']:,} passages, {r['lessons']} "
            f"lessons{judge}, {r['seconds']} s): {r['calls']:,} MCP calls from {r['servers']} servers "
            f"({r['during']:,} while it ran, {r['shown']:,} shows; busy timeout "
            f"{'default' if r['busy_ms'] is None else str(r['busy_ms']) + ' ms'}), {len(r['failed'])} failed, "
            f"{len(r['lost'])} of {r['acknowledged']:,} notes lost")


def _call(name, arguments, rid):
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def _exchange(proc, message):
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], 120)
    if not ready:
        return {"error": "no reply within 120 s"}
    return json.loads(proc.stdout.readline())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tests.locks", description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="5,000 sessions, 8 servers, the default busy timeout")
    ap.add_argument("--judge", action="store_true", help="the judge on, through a local fake endpoint")
    ap.add_argument("--held", action="store_true", help="how long a first night's write transactions hold the lock")
    args = ap.parse_args(argv)
    if args.held:
        with tempfile.TemporaryDirectory(prefix="om-locks-") as tmp:
            h = held(Path(tmp), FULL["sessions"])
        print(f"a first night over {h['sessions']:,} sessions ({h['passages']:,} passages, {h['lessons']} lessons): "
              f"{h['night_cpu']:.2f} s of CPU, {h['night_wall']:.2f} s of wall clock; {h['transactions']} write "
              f"transactions, the longest {h['max_cpu']:.3f} s of CPU, {h['max_wall']:.3f} s of wall clock")
        return 0
    with tempfile.TemporaryDirectory(prefix="om-locks-") as tmp:
        r = during_a_sleep(Path(tmp), **(FULL if args.full else SHORT), judge=args.judge)
    print(line(r))
    for reply in r["failed"][:5]:
        print("FAILED", json.dumps(reply)[:300])
    if r["sleep_rc"] != 0:
        print(f"the sleep exited {r['sleep_rc']}:", r["sleep_stderr"])
    ok = not r["failed"] and not r["lost"] and r["sleep_rc"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
