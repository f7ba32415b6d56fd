"""SIGKILL at random points of ingest, sleep, render and forget; then check nothing is lost or half-written.

    python3 -m tests.kill              # a handful of kills (what the unit tests run)
    python3 -m tests.kill --full       # fifty kills per stage
    python3 -m tests.kill --full --seed 3

For each kill: the stage starts from the state the uninterrupted run started from, is
killed after a random delay within its uninterrupted duration, and then:
- the database passes `PRAGMA integrity_check`;
- every file openmemory writes is whole (JSON files parse, each lessons.jsonl line parses,
  MEMORY.md holds the person's own lines byte for byte and at most one intact section);
- the stage run again leaves no temporary file behind and reaches exactly the state of the
  uninterrupted run (database rows and written files, wall-clock columns aside).
"""
import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.fixtures import Transcript, project_folder  # noqa: E402

NIGHT = "2026-11-20T03:00:00Z"
USER_TOP = "# My notes\n\n- always answer in English\n"
USER_BOTTOM = "\n## Later notes\n\n- the staging host is staging.internal\n"
STAGES = {
    "ingest": ["ingest", "--quiet"],
    "sleep": ["sleep", "--now", NIGHT],
    "render": ["render", "--max-lines", "2"],
    # forget what project 3's linter taught (its lesson's file, MEMORY.md and lessons.jsonl
    # rewritten): by ids (a re-run must not fail on ids gone already), then by a query
    "forget": lambda world: ["forget", *episodes_holding(world, "lint3")],
    "forget-query": ["forget", "--query", "lint5", "--yes"],
}
# Columns that hold the wall-clock time of a run, which two runs never share.
WALL_CLOCK = {"created", "last_touched", "ingested"}
# ... and of a forget: when it wrote a lesson's new wording (its --now is sleep's alone)
STAGE_WALL_CLOCK = {"forget": {"updated"}, "forget-query": {"updated"}}


def workload(root: Path, projects: int = 14, sessions_per_project: int = 5, bulk: int = 30) -> dict:
    """A world to run in: three git projects with sessions that make lessons, and MEMORY.md of the person's own."""
    env = dict(os.environ, OPENMEMORY_HOME=str(root / "om"), CLAUDE_CONFIG_DIR=str(root / "claude"),
               HOME=str(root / "home"), PYTHONPATH=str(ROOT))
    env.pop("OPENMEMORY_DEBUG", None)
    for p in range(projects):
        cwd = root / f"project{p}"
        (cwd / ".git").mkdir(parents=True)
        for n in range(sessions_per_project):
            t = Transcript(cwd=str(cwd), start=datetime(2026, 11, 2 + n, 9, tzinfo=timezone.utc) + timedelta(minutes=p))
            t.user(f"work on feature {n} of project {p}")
            t.assistant("Running the tests.", tools=[
                ("Bash", {"command": "python -m unittest"}, "Exit code 1\nImportError: No module named app.tests", True),
                ("Bash", {"command": "make docs"}, "Exit code 2\nmake: *** No rule to make target 'docs'. Stop.", True)])
            t.user("No, don't use unittest here, run the tests with pytest -q")
            t.assistant(tools=[("Bash", {"command": f"npm run lint{p}"}, f"Exit code 1\nerror: rule {p} failed", True)])
            t.user(f"stop running npm run lint{p}, the linter of project {p} is ruff")
            t.assistant("Understood.", tools=[("Bash", {"command": "pytest -q"}, "12 passed", False)])
            for k in range(bulk):  # bulk, so a stage takes long enough to be killed in the middle
                t.user(f"also look at module {k} for feature {n}")
                t.assistant(f"Module {k} looks fine.", tools=[("Read", {"file_path": f"/src/m{k}.py"}, "x = 1\n" * 50, False)])
            t.write(project_folder(root / "claude", str(cwd)))
    from openmemory import paths
    saved = {k: os.environ.get(k) for k in ("OPENMEMORY_HOME", "CLAUDE_CONFIG_DIR")}
    os.environ.update(OPENMEMORY_HOME=env["OPENMEMORY_HOME"], CLAUDE_CONFIG_DIR=env["CLAUDE_CONFIG_DIR"])
    try:
        memory = paths.memory_dir_for(str(root / "project0"))
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "MEMORY.md").write_text(USER_TOP + USER_BOTTOM)
    return env


def episodes_holding(world: Path, word: str) -> list:
    """The ids of the episodes whose summary holds word, in the world's database."""
    con = sqlite3.connect(str(world / "om" / "memory.db"))
    try:
        return [str(r[0]) for r in con.execute("SELECT id FROM episodes WHERE instr(gist, ?) ORDER BY id", (word,))]
    finally:
        con.close()


def run(env, args, timeout=120):
    return subprocess.run([sys.executable, "-m", "openmemory", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def snapshot(root: Path, wall=frozenset()) -> dict:
    """The state to compare: database rows (wall-clock columns aside, and wall's) and every written file."""
    state = {}
    db = root / "om" / "memory.db"
    if db.exists():
        con = sqlite3.connect(str(db))
        con.row_factory = sqlite3.Row
        for table in ("episodes", "sessions", "lessons", "predictions", "state", "forgotten"):
            rows = []
            try:
                found = con.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
            except sqlite3.OperationalError:  # killed before the schema was made
                continue
            for row in found:
                row = {k: row[k] for k in row.keys() if k not in WALL_CLOCK and k not in wall and k != "embedding"
                       and not (table == "forgotten" and k == "at")}  # when it was forgotten
                if table == "state" and row["key"] == "last_ingest":
                    continue
                rows.append(json.dumps(row, sort_keys=True, default=str))
            state[table] = rows
        con.close()
    for base in (root / "om", root / "claude" / "projects"):
        for p in sorted(base.rglob("*")):
            if p.is_file() and not p.name.startswith("memory.db") and "logs" not in p.parts \
                    and not p.name.endswith((".lock", ".jsonl")) or p.name == "lessons.jsonl":
                data = p.read_bytes()
                if p.name == "written.json":  # when each file was written: the wall clock again
                    data = json.dumps(_without(json.loads(data), "written"), sort_keys=True).encode()
                elif p.name == "lessons.jsonl" and wall:
                    data = [json.dumps({k: v for k, v in json.loads(line).items() if k not in wall}, sort_keys=True)
                            for line in data.splitlines()]
                elif p.name == "vetoed.json":  # when a lesson was forgotten
                    data = json.dumps(_without(json.loads(data), "forgotten"), sort_keys=True).encode()
                elif p.name == "forgotten":  # the tombstones kept beside (when, and a killed run's repeats, aside)
                    data = sorted({line.split()[0] for line in data.decode().splitlines() if line.strip()})
                state[str(p.relative_to(root))] = data
    return state


def _without(value, key):
    if isinstance(value, dict):
        return {k: _without(v, key) for k, v in value.items() if k != key}
    if isinstance(value, list):
        return [_without(v, key) for v in value]
    return value


def leftovers(root: Path) -> list:
    """Temporary files a writer leaves only if it dies between writing and renaming."""
    return [str(p) for p in root.rglob("*") if p.is_file() and (p.name.endswith((".om-tmp", ".tmp")))]


def whole_files(root: Path) -> list:
    """What is wrong with the files openmemory writes, right after a kill (empty: all whole)."""
    problems = []
    for p in (root / "om").glob("*.json"):
        try:
            json.loads(p.read_bytes())
        except ValueError:
            problems.append(f"{p.name} is not whole JSON")
    lessons = root / "om" / "lessons.jsonl"
    if lessons.exists():
        for line in lessons.read_bytes().splitlines():
            try:
                json.loads(line)
            except ValueError:
                problems.append("lessons.jsonl has a half line")
    for md in (root / "claude" / "projects").rglob("MEMORY.md"):
        text = md.read_text()
        if "My notes" in text:
            if not text.startswith(USER_TOP) or USER_BOTTOM not in text:
                problems.append(f"{md}: the person's own lines changed")
        if text.count("<!-- openmemory:begin -->") != text.count("<!-- openmemory:end -->") or \
                text.count("<!-- openmemory:begin -->") > 1:
            problems.append(f"{md}: the openmemory section is broken")
    for om in (root / "claude" / "projects").rglob("om-*.md"):
        if not om.read_text().rstrip().endswith(")") and "**How to apply:**" not in om.read_text():
            problems.append(f"{om} is half written")
    return problems


def integrity(root: Path) -> str:
    con = sqlite3.connect(str(root / "om" / "memory.db"))
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


def restore(saved: Path, world: Path) -> None:
    """Put the world back exactly as saved, at the same path (paths and project slugs hold)."""
    shutil.rmtree(world, ignore_errors=True)
    shutil.copytree(saved, world, symlinks=True)


def campaign(kills_per_stage: int, seed: int = 1) -> dict:
    rng = random.Random(seed)
    failures, survived, tried = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="om-kill-") as tmp:
        tmp = Path(tmp)
        base = tmp / "base"
        env = workload(base)
        # The uninterrupted run, stage by stage, keeping the world before each stage.
        before, after, took = {}, {}, {}
        stages = {}
        for stage, args in STAGES.items():
            stages[stage] = args = args(base) if callable(args) else args
            before[stage] = tmp / f"before-{stage}"
            shutil.copytree(base, before[stage], symlinks=True)
            started = time.monotonic()
            p = run(env, args)
            took[stage] = time.monotonic() - started
            if p.returncode != 0:
                return {"failures": [f"uninterrupted {stage} failed: {p.stderr}"], "kills": 0, "survived": 0,
                        "midway": {}}
            after[stage] = snapshot(base, STAGE_WALL_CLOCK.get(stage, ()))
        started = time.monotonic()
        run(env, ["paths"])  # the interpreter's start: killing before it ends tests nothing
        startup = time.monotonic() - started
        midway = {stage: 0 for stage in STAGES}
        for stage, args in stages.items():
            restore(before[stage], base)
            untouched = snapshot(base, STAGE_WALL_CLOCK.get(stage, ()))
            for k in range(kills_per_stage):
                tried += 1
                restore(before[stage], base)
                delay = rng.uniform(min(startup, took[stage] * 0.8), took[stage])
                proc = subprocess.Popen([sys.executable, "-m", "openmemory", *args], env=env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(delay)
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                where = f"seed {seed} {stage} kill {k} at {delay:.3f}s of {took[stage]:.3f}s"
                problems = []
                if (base / "om" / "memory.db").exists() and integrity(base) != "ok":
                    problems.append(f"integrity_check: {integrity(base)}")
                problems += whole_files(base)
                killed = snapshot(base, STAGE_WALL_CLOCK.get(stage, ()))
                midway[stage] += killed != untouched and killed != after[stage]  # caught in the middle
                again = run(env, args)
                if again.returncode != 0:
                    problems.append(f"re-run failed: {again.stderr.strip()[-300:]}")
                left = leftovers(base)
                if left:
                    problems.append(f"left behind: {left}")
                got = snapshot(base, STAGE_WALL_CLOCK.get(stage, ()))
                if got != after[stage]:
                    diff = sorted(set(got) ^ set(after[stage])) or [
                        key for key in after[stage] if got.get(key) != after[stage][key]]
                    problems.append(f"state differs from the uninterrupted run in {diff[:5]}")
                if problems:
                    failures.append(f"{where}: " + "; ".join(problems))
                else:
                    survived += 1
    return {"kills": tried, "survived": survived, "failures": failures, "midway": midway,
            "stage_seconds": {s: round(t, 2) for s, t in took.items()}, "startup_seconds": round(startup, 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tests.kill", description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="fifty kills per stage (minutes)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    result = campaign(50 if args.full else 2, args.seed)
    print(json.dumps({k: v for k, v in result.items() if k != "failures"}))
    for failure in result["failures"]:
        print("FAIL", failure)
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
