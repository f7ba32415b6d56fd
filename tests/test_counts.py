"""Every count a person sees agrees: the sleep line, the night's total, `morning`, `status`,
`lessons`, MEMORY.md's line, the om file and lessons.jsonl, over two nights with a correction
said again in other sessions, a failure, a second sleep in one night and vetoes between them."""
import json
import re
import unittest
from pathlib import Path

from tests.fixtures import project_folder
from tests.helpers import TempHome
from tests.test_sleep import docs_fail, lint_session, tests_corrected, when

SAID = "No, don't use unittest here, run the tests with pytest -q"


def seen(n: int) -> str:
    return f"seen in {n} session{'' if n == 1 else 's'}"


def times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def night_counts(line: str) -> dict:
    """The counts of a sleep's one-line summary (or the morning report's headline)."""
    def n(pattern):
        m = re.search(r"(\d+) " + pattern, line)
        return int(m.group(1)) if m else 0
    return {"new": n(r"new lessons?\b"), "strengthened": n("strengthened"),
            "candidates": n(r"new candidates? to review"), "vetoed": n(r"lessons? vetoed")}


def report_counts(report: dict) -> dict:
    """The same counts as the lengths of the morning report's lists."""
    return {"new": len(report["lessons_new"]), "strengthened": len(report["lessons_strengthened"]),
            "candidates": len(report.get("candidates_new", [])), "vetoed": len(report["vetoed"])}


class EveryCountAgrees(TempHome):
    def setUp(self):
        super().setUp()
        self.shop = str(self.tmp / "shop")
        Path(self.shop).mkdir()
        self.folder = project_folder(self.claude, self.shop)
        self.memory = self.folder / "memory"

    def session(self, day, hour=9, docs=True):
        """A session where the tests are run the wrong way and corrected, and `make docs` fails."""
        t = tests_corrected(self.shop, when(11, day, hour), "python -m unittest", SAID)
        if docs:
            docs_fail(self.shop, None, t=t)
        t.write(self.folder)

    def sleep(self, now: str) -> str:
        self.ok("ingest")
        return self.ok("sleep", "--now", now).stdout

    def lessons(self) -> dict:
        return {e["id"]: e for e in json.loads(self.ok("lessons", "--json").stdout)}

    def surfaces_agree(self, sleep_line) -> dict:
        """Check every surface against the others (and the line sleep printed, if given); returns
        the morning report's facts."""
        report = json.loads(self.ok("morning", "--json").stdout)
        morning = self.ok("morning").stdout
        headline = morning.split("\n")[2]
        if sleep_line is not None:
            # The night: what sleep printed as the night's total is the morning report, in its lists and words.
            run, _, rest = sleep_line.partition("; tonight in all: ")
            self.assertEqual(night_counts(rest or run), report_counts(report), sleep_line)
        self.assertEqual(night_counts(headline), report_counts(report), headline)
        listed = self.lessons()
        vetoed = {i for i, e in listed.items() if e["state"] == "vetoed"}
        for key in ("lessons_new", "lessons_strengthened", "candidates_new", "lessons_to_candidates"):
            for ls in report.get(key, []):
                self.assertNotIn(ls["id"], vetoed, f"lesson {ls['id']} is vetoed, yet the report lists it in {key}")
        for ls in report.get("candidates_new", []):
            self.assertEqual(listed[ls["id"]]["state"], "candidate", ls)
        new_section = morning.split("## New lessons", 1)[1].split("\n## ", 1)[0] if report["lessons_new"] else ""
        for ls in report["lessons_new"]:
            self.assertEqual(listed[ls["id"]]["state"], "live", ls)
            self.assertEqual(ls["seen"], listed[ls["id"]]["seen"], "morning and `lessons` on how often")
            self.assertIn(f"{seen(ls['seen'])})", new_section)
        # status: each lesson in one state, as `lessons` lists them.
        status = json.loads(self.ok("status", "--json").stdout)
        states = [e["state"] for e in listed.values()]
        self.assertEqual({s: status["lessons_" + s] for s in ("live", "candidate", "archived", "vetoed")},
                         {s: states.count(s) for s in ("live", "candidate", "archived", "vetoed")})
        self.assertEqual(status["lessons"], len(listed))
        line = next(l for l in self.ok("status").stdout.splitlines() if l.startswith("lessons"))
        self.assertIn(f"{states.count('live')} live, ", line)
        if states.count("vetoed"):
            self.assertIn(f", {states.count('vetoed')} vetoed", line)
        # Each live lesson: `lessons`, lessons.jsonl, MEMORY.md's line and its file say the same.
        wire = {r["id"]: r for r in map(json.loads, (self.home / "lessons.jsonl").read_text().splitlines())}
        self.assertEqual(set(wire), {i for i, e in listed.items() if e["state"] in ("live", "candidate")})
        index = (self.memory / "MEMORY.md").read_text() if (self.memory / "MEMORY.md").exists() else ""
        heads = dict(zip(listed, (block.split("\n", 1)[0] for block in self.ok("lessons").stdout.split("\n\n"))))
        for i, entry in listed.items():
            self.assertIn(f"lesson:{i} · {entry['state']} · {seen(entry['seen'])} · ", heads[i])
            if entry["state"] not in ("live", "candidate"):
                self.assertNotIn(f"(om-{i}.md)", index)
                continue
            self.assertEqual(wire[i]["seen"], entry["seen"], "lessons.jsonl and `lessons`")
            if entry["state"] == "candidate":
                self.assertNotIn(f"(om-{i}.md)", index)
                continue
            self.assertIn(f"(om-{i}.md) — {seen(entry['seen'])}, last ", index)
            topic = (self.memory / f"om-{i}.md").read_text()
            why = topic.split("**Why:** ", 1)[1].split("\n\n", 1)[0].splitlines()
            kinds = [s["kind"] for s in wire[i]["sources"]]
            said = [f"the user corrected this {times(kinds.count('correction'))}"] if "correction" in kinds else []
            said += [f"it failed {times(kinds.count('error'))}"] if "error" in kinds else []
            self.assertEqual(why[0], " and ".join(said) + f", in {seen(entry['seen'])[8:]}:")
            bullets = [b for b in why[1:] if not b.startswith("- and ")]
            more = int(re.search(r"and (\d+) earlier", why[-1]).group(1)) if why[-1].startswith("- and ") else 0
            self.assertEqual(len(bullets) + more, len(kinds), "the heading counts what its bullets list")
            earlier = kinds[:more]                    # the oldest sources, past the ones shown
            self.assertEqual(sum("the person said" in b for b in bullets) + earlier.count("correction"),
                             kinds.count("correction"), topic)
            self.assertEqual(sum(" failed: " in b for b in bullets) + earlier.count("error"), kinds.count("error"),
                             topic)
        return report

    def test_two_nights_a_second_sleep_and_vetoes(self):
        self.session(2)
        self.session(3)
        lint_session(self.shop).write(self.folder)                    # standing words: live at once
        first = self.sleep("2026-11-04T03:00:00Z")
        report = self.surfaces_agree(first)
        by_text = {e["text"]: i for i, e in self.lessons().items()}
        tests = next(i for t, i in by_text.items() if "pytest" in t)
        lint = next(i for t, i in by_text.items() if "ruff" in t)
        docs = next(i for t, i in by_text.items() if "make docs" in t)
        self.assertEqual(({ls["id"] for ls in report["lessons_new"]}, [c["id"] for c in report["candidates_new"]]),
                         ({tests, lint}, [docs]))
        self.assertEqual(self.lessons()[tests]["seen"], 2)

        # A second sleep the same night, after the correction came up in a third session.
        self.session(3, hour=15, docs=False)
        second = self.sleep("2026-11-04T04:00:00Z")
        self.assertTrue(second.startswith("0 new lessons, 1 strengthened (1 new earlier tonight), "), second)
        report = self.surfaces_agree(second)
        self.assertEqual(self.lessons()[tests]["seen"], 3)
        self.assertEqual(next(ls for ls in report["lessons_new"] if ls["id"] == tests)["seen"], 3)

        # Vetoes before the next night: a lesson's file deleted, a candidate rejected.
        (self.memory / f"om-{lint}.md").unlink()
        self.ok("render")
        self.ok("lessons", "reject", f"lesson:{docs}")
        report = self.surfaces_agree(None)            # the stored report follows the vetoes
        self.assertEqual(sorted(v["id"] for v in report["vetoed"]), sorted([lint, docs]))
        morning = self.ok("morning").stdout
        self.assertIn("(you rejected it with `openmemory lessons reject`; it will not come back unless you take the "
                      "veto back: `openmemory lessons approve lesson:3 --undo-veto`)", morning)
        self.assertIn("(you deleted it from Claude Code's memory; it will not come back unless you take the veto "
                      "back: `openmemory lessons approve lesson:1 --undo-veto`)", morning)
        self.assertNotIn("## Candidates to review", morning)

        # The next night: the correction again, and the failure again (the vetoed lesson takes it in).
        self.session(4)
        third = self.sleep("2026-11-05T03:00:00Z")
        self.assertNotIn("tonight in all", third)
        report = self.surfaces_agree(third)
        self.assertEqual([ls["id"] for ls in report["lessons_strengthened"]], [tests])
        self.assertEqual(self.lessons()[tests]["seen"], 4)
        self.assertEqual(report["lessons_new"], [])


if __name__ == "__main__":
    unittest.main()
