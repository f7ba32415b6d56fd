"""openmemory's own settings, OPENMEMORY_HOME/settings.json: the choices the person made that
the nightly job reads. Today one: the judge (judge.py) — off, a local OpenAI-compatible
endpoint, or Claude Code itself run headless — and what it may spend a night.

Off until the person turns it on (`openmemory setup` asks; `--yes` alone never does). The
file is JSON, `{"version": 1, "judge": {...}}`; keys openmemory does not know are kept.
An unreadable file is no judge, said by `problem()`, never a crash of the night.
"""
import json
import os
import shutil
from dataclasses import asdict, dataclass

from . import files, paths

VERSION = 1
BACKENDS = ("off", "endpoint", "claude")

# The cap a night, unless the person sets another: small. A judged message is one call of
# about 2,600 tokens through `claude -p`: ~500 of Claude Code's own (measured with 2.1.328)
# around openmemory's ~2,100 (measured ~1,500 before the session's context was added to each
# message, judge.OTHERS_CHARS and CLOSING_CHARS: 7,100 characters a request on the dev
# corpus's tune requests instead of 4,600, about 600 tokens more), so 20 calls fit 60,000
# tokens with room for long pastes. Questions a day on the dev corpus (four people, 45
# sessions over 25 days), every message that can carry something and one session's failures
# asked too: 316 in all (297 before a failure seen once and never got past was asked too), a
# median of 9 a day, 20 or fewer on 21 of the 25 days counted by the day a session ended (the
# rest wait for the next night, the messages the rules settled as nothing and the failures last).
DEFAULT_CALLS = 20
DEFAULT_TOKENS = 60_000
DEFAULT_CLAUDE_MODEL = "haiku"      # the cheap model; `setup --judge-model` sets another


@dataclass(frozen=True)
class Judge:
    """Which judge, and its cap a night (llm.night_of: the person's calendar day)."""
    backend: str = "off"            # off | endpoint | claude
    model: str = ""                 # the endpoint's model name, or Claude Code's (`haiku`, a full id)
    url: str = ""                   # endpoint: its OpenAI-compatible base URL
    command: str = ""               # claude: the absolute path of the `claude` binary
    calls: int = DEFAULT_CALLS
    tokens: int = DEFAULT_TOKENS

    def describe(self) -> str:
        """The judge in a few words, for setup, status and the morning report."""
        if self.backend == "claude":
            return f"Claude Code headless (`claude -p --model {self.model}`)"
        if self.backend == "endpoint":
            return f"{self.model} at {self.url}"
        return "off"


def _read() -> dict:
    data = files.read(paths.own_settings_path())
    if data is None:
        return {}
    value = json.loads(data.decode("utf-8"))
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def judge() -> Judge:
    """The judge the person chose (off when none, or when the file cannot be read: see problem())."""
    try:
        raw = _read().get("judge") or {}
    except (ValueError, UnicodeDecodeError):
        return Judge()
    if not isinstance(raw, dict) or raw.get("backend") not in BACKENDS:
        return Judge()
    try:
        return Judge(backend=raw["backend"], model=str(raw.get("model") or ""), url=str(raw.get("url") or ""),
                     command=str(raw.get("command") or ""), calls=max(0, int(raw.get("calls", DEFAULT_CALLS))),
                     tokens=max(0, int(raw.get("tokens", DEFAULT_TOKENS))))
    except (TypeError, ValueError):
        return Judge()


def problem() -> str | None:
    """Why the settings file gives no judge although it names one, or None."""
    path = paths.own_settings_path()
    try:
        raw = _read().get("judge")
    except (ValueError, UnicodeDecodeError) as e:
        return f"{path} cannot be read ({e}); fix it or run `openmemory setup --judge ...` again"
    if raw is None:
        return None
    if not isinstance(raw, dict) or raw.get("backend") not in BACKENDS:
        return f"{path}: judge.backend must be one of {', '.join(BACKENDS)}"
    chosen = judge()
    if chosen.backend == "off" and raw.get("backend") != "off":
        return f"{path}: judge.calls and judge.tokens must be whole numbers"
    if chosen.backend == "claude" and not chosen.command:
        return f"{path}: judge.command (the `claude` binary) is not set"
    if chosen.backend == "endpoint" and not (chosen.url and chosen.model):
        return f"{path}: judge.url and judge.model are both needed"
    return None


CALL_TOKENS = 2_600          # a judged message through `claude -p` (see DEFAULT_CALLS)


class NotAsTyped(ValueError):
    """A judge asked for with a value missing or not of its form (no URL, --judge-command not
    a program): wrong in itself, not the machine's state (no `claude` on PATH)."""


def choose(backend: str, model=None, url=None, command=None, calls=None, tokens=None,
           current: Judge = Judge()) -> Judge:
    """The judge the person asked for, what they did not say taken from the current one or the
    defaults. Raises ValueError (a clear message) when it cannot run as asked, NotAsTyped when
    what was given is wrong in itself."""
    if backend == "off":
        return Judge(calls=current.calls, tokens=current.tokens)
    same = current.backend == backend
    calls = calls if calls is not None else current.calls
    tokens = tokens if tokens is not None else current.tokens
    if backend == "claude":
        found = command or (current.command if same else "") or shutil.which("claude") or ""
        if not found:
            raise ValueError("no `claude` on PATH: pass --judge-command with the binary's path")
        path = shutil.which(found)
        if path is None:
            raise (NotAsTyped if command else ValueError)(f"{found} is not an executable file")
        return Judge(backend="claude", model=model or (current.model if same else "") or DEFAULT_CLAUDE_MODEL,
                     command=os.path.abspath(path), calls=calls, tokens=tokens)
    url = url or (current.url if same else "")
    model = model or (current.model if same else "")
    if not url.startswith(("http://", "https://")) or not model:
        raise NotAsTyped("an endpoint judge needs --judge-url (http:// or https://) and --judge-model")
    return Judge(backend="endpoint", model=model, url=url, calls=calls, tokens=tokens)


def explain(current: Judge) -> list:
    """What the judge is, for setup to say before asking."""
    return ["The judge (optional, off unless you turn it on): each night `openmemory sleep` shows a model "
            "each message you typed after the first that can carry something (not \"yes\", \"continue\" or "
            "a message sent again), with what the agent did before and after and the rest of the session (your other "
            "messages, the agent's last words), and each failure that repeated or was got past; it says "
            "whether there is a lesson worth keeping and words it. Secrets are redacted first. "
            "Nothing leaves this machine with it off.",
            "  claude: Claude Code itself, headless (`claude -p`, a cheap model by default), run with no tools, "
            "no MCP servers, no hooks and no saved session; what it is shown goes to Claude Code's model, on your "
            "Claude account, and counts against your Claude usage.",
            "  endpoint: an OpenAI-compatible server you run (see OPERATIONS.md); what it is shown goes to its URL "
            "(another machine's leaves this one).",
            f"  now: {current.describe()}"]


def cost(choice: Judge) -> list:
    """What a judge may spend a night, and what goes first when the cap is reached."""
    return [f"It may use at most {choice.calls} calls and {choice.tokens:,} tokens a night (about "
            f"{CALL_TOKENS:,} tokens a call; `--judge-calls`, `--judge-tokens` set the cap): the nightly "
            f"sleep and every `ingest --model` of the same day (your clock) share it.",
            "Past the cap, what waits for the next night: first judged are the corrections the rules would "
            "make a lesson of, then messages left in doubt, then the other corrections, then the other messages "
            "the rules did not settle, then the messages they settled as nothing (newest first), then repeated "
            "failures, then failures seen in one session. On a team's 45 sessions over 25 days that was 316 "
            "questions, a median of 9 a day."]


def save_judge(choice: Judge) -> None:
    """Keep the person's choice of judge (the rest of the file as it was)."""
    try:
        current = _read()
    except (ValueError, UnicodeDecodeError):
        current = {}
    current["version"] = VERSION
    current["judge"] = {k: v for k, v in asdict(choice).items() if v not in ("", None)}
    files.write_own(paths.own_settings_path(),
                    (json.dumps(current, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8"))
