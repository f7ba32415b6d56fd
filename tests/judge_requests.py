"""The judge's real requests over the dev corpus, and a replay of recorded answers (issue 24).

    python3 -m tests.judge_requests dump --sessions tune|heldout --out FILE
    python3 -m tests.judge_requests replay --sessions tune|heldout --answers FILE [--json]

A capable model's answers to every request of the two splits, recorded blind (2026-12-05,
`_v17`, on the definitions of judge38; the failures' requests answered again blind on
2026-12-07, when they began to show the person's next message, again when they began to show
the agent's next calls, and again when they began to show the person's later messages), are in
tests/data/learning/judge/answers_<split>.jsonl.

`dump` ingests the sessions of a split into a private home and writes, one JSON object a
line, every request the judge would send on the first night over them (no cap): each
message the person typed that can carry something (corrections, doubtful, unsettled, then
settled as nothing by the rules), then each repeated failure's candidate that consolidation
makes, then each failure of one session worth a question (`judge.one_session`). The format:

    {"key": "<item id>", "kind": "message"|"failure"|"same", "session": "<session id>",
     "system": "...", "user": "...", "max_tokens": 300}

`key` is the episode's event key for a message (`correction:<anchor>`) and, for a repeated
failure, the key of the lesson's first error episode; it is also the `Item:` line of the
user text, which is how the replay finds the answer to a request it receives. The question
whether a project's lessons say the same (judge.judge_same, `same:<hash>` of their first
sources' keys) depends on the lessons the night made, so it is not dumped: a replay's
`--unanswered` lists those it asked.

`replay` runs that first night again, for real, with the judge turned on as an
OpenAI-compatible endpoint: a local fake server (tests/llm_server.py) that answers each
request it receives with the recorded answer of the same key — one JSON object a line,
`{"key": "...", "answer": <the model's reply: the JSON object asked for, or its text>}` —
and `{}` (no verdict: the rules' result stands) where no answer was recorded. It reports
what a person would see: the lessons live and candidate, verbatim, with the verdicts the
judge gave; and, when the labels are at hand (tests/learning_eval.py), the same figures as
the rules alone, scored as learning_eval scores them (`--labels`, the split's by default):
correction precision and recall as the night reads the messages (the judge's verdict where
it gave one, else the rules'), the share of labelled lasting items whose episode feeds a
live lesson (and a live one or a candidate), and how many rendered lessons came from a
labelled lasting item. A request asked again after its lesson was refused (judge.asked_again)
is answered by the line whose key is its item's with `#again` after it; `--unanswered FILE`
writes every request that had no recorded answer, in dump's format, to record them. The session split is learning_eval's (a session's id's SHA-256
divisible by 3 is set aside).
"""
import argparse
import json
import os
import sys
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from openmemory import episodes, ingest, judge, llm, sleep, store, transcripts
from openmemory.clock import iso, parse_time
from tests.learning_eval import LABELS, environment, private_home as _private_home, split_of
from tests.llm_server import ModelServer

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("OPENMEMORY_DEV_CORPUS") or ROOT.parent / "shared" / "corpus" / "dev" / "entireio__cli")
NO_VERDICT = "{}"           # the answer where none was recorded: read_answer finds no verdict in it


def session_files(which: str, corpus: Path = CORPUS) -> list:
    """The split's sessions of the dev corpus; of another folder (--corpus), every session in it."""
    return sorted(p for p in corpus.glob("*.jsonl") if corpus != CORPUS or split_of(p.stem) == which)


def private_home():
    """A temporary home for a night (learning_eval's)."""
    return _private_home(prefix="om-judge-")


def night_of(files: list) -> str:
    """03:00 UTC the day after the last session ended: a first night over all of them."""
    ended = max((transcripts.parse(p).ended or "" for p in files), default="")
    day = parse_time(ended) + timedelta(days=1) if ended else parse_time("2026-12-01T00:00:00Z")
    return iso(day.replace(hour=3, minute=0, second=0, microsecond=0))


def _line(request: judge.Request, session: str) -> dict:
    return {"key": request.item, "kind": request.kind, "session": session, "system": request.system,
            "user": request.user, "max_tokens": request.max_tokens}


def requests_of(files: list) -> list:
    """Every request the judge sends on the first night over these sessions, in the order sent."""
    now = night_of(files)
    out = []
    with private_home():
        with store.connect() as db:
            with judge_on():
                ingest.ingest(db, [str(p) for p in files], now=now)
            with db.transaction():
                sleep.decay(db, now)
            episodes = judge.messages(db, now)
            for ep, request in zip(episodes, judge.message_requests(db, episodes)):
                out.append(_line(request, ep.get("session_id") or ""))
            sleep.consolidate(db, now)
            sources = {e["id"]: e for e in db.episodes(kind="error")}
            for lesson, request in judge.failure_requests(db):
                first = next((sources[i] for i in lesson["sources"] if i in sources), {})
                out.append(_line(request, first.get("session_id") or ""))
            for members, request in judge.one_session_requests(db, now):
                out.append(_line(request, members[0].get("session_id") or ""))
    return out


def dump(which: str, out: Path, corpus: Path = CORPUS) -> int:
    lines = requests_of(session_files(which, corpus))
    keys = [r["key"] for r in lines]
    if len(keys) != len(set(keys)):
        raise SystemExit(f"two requests share a key: {sorted(k for k in keys if keys.count(k) > 1)[:3]}")
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    return len(lines)


# --------------------------------------------------------------------------------------
# Replay

def load_answers(path: Path) -> dict:
    """{key: the model's reply as text} from an answers file (an answer given as an object is
    the JSON text of it). A line that is not an object with a key is an error, said with its number."""
    answers = {}
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            raise SystemExit(f"{path}:{n}: not JSON ({e})") from None
        if not isinstance(row, dict) or not isinstance(row.get("key"), str) or "answer" not in row:
            raise SystemExit(f"{path}:{n}: each line is {{\"key\": ..., \"answer\": ...}}")
        answer = row["answer"]
        answers[row["key"]] = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
    return answers


class Replayer:
    """The fake endpoint's answer: the recorded reply to the request's item, else no verdict."""

    def __init__(self, answers: dict):
        self.answers = answers
        self.asked, self.missing = [], []
        self.unanswered = []        # the requests with no recorded answer, in the dump's format

    def __call__(self, body: dict) -> str:
        user = body["messages"][-1]["content"]
        key = answer_key(user)
        if key is None:
            return "Replayed night: no gist recorded."      # a session gist: not the judge's, not measured
        self.asked.append(key)
        if key not in self.answers:
            if key not in self.missing:
                self.missing.append(key)
                system = body["messages"][0]["content"]
                kind = "failure" if system.startswith(judge.FAILURE_SYSTEM[:30]) else \
                    "same" if system == judge.SAME_SYSTEM else "message"
                self.unanswered.append({"key": key, "kind": kind, "session": "", "system": system, "user": user,
                                        "max_tokens": body.get("max_tokens")})
            return NO_VERDICT
        return self.answers[key]


def answer_key(user: str) -> str | None:
    """The key of a request's recorded answer: its item, and `#again` after it for the request asked
    again after a refused lesson (judge.asked_again)."""
    key = judge.item_of(user)
    return None if key is None else key + AGAIN if judge.asked_again_of(user) else key


AGAIN = "#again"


def judge_on():
    """The environment of a run with a judge named (what ingest.for_judge reads): the messages the
    rules settled as nothing are kept for it. The endpoint is never called here."""
    return environment(OPENMEMORY_LLM_URL="http://127.0.0.1:9/v1/chat/completions", OPENMEMORY_LLM_MODEL="dump")


@contextmanager
def replayed_model(answers: dict):
    """The environment of a judge at a fake endpoint serving these answers, with no cap that
    could leave a request unasked; yields the Replayer (what was asked, what had no answer)."""
    replayer = Replayer(answers)
    with ModelServer("ok") as server:
        server.answer = replayer
        with environment(OPENMEMORY_LLM_URL=server.url, OPENMEMORY_LLM_MODEL="recorded-judge",
                         OPENMEMORY_LLM_CALLS="100000", OPENMEMORY_LLM_SECONDS="100000",
                         OPENMEMORY_LLM_TOKENS="1000000000"):
            yield replayer


def replay_night(files: list, answers: dict) -> dict:
    """The first night over these sessions with the recorded judge: the lessons (live and
    candidate, with what the judge said of each source) and what was asked."""
    now = night_of(files)
    with replayed_model(answers) as replayer, private_home():
        with store.connect() as db:
            ingest.ingest(db, [str(p) for p in files], now=now)
            model = llm.open_model(db, now)
            report = sleep.night(db, now, model=model)
            llm.close_model(db, model)
            lessons = db.all_lessons()
            eps = {e["id"]: e for e in db.episodes(light=True)}     # a message the rules settled as nothing too
    shown = []
    for ls in lessons:
        if ls["vetoed"] or ls["archived"]:
            continue
        sources = [eps[i] for i in ls["sources"] if i in eps]
        shown.append({"id": ls["id"], "text": ls["text"], "state": ls["state"], "kind": ls["kind"], "cwd": ls["cwd"],
                      "seen": ls["seen"], "judge": (ls.get("backing") or {}).get("judge"),
                      "sources": [{"key": e["key"], "said": " ".join(str(e["facts"].get("said") or
                                                                         e["facts"].get("command") or "").split())[:160],
                                   "judge": e["facts"].get("judge")} for e in sources]})
    judged = [e for e in eps.values() if e["kind"] == "correction" and e["facts"].get("judge")]
    return {"now": now, "asked": len(replayer.asked), "missing": len(replayer.missing), "asked_items": set(replayer.asked),
            "unanswered": replayer.unanswered,
            "judged_messages": len(judged), "judged_corrections": sum(bool(e["facts"]["judge"].get("correction"))
                                                                     for e in judged),
            "lessons": shown, "episodes": eps, "report": report}


# --------------------------------------------------------------------------------------
# Against the labels (tests/learning_eval.py reads them; its item keys are used here)

def is_correction(ep: dict) -> bool:
    """Whether the night takes a correction episode for a correction: the judge's verdict where
    it gave one, else the rules' (a doubtful or a `not` one is not)."""
    facts = ep["facts"]
    judged = facts.get("judge")
    if isinstance(judged, dict) and "correction" in judged:
        return bool(judged["correction"])
    if facts.get("decided") == "model":
        return not facts.get("doubtful")
    return not facts.get("doubtful") and facts.get("verdict", "correction") in ("correction", "standing")


def label_figures(files: list, labels: dict, night: dict) -> dict:
    """Detection precision and recall as the night read the messages (judge or rules), the share
    of labelled lasting items whose episode feeds a live lesson (and a live one or a candidate),
    and the share of live lessons made from a labelled lasting item."""
    from tests import learning_eval as le
    keys, failure_keys = {}, {}
    for path in files:
        for s in episodes.surprises_of(transcripts.parse(path), settled=True):
            if s.kind == "correction":
                for key in le._surprise_keys(s):
                    keys.setdefault((path.stem, key), f"correction:{s.anchor}")
        failure_keys[path.stem] = le._failure_keys(path)
    by_key = {e["key"]: e for e in night["episodes"].values()}
    tp = fp = fn = 0
    labelled, lasting_keys = set(), set()
    for item in labels["messages"]:
        if item.get("repeat_of"):
            continue
        key = keys.get((item["session"], le._item_key(item)))
        labelled.add(key)
        ep = by_key.get(key)
        hit, truth = ep is not None and is_correction(ep), item["verdict"] == "correction"
        tp, fp, fn = tp + (hit and truth), fp + (hit and not truth), fn + (truth and not hit)
        if item.get("lasting") and key:
            lasting_keys.add(key)
    fp += sum(1 for e in by_key.values() if e["kind"] == "correction" and e["key"] not in labelled
              and is_correction(e))
    for item in labels.get("failures", []):
        if item.get("lasting"):
            key = failure_keys.get(item["session"], {}).get(item["tool_use_id"])
            if key:
                lasting_keys.add(key)
    states = {ls["id"]: ls["state"] for ls in night["lessons"]}
    lost = {}
    for item in [i for i in labels["messages"] if i.get("lasting") and not i.get("repeat_of")]:
        stage = _stage(by_key.get(keys.get((item["session"], le._item_key(item)))), states, night)
        lost[stage] = lost.get(stage, 0) + 1
    for item in [i for i in labels.get("failures", []) if i.get("lasting")]:
        stage = _stage(by_key.get(failure_keys.get(item["session"], {}).get(item["tool_use_id"])), states, night,
                       failure=True)
        lost[stage] = lost.get(stage, 0) + 1
    n_lasting = sum(1 for i in labels["messages"] if i.get("lasting") and not i.get("repeat_of")) + \
        sum(1 for i in labels.get("failures", []) if i.get("lasting"))
    reached = [states.get(by_key[k]["consolidated"]) for k in lasting_keys if k in by_key]
    live = [ls for ls in night["lessons"] if ls["state"] == "live"]
    from_lasting = [ls for ls in live if any(src["key"] in lasting_keys for src in ls["sources"])]
    return {"tp": tp, "fp": fp, "fn": fn,
            "precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0,
            "lasting": n_lasting, "lasting_live": reached.count("live"),
            "lasting_live_or_candidate": reached.count("live") + reached.count("candidate"),
            "rendered": len(live), "rendered_from_lasting": len(from_lasting), "stages": lost}


STAGES = ("live", "candidate", "never asked: no correction episode", "never asked: no failure episode",
          "never asked: no failure candidate", "asked, no answer used", "judged not a correction", "judged not lasting", "judged lasting, no lesson")


def _stage(ep: dict | None, states: dict, night: dict, failure: bool = False) -> str:
    """Where a labelled lasting item got to on the night: a live lesson or a candidate, or the
    stage that lost it (counts only: no label's or answer's text). failure: a labelled failure,
    whose verdict, when a judge read it, is kept on its error episode as on a correction's."""
    state = states.get((ep or {}).get("consolidated"))
    if state in ("live", "candidate"):
        return state
    if ep is None:
        return "never asked: no failure episode" if failure else "never asked: no correction episode"
    judged = ep["facts"].get("judge")
    if ep["kind"] != "correction":
        if not isinstance(judged, dict):        # one session's failure asked: its first error is the item
            return "asked, no answer used" if ep.get("key") in night.get("asked_items", ()) \
                else "never asked: no failure candidate"
        return "judged lasting, no lesson" if judged.get("lasting") else "judged not lasting"
    if not isinstance(judged, dict):
        return "asked, no answer used"
    if not judged.get("correction"):
        return "judged not a correction"
    return "judged lasting, no lesson" if judged.get("lasting") else "judged not lasting"


def figures_line(name: str, f: dict) -> str:
    n = f["lasting"] or 1
    return (f"| {name} | {f['precision']:.2f} ({f['tp']} found, {f['fp']} false) | {f['recall']:.2f} ({f['fn']} missed) "
            f"| {f['lasting_live'] / n:.2f} ({f['lasting_live']} of {f['lasting']}) "
            f"| {f['lasting_live_or_candidate'] / n:.2f} ({f['lasting_live_or_candidate']}) "
            f"| {f['rendered_from_lasting']} of {f['rendered']} |")


def report(which: str, night: dict) -> str:
    lessons = night["lessons"]
    live = [ls for ls in lessons if ls["state"] == "live"]
    cand = [ls for ls in lessons if ls["state"] == "candidate"]
    judged = "with the recorded judge" if night["asked"] > night["missing"] else "rules alone (no answer recorded)"
    lines = [f"# First night over the {which} sessions, {judged}", "",
             f"- requests answered from the record: {night['asked'] - night['missing']} of {night['asked']}"
             f" ({night['missing']} with no recorded answer: the rules' result stands)",
             f"- messages judged: {night['judged_messages']} ({night['judged_corrections']} corrections)",
             f"- lessons: {len(live)} live (rendered), {len(cand)} candidates", ""]
    for title, group in (("Live (rendered)", live), ("Candidates", cand)):
        lines.append(f"## {title}")
        for ls in group:
            lines.append(f"- [{ls['kind']}, seen {ls['seen']}] {ls['text']}")
            for src in ls["sources"]:
                said = f" — judge: {json.dumps(src['judge'], sort_keys=True)}" if src.get("judge") else ""
                lines.append(f"  - {src['said']}{said}")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("dump", help="write the judge's requests for a split's sessions")
    p.add_argument("--sessions", choices=("tune", "heldout"), default="tune")
    p.add_argument("--corpus", type=Path, default=CORPUS,
                   help="another folder of transcripts, every session of it (then --sessions is ignored)")
    p.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("replay", help="the first night again with recorded answers")
    p.add_argument("--sessions", choices=("tune", "heldout"), default="tune")
    p.add_argument("--corpus", type=Path, default=CORPUS,
                   help="another folder of transcripts, every session of it (then give --labels)")
    p.add_argument("--answers", type=Path, required=True, action="append",
                   help="a file of recorded answers (given again for more: a later file's answer wins)")
    p.add_argument("--labels", type=Path, help="hand labels to score against (the tune split's by default)")
    p.add_argument("--unanswered", type=Path, help="write the requests that had no recorded answer here, "
                   "in dump's format, to record them")
    p.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.verb == "replay" and args.labels is None:
        args.labels = LABELS[args.sessions]
    if args.verb == "dump":
        n = dump(args.sessions, args.out, args.corpus)
        print(f"{n} requests for {len(session_files(args.sessions, args.corpus))} sessions in {args.out}",
              file=sys.stderr)
        return 0
    files = session_files(args.sessions, args.corpus)
    answers = {}
    for path in args.answers:
        answers.update(load_answers(path))
    night = replay_night(files, answers)
    if args.unanswered:
        with open(args.unanswered, "w", encoding="utf-8") as f:
            for line in night["unanswered"]:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
    table = ""
    if args.labels and args.labels.is_file():
        labels = json.loads(args.labels.read_text(encoding="utf-8"))
        rules = label_figures(files, labels, replay_night(files, {}))
        judged = label_figures(files, labels, night)
        night["figures"] = {"rules": rules, "judge": judged}
        table = "\n".join(["| night | correction precision | recall | lasting live | live or candidate "
                           "| rendered from a lasting item |", "|---|---|---|---|---|---|",
                           figures_line("rules alone", rules), figures_line("with the recorded judge", judged), "",
                           "Where the labelled lasting items got to, with the recorded judge (counts): "
                           + "; ".join(f"{stage} {judged['stages'][stage]}" for stage in STAGES
                                       if judged["stages"].get(stage)), ""])
    night.pop("episodes")
    night.pop("asked_items")
    night.pop("unanswered")
    night.pop("report")
    print(json.dumps(night, ensure_ascii=False, indent=1) if args.json else table + "\n" + report(args.sessions, night))
    return 0


if __name__ == "__main__":
    sys.exit(main())
