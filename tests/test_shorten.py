"""The one way text is cut (shorten.py)."""
from openmemory.shorten import clip
from tests.helpers import TempHome


class Clip(TempHome):
    def test_a_long_text_is_clipped_as_its_whole_folded_text_would_be(self):
        import random
        rng = random.Random(7)
        pieces = ["a", "bb", "ccc", " ", "  ", "\n", "\t", "\u00a0", "é", "…", "x" * 50, " " * 300]
        for _ in range(3000):
            text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 200)))
            for limit in (1, 3, 10, 40, 200):
                folded = " ".join(text.split())
                expected = folded if len(folded) <= limit else folded[: limit - 1].rstrip() + "…"
                self.assertEqual(clip(text, limit), expected, (text, limit))
        self.assertEqual(clip("word " * 100_000, 12), "word word w…")
