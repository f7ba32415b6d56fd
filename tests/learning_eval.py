"""What openmemory learns from real sessions, measured against hand labels (issue 24).

    python3 -m tests.learning_eval [--labels PATH] [--sessions tune|heldout] [--corpus DIR]
                                   [--verdicts PATH] [--json]

The rules alone (no model), over the real sessions of a team (../shared/corpus/dev): every
message the labels list and every failed call, read as openmemory reads them, and one first
night of sleep over all of them, in a private home. It reports:

- **correction detection**: precision and recall of what the rules call a correction against
  the labels, scored by ARCHITECTURE.md, "What openmemory learns from":
  - an item is a record that may hold the person's words (a prompt, a queued message, text
    typed beside a tool result, the words typed into a refusal dialog) or a refused call;
    what is not the person's (hook text, a skill's body, a plan approved, an interrupt
    marker) is an item too, whose truth is "not a correction": a correction found there is
    a false one;
  - a refused call is its own item, matched by its tool-use id, whether or not words were
    typed; a refusal with words counts as found only when the correction carries those
    words (not the next prompt's): a run of refusals is that many items;
  - one message sent several times is one message: an item that repeats another (`repeat_of`)
    is not scored itself; a correction found on it credits the message it repeats, and one
    found on both is a false one (a duplicate);
  - a correction the rules find on no labelled record is a false one (`unlabelled`);
  - "doubtful" (left for a model) is not found.
- **lasting lessons**: of the labelled lasting items (corrections and failures), the share
  whose episode fed a lesson that is live, and live or a candidate, after one first night.
  A lesson's state is its `state` column where the store has one; before it does, a lesson
  is live when something backs it by the issue's rules (the person's standing words, or it
  came up in two sessions) and a candidate otherwise.
- **rendered lessons**: every live lesson (what reaches the agent's memory) and every
  candidate, verbatim, with the reviewer's verdict from the verdicts file (keep, edit, drop,
  harmful; none yet: "unreviewed"). Kept: the share of rendered lessons a reviewer keeps as
  written.

The sessions: `tune` (default) are the labelled two thirds, whose session id's SHA-256 is not
divisible by 3; `heldout` the third set aside (labels in tests/data/learning/heldout_labels.json:
measured, never read while tuning).
Pure reading but for the first night, which writes a memory in a temporary home it removes.
"""
import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from openmemory import episodes, ingest, sleep, store, transcripts

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).with_name("data") / "learning"
LABELS = {"tune": DATA / "dev_labels.json", "heldout": DATA / "heldout_labels.json"}
VERDICTS = {"tune": DATA / "dev_verdicts.json", "heldout": DATA / "heldout_verdicts.json"}
CORPUS = ROOT.parent / "shared" / "corpus" / "dev" / "entireio__cli"
if os.environ.get("OPENMEMORY_DEV_CORPUS"):
    CORPUS = Path(os.environ["OPENMEMORY_DEV_CORPUS"])

# The targets for the rules alone.
TARGETS = {"precision": 0.75, "recall": 0.65, "kept": 0.90, "harmful": 0, "lasting_live_or_candidate": 0.50}
VERDICT_WORDS = ("keep", "edit", "drop", "harmful")


def split_of(session_id: str) -> str:
    """'heldout' for a session set aside (its id's SHA-256 divisible by 3), else 'tune'."""
    return "heldout" if int(hashlib.sha256(session_id.encode()).hexdigest(), 16) % 3 == 0 else "tune"


def session_files(labels: dict, which: str, corpus: Path = CORPUS) -> list:
    """The transcripts measured: the labels' sessions, else every session of the split."""
    ids = labels.get("sessions") or sorted(p.stem for p in corpus.glob("*.jsonl") if split_of(p.stem) == which)
    ids = [sid["session"] if isinstance(sid, dict) else sid for sid in ids]     # an id, or {"session": id, ...}
    return [corpus / f"{sid}.jsonl" for sid in ids]


# --------------------------------------------------------------------------------------
# Detection: what the rules call a correction, item by item

def _item_key(item: dict) -> str:
    """A label item's identity as the reading gives it: a refused call by its tool-use id, a
    queued message by its time, any other record by its uuid."""
    if item.get("tool_use_id") and str(item.get("where", "")).startswith(("refusal", "question")):
        return item["tool_use_id"]
    return item.get("record") or f"queue-operation@{item.get('timestamp')}"


def _surprise_keys(s) -> list:
    """The identities a correction surprise answers to (its anchor, its call, a queued time)."""
    keys = [s.anchor]
    if s.legacy:
        keys.append(s.legacy)
    if s.anchor.startswith("queued:"):
        keys.append("queue-operation@" + s.anchor.split(":", 1)[1].rsplit(":", 1)[0])
    return keys


def _norm(text: str) -> str:
    return " ".join((text or "").split()).lower()


def detection(files: list, labels: dict) -> dict:
    """Precision and recall of the rules' corrections against the labels, with every miss and
    every false one listed (scored as the module's docstring says)."""
    items_by_session: dict = {}
    for item in labels["messages"]:
        items_by_session.setdefault(item["session"], []).append(item)
    tp = fp = fn = 0
    missed, false, found_list = [], [], []
    for path in files:
        session = transcripts.parse(path)
        sid = path.stem
        found = {}
        for s in episodes.surprises_of(session):
            if s.kind == "correction" and s.verdict in ("correction", "standing"):
                for key in _surprise_keys(s):
                    found.setdefault(key, s)
        used = set()
        items = items_by_session.get(sid, [])
        by_record = {}
        for item in items:
            by_record.setdefault(_item_key(item), item)
        credited = set()
        for item in items:                              # repeats first: they credit their original
            if not item.get("repeat_of"):
                continue
            s = found.get(_item_key(item))
            if s is None:
                continue
            used.add(id(s))
            original = by_record.get(item["repeat_of"])
            if original is not None and found.get(_item_key(original)) is not None \
                    and found.get(_item_key(original)) is not s:
                fp += 1
                false.append({"session": sid, "text": item["text"][:160], "why": "duplicate of a message found"})
            else:
                credited.add(item["repeat_of"])
        for item in items:
            if item.get("repeat_of"):
                continue
            key = _item_key(item)
            s = found.get(key)
            if s is not None:
                used.add(id(s))
            hit = s is not None or key in credited
            if hit and item.get("where") == "refusal-with-words" and s is not None:
                hit = _norm(item["text"])[:60] in _norm(s.text)      # the words typed into the dialog
            truth = item["verdict"] == "correction"
            row = {"session": sid, "key": key, "where": item.get("where"), "author": item.get("author"),
                   "form": item.get("form"), "text": item["text"][:160]}
            if truth and hit:
                tp += 1
                found_list.append(dict(row, rule=s.form if s else "repeat"))
            elif truth:
                fn += 1
                missed.append(row)
            elif hit:
                fp += 1
                false.append(dict(row, rule=s.form if s else "repeat"))
        for s in {id(s): s for s in found.values()}.values():
            if id(s) not in used:
                fp += 1
                false.append({"session": sid, "key": s.anchor, "text": (s.text or s.command)[:160],
                              "rule": s.form, "why": "unlabelled"})
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall,
            "missed": missed, "false": false, "found": found_list}


# --------------------------------------------------------------------------------------
# A first night: which labelled lasting items reach a lesson, and what is rendered

@contextmanager
def environment(**values):
    """os.environ with these values set, as it was after."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def private_home(prefix: str = "om-eval-"):
    """OPENMEMORY_HOME, CLAUDE_CONFIG_DIR and HOME in a temporary folder, restored after."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp, \
            environment(OPENMEMORY_HOME=os.path.join(tmp, "om-home"), CLAUDE_CONFIG_DIR=os.path.join(tmp, "claude"),
                        HOME=os.path.join(tmp, "user-home")):
        yield Path(tmp)


def state_of(lesson: dict, sources: list) -> str:
    """live | candidate | vetoed | archived: the `state` column where the store has one; before
    it does, live when the issue's rules back it (the person's standing words, or two sessions)."""
    if lesson.get("vetoed"):
        return "vetoed"
    if lesson.get("archived"):
        return "archived"
    if lesson.get("state"):
        return lesson["state"]
    standing = any(e["kind"] == "correction" and e["facts"].get("standing") for e in sources)
    return "live" if standing or (lesson.get("seen") or 0) >= 2 else "candidate"


def _failure_keys(path: Path) -> dict:
    """{tool-use id: the key of the error episode that holds that failed call}."""
    session = transcripts.parse(path)
    out = {}
    for ep in episodes.episodes_of(session, session.id):
        if ep["kind"] == "error":
            for call_id in ep["facts"].get("calls") or []:
                out[call_id] = ep["key"]
            if ep.get("legacy_key"):
                out.setdefault(ep["legacy_key"].split(":", 1)[1], ep["key"])
    return out


def first_night(files: list, labels: dict) -> dict:
    """Ingest every session, sleep once after the last, and follow each lasting item."""
    keys = {}                                           # (session, item key) -> correction episode key
    failure_keys = {}
    ended = ""
    for path in files:
        session = transcripts.parse(path)
        ended = max(ended, session.ended or "")
        for s in episodes.surprises_of(session):
            if s.kind == "correction":
                for key in _surprise_keys(s):
                    keys.setdefault((path.stem, key), f"correction:{s.anchor}")
        failure_keys[path.stem] = _failure_keys(path)
    now = _day_after(ended)
    with private_home():
        with store.connect() as db:
            ingest.ingest(db, [str(p) for p in files], now=now)
            sleep.night(db, now)
            lessons = db.all_lessons()
            eps = {e["id"]: e for e in db.episodes()}
    by_key = {e["key"]: e for e in eps.values()}
    states = {}
    for ls in lessons:
        states[ls["id"]] = state_of(ls, [eps[i] for i in ls["sources"] if i in eps])
    lasting = []
    for item in labels["messages"]:
        if item.get("lasting") and not item.get("repeat_of"):
            key = keys.get((item["session"], _item_key(item)))
            lasting.append(("correction", item, by_key.get(key)))
    for item in labels.get("failures", []):
        if item.get("lasting"):
            key = failure_keys.get(item["session"], {}).get(item["tool_use_id"])
            lasting.append(("failure", item, by_key.get(key)))
    rows = []
    for kind, item, ep in lasting:
        lesson_id = ep["consolidated"] if ep else None
        state = states.get(lesson_id) if lesson_id else None
        text = next((ls["text"] for ls in lessons if ls["id"] == lesson_id), None)
        rows.append({"kind": kind, "session": item["session"], "labelled": item.get("lesson"),
                     "episode": bool(ep), "state": state, "lesson": text})
    shown = [{"id": ls["id"], "text": ls["text"], "state": states[ls["id"]], "kind": ls["kind"],
              "cwd": ls["cwd"], "seen": ls["seen"],
              "sources": [_source_line(eps[i]) for i in ls["sources"] if i in eps]}
             for ls in lessons if states[ls["id"]] in ("live", "candidate")]
    n = len(rows) or 1
    return {"now": now, "lasting": rows,
            "live": sum(r["state"] == "live" for r in rows) / n,
            "live_or_candidate": sum(r["state"] in ("live", "candidate") for r in rows) / n,
            "lessons": shown}


def _source_line(ep: dict) -> str:
    f = ep["facts"]
    if ep["kind"] == "correction":
        return "said: " + " ".join((f.get("said") or f.get("command") or "").split())[:120]
    return f"{ep['kind']}: " + " ".join((f.get("command") or "").split())[:60] + " | " + \
        " / ".join(f.get("error") or [])[:100]


def _day_after(ended: str) -> str:
    """03:00 UTC the day after the last session ended: a first night over all of them."""
    from datetime import timedelta
    from openmemory.clock import iso, parse_time
    day = parse_time(ended) + timedelta(days=1) if ended else parse_time("2026-12-01T00:00:00Z")
    return iso(day.replace(hour=3, minute=0, second=0, microsecond=0))


# --------------------------------------------------------------------------------------
# Verdicts: what a careful reviewer keeps

def load_verdicts(path: Path) -> dict:
    """{lesson text: {"verdict": keep|edit|drop|harmful, "why": ...}} (none when absent)."""
    if not path or not Path(path).is_file():
        return {}
    return json.loads(Path(path).read_text(encoding="utf-8")).get("lessons", {})


def judged(lessons: list, verdicts: dict) -> dict:
    """The rendered (live) lessons' verdicts, counted."""
    rendered = [ls for ls in lessons if ls["state"] == "live"]
    counts = {w: 0 for w in VERDICT_WORDS + ("unreviewed",)}
    for ls in lessons:
        ls["verdict"] = (verdicts.get(ls["text"]) or {}).get("verdict", "unreviewed")
        ls["why"] = (verdicts.get(ls["text"]) or {}).get("why", "")
    for ls in rendered:
        counts[ls["verdict"]] += 1
    n = len(rendered)
    return {"rendered": n, "counts": counts, "kept": counts["keep"] / n if n else 1.0,
            "harmful": counts["harmful"], "unreviewed": [ls["text"] for ls in lessons if ls["verdict"] == "unreviewed"]}


# --------------------------------------------------------------------------------------
# The whole measurement, and its report

def measure(labels_path: Path, which: str = "tune", corpus: Path = CORPUS, verdicts_path: Path | None = None) -> dict:
    labels = json.loads(Path(labels_path).read_text(encoding="utf-8"))
    files = session_files(labels, which, corpus)
    missing = [str(p) for p in files if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"{len(missing)} sessions not found, e.g. {missing[0]}")
    det = detection(files, labels)
    night = first_night(files, labels)
    review = judged(night["lessons"], load_verdicts(verdicts_path or VERDICTS.get(which)))
    return {"sessions": len(files), "which": which, "detection": det, "night": night, "review": review}


def report(m: dict) -> str:
    """The figures, then every miss, false correction and lesson, for a reviewer."""
    d, n, r = m["detection"], m["night"], m["review"]
    rows = n["lasting"]
    lines = [f"# Learning from {m['sessions']} {m['which']} sessions, rules alone", "",
             "| figure | value | target |", "|---|---|---|",
             f"| correction precision | {d['precision']:.2f} ({d['tp']} found, {d['fp']} false) | ≥ {TARGETS['precision']} |",
             f"| correction recall | {d['recall']:.2f} ({d['fn']} missed) | ≥ {TARGETS['recall']} |",
             f"| lasting lessons live | {n['live']:.2f} ({sum(x['state'] == 'live' for x in rows)} of {len(rows)}) | |",
             f"| lasting lessons live or candidate | {n['live_or_candidate']:.2f} "
             f"({sum(x['state'] in ('live', 'candidate') for x in rows)} of {len(rows)}) | ≥ {TARGETS['lasting_live_or_candidate']} |",
             f"| rendered lessons kept as written | {r['kept']:.2f} ({r['counts']['keep']} of {r['rendered']}) | ≥ {TARGETS['kept']} |",
             f"| rendered lessons harmful | {r['harmful']} | {TARGETS['harmful']} |", ""]
    lines += ["## Lessons after the first night (verbatim)", ""]
    for ls in n["lessons"]:
        lines.append(f"- [{ls['state']}, {ls['verdict']}] {ls['text']}" + (f"  ({ls['why']})" if ls["why"] else ""))
        lines += [f"    - {s}" for s in ls["sources"][:3]]
    lines += ["", "## Labelled lasting items", ""]
    for x in rows:
        lines.append(f"- {x['kind']} {x['session'][:8]}: {x['state'] or 'no lesson'}"
                     f"{'' if x['episode'] else ' (no episode)'}: {x['lesson'] or ''}\n    label: {x['labelled']}")
    lines += ["", "## Missed corrections", ""]
    lines += [f"- {x['session'][:8]} {x['where']} ({x['form']}): {x['text']}" for x in d["missed"]]
    lines += ["", "## False corrections", ""]
    lines += [f"- {x['session'][:8]} {x.get('where') or x.get('why')} [{x.get('rule')}]: {x['text']}" for x in d["false"]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tests.learning_eval", description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", choices=("tune", "heldout"), default="tune")
    ap.add_argument("--labels", type=Path, help="labels JSON (default: the split's)")
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--verdicts", type=Path, help="reviewer's verdicts JSON (default: the split's)")
    ap.add_argument("--json", action="store_true", help="everything measured, as JSON")
    a = ap.parse_args(argv)
    m = measure(a.labels or LABELS[a.sessions], a.sessions, a.corpus, a.verdicts)
    sys.stdout.write(json.dumps(m, indent=1, ensure_ascii=False) + "\n" if a.json else report(m))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
