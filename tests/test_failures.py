"""What a failed tool call's output means (failures.py): the cause, not the wrapper, over
real-shaped outputs of common tools; a wrapper's line found as the whole pattern would find it."""
import json
import random
import re
import unittest
from pathlib import Path

from openmemory import failures

DATA = Path(__file__).with_name("data") / "learning"
EXIT = re.compile(r"^Exit code -?\d+$")


def fold(text: str) -> str:
    return " ".join(text.split())


class FailureCauses(unittest.TestCase):
    """The lines that say why a command failed, over real-shaped outputs of common tools."""

    def test_the_cause_not_the_wrapper(self):
        table = json.loads((DATA / "failures.json").read_text())["failures"]
        self.assertGreaterEqual(len(table), 30)
        self.assertGreaterEqual(len({f["tool"] for f in table}), 14)
        for f in table:
            with self.subTest(tool=f["tool"], command=f["command"]):
                kept = [line for line in failures.error_lines(f["output"]) if not EXIT.match(line)]
                self.assertTrue(kept)
                self.assertEqual(kept[0], fold(f["cause"]))
                for line in f["keep"]:
                    self.assertIn(fold(line), kept)
                for line in f["drop"]:
                    self.assertNotIn(fold(line), kept)

    def test_an_exception_line_is_an_error_line_without_a_word_boundary(self):
        out = "Exit code 2\nbuilding\nsome.module.SomethingError: the cache is stale\nmake: *** [Makefile:2: all] Error 2"
        self.assertEqual(failures.error_lines(out), ["Exit code 2", "some.module.SomethingError: the cache is stale"])


class WrapperLines(unittest.TestCase):
    """A wrapper's line is found as the one pattern with every wrapper in it would find it."""

    WHOLE = (r"(?i)^(?:" + failures._WRAPPER.pattern.removeprefix("(?xi)^(?:").removesuffix(")")
             + r"|.*Interrupted:\s\d+\serrors?|.*\.{4,}\s*Failed$)")

    def test_wrapper_is_the_whole_pattern(self):
        import re
        whole = re.compile(self.WHOLE, re.X)
        pieces = ["....", "...", "Failed", "FAILED", "failed", "Interrupted:", "interrupted:", "ınterrupted:",
                  "İNTERRUPTED:", " ", "\t", "1", "23", "errors", "error", "x", "npm ERR! code", "make: *** [",
                  "Some errors were emitted", "ſome errors were emitted", "K", "é"]
        rng = random.Random(11)
        lines = ["tests/test_a.py::test_b ..... FAILED", "Interrupted: 2 errors during collection", "ıNTERRUPTED: 1 error",
                 "npm ERR! code 1", "ok", "Interrupted by the user", "...passed"]
        lines += ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 9))) for _ in range(20000)]
        found = [failures.wrapper(line) for line in lines]
        self.assertEqual([line for line, f in zip(lines, found) if f != bool(whole.match(line))][:5], [])
        self.assertEqual(found[:7], [True, True, True, True, False, False, False])
        self.assertGreater(sum(found), 1000)
