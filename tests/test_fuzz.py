"""The short fixed-seed fuzzing campaign (tests/fuzz.py): the parser, the MCP server over pipes, and
the other agents' readers.

The full campaign is `python3 -m tests.fuzz --full` (OPERATIONS.md).
"""
import unittest

from tests import fuzz
from tests.helpers import TempHome


class ShortCampaign(TempHome):
    def test_parser_and_server_survive_the_fixed_seed_campaign(self):
        result = fuzz.campaign(full=False, seed=1)
        self.assertEqual(result["failures"], [])
        parser, pipes = result["parser"], result["pipes"]
        self.assertEqual(parser["inputs"], fuzz.SHORT["parser"])
        self.assertGreater(parser["garbage_lines"], 100)
        self.assertGreater(parser["deep_lines"], 0)
        self.assertGreater(parser["huge_lines"], 0)
        self.assertEqual(pipes["answered_after"], fuzz.SHORT["pipes"])
        agents = result["agents"]
        self.assertEqual(agents["inputs"], fuzz.SHORT["agents"])
        self.assertGreater(agents["logs"], 10)             # Codex's and Gemini's recorded logs, each
        self.assertGreater(agents["type_mutations"], 50)

    def test_a_second_seed(self):
        self.assertEqual(fuzz.campaign(full=False, seed=2)["failures"], [])


if __name__ == "__main__":
    unittest.main()
