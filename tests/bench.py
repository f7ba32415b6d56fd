"""Measure openmemory at a heavy user's scale (not a unit test: prints a table).

    python3 -m tests.bench                    # dense 1,000 / 5,000 / 60,000 sessions, large sessions, 50 MB line
    python3 -m tests.bench --quick            # the smallest size only (under a minute)
    python3 -m tests.bench --sizes 2000,10000 --dir /tmp/om-corpus   # keep the corpus for the next run
    python3 -m tests.bench --profile          # where first ingest spends its time (cProfile, in-process)
    python3 -m tests.bench --quick --real ../shared/corpus/dev --real ../shared/corpus/claude-code
                                              # ... and a row for each folder of real transcripts

Generates a deterministic corpus in Claude Code's transcript format (tests/synthetic.py),
then for each corpus, with its own temporary OPENMEMORY_HOME and CLAUDE_CONFIG_DIR:
a baseline process that reads every file in binary and runs json.loads on every line,
right before and right after `openmemory ingest` on the same files (so both find them in the
page cache; the faster baseline counts);
the no-op re-ingest; database bytes per episode; the ingest process's peak RSS; recall
in-process and as a whole `openmemory recall`; the first `sleep` over the year. Then the
SessionEnd hook on the 5 MB session. Every process runs a copy of the package with its
bytecode compiled beforehand, as `pip install .` leaves it. Figures on a shared machine are
noisy: the ratios to the baseline carry across machines better than seconds do.
"""
import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests import synthetic  # noqa: E402

# The targets of issue 12, beside each figure.
TARGETS = {
    "ratio_dense": 0.3,         # first ingest at >= 0.3 of json.loads's speed, dense sessions
    "ratio_large": 0.6,         # ... and >= 0.6 on large real-shaped sessions
    "noop_per_10k_s": 0.5,      # no-op re-ingest of 10,000 unchanged transcripts
    "hook_s": 0.5,              # the SessionEnd hook for a 5 MB transcript, whole process
    "recall_p50_ms": 25,        # in-process (the MCP server)
    "recall_p95_ms": 60,        # ... and its slowest queries (issue 25)
    "recall_cli_ms": 150,       # whole process
    "sleep_s": 30,              # the first sleep over a heavy user's year
    "db_share": 0.5,            # the database (with passages) under half the transcripts' bytes (issue 25)
    "peak_mb": 150,             # ingesting 1 GB of ordinary transcripts
}
DEFAULT_SIZES = (1000, 5000, 60000)    # 60,000 dense sessions make about 210,000 episodes (issue 25)
# Large sessions, MB each (the first is the hook's 5 MB session): enough bytes that start-up
# (about 0.1 s a process) weighs little on the ratio.
LARGE_MB = (5, 5, 4, 4) + (3,) * 4 + (2,) * 7 + (1,) * 12
QUICK_LARGE_MB = (5, 3, 2, 2, 1, 1)
SHORT_S = 5  # a first ingest shorter than this is measured three times (medians)
QUERIES = ["make docs no rule to make target", "tests fail ImportError unittest", "port already allocated",
           "connection to server on socket failed", "git push rejected", "ruff unused import",
           "duplicate column name migration", "pytest -q instead of unittest", "force push to main",
           "pnpm instead of npm", "checkout cart payment", "terraform cluster ingress", "TS2307 cannot find module",
           "AWS credentials deploy staging", "how do I run the tests", "kubernetes helm chart",
           # a quoted phrase and an identifier of common words: an FTS5 phrase query each (recall.named_nowhere)
           "`error: failed to push some refs to origin` after a rebase", "where is DATABASE_URL set for the tests"]
GENERATOR = 3  # bump when tests/synthetic.py changes what it writes: a kept --dir is rebuilt

# The baseline: read every transcript in binary and json.loads every line, nothing else.
BASELINE = """
import json, sys
from pathlib import Path
for p in sorted(Path(sys.argv[1]).glob('*/*.jsonl')):
    with open(p, 'rb') as f:
        for line in f:
            if line.strip():
                try:
                    json.loads(line)
                except ValueError:
                    pass
"""


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------
# Running a process and reading its peak memory

class Ran:
    def __init__(self, seconds, peak_mb, stdout, code):
        self.seconds, self.peak_mb, self.stdout, self.code = seconds, peak_mb, stdout, code


# A process's peak RSS is read by a small parent of its own: Linux carries the forking
# process's high-water mark into the child's ru_maxrss across exec, so measured straight
# from this (big) process every child would seem at least as large as the benchmark.
MEASURE = """
import json, os, subprocess, sys, time
start = time.perf_counter()
p = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(p.pid, 0)
with open(sys.argv[1], "w") as f:
    json.dump([time.perf_counter() - start, usage.ru_maxrss], f)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run(argv, env, stdin: bytes = b"") -> Ran:
    """Run argv to completion: its wall seconds and RSS high-water mark (KB from wait4, on Linux)."""
    with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as result:
        inp.write(stdin)
        inp.seek(0)
        code = subprocess.run([sys.executable, "-c", MEASURE, result.name, *map(str, argv)],
                              stdin=inp, stdout=out, stderr=err, env=env,
                              cwd=str(PACKAGE["folder"])).returncode
        out.seek(0)
        err.seek(0)
        if code != 0:
            raise SystemExit(f"bench: {' '.join(map(str, argv[:4]))} failed ({code}):\n"
                             f"{err.read().decode('utf-8', 'replace')[-2000:]}")
        seconds, peak_kb = json.load(result)
        return Ran(seconds, peak_kb / 1024, out.read().decode("utf-8", "replace"), code)


def om(*args) -> list:
    return [sys.executable, "-m", "openmemory", *map(str, args)]


# Processes run a copy of the package with its bytecode compiled, as `pip install .` leaves
# it: from the checkout, every process would compile the package's source again (about 40 ms
# a command) wherever PYTHONDONTWRITEBYTECODE is set, as it is here.
PACKAGE = {"folder": ROOT}


def compiled_copy(folder: Path) -> None:
    shutil.copytree(ROOT / "openmemory", folder / "openmemory",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder / "openmemory")], check=True)
    PACKAGE["folder"] = folder


def environment(claude: Path, home: Path) -> dict:
    env = dict(os.environ, OPENMEMORY_HOME=str(home), CLAUDE_CONFIG_DIR=str(claude),
               HOME=str(home.parent / "user-home"), PYTHONPATH=str(PACKAGE["folder"]))
    env.pop("OPENMEMORY_DEBUG", None)
    return env


# --------------------------------------------------------------------------------------
# The corpus: generated once into a pool, each size a tree of hard links to its first N sessions

def dense_pool(folder: Path, count: int) -> list:
    """[(path, expected episodes)] of the first `count` dense sessions, generating what is missing."""
    manifest = folder / "manifest.json"
    known = json.loads(manifest.read_text()) if manifest.is_file() else {}
    if known.get("generator") != GENERATOR:
        shutil.rmtree(folder, ignore_errors=True)
        known = {"generator": GENERATOR, "sessions": []}
    sessions = known["sessions"]
    if len(sessions) < count:
        say(f"generating dense sessions {len(sessions):,}..{count:,}")
        claude = folder / "claude"
        for i in range(len(sessions), count):
            t, episodes = synthetic.dense_session(i)
            path = t.write(synthetic.project_folder(claude, t.cwd))
            sessions.append([str(path.relative_to(folder)), episodes])
        folder.mkdir(parents=True, exist_ok=True)
        manifest.write_text(json.dumps(known))
    return [(folder / rel, episodes) for rel, episodes in sessions[:count]]


def linked_tree(pool: list, claude: Path) -> dict:
    """A fresh CLAUDE_CONFIG_DIR holding hard links to the pool's files; the episodes they should make."""
    shutil.rmtree(claude, ignore_errors=True)
    total = {}
    for path, episodes in pool:
        target = claude / "projects" / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(path, target)
        synthetic._add(total, episodes)
    return total


def generated(folder: Path, key, build) -> dict:
    """Run build(claude) once per key into folder/claude; its expected episodes (kept with --dir)."""
    manifest = folder / "manifest.json"
    if manifest.is_file():
        known = json.loads(manifest.read_text())
        if known.get("key") == [GENERATOR, key]:
            return known["episodes"]
    shutil.rmtree(folder, ignore_errors=True)
    episodes = build(folder / "claude")
    manifest.write_text(json.dumps({"key": [GENERATOR, key], "episodes": episodes}))
    return episodes


def real_tree(folder: Path, claude: Path) -> None:
    """A fresh CLAUDE_CONFIG_DIR whose projects are links to folder's project folders (a corpus of
    real transcripts as ../shared/corpus/dev keeps them: one folder per project). Nothing is
    written into folder: sleep is not run on real corpora."""
    shutil.rmtree(claude, ignore_errors=True)
    (claude / "projects").mkdir(parents=True)
    for project in sorted(p for p in folder.iterdir() if p.is_dir()):
        (claude / "projects" / project.name).symlink_to(project.resolve(), target_is_directory=True)


def clean_memory_folders(claude: Path) -> None:
    """Remove what a previous run's sleep rendered into the corpus (a kept --dir)."""
    for memory in (claude / "projects").glob("*/memory"):
        shutil.rmtree(memory)


# --------------------------------------------------------------------------------------
# One row of the table

def measure(label: str, kind: str, claude: Path, home: Path, expected: dict, full: bool = True) -> dict:
    """Every figure of one corpus: baseline, first ingest, no-op, size, peak, recall, first sleep.

    The baseline runs right before and right after each first ingest, and the faster of the two
    counts: a slow moment of the shared machine during one baseline never flatters the ratio.
    A first ingest shorter than SHORT_S is run three times (a fresh memory each time) and the
    medians kept: a second's noise weighs on a short run.
    """
    projects = claude / "projects"
    files = list(projects.glob("*/*.jsonl"))
    mb = sum(p.stat().st_size for p in files) / 1e6
    say(f"{label}: {len(files):,} transcripts, {mb:,.1f} MB: baseline, then first ingest")
    bases, firsts = [], []
    while len(firsts) < (1 if firsts and firsts[0].seconds >= SHORT_S else 3):
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        (home.parent / "user-home").mkdir(exist_ok=True)
        env = environment(claude, home)
        before = run([sys.executable, "-c", BASELINE, str(projects)], env)
        firsts.append(run(om("ingest", "--json"), env))
        after = run([sys.executable, "-c", BASELINE, str(projects)], env)
        bases.append(min(before.seconds, after.seconds))
    base = statistics.median(bases)
    first = statistics.median(r.seconds for r in firsts)
    added = json.loads(firsts[-1].stdout)["added"]
    episodes = sum(added.values())
    made_expected = {k: added.get(k, 0) for k in expected} == expected
    if not made_expected:
        say(f"  warning: expected episodes {expected}, ingest made {added}")
    noop = statistics.median(run(om("ingest", "--quiet"), env).seconds for _ in range(3))
    status = json.loads(run(om("status", "--json"), env).stdout)
    row = {"label": label, "kind": kind, "mb": mb, "sessions": len(files), "episodes": episodes,
           "expected_episodes": sum(expected.values()) if not made_expected else None,
           "baseline_s": base, "ingest_s": first, "mb_s": mb / first, "ratio": base / first, "noop_s": noop, "noop_per_10k_s": noop * 10_000 / len(files),
           "db_share": status["db_bytes"] / max(1, sum(p.stat().st_size for p in files)),
           "passages": (status.get("passages") or {}).get("total", 0),
           "peak_mb": max(r.peak_mb for r in firsts)}
    if full:
        say(f"{label}: recall, then the first sleep")
        row.update(recall_in_process(env))
        row["recall_cli_ms"] = 1000 * statistics.median(run(om("recall", q), env).seconds for q in QUERIES[:9])
        night = run(om("sleep", "--now", synthetic.NIGHT, "--json"), env)
        row["sleep_s"] = night.seconds
        row["lessons"] = len(json.loads(night.stdout).get("lessons_new", []))
    return row


def recall_in_process(env: dict) -> dict:
    """Recall as the MCP server does it: one open store, a fixed set of queries, p50 and p95."""
    saved = {k: os.environ.get(k) for k in ("OPENMEMORY_HOME", "CLAUDE_CONFIG_DIR")}
    os.environ.update(OPENMEMORY_HOME=env["OPENMEMORY_HOME"], CLAUDE_CONFIG_DIR=env["CLAUDE_CONFIG_DIR"])
    try:
        from openmemory import recall, store
        times = []
        with store.connect() as db:
            recall.recall(db, QUERIES[0])  # the server has answered before: warm
            for round_ in range(3):
                for n, q in enumerate(QUERIES):
                    cwd = f"/home/dev/{synthetic.PROJECTS[n % len(synthetic.PROJECTS)][0]}" if n % 2 else None
                    start = time.perf_counter()
                    recall.recall(db, q, k=5, cwd=cwd)
                    times.append(time.perf_counter() - start)
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    cuts = statistics.quantiles(times, n=20)
    return {"recall_p50_ms": 1000 * statistics.median(times), "recall_p95_ms": 1000 * cuts[18]}


def hook_figures(claude: Path, path: Path, tmp: Path, runs: int) -> dict:
    """`openmemory hook` fed a SessionEnd event for path, whole process: as configured, and inline."""
    payload = json.dumps({"session_id": path.stem, "transcript_path": str(path), "cwd": "/home/dev",
                          "hook_event_name": "SessionEnd", "reason": "exit"}).encode()
    out = {"hook_mb": path.stat().st_size / 1e6}
    for mode in ("auto", "never"):
        times, peaks = [], []
        for n in range(runs):
            home = tmp / f"hook-{mode}-{n}"  # a fresh memory each time: the transcript is new to it
            home.mkdir(parents=True)
            env = environment(claude, home)
            ran = run(om("hook", "--detach", mode), env, payload)
            times.append(ran.seconds)
            peaks.append(ran.peak_mb)
            if mode == "auto":
                _wait_for_ingest(home)
        out[f"hook_{mode}_s"] = statistics.median(times)
        out[f"hook_{mode}_max_s"] = max(times)
        out[f"hook_{mode}_peak_mb"] = max(peaks)
    return out


def _wait_for_ingest(home: Path, limit: float = 120) -> None:
    """Wait until a detached ingest has logged that it finished (so runs do not overlap)."""
    log = home / "logs" / "openmemory.log"
    end = time.monotonic() + limit
    while time.monotonic() < end:
        text = log.read_text(errors="replace") if log.is_file() else ""
        if ": read " in text or "failed" in text:
            return
        time.sleep(0.05)
    say(f"  warning: no finished ingest logged in {log} after {limit:.0f} s")


# --------------------------------------------------------------------------------------
# Printing

def startup(env: dict) -> str:
    """Start-up, whole process: it weighs on every whole-process figure of a small corpus."""
    bare = statistics.median(run([sys.executable, "-c", "pass"], env).seconds for _ in range(5))
    verb = statistics.median(run(om("paths"), env).seconds for _ in range(5))
    return f"start-up: `python3 -c pass` {bare * 1000:.0f} ms, `openmemory paths` {verb * 1000:.0f} ms"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def machine() -> list:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return [f"software: Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
            f"{platform.system()} {platform.release()}",
            f"machine: {model}, {os.cpu_count()} cores, load average {load()}"]


def _mark(ok: bool) -> str:
    return "" if ok else " ✗"


def _r(value: float, places: int = 2) -> float:
    """A figure as printed: it is judged as shown (0.598 prints 0.60 and meets 0.6)."""
    return round(value, places)


def table(rows: list) -> list:
    head = ["corpus", "MB", "sessions", "episodes", "json.loads s", "ingest s", "MB/s", "ratio",
            "no-op s (per 10k)", "database / transcripts", "peak MB", "recall p50/p95 ms", "recall CLI ms",
            "first sleep s (lessons)"]
    target = ["target", "", "", "", "", "", "",
              f"≥ {TARGETS['ratio_dense']} dense, ≥ {TARGETS['ratio_large']} large",
              f"≤ {TARGETS['noop_per_10k_s']} per 10k", f"≤ {TARGETS['db_share']}",
              f"≤ {TARGETS['peak_mb']} (1 GB)", f"p50 ≤ {TARGETS['recall_p50_ms']}, p95 ≤ {TARGETS['recall_p95_ms']}",
              f"≤ {TARGETS['recall_cli_ms']}",
              f"≤ {TARGETS['sleep_s']}"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|",
             "| " + " | ".join(target) + " |"]
    for r in rows:
        want = TARGETS["ratio_large"] if r["kind"] == "large" else TARGETS["ratio_dense"]
        judged = r["kind"] not in ("huge", "real")  # the 50 MB line's figures are reported, not judged
        # The database's share means something only at scale (the empty schema dominates a
        # handful of sessions), or on real transcripts (issue 25 sets it on the real corpora);
        # the no-op target is for 10,000 transcripts (start-up dominates fewer).
        at_scale = (judged and r["sessions"] >= 1000) or r["kind"] == "real"
        noop_judged = judged and r["sessions"] >= 10_000
        missing = f" ✗ (expected {r['expected_episodes']:,})" if r["expected_episodes"] is not None else ""
        cells = [r["label"], f"{r['mb']:,.1f}", f"{r['sessions']:,}", f"{r['episodes']:,}" + missing,
                 f"{r['baseline_s']:.2f}", f"{r['ingest_s']:.2f}", f"{r['mb_s']:.1f}",
                 f"{r['ratio']:.2f}" + _mark(not judged or _r(r["ratio"]) >= want),
                 f"{r['noop_s']:.2f}" + (f" ({r['noop_per_10k_s']:.2f})" if noop_judged else "")
                 + _mark(not noop_judged or _r(r["noop_per_10k_s"]) <= TARGETS["noop_per_10k_s"]),
                 f"{r['db_share']:.2f}" + _mark(not at_scale or r["db_share"] <= TARGETS["db_share"]),
                 f"{r['peak_mb']:.0f}" + _mark(not judged or r["peak_mb"] <= TARGETS["peak_mb"])]
        if "recall_p50_ms" in r:
            cells += [f"{r['recall_p50_ms']:.1f} / {r['recall_p95_ms']:.1f}"
                      + _mark(_r(r["recall_p50_ms"], 1) <= TARGETS["recall_p50_ms"]
                              and _r(r["recall_p95_ms"], 1) <= TARGETS["recall_p95_ms"]),
                      f"{r['recall_cli_ms']:.0f}" + _mark(_r(r["recall_cli_ms"], 0) <= TARGETS["recall_cli_ms"]),
                      f"{r['sleep_s']:.1f} ({r['lessons']})" + _mark(_r(r["sleep_s"], 1) <= TARGETS["sleep_s"])]
        else:
            cells += ["–", "–", "–"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def hook_line(h: dict) -> str:
    return (f"hook, {h['hook_mb']:.1f} MB session, whole process (`openmemory hook` fed SessionEnd on stdin, "
            f"median of runs): {h['hook_auto_s']:.2f} s as installed (detaches over 2 MB; max "
            f"{h['hook_auto_max_s']:.2f} s){_mark(_r(h['hook_auto_s']) <= TARGETS['hook_s'])}; "
            f"inline (`--detach never`) {h['hook_never_s']:.2f} s (max {h['hook_never_max_s']:.2f} s, peak "
            f"{h['hook_never_peak_mb']:.0f} MB){_mark(_r(h['hook_never_s']) <= TARGETS['hook_s'])}; "
            f"target ≤ {TARGETS['hook_s']} s")


# --------------------------------------------------------------------------------------

def profile(pool: list, work: Path, top: int) -> None:
    """cProfile of an in-process first ingest of the dense corpus: the top functions by own time.
    All of it in this process (OPENMEMORY_JOBS=0): cProfile does not follow worker processes."""
    claude, home = work / "profile" / "claude", work / "profile" / "om"
    linked_tree(pool, claude)
    shutil.rmtree(home, ignore_errors=True)
    os.environ.update(OPENMEMORY_HOME=str(home), CLAUDE_CONFIG_DIR=str(claude), OPENMEMORY_JOBS="0")
    from openmemory import ingest, store
    mb = synthetic.corpus_bytes(claude) / 1e6
    prof = cProfile.Profile()
    with store.connect() as db:
        start = time.perf_counter()
        prof.enable()
        report = ingest.ingest(db)
        prof.disable()
        seconds = time.perf_counter() - start
    print("\n".join(machine()))
    print(f"profiled: first ingest of {len(pool):,} dense sessions ({mb:.1f} MB) in-process: {seconds:.2f} s "
          f"under cProfile ({mb / seconds:.1f} MB/s); {report.line()}")
    text = io.StringIO()
    stats = pstats.Stats(prof, stream=text)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(r"openmemory[/\\]", 15)  # the stages, with what they call
    print(text.getvalue().rstrip())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tests.bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="the smallest size only, fewer large sessions (under a minute)")
    ap.add_argument("--sizes", help=f"dense corpus sizes in sessions, comma-separated "
                                    f"(default {','.join(map(str, DEFAULT_SIZES))})")
    ap.add_argument("--runs", type=int, default=3, help="runs of the hook in each mode (default 3)")
    ap.add_argument("--dir", type=Path, help="keep the generated corpus here and reuse it next time")
    ap.add_argument("--profile", action="store_true",
                    help="profile an in-process first ingest of the smallest dense corpus instead")
    ap.add_argument("--top", type=int, default=25, help="functions the profile shows (default 25)")
    ap.add_argument("--real", type=Path, action="append", metavar="DIR",
                    help="also a row for this folder of real transcripts, one folder per project (as "
                         "../shared/corpus/dev): first ingest and database / transcripts, no recall or "
                         "sleep; its ratio is reported, not judged; may be given again")
    a = ap.parse_args(argv)
    sizes = sorted(int(s.replace("_", "")) for s in a.sizes.split(",")) if a.sizes else list(DEFAULT_SIZES)
    if a.quick:
        sizes = sizes[:1]
    large_mb = QUICK_LARGE_MB if a.quick else LARGE_MB

    tmp = Path(tempfile.mkdtemp(prefix="om-bench-"))
    corpus = a.dir.resolve() if a.dir else tmp / "corpus"
    try:
        if a.profile:
            profile(dense_pool(corpus / "dense-pool", sizes[0]), tmp, a.top)
            return 0
        started, load_before = time.perf_counter(), load()
        compiled_copy(tmp / "package")
        pool = dense_pool(corpus / "dense-pool", sizes[-1])
        large = corpus / "large"
        large_expected = generated(large, list(large_mb), lambda c: synthetic.write_large(c, large_mb)[1])
        huge = corpus / "huge-line"
        huge_expected = generated(huge, 50, lambda c: synthetic.write_huge_line(c)[1])
        say(f"corpus ready in {time.perf_counter() - started:.0f} s")

        rows = []
        for size in sizes:
            claude = tmp / f"dense-{size}" / "claude"
            expected = linked_tree(pool[:size], claude)
            rows.append(measure(f"dense {size:,}", "dense", claude, tmp / f"dense-{size}" / "om", expected))
            shutil.rmtree(tmp / f"dense-{size}")
        clean_memory_folders(large / "claude")
        rows.append(measure(f"large ×{len(large_mb)}", "large", large / "claude", tmp / "large-om", large_expected))
        clean_memory_folders(large / "claude")
        rows.append(measure("one 50 MB line", "huge", huge / "claude", tmp / "huge-om", huge_expected, full=False))
        for folder in a.real or []:
            real_tree(folder.resolve(), tmp / "real" / "claude")
            rows.append(measure(f"real: {folder.name}", "real", tmp / "real" / "claude", tmp / "real" / "om", {},
                                full=False))
        hook_session = max((large / "claude" / "projects").glob("*/*.jsonl"), key=lambda p: p.stat().st_size)
        say("hook: the 5 MB session")
        hook = hook_figures(large / "claude", hook_session, tmp, a.runs)
        (tmp / "idle").mkdir()
        started_up = startup(environment(tmp / "idle" / "claude", tmp / "idle" / "om"))

        print("\n".join(machine()) + f" (at the start: {load_before})")
        print(started_up)
        print(f"python3 -m tests.bench{' --quick' if a.quick else ''}{' --sizes ' + a.sizes if a.sizes else ''}: "
              f"{time.perf_counter() - started:.0f} s in all")
        print()
        print("\n".join(table(rows)))
        print()
        print(hook_line(hook))
        print("✗ marks a figure that misses its target (or episodes the corpus should have made and did not); "
              "the 50 MB line's figures are reported, not judged; a real corpus's only for its database's size.")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
