"""Recall on real coding history: the dev question set through the MCP server, beside BM25 over chunks.

    python3 -m tests.recall_eval                 # the side-by-side tables (about a minute)
    python3 -m tests.recall_eval --misses        # and every question whose answer is not shown, why
    python3 -m tests.recall_eval --json          # the figures as one JSON object
    python3 -m tests.recall_eval --causes        # each tuning miss by its cause, counted, and what
                                                 # "nothing relevant" held back on the tuning questions
    python3 -m tests.recall_eval --questions FILE --corpus DIR --no-dialogs
                                                 # another question set over another folder of sessions

The question set (tests/data/recall_dev_questions.json) was written by hand over the 45
sessions of ../shared/corpus/dev/entireio__cli, blind to the code: 135 answerable questions,
each with gold strings copied from the transcript, 54 of them from the set-aside third
(`heldout`), and 14 with no answer in the history. The sessions are ingested into a
temporary home, `openmemory serve` runs over real pipes as Claude Code runs it, and every
question is asked with the MCP tool `recall`, k=5. What counts is the text the result
shows: a hit answers when its block contains a gold string (case folded, whitespace runs
as one). R@1 and R@5 are the shares of questions answered by the first hit and by any of
the five; MRR the mean of 1/rank of the first answering hit. An unanswerable question is
answered well when the result says plainly that nothing relevant was found and shows at
most one hit.

Beside it, plain SQLite FTS5 BM25 over ~400-character chunks of the same sessions'
conversation (what the person typed, the assistant's prose, compaction summaries and plans,
as transcripts.parse reads them), each question asked with the same words (recall's
query_terms joined by OR), shown best first within the same token budget as openmemory's
result for that question (its characters; one chunk at least).

`--questions FILE` asks another question set (the same format: "questions" with "id",
"question", "category", "gold", "where", optionally "heldout"; "unanswerable" with "id" and
"question"); `--corpus DIR` ingests every *.jsonl transcript of DIR (symbolic links followed)
instead of the 45 dev sessions. Over another corpus there is no held-out split: every
answerable question counts in one set, "questions", in the table, and --misses shows each
miss (but never one tagged `heldout`). Without `--corpus` the default run is unchanged.
"""
import argparse
import json
import os
import re
import select
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from openmemory import ingest, recall, store, transcripts  # noqa: E402

QUESTIONS = Path(__file__).parent / "data" / "recall_dev_questions.json"
SESSIONS = ROOT.parent / "shared" / "corpus" / "dev" / "entireio__cli"
if os.environ.get("OPENMEMORY_DEV_CORPUS"):
    SESSIONS = Path(os.environ["OPENMEMORY_DEV_CORPUS"])
K = 5
CHUNK_CHARS = 400           # the baseline's chunks, cut at word boundaries
TOKENS_PER_CHAR = 0.25      # the issue's measure: tokens = characters / 4

# A hit's block starts with its id in brackets: `[p12] exchange · …` (and `[12] session · …`
# before ids carried their kind); never a line of a hit's own text that opens with a word in
# brackets (a pasted log's "[INFO] Running secure cleanup": public23 q19's answer, shown fourth,
# was counted sixth behind two such lines; recall.unforged quotes a line that opens as an id).
_HIT = re.compile(r"^\[[epl]?\d+\] ", re.M)
_NOTHING = re.compile(r"nothing relevant|nothing in memory matches|no memories match|none matches well", re.I)


def folded(text: str) -> str:
    return " ".join((text or "").lower().split())


def answers(block: str, gold: list) -> bool:
    """Whether a shown block holds one of the gold strings."""
    text = folded(block)
    return any(folded(g) in text for g in gold)


def hit_blocks(text: str) -> list:
    """The hits of an MCP recall result, each as the text shown for it, in order."""
    starts = [m.start() for m in _HIT.finditer(text)]
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


def says_nothing(text: str) -> bool:
    """Said plainly: the result says nothing relevant was found, and shows at most one hit."""
    head = text.split("\n", 1)[0]
    return bool(_NOTHING.search(head)) and len(hit_blocks(text)) <= 1


# --------------------------------------------------------------------------------------
# The MCP server, as Claude Code runs it

class Server:
    """`python -m openmemory serve` over real pipes, one JSON message per line."""

    def __init__(self, env, cwd):
        self.proc = subprocess.Popen([sys.executable, "-m", "openmemory", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.rid = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "recall-eval", "version": "1"}})

    def request(self, method, params):
        self.rid += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.rid, "method": method,
                                          "params": params}).encode() + b"\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)
        if not ready:
            raise SystemExit("recall_eval: no reply from the MCP server within two minutes")
        reply = json.loads(self.proc.stdout.readline())
        if "error" in reply or reply["result"].get("isError"):
            raise SystemExit(f"recall_eval: the MCP server failed: {reply}")
        return reply["result"]

    def tool(self, name, **arguments) -> str:
        return self.request("tools/call", {"name": name, "arguments": arguments})["content"][0]["text"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(60)
        self.proc.stdout.close()


# --------------------------------------------------------------------------------------
# The baseline: BM25 over ~400-character chunks of the conversation

def conversation(session) -> list:
    """The texts of a session's conversation as transcripts.parse reads them: what the person
    typed, the assistant's prose, compaction summaries, approved plans."""
    return [t.text for t in session.turns if t.text]


def chunks_of(text: str, size: int = CHUNK_CHARS) -> list:
    """~size-character chunks of text, cut between words."""
    out, current = [], ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > size:
            out.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        out.append(current)
    return out


class Chunks:
    """An FTS5 index of every chunk of the sessions' conversation (in memory)."""

    def __init__(self, paths: list):
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE chunks USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')")
        rows = []
        for path in paths:
            for text in conversation(transcripts.parse(path)):
                rows += [(c,) for c in chunks_of(text)]
        self.db.executemany("INSERT INTO chunks (text) VALUES (?)", rows)
        self.count = len(rows)

    def search(self, question: str, budget_chars: int) -> list:
        """The best chunks for question within budget_chars (one at least), best first."""
        terms = recall.query_terms(question)
        if not terms:
            return []
        shown, used = [], 0
        for (text,) in self.db.execute("SELECT text FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT 50",
                                       (recall.match_expression(terms),)):
            if shown and used + len(text) > budget_chars:
                break
            shown.append(text)
            used += len(text)
        return shown


# --------------------------------------------------------------------------------------
# Scoring

def rank_of(blocks: list, gold: list) -> int | None:
    """The 1-based rank of the first of the first K blocks that shows a gold string."""
    return next((i for i, b in enumerate(blocks[:K], 1) if answers(b, gold)), None)


def figures(ranks: list) -> dict:
    n = len(ranks)
    return {"n": n, "r1": sum(r == 1 for r in ranks) / n if n else 0.0,
            "r5": sum(r is not None for r in ranks) / n if n else 0.0,
            "mrr": sum(1 / r for r in ranks if r) / n if n else 0.0}


# The sets of the default run's table: the dev questions tuned on, the set-aside third, and both.
SETS = (("tuning", lambda q: not q.get("heldout")), ("heldout", lambda q: q.get("heldout")),
        ("all", lambda q: True))


def load(questions=None, corpus=None) -> tuple:
    """The question set, the transcripts to ingest and the sets the table shows: the dev questions
    over the 45 dev sessions, split into tuning and held out, by default; over another corpus (a
    folder of *.jsonl transcripts, every one of them) one set of all the answerable questions."""
    path = Path(questions) if questions else QUESTIONS
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise SystemExit(f"recall_eval: cannot read the questions at {path}: {e}")
    if not isinstance(data.get("questions"), list) or not isinstance(data.get("unanswerable", []), list):
        raise SystemExit(f"recall_eval: {path} has no \"questions\" list")
    data.setdefault("unanswerable", [])
    if corpus is None:
        paths = sorted(SESSIONS.glob("*.jsonl"))
        if len(paths) != 45:
            raise SystemExit(f"recall_eval: expected the 45 dev sessions at {SESSIONS}, found {len(paths)}")
        return data, paths, SETS
    folder = Path(corpus)
    paths = sorted(p for p in folder.glob("*.jsonl") if p.is_file())
    if not paths:
        raise SystemExit(f"recall_eval: no *.jsonl transcripts at {folder}")
    return data, paths, (("questions", lambda q: True),)


def evaluate(misses: bool = False, questions=None, corpus=None) -> dict:
    data, paths, sets = load(questions, corpus)
    with tempfile.TemporaryDirectory(prefix="om-eval-") as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, OPENMEMORY_HOME=str(tmp / "om"), CLAUDE_CONFIG_DIR=str(tmp / "claude"),
                   HOME=str(tmp / "user"))
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        for key in ("OPENMEMORY_DEBUG", "CLAUDE_CODE_SESSION_ID"):
            env.pop(key, None)
        saved = {k: os.environ.get(k) for k in ("OPENMEMORY_HOME", "CLAUDE_CONFIG_DIR")}
        os.environ.update(OPENMEMORY_HOME=env["OPENMEMORY_HOME"], CLAUDE_CONFIG_DIR=env["CLAUDE_CONFIG_DIR"])
        try:
            started = time.perf_counter()
            with store.connect() as db:
                report = ingest.ingest(db, [str(p) for p in paths])
            ingest_s = time.perf_counter() - started
        finally:
            for k, v in saved.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        # No project: the 45 sessions are one repository, checked out at a different path on each of
        # the team's machines, so no folder names it here (each hit still shows its own).
        env.pop("CLAUDE_PROJECT_DIR", None)
        (tmp / "work").mkdir()
        server = Server(env, str(tmp / "work"))
        results = {}
        try:
            for q in data["questions"] + data["unanswerable"]:
                results[q["id"]] = server.tool("recall", query=q["question"], k=K)
        finally:
            server.close()
        db_bytes = sum(f.stat().st_size for f in (tmp / "om").glob("memory.db*"))
        if misses:
            os.environ.update(OPENMEMORY_HOME=env["OPENMEMORY_HOME"], CLAUDE_CONFIG_DIR=env["CLAUDE_CONFIG_DIR"])
            try:
                with store.connect() as db:
                    why = {q["id"]: cause(db, q, results[q["id"]]) for q in data["questions"]
                           if rank_of(hit_blocks(results[q["id"]]), q["gold"]) is None
                           and (not q.get("heldout") or misses == "all")}
                    gate = [held_back(db, q, results[q["id"]]) for q in data["questions"]
                            if says_nothing(results[q["id"]]) and (not q.get("heldout") or misses == "all")]
            finally:
                for k, v in saved.items():
                    os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    chunks = Chunks(paths)
    out = {"ingest": report.line(), "ingest_s": ingest_s, "chunks": chunks.count,
           "transcript_bytes": sum(p.stat().st_size for p in paths), "db_bytes": db_bytes}
    rows = {"openmemory": {}, "bm25 chunks": {}}
    failing = []
    ranks = {"openmemory": [], "bm25 chunks": []}
    for q in data["questions"]:
        text = results[q["id"]]
        mine = rank_of(hit_blocks(text), q["gold"])
        theirs = rank_of(chunks.search(q["question"], len(text)), q["gold"])
        ranks["openmemory"].append((q, mine, says_nothing(text)))
        ranks["bm25 chunks"].append((q, theirs, False))
        if mine is None:
            failing.append((q, text))
    for system, found in ranks.items():
        for name, keep in sets:
            rows[system][name] = figures([r for q, r, _ in found if keep(q)])
        by_category = {}
        for q, r, _ in found:
            by_category.setdefault(q["category"], []).append(r)
        rows[system]["categories"] = {c: figures(rs) for c, rs in sorted(by_category.items())}
        by_where = {}
        for q, r, _ in found:
            by_where.setdefault(q["where"], []).append(r)
        rows[system]["where"] = {w: figures(rs) for w, rs in sorted(by_where.items())}
    unanswerable = data["unanswerable"]
    out["nothing_relevant"] = {"unanswerable": sum(says_nothing(results[q["id"]]) for q in unanswerable),
                               "of": len(unanswerable),
                               "answerable_said_nothing": sum(n for _, _, n in ranks["openmemory"])}
    lengths = [len(results[q["id"]]) for q in data["questions"] + unanswerable]
    out["tokens_mean"] = sum(lengths) / len(lengths) * TOKENS_PER_CHAR
    out["tokens_max"] = max(lengths) * TOKENS_PER_CHAR
    out["rows"] = rows
    out["sets"] = [name for name, _ in sets]
    out["sessions"] = len(paths)
    if misses:
        # the tuning questions' only: the held-out ones are measured, never looked into while tuning
        out["misses"] = [{"id": q["id"], "heldout": bool(q.get("heldout")), "where": q["where"],
                          "question": q["question"], "gold": q["gold"], "shown": text} for q, text in failing
                         if not q.get("heldout") or misses == "all"]
        # the questions with no answer that were shown hits all the same (no held-out split among them)
        out["answered_unanswerable"] = [{"id": q["id"], "question": q["question"], "shown": results[q["id"]]}
                                        for q in unanswerable if not says_nothing(results[q["id"]])]
        for m in out["misses"]:
            m["cause"] = why.get(m["id"])
        counts = {}
        for c in why.values():
            counts[c["cause"]] = counts.get(c["cause"], 0) + 1
        out["causes"] = dict(sorted(counts.items(), key=lambda kv: -kv[1]))
        out["gate"] = gate
        # each tuning question's rank of its first answering hit and the kinds of the hits shown (--json)
        out["ranks"] = {q["id"]: r for q, r, _ in ranks["openmemory"] if not q.get("heldout") or misses == "all"}
        out["kinds"] = {q["id"]: [b.split("]", 1)[1].split("·", 1)[0].strip() for b in hit_blocks(results[q["id"]])]
                        for q, r, _ in ranks["openmemory"] if not q.get("heldout") or misses == "all"}
    return out


# Why a question's answer is not shown, most basic cause first.
CAUSES = ("not stored", "not a candidate", "ranked below 5", "ranked out by recency or scope",
          "said nothing relevant (one hit shown)", "shown text cut before it")


def cause(db, q: dict, shown: str) -> dict:
    """Why the answer to q is not among the hits shown: the answer not stored (no memory's text
    holds a gold string); no memory that holds it among the candidates; ranked below the fifth
    (by relevance; or only by the recency, strength and project that order like relevance);
    in the top five of a result that said nothing relevant and showed its first hit alone; or
    in the top five but its shown text cut before the gold string. (Identical hits are left out
    before ranks are counted here, so a duplicate's place is its original's.)"""
    from tests.helpers import raw_db
    golds = [folded(g) for g in q["gold"]]
    con = raw_db(db)
    holding = set()
    for source, sql in (("passage", "SELECT id, text FROM passages"),
                        ("episode", "SELECT id, title || ' ' || gist FROM episodes"),
                        ("lesson", "SELECT id, text FROM lessons")):
        for i, text in con.execute(sql):
            if any(g in folded(text) for g in golds):
                holding.add((source, i))
    if not holding:
        elsewhere = [i for i, t in con.execute("SELECT id, detail || ' ' || facts FROM episodes")
                     if any(g in folded(t) for g in golds)]
        return {"cause": "not stored", "note": f"in episodes' detail or facts only: {elsewhere}" if elsewhere else ""}
    hits = recall.with_replies(db, recall.search(db, q["question"], 200))
    keys = [(h["source"], h["id"]) for h in hits]
    ranks = [i for i, key in enumerate(keys, 1) if key in holding]
    if not ranks:
        return {"cause": "not a candidate", "note": f"{len(holding)} memories hold it: {sorted(holding)[:5]}"}
    first = ranks[0]
    hit = hits[first - 1]
    if 1 < first <= K and says_nothing(shown):
        return {"cause": "said nothing relevant (one hit shown)", "note": f"rank {first}, {hit['ref']}, best relevance "
                                                                         f"{hits[0]['relevance']:.2f}"}
    if first <= K:
        block = recall.hit_block(hit, q["question"])
        if not answers(block, q["gold"]):
            return {"cause": "shown text cut before it", "note": f"rank {first}, {hit['ref']}"}
        return {"cause": "other", "note": f"rank {first} in-process, {hit['ref']}: shown there, not through MCP"}
    by_relevance = sorted(hits, key=lambda h: -h["relevance"])
    at = next(i for i, h in enumerate(by_relevance, 1) if (h["source"], h["id"]) in holding)
    note = f"rank {first} ({hit['ref']} relevance {hit['relevance']:.2f}; best {hits[0]['relevance']:.2f})"
    if at <= K:
        return {"cause": "ranked out by recency or scope", "note": note}
    return {"cause": "ranked below 5", "note": note}


def held_back(db, q: dict, shown: str) -> dict:
    """An answerable question the result said "nothing relevant" for: where its answer ranks among the
    hits (1 to K: shown, or held back behind the one hit shown; None: not among the first K) and the
    best relevance, to weigh what the gate costs."""
    hits = recall.with_replies(db, recall.search(db, q["question"], K))
    found = next((i for i, h in enumerate(hits, 1) if answers(recall.hit_block(h, q["question"]), q["gold"])), None)
    return {"id": q["id"], "question": q["question"], "rank": found,
            "best": max((h["relevance"] for h in hits), default=0.0)}


def dialogs() -> dict:
    """The conversational check, as test_recall_quality measures it (in-process and through MCP)."""
    from tests import test_recall_quality as quality
    found = quality.measure(channels={"fusion": {}})
    return {"in_process": found["dialogs"]["fusion"], "mcp": found["dialogs"]["fusion through MCP"],
            "labelled": found["labelled"]["fusion"], "size": found["dialogs_size"]}


def table(out: dict) -> str:
    lines = [f"ingest: {out['ingest']} ({out['ingest_s']:.1f} s); database {out['db_bytes'] / 1e6:.1f} MB for "
             f"{out['transcript_bytes'] / 1e6:.1f} MB of transcripts "
             f"({out['db_bytes'] / out['transcript_bytes']:.2f}); {out['chunks']:,} baseline chunks",
             "",
             "| questions | n | openmemory R@1 / R@5 / MRR | BM25 over ~400-char chunks R@1 / R@5 / MRR |",
             "|---|---|---|---|"]
    om, bm = out["rows"]["openmemory"], out["rows"]["bm25 chunks"]
    for name in out["sets"]:
        a, b = om[name], bm[name]
        lines.append(f"| {name} | {a['n']} | {a['r1']:.2f} / {a['r5']:.2f} / {a['mrr']:.2f} | "
                     f"{b['r1']:.2f} / {b['r5']:.2f} / {b['mrr']:.2f} |")
    for key, title in (("categories", "category"), ("where", "where the answer is")):
        lines += ["", f"| {title} | n | openmemory R@5 | BM25 chunks R@5 |", "|---|---|---|---|"]
        for name, a in om[key].items():
            lines.append(f"| {name} | {a['n']} | {a['r5']:.2f} | {bm[key][name]['r5']:.2f} |")
    n = out["nothing_relevant"]
    lines += ["", f"unanswerable: 'nothing relevant' said plainly on {n['unanswerable']} of {n['of']}; "
                  f"said on {n['answerable_said_nothing']} answerable questions",
              f"result size at k={K}: {out['tokens_mean']:.0f} tokens on average (characters / 4), "
              f"{out['tokens_max']:.0f} at most"]
    if "dialogs" in out:
        d = out["dialogs"]
        lines.append(f"conversational check ({d['size'][0]} questions over {d['size'][1]} notes): R@1 / R@5 "
                     f"{d['in_process'][0]:.2f} / {d['in_process'][1]:.2f} in-process, "
                     f"{d['mcp'][0]:.2f} / {d['mcp'][1]:.2f} through MCP; labelled set "
                     f"{d['labelled'][0]:.2f} / {d['labelled'][1]:.2f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tests.recall_eval", description=__doc__.splitlines()[0])
    ap.add_argument("--misses", action="store_const", const="tuning",
                    help="also print every tuning question whose answer is not shown (held-out ones never)")
    ap.add_argument("--causes", action="store_const", const="tuning", dest="misses",
                    help="like --misses, with each miss's cause, counted")
    ap.add_argument("--no-dialogs", action="store_true", help="skip the conversational check")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--questions", metavar="FILE",
                    help="the question set to ask (default: tests/data/recall_dev_questions.json)")
    ap.add_argument("--corpus", metavar="DIR",
                    help="ingest every *.jsonl transcript of DIR instead of the 45 dev sessions "
                         "(no held-out split: one set of all the answerable questions)")
    a = ap.parse_args(argv)
    out = evaluate(a.misses, a.questions, a.corpus)
    if not a.no_dialogs:
        out["dialogs"] = dialogs()
    if a.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    print(table(out))
    if a.misses:
        tuning = "tuning " if "tuning" in out["sets"] else ""  # over another corpus there is one set
        print(f"\ncauses of the {tuning}misses: " + ", ".join(f"{c} {n}" for c, n in out["causes"].items()))
        print(f"\n'nothing relevant' said on {len(out['gate'])} answerable {tuning}questions, the answer's rank "
              "among the first five behind it (- : not among them):")
        for g in out["gate"]:
            print(f"  {g['id']} rank {g['rank'] or '-'} best {g['best']:.2f} {g['question']}")
        for m in out["misses"]:
            c = m.get("cause") or {}
            print(f"\n--- {m['id']} ({'heldout' if m['heldout'] else tuning.strip() or 'questions'}, {m['where']}) "
                  f"{m['question']}\n"
                  f"gold: {m['gold']}\ncause: {c.get('cause')}; {c.get('note')}\n{m['shown']}")
        for u in out["answered_unanswerable"]:
            print(f"\n--- {u['id']} (no answer in the history, hits shown) {u['question']}\n{u['shown']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
