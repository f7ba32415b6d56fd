"""`openmemory doctor`: is memory connected to Claude Code and working? One finding per check.

Each finding is ok, a failure with the fix, or a note: what cannot have happened yet on a
fresh setup (no session ended, no night passed) is a note, not a failure.
"""
import json
import os
import select
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import __version__, claude_settings, paths, setup, store
from .clock import parse_time
from .errors import OpenMemoryError

OK, FAIL, NOTE = "ok", "fail", "note"
SERVER_TIMEOUT_S = 15        # a cold start of `python3 -m openmemory serve` takes well under 1 s
HOOK_TIMEOUT_S = 15
HOOK_LAG_S = 3600            # a transcript idle this long, changed this long after the last hook run...
MISSED_FOR_FAILURE = 2       # ...and not ingested: two such sessions (one may just be left open) fail the check
SLEEP_STALE_S = 2 * 24 * 3600  # a nightly job missed two nights
FRESH_S = 2 * 24 * 3600      # a setup younger than this may not have seen a night


@dataclass
class Finding:
    check: str
    status: str     # ok | fail | note
    text: str
    fix: str = ""

    def as_dict(self) -> dict:
        return {"check": self.check, "status": self.status, "text": self.text, "fix": self.fix}


def run(now: float | None = None) -> list[Finding]:
    """Every check, in the order a person would fix things."""
    now = time.time() if now is None else now
    findings = [check_database(), check_fts5()]
    findings += check_installs()
    findings.append(check_server())
    findings.append(check_hook())
    findings += check_recent(now)
    findings.append(check_memory_folders())
    return findings


def healthy(findings: list[Finding]) -> bool:
    return all(f.status != FAIL for f in findings)


# -- the checks --------------------------------------------------------------------------------

def check_database() -> Finding:
    try:
        with store.connect() as db:
            problem = db.quick_check()
            counts = None if problem else db.counts()
    except Exception as e:  # noqa: BLE001 - whatever the file does, doctor reports it
        return Finding("database", FAIL, str(e), "move memory.db aside and run `openmemory ingest` to "
                                                 "rebuild it from the transcripts")
    if problem:
        return Finding("database", FAIL, f"{paths.db_path()} fails SQLite's quick check: {problem}",
                       "move memory.db aside and run `openmemory ingest` to rebuild it from the transcripts")
    return Finding("database", OK, f"{paths.db_path()} opens and passes SQLite's quick check "
                                   f"({counts['episodes']['total']} episodes)")


def check_fts5() -> Finding:
    try:
        with store.connect() as db:
            has = db.has_fts5()
    except Exception as e:  # noqa: BLE001
        return Finding("fts5", FAIL, f"cannot check SQLite's FTS5: {e}")
    if has:
        return Finding("fts5", OK, "this Python's SQLite has FTS5 (full-text recall)")
    return Finding("fts5", FAIL, "this Python's SQLite was built without FTS5: recall runs on vectors only, "
                                 "and slower", "use a Python whose sqlite3 has FTS5 (python.org, Homebrew "
                                               "and most Linux builds do)")


def check_installs() -> list[Finding]:
    """One install, one version: the plugin and setup must not both run a server and hooks."""
    plugins = [p for p in setup.plugin_installs() if p["enabled"]]
    rec = setup.record()
    by_setup = bool(rec.get("mcp") or rec.get("hooks"))
    out = []
    if plugins and by_setup:
        out.append(Finding("installs", FAIL,
                           f"two installs run openmemory on one database: the plugin {plugins[0]['key']} "
                           f"(version {plugins[0]['version']}) and `openmemory setup` (version "
                           f"{rec.get('version')})",
                           f"keep one: `{_here()} setup --undo`, or `claude plugin uninstall "
                           f"{plugins[0]['key']}`"))
    versions = {p["version"] for p in plugins} | ({rec.get("version")} if by_setup else set())
    versions.discard(None)
    if len(versions | {__version__}) > 1:
        out.append(Finding("versions", FAIL, f"more than one openmemory version uses {paths.db_path()}: "
                                             f"{', '.join(sorted(versions | {__version__}))} (this is "
                                             f"{__version__})",
                           "upgrade them together: run `openmemory setup` again from the version you keep, "
                           "or `claude plugin update` the plugin"))
    if not out:
        how = f"the plugin {plugins[0]['key']}" if plugins else "`openmemory setup`" if by_setup else "nothing yet"
        out.append(Finding("installs", OK if (plugins or by_setup) else NOTE,
                           f"one install of openmemory {__version__}: {how}"))
    return out


def check_server() -> Finding:
    command = registered_server_command()
    if command is None:
        return Finding("mcp server", FAIL, "no openmemory MCP server is registered with Claude Code",
                       f"run `{_here()} setup` (or install the plugin)")
    argv, env = command
    try:
        tools = list_tools(argv, env)
    except OpenMemoryError as e:
        return Finding("mcp server", FAIL, f"`{shlex.join(argv)}` does not answer: {e}",
                       f"run `{_here()} setup` again to register a command that runs")
    missing = {"recall", "remember"} - set(tools)
    if missing:
        return Finding("mcp server", FAIL, f"`{shlex.join(argv)}` answers without the tools "
                                           f"{', '.join(sorted(missing))}", "upgrade openmemory")
    return Finding("mcp server", OK, f"registered and answers tools/list ({', '.join(tools)}): {shlex.join(argv)}")


def check_hook() -> Finding:
    plugins = [p for p in setup.plugin_installs() if p["enabled"]]
    try:
        settings, _ = claude_settings.read()
    except OpenMemoryError as e:
        return Finding("hook", FAIL, str(e), "fix the file, then run `openmemory setup`")
    ours = [cmd for event, cmd in claude_settings.openmemory_hooks(settings) if event == "SessionEnd"]
    if not ours:
        if plugins:
            return Finding("hook", OK, f"the plugin {plugins[0]['key']} runs the SessionEnd hook")
        return Finding("hook", FAIL, f"no openmemory SessionEnd hook in {claude_settings.settings_path()}",
                       f"run `{_here()} setup`")
    for command in ours:
        problem = try_hook(command)
        if problem:
            return Finding("hook", FAIL, f"the SessionEnd hook `{command}` does not run: {problem}",
                           f"run `{_here()} setup` to write a hook with absolute paths")
    starts = [cmd for event, cmd in claude_settings.openmemory_hooks(settings) if event == "SessionStart"]
    also = "" if starts else " (no SessionStart hook: a missed night is caught up only by the nightly job; " \
                             "`openmemory setup` adds it)"
    return Finding("hook", OK, f"SessionEnd hook in {claude_settings.settings_path()} runs: {ours[0]}{also}")


def check_recent(now: float) -> list[Finding]:
    try:
        with store.connect() as db:
            last_hook = db.get_state("last_hook")
            last_sleep = db.get_state("last_sleep")
            ingested = db.file_index()
    except Exception:  # noqa: BLE001
        return []  # the database check has said why
    since = _setup_time()
    fresh = since is None or now - since < FRESH_S
    out = []
    at = _timestamp(last_hook)
    missed = missed_sessions(ingested, at if at is not None else since, now)
    if len(missed) >= MISSED_FOR_FAILURE:
        out.append(Finding("last hook run", FAIL, f"{len(missed)} sessions ended since "
                                                  f"{'the last hook run ' + last_hook if last_hook else 'setup'} "
                                                  f"and the hook ingested none of them",
                           "check the hook above; `claude --debug` shows hook errors"))
    elif last_hook is None:
        out.append(Finding("last hook run", NOTE, "no session has ended since setup: the hook has not run yet"))
    else:
        out.append(Finding("last hook run", OK, f"last hook run {last_hook} ({_ago(now - at)} ago)"))
    at = _timestamp(last_sleep)
    if at is None:
        if fresh:
            out.append(Finding("last sleep", NOTE, "no night has passed yet: sleep has not run"))
        else:
            out.append(Finding("last sleep", FAIL, "sleep has never run", "run `openmemory sleep`, and check "
                                                                          "the nightly job (`openmemory setup`)"))
    elif now - at > SLEEP_STALE_S:
        out.append(Finding("last sleep", FAIL, f"last sleep {last_sleep} ({_ago(now - at)} ago)",
                           "check the nightly job (`openmemory setup` shows it); a session start also "
                           "catches up a sleep over a day old"))
    else:
        out.append(Finding("last sleep", OK, f"last sleep {last_sleep} ({_ago(now - at)} ago)"))
    return out


def check_memory_folders() -> Finding:
    projects = paths.projects_dir()
    if not projects.exists():
        return Finding("memory folders", NOTE, f"{projects} does not exist yet (no Claude Code session has run)")
    bad = [str(p) for p in [projects, *projects.glob("*/memory")] if not os.access(p, os.W_OK | os.X_OK)]
    if bad:
        return Finding("memory folders", FAIL, f"not writable: {', '.join(bad[:3])}"
                                               f"{' and more' if len(bad) > 3 else ''}",
                       "give yourself write access (chmod u+w), or set CLAUDE_CONFIG_DIR")
    count = sum(1 for _ in projects.glob("*/memory"))
    return Finding("memory folders", OK, f"Claude Code's memory folders are writable ({count} under {projects})")


# -- probes ------------------------------------------------------------------------------------

def registered_server_command() -> tuple[list[str], dict] | None:
    """(argv, env) of the openmemory MCP server Claude Code would start, or None."""
    server = setup.registered_server()
    if server and server.get("command"):
        return [server["command"], *(server.get("args") or [])], dict(server.get("env") or {})
    for plugin in setup.plugin_installs():
        if not plugin["enabled"] or not plugin["path"]:
            continue
        try:
            manifest = json.loads((Path(plugin["path"]) / ".claude-plugin" / "plugin.json").read_text("utf-8"))
            entry = manifest["mcpServers"]["openmemory"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        root = plugin["path"]
        expand = lambda s: str(s).replace("${CLAUDE_PLUGIN_ROOT}", root)  # noqa: E731
        return ([expand(entry["command"]), *map(expand, entry.get("args") or [])],
                {k: expand(v) for k, v in (entry.get("env") or {}).items()})
    return None


def list_tools(argv: list[str], env: dict, timeout: float = SERVER_TIMEOUT_S) -> list[str]:
    """Start the server as Claude Code would, ask tools/list (after initialize), return the names."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "openmemory-doctor", "version": __version__}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=dict(os.environ, **env), start_new_session=True)
    except OSError as e:
        raise OpenMemoryError(f"cannot start it: {e.strerror or e}") from None
    try:
        proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        proc.stdin.flush()
        deadline = time.monotonic() + timeout
        buf = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
            for line in buf.split(b"\n"):
                try:
                    reply = json.loads(line)
                except ValueError:
                    continue
                if isinstance(reply, dict) and reply.get("id") == 2:
                    if "result" not in reply:
                        raise OpenMemoryError(f"tools/list failed: {reply.get('error')}")
                    return [t.get("name") for t in reply["result"].get("tools", [])]
        err = _stderr_of(proc)
        raise OpenMemoryError(f"no reply to tools/list within {timeout:.0f} s" + (f"; it said: {err}" if err else ""))
    except BrokenPipeError:
        raise OpenMemoryError(f"it exited at once; it said: {_stderr_of(proc) or 'nothing'}") from None
    finally:
        _stop(proc)


def try_hook(command: str) -> str | None:
    """Run a hook command as Claude Code does (sh -c, an event on stdin); None if it ran, else why not."""
    event = json.dumps({"hook_event_name": "openmemory-doctor", "session_id": "doctor"})
    try:
        p = subprocess.run(["/bin/sh", "-c", command], input=event, capture_output=True, text=True,
                           timeout=HOOK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"it did not finish within {HOOK_TIMEOUT_S} s"
    if p.returncode == 0:
        return None
    said = (p.stderr.strip().splitlines() or [""])[-1]
    return f"exit {p.returncode}" + (f": {said}" if said else "")


def missed_sessions(ingested: dict, after: float | None, now: float) -> list[str]:
    """Transcripts idle for an hour (their session is over, or left open) that changed after
    `after` and are not stored as they are now: sessions whose hook did not ingest them."""
    if after is None:
        return []
    out = []
    for path in paths.projects_dir().glob("*/*.jsonl"):
        try:
            st = path.stat()
        except OSError:
            continue
        if after + HOOK_LAG_S < st.st_mtime < now - HOOK_LAG_S and \
                ingested.get(str(path)) != (st.st_mtime_ns, st.st_size):
            out.append(str(path))
    return out


def _setup_time() -> float | None:
    """When this machine was connected: setup's record, else the plugin's install time."""
    created = setup.record().get("created")
    if created:
        return _timestamp(created)
    for plugin in setup.plugin_installs():
        try:
            return Path(plugin["path"]).stat().st_mtime
        except (OSError, TypeError):
            continue
    return None


def _timestamp(text) -> float | None:
    try:
        return parse_time(text).timestamp() if text else None
    except ValueError:
        return None


def _ago(seconds: float) -> str:
    seconds = max(0, seconds)
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"


def _here() -> str:
    """How to run this openmemory, for a fix line a person can paste."""
    return setup.shell_command("").strip()


def _stderr_of(proc) -> str:
    try:
        proc.kill()
        err = proc.stderr.read().decode("utf-8", "replace").strip()
    except (OSError, ValueError):
        return ""
    return (err.splitlines() or [""])[-1][:300]


def _stop(proc) -> None:
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        try:
            stream.close()
        except (OSError, BrokenPipeError):
            pass
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()

