"""A session's episodes: one `session` episode for the transcript, then one per surprise (a
failed tool call, or what the person said to correct the agent), each with its title, gist,
detail, facts and identity (its `key`).

Pure and deterministic, like the reading it follows: a transcripts.Session in, episode dicts
out (PROTOCOL.md has the rules). What the person's words and a failure's output mean is
corrections.py's and failures.py's; the store readies the episodes (store.prepare) and writes
them; ingest decides which transcripts are read.
"""
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import islice

from . import neighbours
from .clock import iso_or_none
from .corrections import (carries_nothing, correction_verdict, lines_under_a_paste, not_english, own_lines,
                          under_a_paste, unsettled, what_lasts)
from .failures import (cause_key, error_lines, is_guard, names_a_thing, never_ran, output_host, pipes_download,
                       plain, self_killed, telling_lines, told_to_run, unsafe_advice, unsafe_fix)
# a cut redacts first where it cuts (issue 27): it never keeps part of a secret
from .redact import secret_safe_clip as clip, secret_safe_clip_block as clip_block
from .transcripts import OWN_TOOL, PLAN_TOOL, QUESTION_TOOL, SETTING_COMMANDS, Session, ToolCall, Turn
from .wording import correction_lesson, environment_cause, other_flags, slip_of

GIST_LIMIT = 600            # characters of a gist: enough to recognise the episode
DETAIL_LIMIT = 2000         # characters of detail kept per episode
UNDER_CHARS = 300           # of each of a correction's own lines right under a paste (facts under)
UNDER_LINES = 20
FILES_SHOWN = 6
COMMANDS_SHOWN = 5


# --------------------------------------------------------------------------------------
# Surprises: what did not go as the agent expected (its failed tool calls, what the person
# said to correct it)

@dataclass
class Surprise:
    """Something that did not go as the agent expected: a failed tool call or a correction."""
    kind: str                   # "error" or "correction"
    anchor: str                 # the event's identity: its record's uuid (event_id)
    at: str
    text: str                   # the error's first lines, or what the person said
    tool: str = ""              # the tool that failed or was just used
    command: str = ""           # that tool call in a few words
    agent_did: str = ""         # for corrections: what the agent had just done
    agent_said: str = ""        # for corrections: the agent's last words before them (its claim)
    rejected: bool = False      # a refused tool use
    count: int = 1              # identical errors in one session are one surprise
    legacy: str = ""            # the identity older versions gave it (the tool-use id), to rekey in place
    verdict: str = ""           # corrections: correction | doubtful | standing (corrections.correction_verdict)
    form: str = ""              # which rule said so: words, question, review, pasted-failure, ...
    trigger: str = ""           # corrections: the call the words are about (its summary), if any
    trigger_tool: str = ""
    trigger_failed: bool = False
    command_failed: bool = False  # corrections: the call of `command` failed (not refused)
    fixed_by: str = ""          # errors: the command after which the same command succeeded, or it put right
    found: str = ""             # errors of file tools: the file meant, for a path that does not exist
    found_by: str = ""          # errors of file tools: the later call that used it (its summary)
    work: bool = False          # errors: fixed in the same session by editing code (the work itself)
    before_edit: bool = False   # errors: came before any edit of the session
    hints: list = field(default_factory=list)       # errors: the tool's own advice (git's `hint:` lines)
    edited: list = field(default_factory=list)      # errors: files edited before the same call succeeded
    ran: str = ""               # errors: the last command run (not only looking) before it succeeded
    worked: bool = False        # errors: a later call did the same thing without failing
    explained: str = ""         # errors: the agent's first words after the failure
    dictated: bool = False      # errors: got past after a step its output may have dictated (not shown)
    worked_as: str = ""         # errors: the call that worked after edits or a step, the failed one with more to it
    moved: str = ""             # errors: the folder an earlier `cd` left the shell in, where a path was not found
    reached: str = ""           # errors: a program the shell did not find, run later another way (fixed_by)
    next: list = field(default_factory=list)        # errors: the agent's next calls, before the person spoke (_note_next)
    again: bool = False         # errors: the very same call (its input whole) went through later, nothing but looking between
    queued: bool = False        # corrections: typed while the agent was working (it reached the agent between its steps)


def surprises_of(s: Session, settled: bool = False) -> list:
    """Every error and correction of a session, in order (PROTOCOL.md has the rules).

    A correction is what the person typed that corrections.correction_verdict calls one,
    doubtful (kept, marked, for a model to decide) or, in a first message, standing. A
    refused call is one, each its own: with the words typed into its dialog, those words; a
    bare one followed at once by words the rules call a correction, those words (older
    versions had no dialog); else alone, and the words read as any message (an interrupt
    refuses the call it stopped: "this is taking forever, each test should take <30s"). A bare refusal of ExitPlanMode that Claude Code
    follows with the plan, approved, is the approval of that plan, no correction.
    settled: also each other message that may carry something (corrections.carries_nothing),
    as a light one of form SETTLED, for a judge only (what ingest stores).
    """
    found = []
    errors: dict = {}
    last_assistant = None       # the agent's most recent response
    agent_said = ""             # its latest words (a claim of being done, perhaps)
    calls = []                  # the agent's tool calls since the person last spoke
    bare = []                   # refused calls with no words, waiting for what follows them
    interrupted = False
    history = [c for c in s.tool_calls if not OWN_TOOL.match(c.name)]
    unexplained = []            # failures waiting for the agent's next words
    following = []              # (failure, its call) whose next calls are noted until the person speaks
    place = {id(c): i for i, c in enumerate(history)}
    typed = []                  # what the person typed so far (a message sent again carries nothing new)

    def said() -> str:
        """Everything the person typed in the session: a host they named may be a fix's."""
        return " ".join([t.text for t in s.turns if t.role == "user" and t.source in ("prompt", "queued")]
                        + [c.words for c in history if c.words])
    for turn in s.turns:
        if turn.role == "assistant":
            if turn.text or turn.tools:
                _refusals_alone(found, bare, s.id)
            last_assistant = turn
            agent_said = turn.text or agent_said
            if turn.text and unexplained:
                if not _relays_output(turn.text, history, said):
                    for surprise in unexplained:
                        surprise.explained = clip(turn.text, EXPLAINED_CHARS)
                unexplained = []
            for call in turn.tools:
                if OWN_TOOL.match(call.name):
                    continue
                for surprise, failed in following:
                    _note_next(surprise, failed, call, history, place, said)
                following = [f for f in following if len(f[0].next) < NEXT_CALLS]     # a full one is done
                calls.append(call)
                if call.rejected and call.name == QUESTION_TOOL:
                    continue                # a question set aside to talk it over: no correction
                if call.rejected:
                    if call.words:
                        found.append(_refusal(call, s.id, call.words))
                    else:
                        bare.append(call)
                elif call.interrupted:
                    interrupted = True
                elif call.is_error and not never_ran(call.result):     # cancelled beside a failed or refused call
                    noted = _note_error(found, errors, call, s.id, history, said)
                    if noted is not None:
                        unexplained.append(noted)
                        following.append((noted, call))
            continue
        if turn.source in ("interrupt", "prompt", "queued", "command", "plan"):
            following = []          # the person spoke (or stopped the agent): what came next is theirs to say
        if turn.source == "interrupt":
            interrupted = True
            continue
        if turn.source == "plan" and bare and bare[-1].name == PLAN_TOOL:
            bare.pop()                  # the plan approved: Claude Code's way of saying yes
        first = last_assistant is None
        if turn.source not in ("prompt", "queued", "command"):
            continue
        if turn.source == "command":    # what the person typed after a slash command's name is theirs
            name, _, args = turn.text.partition(" ")
            if name.lower() in SETTING_COMMANDS:
                continue                # unless the command is Claude Code's own setting one
            turn = replace(turn, text=args.strip())
        refused = bare.pop() if bare else None
        _refusals_alone(found, bare, s.id)
        # A call refused with words typed into its dialog: those words spoke for it (its own
        # episode), so a message typed after them answers what the agent did since, not that call.
        context = [c for c in calls if not (c.rejected and c.words)]
        ran = "\n".join(c.input["command"] for c in context if c.name == "Bash" and isinstance(c.input, dict)
                        and isinstance(c.input.get("command"), str)) if len(turn.text) <= 100 else ""   # a short reaction's
        verdict, form = correction_verdict(turn.text, agent_said, False, interrupted, first, ran)
        # A message sent again (a resumed session's replay of its prompts under new ids, a prompt
        # re-sent after an API error) is the one message it was: read once (ARCHITECTURE.md, "Who said
        # it"). Not a failure pasted again: the same error after the agent's fix says it did not work.
        again = len(turn.text) >= SENT_AGAIN_CHARS and turn.text in typed and form != "pasted-failure"
        if again:
            verdict, form = None, ""
        if refused is not None and not verdict:     # words the rules do not read as a correction: the
            found.append(_refusal(refused, s.id))   # refusal stands alone, the words a judge's as any others
            context = [c for c in context if c is not refused]
            refused = None
        if not again and not verdict and not first and unsettled(turn.text):
            verdict, form = "doubtful", UNSETTLED     # not a correction by the rules, not settled by them: a judge's
        elif first and settled and not again and not verdict and not_english(turn.text):
            # a session's first message the rules cannot read (they read English): a standing rule in
            # it ("lưu vào bộ nhớ … tôi ko biết 1 chút gì về lập trình": remember I can't program,
            # public14) is a judge's to find, as the rules find "from now on, always …" in English;
            # most are the task, so it waits as one the rules settled does, shown nowhere until then
            verdict, form = "doubtful", SETTLED
        elif settled and not again and not verdict and not first and not carries_nothing(turn.text, typed):
            verdict, form = "doubtful", SETTLED       # settled by the rules as nothing: a judge's only, last
        typed.append(turn.text)
        if verdict:
            found.append(_correction(turn, last_assistant, context, verdict, form, agent_said, refused))
        calls, interrupted, agent_said = [], False, ""
    _refusals_alone(found, bare, s.id)     # refused at the very end, with no words after
    return found


UNSETTLED = "unsettled"     # the form of a message the rules neither call a correction nor settle (a judge's to read)
SENT_AGAIN_CHARS = 20       # a message this long typed again word for word is the same message sent again
# The form of a message the rules settled as nothing (a new request, an answer) that may still
# carry something (corrections.carries_nothing): kept only for a judge, last in its order, and
# ignored by everything else until a judge calls it a correction (Store: SHOWN).
SETTLED = "settled"


def shown_as(facts: dict) -> tuple:
    """(title, gist) of a light (settled) episode a judge called a correction: what recall shows of it."""
    said = str(facts.get("said") or "").strip()
    command = facts.get("command") or ""
    gist = (f"After the agent ran `{command}`, the person said: \"{said}\"" if command and facts.get("tool") == "Bash"
            else f"The person said: \"{said}\"")
    return clip(f"Said: {_first_line(said)}", 140), clip(gist, GIST_LIMIT)


def _refusal(call: ToolCall, session_id: str, words: str = "") -> "Surprise":
    """A refused call as a correction: the words typed into its dialog, or none."""
    return Surprise("correction", event_id(call, session_id), call.result_at or call.at, words, call.name,
                    call.summary(), agent_did=call.summary(), rejected=True, legacy=call.id,
                    verdict="correction", form="refusal", trigger=call.summary(), trigger_tool=call.name)


def _refusals_alone(found: list, bare: list, session_id: str) -> None:
    """The bare refusals nothing the person said followed: each a correction of its own."""
    found.extend(_refusal(call, session_id) for call in bare)
    bare.clear()


def event_id(call: ToolCall, session_id: str) -> str:
    """A failed or refused call's identity: the uuid of its result record (a copy in a resumed
    or forked transcript keeps it), else session, call id and time together; never the
    tool-use id alone (local models and proxies reuse ids such as `call_0`)."""
    return call.result_uuid or f"{session_id}:{call.id}:{call.at or call.result_at}"


EXPLAINED_CHARS = 300      # of the agent's first words after a failure, kept with it
HINTS_KEPT = 3


def _note_error(found: list, errors: dict, call: ToolCall, session_id: str, history: list, said):
    """Note a failed call: a new surprise (returned), or one more of an identical failure (None).
    Identical: the same call failing for the same reason (its telling line: the cause, not
    "Exit code 1", which every failure of a command shares); a different error string is a
    different failure, never merged away from its words."""
    lines = error_lines(call.result or "")
    if call.name == "Bash":
        lines = self_killed(call.summary(), lines)
    telling = next(iter(telling_lines({"error": lines})), lines[0] if lines else "")
    key = (call.name, call.summary(), telling)     # a failure with no output too
    if key in errors:
        errors[key].count += 1
        return None
    surprise = Surprise("error", event_id(call, session_id), call.at, "\n".join(lines), call.name, call.summary(),
                        legacy=call.id, hints=hint_lines(call.result or "", said))
    _aftermath(surprise, call, history, said)
    if call.name == "Bash":
        _moved(surprise, call, history)
        _reached(surprise, call, history, said)
    errors[key] = surprise
    found.append(surprise)
    return surprise


# The tool's own advice in its output: git's `hint:` lines, rustc's `help:`, and a line that
# says what to run next ("To push the current branch and set the remote as upstream, use")
# with the command after it (git's "To add an exception for this directory, call:" over `git config
# --global --add safe.directory …`: public21, session 55, a question of how it was got past
# unanswered). failures.error_lines leaves them out (they say what to do, not
# why it failed); a failure's episode keeps them, as the way out the tool itself gave.
_HINT = re.compile(r"^(?:hint|help|tip):\s*\S", re.I)
_USE_NEXT = re.compile(r"(?:,\s*use|\buse:|\brun:|\btry:|\bcall:)\s*$", re.I)


# A failure's next calls, before the person speaks again, as a judge is shown them (what the agent
# ran, which a lesson may name, as after a message): a step that changed what the failure was
# about though no later run of the same command shows it worked (public23, session 57: `git config
# user.email …` right after "Author identity unknown" made the lesson "expect `git commit` to fail"
# out of date the moment it was made). A step tool output may have told the agent to run is not
# kept, as a fix is not (failures.unsafe_fix): the failure's own output, a page fetched or a file
# read since. Facts stored before 2026-12-07 have none.
NEXT_CALLS = 4
NEXT_CALL_CHARS = 160
NOT_SHOWN = "a step tool output may have told it to run (not shown)"


def _note_next(surprise: Surprise, failed: ToolCall, call: ToolCall, history: list, place: dict, said) -> None:
    """Note call among a failure's next calls (`Surprise.next`); the caller stops at NEXT_CALLS."""
    if call is failed:
        return
    shown = clip(call.summary(), NEXT_CALL_CHARS)
    i, j = place.get(id(failed)), place.get(id(call))
    if i is not None and j is not None:
        if call.name == "Bash":
            told = unsafe_fix(_bare(call.summary()), failed.result or "", lambda: _output_before(history, call),
                              said, _bare(failed.summary()), lambda: _output_between(history, i, j))
        else:           # a page or a file: a host only output named is no step the session chose
            told = output_host(call.summary(), lambda: _output_before(history, call), said)
        if told:
            shown = NOT_SHOWN
    surprise.next.append({"call": shown, "failed": bool(call.is_error and not call.rejected),
                          "refused": bool(call.rejected)})


def hint_lines(output: str, said=lambda: "") -> list:
    """The tool's own advice in a failed call's output (at most HINTS_KEPT lines); never a line
    that speaks to an assistant, runs a download or names a host the person did not
    (failures.unsafe_advice): output can be anyone's words, and recall shows hints as a way out."""
    out = []
    lines = [line.strip() for line in (output or "")[-20_000:].splitlines()]
    for i, line in enumerate(lines):
        hint = ""
        if _HINT.match(line):
            hint = line
        elif _USE_NEXT.search(line):
            then = next((later for later in lines[i + 1:i + 3] if later), "")    # git leaves a blank line
            hint = f"{line} {then}" if then else ""
        hint = plain(hint)      # read as it shows: a mark inside a word dodges no rule
        if hint and not unsafe_advice(hint, said):
            out.append(clip(hint, 200))
        if len(out) >= HINTS_KEPT:
            break
    return out


def _relays_output(text: str, history: list, said) -> bool:
    """Whether the agent's words after a failure name a download run by a shell or a host only
    tool output named: kept beside the failure they would read as its way out (issue 27)."""
    return pipes_download(text) or output_host(text, lambda: "\n".join(c.result or "" for c in history), said)


_EDITS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
# What before the retried command, with no && or ; between, means it never ran: printed (`echo`,
# `printf`), a comment, or run only when what came before failed (`true || …`) (red47b)
_NOT_RUN = re.compile(r"(?:^|[;&|(]\s*)(?:echo|printf|#)(?:\s[^;&|]*)?$|\|\|$")
# Commands that only look (they fix nothing): what runs between a failure and its retry.
_LOOKING = re.compile(r"^(?:ls|cat|head|tail|less|grep|rg|find|fd|echo|pwd|which|type|env|printenv|ps|wc|file|"
                      r"stat|tree|sed -n|git (?:status|log|diff|show|branch|remote)|docker (?:ps|logs|images))\b"
                      # a program's or a subcommand's listing, or a command asked for its help or version
                      # (`omarchy-theme-list`, `brew list`, `gh pr view 12`, `npm ls`, `node --version`)
                      r"|^[\w.-]+-(?:list|ls|show|status|info)(?:\s|$)|^[\w.-]+(?:\s+[\w.-]+)?\s+(?:list|ls|show|"
                      r"status|info|view|describe)(?:\s|$)|^[\w.-]+(?:\s+[\w.-]+)?\s+(?:--help|-h|--version|-V)\s*$")


def _aftermath(surprise: Surprise, call: ToolCall, history: list, said=lambda: "") -> None:
    """What the session did about a failure: fixed by editing code (the work itself), or by a
    command or a setup step (what a lesson may name), before the same command succeeded; or
    the same command put right worked (other flags, a runner before it, the word its output
    said names nothing: _put_right). A step that output may have dictated is no fix
    (failures.unsafe_fix); another one that ran after it can be."""
    at = next((i for i, c in enumerate(history) if c is call), None)
    if at is None:
        return
    surprise.before_edit = not any(c.name in _EDITS for c in history[:at])     # not even an attempt
    if call.name != "Bash":     # another tool: the file meant instead, or the same call that later succeeded
        surprise.found, surprise.found_by = _found_instead(call, history[at + 1:at + 1 + _FOUND_WITHIN])
        if surprise.found:
            surprise.fixed_by = surprise.found
        surprise.worked = bool(surprise.found) or any(
            c.name == call.name and c.summary() == call.summary() and not c.is_error for c in history[at + 1:])
        # the very same call, its input whole (an MCP tool's summary is its name alone: a later
        # `javascript_tool` with other code is no run of the same call), with no edit before it
        for c in history[at + 1:]:
            if c.name in _EDITS:
                break
            if c.name == call.name and c.input == call.input and not c.is_error and not c.interrupted:
                surprise.again = not surprise.found
                break
        return
    failed = _bare(call.summary())
    edits, steps, dictated = [], [], False
    ran_at = []         # each step's place in history: what the agent read before it is asked once it matters
    # the line that says why it failed (of the lines _note_error kept): a step after which it is said
    # again (by this command or another) did not get it past (public11: "until `pytest -q --tb=no` has
    # run" for a file the person made while the agent ran the tests, listed again and still missing)
    cause = next(iter(telling_lines({"error": surprise.text.splitlines()})), "")

    def unsafe(command, since=True, whole=True):
        return unsafe_fix(command, call.result or "", lambda: _output_before(history, later), said, failed,
                          (lambda: _output_between(history, at, here)) if since else tuple, whole)

    def read_then_ran():
        # a step a page or a file read since the failure told the agent to run (failures.told_to_run),
        # asked when the failure was got past: for every step as it came, a long session's
        # outputs were searched again and again (the benchmark's large sessions, 0.28 -> 1.2 s)
        return any(told_to_run(step, failed, _output_between(history, at, i)) for step, i in zip(steps, ran_at))
    for here, later in enumerate(history[at + 1:], start=at + 1):
        if later.name in _EDITS and not later.is_error:
            path = str(later.input.get("file_path") or later.input.get("notebook_path") or "")
            if path and path not in edits:
                edits.append(path)
        elif later.name == "Bash":
            command = _bare(later.summary())
            if later.is_error and cause and cause in (later.result or "") and (
                    failed in command or names_a_thing(cause)):
                # the same error again: what ran before it was no fix; of another command, only a
                # cause naming the project's own thing (a file, a quoted name) is the same error,
                # not "Error: Command failed with exit code 1." of a lint run between (red47b)
                steps, ran_at = [], []
            head = command[:-len(failed)].rstrip() if command != failed and command.endswith(failed) else ""
            if command == failed or head.endswith(("&&", ";")) or head and command[-len(failed) - 1].isspace() \
                    and not _NOT_RUN.search(head):
                if later.is_error or later.interrupted:
                    continue            # failed again: keep looking for the run that worked
                # a step joined to the retry (`npm ci && npm run build`); a word before it with no
                # separator runs the same command another way (`npx vercel …`, `sudo apt-get …`)
                before = head.removesuffix("&&").removesuffix(";").rstrip() if head.endswith(("&&", ";")) else ""
                if before and not _LOOKING.match(before):
                    # the step run in the same line, just before the retry (`mv "Mission Control"
                    # mission-control && omarchy-theme-set "Mission Control"`): the last one taken
                    dictated = dictated or unsafe(before, since=False)
                    steps.append(before)
                    ran_at.append(here)
                surprise.worked = True
                surprise.again = command == failed and not steps and not edits    # run again as it was, and it went through
                dictated = dictated or read_then_ran()
                # what got it past, as recall shows it: never a step output may have dictated
                surprise.ran = steps[-1] if steps and not dictated else ""
                surprise.dictated = dictated or (command != failed and unsafe(command))
                if edits:
                    surprise.work = True
                    surprise.edited = edits[-FILES_SHOWN:]
                elif dictated:
                    pass                # what output may have dictated ran: nothing here is a fix
                elif steps and not _set_its_state(steps[-1], failed, surprise.text):
                    surprise.fixed_by = steps[-1]
                elif command != failed and not unsafe(command):
                    surprise.fixed_by = later.summary()     # the same command, run another way
                return
            # the same command with other flags, with the word it got wrong put right, or without the
            # wrapper that knew not its word: that run is the fix, unless output may have dictated it
            if not later.is_error and not later.interrupted and not edits and (
                    other_flags(command, failed) or _put_right(command, failed, call.result)
                    or _unwrapped(command, failed, call.result)):
                if not dictated and not read_then_ran() and not unsafe(command):
                    surprise.fixed_by = later.summary()
                else:
                    surprise.dictated = True
                surprise.worked = True
                return
            if not later.is_error and not later.interrupted and command.startswith(failed + " "):
                # The same command with more to it (`git push --set-upstream origin x`): shown as
                # how the failure was got past, not a fix a lesson names (other_flags decides that);
                # after edits or a step (`git read-tree HEAD` before `git status --short`), those
                # got it past, as for the same command run again.
                # (git's own "use git push --set-upstream origin x", run as written: no fix, so
                # only a line speaking to its reader holds it back: failures.told_to_run's whole)
                surprise.worked, surprise.dictated = True, dictated or read_then_ran() or unsafe(command, whole=False)
                if edits:
                    surprise.work = True
                    surprise.edited = edits[-FILES_SHOWN:]
                if not surprise.dictated:
                    surprise.ran = steps[-1] if steps else "" if edits else later.summary()
                    surprise.worked_as = later.summary() if steps or edits else ""
                return
            if not later.is_error and not _LOOKING.match(command):
                dictated = dictated or unsafe(command, since=False)
                steps.append(command)
                ran_at.append(here)


# A line of a failure's output that says a word of the command names nothing: not found, unknown,
# not a command, no rule to make it (make), did not match or does not match (git), missing script (npm), ...
_NAMES_NOTHING = re.compile(r"(?i)not found|no such|(?:does ?n[o']t|not) exist|unknown|unrecogni[sz]ed|not recognized|"
                            r"no rule to make target|is not an? [\w-]+ command|not a valid|invalid choice|"
                            r"(?:did|does) not match|(?:can ?not|can't|could ?n[o']t) (?:find|open|read|stat)|no matches|"
                            r"missing script|no module named")


def _put_right(command: str, failed: str, output: str) -> bool:
    """Whether a command is the failed one with one word put right (wording.slip_of) that a line
    of the failure's output said names nothing: the agent's own correction of what it got
    wrong. The output only says which word was wrong; the correction is the command the agent
    ran (a suggestion in the output is never one)."""
    slip = slip_of(command, failed)
    if not slip:
        return False
    word = slip[0].strip("'\"").split("=", 1)[-1]
    names = {word, word.rsplit("/", 1)[-1]} - {""}
    told = [re.compile(r"(?<![\w-])" + re.escape(name) + r"(?![\w-]|\.\w)") for name in names]
    return any(_NAMES_NOTHING.search(line) and any(t.search(line) for t in told)
               for line in plain((output or "")[-20_000:]).splitlines())


def _unwrapped(command: str, failed: str, output: str) -> bool:
    """Whether a command is the failed one without the words before it, a wrapper whose output said
    the word after it names nothing: `bun run test` after `rtk bun run test` failed with "error:
    unrecognized subcommand 'bun'" (a proxy a hook puts before commands, which knows no `bun`). The
    output only says which word its wrapper did not know; the command run is the agent's own. The
    wrapper is one word: more (`docker exec web`, `ssh deploy@prod`) runs the command somewhere
    else, and the same words run here are another command (`rm -rf /var/lib/data` on the host). A
    setting (`DRY_RUN=1 ./deploy.sh prod`) is no wrapper: without it the command does more (red45)."""
    wrapper = failed[:-len(command) - 1].strip()
    if not failed.endswith(" " + command) or " && " in failed or " " in wrapper or re.match(r"[A-Za-z_]\w*=", wrapper):
        return False
    word = command.split(" ", 1)[0]
    told = re.compile(r"(?<![\w-])" + re.escape(word) + r"(?![\w-]|\.\w)")
    return any(_NAMES_NOTHING.search(line) and told.search(line)
               for line in plain((output or "")[-20_000:]).splitlines())


# The Bash tool keeps its working folder from call to call: a `cd` that opens a command (not in a
# subshell) leaves the next commands there. A relative path then names nothing.
_CD = re.compile(r"^\s*cd\s+(\"[^\"]+\"|'[^']+'|[^\s;&|()]+)\s*(?:&&|;|$)")
_PATH_MISSING = re.compile(r"(?i)no such file or directory|not in the working tree|did not match any files|"
                           r"could not open directory|does not exist|cannot find the path|not found")


def _moved(surprise: Surprise, call: ToolCall, history: list) -> None:
    """A Bash call that failed on a path not found while an earlier call's `cd` into a relative
    folder still held the shell there, naming a path from the root that starts with that folder
    (`git add sub/a.go` after `cd sub`): `moved` (that folder), and `fixed_by` the later call
    that did the same from an absolute `cd` and worked (what made it work)."""
    command = call.summary()
    if _CD.match(command) or not _PATH_MISSING.search(surprise.text):
        return
    at = next((i for i, c in enumerate(history) if c is call), None)
    if at is None:
        return
    for earlier in reversed(history[:at]):
        went = _CD.match(earlier.summary()) if earlier.name == "Bash" and not earlier.is_error else None
        if went:
            folder = went.group(1).strip("'\"")
            if folder.startswith(("/", "~")):
                _moved_back(surprise, command, folder, history[at + 1:])
                return
            if folder.startswith("$") or re.match(r"^[A-Za-z]:", folder) or folder in (".", "-"):
                return              # back to a folder named whole: where it meant to be
            folder = folder.removeprefix("./").rstrip("/")
            if not any(word.strip("'\"").removeprefix("./").startswith(folder + "/") for word in command.split()):
                return              # no path it names from the root: the folder may be where it meant to be
            surprise.moved = folder
            break
    else:
        return
    program = _bare(command).split(" ", 1)[0]
    for later in history[at + 1:]:
        went = _CD.match(later.summary()) if later.name == "Bash" and not later.is_error else None
        if went and went.group(1).strip("'\"").startswith(("/", "~")):
            rest = _bare(later.summary()[went.end():].strip())
            if rest.split(" ", 1)[0] == program:
                surprise.fixed_by, surprise.worked = later.summary(), True
                return


# A way to run a program the shell does not find on its PATH: a runner before its name (`npx pyright
# .`, `uv run mypy`, `python3 -m pytest`) or a path to it (`$JAVA_HOME/bin/javac`, `./node_modules/.bin/tsc`).
_RUNNER = re.compile(r"^(?:npx|bunx|pnpx|uvx|pipx run|uv run|poetry run|pdm run|pnpm exec|pnpm dlx|yarn|yarn dlx|"
                     r"bundle exec|python3? -m|py -m)(?: --?[\w-]+(?:=\S+)?)* (\S+)")
_SETTING = re.compile(r"^(?:export )?[A-Za-z_]\w*=(?:\"[^\"]*\"|'[^']*'|\S*)$")


def _runs_program(command: str, name: str) -> bool:
    """Whether a command runs the program `name` another way than by its name alone: a runner
    before it or a path to it, in any of its `&&` parts (settings such as `export X=…` aside)."""
    for part in command.split(" && "):
        part = part.strip()
        if _SETTING.match(part):
            continue
        runner = _RUNNER.match(part)
        head = part.split(" ", 1)[0]
        if runner and runner.group(1) == name or "/" in head and head.rsplit("/", 1)[-1] == name:
            return True
    return False


def _reached(surprise: Surprise, call: ToolCall, history: list, said=lambda: "") -> None:
    """A program the shell did not find (`command not found: pyright`) that a later call ran
    another way (_runs_program: `npx pyright .`, `$JAVA_HOME/bin/javac …`) without the shell saying
    so again: that way reaches it, whatever the program then reported of the work (a type
    checker's findings, a compile error in the code): `reached` (the program), `fixed_by` that
    call. Public13 (session 48): `pyright .` then `npx pyright .`, and `javac` then the JDK's own
    by its path, each failing on the code it then read, were shown to the judge as fixed by nothing."""
    if surprise.fixed_by or surprise.worked or surprise.moved:
        return
    cause = environment_cause({"command": call.summary(), "tool": "Bash", "error": surprise.text.splitlines()})
    if not cause or cause[0] != "missing":
        return
    name = cause[1]
    at = next((i for i, c in enumerate(history) if c is call), None)
    if at is None:
        return
    for here, later in enumerate(history[at + 1:], start=at + 1):
        if later.name != "Bash" or later.interrupted or not _runs_program(_bare(later.summary()), name):
            continue
        if unsafe_fix(_bare(later.summary()), call.result or "", lambda: _output_before(history, later), said,
                      _bare(call.summary()), lambda: _output_between(history, at, here)):
            return          # a way its output, or a page read since, may have told the agent: never named
        if later.is_error:
            lines = error_lines(later.result or "")
            again = environment_cause({"command": later.summary(), "tool": "Bash", "error": lines})
            if again and again[0] == "missing" or not telling_lines({"error": lines}) \
                    or any(_not_a_module(line, name) for line in lines):
                continue    # not found that way either, or nothing but an exit code to tell it ran
        surprise.reached, surprise.fixed_by = name, later.summary()
        return


# Python's words for `python -m <name>` where the module is not installed ("…python.exe: No module
# named streamlit"): the program not found that way either. public18 (session 52): `streamlit run`
# not found, then `python -m streamlit run` failing so, was shown to the judge as having run
# `streamlit`, and the lesson said "`streamlit` is not on PATH; run it as `python -m streamlit …`",
# where a `pip install streamlit` later made plain `streamlit run` work.
_NOT_A_MODULE = re.compile(r"No module named '?([\w.]+)'?")


def _not_a_module(line: str, name: str) -> bool:
    found = _NOT_A_MODULE.search(line)
    return bool(found) and found.group(1).split(".")[0].lower() == name.lower()


def _moved_back(surprise: Surprise, command: str, folder: str, later_calls: list) -> None:
    """A path from the root not found while an earlier `cd` to a folder named whole (`cd
    /w/app/backend && pip install …`) held the shell in it, shown when a later call went back up to
    a folder above it (`cd /w/app && …`) and the same program then worked: `moved` (the folder
    below, `backend`), `fixed_by` the call that went back. Public13 (session 48):
    `./scripts/git/commit_ticket.sh` not found after `cd …/kern.labs/backend`, and run again after
    `cd …/kern.labs && git add …`, made "until `git add …` has run"."""
    words = [w.strip("'\"") for w in command.split()]
    if not any("/" in w and not w.startswith(("/", "~", "$", "-")) and "://" not in w for w in words):
        return                  # no relative path it names: not where it ran
    program = _bare(command).split(" ", 1)[0]
    folder = folder.rstrip("/")
    back = None                 # (the call that went back up, the folder it went to)
    for later in later_calls:
        if later.name != "Bash":
            continue
        went = _CD.match(later.summary())
        if went:
            above = went.group(1).strip("'\"").rstrip("/")
            back = (later, above) if not later.is_error and folder.startswith(above + "/") else None
        if back and not later.is_error and _bare(later.summary()).split(" ", 1)[0] == program:
            surprise.moved = folder[len(back[1]) + 1:]
            surprise.fixed_by, surprise.worked = back[0].summary(), True
            return


def _output_before(history: list, call: ToolCall) -> str:
    """What every tool call before this one printed."""
    at = next(i for i, c in enumerate(history) if c is call)
    return "\n".join(c.result or "" for c in history[:at])


def _output_between(history: list, failed_at: int, call_at: int):
    """What the tool calls between a failure's place in history and a later call's printed (what
    the agent read while getting past it: a page, a file, another command's output), each as a reader sees it
    (failures.plain, worked out once a call: each step after a failure asks again, and a long
    session's outputs joined and read again for each took 1.1 s of 1.4 on the benchmark's large
    sessions)."""
    for c in history[failed_at + 1:call_at]:
        if c.result:
            if c._plain is None:
                c._plain = plain(c.result)
            yield c._plain


_FOUND_WITHIN = 6           # calls after a path not found in which the one meant is looked for
_NOT_FOUND = re.compile(r"(?i)does not exist|not found|no such file")


_PATH_WORD = re.compile(r"[\w.-]*(?:/[\w.-]+)+|[\w-]+\.[A-Za-z]\w{0,5}")


def _set_its_state(step: str, failed: str, error: str) -> bool:
    """Whether the command run before the failed one worked only put in place what the error
    named: it acts on a path of the failed command that the error names (`git add f.go` after
    `git diff --cached f.go` failed with "ambiguous argument 'f.go'"). The work's state changed;
    that is no fix for another session (a migration run before a seed is one: no shared path)."""
    named = {w for w in _PATH_WORD.findall(failed) if w in error}
    return bool(named & set(_PATH_WORD.findall(step)))


def _found_instead(call: ToolCall, later: list) -> tuple:
    """The file a failed file tool meant: after a path that does not exist, the name of the one
    a later call of the session used that has the same name but for its ending (`.golangci.yaml`
    after `.golangci.yml`), and that call's summary; ("", "") when none. A name with no ending
    has none to get wrong: Grep's or Glob's path `strategy/manual_commit` is a folder guessed (or
    a prefix), and the `manual_commit.go` read five calls later is no file it meant."""
    if not _NOT_FOUND.search(call.result or ""):
        return "", ""
    missing = _file_name(call)
    if "." not in missing.strip("."):
        return "", ""
    stem = missing.lower().rsplit(".", 1)[0]
    for other in later:
        name = _file_name(other)
        if other.is_error or not name or name == missing:
            continue
        if (name.lower().rsplit(".", 1)[0] if "." in name.strip(".") else name.lower()) == stem:
            return name, other.summary()
    return "", ""


def _file_name(call: ToolCall) -> str:
    """The name of the file a file tool's call was about (its path's last part), or ""."""
    path = call.input.get("file_path") or call.input.get("notebook_path") or call.input.get("path") or ""
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] if isinstance(path, str) else ""


@lru_cache(maxsize=4096)  # commands repeat within and across sessions
def _bare(command: str) -> str:
    """A command without `cd x &&`, its output plumbing and leading VAR=value settings."""
    command = " ".join((command or "").split())
    command = re.sub(r"\s*(?:\|\s*(?:head|tail|grep|less|more|cat|tee)\b[^|]*)+$", "", command)
    command = re.sub(r"\s*\d?>&\d|\s*2>\s*/dev/null", "", command)
    parts = [p.strip() for p in command.split("&&") if p.strip() and not re.match(r"^(?:cd|pushd)\s", p.strip())]
    return " && ".join(parts)


def _correction(turn: Turn, agent: Turn | None, calls: list, verdict: str, form: str,
                agent_said: str = "", refused: ToolCall | None = None) -> Surprise:
    """A correction, tied to what the agent had just done: the call it refused, else the
    call that failed, else the last call, else what the agent last said; and to the call its
    words are about (its trigger), when they name one. agent_said: the agent's latest words
    before them (what corrections judged a claim by; kept for the optional model). refused:
    the bare refusal these words follow at once, which they speak for (it answers to its call)."""
    recent = refused or _last_failure(calls) or _last_done(calls)
    did = recent.summary() if recent else (clip(agent.text, 160) if agent and agent.text else "")
    about = refused or _trigger(turn.text, calls)
    return Surprise("correction", turn.uuid, turn.at, turn.text, recent.name if recent else "",
                    recent.summary() if recent else "", agent_did=did, rejected=bool(recent and recent.rejected),
                    verdict=verdict, form="refusal" if refused else form, trigger=about.summary() if about else "",
                    trigger_tool=about.name if about else "", trigger_failed=bool(about and about.is_error),
                    command_failed=bool(recent and recent.is_error and not recent.rejected),
                    agent_said=clip(agent_said, 300), legacy=refused.id if refused else "",
                    queued=turn.source == "queued")


def _last_failure(calls: list) -> ToolCall | None:
    """The latest call that failed and that no later call got past (the same command run, or the
    same file's tool used, again with success): a lint that failed, was fixed and then passed is
    not what the person's next words answer."""
    passed = set()
    for call in reversed(calls):
        if call.interrupted or call.rejected:
            continue
        if not call.is_error:
            passed.add(call.summary())
        elif call.summary() not in passed:
            return call
    return None


# The agent's own to-do list (Claude Code's TodoWrite, 2.1's Task* tools): bookkeeping, not work
# the person answers ("After the agent ran TodoWrite, the person said ...").
BOOKKEEPING = frozenset({"TodoWrite", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet"})


def _last_done(calls: list) -> ToolCall | None:
    """The last call that did or looked at something, not one that kept the agent's to-do list;
    the last call when every one did."""
    return next((c for c in reversed(calls) if c.name not in BOOKKEEPING), calls[-1] if calls else None)


_GENERIC = {"run", "use", "git", "npm", "npx", "python", "python3", "the", "and", "file", "test", "tests"}
_SAID_WORD = re.compile(r"[a-z0-9][a-z0-9_.:-]*")
_COMMAND_WORD = re.compile(r"^[a-z0-9][a-z0-9_.:@-]*$")


def _trigger(text: str, calls: list):
    """The call the person's words are about: the latest whose command (or file name) shares
    a word with what they typed, failed calls first (a refused call is its own correction)."""
    calls = [c for c in calls if not c.rejected]
    said = set(_SAID_WORD.findall(text.lower()))
    said |= {w.strip(".:") for w in said}

    def named(call):
        if call.name == "Bash":         # the program, its subcommand or first argument: not any word
            words = {w for step in _bare(call.summary()).lower().split("&&")
                     for w in step.split()[:3] if _COMMAND_WORD.match(w)}
        elif call.name in _EDITS or call.name == "Read":
            path = str(call.input.get("file_path") or call.input.get("notebook_path") or "")
            name = path.rsplit("/", 1)[-1].lower()
            words = {name, name.rsplit(".", 1)[0]} if path else set()
        else:
            return False
        shared = said & words
        return bool(shared - _GENERIC) or (bool(shared) and call.name == "Bash" and
                                           _bare(call.summary()).split(" ")[0].lower() in said)

    def step(call):
        """The step of a chain (`git add -A && git commit && git push`) the words name."""
        if call.name != "Bash" or "&&" not in call.summary():
            return call
        steps = [p.strip() for p in _bare(call.summary()).split("&&")]
        named_steps = [p for p in steps if said & set(p.lower().split()[:3])]
        if not named_steps:
            return call
        return ToolCall(call.id, call.name, {"command": named_steps[-1]}, call.at, call.result, call.is_error,
                        call.rejected, call.interrupted)

    found = (next((c for c in reversed(calls) if c.is_error and named(c)), None)
             or next((c for c in reversed(calls) if named(c)), None))
    return step(found) if found else None


# --------------------------------------------------------------------------------------
# The episodes of a session

def episodes_of(session: Session, session_id: str | None = None, settled: bool = False) -> list:
    """One `session` episode, then one per surprise, each with a title, gist and cwd; settled
    (what ingest stores): also a light episode of each message the rules settled as nothing that
    may carry something, for a judge only (surprises_of)."""
    if not session.turns:
        return []  # a snapshot-only file: nothing happened in it
    sid = session_id or session.id
    # what the person asked; for a session opened by approving a plan, the plan says its goal
    asked = [t for t in session.turns if t.role == "user" and t.source in ("prompt", "queued", "command", "plan")]
    prompts = [t for t in asked if t.source != "plan"] or asked[:1]
    first = clip(asked[0].text, 300) if asked else ""
    found = surprises_of(session, settled=settled)
    errors = [s for s in found if s.kind == "error"]
    corrections = [s for s in found if s.kind == "correction" and s.verdict == "correction"]
    cwd = session.cwd or None
    files, commands = _files_touched(session, cwd), _commands(session)   # for the gist and the facts
    at = session.began()
    ended = outcome(session)    # in the gist and the facts: worked out (and, cut, redacted) once
    out = [{
        "key": f"session:{sid}",
        "kind": "session",
        "title": clip(session.title or _first_line(first) or "Session without a request", 120),
        "gist": clip(_session_gist(session, first, errors, corrections, files, ended), GIST_LIMIT),
        "detail": clip_block("\n".join(f"- {clip(t.text, 300)}" for t in prompts), DETAIL_LIMIT),
        "facts": {"prompts": len(prompts), "tool_calls": len(session.tool_calls),
                  "errors": sum(e.count for e in errors), "corrections": len(corrections),
                  "subagents": len(session.subagents),
                  "files": files, "commands": commands, "ended": ended,
                  "version": session.version, "branch": session.git_branch,
                  # its first record: a resumed or copied transcript keeps it under a new session id
                  "origin": next((t.uuid for t in session.turns if t.uuid), "")},
        "at": at,
        "cwd": cwd,
    }]
    task = _first_line(first)
    places = neighbours.places(session.turns) if any(s.kind == "correction" for s in found) else {}
    for s in found:
        when = iso_or_none(s.at) or at
        ep = _error_episode(s, cwd, when, task) if s.kind == "error" else _correction_episode(s, cwd, when)
        here = places.get(s.anchor) if s.kind == "correction" else None     # a message of the person's
        if s.form != SETTLED:       # a light episode has no context
            ep["around"] = neighbours.around(session.turns, s.at, asked[0] if asked else None, here)  # its context
        if s.kind == "correction":
            ep["facts"]["then"] = agent_next(session.turns, s.at, here)     # for a judge: what the agent did next
        out.append(ep)
    out += _subagent_failures(session, cwd, at, task, asked[0] if asked else None)
    for ep in out:
        ep["agent"] = session.agent     # whose log it is (claude-code, codex, gemini)
    return out


def _subagent_failures(session: Session, cwd, at: str, task: str, asked) -> list:
    """The failed calls of the subagents the session started, credited to it (a subagent's
    transcript holds no words of the person: the task it was given is the agent's)."""
    out = []
    for sub in session.subagents:
        for s in surprises_of(sub):
            if s.kind != "error":
                continue
            ep = _error_episode(s, sub.cwd or cwd, iso_or_none(s.at) or at, task)
            ep["facts"]["subagent"] = sub.agent_id or _stem(sub.path)
            ep["title"] = clip(ep["title"].replace(" failed: ", " failed in a subagent: ", 1), 140)
            ep["around"] = neighbours.around(session.turns, s.at, asked)
            out.append(ep)
    return out


def _stem(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".jsonl")


THEN_SAID = 300             # characters of the agent's first words after a correction
THEN_CALLS = 5              # of its calls after it


def agent_next(turns: list, at: str, here: int | None = None) -> dict:
    """What the agent did after the person's words at `at`, up to their next message: its first
    words (`said`) and its calls (`ran`, each `summary` and whether it failed or was refused);
    after `here`, their place among turns when the words are a message of theirs
    (neighbours.places), else after their time."""
    said, ran = "", []
    started = here is not None
    for turn in turns if here is None else islice(turns, here + 1, None):
        if not started:
            started = bool(turn.at and at and turn.at > at)
            if not started:
                continue
        if turn.role == "user":
            if turn.source in ("prompt", "queued", "plan"):
                break
            continue
        said = said or clip(turn.text or "", THEN_SAID)
        for call in turn.tools:
            if OWN_TOOL.match(call.name) or len(ran) >= THEN_CALLS:
                continue
            ran.append({"call": clip(call.summary(), 200), "failed": bool(call.is_error and not call.rejected),
                        "refused": bool(call.rejected)})
    return {"said": said, "ran": ran}


MOVED_CAUSE = "bash: a path not found in the folder an earlier cd left the shell in"


def _error_episode(s: Surprise, cwd, at: str, task: str) -> dict:
    lines = s.text.splitlines()
    telling = next(iter(telling_lines({"error": lines})), lines[0] if lines else "failed")
    what = f"`{s.command}`" if s.tool == "Bash" else (s.command or s.tool)
    times = f" ({s.count} times)" if s.count > 1 else ""
    gist = f"{what} failed{times}: " + " / ".join(lines + s.hints)
    resolution = _resolution(s, cwd)
    if resolution:
        gist = gist.rstrip(".") + f". {resolution}"
    if s.explained and s.worked:
        gist = gist.rstrip(".") + f". The agent then said: \"{s.explained}\""
    if task:
        gist = gist.rstrip(".") + f". While working on: {clip(task, 160)}"
    facts = {"tool": s.tool, "command": s.command, "error": lines, "count": s.count,
             "guard": is_guard(s.tool, lines), "before_edit": s.before_edit}
    facts["cause"] = cause_key(facts)
    if s.moved:                 # the cause is where the shell was, whatever the command and its path
        facts["moved"] = s.moved
        facts["cause"] = MOVED_CAUSE
    if s.fixed_by:
        facts["fixed_by"] = s.fixed_by
        facts["fix"] = s.found or s.fixed_by     # what made it work: a command, or the file meant
    if s.reached:
        facts["reached"] = s.reached
    if s.found:
        facts["found"] = s.found
        facts["found_by"] = s.found_by
    if s.work:
        facts["work"] = True
    if s.hints:
        facts["hints"] = s.hints
    if s.edited:
        facts["edited"] = [_from_project(path, cwd) for path in s.edited]
    if s.ran and s.ran != s.fixed_by:
        facts["ran"] = s.ran
    if s.explained:
        facts["explained"] = s.explained
    if s.dictated:
        facts["dictated"] = True
    if s.worked_as:
        facts["worked_as"] = s.worked_as
    if s.next:
        facts["next"] = s.next
    if s.again and not (s.fixed_by or s.work or s.ran or s.worked_as or s.dictated or s.moved):
        facts["again"] = True       # for a judge: it went through when run again as it was
    return {
        "key": f"error:{s.anchor}",
        "legacy_key": f"error:{s.legacy}" if s.legacy else None,
        "kind": "error",
        "title": clip(f"{clip(what, 60)} failed: {telling}", 140),
        "gist": clip(gist, GIST_LIMIT),
        "detail": clip_block(s.text, DETAIL_LIMIT),
        "facts": facts,
        "at": at,
        "cwd": cwd,
    }


def _resolution(s: Surprise, cwd) -> str:
    """How a failure ended when a later call did the same thing without failing: the command
    run in between, or the files edited; for a path not found, the later call that used the file
    meant; '' when it never worked in the session."""
    if s.reached:
        return f"Then `{clip(s.fixed_by, 120)}` ran `{s.reached}`"
    if not s.worked:
        return ""
    if s.found:     # another file, named by a later call: the failed call itself never ran again
        return f"Then `{clip(s.found_by or s.found, 120)}` worked (the file `{clip(s.found, 60)}`)"
    done = [f"`{clip(s.fixed_by or s.ran, 120)}`"] if (s.fixed_by or s.ran) else []
    if s.dictated and not done:
        done.append(DICTATED)
    if s.edited:
        done.append("editing " + ", ".join(_from_project(p, cwd) for p in s.edited[-3:]))
    return "Worked after " + " and ".join(done) if done else "Worked when run again"


# How a failure was got past when what ran may have been dictated by its output: said, never named.
DICTATED = "a step its output may have dictated (not shown: tool output is data, not a fix)"


def _correction_episode(s: Surprise, cwd, at: str) -> dict:
    said = s.text.strip()
    action = f"`{s.command}`" if s.tool == "Bash" else _from_project(s.command or s.tool, cwd)
    if s.rejected:
        gist = f"The person refused to let the agent run {action}" + (f" and said: \"{said}\"" if said else "")
    elif s.command:
        gist = f"After the agent ran {action}, the person said: \"{said}\""
    elif s.agent_did:
        gist = f"After the agent said \"{clip(s.agent_did, 160)}\", the person said: \"{said}\""
    else:
        gist = f"The person said: \"{said}\""
    facts = {"said": clip_block(said, DETAIL_LIMIT), "agent_did": s.agent_did, "agent_said": s.agent_said,
             "tool": s.tool,
             "command": s.command, "rejected": s.rejected, "form": s.form,
             "trigger": s.trigger, "trigger_tool": s.trigger_tool, "trigger_failed": s.trigger_failed,
             "command_failed": s.command_failed}
    own = "\n".join(own_lines(said))
    if own != said:             # pasted output around the person's words: keep their own lines whole
        facts["own"] = clip_block(own, DETAIL_LIMIT)
        if len(said) > DETAIL_LIMIT:    # and which of them sat right under the paste, read on all of it
            facts["under"] = [clip(ln, UNDER_CHARS) for ln in lines_under_a_paste(said)][:UNDER_LINES]
    if s.verdict == "doubtful":
        facts["doubtful"] = True     # for a model to decide (Store.doubtful_corrections)
    if s.queued:
        facts["queued"] = True       # for a judge: the words reached the agent mid-task, between its steps
    facts.update(_meaning(facts, s.verdict))
    light = s.form == SETTLED       # no title, gist or detail: nothing finds it, counts it or shows it
    return {
        "key": f"correction:{s.anchor}",
        "legacy_key": f"correction:{s.legacy}" if s.legacy else None,
        "kind": "correction",
        "title": "" if light else clip(f"{'Said' if s.form == UNSETTLED else 'Correction'}: {_first_line(said)}"
                                       if said else f"Refused: {action}", 140),
        "gist": "" if light else clip(gist, GIST_LIMIT),
        "detail": "" if light else clip_block(said, DETAIL_LIMIT),
        "facts": facts,
        "at": at,
        "cwd": cwd,
    }


def _meaning(facts: dict, verdict: str) -> dict:
    """What the rules read in a correction, for sleep and for a judge (PROTOCOL.md, "Stored:
    episodes"): `verdict` (correction | doubtful), `words` (the person's own, pasted material
    left out), `standing` (said as a standing rule: always, never, from now on, in this repo
    we ...; a first message's rule), `lasting` (worth keeping beyond this moment alone: not a
    one-off task, a ban only when standing) and `rule` (the rules' one-line lesson, when its
    words hold one)."""
    words = facts.get("own", facts["said"])
    kept = what_lasts(words, facts.get("form") or "")
    # A rule on the line right under a paste may be the paste's own last line: a candidate, for
    # something else to back, never live on its standing words alone.
    standing = (verdict == "standing" or kept["standing"]) and not under_a_paste(facts, kept["sentence"])
    out = {"verdict": "doubtful" if verdict == "doubtful" else "correction", "words": words,
           "standing": standing, "lasting": kept["lasting"]}
    rule = correction_lesson(facts, kept) if kept["sentence"] else None
    if rule:
        out["rule"] = rule
    return out


def _from_project(action: str, cwd) -> str:
    """A file tool's call with its path from the project's folder (`Write src/app.ts`): the
    person's home and folder layout add nothing to a lesson's Why and leave the machine with it."""
    root = str(cwd or "").rstrip("/")
    return action.replace(root + "/", "") if root else action


OUTCOME_CHARS = 260         # of the agent's closing summary in a session's gist
DECIDED_SHOWN = 3           # questions answered, in a session's gist
ERRORS_SHOWN = 2            # failures with how they ended, in a session's gist


def _session_gist(session, first: str, errors: list, corrections: list, files: list, ended: str) -> str:
    """What happened in a session: what was asked, how it ended (the agent's closing summary,
    usually the best account), what was decided (questions answered, a plan approved), the
    failures and how they were got past, then the files changed. ended: outcome(session)."""
    parts = [f"Asked: {clip(first, 200)}" if first else "No request typed"]
    parts.append("Outcome: " + ended)
    decided = _decided(session)
    if decided:
        parts.append("Decided: " + "; ".join(decided[:DECIDED_SHOWN]))
    trouble = []
    shown = sorted(errors, key=lambda e: not e.worked)[:ERRORS_SHOWN]     # those got past first
    for e in shown:
        what = f"`{clip(e.command, 60)}`" if e.tool == "Bash" else clip(e.command or e.tool, 60)
        line = next(iter(telling_lines({"error": e.text.splitlines()})), "")
        done = _resolution(e, session.cwd)
        trouble.append(f"{what} failed ({clip(line, 90)})" + (f", {done[:1].lower()}{done[1:]}" if done else ""))
    left = sum(e.count for e in errors) - sum(e.count for e in shown)
    if left > 0:
        trouble.append(f"{left} {'other ' if trouble else ''}failed tool call{'' if left == 1 else 's'}")
    if corrections:
        trouble.append(f"{len(corrections)} correction{'' if len(corrections) == 1 else 's'}")
    if trouble:
        parts.append("Trouble: " + "; ".join(trouble))
    if files:
        more = len(files) - FILES_SHOWN
        parts.append("Changed: " + ", ".join(files[:FILES_SHOWN]) + (f" and {more} more" if more > 0 else ""))
    return ". ".join(p.rstrip(".") for p in parts)


def _decided(session) -> list:
    """What the person decided in a session: the answers they chose to the agent's questions,
    and a plan they approved (its first line), sent back as "Implement the following plan:" or
    approved where it was proposed."""
    out = []
    for turn in session.turns:
        if turn.role == "user" and turn.source == "plan":
            plan = _first_line(turn.text.split(":", 1)[-1] if turn.text.startswith("Implement the following plan")
                               else turn.text).lstrip("# ")
            out.append(f"approved the plan \"{clip(plan, 100)}\"")
        for call in turn.tools if turn.role == "assistant" else ():
            if call.plan:       # approved where it was proposed (transcripts: ExitPlanMode, no error)
                out.append(f"approved the plan \"{clip(_first_line(call.plan).lstrip('# '), 100)}\"")
            for question, answer in call.answers.items():
                out.append(f"{clip(question, 90)} → {clip(answer, 60)}")
    return out


def outcome(session) -> str:
    """How a session ended: the agent's last words of substance (its closing summary, first
    sentences), or that the person interrupted it, or the last call."""
    for turn in reversed(session.turns):
        if turn.role == "user":
            if turn.source == "interrupt":
                return "interrupted by the person"
            continue
        text = " ".join(turn.text.replace("**", "").replace("#", "").split())
        if len(text) >= 40 or (text and turn is session.turns[-1]):
            return clip(text, OUTCOME_CHARS)
        if turn.tools and not text:
            last = turn.tools[-1]
            if turn is session.turns[-1]:
                return clip(f"{last.summary()} {'failed' if last.is_error else 'ran'}", 160)
    return "without a reply"


def _files_touched(session, cwd) -> list:
    out = []
    for call in session.tool_calls:
        if call.name in ("Edit", "MultiEdit", "Write", "NotebookEdit") and not call.is_error:
            path = call.input.get("file_path") or call.input.get("notebook_path")
            if isinstance(path, str) and path:
                if cwd and path.startswith(cwd.rstrip("/") + "/"):
                    path = path[len(cwd.rstrip("/")) + 1:]
                if path not in out:
                    out.append(path)
    return out


def _commands(session) -> list:
    out = []
    for call in session.tool_calls:
        if call.name == "Bash":
            cmd = call.input.get("command")
            if isinstance(cmd, str) and cmd.strip():
                cmd = _first_line(cmd)
                if cmd not in out:
                    out.append(cmd)
    return out


def _first_line(text: str) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""
