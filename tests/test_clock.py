"""Time (clock.py): ISO 8601 UTC with microseconds, Claude Code's own timestamps by a short way."""
import unittest

from openmemory import clock


class ClaudeCodeTimestamps(unittest.TestCase):
    """clock.iso takes Claude Code's own timestamps ('...T21:41:48.049Z') by a short way: the
    same text as parsing them, and the same error for one that is not a time."""

    def test_the_short_way_gives_what_parsing_gives(self):
        import itertools
        for year, month, day, hour, minute, second in itertools.product(
                (999, 1000, 2000, 2023, 2024, 2100, 9999), (0, 1, 2, 12, 13), (0, 1, 28, 29, 30, 31, 32),
                (0, 23, 24), (0, 59, 60), (0, 59, 60)):
            ts = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.049Z"
            with self.subTest(ts=ts):
                try:
                    parsed = clock.parse_time(ts).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
                except ValueError:
                    self.assertRaises(ValueError, clock.iso, ts)
                else:
                    self.assertEqual(clock.iso(ts), parsed)
        self.assertEqual(clock.iso("2024-02-29T23:59:59.999Z"), "2024-02-29T23:59:59.999000Z")
        self.assertRaises(ValueError, clock.iso, "2100-02-29T00:00:00.000Z")
