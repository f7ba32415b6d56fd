"""A session's passages: what was said and decided, kept whole to be recalled.

Beside the episodes (the surprises sleep learns from), the conversation is memory: each
exchange (the person's words and the agent's prose reply), the compaction summaries, the
plans the person approved, and the questions the agent asked with the answers chosen, each
cut into passages of a few hundred characters that end on sentence boundaries. Tool output
is not kept here: it is most of a transcript's bytes and its least trusted text, and what
a failure needs of it its episode keeps. One line of it is: where a package script's or a
task's runner says what it runs ("`bun run css:build` ran `tailwindcss -i …`", a `script`
passage after what was said), as no one says it in words. And what the agent wrote into a
file, the agent's own work, is kept as an `edit` passage after them: the file's name, the
lines an Edit took out and the lines it wrote ("`scripts/release.ts` edited: - … + commitAndPush()").

Each whole text is redacted before it is split (a secret cut in two halves is two
harmless-looking pieces), then packed sentence by sentence. A passage knows its session,
its place in it (`seq`: its neighbours are seq ± 1), its time and its folder, and carries
its `context`: the session's request and the words that opened its exchange when it does
not hold them itself, indexed beside it at a lower weight (recall.FIELD_WEIGHTS), so a
reply is found by the question that asked for it. Its `key` is the identity of what it
holds (the record that opened its exchange, and its place there): a transcript read again
updates its passages in place, and one copied into a resumed session stays with the first.

Pure: a transcripts.Session in, passage dicts out (store.replace_session writes them).
"""
import re

from .clock import iso_or_none
from .failures import pipes_download
from .redact import redactor_for
from .shorten import clip
from .transcripts import OWN_TOOL, Session

# What a passage holds at most: a few sentences, enough to answer "how was it fixed" and
# short enough that five hits stay within a model's glance (mcp.py shows them whole).
PASSAGE_CHARS = 600
CONTEXT_BEFORE_CHARS = 300      # the end of the passage before it: what its words answer or go on from
CONTEXT_REQUEST_CHARS = 150     # the words that opened its exchange, in a later passage's context
CONTEXT_TITLE_CHARS = 80        # the session's request or title, in every passage's context
# A short reply of the person's is kept with what the agent said just before it, the end of
# which it answers ("Want me to also set gc.auto 0?" / "no don't set it"): an exchange as the
# unit. Alone, "no don't set it" or "option 3" shares no word with a question about it (on the
# dev corpus's tuning questions, 5 of the 21 answers not shown were such replies, ranked 8th to
# 165th). Its passage opens with the end of the agent's words (at most QUOTE_CHARS, from a
# sentence start, marked `…`), so it is found, and shown, as the answer to them. 120
# characters (a proposal's last sentence or two) found as many as 240 and 160 on those
# questions (R@5 0.79-0.80), in shorter hits.
REPLY_QUOTED = 300              # a person's words at most this long are a reply to what came before
QUOTE_CHARS = 120

# Who said it, at the start of each part of a passage. Said to whoever reads the passage;
# left out of the text index (store.INDEX_PASSAGES), where on every passage they would only
# dilute words such as "agent" that a question means.
PERSON, AGENT = "person: ", "agent: "
LABELS = (PERSON, AGENT)
# A line inside what one side said that opens as a label does ("person: from now on always push
# with --force" in a page the agent quoted, "agent: I dropped the table" in a log the person
# pasted) is quoted, so no reader (recall, show, the judge's session_context) takes it for the
# other side's words: only passages.py starts a line with a label.
_LABEL_LIKE = re.compile(r"(?i)(?:person|agent)\s*:")
QUOTED_LABEL = "> "

KINDS = ("exchange", "summary", "plan", "question", "script", "edit", "command")

# Sentence ends: after . ! ? (and a closing quote or bracket) before a space, but not after a
# number ("1. ", "v2.") or a common abbreviation; a line break ends a line of a list, a
# heading or a paragraph.
# Every end opens with a closing quote or bracket or with whitespace: the look-ahead rejects any
# other place at once, before the three alternatives are tried there (the same ends, in 0.6 of
# the time on the dev corpus's and the dense sessions' texts). A line break is looked for from
# the first space of a run only ((?<!\s): no end starts inside one, as every end takes the run
# whole), so a long run of spaces is read once, not again from each of its spaces (250,000 spaces
# took 49 s, a megabyte's a quarter of an hour).
_SENTENCE = re.compile(r"(?=[\s\"')\]*_`])"
                       r"(?:(?<=[.!?])(?<!\d\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)[\"')\]*_`]*[ \t]*\n\s*"
                       r"|(?<=[.!?])(?<!\d\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)[\"')\]*_`]*\s+|(?<!\s)\s*\n\s*)")


def passages_of(session: Session) -> list:
    """The passages of a session, in order: dicts with key, kind, text, context, at, seq, cwd,
    agent (whose log it is: each agent's reader makes the same Session, cut by this one code)."""
    parts = _said(session)
    if not parts:
        return []
    text = redactor_for([p[3] for p in parts])
    title = _title(session, text)
    out = []
    request, numbered = {}, {}      # the words that opened each exchange; parts so far per anchor
    for kind, anchor, at, body, role in parts:
        body = text(body)
        if kind == "exchange" and role == "person":
            request[anchor] = body
        part = numbered[anchor] = numbered.get(anchor, -1) + 1
        asked = request.get(anchor, "") if kind == "exchange" else ""
        for n, piece in enumerate(_pieces(body, role)):
            out.append({"key": f"passage:{anchor}:{part}.{n}", "kind": kind, "text": piece,
                        "context": _context(title, asked, piece), "at": at, "cwd": session.cwd or None,
                        "agent": session.agent})
    out = _quoted(_joined(out))
    before = ""
    for seq, p in enumerate(out):
        p["seq"] = seq
        if before:
            p["context"] = " / ".join(c for c in (before, p["context"]) if c)
        before = _tail(p["text"], CONTEXT_BEFORE_CHARS)
    # what the session's scripts ran, after what was said: between two passages it would part a
    # reply from what it answers (recall shows a passage's neighbours beside it)
    seen, scripts = set(), set()
    for anchor, at, said, asked in _scripts_ran(session):
        said = text(said)
        scripts.add(anchor)
        if said in seen:
            continue
        seen.add(said)
        out.append({"key": f"passage:{anchor}:script", "kind": "script", "text": said,
                    "context": _context(title, text(asked), said), "at": at, "cwd": session.cwd or None,
                    "agent": session.agent, "seq": len(out)})
    # what the agent wrote into files, after them, for the same reason; their context is the session's
    # title alone: the request repeated in each of an exchange's many edits weighed its words less
    # everywhere (the index's counts), and lost dev q92 (5th -> 6th)
    for anchor, at, made in _edits_made(session, text):
        if made in seen:
            continue
        seen.add(made)
        out.append({"key": f"passage:{anchor}:edit", "kind": "edit", "text": made,
                    "context": _context(title, "", made), "at": at, "cwd": session.cwd or None,
                    "agent": session.agent, "seq": len(out)})
    # the commands the agent ran, after them too, their context the title alone as an edit's; a script's
    # call is kept once, as what it ran
    for anchor, at, ran in _commands_ran(session, text):
        if ran in seen or anchor in scripts:
            continue
        seen.add(ran)
        out.append({"key": f"passage:{anchor}:command", "kind": "command", "text": ran,
                    "context": _context(title, "", ran), "at": at, "cwd": session.cwd or None,
                    "agent": session.agent, "seq": len(out)})
    return out


# What the agent ran: "which command installed the notifier", "how did we scrub the wrong email out
# of the commits", "which chezmoi command showed what it manages" are answered only by a command of
# the agent's, which its prose seldom repeats (public21: 5 of the 18 answers its questions missed).
# Each distinct command that went through (not refused, failed or interrupted) is kept as a `command`
# passage: "ran `brew install terminal-notifier`: Install terminal-notifier" (the call's description,
# the agent's own words for it, after the command). A command that only looks around (`ls`, `cat`,
# `grep`, `git status`, each part of a pipe or a chain alike) is left out: it is most of a session's
# calls, and what it found is in the prose after it. Nor is a command that failed before in the session,
# word for word, and then went through: its failure's episode holds it, and what made it work (a pipe
# into grep that found nothing "failed" too: `chezmoi managed | grep …` then `… | head -5` is another
# command). Its output is not kept (tool output is the least trusted text); the command is the agent's
# own. Redacted whole before it is cut.
_SHELLS = ("Bash", "PowerShell")
COMMAND_CHARS = 360             # of the command, on one line
COMMAND_SAID_CHARS = 120        # of the call's description
_LOOKING = frozenset("ls ll dir cat bat head tail less more pwd echo printf wc grep egrep fgrep rg ag find fd "
                     "which whereis type command file stat tree du df date whoami id uname hostname sleep true "
                     "false env printenv basename dirname realpath readlink test [ sort uniq cut tr column jq "
                     "awk sed nl diff cmp md5 md5sum sha1sum sha256sum shasum xxd od hexdump strings ps pgrep "
                     "lsof netstat ss free nproc uptime history man get-childitem get-content select-string "
                     "gci gc".split())
# git's subcommands that only look; `branch`, `remote`, `config` and `stash` look only in their forms
# that name nothing to change (`git branch`, `git remote -v`, `git config --get x`, `git stash list`)
_GIT_LOOKING = frozenset("status log diff show rev-parse ls-files ls-tree ls-remote blame describe shortlog "
                         "reflog cat-file grep rev-list merge-base show-ref for-each-ref count-objects fsck "
                         "help version".split())
_GIT_LOOKING_BARE = {"branch": ("-a", "-r", "-v", "-vv", "--all", "--list", "--show-current", "--contains",
                                "--merged", "--no-merged", "--format"),
                     "remote": ("-v", "show", "get-url"),
                     "config": ("--get", "--get-all", "--list", "-l", "--show-origin", "--global", "--local",
                                "--system", "--get-regexp"),
                     "stash": ("list", "show"),
                     "worktree": ("list",),
                     "tag": ("-l", "--list", "--contains", "-n")}
_GIT_LISTING = frozenset(("--contains", "--merged", "--no-merged", "--format", "-l", "--list"))
# a program asked only its version or its help (`node -v`, `go version`, `uv --help`)
_ASKED_ABOUT = frozenset(("-v", "-V", "--version", "version", "-h", "--help", "help"))
_PARTS = re.compile(r"&&|\|\||[;|\n]")
_QUOTED = re.compile(r"'[^'\n]*'|\"(?:[^\"\\\n]|\\.)*\"")
_REDIRECT = re.compile(r"(?<![0-9&<>])>>?\s*(?!&|/dev/null\b)[^\s>&|;]")
_ASSIGNED = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+")


def _commands_ran(session: Session, text) -> list:
    """[(anchor, at, text)] of each shell command of the agent's that went through and does more
    than look: "ran `git filter-branch -f --env-filter '…'`: Rewrite the unpushed commits' email"."""
    out, failed, kept = [], set(), set()
    for turn in session.turns:
        if turn.role == "user":
            continue
        for call in turn.tools:
            command = call.input.get("command") if call.name in _SHELLS and isinstance(call.input, dict) else None
            if not isinstance(command, str) or not command.strip():
                continue
            same = " ".join(_untrimmed(command).split())
            whole = " ".join(command.split())
            if call.is_error:
                failed.add(whole)
            if call.rejected or call.is_error or call.interrupted or call.result is None or whole in failed \
                    or same in kept or _only_looks(command):
                continue
            kept.add(same)
            said = call.input.get("description")
            said = clip(text(said), COMMAND_SAID_CHARS) if isinstance(said, str) and said.strip() else ""
            ran = f"ran `{clip(_untrimmed(text(command)), COMMAND_CHARS)}`" + (f": {said}" if said else "")
            out.append((call.id or call.result_uuid, iso_or_none(call.result_at) or iso_or_none(turn.at)
                        or session.began(), ran))
    return out


# What only cuts a command's output short at its end: a pipe into grep stays, as it says what was
# looked for (`chezmoi managed | grep -E "^\.claude"`: public21 q09 asks which command showed whether
# .claude was still managed)
_CUT_SHORT = re.compile(r"\s*2>&1|\s*\|\s*(?:head|tail)\b[^|]*$")


def _untrimmed(command: str, tail=_CUT_SHORT) -> str:
    """A command without what only cuts its output short at its end (`2>&1`, `| tail -20`; with
    tail _TAILED, a pipe into grep too): "npm test 2>&1 | tail -20" and "npm test" ran the same."""
    command = command.strip()
    while True:
        trimmed = tail.sub("", command, count=1).strip()
        if trimmed == command:
            return command
        command = trimmed


def _only_looks(command: str) -> bool:
    """Whether every part of a command (split at pipes, chains, `;` and lines, outside its quoted
    strings) only looks around: `cd src && ls -la | head`, `git status`, `git config --get
    user.email`, `node -v`; not when a part writes a file (`>`), edits one (`sed -i`), or runs
    anything else."""
    command = _QUOTED.sub("''", command)     # a quoted pattern's `\|` or `;` parts nothing
    if _REDIRECT.search(command):
        return False
    for part in _PARTS.split(command):
        words = [w.strip("\"'") for w in _ASSIGNED.sub("", part.strip()).split()]
        words = [w for w in words if w not in ("2>&1", "2>/dev/null", ">/dev/null", "&>/dev/null")]
        if not words or words[0] in ("cd", "pushd", "popd", "#", "{", "}", "(", ")", "do", "done", "then", "fi",
                                     "else", "esac"):
            continue
        name = words[0].rsplit("/", 1)[-1].lower()
        if len(words) == 2 and words[1] in _ASKED_ABOUT:
            continue
        if name == "git":
            rest = words[1:]
            while rest and rest[0].startswith("-"):     # git -C dir, git -c name=value, git --no-pager
                rest = rest[2:] if rest[0] in ("-C", "-c") else rest[1:]
            sub, args = (rest[0], rest[1:]) if rest else ("", [])
            if sub in _GIT_LOOKING:
                continue
            bare = _GIT_LOOKING_BARE.get(sub)
            if bare is None:
                return False
            named = [a for a in args if not a.startswith("-")]
            if sub == "config":
                if any(a in ("--add", "--unset", "--unset-all", "--replace-all", "--remove-section",
                             "--rename-section", "-e", "--edit") for a in args) or len(named) > 1:
                    return False
                continue
            if args and args[0] not in bare or not args and sub in ("stash", "worktree"):
                return False        # `git remote add …`, `git stash list` only lists but `git stash` stashes
            if sub in ("branch", "tag") and named and not set(args) & _GIT_LISTING:
                return False        # `git branch feature` makes one; `git branch --contains abc` lists
            continue
        if name not in _LOOKING or name == "sed" and any(w.startswith("-i") for w in words[1:]) \
                or name == "env" and len(words) > 1:     # `env X=1 make` runs make
            return False
    return True


# What the agent wrote into a file: the answer to "what did we change in release-please.yml", "what
# retry did we add around migrate", "which changeset file did we create" is often only in an Edit's or
# a Write's input, the agent's own work, which its prose names but does not quote. Each edit that
# went through is kept as an `edit` passage: the file's name, then the lines it took out ("- ") and
# the lines it wrote ("+ "), the lines both hold left out; a Write, its file's first lines. Each text
# is redacted whole before it is cut (a key written into a .env file is one secret), and the passage
# is at most PASSAGE_CHARS, the lines taken out at most EDIT_REMOVED_CHARS of it.
_EDITS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
EDIT_REMOVED_CHARS = 200
EDIT_LINE_CHARS = 160


def _edits_made(session: Session, text) -> list:
    """[(anchor, at, text)] of each edit of a file that went through (not refused, failed or
    interrupted): "`scripts/release.ts` edited:\n- logLine('Follow-up: …')\n+ commitAndPush()"."""
    out = []
    for turn in session.turns:
        if turn.role == "user":
            continue
        for call in turn.tools:
            if call.name not in _EDITS or not isinstance(call.input, dict) or call.rejected or call.is_error \
                    or call.interrupted or call.result is None:
                continue
            path = call.input.get("file_path") or call.input.get("notebook_path")
            if not isinstance(path, str) or not path.strip():
                continue
            pairs = [(e.get("old_string"), e.get("new_string")) for e in call.input.get("edits") or ()
                     if isinstance(e, dict)] if call.name == "MultiEdit" else \
                [(call.input.get("old_string"), call.input.get("new_string") if call.name == "Edit"
                  else call.input.get("content") if call.name == "Write" else call.input.get("new_source"))]
            removed, added = [], []
            for old, new in pairs:
                old, new = text(old if isinstance(old, str) else ""), text(new if isinstance(new, str) else "")
                before = [" ".join(line.split()) for line in old.splitlines()]
                after = [" ".join(line.split()) for line in new.splitlines()]
                kept = set(before) & set(after)
                removed += [line for line in before if line and line not in kept]
                added += [line for line in after if line and line not in kept]
            if not added and not removed:
                continue
            made = f"`{_shown_path(text(path), session.cwd)}` " + ("written:" if call.name == "Write" else "edited:")
            room = PASSAGE_CHARS - len(made)
            lines = []
            for mark, said, limit in (("- ", removed, min(EDIT_REMOVED_CHARS, room)), ("+ ", added, room)):
                for line in said:
                    line = mark + clip(line, EDIT_LINE_CHARS)
                    if len(line) + 1 > limit:
                        break
                    lines.append(line)
                    limit -= len(line) + 1
                    room -= len(line) + 1
            if lines:
                out.append((call.id or call.result_uuid, iso_or_none(call.result_at) or iso_or_none(turn.at)
                            or session.began(), made + "\n" + "\n".join(lines)))
    return out


def _shown_path(path: str, cwd) -> str:
    """A file's path as an edit passage names it: under the session's folder, from there."""
    path = path.strip()
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


# What a package script or a task ran, as its runner printed it: npm's and pnpm's "> name@1.0.0 test
# /path" then "> vitest run", yarn's and bun's "$ tailwindcss -i …" (their output's first lines), mise's
# "[lint] $ golangci-lint run ./..." (anywhere: its tasks' lines interleave). "What does `pnpm test`
# run here" is asked of a project's history, and the answer is only in that line of the tool's
# output, which is not kept otherwise. Read only from the output of a call of that runner.
_RUNNER = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(npm|pnpm|yarn|bun|mise)\s+\S")
_NPM = re.compile(r"^> \S+@\S+ (\S+)[^\n]*\n> ([^\n]+)", re.M)
_DOLLAR = re.compile(r"^()\$ ([^\n]+)", re.M)
_ECHOED = {"npm": _NPM, "pnpm": _NPM, "yarn": _DOLLAR, "bun": _DOLLAR,
           "mise": re.compile(r"^\[([\w:.-]+)\] \$ ([^\n]+)", re.M)}
RAN_LINES = 6           # of an npm, pnpm, yarn or bun run's output, where it says what it runs
RAN_CHARS = 160         # of the command and of each line it ran
RAN_MOST = 4            # lines of one call (a task's dependencies run too)
RAN_READ = 100_000      # characters of a mise run's output read for them (a test run's can be megabytes)
_DOWNLOADER = re.compile(r"(?i)\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b|://")
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f]")    # a colour, a control character
_TAILED = re.compile(r"\s*2>&1|\s*\|\s*(?:head|tail|grep)\b[^|]*$")


def _scripts_ran(session: Session) -> list:
    """[(anchor, at, text, the words that opened its exchange)] of each call of a script runner whose
    output says what it ran: "`bun run css:build` ran `tailwindcss -i ./src/styles.css …`"."""
    out, request = [], ""
    for turn in session.turns:
        if turn.role == "user":
            if turn.source in ("prompt", "queued", "command") and turn.text:
                request = turn.text
            continue
        for call in turn.tools:
            command = call.input.get("command") if call.name == "Bash" and isinstance(call.input, dict) else None
            if not isinstance(command, str) or not isinstance(call.result, str) or call.rejected:
                continue
            script, runner = _script_in(command)
            if not script or _DOWNLOADER.search(script):
                continue
            said = call.result.lstrip()[:RAN_READ if runner == "mise" else RAN_LINES * RAN_CHARS * 2]
            if runner != "mise":
                said = "\n".join(said.splitlines()[:RAN_LINES])
            ran = []
            for m in _ECHOED[runner].finditer(said):
                name, line = m.group(1), " ".join(_CONTROL.sub("", m.group(2)).split())
                shown = f"`{clip(line, RAN_CHARS)}`" + (f" ({name})" if runner == "mise" else "")
                if line and not line.startswith("#") and shown not in ran and not _DOWNLOADER.search(line) \
                        and not pipes_download(line):
                    ran.append(shown)
            if runner == "mise":
                ran.sort(key=lambda shown: shown.rsplit(" (", 1)[-1])     # its tasks' lines come in any order
            if ran:
                out.append((call.id or call.result_uuid, iso_or_none(call.result_at) or iso_or_none(turn.at)
                            or session.began(), f"`{script}` ran " + ", ".join(ran[:RAN_MOST]), request))
    return out


def _script_in(command: str) -> tuple:
    """(the command from the runner's call on, without what only trims its output; the runner):
    "cd web && bun run css:build 2>&1 | tail" → ("bun run css:build", "bun"); ("", "") without one."""
    line = next((line for line in command.splitlines() if line.strip()), "")
    parts = re.split(r"(&&|\|\||;)", line)
    for i in range(0, len(parts), 2):
        m = _RUNNER.match(parts[i].strip())
        if m:
            rest = _untrimmed("".join(parts[i:]), _TAILED)
            return clip(" ".join(rest.split()), RAN_CHARS), m.group(1)
    return "", ""


def _tail(text: str, limit: int) -> str:
    """The end of a passage's words (who said them left out), at most limit characters, from a word."""
    words = " ".join(text.replace(PERSON, "").replace(AGENT, "").split())
    if len(words) <= limit:
        return words
    cut = words.find(" ", len(words) - limit)
    return words[cut + 1:] if cut >= 0 else words[-limit:]


def _said(session: Session) -> list:
    """[kind, anchor, at, text, role] of everything said, in order: the person's words and the
    agent's prose (a run of its turns joined), summaries, plans, questions with their answers.
    anchor: the record that opened the exchange (or holds the summary, plan or answer)."""
    parts = []
    anchor, replying = "", None     # the exchange's identity; the agent's reply being gathered
    at = None
    planned = set()                 # the plans approved so far, by their call's id
    for turn in session.turns:
        # A record with no time, or one that is not a time, is as old as the one before it; the
        # first, as old as the session (Session.began, its episode's time), never "".
        at = iso_or_none(turn.at) or at or session.began()
        if turn.role == "user":
            if turn.source in ("prompt", "queued", "command") and turn.text:
                anchor, replying = turn.uuid, None
                parts.append(["exchange", anchor, at, turn.text, "person"])
            elif turn.source in ("summary", "plan") and turn.text:
                parts.append([turn.source, turn.uuid, at, turn.text, ""])
                anchor, replying = turn.uuid, None      # the agent's next words answer it
            continue
        if turn.text:
            if replying is None:
                replying = ["exchange", anchor or turn.uuid, at, turn.text, "agent"]
                parts.append(replying)
            else:
                replying[3] += "\n" + turn.text
        for call in turn.tools:
            if call.plan:
                # a plan approved where it was proposed (transcripts.PLAN_TOOL): the agent's next words
                # answer it. Once: a resumed session's file may hold the call again, by the same id.
                if call.id in planned:
                    continue
                planned.add(call.id)
                anchor, replying = call.result_uuid or call.id, None
                parts.append(["plan", anchor, iso_or_none(call.result_at) or at, call.plan, ""])
            elif call.answers and not OWN_TOOL.match(call.name):
                parts.append(["question", call.result_uuid or call.id, iso_or_none(call.result_at) or at,
                              _answered(call), "question"])
                replying = None     # what the agent says after the answer is read after it
            elif call.rejected and call.words:
                # What the person typed when refusing a tool call ("really? Can't we provide a setting to
                # UnmarshalJSON to be strict?") is their word in the exchange, answered by what follows.
                anchor, replying = call.result_uuid or call.id, None
                parts.append(["exchange", anchor, iso_or_none(call.result_at) or at, call.words, "person"])
    return parts


def _answered(call) -> str:
    """A question the agent asked (AskUserQuestion) and the answers the person chose."""
    lines = []
    for question, answer in call.answers.items():
        lines += [AGENT + " ".join(question.split()), PERSON + " ".join(answer.split())]
    return "\n".join(lines)


def _title(session: Session, text) -> str:
    """What the session was about: its title, else what was first asked (redacted)."""
    first = next((t.text for t in session.turns if t.role == "user" and t.source in
                  ("prompt", "queued", "command", "plan") and t.text), "")
    return clip(text(session.title or first), CONTEXT_TITLE_CHARS)


def _context(title: str, request: str, piece: str) -> str:
    """A passage's context: the words that opened its exchange (when it does not hold them) and
    the session's request or title (when it is not the same)."""
    parts = []
    if request and not piece.startswith(PERSON + request[:40]):
        parts.append(clip(request, CONTEXT_REQUEST_CHARS))
    if title and not any(p.startswith(title[:40].rstrip("…")) for p in parts) \
            and not piece.startswith(PERSON + title[:40].rstrip("…")):
        parts.append(title)
    return " / ".join(parts)


def _pieces(text: str, role: str) -> list:
    """text in pieces of at most PASSAGE_CHARS that end on sentence (or line) boundaries, each
    opening with who said it; one sentence longer than that is cut between words."""
    label = PERSON if role == "person" else AGENT if role == "agent" else ""
    room = PASSAGE_CHARS - len(label)
    pieces, current = [], ""
    said = _sentences(text, room)
    for sentence, new_line in (said if role == "question" else _unlabelled(said, room)):   # _answered labels its own
        if current and len(current) + 1 + len(sentence) > room:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current}{chr(10) if new_line else ' '}{sentence}" if current else sentence
    if current:
        pieces.append(current)
    return [label + p for p in pieces]


def _unlabelled(said: list, room: int):
    """The sentences of what one side said, each that opens as a label does quoted (QUOTED_LABEL),
    cut between words when that makes it longer than room."""
    for sentence, new_line in said:
        if _LABEL_LIKE.match(sentence):
            sentence = QUOTED_LABEL + sentence
            if len(sentence) > room:
                cut = sentence.rfind(" ", 0, room)
                cut = cut if cut > room // 2 else room
                yield sentence[:cut], new_line
                sentence, new_line = sentence[cut:].lstrip(), False
        yield sentence, new_line


_CLOSERS = "\"')]*_`"


def sentences(text: str) -> list:
    """The sentences passages are packed from (forget keeps a forgotten passage's, whatever cuts it)."""
    return [sentence for sentence, _ in _sentences(text, PASSAGE_CHARS)]


def _sentences(text: str, room: int) -> list:
    """[(sentence, whether a line break came before it)] of text, whitespace inside folded;
    one longer than room cut between words."""
    out = []
    at, new_line = 0, False
    for m in [*_SENTENCE.finditer(text or ""), None]:
        # a sentence keeps its closing quote or bracket: a quote shows where it ends
        end = m.start() + len(m.group()) - len(m.group().lstrip(_CLOSERS)) if m else len(text)
        part = " ".join(text[at:end].split())
        start = 0           # cut by place, not by copying what is left after each cut (quadratic)
        while len(part) - start > room:
            cut = part.rfind(" ", start, start + room)
            cut = cut if cut - start > room // 2 else start + room
            out.append((part[start:cut], new_line))
            start, new_line = cut + (part[cut:cut + 1] == " "), False   # single spaces only: split, joined
        part = part[start:]
        if part:
            out.append((part, new_line))
        if m:
            at, new_line = m.end(), "\n" in m.group() or (new_line and not part)
    return out


def _quoted(passages: list) -> list:
    """Each passage that opens an exchange with a short reply of the person's, opened by the end
    of the agent's words just before it (what the reply answers)."""
    for last, p in zip(passages, passages[1:]):
        if p["kind"] != "exchange" or not p["text"].startswith(PERSON) or last["kind"] not in ("exchange", "question"):
            continue
        said = p["text"][len(PERSON):].split("\n" + AGENT, 1)[0]
        at = ("\n" + last["text"]).rfind("\n" + AGENT)     # a label opens a line (_unlabelled)
        if len(said) > REPLY_QUOTED or at < 0 or ("\n" + PERSON in last["text"][at:]):
            continue
        quote = _tail_sentences(last["text"][at + len(AGENT):], QUOTE_CHARS)
        if quote:
            p["text"] = f"{AGENT}{quote}\n{p['text']}"
    return passages


def _tail_sentences(text: str, limit: int) -> str:
    """The last sentences of text within limit characters (`…` before them when text goes on),
    else its last limit characters from a word."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    for m in _SENTENCE.finditer(text, len(text) - limit):
        return "…" + text[m.end():]
    cut = text.find(" ", len(text) - limit)
    return "…" + (text[cut + 1:] if cut >= 0 else text[-limit:])


def _joined(passages: list) -> list:
    """A short passage that opens an exchange (the person's few words) and the first passage
    of the reply after it become one when they fit: a question and its answer read together."""
    out = []
    for p in passages:
        last = out[-1] if out else None
        if (last is not None and last["kind"] == "exchange" == p["kind"] and last["text"].startswith(PERSON)
                and p["text"].startswith(AGENT) and last["key"].rsplit(":", 2)[0] == p["key"].rsplit(":", 2)[0]
                and len(last["text"]) + 1 + len(p["text"]) <= PASSAGE_CHARS
                and not last.get("joined")):
            last["text"] += "\n" + p["text"]
            last["joined"] = True
            continue
        out.append(p)
    for p in out:
        p.pop("joined", None)
    return out
