"""Fixed-seed fuzzing of what reads untrusted bytes: the transcript parser (and ingest behind it)
and the MCP server over real pipes.

    python3 -m tests.fuzz            # the short campaign the unit tests run (a few seconds)
    python3 -m tests.fuzz --full     # the full campaign: more inputs, 50 MB lines, longer pipes
    python3 -m tests.fuzz --full --seed 7

Each campaign returns counts and a list of failures; a failure says the seed and the case,
so it can be replayed. What must hold:
- parser: no exception escapes; garbage lines around good records (truncated records,
  invalid UTF-8, non-object JSON, huge lines, JSON nested deeper than Python recurses) leave
  every good record's turns exactly as without them, each garbage line counted in `skipped`;
  a file cut at any byte keeps every complete record; a record with a wrong type in any one
  field loses nothing of the other records; a file with no known record has no turns;
- ingest: every fuzzed file goes through episodes_of and redaction without an exception;
- MCP server: random bytes, random lines, two huge lines and malformed JSON-RPC never kill it; after each,
  a valid request is answered; every line it writes is one JSON object.
"""
import argparse
import json
import os
import random
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from openmemory import episodes, ingest, passages, store, transcripts  # noqa: E402
from openmemory.redact import redact  # noqa: E402
from tests.fixtures import Transcript, test_session  # noqa: E402

SHORT = {"parser": 250, "pipes": 150, "agents": 300, "huge_line_mb": 4, "depth": 200_000}
FULL = {"parser": 20_000, "pipes": 3_000, "agents": 20_000, "huge_line_mb": 50, "depth": 2_000_000}
WRONG = [None, 0, 1, -1, 2.5, True, False, "", "x", [], [1, "a"], {}, {"type": "text"}, "\udcff"[:0] + "é",
         "caf\ud83d"]    # half a surrogate pair: valid JSON (JavaScript writes it), no UTF-8 text


# -- inputs -------------------------------------------------------------------------------

def base_transcripts() -> list:
    """Good transcripts of both eras: corrections, errors, rejections, queued text, interrupts."""
    out = [test_session(), test_session(style="1.0")]
    t = Transcript()
    t.user("add a login page")
    t.assistant("Looking.", tools=[("Read", {"file_path": "/app/login.py"}, "def login(): ...", False),
                                  ("Bash", {"command": "npm run build"}, "Exit code 2\nError: Cannot find module 'x'", True)])
    t.queued("also keep the old route")
    t.user("No, use the existing auth module instead")
    t.assistant(tools=[("Edit", {"file_path": "/app/auth.py"}, "REJECT")])
    t.interrupt()
    t.user("stop editing auth.py")
    t.noise()
    t.assistant("Done.")
    out.append(t)
    return [t.lines() for t in out]


def garbage_line(rng: random.Random, good: list, cfg: dict, big: bool) -> bytes:
    """One line that is not a good record and must be counted as skipped."""
    kind = "huge" if big else rng.choice(["truncated", "utf8", "non_object", "nested", "not_json", "binary"])
    if kind == "truncated":
        line = rng.choice(good).encode()
        return line[: rng.randrange(1, len(line) - 1)]
    if kind == "utf8":
        line = bytearray(rng.choice(good).encode())
        for _ in range(rng.randint(1, 4)):
            line.insert(rng.randrange(len(line)), rng.choice([0xff, 0xfe, 0xc3, 0x80, 0xed]))
        line[0:1] = b"\xff"  # never still valid JSON
        return bytes(line)
    if kind == "non_object":
        return json.dumps(rng.choice([[1, 2], "text", 42, None, True, [{"type": "user"}], 3.5])).encode()
    if kind == "nested":
        depth = rng.choice([1000, 5000, cfg["depth"]])
        # in a list, so that it is no record on any Python: 3.11 stops at a depth of about 1,000
        # (RecursionError), 3.13 reads 5,000 deep, and an object it reads is a record of no known type
        return (b"[" * depth + b"]" * depth) if rng.random() < 0.5 else (b'[{"a":' * depth + b"1" + b"}" * depth + b"]")
    if kind == "not_json":
        return bytes(rng.choice(b"abc{}[]:,\" \t\\0123456789") for _ in range(rng.randint(1, 300))).replace(
            b"\n", b" ").replace(b"\r", b" ") + b"{"
    if kind == "binary":
        data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 500)))
        return b"\x00" + data.replace(b"\n", b"\x01").replace(b"\r", b"\x01")
    size = cfg["huge_line_mb"] * 1024 * 1024  # a huge line that is not JSON
    return b'{"type": "user", "message": {"content": "' + b"A" * size  # never closed


def mutate_types(rng: random.Random, record: dict) -> dict:
    """The record with one field, at any depth, replaced by a value of another type."""
    record = json.loads(json.dumps(record))
    paths = []

    def walk(value, path):
        if isinstance(value, dict):
            for k, v in value.items():
                paths.append(path + [k])
                walk(v, path + [k])
        elif isinstance(value, list):
            for i, v in enumerate(value):
                paths.append(path + [i])
                walk(v, path + [i])
    walk(record, [])
    if not paths:
        return record
    path = rng.choice(paths)
    target = record
    for key in path[:-1]:
        target = target[key]
    old = target[path[-1]]
    choices = [w for w in WRONG if type(w) is not type(old)]
    target[path[-1]] = rng.choice(choices)
    return record


def shape(session) -> list:
    """What a session says, record by record: turns with their tool calls and results."""
    return [(t.role, t.text, t.uuid, t.source,
             [(c.id, c.name, c.result, c.is_error, c.rejected, c.interrupted) for c in t.tools])
            for t in session.turns]


def parse(lines) -> transcripts.Session:
    return transcripts.parse_lines([line if isinstance(line, bytes) else line.encode() for line in lines], "f.jsonl")


def downstream(session) -> None:
    """What ingest does with a parsed session, without a database: episodes, then redaction."""
    for ep in episodes.episodes_of(session, "s"):
        for key in ("title", "gist", "detail"):
            redact(ep.get(key) or "")
        json.dumps(ep.get("facts") or {}, ensure_ascii=False)


# -- the parser campaign ------------------------------------------------------------------

def fuzz_parser(n: int, seed: int, cfg: dict, tmp: Path) -> dict:
    rng = random.Random(seed)
    db = store.connect(tmp / "fuzz.db")  # every fifth input also goes through a real ingest
    bases = base_transcripts()
    counts = {"inputs": 0, "garbage_lines": 0, "cuts": 0, "type_mutations": 0, "junk_files": 0,
              "huge_lines": 0, "deep_lines": 0, "ingested": 0}
    failures = []
    big_left = 2  # huge lines cost time: two per campaign

    def check(case, fn, lines=None):
        try:
            fn()
            if lines is not None and counts["inputs"] % 5 == 0:
                path = tmp / f"case-{counts['inputs']}.jsonl"
                path.write_bytes(b"".join((x if isinstance(x, bytes) else x.encode()) + b"\n" for x in lines))
                report = ingest.ingest_file(db, path)
                assert not report.failed, f"ingest failed: {report.failed}"
                path.unlink()
                counts["ingested"] += 1
        except AssertionError as e:
            failures.append(f"seed {seed} case {counts['inputs']} {case}: {e}")
        except BaseException as e:  # an exception escaped the parser or ingest
            failures.append(f"seed {seed} case {counts['inputs']} {case}: {type(e).__name__}: {str(e)[:200]}")

    for i in range(n):
        good = bases[i % len(bases)]
        counts["inputs"] += 1
        mode = i % 4
        if mode == 0:  # garbage lines between good records
            big = i == 0 or (big_left > 0 and rng.random() < 0.02)  # the first always has one
            lines = list(good)
            added = 0
            for _ in range(rng.randint(1, 6)):
                g = garbage_line(rng, good, cfg, big and added == 0)
                counts["huge_lines"] += len(g) >= cfg["huge_line_mb"] * 1024 * 1024
                counts["deep_lines"] += g.startswith((b"[[[[", b'[{"a":{"a"')) and len(g) > 1000
                lines.insert(rng.randrange(len(lines) + 1), g)
                added += 1
            big_left -= big
            counts["garbage_lines"] += added

            def run(lines=lines, good=good, added=added):
                clean, dirty = parse(good), parse(lines)
                assert shape(dirty) == shape(clean), "a garbage line changed what good records say"
                assert dirty.skipped == clean.skipped + added, f"skipped {dirty.skipped}, expected {clean.skipped + added}"
                assert (dirty.id, dirty.cwd, dirty.started) == (clean.id, clean.cwd, clean.started)
                downstream(dirty)
            check("garbage", run, lines)
        elif mode == 1:  # the file cut at a random byte (a half-written last line)
            data = b"".join(line.encode() + b"\n" for line in good)
            cut = rng.randrange(len(data))
            counts["cuts"] += 1

            def run(data=data, cut=cut):
                head = data[:cut]
                complete, _, partial = head.rpartition(b"\n")
                whole = [line for line in complete.split(b"\n") if line.strip()] if complete else []
                dirty = transcripts.parse_lines(head.splitlines(keepends=True), "f.jsonl")
                try:
                    json.loads(partial)
                    partial_ok = True
                except ValueError:
                    partial_ok = False
                expect = parse(whole + ([partial] if partial_ok else []))
                assert shape(dirty) == shape(expect), "a cut lost a complete record"
                assert dirty.skipped == expect.skipped + (0 if partial_ok or not partial.strip() else 1)
                downstream(dirty)
            check("cut", run)
        elif mode == 2:  # a wrong type in one field of one record
            counts["type_mutations"] += 1
            k = rng.randrange(len(good))
            record = json.loads(good[k])
            mutated = mutate_types(rng, record)
            lines = list(good)
            lines[k] = json.dumps(mutated)

            def run(lines=lines, good=good, k=k):
                dirty = parse(lines)
                others = parse(good[:k] + good[k + 1:])
                said = {t.text for t in dirty.turns if t.role == "user"}
                for t in others.turns:  # what the person typed in every other record is still there
                    if t.role == "user" and t.text:
                        assert t.text in said, f"lost {t.text!r} after mutating record {k}"
                downstream(dirty)
            check("types", run, lines)
        else:  # a file of junk only, or with unknown record types only
            counts["junk_files"] += 1
            junk = [garbage_line(rng, good, cfg, False) for _ in range(rng.randint(1, 8))]
            junk += [json.dumps({"type": rng.choice(["x", "foo", "Assistant", ""]), "n": i}).encode()
                     for _ in range(rng.randint(0, 3))]
            rng.shuffle(junk)

            def run(junk=junk):
                s = parse(junk)
                assert s.turns == [] and s.not_transcript, "junk made turns, or was not skipped whole"
                assert episodes.episodes_of(s, "s") == [], "junk made episodes"
            check("junk", run, junk)
    db.close()
    return {"counts": counts, "failures": failures}


# -- the other agents' readers ------------------------------------------------------------

AGENT_LOGS = Path(__file__).parent / "data" / "agents"


def fuzz_agents(n: int, seed: int, cfg: dict) -> dict:
    """Codex's rollouts and Gemini's chats recorded from the real clients (tests/data/agents), each
    with a wrong type in one field of one record, a garbage line, or cut at a random byte: no
    exception escapes the reader, nor episodes and passages made of what it read, and every
    string they hold is text UTF-8 can carry."""
    from openmemory import codex, gemini
    rng = random.Random(seed)
    logs = [(codex, p) for p in sorted((AGENT_LOGS / "codex").glob("*.jsonl")) if p.name.count(".") == 1]
    logs += [(gemini, p) for p in sorted((AGENT_LOGS / "gemini").glob("*.json*")) if p.name.count(".") == 1]
    counts = {"inputs": 0, "logs": len(logs), "type_mutations": 0, "garbage_lines": 0, "cuts": 0}
    failures = []
    for i in range(n):
        reader, path = logs[i % len(logs)]
        lines = path.read_bytes().splitlines()
        counts["inputs"] += 1
        mode = i % 3
        if mode == 0 and lines:
            k = rng.randrange(len(lines))
            try:
                record = json.loads(lines[k])
            except ValueError:
                record = None
            if isinstance(record, dict):
                for _ in range(rng.randint(1, 3)):
                    record = mutate_types(rng, record)
                lines[k] = json.dumps(record).encode()
            counts["type_mutations"] += 1
        elif mode == 1:
            lines.insert(rng.randrange(len(lines) + 1), garbage_line(rng, [x.decode() for x in lines if len(x) > 2] or ['{"a": 1}'],
                                                                   cfg, False))
            counts["garbage_lines"] += 1
        else:
            data = b"\n".join(lines)
            lines = data[:rng.randrange(len(data) + 1)].splitlines()
            counts["cuts"] += 1
        try:
            session = reader.parse_lines(lines, str(path))
            made = episodes.episodes_of(session, "s", settled=True) + passages.passages_of(session)
            for item in made:
                for value in item.values():
                    if isinstance(value, str):
                        value.encode("utf-8")
        except BaseException as e:
            failures.append(f"seed {seed} agents case {i} {path.name}: {type(e).__name__}: {str(e)[:200]}")
    return {"counts": counts, "failures": failures}


# -- the MCP server over real pipes -------------------------------------------------------

def junk_message(rng: random.Random) -> bytes:
    kind = rng.randrange(7)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 400))).replace(b"\n", b" ")
    if kind == 1:
        return "".join(rng.choice("{}[]\":,abc 123\\u") for _ in range(rng.randint(1, 200))).encode()
    if kind == 2:  # JSON-RPC with wrong types everywhere
        msg = {"jsonrpc": rng.choice(["2.0", "1.0", 2, None]), "id": rng.choice(WRONG + [7, "s"]),
               "method": rng.choice(WRONG + ["tools/call", "tools/list", "initialize", "ping", "resources/list",
                                             "notifications/cancelled", "server/discover"]),
               "params": rng.choice(WRONG + [{"name": rng.choice(WRONG + ["recall", "remember"]),
                                              "arguments": rng.choice(WRONG + [{"query": rng.choice(WRONG)},
                                                                               {"text": rng.choice(WRONG)}])}])}
        for key in list(msg):
            if rng.random() < 0.2:
                del msg[key]
        return json.dumps(msg).encode()
    if kind == 3:  # a batch of odd things
        return json.dumps([rng.choice(WRONG) for _ in range(rng.randint(0, 5))]).encode()
    if kind == 4:  # deep nesting
        d = rng.choice([100, 10_000, 200_000])
        return b"[" * d + b"]" * d
    if kind == 5:  # truncated valid request
        line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "recall", "arguments": {"query": "x"}}}).encode()
        return line[: rng.randrange(1, len(line))]
    return b"\xef\xbb\xbf" + json.dumps({"jsonrpc": "2.0", "id": "bom", "method": "ping"}).encode()


def fuzz_pipes(n: int, seed: int, home: Path, huge_mb: int = 4) -> dict:
    rng = random.Random(seed)
    env = dict(os.environ, OPENMEMORY_HOME=str(home / "om"), CLAUDE_CONFIG_DIR=str(home / "claude"),
               HOME=str(home), PYTHONPATH=str(ROOT))
    env.pop("OPENMEMORY_DEBUG", None)
    proc = subprocess.Popen([sys.executable, "-m", "openmemory", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=str(home))
    failures, replies, answered = [], 0, 0
    buffer = b""

    def read_until(rid, deadline):
        nonlocal buffer, replies
        while True:
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                replies += 1
                msg = json.loads(line)  # every line the server writes is one JSON value
                if not isinstance(msg, (dict, list)):
                    raise AssertionError(f"reply is not an object: {line[:80]!r}")
                if isinstance(msg, dict) and msg.get("id") == rid and "result" in msg:
                    return msg
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no reply to ping {rid}")
            ready, _, _ = select.select([proc.stdout], [], [], left)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    raise AssertionError("the server closed stdout (died)")
                buffer += chunk

    try:
        for i in range(n):
            junk = junk_message(rng) if i not in (0, n // 2) else b"{" + b"A" * (huge_mb * 1024 * 1024)
            rid = f"probe-{i}"
            try:
                proc.stdin.write(junk + b"\n" + json.dumps({"jsonrpc": "2.0", "id": rid, "method": "ping"}).encode()
                                 + b"\n")
                proc.stdin.flush()
                read_until(rid, time.monotonic() + 60)
                answered += 1
            except (AssertionError, ValueError, BrokenPipeError) as e:
                failures.append(f"seed {seed} line {i} {junk[:80]!r}: {type(e).__name__}: {e}")
                break
        if not failures:  # and a real tool call still works at the end
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": "last", "method": "tools/call", "params": {
                "name": "remember", "arguments": {"text": "after the fuzz"}}}).encode() + b"\n")
            proc.stdin.flush()
            last = read_until("last", time.monotonic() + 60)
            if last["result"].get("isError"):
                failures.append(f"seed {seed}: remember failed after the fuzz: {last}")
    finally:
        proc.stdin.close()
        code = proc.wait(60)
        err = proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
    if code != 0:
        failures.append(f"seed {seed}: the server exited {code}: {err[-300:]!r}")
    return {"counts": {"lines": n, "answered_after": answered, "replies": replies, "huge_lines": 2},
            "failures": failures}


def campaign(full: bool = False, seed: int = 1) -> dict:
    cfg = FULL if full else SHORT
    with tempfile.TemporaryDirectory(prefix="om-fuzz-") as tmp:
        parser = fuzz_parser(cfg["parser"], seed, cfg, Path(tmp))
        pipes = fuzz_pipes(cfg["pipes"], seed, Path(tmp), cfg["huge_line_mb"])
    agents = fuzz_agents(cfg["agents"], seed, cfg)
    return {"parser": parser["counts"], "pipes": pipes["counts"], "agents": agents["counts"],
            "failures": parser["failures"] + pipes["failures"] + agents["failures"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tests.fuzz", description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the full campaign (minutes, 50 MB lines)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    started = time.monotonic()
    result = campaign(args.full, args.seed)
    print(json.dumps({k: v for k, v in result.items() if k != "failures"}, indent=2))
    for failure in result["failures"]:
        print("FAIL", failure)
    print(f"{len(result['failures'])} failures in {time.monotonic() - started:.0f} s")
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
