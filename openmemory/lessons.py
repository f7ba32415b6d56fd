"""Lesson wording, without a model: one short imperative line from a correction or from
repeated failures, scoped to a project or to every one.

Deterministic, and only from what the person typed and from the agent's own failed
commands and their error lines, never from other tool output (file contents, web pages):
that text can carry instructions meant to poison memory. Pure but for `scoped`, which
asks paths whether a folder is in a git repository when not told.
"""
import re

from . import embed, paths
from .classify import correction_head, error_line
from .shorten import clip

LESSON_CHARS = 150           # Claude Code's MEMORY.md index: one line "under ~150 characters"



def correction_lesson(facts: dict) -> str | None:
    """A short imperative line from the person's own words and the call they answered, or None
    when the words hold no instruction that lasts ("check again", "that still fails")."""
    said = facts.get("said") or ""
    command = core_command(facts.get("command") or "") if facts.get("tool") == "Bash" else ""
    sentence = instruction(said)
    if sentence is None:
        return None
    clauses = [c.strip() for c in re.split(r",\s+|;\s+|\s+but\s+", sentence) if c.strip()]
    negative = [c for c in clauses if _NEGATIVE.match(c)]
    positive = [c for c in clauses if not _NEGATIVE.match(c)]
    if command and _IMPERATIVE.match(sentence):     # a fact keeps its own words
        cmd_words = set(embed.words(command))
        about = [c for c in negative if _content(c) & cmd_words]
        vague = [c for c in negative if not _content(c)]
        if about and positive and not any(_CONTRAST.search(c) for c in positive):
            sentence = ", ".join(c for c in clauses if c not in about) + f", not `{command}`"
        elif vague and not positive:
            sentence = f"Don't run `{command}`"
        elif len(clauses) == 1 and re.search(r"\binstead$", sentence) and command not in sentence:
            sentence += f" of `{command}`"      # "use X instead": instead of what the agent ran
    text = codify(sentence, [command] if command else [])
    text = re.sub(r"\s+\bhere\b(?=[\s,.;:!]|$)", "", text)
    return _finish(text)


def error_lesson(members: list) -> str:
    """A line from repeated failures: the command (what they share) and its first error line."""
    commands = [core_command(f.get("command") or f.get("tool") or "") for f in members]
    command = _common_command(commands) or max(commands, key=commands.count)
    tool = members[0].get("tool") or "Bash"
    error = clip(error_line(members[0]).replace('"', "'"), 80)
    verb = "run" if tool == "Bash" else "use"
    return _finish(f"Don't {verb} `{clip(command, 60)}`: it fails with \"{error}\"")


def scoped(body: str, cwd, in_repository: bool | None = None) -> str:
    """The lesson as the agent reads it: "In this repository ..." when it is one project's.

    in_repository: whether cwd is in a git repository (found out here when None)."""
    if not cwd:
        return _fit(body)
    if in_repository is None:
        in_repository = paths.git_root(cwd) is not None
    where = "In this repository" if in_repository else "In this project"
    if body[1:2].islower():             # "Run ..." -> "run ...", but "PR ..." and "`make` ..." stay
        body = body[:1].lower() + body[1:]
    return _fit(f"{where} {body}")


def unscoped(text: str) -> str:
    """The same lesson for every project."""
    for prefix in ("In this repository ", "In this project "):
        if text.startswith(prefix):
            rest = text[len(prefix):]
            return rest[:1].upper() + rest[1:]
    return text


# The person's openers that carry no instruction ("ok so", "no,", "wait.", "actually").
_FILLER = re.compile(r"^(?:(?:ok(?:ay)?|ah+|oh+|hm+|uh+|um+|well|so|hey|sorry|actually|alright|right|hmm+|yes|yeah)"
                     r"\b[\s,.!:;…—-]*|(?:no+|nope|nah|wait|stop|hold on)(?:[\s]*[,.!:;…—-]+\s*|\s+(?=don'?t\b|do not\b|"
                     r"never\b|use\b|run\b|just\b|please\b|not\b|we\b|you\b|let'?s\b|i\b)))+", re.I)
_LEAD = re.compile(r"^(?:please\s+|just\s+|let'?s\s+|let us\s+|you (?:should|need to|must|have to)\s+|"
                   r"we (?:should|need to|must|have to)\s+|i (?:want|need) you to\s+|make sure (?:to|you)\s+|"
                   r"remember to\s+|(?=we use\b)we\s+)+", re.I)
_IMPERATIVE = re.compile(
    r"^(?:don'?t|do not|never|always|only|stop|avoid|use|run|prefer|keep|put|call|add|remove|write|check|make|"
    r"set|pass|install|import|leave|ask|read|edit|delete|commit|push|test|build|start|restart|switch|move|"
    r"rename|follow|include|exclude|skip|point|mock|return|wrap|target|pin|try|change|update|create|open|"
    r"store|save|log|print|handle|name|place|stick|go|look|search|merge|rebase|deploy|format|lint|type|"
    r"split|join|drop|stay|work|ship|reuse|document|comment|mention|tell|show)\b", re.I)
# What makes an instruction last beyond the moment: a prohibition, a rule, a preference,
# a contrast, or a named tool to do it with.
_LASTING = re.compile(r"\b(?:don'?t|do not|never|always|only|stop|avoid|prefer|instead|rather than|use|using)\b|"
                      r",\s*not\b|\bnot\s+`|\bwith\s+`", re.I)
# A statement of how things are, set against what the agent assumed ("X, not Y").
_FACT = re.compile(r"\b(?:is|are|lives?|goes|go|belongs?|runs?|sits?|comes?)\b.*(?:,\s*not\s+\S|\binstead of\b|"
                   r"\brather than\b)", re.I)
# ... but not a diagnosis of the moment ("the issue is the linter, not db:generate").
_DIAGNOSIS = re.compile(r"^(?:the\s+(?:issue|problem|bug|cause|error|reason|fix|culprit)|it|it'?s|that|that'?s|"
                        r"this|this is|i|i'?m|we'?re|you|you'?re|maybe|probably|seems)\b", re.I)
_NEGATIVE = re.compile(r"^(?:don'?t|do not|never|not|stop|no)\b", re.I)
_CONTRAST = re.compile(r"\b(?:instead|rather than|not)\b", re.I)
_GENERIC = {"use", "run", "do", "make", "try", "call", "don", "not", "never", "stop", "no", "thing", "that",
            "this", "it", "again", "anymore", "ever", "like"}


def instruction(said: str) -> str | None:
    """The first sentence of what the person typed that tells the agent how to work, or None."""
    head = correction_head(said)
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", head):
        sentence = _FILLER.sub("", sentence.strip()).strip()
        sentence = _LEAD.sub("", sentence).strip()
        sentence = re.sub(r"[,;]?\s*(?:please|thanks|thank you|i think|i guess|ok\??)[.!]*$", "", sentence,
                          flags=re.I).strip()
        if not sentence or sentence.endswith("?"):
            continue
        if _IMPERATIVE.match(sentence) and _LASTING.search(codify(sentence, [])):
            return sentence.rstrip(".!… ")
        if _FACT.search(sentence) and not _DIAGNOSIS.match(sentence):
            return sentence.rstrip(".!… ")    # "the config lives in X, not Y": a fact to keep
    return None


def _content(clause: str) -> set:
    return set(embed.words(clause)) - _GENERIC


def core_command(command: str) -> str:
    """A command without its plumbing: `cd x && `, `2>&1`, a trailing `| head -40`."""
    command = " ".join((command or "").split())
    command = re.sub(r"\s*(?:\|\s*(?:head|tail|grep|less|more|cat|tee)\b[^|]*)+$", "", command)
    command = re.sub(r"\s*\d?>&\d|\s*2>\s*/dev/null", "", command)
    parts = [p.strip() for p in command.split("&&")]
    kept = [p for p in parts if p and not re.match(r"^(?:cd|pushd)\s", p)]
    return " && ".join(kept or parts)


def _common_command(commands: list) -> str:
    """The words every command starts with (`python x.py`, `python y.py` -> `python`)."""
    split = [c.split() for c in commands if c]
    if not split:
        return ""
    common = []
    for words in zip(*split):
        if len(set(words)) != 1:
            break
        common.append(words[0])
    return " ".join(common)


_CODE_TOKEN = re.compile(r"""(?x)
    ^(?: [~.]?/\S+                                     # a path: /etc/x, ./run.sh, ~/x
      | \S*[A-Za-z0-9][/\\][A-Za-z0-9]\S* | \w[\w.-]*/   # a/b, a folder/
      | \S*\w\.(?:[A-Za-z]{2,5}|\d+)(?:\W*$|[:(]\S*)   # a file or version: app.py, xterm.js, v1.2
      | \S*\w_\w\S* | \S*::\S* | \S*\(\)\S* | \S+=\S*   # snake_case, a::b, f(), KEY=value
      | \$\S+ | --?[A-Za-z][\w-]* )$""")
_NOT_CODE = {"e.g.", "i.e.", "etc.", "vs.", "and/or", "n/a", "w/o"}
_NOT_PROGRAM = {"use", "run", "with", "try", "call", "and", "or", "the", "a", "not", "of", "to", "in", "on",
                "instead", "then", "just", "also", "always", "never", "only", "via", "using", "is", "be", "but",
                "pass", "add", "set", "skip", "keep", "without", "drop", "give"}   # verbs before a flag


def codify(text: str, commands: list) -> str:
    """Put what looks like code in backticks: the agent's commands, quoted names, flags, paths."""
    spans = []                                          # (start, end) of code in text

    def taken(a, b):
        return any(a < e and s < b for s, e in spans)

    for m in re.finditer(r"`[^`]+`", text):
        spans.append(m.span())
    for m in re.finditer(r"(?<![\w`])['\"]([^'\"\s][^'\"\n]{0,40}?)['\"](?![\w`])", text):
        if not taken(*m.span()):
            spans.append(m.span())
    for command in sorted(filter(None, commands), key=len, reverse=True):
        for m in re.finditer(re.escape(command), text):
            if not taken(*m.span()):
                spans.append(m.span())
    tokens = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", text)]

    def bare(k):                                        # a token without trailing punctuation
        return tokens[k][2].rstrip(",.;:!?)")

    def free(k):
        return not taken(tokens[k][0], tokens[k][1])

    i = 0
    while i < len(tokens):
        word = bare(i)
        if not free(i) or not word or word.lower() in _NOT_CODE or "[REDACTED" in word \
                or not _CODE_TOKEN.match(word):
            i += 1
            continue
        first = last = i
        if word.startswith("-"):                        # a flag: with the program before it,
            if i > 0 and free(i - 1) and tokens[i - 1][2].lower() not in _NOT_PROGRAM \
                    and re.match(r"^[\w./-]+$", tokens[i - 1][2]):
                first = i - 1
            while last + 1 < len(tokens) and bare(last) == tokens[last][2]:   # ... more flags,
                nxt = bare(last + 1)                    # ... and the argument of a flag
                if not free(last + 1) or nxt.lower() in _NOT_PROGRAM or nxt.lower() in embed.STOP_WORDS \
                        or not re.match(r"^[\w./:=@+-]+$", nxt) \
                        or not (nxt.startswith("-") or bare(last).startswith("-")):
                    break
                last += 1
        spans.append((tokens[first][0], tokens[last][0] + len(bare(last))))
        i = last + 1
    out, pos = [], 0
    for s, e in sorted(spans):
        piece = text[s:e]
        out.append(text[pos:s])
        if piece.startswith("`"):
            out.append(piece)
        elif piece[:1] in "'\"" and piece[-1:] == piece[:1]:
            out.append(f"`{piece[1:-1]}`")
        else:
            out.append(f"`{piece}`")
        pos = e
    out.append(text[pos:])
    return "".join(out)


def _finish(text: str) -> str:
    """One sentence: capitalised, ending with a full stop, within LESSON_CHARS."""
    text = " ".join(text.split()).rstrip(" ,;:")
    if not text:
        return text
    text = text[:1].upper() + text[1:]
    if text[-1] in "!?":
        text = text[:-1] + "."
    elif not (text.endswith(".") or text.endswith('."')):
        text += "."
    return _fit(text)


def _fit(text: str) -> str:
    if len(text) <= LESSON_CHARS:
        return text
    cut = text[:LESSON_CHARS - 1]
    for mark in (", ", "; ", ": "):
        at = cut.rfind(mark)
        if at > LESSON_CHARS // 2 and cut[:at].count("`") % 2 == 0:
            return cut[:at] + "."
    cut = cut.rsplit(" ", 1)[0]
    if cut.count("`") % 2:
        cut = cut[:cut.rfind("`")].rstrip()
    return cut + "…"
