"""The benchmark's corpus generator (tests/synthetic.py) stays true to what openmemory makes of it."""
import json
import unittest

from openmemory import ingest, store
from tests import synthetic
from tests.helpers import TempHome


class SyntheticCorpus(TempHome):
    def test_ingest_makes_exactly_the_episodes_the_generator_promises(self):
        expected = synthetic.write_dense(self.claude, 24)
        _, large = synthetic.write_large(self.claude, [0.4])
        huge_path, huge = synthetic.write_huge_line(self.claude, line_bytes=synthetic.MB)
        for part in (large, huge):
            synthetic._add(expected, part)
        with store.connect() as db:
            report = ingest.ingest(db)
            counts = db.counts()
        self.assertEqual((report.read, report.skipped_lines, report.failed), (26, 0, []))
        self.assertEqual({k: counts["episodes"][k] for k in expected}, expected)
        self.assertGreater(expected["error"], 24)          # every dense session failed at least once
        self.assertGreaterEqual(expected["correction"], 24)
        longest = max(len(line) for line in huge_path.read_bytes().splitlines())
        self.assertGreater(longest, 0.9 * synthetic.MB)     # the huge line is there, and its neighbours were kept

    def test_dense_sessions_are_small_varied_and_spread_over_a_year(self):
        sessions = [synthetic.dense_session(i) for i in range(60)]
        self.assertTrue(all(sum(e.values()) in (3, 4) for _, e in sessions))
        self.assertEqual(len({t.cwd for t, _ in sessions}), len(synthetic.PROJECTS))
        self.assertEqual({t.style for t, _ in sessions}, {"2.1.328", "1.0"})
        days = sorted(t.records[0]["timestamp"][:10] for t, _ in sessions if "timestamp" in t.records[0])
        self.assertGreater(days[-1][:7], days[0][:7])
        self.assertGreaterEqual(len({d[:7] for d in days}), 9)  # most months of the year
        sizes = [len(t.text()) for t, _ in sessions]
        self.assertTrue(all(10_000 < n < 40_000 for n in sizes), sizes)
        first = [json.loads(line) for line in sessions[0][0].lines()]
        self.assertTrue(any(r.get("type") == "user" and isinstance(r["message"]["content"], list)
                            and r["message"]["content"][0].get("is_error") for r in first))

    def test_the_same_index_gives_the_same_bytes(self):
        self.assertEqual(synthetic.dense_session(7)[0].text(), synthetic.dense_session(7)[0].text())
        self.assertNotEqual(synthetic.dense_session(7)[0].text(), synthetic.dense_session(8)[0].text())
        self.assertEqual(synthetic.large_session(1, 200_000)[0].text(), synthetic.large_session(1, 200_000)[0].text())


if __name__ == "__main__":
    unittest.main()
