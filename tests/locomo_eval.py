"""Recall on LoCoMo10 (public long conversations): every turn stored with `remember`, every question asked with `recall`.

    python3 -m tests.locomo_eval /path/to/locomo10_v2          # the table (a few minutes)
    OPENMEMORY_LOCOMO=/path/to/locomo10_v2 python3 -m tests.locomo_eval --only 26,30,41
    python3 -m tests.locomo_eval DIR --json                    # the figures as one JSON object
    python3 -m tests.locomo_eval DIR --misses 26               # conversation 26's misses, each with what was shown

LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
ACL 2024) is ten conversations between two people over 19-32 sessions each, with questions
whose evidence is the turns that answer them. Its licence is for non-commercial research,
so it is not in this repository: get it from https://github.com/snap-research/locomo
(data/locomo10.zip, or data/locomo10.json) and pass the folder of its per-conversation
files (26.json, 30.json, ...; each `session_N` a list of turns {speaker, dia_id, text},
`session_N_date_time`, and `qa`) or the single locomo10.json.

Each conversation gets its own home. Every turn is stored with the MCP tool `remember`
through `openmemory serve` over real pipes, one server process per dialog session (as one
Claude Code session runs one server), as a person would note it: the speaker and the
session's date before what was said, and a shared photo's caption after it ("Caroline, 1:56
pm on 8 May, 2023: The transgender stories were so inspiring! [shares a photo of a dog
walking past a wall with a painting of a woman]"). Then every question of categories 1-4
(multi-hop, temporal, open-domain, single-hop) is asked with the MCP tool `recall`, k=5, by
a server of none of those sessions. A question is a hit when one of the hits shown is one of
its evidence turns (the ids in the hits' headers); beside it, when an evidence turn's id is
shown anywhere in the result (a hit, or the note after a hit that asks a question, which
recall shows under it), and the answer-string variant: a shown hit's text holds the answer
(case folded). Category 5 (adversarial: asked of
the other speaker, no answer) is counted apart: how often the result says nothing relevant.
"""
import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.recall_eval import Server, answers, hit_blocks, says_nothing  # noqa: E402

K = 5
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
WHERE = "https://github.com/snap-research/locomo (data/locomo10.zip)"
_NOTE = re.compile(r"note \[e(\d+)\]")
_SHOWN = re.compile(r"^\[e(\d+)\] ", re.M)
_ANYWHERE = re.compile(r"\[e(\d+)\]")      # a hit's header, or the note after a question hit (recall.with_replies)
_DIA = re.compile(r"D\d+:\d+")


def conversations(source: Path, only=None) -> list:
    """[(name, conversation)] from a folder of per-conversation files or one locomo10.json."""
    if source.is_file():
        data = json.loads(source.read_text())
        found = [(str(c.get("sample_id", i)), c.get("conversation", c) | {"qa": c["qa"]})
                 for i, c in enumerate(data)]
    else:
        found = [(p.stem, json.loads(p.read_text())) for p in sorted(source.glob("*.json"))]
    found = [(n, c) for n, c in found if "qa" in c]
    if only:
        found = [(n, c) for n, c in found if n in only]
    return found


def sessions(conversation: dict) -> list:
    """[(date, turns)] in the conversation's order."""
    numbers = sorted(int(m.group(1)) for k in conversation if (m := re.fullmatch(r"session_(\d+)", k)))
    return [(conversation.get(f"session_{n}_date_time", ""), conversation[f"session_{n}"]) for n in numbers
            if conversation[f"session_{n}"]]


def note_text(turn: dict, date: str) -> str:
    """A turn as a person would note it: who, when, what was said, and the photo shared."""
    text = f"{turn['speaker']}, {date}: {turn['text']}" if date else f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text


def run(name: str, conversation: dict, show_misses: bool = False) -> dict:
    """Store one conversation in a fresh home and ask its questions; the per-question outcomes."""
    with tempfile.TemporaryDirectory(prefix="om-locomo-") as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, OPENMEMORY_HOME=str(tmp / "om"), CLAUDE_CONFIG_DIR=str(tmp / "claude"),
                   HOME=str(tmp / "user"), CLAUDE_PROJECT_DIR=str(tmp / "chat"))
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        for key in ("OPENMEMORY_DEBUG", "CLAUDE_CODE_SESSION_ID"):
            env.pop(key, None)
        (tmp / "chat").mkdir()
        turns = {}
        for date, said in sessions(conversation):
            server = Server(env, str(tmp / "chat"))     # one dialog session, one server process
            try:
                for turn in said:
                    reply = server.tool("remember", text=note_text(turn, date))
                    turns[int(_NOTE.search(reply).group(1))] = turn["dia_id"]
            finally:
                server.close()
        server = Server(env, str(tmp / "chat"))
        results = []
        try:
            for q in conversation["qa"]:
                started = time.perf_counter()
                text = server.tool("recall", query=q["question"], k=K)
                elapsed = time.perf_counter() - started
                evidence = set(_DIA.findall(" ".join(str(e) for e in q.get("evidence") or [])))
                blocks = hit_blocks(text)
                shown = [turns.get(int(i)) for i in _SHOWN.findall(text)]
                answer = q.get("answer")
                results.append({"conversation": name, "category": q["category"], "question": q["question"],
                                "answer": answer, "evidence": sorted(evidence),
                                "hit": any(s in evidence for s in shown[:K]),
                                "rank": next((i for i, s in enumerate(shown[:K], 1) if s in evidence), None),
                                "anywhere": any(turns.get(int(i)) in evidence for i in _ANYWHERE.findall(text)),
                                "answer_hit": answer is not None and answers("\n".join(blocks[:K]), [str(answer)]),
                                "nothing": says_nothing(text), "tokens": len(text) / 4, "seconds": elapsed,
                                "shown": text if show_misses else None})
        finally:
            server.close()
    return {"name": name, "turns": len(turns), "results": results}


def summary(results: list) -> dict:
    asked = [r for r in results if r["category"] in CATEGORIES]
    adversarial = [r for r in results if r["category"] == 5]

    def fig(rs):
        n = len(rs)
        return {"n": n, "r5": sum(r["hit"] for r in rs) / n if n else 0.0,
                "r1": sum(r["rank"] == 1 for r in rs) / n if n else 0.0,
                "mrr": sum(1 / r["rank"] for r in rs if r["rank"]) / n if n else 0.0,
                "answer_r5": sum(r["answer_hit"] for r in rs) / n if n else 0.0,
                "anywhere": sum(r["anywhere"] for r in rs) / n if n else 0.0}
    out = {"all": fig(asked), "categories": {CATEGORIES[c]: fig([r for r in asked if r["category"] == c])
                                             for c in CATEGORIES}}
    out["said_nothing_answerable"] = sum(r["nothing"] for r in asked)
    out["adversarial"] = {"n": len(adversarial), "said_nothing": sum(r["nothing"] for r in adversarial)}
    tokens = sorted(r["tokens"] for r in asked)
    out["tokens_mean"] = sum(tokens) / len(tokens) if tokens else 0.0
    out["tokens_max"] = tokens[-1] if tokens else 0.0
    seconds = sorted(r["seconds"] for r in asked)
    out["ms_p50"] = 1000 * seconds[len(seconds) // 2] if seconds else 0.0
    return out


def table(out: dict) -> str:
    lines = ["| questions | n | R@1 | R@5 (an evidence turn a hit) | MRR | evidence turn's id shown anywhere | "
             "answer string shown |", "|---|---|---|---|---|---|---|"]
    rows = [("all", out["all"])] + list(out["categories"].items())
    rows += [(f"conversation {name}", f) for name, f in out.get("conversations", {}).items()]
    for name, f in rows:
        lines.append(f"| {name} | {f['n']} | {f['r1']:.2f} | {f['r5']:.3f} | {f['mrr']:.2f} | {f['anywhere']:.3f} | "
                     f"{f['answer_r5']:.3f} |")
    a = out["adversarial"]
    lines += ["", f"'nothing relevant' said on {out['said_nothing_answerable']} of {out['all']['n']} answerable "
                  f"questions; on {a['said_nothing']} of {a['n']} adversarial ones (category 5)",
              f"result size at k={K}: {out['tokens_mean']:.0f} tokens on average (characters / 4), "
              f"{out['tokens_max']:.0f} at most; a recall through MCP {out['ms_p50']:.0f} ms (median, round trip)"]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tests.locomo_eval", description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default=os.environ.get("OPENMEMORY_LOCOMO"),
                    help="the folder of LoCoMo10's per-conversation files, or locomo10.json ($OPENMEMORY_LOCOMO)")
    ap.add_argument("--only", help="the conversations to run, by name (26,30,41)")
    ap.add_argument("--misses", metavar="NAMES", help="print these conversations' misses with what was shown")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args(argv)
    if not a.data or not Path(a.data).exists():
        print(f"locomo_eval: LoCoMo10 is not here ({a.data or 'no folder given'}). It is public for non-commercial "
              f"research and not part of this repository: get it from {WHERE}, unzip it, and pass its folder "
              f"of conversations (or locomo10.json) as the argument or as $OPENMEMORY_LOCOMO.", file=sys.stderr)
        return 2
    only = set(a.only.split(",")) if a.only else None
    missing = set(a.misses.split(",")) if a.misses else set()
    found = conversations(Path(a.data), only)
    if not found:
        print(f"locomo_eval: no LoCoMo conversation (a JSON with `qa`) in {a.data}", file=sys.stderr)
        return 2
    runs = [run(name, c, name in missing) for name, c in found]
    results = [r for one in runs for r in one["results"]]
    out = summary(results)
    out["conversations"] = {one["name"]: summary(one["results"])["all"] for one in runs}
    out["turns"] = sum(one["turns"] for one in runs)
    if a.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"LoCoMo10: {len(runs)} conversations, {out['turns']:,} turns stored with remember")
    print(table(out))
    for r in results:
        if r["shown"] is not None and r["category"] in CATEGORIES and not r["hit"]:
            print(f"\n--- {r['conversation']} category {r['category']}: {r['question']}\n"
                  f"answer: {r['answer']}; evidence: {r['evidence']}\n{r['shown']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
