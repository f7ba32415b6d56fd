"""Measure recall at scale (not a unit test: prints figures).

    python3 -m tests.bench_recall [--episodes 100000] [--queries 60] [--commands 12] [--db PATH]

Builds (once, then reuses from --db) a store of synthetic episodes whose words follow the
frequencies of the real transcripts in ../shared/corpus: sessions of about ten episodes
(a session summary, errors and corrections) in a few dozen project folders, and one note in
twenty, stored in conversations as `remember` stores them. Then times `recall.search`
in-process (p50, p95) over queries made of two to four words of random episodes, a common
word added to half of them, and the whole `openmemory recall` command as a subprocess.
"""
import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from openmemory import recall, store  # noqa: E402
from tests.helpers import CORPUS, raw_db  # noqa: E402

WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{1,20}")


def vocabulary(limit: int = 20000):
    """(words, weights): the corpus's words by frequency (a fixed list when the corpus is absent)."""
    counts = Counter()
    for path in sorted(CORPUS.rglob("*.jsonl")) if CORPUS.is_dir() else []:
        counts.update(w.lower() for w in WORD.findall(path.read_text(errors="replace")))
    if not counts:
        counts.update({f"w{i}": 100000 // i for i in range(1, limit)})
    common = counts.most_common(limit)
    return [w for w, _ in common], [n for _, n in common]


def build(path: Path, episodes: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    words, weights = vocabulary()

    def text(n):
        return " ".join(rng.choices(words, weights, k=n))

    projects = [f"/home/dev/project{i}" for i in range(40)]
    start = time.time()
    with store.connect(path) as db:
        made = sid = 0
        day = 0.0
        while made < episodes:
            sid += 1
            cwd = rng.choice(projects)
            day += 365 * 3 / (episodes / 10)
            at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1700000000 + day * 86400))
            request = text(rng.randint(5, 14))
            eps = [{"key": f"session:{sid}", "kind": "session", "title": request,
                    "gist": f"Asked: {request}. Ran: `{text(3)}`. Ended: {text(10)}",
                    "detail": "\n".join(f"- {text(rng.randint(5, 30))}" for _ in range(rng.randint(1, 5))),
                    "facts": {}, "at": at, "cwd": cwd}]
            for j in range(rng.randint(3, 15)):
                kind = rng.choice(("error", "error", "correction"))
                line = text(rng.randint(6, 20))
                eps.append({"key": f"{kind}:{sid}:{j}", "kind": kind, "title": f"`{text(2)}` failed: {line}"[:140],
                            "gist": f"`{text(2)}` failed: {line}. While working on: {request}",
                            "detail": text(rng.randint(10, 60)), "facts": {}, "at": at, "cwd": cwd})
            db.replace_session({"id": f"s{sid}", "path": f"/t/s{sid}.jsonl", "mtime_ns": 0, "size": 0,
                                "cwd": cwd}, eps, now=at)
            made += len(eps)
            if rng.random() < 0.5:
                for _ in range(rng.randint(1, 3)):
                    db.add_note(text(rng.randint(8, 25)), cwd=cwd, now=at, conversation=f"bench-{sid}")
                    made += 1
            if sid % 1000 == 0:
                print(f"\r{made} episodes, {time.time() - start:.0f} s", end="", file=sys.stderr, flush=True)
    print(f"\rbuilt {made} episodes in {time.time() - start:.0f} s: {path} "
          f"({path.stat().st_size / 1e6:.0f} MB)", file=sys.stderr)


def queries(path: Path, n: int, seed: int = 11) -> list:
    rng = random.Random(seed)
    words, _ = vocabulary()
    common = words[20:200]
    out = []
    with store.connect(path) as db:
        top = raw_db(db).execute("SELECT max(id) FROM episodes").fetchone()[0]
        while len(out) < n:
            ep = db.episode(rng.randint(1, top))
            if not ep:
                continue
            picked = rng.sample(WORD.findall(ep["title"]), k=min(rng.randint(2, 4), len(WORD.findall(ep["title"]))))
            if rng.random() < 0.5:
                picked.append(rng.choice(common))
            out.append(" ".join(picked))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=100000)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--commands", type=int, default=12)
    ap.add_argument("--db", type=Path, default=Path(tempfile.gettempdir()) / "om-bench-recall" / "memory.db")
    args = ap.parse_args(argv)
    if not args.db.exists():
        args.db.parent.mkdir(parents=True, exist_ok=True)
        build(args.db, args.episodes)
    qs = queries(args.db, args.queries)
    times = []
    with store.connect(args.db) as db:
        for q in qs[:5]:
            recall.search(db, q)  # warm the page cache
        for q in qs:
            t = time.perf_counter()
            recall.search(db, q, cwd="/home/dev/project3")
            times.append((time.perf_counter() - t) * 1000)
    times.sort()
    print(f"search, {len(qs)} queries: p50 {statistics.median(times):.1f} ms, "
          f"p95 {times[int(len(times) * 0.95) - 1]:.1f} ms, max {times[-1]:.1f} ms")
    if not args.commands:
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, OPENMEMORY_HOME=str(args.db.parent), CLAUDE_CONFIG_DIR=str(Path(tmp) / "claude"),
                   PYTHONPATH=str(ROOT))
        walls = []
        for q in qs[:args.commands]:
            t = time.perf_counter()
            p = subprocess.run([sys.executable, "-m", "openmemory", "recall", q], env=env, capture_output=True)
            walls.append((time.perf_counter() - t) * 1000)
            if p.returncode:
                print(p.stderr.decode(), file=sys.stderr)
                return 1
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"])
        python = (time.perf_counter() - t) * 1000
    print(f"`openmemory recall`, {len(walls)} runs: p50 {statistics.median(walls):.0f} ms "
          f"(a bare `python -c pass`: {python:.0f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
