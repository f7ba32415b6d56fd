"""What backs a lesson: what makes a lesson *live* (rendered into the agent's memory) rather
than a *candidate* (recallable and listed for review, never rendered, making no prediction).

One correction, or one failure repeated in two sessions, makes a candidate. It goes live
when something backs it (ARCHITECTURE.md, "Where it differs from the design"):
- the person approved it (`openmemory lessons approve`), or wrote its text (`... edit`);
- a judge (judge.py) read the context and found it lasting; a judge that found nothing
  lasting in any of its sources outweighs the rules below, and only the person can then
  make it live;
- the person said it as a rule for the work to come in words that cannot mean anything else
  ("from now on", "going forward", "next time", "in this repo we ...", "we never ..."): the
  rules that read the words set `facts["standing"]`, and the line it was said on holds one of
  _FOR_THE_WORK_TO_COME, or a bare "always" or "never" names what the agent had just run or
  touched ("no, always use pnpm, never npm" after `npm install`). A bare "always" or "never"
  alone is not enough: it describes what a product does as often as how the agent works
  ("Always keep only the last message - trim to last 5 lines"), so such a rule stays a
  candidate for the person to approve (ARCHITECTURE.md);
- it came up again in another session: a correction's lesson seen in two sessions (not only
  on the line right under a paste each time: a log's last line comes back with the log), a
  failure's (made from two sessions) in a third.

A candidate nothing backs lapses (is archived, quietly) LAPSE_DAYS after it became one; one
that comes up again later is revived by consolidation, and then it is backed.

Pure: lessons and episodes are dicts as the store returns them (a lesson's `backing` a dict).
"""
import re
from datetime import timedelta

from .clock import parse_time
from .corrections import correction_verdict, lasting_sentence, under_a_paste, what_lasts
from .failures import program_of

LIVE, CANDIDATE = "live", "candidate"

# Sessions a lesson must come up in to be backed by recurrence: one more than made it.
RECUR_SESSIONS = {"feedback": 2, "project": 3}

# A candidate nothing backs lapses after this long. Claude Code deletes a transcript after 30
# days (cleanupPeriodDays): twice that keeps a candidate up for review well past its own
# session, and the dev corpus's tuning sessions (four people, one repository) span 39 days, so a
# rule said in one month of work and again in the next is still caught. A lapsed candidate is
# only archived: the same thing said again revives it, and then it is backed.
LAPSE_DAYS = 60

APPROVED_BOOST = 0.5        # the person's approval counts as much as being seen again (sleep.SEEN_BOOST)

# What backs a lesson, in the order they are told, with the words `openmemory lessons` uses.
BACKERS = ("approved", "edited", "judge", "standing", "sessions")
BY_PERSON = BACKERS[:2]         # what the person did: approved it, wrote its text


# Words that make the person's own lasting sentence a rule for the agent's work to come, beyond
# doubt: a time to come, or what "we" (the team) always or never do here. Narrower than the words
# the rules read a first message by (corrections._STANDING): a bare "always", "never", "every
# time" or "in this repo" also describes what a product does or where a thing is ("Always keep
# only the last message", "the two skills that are already in this repo"), and "so we don't
# forget" in "add a comment to #91 so we don't forget" is no rule at all.
_FOR_THE_WORK_TO_COME = re.compile(
    r"(?i)\b(?:from now on|going forward|from here on|in (?:the )?future|next time|for (?:all|every) future|"
    r"don'?t ever|do not ever|never ever|(?:every ?time|whenever) you|in this (?:repo|repository|project|codebase),? we|"
    r"(?<!so )(?<!if )(?<!that )(?<!when )(?<!until )we (?:always|never|don'?t|do not)(?!\s+(?:want|need|have)\s+to\b))\b")


def kept_by_person(backing: dict) -> bool:
    """Whether the person approved the lesson or wrote its text: their decision, which neither
    time nor a prediction that did not come true undoes (sleep.decay, sleep.verify); only they
    do (`lessons reject`, deleting its file)."""
    return any(backing.get(name) for name in BY_PERSON)


def standing(facts: dict) -> bool:
    """Whether the person said it as a rule for the work to come, in their own words.

    The rules that read the words say whether it was said as a standing rule in
    `facts["standing"]` (by corrections._STANDING, which a bare "always" satisfies); an episode
    stored before they did is read conservatively, by the rules that read a first message. Either
    way the line the rule was said on must then hold one of _FOR_THE_WORK_TO_COME or name what the
    agent had just done (names_what_it_did).
    """
    if "standing" in facts and not facts["standing"]:
        return False
    said = facts.get("own") or facts.get("said") or ""
    if not said or ("standing" not in facts and correction_verdict(said, first=True)[0] != "standing"):
        return False
    found = lasting_sentence(said, strict=facts.get("form") in ("review", "pasted-failure"))
    if not found:
        return False
    # The line it was said on, with the lead the sentence is cut from ("From now on, ...").
    line = next((ln for ln in said.splitlines() if found[0][:40] in ln), found[0])
    return bool(_FOR_THE_WORK_TO_COME.search(line)) or names_what_it_did(facts, line)


# What a command's program says too little about to tie a rule to it: moving, printing, wrapping.
_NO_PROGRAM = frozenset(("cd", "pushd", "echo", "printf", "cat", "ls", "sudo", "env", "bash", "sh", "zsh", "true"))
_FILE_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit", "Read")


def names_what_it_did(facts: dict, line: str) -> bool:
    """Whether a rule's line names what the agent had just done, the call the correction answers:
    a Bash command's program (`npm` of `npm install date-fns`), or the file a file tool touched
    or the folder it is in (`config.json` or `src` of `Edit src/config.json`). Such an "always"
    or "never" is about the agent's work, not about what the product does."""
    tool = facts.get("tool") or ""
    if tool == "Bash":
        names = [program_of(facts)]
    elif tool in _FILE_TOOLS:      # the file and the folder it is in
        names = str(facts.get("command") or "").removeprefix(tool).strip().replace("\\", "/").split("/")[-2:]
    else:
        names = []
    return any(len(name) >= 2 and name not in _NO_PROGRAM and
               re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", line, re.I) and
               (tool != "Bash" or name not in _EVERYDAY or _as_command(name, line, str(facts.get("command") or "")))
               for name in names)


# Programs named by an everyday word: "always make the list ...", "never go back to ..." say what a
# product does after `make test` or `go test` as well as before (red42). Such a name is the command
# only written as one: in backticks, alone ("never go"), or before a word of the command ("go test").
_EVERYDAY = frozenset(("make", "go", "find", "open", "watch", "time", "kill", "sort", "head", "tail", "less",
                       "more", "which", "read", "type", "wait", "touch", "file", "just", "task", "test", "run",
                       "yes", "look", "join", "split", "cut", "paste", "date", "free", "top", "ping", "expect"))


def _as_command(name: str, line: str, command: str) -> bool:
    """Whether line writes an everyday-word program as the command (_EVERYDAY)."""
    words = {w.lower() for w in re.findall(r"[\w./-]+", command)} - {name}
    return any(m.group(1) or m.group(2) or not m.group(3) or m.group(3).lower() in words
               for m in re.finditer(rf"(`)?(?<![\w.-]){re.escape(name)}(?![\w-])(`)?[^\S\n]*([\w./-]*)", line, re.I))


def verdict(facts: dict) -> dict | None:
    """The judge's verdict on an episode ({correction, lasting, ...}), None when none was recorded.

    A doubtful turn an earlier model decided (`decided: model`) counts as one: lasting when it
    gave the lesson line it was asked for only for an instruction to follow in future sessions.
    """
    judged = facts.get("judge")
    if isinstance(judged, dict) and "lasting" in judged:
        return judged
    if facts.get("decided") == "model":
        yes = not facts.get("doubtful")
        return {"correction": yes, "lasting": bool(yes and facts.get("model_lesson")),
                "lesson": facts.get("model_lesson")}
    return None


def _judged(lesson: dict, sources: list) -> tuple:
    """(the judge's verdict on the lesson itself or None, [(correction source, its verdict or None)])."""
    own = (lesson.get("backing") or {}).get("judge")
    own = own if isinstance(own, dict) and "lasting" in own else None
    return own, [(ep, verdict(ep.get("facts") or {})) for ep in sources if ep.get("kind") == "correction"]


def backers(lesson: dict, sources: list) -> list:
    """What backs a lesson (names from BACKERS, in that order); [] for a candidate.

    lesson: with `kind`, `seen` and `backing` ({approved, edited, judge}); sources: its episodes
    that still exist (with `kind`, `facts` and, to count sessions past a judged one, `session_id`).
    A judge's verdict decides where it was given: lasting on the lesson or on any of its
    corrections backs it; nothing lasting on the lesson, or on every correction it came from,
    leaves it to the person. A correction the judge found not lasting counts for nothing else:
    neither its words nor its session.
    """
    backing = lesson.get("backing") or {}
    found = [name for name in BY_PERSON if backing.get(name)]
    own, corrections = _judged(lesson, sources)
    if (own or {}).get("lasting") or any(v and v.get("lasting") for _, v in corrections):
        return found + ["judge"]
    unjudged = [ep for ep, v in corrections if v is None]
    if own is not None or (corrections and not unjudged):
        return found                # the judge read it and found nothing lasting: only the person now
    if lesson.get("kind") == "feedback" and any(standing(ep.get("facts") or {}) for ep in unjudged):
        found.append("standing")
    seen = int(lesson.get("seen") or 0)
    if len(unjudged) < len(corrections):    # a session only a judged-no correction came from does not count
        no = {id(ep) for ep, v in corrections if v is not None}
        seen = len({ep.get("session_id") or f"episode:{ep.get('id')}" for ep in sources if id(ep) not in no})
    if seen >= RECUR_SESSIONS.get(lesson.get("kind"), RECUR_SESSIONS["feedback"]) and \
            not (unjudged and all(_under_a_paste(ep.get("facts") or {}) for ep in unjudged)):
        found.append("sessions")
    return found


def _under_a_paste(facts: dict) -> bool:
    """Whether a correction's rule sits on the line right under pasted lines (episodes._meaning): a
    paste's own last line, maybe, which comes back wherever that output does, so the same log pasted
    in another session is no one saying it again (red40)."""
    said = str(facts.get("said") or "")
    sentence = what_lasts(facts.get("own", said), facts.get("form") or "")["sentence"]
    return bool(sentence) and under_a_paste(facts, sentence)


def state_of(lesson: dict, sources: list) -> str:
    """LIVE when something backs the lesson, else CANDIDATE."""
    return LIVE if backers(lesson, sources) else CANDIDATE


def judged_lesson(facts: dict) -> str | None:
    """The lesson a judge worded for an episode it found lasting (a model's words), else None."""
    judged = verdict(facts) or {}
    return str(judged["lesson"]) if judged.get("lasting") and judged.get("lesson") else None


def judged_no(lesson: dict, sources: list) -> bool:
    """Whether a judge read the lesson and found nothing lasting in it (so it is not worth a look)."""
    own, corrections = _judged(lesson, sources)
    if (own or {}).get("lasting") or any(v and v.get("lasting") for _, v in corrections):
        return False
    return own is not None or bool(corrections) and all(v is not None for _, v in corrections)


def lapses(since: str | None, now: str) -> bool:
    """Whether a candidate that became one at `since` has waited LAPSE_DAYS by `now`."""
    return bool(since) and parse_time(now) >= parse_time(since) + timedelta(days=LAPSE_DAYS)
