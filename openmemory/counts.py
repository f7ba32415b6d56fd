"""Every count a person is shown of a lesson, defined once and said in the same words wherever
it appears (the morning report, `openmemory lessons`, MEMORY.md's line, om-<id>.md, lessons.jsonl).

A lesson's `seen` is the number of distinct sessions it came up in (a note is its own:
`forget.incident`); what it came up as is counted from its sources: corrections, failures,
notes. A night's counts (new, strengthened, candidates, vetoed) are the morning report's lists, told by
`sleep.summary`; the states' tally (live, candidates, archived, vetoed) by `review.state_name`.
"""
from collections import Counter

KINDS = (("correction", "corrections"), ("error", "failures"), ("note", "notes"))


def of_lesson(lesson: dict, sources: list) -> dict:
    """{"sessions", "corrections", "failures", "notes"}: the sessions a lesson came up in (its
    `seen`) and what its sources, as listed, were."""
    kinds = Counter(s.get("kind") for s in sources)     # one pass: a lesson of a heavy year has 100,000 sources
    out = {"sessions": int(lesson.get("seen") or 0)}
    for kind, name in KINDS:
        out[name] = kinds[kind]
    return out


def times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def seen_words(sessions: int) -> str:
    """`seen in 2 sessions`: the one way a lesson's sessions are said."""
    return f"seen in {sessions} session{'' if sessions == 1 else 's'}"


def why_words(counts: dict) -> str:
    """What a lesson came up as, counted as its sources are listed: `the user corrected this 2
    times and it failed 2 times, in 2 sessions`."""
    said = [f"the user corrected this {times(counts['corrections'])}" if counts["corrections"] else "",
            f"it failed {times(counts['failures'])}" if counts["failures"] else "",
            f"it was noted {times(counts['notes'])}" if counts["notes"] else ""]
    said = " and ".join(filter(None, said))
    where = f"in {counts['sessions']} session{'' if counts['sessions'] == 1 else 's'}"
    return f"{said}, {where}" if said else seen_words(counts["sessions"])
