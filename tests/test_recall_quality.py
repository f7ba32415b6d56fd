"""Recall quality: R@1/R@5 on the labelled coding set and on the conversational check.

The labelled set (tests/data/recall_labelled.json) is stored the way ingest and `remember`
store memories: transcript episodes session by session, notes one by one in time order with
the conversation they were stored in. The conversational check (tests/data/recall_dialogs.json)
stores every turn of a few multi-session dialogs with the MCP tool `remember` through
`openmemory serve` over real pipes (one server process per dialog session, as one Claude Code
session runs one server) and asks each question with the MCP tool `recall`.

    python3 -m tests.test_recall_quality          # the figures for every channel and addition
"""
import contextlib
import io
import json
import os
import re
import select
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from openmemory import recall, store
from tests.helpers import ROOT, TempHome, raw_db
from tests.helpers import figures as show

DATA = Path(__file__).parent / "data"
LABELLED = DATA / "recall_labelled.json"
DIALOGS = DATA / "recall_dialogs.json"
CHAT_PROJECT = "/home/dev/chat"

# What each row of the table ranks with: keyword arguments of recall.search. The last two
# rows take one addition away from the fusion each, to show what it brings.
NO_CONTEXT = recall.FIELD_WEIGHTS[:3] + (0.0,)
CHANNELS = {
    "BM25 alone": {"lexical_share": 1.0},
    "vector alone": {"lexical_share": 0.0},
    "fusion": {},
    "fusion without context": {"field_weights": NO_CONTEXT},
    "fusion without feedback": {"feedback": False},
}


# --------------------------------------------------------------------------------------
# The labelled coding set

def load_labelled(db):
    """Store the labelled set as ingest and `remember` would; returns (data, {(is_lesson, id): key})."""
    data = json.loads(LABELLED.read_text())
    sessions = {}
    for e in data["episodes"]:
        if e["kind"] != "note":
            sessions.setdefault(e["session"], []).append(e)
    for sid, eps in sorted(sessions.items(), key=lambda kv: min(e["at"] for e in kv[1])):
        eps = sorted(eps, key=lambda e: e["at"])
        db.replace_session({"id": sid, "path": f"/t/{sid}.jsonl", "mtime_ns": 0, "size": 0,
                            "cwd": eps[0]["cwd"], "title": eps[0]["title"]},
                           [{**e, "facts": {}} for e in eps], now=data["now"])
    names = {}
    for note in sorted((e for e in data["episodes"] if e["kind"] == "note"), key=lambda e: e["at"]):
        note_id = db.add_note(note["gist"], title=note["title"], cwd=note["cwd"], now=note["at"],
                              **_conversation(note))
        names[(False, note_id)] = note["key"]
    for eid, key in raw_db(db).execute("SELECT id, key FROM episodes WHERE kind != 'note'"):
        names[(False, eid)] = key
    for lesson in data["lessons"]:
        with db.transaction():
            lid = db.add_lesson(lesson["text"], "project" if lesson["cwd"] else "feedback", lesson["cwd"], 1.0, 1,
                                [], lesson["at"])
        names[(True, lid)] = lesson["key"]
    return data, names


def _conversation(note) -> dict:
    """The conversation argument of add_note, when this store knows conversations."""
    import inspect
    if "conversation" in inspect.signature(store.Store.add_note).parameters:
        return {"conversation": note["conversation"]}
    return {}


def labelled_recall(db, data, names, **options):
    """(R@1, R@5) over the labelled queries, ranking with recall.search(**options)."""
    r1 = r5 = 0
    for q in data["queries"]:
        hits = recall.search(db, q["query"], 5, q.get("cwd"), now=data["now"], **options)
        got = [names[(h["kind"] == "lesson", h["id"])] for h in hits]
        r1 += bool(got) and got[0] in q["want"]
        r5 += any(g in q["want"] for g in got)
    return r1 / len(data["queries"]), r5 / len(data["queries"])


# --------------------------------------------------------------------------------------
# The conversational check, through the MCP server

class Server:
    """`python -m openmemory serve` as Claude Code runs it: real pipes, one JSON message per line."""

    def __init__(self, env, cwd):
        self.proc = subprocess.Popen([sys.executable, "-m", "openmemory", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
        self.rid = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "recall-quality", "version": "1"}})

    def request(self, method, params):
        self.rid += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.rid, "method": method,
                                          "params": params}).encode() + b"\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        if not ready:
            raise AssertionError("no reply from the MCP server within a minute")
        reply = json.loads(self.proc.stdout.readline())
        if "error" in reply or reply["result"].get("isError"):
            raise AssertionError(f"the MCP server failed: {reply}")
        return reply["result"]

    def tool(self, name, **arguments) -> str:
        return self.request("tools/call", {"name": name, "arguments": arguments})["content"][0]["text"]

    def close(self):
        self.proc.stdin.close()
        code = self.proc.wait(60)
        for stream in (self.proc.stdout, self.proc.stderr):
            stream.close()
        if code:
            raise AssertionError(f"the MCP server exited with {code}")


def store_dialogs(env, cwd):
    """Remember every turn through the MCP server; returns (dialogs, {note id: (dialog, session, turn)})."""
    data = json.loads(DIALOGS.read_text())
    turns = {}
    for d in data["dialogs"]:
        for s, session in enumerate(d["sessions"], 1):
            server = Server(env, cwd)  # one Claude Code session, one server process
            try:
                for t, text in enumerate(session, 1):
                    said = server.tool("remember", text=text)
                    turns[int(re.search(r"note \[e(\d+)\]", said).group(1))] = (d["name"], s, t)
            finally:
                server.close()
    return data, turns


def dialog_recall(ask, data, turns):
    """(R@1, R@5) over the dialog questions; ask(question) returns the note ids found, best first."""
    r1 = r5 = n = 0
    for d in data["dialogs"]:
        for q in d["questions"]:
            wanted = {(d["name"], s, t) for s, t in q["evidence"]}
            got = [turns.get(i) for i in ask(q["question"])[:5]]
            r1 += bool(got) and got[0] in wanted
            r5 += any(g in wanted for g in got)
            n += 1
    return r1 / n, r5 / n


def ids_in(text: str) -> list:
    """The note ids of an MCP recall result, in order."""
    return [int(i) for i in re.findall(r"^\[e(\d+)\] note ·", text, re.M)]


# --------------------------------------------------------------------------------------

def measure(home=None, channels=CHANNELS, mcp_too=True) -> dict:
    """Every figure: {set: {row: (R@1, R@5)}}, each set in a fresh store under home."""
    with tempfile.TemporaryDirectory(prefix="om-quality-") as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, OPENMEMORY_HOME=str(tmp / "labelled"), CLAUDE_CONFIG_DIR=str(tmp / "claude"),
                   HOME=str(tmp / "user"))
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        out = {"labelled": {}, "dialogs": {}}
        with store.connect(tmp / "labelled" / "memory.db") as db:
            data, names = load_labelled(db)
            for row, options in channels.items():
                out["labelled"][row] = labelled_recall(db, data, names, **options)
        out["labelled_size"] = (len(data["queries"]), len(data["episodes"]))
        env["OPENMEMORY_HOME"] = str(tmp / "dialogs")
        env["CLAUDE_PROJECT_DIR"] = CHAT_PROJECT
        (tmp / "chat").mkdir()
        dialogs, turns = store_dialogs(env, str(tmp / "chat"))
        with store.connect(tmp / "dialogs" / "memory.db") as db:
            for row, options in channels.items():
                out["dialogs"][row] = dialog_recall(
                    lambda q: [h["id"] for h in recall.search(db, q, 5, CHAT_PROJECT, **options)], dialogs, turns)
        if mcp_too:
            server = Server(env, str(tmp / "chat"))
            try:
                out["dialogs"]["fusion through MCP"] = dialog_recall(
                    lambda q: ids_in(server.tool("recall", query=q)), dialogs, turns)
            finally:
                server.close()
        out["dialogs_size"] = (sum(len(d["questions"]) for d in dialogs["dialogs"]), len(turns))
        return out


def table(figures) -> str:
    lines = []
    for name, size in (("labelled", "labelled_size"), ("dialogs", "dialogs_size")):
        n, m = figures[size]
        lines.append(f"{name}: {n} queries over {m} memories")
        for row, (r1, r5) in figures[name].items():
            lines.append(f"  {row:<24} R@1 {r1:.2f}  R@5 {r5:.2f}")
    return "\n".join(lines)


class Quality(TempHome):
    def test_each_addition_earns_its_place_on_both_sets(self):
        figures = measure()
        show("\n" + table(figures))
        for name, floor in (("labelled", 0.9), ("dialogs", 0.65)):
            with self.subTest(set=name):
                rows = figures[name]
                self.assertGreater(rows["fusion"][1], rows["vector alone"][1])
                self.assertGreater(rows["fusion"][1], rows["fusion without context"][1])
                self.assertGreaterEqual(rows["fusion"][1], rows["fusion without feedback"][1])
                self.assertGreaterEqual(rows["fusion"][1], floor)  # before context: 0.88 and 0.50
        # Through MCP each recall strengthens what it returns, so later questions can rank a little
        # differently than in-process (measured 0.72 against 0.74); the floor holds for both.
        self.assertGreaterEqual(figures["dialogs"]["fusion through MCP"][1], 0.65)


if __name__ == "__main__":
    print(table(measure()))


class LoCoMoEvaluation(TempHome):
    """tests/locomo_eval.py on a conversation of LoCoMo's shape (the data set itself is not in the repository)."""

    CONVERSATION = {
        "speaker_a": "Ana", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I finally adopted a greyhound called Pixel!"},
                      {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats! Where did you find her?",
                       "blip_caption": "a photo of a grey dog on a sofa"},
                      {"speaker": "Ana", "dia_id": "D1:3", "text": "At the rescue shelter on Elm Street."}],
        "session_2_date_time": "9:00 am on 20 May, 2023",
        "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "My pottery class starts on Monday."},
                      {"speaker": "Ana", "dia_id": "D2:2", "text": "Nice, send me a picture of your first bowl."}],
        "qa": [{"question": "What is the name of Ana's greyhound?", "answer": "Pixel", "evidence": ["D1:1"],
                "category": 4},
               {"question": "When does Ben's pottery class start?", "answer": "Monday", "evidence": ["D2:1"],
                "category": 2},
               {"question": "What did Ben adopt?", "evidence": ["D1:1"], "category": 5,
                "adversarial_answer": "a greyhound"}]}

    def test_every_turn_is_remembered_and_a_question_hits_when_an_evidence_turn_is_shown(self):
        from tests import locomo_eval
        self.assertEqual(locomo_eval.note_text(self.CONVERSATION["session_1"][1], "1:56 pm on 8 May, 2023"),
                         "Ben, 1:56 pm on 8 May, 2023: Congrats! Where did you find her? "
                         "[shares a photo of a grey dog on a sofa]")
        found = locomo_eval.run("t", self.CONVERSATION)
        self.assertEqual(found["turns"], 5)
        by_question = {r["question"]: r for r in found["results"]}
        for question in ("What is the name of Ana's greyhound?", "When does Ben's pottery class start?"):
            with self.subTest(question=question):
                self.assertTrue(by_question[question]["hit"])
                self.assertTrue(by_question[question]["answer_hit"])
        figures = locomo_eval.summary(found["results"])
        self.assertEqual((figures["all"]["n"], figures["all"]["r5"]), (2, 1.0))     # category 5 counted apart
        self.assertEqual(figures["adversarial"]["n"], 1)

    def test_without_the_data_it_says_where_to_get_it(self):
        from tests import locomo_eval
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = locomo_eval.main([str(self.home / "no-locomo-here")])
        self.assertEqual(code, 2)
        self.assertIn("github.com/snap-research/locomo", err.getvalue())
