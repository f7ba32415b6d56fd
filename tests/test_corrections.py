"""Correction detection, measured on hand-labelled turns of the real corpus."""
import json
import unittest
from pathlib import Path

from openmemory import transcripts
from tests.helpers import CORPUS, corpus_files

LABELS = Path(__file__).with_name("data") / "corrections_labelled.json"
MIN_PRECISION = 0.85    # a false correction becomes a wrong lesson: precision matters most
MIN_RECALL = 0.65       # pushback phrased as a question ("ancient?") is out of reach of rules


def candidate_turns(path):
    """(anchor, text) of every turn where the person spoke after the agent acted."""
    s = transcripts.parse(path)
    seen_agent = False
    for turn in s.turns:
        if turn.role == "assistant":
            seen_agent = True
        elif turn.source in ("prompt", "queued") and seen_agent:
            yield turn.uuid, turn.text
    

class CorrectionsOnRealCorpus(unittest.TestCase):
    def test_precision_and_recall(self):
        files = corpus_files()
        labels = {(t["file"], t["turn"]): t["correction"] for t in json.loads(LABELS.read_text())["turns"]}
        tp = fp = fn = tn = 0
        unlabelled = []
        for path in files:
            rel = path.relative_to(CORPUS).as_posix()
            found = {s.anchor for s in transcripts.surprises(transcripts.parse(path)) if s.kind == "correction"}
            for anchor, text in candidate_turns(path):
                if (rel, anchor) not in labels:
                    unlabelled.append((rel, anchor, text[:60]))
                    continue
                truth, said = labels[(rel, anchor)], anchor in found
                if truth is None:
                    continue
                tp += truth and said
                fp += (not truth) and said
                fn += truth and not said
                tn += (not truth) and not said
        self.assertEqual(unlabelled, [], "new candidate turns: label them in tests/data/corrections_labelled.json")
        precision, recall = tp / (tp + fp), tp / (tp + fn)
        print(f"\ncorrections on the real corpus: {tp} found, {fp} false, {fn} missed, {tn} rightly ignored; "
              f"precision {precision:.2f}, recall {recall:.2f}")
        self.assertGreaterEqual(precision, MIN_PRECISION)
        self.assertGreaterEqual(recall, MIN_RECALL)

    def test_refusals_without_words_are_corrections(self):
        short = next(p for p in corpus_files() if p.name == "short.jsonl")
        found = [s for s in transcripts.surprises(transcripts.parse(short)) if s.kind == "correction"]
        self.assertEqual([(s.rejected, s.command) for s in found],
                         [(True, "mix phx.server 2>&1 | head -80"), (True, "Glob /home/marco/projects/spotter")])


if __name__ == "__main__":
    unittest.main()
