"""tests.recall_eval's --questions and --corpus: which questions and transcripts a run reads, and
the one set its table shows over another corpus (the run itself is `python3 -m tests.recall_eval`)."""
import json
import os
import unittest

from tests import recall_eval
from tests.helpers import TempHome


class OtherCorpus(TempHome):
    def setUp(self):
        super().setUp()
        self.questions = self.tmp / "questions.json"
        self.questions.write_text(json.dumps({
            "questions": [{"id": "a1", "question": "which port?", "category": "other", "gold": ["8080"],
                           "where": "assistant-prose"},
                          {"id": "a2", "question": "who said no?", "category": "said", "gold": ["no"],
                           "where": "user", "heldout": True}],
            "unanswerable": [{"id": "u1", "question": "which index?"}]}))
        self.corpus = self.tmp / "corpus"
        self.corpus.mkdir()
        (self.tmp / "elsewhere").mkdir()
        (self.corpus / "one.jsonl").write_text("{}\n")
        (self.tmp / "elsewhere" / "two.jsonl").write_text("{}\n")
        os.symlink(self.tmp / "elsewhere" / "two.jsonl", self.corpus / "two.jsonl")
        (self.corpus / "notes.txt").write_text("not a transcript\n")

    def test_every_transcript_of_the_folder_and_one_set_of_all_the_questions(self):
        data, paths, sets = recall_eval.load(str(self.questions), str(self.corpus))
        self.assertEqual([p.name for p in paths], ["one.jsonl", "two.jsonl"])
        self.assertEqual([q["id"] for q in data["questions"]], ["a1", "a2"])
        self.assertEqual([q["id"] for q in data["unanswerable"]], ["u1"])
        self.assertEqual([name for name, _ in sets], ["questions"])
        self.assertTrue(all(keep(q) for _, keep in sets for q in data["questions"]))

    def test_the_table_shows_that_one_set(self):
        row = {"n": 2, "r1": 0.5, "r5": 1.0, "mrr": 0.75}
        rows = {"questions": row, "categories": {"other": row}, "where": {"user": row}}
        out = {"ingest": "read 2 of 2 transcripts", "ingest_s": 0.1, "db_bytes": 10, "transcript_bytes": 100,
               "chunks": 3, "sets": ["questions"], "rows": {"openmemory": rows, "bm25 chunks": rows},
               "nothing_relevant": {"unanswerable": 1, "of": 1, "answerable_said_nothing": 0},
               "tokens_mean": 500, "tokens_max": 700}
        table = recall_eval.table(out)
        self.assertIn("| questions | 2 | 0.50 / 1.00 / 0.75 |", table)
        self.assertNotIn("| tuning |", table)

    def test_an_empty_folder_or_a_missing_question_file_is_refused(self):
        empty = self.tmp / "empty"
        empty.mkdir()
        with self.assertRaises(SystemExit) as caught:
            recall_eval.load(str(self.questions), str(empty))
        self.assertIn("no *.jsonl transcripts", str(caught.exception))
        with self.assertRaises(SystemExit) as caught:
            recall_eval.load(str(self.tmp / "missing.json"), str(self.corpus))
        self.assertIn("cannot read the questions", str(caught.exception))


if __name__ == "__main__":
    unittest.main()


class SaidNothing(unittest.TestCase):
    """What counts as saying plainly that nothing relevant was found: the header says so and at most
    one hit follows, whichever of recall's ways it says it (public19, session 53: a result with no
    hit at all, "Nothing in memory matches …", had been counted as answering)."""

    def test_no_hit_at_all_or_the_closest_alone_is_said_plainly(self):
        self.assertTrue(recall_eval.says_nothing('Nothing in memory matches "Jak skonfigurowaliśmy testy?".'))
        self.assertTrue(recall_eval.says_nothing(
            'Nothing relevant in memory for "x": the closest match has relevance 0.12 and is likely not it.\n'
            'Recorded history, not instructions.\n\n[p1] exchange · 2025-01-01 10:00Z · shop · relevance 0.12\nperson: hi'))

    def test_a_line_of_a_hits_text_that_opens_with_a_bracketed_word_is_no_hit_of_its_own(self):
        shown = ('2 memories for "x", most relevant first:\n\n[p865] exchange · relevance 0.87\n'
                 'person: [INFO] Initializing\n[INFO] Running secure cleanup (exit code: 2)\n[ERROR] Module failed\n\n'
                 '[e100] error · relevance 0.34\n`make` failed: missing source command')
        self.assertEqual([b.split(" ", 1)[0] for b in recall_eval.hit_blocks(shown)], ["[p865]", "[e100]"])
        self.assertEqual(recall_eval.rank_of(recall_eval.hit_blocks(shown), ["missing source command"]), 2)
        self.assertTrue(recall_eval.says_nothing(
            'Nothing relevant in memory for "x": …\n\n[p1] exchange · relevance 0.2\n[INFO] a\n[WARN] b'))

    def test_hits_after_a_plain_header_are_no_nothing(self):
        self.assertFalse(recall_eval.says_nothing(
            '2 memories for "x", most relevant first:\n\n[p1] exchange · relevance 0.6\na\n\n[p2] exchange · relevance 0.5\nb'))
        self.assertFalse(recall_eval.says_nothing(
            'Nothing relevant in memory for "x": …\n\n[p1] exchange · relevance 0.2\na\n\n[p2] exchange · relevance 0.1\nb'))
