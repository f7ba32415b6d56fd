"""Correction detection, measured on every human-typed message of the real corpus, labelled
by the written definition (ARCHITECTURE.md, "What a correction is")."""
import json
import unittest
from pathlib import Path

from openmemory import corrections, episodes, transcripts
from tests.helpers import CORPUS, corpus_files, figures

LABELS = Path(__file__).with_name("data") / "learning" / "corpus_labels.json"
MIN_PRECISION = 0.85    # a false correction becomes a wrong lesson: precision matters most
MIN_RECALL = 0.60       # without a model (issue 10's target); doubtful turns are left out of both


def typed_turns(path):
    """(anchor, text) of every message the person typed, first ones included."""
    for turn in transcripts.parse(path).turns:
        if turn.role == "user" and turn.source in ("prompt", "queued", "command"):
            yield turn.uuid, turn.text


def verdicts(path) -> dict:
    """{anchor: 'correction' | 'doubtful' | 'standing'} as the rules decide (refusals by call)."""
    return {s.anchor if not s.legacy else s.legacy: s.verdict
            for s in episodes.surprises_of(transcripts.parse(path)) if s.kind == "correction"}


class CorrectionsOnRealCorpus(unittest.TestCase):
    def test_every_typed_message_is_labelled(self):
        labelled = {(t["file"], t["turn"]) for t in json.loads(LABELS.read_text())["turns"]}
        missing = [(p.relative_to(CORPUS).as_posix(), anchor, text[:60]) for p in corpus_files()
                   for anchor, text in typed_turns(p) if (p.relative_to(CORPUS).as_posix(), anchor) not in labelled]
        self.assertEqual(missing, [], "new typed messages: label them in tests/data/learning/corpus_labels.json")

    def test_precision_and_recall(self):
        labels = {(t["file"], t["turn"]): t["verdict"] for t in json.loads(LABELS.read_text())["turns"]}
        tp = fp = fn = tn = 0
        for path in corpus_files():
            rel = path.relative_to(CORPUS).as_posix()
            said = verdicts(path)
            anchors = {a for a, _ in typed_turns(path)} | {a for (f, a) in labels if f == rel}
            for anchor in anchors:
                truth = labels.get((rel, anchor))
                if truth is None or truth == "doubtful":
                    continue
                found = said.get(anchor) in ("correction", "standing")
                tp += truth == "correction" and found
                fp += truth != "correction" and found
                fn += truth == "correction" and not found
                tn += truth != "correction" and not found
        precision, recall = tp / (tp + fp), tp / (tp + fn)
        figures(f"\ncorrections on the real corpus: {tp} found, {fp} false, {fn} missed, {tn} rightly ignored; "
              f"precision {precision:.2f}, recall {recall:.2f}")
        self.assertGreaterEqual(precision, MIN_PRECISION)
        self.assertGreaterEqual(recall, MIN_RECALL)

    def test_refusals_without_words_are_corrections(self):
        short = next(p for p in corpus_files() if p.name == "short.jsonl")
        found = [s for s in episodes.surprises_of(transcripts.parse(short)) if s.kind == "correction"]
        self.assertEqual([(s.rejected, s.command) for s in found],
                         [(True, "mix phx.server 2>&1 | head -80"), (True, "Glob /home/marco/projects/spotter")])


class Verdicts(unittest.TestCase):
    """What the person typed after the agent said "Done! All tests pass.", by the definition."""
    DONE = "Done! All tests pass."

    def verdict(self, text, **kw):
        return corrections.correction_verdict(text, self.DONE, **kw)[0]

    def test_corrections(self):
        for text in ["that's wrong", "no", "revert that", "you broke the build", "why did you delete the fixtures?",
                     "I told you to use yarn", "the tests are still failing", "No. Use the v2 client",
                     "don't touch package.json", "this breaks the login flow", "didn't I say to keep the old API?",
                     "that doesn't compile", "the migration already exists, you created a duplicate",
                     "we use tabs, not spaces", "you forgot the tests", "isn't node 16 years old?",
                     "we never commit DEBUG=True, it goes in .env.local", "that endpoint was removed in v2",
                     "pr feedback:\n1. api/users.py:41 - N+1 query", "Traceback (most recent call last):\n"
                     "  File \"x.py\", line 1\nKeyError: 'a'"]:
            self.assertEqual(self.verdict(text), "correction", text)

    def test_not_corrections(self):
        for text in ["continue", "sounds good, proceed", "let's do option 2", "can you also add a test for it?",
                     "what about the mobile layout?", "commit and push", "great work!", "lgtm, merge it",
                     "The login page is broken on staging, can you look?", "always nice to see green tests",
                     "stop here for today, we'll continue tomorrow", "no rush. also add a changelog entry",
                     "wait, before you continue: what's the deadline for the API freeze?",
                     "stop the dev server when you're done", "how hard would it be to switch to OpenAI?"]:
            self.assertIsNone(self.verdict(text), text)

    def test_doubtful(self):
        for text in ["did you push?", "i think the oracle and the agent should be the same agent?",
                     "did you write a migration for it?"]:
            self.assertEqual(self.verdict(text), "doubtful", text)
        log = "npm test\nFAIL src/a.test.ts\nError: expected 1 to be 2"
        self.assertEqual(corrections.correction_verdict(log, "I've looked at the structure.")[0], "doubtful")

    def test_a_first_message_is_standing_only_with_a_standing_rule(self):
        self.assertEqual(self.verdict("From now on, always run ruff before you commit. Now fix the typo.", first=True),
                         "standing")
        self.assertIsNone(self.verdict("Use the new endpoint; the old one always fails", first=True))
        self.assertIsNone(self.verdict("add pagination to the list command", first=True))

    def test_a_first_message_without_a_standing_word_is_not_read_further(self):
        # the shortcut never changes a verdict: where the sentence kept is cut from the message,
        # a standing word at its end may lose the word boundary it had ("alwaysplease")
        def read_whole(text):
            found = corrections.lasting_sentence(text)
            return bool(found and (corrections._STANDING.search(found[0].split(";")[0])
                                   or corrections._STANDING_LEAD.match(text[:240])))
        texts = ["From now on, always run ruff before you commit.", "we never commit DEBUG=True",
                 "use uv, not pip. in this repo we use uv.", "please, please, not npm, don't everok",
                 "). we use uv run the tests no,alwaysplease. ", "add pagination to the list command",
                 "Use the new endpoint; the old one always fails", "next time, run the linter first", ""]
        for text in texts:
            self.assertEqual(self.verdict(text, first=True) == "standing", read_whole(text), text)
        self.assertGreaterEqual(sum(map(read_whole, texts)), 4)

    def test_a_later_message_is_read_for_a_standing_rule_only_with_a_standing_word(self):
        # the same shortcut after the agent acted: "use uv neverthanks" keeps "use uv never"
        self.assertEqual(corrections.correction_verdict("use uv neverthanks"), ("correction", "words"))
        self.assertEqual(corrections.correction_verdict("please, we alwaysplease "), ("correction", "words"))
        self.assertEqual(corrections.correction_verdict("add pagination to the list command"), (None, ""))


if __name__ == "__main__":
    unittest.main()
