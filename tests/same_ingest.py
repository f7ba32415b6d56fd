"""Whether two copies of openmemory store the same first ingest (not a unit test: prints a verdict).

    python3 -m tests.same_ingest ../main                     # this checkout against another tree
    python3 -m tests.same_ingest ../main --jobs 0 --real /tmp/om-corpus/dense-pool/claude/projects

For a change that must not change what is stored (a speed round): each folder of real
transcripts (by default ../shared/corpus/dev and ../shared/corpus/claude-code, one folder per
project) is linked into a private CLAUDE_CONFIG_DIR and ingested by each tree in turn, at one
--now, into the same private OPENMEMORY_HOME (so paths match), and every row of every table is
compared, the text index by its terms (`fts5vocab` instance: term, document, column, offset);
its segments are not compared byte for byte, since how they are laid out follows the
transactions, which a serial ingest closes by the clock. Nothing is written into the corpora.
"""
import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = [ROOT.parent / "shared" / "corpus" / "dev", ROOT.parent / "shared" / "corpus" / "claude-code"]
NOW = "2026-12-05T00:00:00Z"


def ingest(tree: Path, corpus: Path, work: Path, jobs) -> Path:
    """The database tree's `openmemory ingest` makes of corpus (work is emptied first)."""
    shutil.rmtree(work, ignore_errors=True)
    (work / "claude" / "projects").mkdir(parents=True)
    for project in sorted(p for p in corpus.iterdir() if p.is_dir()):
        (work / "claude" / "projects" / project.name).symlink_to(project.resolve(), target_is_directory=True)
    env = dict(os.environ, OPENMEMORY_HOME=str(work / "om"), CLAUDE_CONFIG_DIR=str(work / "claude"),
               HOME=str(work / "home"), PYTHONPATH=str(tree))
    for name in ("CODEX_HOME", "GEMINI_CLI_HOME", "OPENMEMORY_LLM_URL", "OPENMEMORY_LLM_MODEL"):
        env.pop(name, None)
    if jobs is not None:
        env["OPENMEMORY_JOBS"] = str(jobs)
    subprocess.run([sys.executable, "-m", "openmemory", "ingest", "--quiet", "--now", NOW],
                   env=env, cwd=str(tree), check=True)
    return work / "om" / "memory.db"


def rows(db_path: Path) -> dict:
    """{table: its rows by rowid} of every table, a text index as its terms' instances."""
    db = sqlite3.connect(db_path)
    tables = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
    virtual = [name for name, sql in tables if (sql or "").upper().startswith("CREATE VIRTUAL")]
    out = {}
    for name, sql in tables:
        if name in virtual:
            db.execute(f'CREATE VIRTUAL TABLE temp."terms_{name}" USING fts5vocab(main, "{name}", instance)')
            out[f"{name} (terms)"] = sorted(db.execute(f'SELECT * FROM temp."terms_{name}"'))
        elif not any(name in (f"{v}_data", f"{v}_idx") for v in virtual):    # the segments: laid out by the commits
            out[name] = db.execute(f'SELECT * FROM "{name}" ORDER BY 1').fetchall() if "WITHOUT ROWID" in (sql or "").upper() \
                else db.execute(f'SELECT rowid, * FROM "{name}" ORDER BY rowid').fetchall()
    out["(schema)"] = db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    db.close()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tests.same_ingest", description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="the other tree (a checkout or a copy of one)")
    ap.add_argument("--real", type=Path, action="append", metavar="DIR",
                    help="a folder of project folders of transcripts (default: the dev and public corpora)")
    ap.add_argument("--jobs", help="OPENMEMORY_JOBS for both (default: as the machine has CPUs)")
    a = ap.parse_args(argv)
    differ = 0
    with tempfile.TemporaryDirectory(prefix="om-same-") as tmp:
        for corpus in a.real or CORPORA:
            work = Path(tmp) / corpus.name
            mine, theirs = rows(ingest(ROOT, corpus, work, a.jobs)), rows(ingest(a.other.resolve(), corpus, work, a.jobs))
            for table in sorted(set(mine) | set(theirs)):
                one, two = mine.get(table, []), theirs.get(table, [])
                if one != two:
                    differ += 1
                    n = sum(x != y for x, y in zip(one, two)) + abs(len(one) - len(two))
                    print(f"{corpus.name}: {table} differs ({len(one):,} rows here, {len(two):,} there, {n:,} differ)")
            print(f"{corpus.name}: {sum(map(len, mine.values())):,} rows in {len(mine)} tables compared")
    print("the same" if not differ else f"{differ} tables differ")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
