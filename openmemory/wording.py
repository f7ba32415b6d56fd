"""Lesson wording, without a model: one short imperative line from a correction or from
repeated failures, scoped to a project or to every one.

Deterministic, and only from what the person typed and from the agent's own failed
commands and their error lines, never from other tool output (file contents, web pages):
that text can carry instructions meant to poison memory. Pure but for `scoped`, which
asks paths whether a folder is in a git repository when not told.
"""
import re
from functools import lru_cache

from . import embed, paths
from .corrections import IMPERATIVE, TOOLS, end_trimmed, own_lines, what_lasts
from .failures import SELF_KILLED, SELF_KILLED_BEFORE, error_line, matches_itself, pipes_download, telling_lines
from .redact import mostly_secret
from .shorten import clip

FIX_CHARS = 60              # the longest command a failure lesson says to run instead, whole
LESSON_CHARS = 150           # Claude Code's MEMORY.md index: one line "under ~150 characters"



# The facts correction_lesson reads, and nothing else of them: a night asks it once for each set of
# their values (sleep.lesson_words), so a correction said again ("use pnpm", all year) is worded once.
LESSON_FACTS = ("own", "said", "form", "trigger", "trigger_tool", "trigger_failed", "command", "tool", "rejected")


def correction_lesson(facts: dict, found: dict | None = None) -> str | None:
    """A lesson from what the person typed, or None when it holds nothing lasting ("check
    again", "that still fails", a pasted log with no words of its own) or its instruction is
    a secret ("always export DB_PASS=… before migrating": redact.mostly_secret) or runs a
    download ("always run `curl … | sh` first": failures.pipes_download; a judge's lesson may
    not either), which would be put before the agent in every session.

    The sentence that instructs (corrections.lasting_sentence), in one of three forms: an
    imperative, rewritten into "use X, not `what the agent ran`" where it rejects that
    command ("Run the tests with `pytest -q`, not `python -m unittest`."); a fact set against
    the agent's guess, in the person's words ("The staging db is postgres 16, not 14."); else
    the person's own words quoted, after what the agent had just done when the words name it
    ("After `git push` failed, the user said: "..."").
    """
    said = facts.get("own") or facts.get("said") or ""
    found = found or what_lasts(said, facts.get("form") or "")     # found: what_lasts of these words
    if found["sentence"] is None or mostly_secret(found["sentence"]) or pipes_download(found["sentence"]):
        return None   # nothing lasting; or its instruction is a secret, or runs a download, which no lesson may hold
    sentence, form = found["sentence"], found["kind"]
    if facts.get("trigger_tool") == "Bash":
        command = core_command(facts.get("trigger") or "")
    else:
        command = core_command(facts.get("command") or "") if facts.get("tool") == "Bash" else ""
    programs = [command.split()[0]] if command and command.split()[0].lower() not in _TOOLS else []
    if form == "imperative":
        return _finish(codify(_imperative(_unscope(sentence), command), ([command] if command else []) + programs))
    if form == "fact" and not re.match(r"(?i)^(?:we|i|our|my)\b", sentence):
        return _finish(codify(_unscope(sentence), programs))
    unwanted = _NOT_WANTED.match(end_trimmed(sentence, ".!… "))
    if unwanted:        # "I do not want to sign my commits anymore": the rule it states, not a quote
        asked = _MINE.sub(lambda m: "the user" if m.group().lower() == "me" else "the user's", unwanted.group(1))
        return _finish(codify(_unscope(f"don't {asked}"), programs))
    quote = sentence[:1].lower() + sentence[1:] if sentence[1:2].islower() else sentence
    context = _context(facts)
    if context and re.match(r"(?i)we\s", sentence) and not set(embed.words(context)) & set(embed.words(sentence)):
        context = ""        # a convention of the team ("we don't gitignore ..."), not about the call before it
    lead = f"{context}, the user said: " if context else "The user said: "
    quote = _cut_at_a_word(quote.replace('"', "'"), LESSON_CHARS - len(lead) - 3)
    return f'{lead}"{quote}".'


# What the person says they do not want done, as a rule: "I don't want to X (anymore)" is "Don't
# X"; never about the thing of the moment ("I don't want to lose it", "... do that").
_NOT_WANTED = re.compile(r"(?i)^i\s+(?:really\s+|just\s+)?(?:don'?t|do\s+not)\s+want\s+(?:you\s+)?to\s+"
                         r"(?!\S+\s+(?:it|that|this|them|those|these)\b)(\S+\s+\S.*?)(?:\s+any\s?more)?$")
_MINE = re.compile(r"(?i)\b(?:my|me)\b")


def _cut_at_a_word(quote: str, limit: int) -> str:
    """The person's words clipped to limit, a cut made between words ("… the trailer to the…",
    never "… to the com…"): a quoted lesson is read, and approved, as it stands."""
    cut = clip(quote, limit)
    if not cut.endswith("…") or len(" ".join(quote.split())) <= limit:
        return cut
    head = cut[:-1]
    if head[-1:].isalnum() and " " in head:
        head = head.rsplit(" ", 1)[0].rstrip(" ,;:")
    return head + "…"


def stance(text: str) -> dict:
    """{tool: +1 or -1}: the tools a lesson or instruction names, for or against
    ("always use `pnpm`, never `npm`" -> {pnpm: +1, npm: -1}); what makes two corrections
    in other words the same rule."""
    out = {}
    for clause in re.split(r"[.,;:!?\n]+\s", text.lower().replace("`", " ") + " "):
        words = re.findall(r"[\w'-]+", clause)
        for i, word in enumerate(words):
            if word in _TOOLS:
                before = " ".join(words[max(0, i - 3):i])
                against = re.search(r"\b(?:not|never|don't|dont|no|stop|avoid|instead of|rather than)\b", before)
                sign = -1 if against else 1
                if out.get(word, sign) != sign:
                    return {}               # for and against at once: no clear rule
                out[word] = sign
    return out


def same_rule(a: dict, b: dict) -> bool:
    """Whether two stances say one rule: no tool for in one and against in the other, and the
    smaller names only tools the larger names the same way."""
    if not a or not b:
        return False
    small, large = sorted((a, b), key=len)
    return all(large.get(tool) == sign for tool, sign in small.items())


# Words that say how a rule is put, not what it is about: "Run the tests with `pytest -q`" and
# "Use `pytest -q`, not `python -m unittest`, for tests here" say one rule (one_rule).
_PUT = frozenset("""a an the use using used run running always never not no don't dont do does instead of rather
than and or with for to in this here repository repo project codebase we our is are how it them they tests test
testing please just only should must""".split())
_AGAINST = re.compile(r"\b(?:not|never|don't|dont|no|stop|avoid|instead of|rather than)\b", re.I)


@lru_cache(maxsize=4096)      # a night asks of each lesson's text for each correction near it
def rule_named(text: str):
    """What a lesson says a rule of, to tell one rule in other words (one_rule): ({command: +1 for,
    -1 against}, the other words that say what it is about); None when it names no command for
    (nothing to tell it by). A command is what the lesson puts in backticks, whole
    (`make test` is not `make test-integration`, nor `go test ./...` `go test -race ./...`), or a
    tool named bare ("don't use unittest"); against when not/never/instead of is among the three
    words of its clause before it (as `stance` reads)."""
    text = unscoped(text.strip().rstrip("."))
    named, words = {}, set()
    for clause in re.split(r"[.,;:!?]+\s+|\s+(?:but|and)\s+", text):
        at = 0
        for m in re.finditer(r"`([^`]+)`|([\w'-]+)", clause):
            word = m.group(1) and " ".join(m.group(1).split())
            if word is None and m.group(2).lower() in _TOOLS:
                word = m.group(2).lower()
            if word is None:
                if m.group(2).lower() not in _PUT:
                    words.add(m.group(2).lower())
                continue
            before = " ".join(re.findall(r"[\w'-]+", clause[at:m.start()])[-3:])
            sign = -1 if _AGAINST.search(before) else 1
            if named.get(word, sign) != sign:
                return None                 # for and against at once: no clear rule
            named[word] = sign
            at = m.end()
    if not any(sign > 0 for sign in named.values()):
        return None
    return named, frozenset(words)


def one_rule(a: str, b: str) -> bool:
    """Whether two lessons say one rule: the same words but for their scope, or the same commands
    for and nothing else they are about, and no command one is for and the other against; the bans
    of one all said by the other ("Run the tests with `pytest -q`" and "… `pytest -q`, not `python
    -m unittest`"). Never two that merely share a word or a command: `make test` and `make
    test-integration`, `pytest -q` to run the tests and `pytest -q` before committing."""
    if unscoped(a).strip().rstrip(".").lower() == unscoped(b).strip().rstrip(".").lower():
        return True
    one, two = rule_named(a), rule_named(b)
    if one is None or two is None or one[1] != two[1]:
        return False
    (x, _), (y, _) = one, two
    if {c for c, s in x.items() if s > 0} != {c for c, s in y.items() if s > 0}:
        return False
    small, large = sorted((x, y), key=len)
    return all(large.get(c) == s for c, s in small.items())


def other_rules(a: str, b: str) -> bool:
    """Whether two lessons name commands that make them two rules, however alike their words: each
    names a command for and they name other ones (`make test` and `make test-integration`, `go test
    ./...` and `go test -race ./...`), or one is for a command the other is against. What joins a
    surprise to a lesson by its words (sleep) asks this first."""
    one, two = rule_named(a), rule_named(b)
    if one is None or two is None:
        return False
    (x, _), (y, _) = one, two
    if {c for c, s in x.items() if s > 0} != {c for c, s in y.items() if s > 0}:
        return True
    return any(y.get(c, s) != s for c, s in x.items())


def _imperative(sentence: str, command: str) -> str:
    """An instruction; a clause rejecting the agent's own command becomes ", not `command`"."""
    clauses = [c.strip() for c in re.split(r",\s+|;\s+|\s+but\s+", sentence) if c.strip()]
    negative = [c for c in clauses if _NEGATIVE.match(c)]
    positive = [c for c in clauses if not _NEGATIVE.match(c)]
    if command and IMPERATIVE.match(sentence):
        cmd_words = set(embed.words(_unquoted(command)))
        about = [c for c in negative if _content(c) & cmd_words and not re.match(r"(?i)never\b", c)
                 and not _NOT_A_CONCERN.match(c)]
        vague = [c for c in negative if not _content(c)]
        if about and positive and not any(_CONTRAST.search(c) for c in positive):
            program = command.split()[0]
            named = set().union(*(_content(c) & cmd_words for c in about))
            shown = program if named <= {program.lower()} else command
            if len(shown) <= FIX_CHARS:     # a longer one, cut, would leave the rule ", not…" (public25)
                return ", ".join(c for c in clauses if c not in about) + f", not `{shown}`"
            return sentence
        if vague and not positive:
            return f"Don't run `{command}`"
        if len(clauses) == 1 and re.search(r"\binstead$", sentence) and command not in sentence:
            return sentence + f" of `{command}`"       # "use X instead": instead of what the agent ran
    return sentence


def _unquoted(command: str) -> str:
    """A command without what it only quotes (a commit message, an echo's text, a heredoc's body,
    to the end where a quote is left open by a cut): words there say nothing of what ran. public25
    (session 58): "don't create code examples, keep it to generic or with diagrams" was read as
    rejecting `git commit -m "… Create detailed infra…"` for its "Create", and became "Keep it to
    generic or with diagrams, not…", the command cut away with the rule."""
    out = re.sub(r"'[^'\n]*'|\"(?:[^\"\\\n]|\\.)*\"", " ", command)
    return re.split(r"<<|['\"]", out, maxsplit=1)[0]


# "Don't care about the python equivalent": says what does not matter here, not that the agent's
# command is wrong; rewritten as one ("…, not `python`") it lost its own clause (public19, session 53:
# "That lives in a other folder and will be evaluated there, not, we only care about the R tests, not
# `python`.", a lesson rendered by the rules alone).
_NOT_A_CONCERN = re.compile(r"(?i)(?:don'?t|do not|never)\s+(?:care|worry|bother|mind)\b")


def _unscope(sentence: str) -> str:
    """The person's own scope words go: the lesson's "In this repository" stands for them. Not a
    "here" that a preposition takes ("never run anything against production from here", "copy it
    to here"): that says where it is done from, and without it the sentence breaks ("... from;").
    Nor scope words that say where a thing is ("only add the two skills that are already in this
    repo", "the files that live here"): without them the sentence ends on "are already.". Nor a
    "here" set against somewhere else ("evaluated there, not here", "run it in CI, not here"),
    which left "… there, not;" (public19, session 53)."""
    def drop(found):
        if _SAYS_IT_IS.search(sentence, 0, found.start()):
            return found.group()
        if found.group().strip(", ").lower() == "here" and _TAKES_HERE.search(sentence, 0, found.start()):
            return found.group()
        return ""
    return _SCOPE.sub(drop, sentence).strip()


_TAKES_HERE = re.compile(r"(?i)\b(?:from|to|into|in|out of|over|near|up|down|around|past|not)$")
_SAYS_IT_IS = re.compile(r"(?i)\b(?:is|are|was|were|be|been|already|exists?|lives?|stays?|kept|stored)$")


def _context(facts: dict) -> str:
    """What the agent had just done, as the words name it: "After `git push` failed"; a double quote
    in it made single, as in the quote after it (a `git commit -m "…"` refused read as no quote, and
    the lesson was cut to "In this project, after refusing `git commit -m "$(cat…`.")."""
    return _context_of(facts).replace('"', "'")


def _context_of(facts: dict) -> str:
    trigger, tool = facts.get("trigger") or "", facts.get("trigger_tool") or ""
    if not trigger:
        return ""
    if tool == "Bash":
        command = core_command(trigger)
        if len(command) > 40:           # a chain: the step the person's words name
            said = set(embed.words(facts.get("said") or ""))
            steps = [p.strip() for p in command.split("&&")]
            command = next((p for p in reversed(steps) if set(embed.words(p)) & said), steps[-1])
        if facts.get("rejected") and facts.get("command") == trigger:
            return f"After refusing `{clip(command, 50)}`"
        return f"After `{clip(command, 50)}`" + (" failed" if facts.get("trigger_failed") else "")
    name = trigger.split(" ", 1)[-1].rsplit("/", 1)[-1]
    if tool in ("Edit", "MultiEdit", "Write", "NotebookEdit"):
        return f"After an edit to `{clip(name, 50)}`"
    if tool == "Read":
        return f"After you read `{clip(name, 50)}`"
    return ""


def error_lesson(members: list, cwd=None) -> str:
    """A known issue from repeated failures: the command (what they share), the cause (the
    first error line of the agent's own failed command) and, when a session shows it, what
    fixed it: "`npm run seed` fails with `relation "users" does not exist` until `npm run
    db:migrate` has run."; when the fix is the same command run another way (a runner before
    it, other flags, a word put right: slip_of), "; run it as `make test`"; for a path not
    found whose file a later call found, that file:
    "There is no `.golangci.yml`: the file is `.golangci.yaml`." Never "don't run X": running
    it is usually the work. cwd: the folder they ran in, whose paths are written from it (and a
    home folder as ~)."""
    commands = [_no_ids(core_command(f.get("command") or f.get("tool") or "")) for f in members]
    if any(f.get("moved") for f in members):    # the cause is the folder, not the command: no output quoted
        programs = sorted({c.split(" ", 1)[0] for c in commands if c})
        shown = " and ".join(f"`{p}`" for p in programs[:2]) or "commands"
        fixed = any(f.get("fixed_by") for f in members)
        return _finish(f"The Bash tool stays where a `cd` left it: after `cd subdir && …`, {shown} found no "
                       f"relative paths" + ("; cd back to the root first" if fixed else ""))
    command = _local(_common_command(commands) or max(commands, key=commands.count), cwd)
    tool = members[0].get("tool") or "Bash"
    found = next((f.get("found") for f in reversed(members) if f.get("found")), "")
    if found and tool != "Bash":
        missing = command.split(" ", 1)[-1].replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        return _finish(f"There is no `{clip(missing, 60)}`: the file is `{clip(found, 60)}`")
    cause = _local(next((error_line(f) for f in reversed(members) if error_line(f)), ""), cwd)
    what = f"`{_short(command, 50)}`" if tool == "Bash" else clip(command, 50)
    fixed = next((f for f in reversed(members) if f.get("fixed_by")), {})
    fix = fixed.get("fixed_by") or ""
    if fix and pipes_download(fix):
        fix = ""                # stored before such a step was no fix (issue 27): never named
    module = _NO_MODULE.match(cause)
    if module and tool == "Bash":
        # a module the interpreter could not import, which another interpreter (an environment's:
        # `conda run -n viv python3`, `.venv/bin/python`, `uv run python`) imported later: the
        # lesson is that interpreter, not the failed command "until" the one that worked
        for f in reversed(members):
            other = f.get("fixed_by") or ""
            if not other or pipes_download(other):
                continue
            failed_python = python_of(_local(core_command(f.get("command") or ""), cwd))
            fix_python = python_of(_local(core_command(other), cwd))
            if failed_python and fix_python and fix_python != failed_python:
                return _finish(f"`{failed_python}` here has no module `{clip(module.group(1), 40)}` "
                               f"(`ModuleNotFoundError`); run Python as `{fix_python}`")
    if fix:
        fix = _local(_no_ids(core_command(fix)), cwd)
        slip = slip_of(fix, _local(_no_ids(core_command(fixed.get("command") or "")), cwd))
        if slip and slip[0] in command.split():     # the words the failures share, with that word put right
            fix = " ".join(slip[1] if word == slip[0] else word for word in command.split())
        if runs_otherwise(fix, command):
            # shown whole or not at all: cut, it is a command no one can run ("run it as `grep -n
            # "grep -r" ~/.claude/skills/log-analyzer-optimized/S…`", public10)
            after = f"; run it as `{fix}`" if len(fix) <= FIX_CHARS else ""
        elif _short(fix, 45) == _short(command, 50) or _short(fix, 45).split()[1:] == ["…"]:
            # shown cut, it reads as the failed command ("`x …` fails ... until `x …` has run"), or as
            # a program and nothing it was given ("until `mv …` has run": a path is never cut)
            after = ""
        else:
            after = f" until `{_short(fix, 45)}` has run"
    else:
        after = ""
    room = LESSON_CHARS - len("In this repository ") - len(what) - len(" fails with ") - len(after) - 3
    if after and room < 40 and tool == "Bash":
        # the fix must fit: at 150 characters the line was cut at its last "; ", the fix with it
        # ("`git-ai search --commit SHA --json --verbose` fails with `…--porcelain, --count`.")
        shorter = f"`{_short(command, 30)}`"
        room, what = room + len(what) - len(shorter) - 1, shorter     # (- 1: a cut cause's "…")
    cause = _tail(cause, max(room, 40 if not after else 20))
    quoted = "`" + cause.replace("`", "'") + "`"      # in code formatting, always: a quote, never words to follow
    return _finish(f"{what} fails with {quoted}{after}")



# --------------------------------------------------------------------------------------
# A failure of the environment: what the shell, the machine or a hook refused, whatever the
# command (issue 24, item 5). Its cause is the same whichever program ran and whatever its
# arguments: zsh's "no matches found" after `gh api …?ref=x` and after `ls *-PLAN.md` is one
# cause, and the program that ran is no part of it. Worded from the cause alone: of the tool's
# output only a program's name that the command itself holds, or a variable's name in capitals;
# never its advice ("Use 'git stash' first"), which is anyone's words.

# The shell's own voice: Claude Code runs a command through `eval` in the person's shell.
_SHELL_SAID = r"(?:\(eval\):\d+:|zsh:(?:\d+:)?|(?:ba|da|k)?sh:(?: line \d+:| \d+:)?|(?:/usr(?:/local)?)?/bin/(?:ba|z|da)?sh:(?: line \d+:| \d+:)?)\s*"
_MISSING = re.compile(rf"^{_SHELL_SAID}(?:command not found: ([\w.+-]+)|([\w.+-]+): (?:command )?not found)$")
_NO_MATCH = re.compile(r"^(?:\(eval\):\d+:|zsh:(?:\d+:)?)\s*no matches found: \S")
_READ_ONLY = re.compile(rf"^{_SHELL_SAID}(?:read-only variable: (\w+)|(\w+): readonly variable)$")
_NOT_PERMITTED = re.compile(rf"^{_SHELL_SAID}(.+?):? operation not permitted(?::.*)?$", re.I)
_BLOCKED = re.compile(r"\bBLOCKED by ([A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*){0,3}?)(?=[.:](?:\s|$)|$)")
_UNSET = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]|[A-Z]{3,}) (?:environment variable )?(?:is )?"
                    r"(?:required but )?not set\b|\benvironment variable ([A-Z][A-Z0-9_]{2,}) (?:is )?(?:not set|missing)\b")
# What needs a terminal, which the Bash tool never has: sudo asking for a password, `tmux attach`,
# `docker run -it`, an Ink app's raw mode, gpg's pinentry, git asking for a user name over HTTPS.
# Each phrase is a program's own fixed words, quoted by the lesson as ours (_TERMINAL_SAID), never
# the line they came in.
_NO_TERMINAL = re.compile(r"^(?:(sudo): (a terminal is required|no tty present|a password is required|"
                          r"sorry, you must have a tty)|.*\b(not a terminal|the input device is not a tty|"
                          r"raw mode is not supported|inappropriate ioctl for device)\b|"
                          r"fatal: (could not read username) for 'https://)", re.I)
# Claude Code's own refusal of a `cd` or `ls` outside the session's working folders (2.1.x: "cd to
# '/tmp' was blocked. For security, Claude Code may only change directories to child directories
# of the allowed working directories for this session"): the whole result of a call that never ran.
_OUTSIDE = re.compile(r"^(cd|ls) (?:to|in) '.*' was blocked\. For security, Claude Code may only ")
# The Bash tool's own limit: Claude Code ends a call that runs past it (2 minutes unless the call
# asked for more) and says so first, before what the command printed ("Command timed out after 2m
# 0.0s (node:18160) [DEP0060] …"): a dev server run in the foreground, a long benchmark, a model's
# first download (public13, public15, public16: each labelled lasting, none read).
_TIMED_OUT = re.compile(r"^Command timed out after (\d+m(?: [\d.]+s)?|[\d.]+s)(?=\s|$)")
# SSH with no key a server takes: the agent holds none (or refuses to sign), or none is accepted.
_NO_SSH_KEY = re.compile(r"(could not open a connection to your authentication agent|the agent has no identities|"
                         r"agent refused operation|permission denied \(publickey)", re.I)
_TERMINAL_SAID = {"a terminal is required": "a terminal is required", "no tty present": "no tty present",
                  "a password is required": "a password is required", "sorry, you must have a tty": "you must have a tty",
                  "not a terminal": "not a terminal", "the input device is not a tty": "the input device is not a TTY",
                  "raw mode is not supported": "Raw mode is not supported",
                  "inappropriate ioctl for device": "Inappropriate ioctl for device",
                  "could not read username": "could not read Username"}
# PowerShell run from the Bash tool with its script in double quotes: bash expands `$_`, `$env:X`,
# `$false`, `$x = …` to its own (mostly empty) values before PowerShell reads the script. Read
# from the agent's command alone, never from what the call printed.
_POWERSHELL_SCRIPT = re.compile(r"(?i)(?:^|(?<=[\s;&|(]))(powershell|pwsh)(?:\.exe)?\b(?:\s+-(?!c\b|command\b)\w+(?:\s+[\w.]+)?)*"
                                r"\s+-(?:c|command)\s+\"((?:[^\"\\]|\\.)*)\"")
_POWERSHELL_NAME = re.compile(r"(?i)(?<!\\)\$(?:_(?!\w)|env:\w|true\b|false\b|null\b|psitem\b|lastexitcode\b|"
                              r"ps\w+|args\b|error\b|\w+\s*[+-]?=(?!=))")
# cmd.exe's syntax given to the Bash tool (on Windows, Git Bash): `if exist`, a Windows program's
# `/F` switch (which Git Bash turns into a path, `F:/`), `type`, `copy` or `del` of a `C:\\…`
# path. Read from the agent's command alone, shown in these words only.
_CMD_PROGRAMS = ("taskkill", "tasklist", "findstr", "dir", "del", "erase", "copy", "xcopy", "robocopy", "move", "rd",
                 "rmdir", "type", "attrib", "icacls", "ipconfig", "where", "cmd")
_CMD_SYNTAX = re.compile(r"(?i)(?:^|[\s;&|(])(?:(if\s+(?:not\s+)?exist)\s|"
                         rf"({'|'.join(_CMD_PROGRAMS)})(?:\.exe)?\s+(?:[^|;&\n/]*?\s)?(/(?:[a-z?]{{1,2}}|pid|im|fi))(?=\s|$)|"
                         r"(type|copy|del|move)\s+\"?[a-z]:\\)")
# Bash's syntax given to Claude Code's PowerShell tool (on Windows): a heredoc (`git commit -m
# "$(cat <<'EOF' …"`), which PowerShell refuses to parse ("Missing file specification after
# redirection operator", "The '<' operator is reserved for future use"), or `&&` and `||`, which
# Windows PowerShell 5.1 does not take ("The token '&&' is not a valid statement separator in this
# version"): nothing ran (public21, session 55: two commit messages written as bash heredocs, no
# lesson). Read from the agent's command, and from PowerShell's own refusal to parse it.
_HEREDOC = re.compile(r"<<-?\s*['\"]?[A-Za-z_]\w*")
_POWERSHELL_PARSE = re.compile(r"(?i)^\s*(?:(missing file specification after redirection operator|the '<' operator is "
                               r"reserved for future use)|the token '(&&|\|\|)' is not a valid statement separator)")
_ENVIRONMENT_WORDS = ("not found", "no matches", "read-only", "readonly", "not permitted", "blocked by", "not set",
                      "pkill -f matches", "terminal", "tty", "password is required", "raw mode", "ioctl",
                      "could not read username", "authentication agent", "no identities", "agent refused",
                      "(publickey", "was blocked. for security", "command timed out after")
_UNSET_UP_TO = re.compile(rf"^(.*?(?:{_UNSET.pattern})).*$")
ENVIRONMENT_KINDS = ("missing", "glob", "read-only", "sandbox", "hook", "unset", "self-kill", "terminal", "quoting",
                     "cmd", "ssh-key", "outside", "powershell")
# Kinds one failure is enough for: what the Bash tool is, on every call (it has no terminal, its
# shell is bash, not cmd.exe), and what the PowerShell tool is (not bash), not what this machine
# happened to lack that once.
ONE_FAILURE_KINDS = ("terminal", "quoting", "cmd", "outside", "powershell")


def cmd_syntax(command: str) -> list:
    """The cmd.exe syntax a command gives bash, in fixed words (`if exist`, `taskkill /F`, `type C:\\…`)."""
    found = []
    for m in _CMD_SYNTAX.finditer(command):
        shown = (m.group(1) and "if exist" or m.group(2) and f"{m.group(2).lower()} {m.group(3)}"
                 or f"{m.group(4).lower()} C:\\…")
        if shown not in found:
            found.append(shown)
    return found


def powershell_expanded(command: str) -> str:
    """"powershell" or "pwsh" when a command runs a PowerShell script in double quotes that
    holds a `$` name bash expands first (`powershell -Command "… $env:USERPROFILE …"`), else ''."""
    if "$" not in command:
        return ""
    for m in _POWERSHELL_SCRIPT.finditer(command):
        if _POWERSHELL_NAME.search(m.group(2)):
            return m.group(1).lower()
    return ""


def environment_cause(facts: dict) -> tuple:
    """A failure's cause when it is the environment's, as (kind, what): ("missing", "psql") for a
    program the shell did not find (named in the command), ("glob", "") for zsh's "no matches
    found", ("read-only", "status") for a variable the shell will not let be set, ("sandbox",
    what) for "operation not permitted" in the shell's voice, ("hook", name) for a call a hook
    blocked ("BLOCKED by CC Safety Net"), ("unset", "DATABASE_URL") for an environment variable
    the output says is not set (the command not setting it), ("self-kill", "pkill") for a `pkill -f`
    that killed the shell running it (failures.self_killed), ("terminal", "sudo" | "git" | "") for
    what needs a terminal the Bash tool never has (sudo's password, git's login, `tmux attach`),
    and, read from the command alone, ("quoting", "powershell") for a double-quoted PowerShell
    script bash expanded first and ("cmd", "") for cmd.exe's syntax given to bash; for Claude Code's
    PowerShell tool, ("powershell", "heredoc" | "&&" | "||") for bash's syntax PowerShell refused to
    parse (_bash_given_to_powershell); () for any other failure."""
    command = facts.get("command") or ""
    if facts.get("tool") == "PowerShell":
        return _bash_given_to_powershell(command, facts.get("error") or ())
    bash = (facts.get("tool") or "Bash") == "Bash"
    lines = telling_lines(facts)
    said = "\n".join(lines).lower()
    if not any(word in said for word in _ENVIRONMENT_WORDS):
        return _shell_not_meant(command) if bash else ()    # most failures: a few substring tests
    ran = len(lines) < len(facts.get("error") or ())       # an "Exit code N": the command ran
    if bash and ran and lines in ([SELF_KILLED], [SELF_KILLED_BEFORE]) and matches_itself(command):
        return ("self-kill", "pkill")   # our reading of a silent kill (failures.self_killed), not a line printed
    if bash and not ran and lines and _TIMED_OUT.match(lines[0]):
        # Claude Code's words, before any exit code (a program that ran and printed them is anyone's);
        # unless the call was written for another shell (`cmd /c …` waits in a cmd.exe bash started)
        what = core_command(command)
        return _shell_not_meant(command) or (("timeout", what) if what else ())
    for line in lines:
        blocked = _BLOCKED.search(line)
        if blocked and not ran and ("hook error" in line.lower() or bash):
            # a hook's refusal: a call that never ran, or Claude Code's "…hook error: […]: BLOCKED
            # by …"; what a program that ran or a server printed is anyone's words (red44), "hook
            # error" in it too (red45: a PreToolUse hook's block comes before any exit code)
            return ("hook", blocked.group(1))
        if not bash:
            continue
        m = _NO_TERMINAL.match(line.strip())
        if m and not line.lstrip().lower().startswith(("warning", "mesg:", "pseudo-terminal")):
            if m.group(1) and not re.search(r"(?<![\w.-])sudo(?![\w.-])", command):
                continue        # sudo's words where the command ran no sudo: a script's own output
            return ("terminal", "sudo" if m.group(1) else "git" if m.group(4) else "")
        m = _OUTSIDE.match(line)
        if m and not ran and re.search(rf"(?<![\w.-]){m.group(1)}(?![\w.-])", command):
            return ("outside", m.group(1))
        m = _NO_SSH_KEY.search(line)
        if m and re.search(r"(?<![\w.-])(?:ssh|ssh-add|git|scp|sftp|rsync)(?![\w.-])", command):
            return ("ssh-key", "")
        m = _MISSING.match(line)
        if m:
            name = m.group(1) or m.group(2)
            if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", command):
                return ("missing", name)
            continue
        if _NO_MATCH.match(line):
            return ("glob", "")
        m = _READ_ONLY.match(line)
        if m:
            return ("read-only", m.group(1) or m.group(2))
        m = _NOT_PERMITTED.match(line)
        if m:
            return ("sandbox", " ".join(re.sub(r"\S*[/\\]\S*|\d+", "…", m.group(1).lower()).split()))
        m = _UNSET.search(line)
        if m:
            name = m.group(1) or m.group(2)
            if not re.search(rf"(?<![\w$]){re.escape(name)}=", command):
                return ("unset", name)
    return _shell_not_meant(command) if bash else ()


def _bash_given_to_powershell(command: str, error) -> tuple:
    """("powershell", "heredoc" | "&&" | "||") for bash's syntax the PowerShell tool refused to
    parse (_POWERSHELL_PARSE) where the command holds it; else ()."""
    for line in error:
        m = _POWERSHELL_PARSE.match(line)
        if not m:
            continue
        if m.group(1) and _HEREDOC.search(command):
            return ("powershell", "heredoc")
        if m.group(2) and m.group(2) in command:
            return ("powershell", m.group(2))
    return ()


def _shell_not_meant(command: str) -> tuple:
    """A Bash call written for another shell, read from the command alone: ("quoting", "powershell")
    for a double-quoted PowerShell script with `$` names in it, ("cmd", "") for cmd.exe's syntax."""
    program = powershell_expanded(command)
    if program:
        return ("quoting", program)
    if "/" in command or "exist" in command.lower() or ":\\" in command:
        if cmd_syntax(command):
            return ("cmd", "")
    return ()


def environment_key(facts: dict) -> str:
    """environment_cause as a cause key (failures.cause_key's form, "who: what"): one for every
    program and argument that met it; a hook, a sandbox's refusal and a variable not set name
    the project's own things (quoted: failures.project_bound), a program not installed, zsh's
    glob and a read-only variable hold wherever the shell runs. "" for any other failure.
    Asked of each failure several times a night (sleep.cause_of): worked out once for the same
    call and lines."""
    return _environment_key(facts.get("tool") or "Bash", facts.get("command") or "", tuple(facts.get("error") or ()))


@lru_cache(maxsize=4096)        # a failure's key is asked for by each step of consolidation
def _environment_key(tool: str, command: str, error: tuple) -> str:
    found = environment_cause({"tool": tool, "command": command, "error": list(error)})
    if not found:
        return ""
    kind, what = found
    return {"missing": f"shell: command not found: {what.lower()}", "glob": "zsh: no matches found",
            "read-only": f"shell: read-only variable: {what}", "sandbox": f"shell: '{what}' not permitted",
            "hook": f"hook: '{what.lower()}' blocks", "unset": f"env: '{what}' not set",
            "self-kill": "shell: pkill -f kills its own shell",
            "terminal": f"shell: no terminal{' for ' + what if what else ''}",
            "quoting": f"bash: expands $ in a double-quoted {what} script",
            "cmd": "bash: is not cmd.exe", "ssh-key": "ssh: no key the server takes",
            "outside": f"claude code: blocks {what} outside the session's folders",
            "powershell": f"powershell tool: is not bash ({what})",
            "timeout": f"bash tool: times out on `{what}`"}[kind]


def _head(command: str) -> str:
    """A command by its first plain words (its program, subcommand and flags), "…" for the rest:
    `uv run python -c …`, `git checkout -- …`."""
    words = _bare_words(command).split()
    kept = []
    for word in words[:4]:
        if not re.match(r"^(?:[\w.:@+]+(?:-[\w.:@+]+)*|--?[\w-]*)$", word):
            break
        kept.append(word)
    shown = " ".join(kept) or clip(words[0], 30) if words else ""
    return shown + (" …" if len(kept) < len(words) else "")


def environment_lesson(members: list, cwd=None) -> str:
    """A known issue of the environment from its failures (environment_cause), worded from the
    cause: "`psql` is not installed (`command not found`)", "The shell is zsh: an unquoted `*` or
    `?` that matches no file fails the whole command (`no matches found`)", "A hook blocks `git
    checkout -- …` and `git restore …`"; and what made the same thing work where a later turn
    showed it ("; it worked as `…`"). A program not installed that a later turn ran otherwise
    (`python3` for `python`) and a variable not set are said as error_lesson says a failure, the
    variable's cause line cut where it says so. Never a line of the tool's advice, never "don't
    run X"."""
    kind, what = next((found for found in map(environment_cause, reversed(members)) if found), ("", ""))
    commands = []
    for f in members:
        shown = _head(_local(_no_ids(core_command(f.get("command") or f.get("tool") or "")), cwd))
        if shown and shown not in commands:
            commands.append(shown)
    command = commands[-1] if commands else ""
    fixed = next((f for f in reversed(members) if f.get("fixed_by")), {})
    fix = fixed.get("fixed_by") or ""
    fix = "" if not fix or pipes_download(fix) else _local(_no_ids(core_command(fix)), cwd)
    if kind == "missing":
        if fix and not (fixed.get("reached") and not runs_otherwise(fix, command)):
            return error_lesson(members, cwd)   # the failed command run another way (`python3` for `python`)
        # reached by a path to it in a longer line (`export JAVA_HOME=… && $JAVA_HOME/bin/javac …`,
        # episodes._reached): where it is, not a step to name
        body = f"`{what}` is not " + ("on the PATH" if fix else "installed") + " (`command not found`)"
        fix = ""
    elif kind == "glob":
        body = "The shell is zsh: an unquoted `*` or `?` that matches no file fails the whole command (`no matches found`)"
    elif kind == "self-kill":
        # and how not to (a reviewer edited it for naming none, public24, session 58): `kill $(pgrep -f …)`
        # matches itself the same way; a bracketed letter matches the process, not the pattern's own text
        body = ("`pkill -f` also kills the Bash tool's own shell (its command line holds the pattern); "
                "kill by PID or `pkill -f '[n]ame'`")
    elif kind == "terminal":
        said = next((_TERMINAL_SAID[m.group(2) or m.group(3) or m.group(4)] for f in reversed(members)
                     for line in telling_lines(f) for m in [_NO_TERMINAL.match(line.strip().lower())] if m), "")
        if what == "sudo":
            body = f"`sudo` asks for a password here, and the Bash tool has no terminal to type it in (`{said}`)"
        elif what == "git":
            body = f"git has no saved login for HTTPS here, and the Bash tool has no terminal to ask for one (`{said}`)"
        else:
            shown = [f"`{c}`" for c in commands[:2]]
            body = (" and ".join(shown) + (" need" if len(shown) > 1 else " needs") +
                    f" a terminal, which the Bash tool does not have (`{said}`)")
        fix = ""        # whatever ran next, the command that needed a terminal was not made to work
    elif kind == "quoting":
        body = (f"Bash expands `$_` and `$env:…` in a double-quoted `{what} -Command \"…\"` first: "
                f"single-quote the script or write `\\$`")
        fix = ""
    elif kind == "outside":
        body = f"Claude Code blocks `{what}` outside the session's working folders (`was blocked. For security`)"
        fix = ""
    elif kind == "timeout":
        if fix:
            return error_lesson(members, cwd)   # what a later turn showed made it end in time
        said = next((m.group(0) for f in reversed(members) for m in [_TIMED_OUT.match((telling_lines(f) or [""])[0])]
                     if m), "Command timed out")
        # the fact alone: why it ran long (a server that never exits, a prompt it waits at, a long run)
        # is not ours to guess, nor so what to do instead
        body = f"`{command}` runs past the Bash tool's time limit (`{said}`)"
    elif kind == "ssh-key":
        said = next((m.group(1) for f in members for line in telling_lines(f)
                     for m in [_NO_SSH_KEY.search(line)] if m), "")     # as the first said it
        said = {"could not open a connection to your authentication agent": "Could not open a connection to your "
                "authentication agent", "the agent has no identities": "The agent has no identities",
                "agent refused operation": "agent refused operation"}.get(said.lower(), "Permission denied (publickey)")
        shown = " and ".join(f"`{c}`" for c in commands[:2])
        agent = "The SSH agent here has no key it will use" if said != "Permission denied (publickey)" \
            else "SSH here has no key the server takes"
        body = f"{agent}, so {shown} fail{'s' if len(commands[:2]) == 1 else ''} (`{said}`)"
        fix = ""
    elif kind == "cmd":
        syntax = []
        for f in members:
            syntax += [x for x in cmd_syntax(f.get("command") or "") if x not in syntax]
        for n in (3, 2, 1):
            shown = [f"`{x}`" for x in syntax[:n]]
            body = ("The Bash tool runs bash, not cmd.exe: " + (", ".join(shown[:-1]) + " and " + shown[-1]
                    if len(shown) > 1 else shown[0]) + " fail there; use POSIX commands, and `//F` for a switch `/F`")
            if len(body) + len("In this repository ") <= LESSON_CHARS:
                break
        fix = ""
    elif kind == "powershell":
        said = next((m.group(0).strip() for f in members for line in f.get("error") or ()
                     for m in [_POWERSHELL_PARSE.match(line)] if m), "")
        said = said.rstrip(".")
        if what == "heredoc":
            body = f"A bash heredoc (`<<'EOF'`) fails in the PowerShell tool (`{said}`); use `@'…'@`"
        else:
            body = f"Bash's `{what}` fails in the PowerShell tool (`{said}`); use `;`"
        fix = ""
    elif kind == "read-only":
        body = f"`{what}` is a read-only variable in the shell: `{command}` fails where it sets it"
    elif kind == "sandbox":
        body = f"The shell runs sandboxed: `{command}` fails with `operation not permitted`"
    elif kind == "hook":
        shown = [f"`{c}`" for c in commands[:3]]
        body = "A hook blocks " + (", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else shown[0])
    else:
        # a variable not set: the failure as error_lesson says it, its cause line cut where it says
        # so ("…DATABASE_URL environment variable is required but not set"): what the tool goes on
        # to advise ("Set it to your PostgreSQL connection string (e.g. …)") is no part of it
        return error_lesson([dict(f, error=[_UNSET_UP_TO.sub(r"\1", line) for line in f.get("error") or []])
                             for f in members], cwd)
    if fix:
        after = f"; it worked as `{_short(fix, 60)}`" if runs_otherwise(fix, core_command(members[-1].get("command") or "")) \
            else f"; it worked after `{_short(fix, 60)}`"
        if len(body) + len(after) + len("In this repository ") < LESSON_CHARS:
            body += after
    return _finish(body)

# A number or a commit id given to a command (`gh pr diff 104`, `git show 3f2a9c1`): that one
# time's, not the lesson's; another session runs it on another.
_ID_ARGUMENT = re.compile(r"(?<=\s)#?(?:\d{2,}|(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40})(?=\s|$)")


def _no_ids(command: str) -> str:
    """The command with the numbers and commit ids it was given written as N and SHA."""
    return _ID_ARGUMENT.sub(lambda m: "SHA" if re.search("[a-f]", m.group()) else "N", command)


def _short(command: str, limit: int) -> str:
    """A command in at most limit characters: whole, else its first words up to its first path
    or long argument, and "…" (never cut inside a word)."""
    if len(command) <= limit:
        return command
    kept = []
    for word in command.split():
        if "/" in word or len(" ".join(kept + [word])) > limit - 2:
            break
        kept.append(word)
    return " ".join(kept or [clip(command.split()[0], limit - 2)]) + " …"


# The interpreter a command runs Python with, and the runner of an environment before it.
_NO_MODULE = re.compile(r"^(?:ModuleNotFoundError|ImportError): No module named '([\w.]+)'")
_PYTHON = re.compile(r"(?:(?:source|\.) \S+/activate && )?"
                     r"(?:(?:conda|mamba|micromamba) run (?:-n|--name) [\w.-]+ |(?:uv|poetry|pipenv|pdm|hatch|rye) run )?"
                     r"(?<![\w.~/-])(?:[\w.~/-]*/)?python[\d.]*(?![\w.-])")


def python_of(command: str) -> str:
    """The interpreter a command runs Python with, its environment's runner and all (`conda run -n
    viv python3`, `.venv/bin/python`, `uv run python`), '' when it runs none."""
    m = _PYTHON.search(command)
    return m.group() if m else ""


def runs_otherwise(fix: str, failed: str) -> bool:
    """Whether what made a failure work is the failed command itself run another way (a runner or
    `VAR=…` before it, or a wrapper before it dropped: `bun run test` for `rtk bun run test`, other
    flags, one word put right: "run it as"), not a step run before the
    same command worked ("until … has run")."""
    return fix != failed and (_bare_words(fix).endswith(_bare_words(failed)) or other_flags(fix, failed)
                              or bool(slip_of(fix, failed)) or _bare_words(failed).endswith(" " + _bare_words(fix)))


def other_flags(command: str, failed: str) -> bool:
    """Whether a command is the failed one with other flags: the same words but for its flags
    (`gh pr diff 104 --name-only` after `gh pr diff 104 --stat`), one flag at least."""
    def words(c):
        return [w for w in c.split() if not w.startswith("-")]
    return command != failed and "&&" not in command + failed and len(words(failed)) >= 2 \
        and words(command) == words(failed) and any(w.startswith("-") for w in failed.split())


def slip_of(command: str, failed: str) -> tuple:
    """The one word a command puts right in the failed one, as (failed word, its correction):
    the same words but one, and that one a near word (near_word: `make tests` -> `make test`,
    `git stauts` -> `git status`, `tests/test_order.py` -> `tests/test_orders.py`); else ()."""
    a, b = failed.split(), command.split()
    if len(a) != len(b):
        return ()
    changed = [(x, y) for x, y in zip(a, b) if x != y]
    if len(changed) != 1:
        return ()
    x, y = changed[0]
    return (x, y) if near_word(x.strip("'\""), y.strip("'\"")) else ()


_NUMBER_OR_ID = re.compile(r"#?(?:\d+|(?=[0-9a-f]*\d)[0-9a-f]{7,40})")


def near_word(a: str, b: str) -> bool:
    """Whether b is a put right: a slip of one letter (one added, dropped, changed or two
    swapped; a digit changed is another target), the same file in another folder of the project
    (a relative one: `/tmp/x/setup.py` after `scripts/setup.py` is a file the session made, no
    fix), or the same name with another ending (`.golangci.yml`, `.golangci.yaml`); never a
    number or a commit id (`gh pr view 105` after 104 is another pull request, not a slip)."""
    if a == b or min(len(a), len(b)) < 2 or _NUMBER_OR_ID.fullmatch(a) or _NUMBER_OR_ID.fullmatch(b):
        return False
    if "/" in a or "/" in b:
        (folder_a, _, a), (folder_b, _, b) = a.rpartition("/"), b.rpartition("/")
        if a == b:
            return "." in a.strip(".") and not folder_b.startswith(("/", "~"))  # the same file, in another folder
        if folder_a != folder_b:
            return False
    (stem_a, _, end_a), (stem_b, _, end_b) = a.rpartition("."), b.rpartition(".")
    if stem_a.strip(".") and stem_b.strip("."):     # file names: the same name, another ending, or a slip in the name
        return stem_a == stem_b or (end_a == end_b and _one_slip(stem_a, stem_b))
    return _one_slip(a, b)


def _one_slip(a: str, b: str) -> bool:
    """Whether two words differ by one letter added, dropped or changed (in words of four
    letters or more), or by two next to each other swapped: a digit added or dropped is a name
    put right (`python3` after `python`), a digit changed another target (`v2` after `v1`)."""
    if len(a) == len(b):
        at = [i for i in range(len(a)) if a[i] != b[i]]
        if len(at) == 1:
            return len(a) >= 4 and not (a[at[0]].isdigit() or b[at[0]].isdigit())
        return len(at) == 2 and at[1] == at[0] + 1 and a[at[0]] == b[at[1]] and a[at[1]] == b[at[0]] \
            and not a[at[0]].isdigit() and not a[at[1]].isdigit()
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    if len(longer) - len(shorter) != 1:
        return False
    at = next((i for i in range(len(shorter)) if shorter[i] != longer[i]), len(shorter))
    return longer[:at] + longer[at + 1:] == shorter


_HOME = re.compile(r"(?:/Users|/home)/[^/\s`'\"]+/|[A-Za-z]:\\Users\\[^\\\s`'\"]+\\")


def _local(text: str, cwd) -> str:
    """Paths in a lesson from the project's folder (a file of it by its path in it), a home
    folder as ~: whose machine it was adds nothing to a lesson and leaves it with the lesson."""
    root = str(cwd or "").rstrip("/\\")
    if root:
        text = text.replace(root + "/", "").replace(root + "\\", "").replace(root, ".")
    return _HOME.sub("~/", text)


def _tail(cause: str, limit: int) -> str:
    """A long cause by its last clauses, which say why ("...: Bind for 0.0.0.0:5432 failed:
    port is already allocated"), else cut between words: "error: Your local changes to the
    following files…", never "…files wou…", a word the agent reads half of."""
    if len(cause) <= limit:
        return cause
    parts = cause.split(": ")
    for n in range(1, len(parts)):
        tail = ": ".join(parts[n:])
        if len(tail) <= limit and len(tail.split()) >= 3:
            return "…" + tail
    cut = clip(cause, limit)
    folded = " ".join(cause.split())
    kept = cut[:-1]
    if folded[len(kept):len(kept) + 1].strip() and " " in kept:    # the cut falls inside a word
        kept = kept.rsplit(" ", 1)[0].rstrip(" ,;:")
        return kept + "…"
    return cut


def _bare_words(command: str) -> str:
    return " ".join(w for w in command.split() if not re.match(r"^[A-Z_][A-Z0-9_]*=", w))


def scoped(body: str, cwd, in_repository: bool | None = None) -> str:
    """The lesson as the agent reads it: "In this repository ..." when it is one project's.

    in_repository: whether cwd is in a git repository (found out here when None)."""
    if not cwd:
        return _fit(body)
    if in_repository is None:
        in_repository = paths.git_root(cwd) is not None
    where = "In this repository" if in_repository else "In this project"
    if _QUOTED_LESSON.match(body):      # a quote: it goes to this project's memory as it is
        return _fit(body)
    if _SAYS_WHERE.match(body):         # "This project uses X now": it says where already
        return _fit(body[:1].upper() + body[1:])
    body = _HERE_ALREADY.sub(lambda m: "" if m.group().lower().startswith("in") else "the ", body, count=1)
    # ("This repo's config is ..." -> "the config is ...": the prefix says where)
    body = _unscope(body)
    # (and so do "... in this repo ..." and "... here" later in it: "In this project the config in
    # this repo is `.golangci.yaml`" and "run X here" read as a slip; a reviewer edited them)
    if _common_first_word(body):         # "Run ..." -> "run ...", but "PR ...", "`make` ..." and "Claude Code's ..." stay
        body = body[:1].lower() + body[1:]
    if _LEADING_CLAUSE.match(body) and len(where) + 2 + len(body) <= LESSON_CHARS:
        return f"{where}, {body}"       # "In this project, after changing `x`, check ...", not "In this project after ..."
    # (a body as long as the judge was given room for, judge._room, loses no word to the comma: it was
    # cut to "... name them after the real resource (ResourceClaim.")
    return _fit(f"{where} {body}")


# The rules' quote of the person (wording.correction_lesson): "The user said: ..." or "After `git
# push` failed, the user said: ...", not a lesson that begins "After changing `x`, check ...".
_QUOTED_LESSON = re.compile(r'(?:After [^"]*?, )?the user said: "', re.I)
# A lesson that opens with when or where it holds, up to a comma ("in tests, compare ...", "when
# asked to merge, run ..."): after "In this project" it reads as two places without a comma.
_LEADING_CLAUSE = re.compile(r"(?:in|on|when|whenever|if|unless|before|after|while|once|for|with|during|inside|"
                             r"within|outside)\s(?:`[^`\n]*`|[^,.;:`]){1,80},\s", re.I)


# A lesson whose subject is the project itself ("This project uses tooluniverse now, not ...").
_SAYS_WHERE = re.compile(r"(?i)(?:this|the)\s+(?:repo|repository|project|codebase)\s+[a-z]"
                         # "In this learning project, …": where, in words of its own (public12)
                         r"|in\s+(?:this|the)\s+(?:[\w-]+\s+){1,2}(?:repo|repository|project|codebase)\b")
_HERE_ALREADY = re.compile(r"(?i)^(?:in\s+(?:this|the)\s+(?:repo|repository|project|codebase),?\s+|"
                           r"(?:this|the)\s+(?:repo|repository|project|codebase)'s\s+(?=\S))")
_FUNCTION_WORDS = frozenset("""a an the there this these those that it its each every all any both either neither no
    some most many few when whenever if unless before after while once until in on at for from with without by to
    as so then also first only always never do don't does doesn't is are was were be keep prefer""".split())


# Verbs a lesson opens with, beyond those corrections read as an instruction (IMPERATIVE): the first
# word of "Attach Linear working docs to the issue" is no name, "Linear" is.
_VERBS = frozenset("""attach connect bump quote give treat trace link mint persist reproduce fetch clone verify
    validate ensure confirm query export source load prefix suffix escape list find grep count compare assert
    await wait retry request send post generate configure enable disable register declare define initialise
    initialize reset clear close kill wrap unwrap upgrade downgrade bind mount unmount sign encrypt decrypt
    hash encode decode parse serialize serialise render draw design plan review explain describe specify
    choose pick select sort group filter map cache batch stream copy paste rewrite refactor extract inline
    replace append insert prepend strip trim cut shorten lengthen limit cap bound guard check-in seed migrate
    schedule route proxy tag label mark annotate note record report publish release version branch checkout
    stash squash amend cherry-pick revert reopen resolve fix debug profile measure benchmark time""".split())


def _common_first_word(body: str) -> bool:
    """Whether a lesson's first word is an everyday word that goes lower case after "In this
    project": a verb of an instruction or a function word, or one that reads as no name (a name
    has a capital inside or an 's: "GitHub", "Claude's", "Claude Code's" stay as written)."""
    words = body.split(maxsplit=2)
    first = words[0] if words else ""
    if first == "A":
        return True                     # "A hook blocks ..." (one letter: no capital after it to read)
    if not first[:1].isupper() or not first[1:2].islower():
        return False                    # "PR ...", "`make` ...", "x"
    bare = first.rstrip(".,:;!")
    if bare.lower() in _FUNCTION_WORDS or IMPERATIVE.match(bare) or bare.lower() in _VERBS:
        return True
    if any(c.isupper() for c in bare[1:]) or bare.endswith(("'s", "\u2019s")):
        return False                    # "GitHub", "Claude's": a name
    rest = re.sub(r"`[^`]*`", " ", body[len(first):])     # a path or code (`Tests/Fixtures`) writes no name
    if any(not rest[:m.start()].rstrip().endswith((".", "!", "?", ":", ";"))
           for m in re.finditer(rf"(?<![\w/\\.-]){re.escape(bare)}(?![\w/\\-]|\.\w)", rest)):
        return False                    # "Odoo tables ...; query the Odoo DB": written with its capital mid-sentence
    # Else a capital only a sentence's start gave ("Bare `python` is not on PATH", "Auto mode blocks
    # ...") or a name of one word ("Docker already runs"): no list tells them apart, and a name
    # lower case ("docker") reads as people type it where "In this project Bare ..." reads as a slip.
    after = words[1].rstrip(".,:;!") if len(words) > 1 else ""
    return not after[:1].isupper()      # "Claude Code's", "Claude Code transcript files": a name of two words


def said_of_this_project(facts: dict) -> bool:
    """Whether the person's own words scope what they said to the project they said it in ("in this
    repo we use `make test`", "don't use unittest here"): the same words in another project are that
    project's rule too, not one for every project."""
    said = facts.get("own") or facts.get("said") or ""
    return bool(_SCOPE.search(" " + " ".join(own_lines(said))))


def unscoped(text: str) -> str:
    """The same lesson for every project."""
    for prefix in ("In this repository, ", "In this project, ", "In this repository ", "In this project "):
        if text.startswith(prefix):
            rest = text[len(prefix):]
            return rest[:1].upper() + rest[1:]
    return text


_NEGATIVE = re.compile(r"^(?:don'?t|do not|never|not|stop|no)\b", re.I)
_CONTRAST = re.compile(r"\b(?:instead|rather than|not)\b", re.I)
_GENERIC = {"use", "run", "do", "make", "try", "call", "don", "not", "never", "stop", "no", "thing", "that",
            "this", "it", "again", "anymore", "ever", "like"}
_SCOPE = re.compile(r",?\s+\b(?:in this (?:repo|repository|project|codebase)|here|everywhere in this (?:repo|project))"
                    r"\b(?=[\s,.;:!]|$)", re.I)
_SUBCOMMANDS = ("install|ci|run|test|add|remove|format|check|build|exec|dlx|push|pull|commit|compose|up|down|"
                "generate|migrate|lint|fix|audit|update|upgrade|init|publish|start|serve|dev|sync|lock")
_TOOL_RUN = re.compile(rf"(?<![\w`./-])([A-Za-z][\w.-]*)(?:\s+-m\s+[\w.]+|\s+(?:run|exec|dlx)\s+[\w:.-]+|"
                       rf"\s+(?:{_SUBCOMMANDS})\b)?(?:\s+--?[A-Za-z][\w-]*(?:=\S+)?)*"
                       rf"(?:\s+\.(?:/(?:[\w-]+/)*\.\.\.)?(?=[\s,;]|$))?(?![\w`/-])")    # "go test ./..." whole
# Tools named in the person's words go in backticks like code ("use pnpm, never npm").
_TOOLS = TOOLS


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
    """The words every command starts with (`python x.py`, `python y.py` -> `python`); where they
    differ, never the first words of a quoted argument nor a flag whose argument they do not
    share (`uv run python -c "from a …"` and `uv run python -c "from b …"` -> `uv run python`, not
    "`uv run python -c "from` fails with …")."""
    split = [c.split() for c in commands if c]
    if not split:
        return ""
    common = []
    for words in zip(*split):
        if len(set(words)) != 1:
            break
        common.append(words[0])
    if any(len(words) > len(common) for words in split):
        quoted = next((i for i, word in enumerate(common) if "'" in word or '"' in word), len(common))
        common = common[:quoted]
        while common and common[-1].startswith("-"):
            common.pop()
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
        for m in re.finditer(r"(?<![\w.-])" + re.escape(command) + r"(?![\w-])", text):
            if not taken(*m.span()):
                spans.append(m.span())
    for m in _TOOL_RUN.finditer(text):              # a tool named in prose, with its subcommand and flags
        if m.group(1).lower() in _TOOLS and not taken(*m.span()):
            spans.append(m.span())
    tokens = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", text)]

    def bare(k):                                        # a token without trailing punctuation
        return end_trimmed(tokens[k][2], ",.;:!?)")     # Go's ./... stays whole

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


# --------------------------------------------------------------------------------------
# What a lesson came from, in a few plain words (the morning report, `openmemory lessons`)

def source(ep: dict) -> dict:
    """An episode in a few plain words: its date and what happened."""
    facts = ep.get("facts") or {}
    if ep["kind"] == "correction":
        said, pasted = _own_words(facts.get("said") or "")
        command, action = _correction_call(facts)
        words = f"said \"{said}\"" if said else f"pasted {pasted} lines" if pasted else ""
        if facts.get("rejected"):
            what = f"you refused {action}" + (f" and {words}" if words else "")
        else:
            what = "you " + (words or 'said ""') + (f" after {action}" if command else "")
    elif ep["kind"] == "error":
        command = facts.get("command") or facts.get("tool") or ""
        shown = f"`{clip(core_command(command), 60)}`" if facts.get("tool") == "Bash" else clip(command, 60)
        line = error_line(facts) or next(iter(telling_lines(facts)), "")
        what = f"{shown} failed" + (f": {clip(line, 90)}" if line else "")
    else:
        what = f"{ep['kind']}: {clip(ep.get('title') or '', 100)}"
    return {"id": ep["id"], "kind": ep["kind"], "at": ep["at"], "what": what}


def told_by_person(facts: dict) -> str:
    """A correction as a lesson's file in the agent's memory tells it (its Why), as its gist does
    (the call the agent had just made, what the person said) but in the person's own lines only:
    never a log they pasted before them nor what the agent had said (a page it quoted), which
    anyone may have written and which would read there as the person's."""
    said = facts.get("said") or ""
    own = " ".join(" ".join(own_lines(said)).split()) if len(said.splitlines()) > 1 else " ".join(said.split())
    pasted = len([ln for ln in said.splitlines() if ln.strip()])
    words = f"said: \"{own}\"" if own else f"pasted {pasted} lines" if pasted else "said nothing more"
    command, action = _correction_call(facts, last=True)
    if facts.get("rejected"):
        return f"The person refused to let the agent run {action} and {words}"
    return (f"After the agent ran {action}, the person {words}" if command else f"The person {words}")


def _correction_call(facts: dict, last: bool = False) -> tuple:
    """(command, how it is named) of the call a correction was about (with last, the agent's last
    call before it, as its gist names it): a shell command in code, a file tool with the file's
    name (not its path), anything else as it is."""
    if facts.get("rejected") or last:
        command, tool = facts.get("command") or "", facts.get("tool")
    else:
        command, tool = call_about(facts)
    if tool == "Bash":
        return command, f"`{clip(core_command(command), 60)}`"
    if tool in ("Edit", "MultiEdit", "Write", "NotebookEdit", "Read"):   # the file, not its path
        return command, f"{tool} `{clip(command.split(' ', 1)[-1].rsplit('/', 1)[-1], 50)}`"
    return command, clip(command, 60)


def _own_words(said: str) -> tuple:
    """(the lines the person typed, joined by " / " and clipped; how many lines were pasted) of a
    message: a log pasted before their words is not what they said (corrections.own_lines). A
    message of one line is theirs as sent; one of nothing but pasted lines is said as its count.
    Their first line alone was often a heading of what follows ("Answering your questions:", over
    "1. No, we dont use marmaid.js anymnore"), all a person deciding on a lesson was shown of it."""
    lines = [line for line in said.splitlines() if line.strip()]
    if len(lines) <= 1:
        return clip(lines[0].strip() if lines else "", 100), 0
    own = [line.strip() for line in own_lines(said) if line.strip()]
    return (clip(" / ".join(own), 100), 0) if own else ("", len(lines))


def call_about(facts: dict) -> tuple:
    """(command, tool) a correction was about: the call its words name (`trigger`); older
    episodes, stored before triggers, keep the last call."""
    if "trigger" in facts:
        return facts.get("trigger") or "", facts.get("trigger_tool") or ""
    return facts.get("command") or "", facts.get("tool") or ""
