"""A deterministic corpus of Claude Code transcripts at a heavy user's scale, for tests/bench.py.

Record shapes come from tests/fixtures.py (Claude Code 2.1.328 and 1.0.x) and the real files
of ../shared/corpus/claude-code (progress records, usage blocks, file-history snapshots,
summaries). Three kinds of transcript:

- `dense_session`: a small session (about 12 KB) with 3 or 4 episodes: the session, one or
  two failed commands, one correction (typed, or a refused tool call). Failures and
  corrections come from each project's own pool, so they repeat across sessions and a
  first `sleep` has lessons to learn.
- `large_session`: a long session shaped like the public corpus (big file reads, bash
  progress records, agent progress), a few episodes per megabyte.
- `huge_line_session`: good records around one line of about 50 MB (a failed command's
  enormous output).

Every generator returns the episodes openmemory should make of what it wrote, so a test
can check the corpus and the ingest against each other. Same seed, same bytes.
"""
import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tests.fixtures import Transcript, project_folder

YEAR_START = datetime(2025, 12, 1, 8, 0, tzinfo=timezone.utc)
DAYS = 365
NIGHT = "2026-12-01T03:00:00Z"  # the first night after the year of history: `sleep --now NIGHT`
MB = 1024 * 1024

# (project folder name, words its sessions talk about)
PROJECTS = [
    ("shop", "checkout cart payment invoice"), ("billing-api", "invoice ledger webhook refund"),
    ("infra", "terraform cluster ingress dns"), ("mobile-app", "screen navigation push login"),
    ("data-pipeline", "ingest parquet schedule backfill"), ("docs-site", "page sidebar search theme"),
    ("auth-service", "token session oauth password"), ("ml-models", "training dataset eval metrics"),
    ("cli-tool", "flags config output completion"), ("web-frontend", "component router form modal"),
    ("game-engine", "renderer physics shader input"), ("notebook", "plots cleaning regression notes"),
]

# Failed commands: (command, output). Shared ones fail the same way in many sessions of a
# project (what sleep learns from); "{n}" varies per session (a one-off).
FAILURES = [
    ("make docs", "Exit code 2\nmake: *** No rule to make target 'docs'.  Stop."),
    ("python -m unittest", "Exit code 1\nImportError: Failed to import test module: tests\n"
                           "ModuleNotFoundError: No module named '{project}.tests'"),
    ("npm run build", "Exit code 2\n> build\n> tsc -p .\nsrc/config.ts(3,21): error TS2307: Cannot find "
                      "module './settings' or its corresponding type declarations."),
    ("docker compose up -d db", "Exit code 1\nError response from daemon: driver failed programming external "
                                "connectivity: Bind for 0.0.0.0:5432 failed: port is already allocated"),
    ("psql -c 'select 1'", "Exit code 2\npsql: error: connection to server on socket "
                           "\"/var/run/postgresql/.s.PGSQL.5432\" failed: No such file or directory"),
    ("git push", "Exit code 1\nTo github.com:dev/{project}.git\n ! [rejected]        main -> main (fetch first)\n"
                 "error: failed to push some refs to 'github.com:dev/{project}.git'"),
    ("ruff check .", "Exit code 1\nsrc/{project}/app.py:{n}:8: F401 [*] `os` imported but unused\n"
                     "Found 1 error."),
    ("alembic upgrade head", "Exit code 1\nsqlalchemy.exc.OperationalError: (sqlite3.OperationalError) "
                             "duplicate column name: email"),
    ("go test ./...", "Exit code 1\n--- FAIL: TestParse (0.00s)\n    parse_test.go:{n}: got 3, want 4\nFAIL"),
    ("pytest -q tests/test_api.py", "Exit code 1\nFAILED tests/test_api.py::test_login_{n} - AssertionError: "
                                    "assert 401 == 200\n1 failed, 41 passed in 2.31s"),
    ("cargo build", "Exit code 101\nerror[E0425]: cannot find value `conf` in this scope\n  --> src/main.rs:{n}:5"),
    ("./scripts/deploy.sh staging", "Exit code 1\nError: AWS credentials not found; set AWS_PROFILE\n"
                                    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY{n}"),
]

# What people type when they correct the agent (each holds an instruction sleep can keep).
CORRECTIONS = [
    "No, don't use unittest here, run the tests with pytest -q",
    "don't run make docs, the docs are built in CI",
    "No, use pnpm instead of npm in this repository",
    "stop editing the old migrations, add a new migration instead",
    "you forgot to run the linter, always run ruff check before committing",
    "that's not the right file, the settings live in config/base.py",
    "No. Never push to main directly, open a pull request",
    "don't start the database with docker here, it runs as a system service on port 5433",
]
REFUSED = [("git push --force origin main", "never force push to main"),
           ("rm -rf node_modules dist", "don't delete node_modules, just rebuild"),
           ("npm install left-pad", "do not add dependencies without asking me first")]

TASKS = ["fix the failing {w} tests", "add a {w} endpoint with validation", "refactor the {w} module",
         "why does the {w} page load slowly?", "write docs for the {w} flow", "update the {w} handler to "
         "log errors", "add retries to the {w} client", "clean up the {w} code and add types"]
FOLLOW_UPS = ["thanks, now update the changelog", "add a test for that as well", "commit this with a short message",
              "run the whole test suite once more", "great, now tidy up the imports"]


def _text_bank(seed: int = 7, count: int = 48, size: int = 4096) -> list:
    """Plausible source code and log text, made once: generators slice it, never build it word by word."""
    rng = random.Random(seed)
    words = ("def return self value config request response error handler client server user token "
             "session cache index query result items count path file line name data time status retry "
             "timeout module import from class test assert none true false list dict update create").split()
    bank = []
    for i in range(count):
        lines, n = [], 0
        while n < size:
            indent = "    " * rng.randrange(3)
            line = indent + " ".join(rng.choice(words) for _ in range(rng.randrange(3, 12)))
            if rng.random() < 0.3:
                line += f"({rng.choice(words)}, {rng.randrange(1000)})"
            lines.append(line)
            n += len(line) + 1
        bank.append("\n".join(lines)[:size])
    return bank


BANK = _text_bank()


def _filler(rng: random.Random, size: int) -> str:
    """size characters of code-like text (cut from the bank at random places)."""
    parts, n = [], 0
    while n < size:
        chunk = BANK[rng.randrange(len(BANK))]
        part = chunk[rng.randrange(len(chunk) // 2):]
        parts.append(part)
        n += len(part) + 1
    return "\n".join(parts)[:size]


def _project(i: int):
    name, words = PROJECTS[i % len(PROJECTS)]
    return name, f"/home/dev/{name}", words.split()


def _start(rng: random.Random) -> datetime:
    return YEAR_START + timedelta(days=rng.randrange(DAYS), minutes=rng.randrange(600))


def _failure(project: str, index: int, n: int):
    cmd, out = FAILURES[index]
    return cmd, out.format(project=project.replace("-", "_"), n=n)


def dense_session(i: int) -> tuple:
    """(Transcript, {kind: episodes}) for the i-th small session: 3 or 4 episodes."""
    rng = random.Random(1000 + i)
    project, cwd, words = _project(i)
    style = "1.0" if i % 5 == 4 else "2.1.328"
    t = Transcript(style=style, cwd=cwd, start=_start(rng), branch=rng.choice(["main", "dev", f"feat-{i % 97}"]),
                   rng=rng)
    # Each project fails in its own few ways (repeats across sessions); one in three is a one-off.
    own = [(i % len(PROJECTS) + k * 5) % len(FAILURES) for k in range(3)]
    n_errors = 1 + (i % 2)
    picks = rng.sample(own, n_errors)
    one_off = rng.random() < 0.33
    if style != "1.0":
        t.noise()
    task = rng.choice(TASKS).format(w=rng.choice(words))
    t.user(task)
    f1 = f"{cwd}/src/{rng.choice(words)}.py"
    thinking = "Let me look at the code first." if rng.random() < 0.5 else None
    t.assistant(f"I'll start by reading {f1}.", thinking=thinking,
                tools=[("Read", {"file_path": f1}, _filler(rng, 1200), False),
                       ("Grep", {"pattern": rng.choice(words), "path": cwd}, "\n".join(
                           f"{cwd}/src/{w}.py:{rng.randrange(400)}: {w}" for w in words), False)])
    episodes = {"session": 1, "error": 0, "correction": 0}
    for k, index in enumerate(picks):
        cmd, out = _failure(project, index, i if (one_off and k == 0) else 0)
        t.assistant("Running the checks.", tools=[("Bash", {"command": cmd, "description": "Run checks"}, out, True)])
        episodes["error"] += 1
        if k == 0:
            t.assistant("That failed; let me look at the error.", tools=[
                ("Bash", {"command": "git status --short"}, " M src/app.py\n?? notes.txt", False)])
            if rng.random() < 0.25:
                cmd, say = REFUSED[i % len(REFUSED)]
                t.assistant("I'll try this.", tools=[("Bash", {"command": cmd}, "REJECT")])
                t.user(say)
            else:
                t.user(CORRECTIONS[(i + rng.randrange(2)) % len(CORRECTIONS)])
            episodes["correction"] += 1
            f2 = f"{cwd}/src/{rng.choice(words)}.py"
            t.assistant("Understood.", tools=[
                ("Edit", {"file_path": f2, "old_string": "a = 1", "new_string": "a = 2"},
                 "The file has been updated.", False),
                ("Bash", {"command": "pytest -q"}, _filler(rng, 400) + "\n42 passed in 3.10s", False)])
    t.assistant("All checks pass now.")
    t.user(rng.choice(FOLLOW_UPS))
    t.assistant("Done: " + _filler(rng, 300).replace("\n", " "))
    if style == "1.0":
        t.raw({"type": "summary", "summary": f"{task[:1].upper()}{task[1:]}", "leafUuid": t.parent})
    return t, episodes


def _progress(t: Transcript, rng: random.Random, tool_id: str, size: int) -> None:
    out = _filler(rng, size)
    t._envelope("progress", data={"type": "bash_progress", "output": out[-1500:], "fullOutput": out,
                                  "elapsedTimeSeconds": rng.randrange(60), "totalLines": out.count("\n")},
                toolUseID=f"bash-progress-{rng.randrange(10**9)}", parentToolUseID=tool_id)


def large_session(i: int, target_bytes: int) -> tuple:
    """(Transcript, {kind: episodes}) for a long real-shaped session of about target_bytes."""
    rng = random.Random(50_000 + i)
    project, cwd, words = _project(i)
    t = Transcript(style="2.1.328", cwd=cwd, start=_start(rng), branch=f"feature-{i}", rng=rng)
    t._envelope("progress", data={"type": "hook_progress", "hookEvent": "SessionStart",
                                  "hookName": "SessionStart:startup", "command": "~/.claude/hooks/start.sh"})
    t.user(rng.choice(TASKS).format(w=rng.choice(words)))
    episodes = {"session": 1, "error": 0, "correction": 0}
    size = counted = step = 0
    failed = set()
    while size < target_bytes:
        step += 1
        f = f"{cwd}/src/{rng.choice(words)}_{step % 40}.py"
        source = _filler(rng, rng.randrange(8000, 40000))
        t.assistant(f"Reading {f}.", tools=[("Read", {"file_path": f}, source, False)])
        t._envelope("file-history-snapshot", snapshot={"trackedFileBackups": {f: {"backupFileName": None,
                                                                              "version": step}}},
                    isSnapshotUpdate=True)
        tid = t.tool_id(t._tool + 1)  # the Bash call that follows
        _progress(t, rng, tid, rng.randrange(2000, 12000))
        if step % 6 == 0:  # a failure every ~400 KB: a few episodes per MB, as in the public corpus
            if step % 12 == 0:  # the project's usual failures (one episode per command and session)
                cmd, out = _failure(project, step // 12 % len(FAILURES), step)
            else:
                cmd = f"pytest -q tests/test_{step}.py"
                out = f"Exit code 1\nFAILED tests/test_{step}.py::test_case - AssertionError: assert {step} == 0"
            if cmd not in failed:  # openmemory counts the same command failing again in one episode
                failed.add(cmd)
                episodes["error"] += 1
            out += "\n" + _filler(rng, 3000)
            t.assistant("Running the checks.", tools=[("Bash", {"command": cmd}, out, True)])
        else:
            t.assistant("Running the tests.", tools=[
                ("Bash", {"command": f"pytest -q tests/test_{step % 40}.py"}, _filler(rng, 6000) + "\n12 passed",
                 False)])
        if step % 25 == 0:
            t.user(CORRECTIONS[step % len(CORRECTIONS)])
            episodes["correction"] += 1
        elif step % 9 == 0:
            t.user(f"ok, continue with step {step}")
        if step % 17 == 0:
            t._envelope("progress", data={"message": {"type": "user", "message": {"role": "user", "content": [
                {"type": "text", "text": _filler(rng, 3000)}]}}, "type": "agent_progress", "agentId": f"a{step}"},
                toolUseID=f"agent_msg_{step}", parentToolUseID=tid)
        size += sum(len(json.dumps(r, separators=(",", ":"))) + 1 for r in t.records[counted:])
        counted = len(t.records)
    t.assistant("Finished: " + _filler(rng, 300).replace("\n", " "))
    return t, episodes


def huge_line_session(line_bytes: int = 50 * MB) -> tuple:
    """(Transcript, {kind: episodes}): good records around one line of about line_bytes (a huge failed output)."""
    rng = random.Random(99)
    t = Transcript(style="2.1.328", cwd="/home/dev/shop", start=YEAR_START + timedelta(days=300), rng=rng)
    t.user("why does the nightly build fail?")
    t.assistant("Reading the build log.", tools=[("Read", {"file_path": "/home/dev/shop/README.md"},
                                                  _filler(rng, 3000), False)])
    # Claude Code writes a result twice (message content and toolUseResult): half the line each.
    log = _filler(rng, line_bytes // 2 - 2000) + "\nERROR: build failed: missing artifact shop-core"
    t.assistant("Printing the whole log.", tools=[("Bash", {"command": "cat build.log"}, log, True)])
    t.user("No, don't cat the whole log, use tail -n 100 build.log")
    t.assistant("Understood.", tools=[("Bash", {"command": "tail -n 100 build.log"}, log[-5000:], False)])
    t.assistant("The build fails because the shop-core artifact is missing.")
    return t, {"session": 1, "error": 1, "correction": 1}


# --------------------------------------------------------------------------------------
# Writing a corpus

def _add(total: dict, episodes: dict) -> None:
    for kind, n in episodes.items():
        total[kind] = total.get(kind, 0) + n


def write_dense(config_dir, count: int, start: int = 0) -> dict:
    """Write dense sessions start..start+count-1 under config_dir/projects; their expected episodes."""
    total = {}
    for i in range(start, start + count):
        t, episodes = dense_session(i)
        t.write(project_folder(config_dir, t.cwd))
        _add(total, episodes)
    return total


def write_large(config_dir, sizes_mb) -> tuple:
    """Write one large session per size (MB); (paths, expected episodes)."""
    total, paths = {}, []
    for i, mb in enumerate(sizes_mb):
        t, episodes = large_session(i, int(mb * MB))
        paths.append(t.write(project_folder(config_dir, t.cwd)))
        _add(total, episodes)
    return paths, total


def write_huge_line(config_dir, line_bytes: int = 50 * MB) -> tuple:
    """Write the session with one huge line; (path, expected episodes)."""
    t, episodes = huge_line_session(line_bytes)
    return t.write(project_folder(config_dir, t.cwd)), episodes


def corpus_bytes(config_dir) -> int:
    return sum(p.stat().st_size for p in Path(config_dir, "projects").glob("*/*.jsonl"))
