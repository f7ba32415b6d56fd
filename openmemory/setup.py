"""`openmemory setup`: connect Claude Code in one step (MCP server, hooks, nightly sleep), and
Codex CLI and Gemini CLI where they are installed (the MCP server, its tools allowed by name);
undo it; `openmemory doctor`: is it connected and working, one finding per check.

Every command written runs this very openmemory by absolute path (the installed script, or
the interpreter and the package's folder), so it works from a venv that is not on PATH and
from cron's bare environment. What setup added is recorded in OPENMEMORY_HOME/setup.json,
and `setup --undo` removes exactly that. Nothing is done twice; the plugin and setup never
both run a server and hooks. Below setup: Claude Code's settings.json as data, and the
doctor's checks.
"""
import hashlib
import ipaddress
import json
import os
import re
import select
import shlex
import shutil
import signal
import site
import sqlite3
import subprocess
import sys
import sysconfig
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import __version__, agents, errors, files, paths, render, schedule, store, transcripts
from .clock import iso, parse_time
from .errors import OpenMemoryError

MCP_NAME = "openmemory"
PLUGIN_SERVER = "plugin_openmemory_openmemory"  # the server's name under the plugin (measured, 2.1.328)
# The tools allowed by name, never the whole server: a tool a later version adds is asked for.
# `show` opens a hit recall returned (issue 25's recall).
TOOLS = ("recall", "remember", "show")
HOOK_EVENTS = ("SessionStart", "SessionEnd", "PreCompact")  # catch-up sleep; ingest; ingest before /compact
PLUGIN_NAME = "openmemory"


class SetupError(OpenMemoryError):
    """A step of setup or undo failed."""


@dataclass
class Change:
    """One thing setup would do (or found done), said in one line."""
    part: str                      # "mcp", "hook", "schedule", "note"
    action: str                    # "add", "replace", "remove", "keep", "manual", "skip"
    text: str
    run: Callable | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        return {"part": self.part, "action": self.action, "text": self.text}


# -- how to run this openmemory from anywhere ---------------------------------------------------

def package_parent() -> Path:
    return Path(__file__).resolve().parent.parent


def installed() -> bool:
    """Whether this package sits in its interpreter's site-packages (pip, pipx, uv), not a checkout."""
    here = package_parent()
    dirs = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], site.getusersitepackages()}
    dirs.update(site.getsitepackages())
    return any(here == Path(d).resolve() for d in dirs if d)


def invocation() -> tuple[list[str], dict]:
    """(argv prefix, environment) that run this openmemory with absolute paths only."""
    env = {}
    if installed():
        script = Path(sys.executable).parent / "openmemory"  # a venv's or pipx's console script
        argv = [str(script)] if script.is_file() and os.access(script, os.X_OK) and _interpreter_there(script) \
            else [sys.executable, "-m", "openmemory"]
    else:
        argv = [sys.executable, "-m", "openmemory"]
        env["PYTHONPATH"] = str(package_parent())
    if os.environ.get("OPENMEMORY_HOME"):
        env["OPENMEMORY_HOME"] = str(paths.home())
    return argv, env


# pip's second line when the interpreter's path is long or has a space (the first is `#!/bin/sh`).
_SH_EXEC = re.compile(rb"""^'''exec' (?:"([^"]+)"|(\S+)) "\$0" "\$@"$""")


def _interpreter_there(script: Path) -> bool:
    """Whether the Python a console script starts is still there. A venv moved or copied to another
    folder keeps its scripts, whose first line names the Python of its old place: they fail with
    `required file not found`, while its own python (`bin/python -m openmemory`) still runs."""
    try:
        with open(script, "rb") as f:
            lines = f.read(4096).split(b"\n")
    except OSError:
        return False
    if not lines[0].startswith(b"#!"):
        return True                 # a launcher of its own (a binary): nothing to look into
    words = lines[0][2:].split()
    if not words:
        return False
    interpreter = words[0]
    if interpreter == b"/bin/sh" and len(lines) > 1:
        named = _SH_EXEC.match(lines[1].rstrip(b"\r"))
        if named:
            interpreter = named.group(1) or named.group(2)
    return os.access(os.fsdecode(interpreter), os.X_OK)


def shell_command(verb: str, with_config_dir: bool = False) -> str:
    """`VAR=value ... /abs/openmemory VERB` for sh (hooks, cron, systemd, launchd)."""
    argv, env = invocation()
    if with_config_dir and os.environ.get("CLAUDE_CONFIG_DIR"):
        env["CLAUDE_CONFIG_DIR"] = str(paths.claude_dir())
    # The other agents' folders, where set: the nightly ingest is the only one that reads their
    # sessions, and its render writes their instruction files (cron and systemd start with no shell's env).
    if with_config_dir and os.environ.get("CODEX_HOME"):
        env["CODEX_HOME"] = str(paths.codex_home())
    if with_config_dir and os.environ.get("GEMINI_CLI_HOME"):
        env["GEMINI_CLI_HOME"] = str(paths.gemini_dir().parent)
    prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in env.items())
    return f"{prefix}{shlex.join(argv)} {verb}".strip()


def mcp_server() -> dict:
    """The server entry `claude mcp add` writes into .claude.json."""
    argv, env = invocation()
    return {"type": "stdio", "command": argv[0], "args": argv[1:] + ["serve"], "env": env}


def mcp_add_argv(server: dict) -> list[str]:
    # The name goes before -e, which takes several values and would swallow it (measured, 2.1.328).
    argv = ["claude", "mcp", "add", "--scope", "user", MCP_NAME]
    for key, value in server.get("env", {}).items():
        argv += ["-e", f"{key}={value}"]
    return argv + ["--", server["command"], *server["args"]]


# -- what Claude Code has now -------------------------------------------------------------------

def registered_server() -> dict | None:
    """The user-scope MCP server named openmemory, as .claude.json holds it, or None."""
    try:
        data = json.loads(paths.claude_json_path().read_text(encoding="utf-8"))
        server = data["mcpServers"][MCP_NAME]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return server if isinstance(server, dict) else None


def same_server(a: dict | None, b: dict | None) -> bool:
    if not a or not b:
        return False
    return (a.get("command"), list(a.get("args") or []), dict(a.get("env") or {})) == \
        (b.get("command"), list(b.get("args") or []), dict(b.get("env") or {}))


def plugin_installs() -> list[dict]:
    """The openmemory plugin as Claude Code installed it: [{key, version, path, enabled}]."""
    root = paths.claude_dir() / "plugins" / "installed_plugins.json"
    try:
        plugins = json.loads(root.read_text(encoding="utf-8")).get("plugins", {})
    except (OSError, ValueError, AttributeError):
        return []
    settings = _settings_or_empty()
    enabled = settings.get("enabledPlugins") if isinstance(settings.get("enabledPlugins"), dict) else {}
    out = []
    for key, entries in plugins.items() if isinstance(plugins, dict) else []:
        if key.split("@")[0] != PLUGIN_NAME:
            continue
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict):
                out.append({"key": key, "version": entry.get("version"), "path": entry.get("installPath"),
                            "enabled": enabled.get(key, True) is not False})
    return out


def record_path() -> Path:
    return paths.setup_record_path()


def record() -> dict:
    """What setup added, as recorded; {} when setup never ran (or was undone)."""
    try:
        value = json.loads(record_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


# -- setup -----------------------------------------------------------------------------------------

def plan(schedule_mode: str = "auto") -> list[Change]:
    """What setup would change, each step with the function that does it; allowing the
    tools comes first (without it a `claude -p` session is refused its first recall)."""
    plugins = [p for p in plugin_installs() if p["enabled"]]
    if without_claude_code():
        others = agents.found()
        # Codex or Gemini alone: Claude Code's settings.json, its hooks and its folder are none of
        # theirs (setup wrote them, and said "register the MCP server yourself with claude mcp add")
        names = " and ".join(a.capitalize() for a in others)
        return [Change("note", "skip", f"Claude Code is not installed here (no `claude` on PATH, no "
                                       f"{paths.claude_json_path()}): setup leaves its settings alone and "
                                       f"sets up {names}; run `openmemory setup` again once you install it"),
                _schedule_change(schedule_mode), *agent_changes()]
    server = PLUGIN_SERVER if plugins else MCP_NAME
    allow, hooks = _settings_changes(server, with_hooks=not plugins)
    if plugins:
        middle = [Change("note", "skip", f"the openmemory plugin ({plugins[0]['key']}, version "
                                         f"{plugins[0]['version']}) already runs the MCP server and "
                                         f"the hooks: setup adds neither")]
    else:
        middle = [_mcp_change()]
    return [allow, *middle, *hooks, _schedule_change(schedule_mode), *agent_changes()]


def tool_rules(server: str = MCP_NAME) -> list[str]:
    """The permission rules that let the model call openmemory's tools, one per tool."""
    return [f"mcp__{server}__{tool}" for tool in TOOLS]


def apply(changes: list[Change]) -> list[str]:
    """Do every change that has something to do; returns notes (backups made) for the person."""
    notes = []
    rec = record()
    for change in changes:
        if change.run is not None:
            note = change.run(rec)
            _save_record(rec)  # after each step: a later failure keeps what was already done undoable
            if note:
                notes.append(note)
    return notes


def _mcp_change() -> Change:
    want = mcp_server()
    have = registered_server()
    command = shlex.join(mcp_add_argv(want))
    if same_server(have, want):
        return Change("mcp", "keep", f"MCP server `{MCP_NAME}` is registered: {_server_line(want)}")
    claude = shutil.which("claude")
    if claude is None:
        return Change("mcp", "manual", f"`claude` is not on PATH: register the MCP server yourself with\n"
                                       f"    {command}")
    action = "replace" if have else "add"

    def run(rec):
        if have:
            _claude([claude, "mcp", "remove", MCP_NAME, "--scope", "user"])
        _claude([claude, *mcp_add_argv(want)[1:]])
        earlier = rec.get("mcp") or {}
        ours = same_server(have, earlier.get("server"))
        rec["mcp"] = {"server": want, "replaced": earlier.get("replaced") if ours else have}
        return None

    what = f"replace the MCP server `{MCP_NAME}` ({_server_line(have)})" if have else \
        f"register the MCP server `{MCP_NAME}` at user scope"
    return Change("mcp", action, f"{what}: {command}", run)


def _settings_changes(server: str, with_hooks: bool) -> tuple[Change, list[Change]]:
    """(allowing the tools, [the hooks, notes]): two lines for the person, one write of
    settings.json and one backup. Hooks an earlier setup added with another command (an
    install that moved, an upgrade) are replaced."""
    settings, _ = read_settings()
    rules = tool_rules(server)
    path = paths.settings_path()
    command = shell_command("hook")
    absent = [r for r in rules if r not in allow_rules(settings)]
    missing = [e for e in HOOK_EVENTS if command not in hook_commands(settings, e)] if with_hooks else []
    stale = [(e, c) for e, c in record().get("hooks", [])
             if c != command and c in hook_commands(settings, e)] if with_hooks else []

    def write(rec):
        current, raw = read_settings()
        before = current
        current, added_rules = with_allow(current, absent)
        for event, old in stale:
            current, _ = without_hook(current, event, old)
        added = []
        for event in missing:
            current, changed = with_hook(current, event, command)
            if changed:
                added.append(event)
        if current == before:
            return None
        data = dump_settings(current, raw)
        made = _missing_folders(path)
        backup = files.replace_config_if_unchanged(path, raw, data)
        _note_made(rec, made)
        _note_settings_written(rec, raw, data, backup)
        if added_rules:
            made = "permissions" if not isinstance(before.get("permissions"), dict) else \
                "allow" if not isinstance(before["permissions"].get("allow"), list) else None
            rec.setdefault("allow_made", made)
            rec["allow"] = rec.get("allow", []) + [r for r in added_rules if r not in rec.get("allow", [])]
        rec["hooks"] = [h for h in rec.get("hooks", []) if tuple(h) not in stale]
        rec["hooks"] += [[e, command] for e in added if [e, command] not in rec["hooks"]]
        return f"backup of {path} as it was: {backup}" if backup else None

    if absent:
        allow = Change("permission", "add", f"allow openmemory's tools by name in {path} (the model calls "
                                            f"them without asking): {', '.join(absent)}", write)
    else:
        allow = Change("permission", "keep", f"openmemory's tools are allowed in {path}: {', '.join(rules)}")
    changes = []
    if with_hooks and not missing and not stale:
        changes.append(Change("hook", "keep", f"hooks {', '.join(HOOK_EVENTS)} are in {path}: {command}"))
    elif with_hooks:
        what = f"add the hooks {', '.join(missing)}" if missing else "replace the hooks"
        if stale:
            what += f" (in place of setup's earlier `{stale[0][1]}`)"
        changes.append(Change("hook", "replace" if stale else "add", f"{what} to {path}: {command}",
                              _written_above if absent else write))
    earlier = {c for _, c in stale}
    for event, other in openmemory_hooks(settings) if with_hooks else []:
        if other != command and other not in earlier:
            changes.append(Change("note", "keep", f"also in {path}: a {event} hook `{other}` that setup did "
                                                  f"not add; remove it, or that event runs openmemory twice"))
    for kind, rule in held_back(settings, server):     # wins over the allow rules setup adds (doctor says so too)
        effect = "Claude Code refuses the tool" if kind == "deny" else "Claude Code asks before each call"
        changes.append(Change("note", "manual", f"{path} has `{rule}` under permissions.{kind}, which wins "
                                                f"over the allow rules ({effect}); remove that rule yourself "
                                                f"if the model should call openmemory's tools freely"))
    return allow, changes


def rules_naming(tool: str, server: str, found) -> list:
    """The rules among found that name one of the server's tools: by its name, or the whole server."""
    return [r for r in (f"mcp__{server}__{tool}", f"mcp__{server}", f"mcp__{server}__*") if r in found]


def held_back(settings: dict, server: str) -> list:
    """[(deny or ask, the first such rule naming openmemory's tools)]: each wins over an allow rule."""
    out = []
    for kind in ("deny", "ask"):
        held = [r for tool in TOOLS for r in rules_naming(tool, server, permission_rules(settings, kind))]
        if held:
            out.append((kind, held[0]))
    return out


def _written_above(rec) -> None:
    """A change made by the one write of settings.json listed before it."""
    return None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _missing_folders(path: Path) -> list[str]:
    """The folders above path that do not exist yet (writing it makes them), deepest first."""
    out, folder = [], path.parent
    while not folder.exists() and folder != folder.parent:
        out.append(str(folder))
        folder = folder.parent
    return out


def _note_made(rec: dict, folders: list[str]) -> None:
    """Record the folders setup made (a `~/.codex` for a `codex` that has not run yet, a `~/.claude`
    on a machine without Claude Code): undo takes each away again when it is left empty."""
    rec["made_folders"] = rec.get("made_folders", []) + [f for f in folders if f not in rec.get("made_folders", [])]


def _remove_made_folders(folders: list[str]) -> None:
    """rmdir each folder setup made, deepest first, only while it is empty: what else is there stays."""
    for folder in sorted(folders, key=lambda f: f.count(os.sep), reverse=True):
        try:
            Path(folder).rmdir()
        except OSError:
            pass


def _note_settings_written(rec: dict, raw: bytes | None, data: bytes, backup: Path | None) -> None:
    """Keep what `--undo` needs to give the file back byte for byte: the backup of the file as
    it was before setup first changed it, valid while nothing but setup has changed it since."""
    mine = rec.get("settings")
    if raw is None:
        rec["settings_created"] = str(paths.settings_path())
        rec["settings"] = {"original": None, "backup": None}
    elif mine is None:
        rec["settings"] = {"original": _sha(raw), "backup": str(backup) if backup else None}
    elif mine.get("written") != _sha(raw):
        mine["backup"] = None  # someone else changed it since setup wrote it: merge out only
        mine["original"] = None
    rec["settings"]["written"] = _sha(data)


def catch_up() -> str:
    """What reads and sleeps on the sessions without a nightly job: a session start. Claude Code's
    SessionStart hook starts the catch-up; Codex and Gemini run no hook of openmemory's, but start
    its MCP server at each session's start, which starts the same catch-up (mcp.catch_up_once)."""
    said = "a session start catches up a night over a day old once there is something new"
    others = [a.capitalize() for a in agents.found()]
    if claude_code_here() or not others:
        return said
    return f"{said} ({' and '.join(others)} start{'s' if len(others) == 1 else ''} openmemory's server, which does it)"


def _schedule_change(mode: str) -> Change:
    kind = schedule.choose(mode)
    command = schedule.nightly_command(*_nightly_parts())
    earlier = record().get("schedule") or {}
    if kind == "none" and earlier.get("kind") in ("cron", "systemd", "launchd") and _job_in_place(earlier):
        return Change("schedule", "keep", f"nightly sleep: the {earlier['kind']} job an earlier setup added stays "
                                          f"(--schedule none adds none; `setup --undo` removes it)")
    if kind == "none":
        def run(rec):
            rec["schedule"] = {"kind": "none"}  # chosen: doctor notes it rather than failing
        return Change("schedule", "skip", f"nightly sleep: not scheduled (--schedule none); {catch_up()}",
                      None if (record().get("schedule") or {}).get("kind") == "none" else run)
    if kind == "print" and mode == "auto":
        return Change("schedule", "manual", "nightly sleep: NOT scheduled: this machine has neither systemd's "
                                            f"user manager nor `crontab`, so nothing runs sleep each night. "
                                            f"{catch_up()[:1].upper()}{catch_up()[1:]}; or run `openmemory "
                                            f"sleep` yourself, or install cron and run `openmemory setup` again. "
                                            f"The line cron would run:\n"
                                            f"    {schedule.cron_line(command)}")
    if kind == "print":
        return Change("schedule", "manual", "nightly sleep: add this line to your crontab (`crontab -e`):\n"
                                            f"    {schedule.cron_line(command)}")
    if kind == "cron":
        line = schedule.cron_line(command)
        if line in schedule.crontab_lines():
            return Change("schedule", "keep", f"nightly sleep is in your crontab: {line}")

        earlier = record().get("schedule") or {}
        stale = earlier.get("line") if earlier.get("kind") == "cron" and earlier.get("line") != line else None

        def run(rec):
            if stale:
                schedule.cron_remove(stale)  # an earlier setup's line, for an install that moved
            schedule.cron_install(line)
            rec["schedule"] = {"kind": "cron", "line": line}
        return Change("schedule", "replace" if stale else "add", f"add to your crontab: {line}", run)
    if kind == "systemd":
        units = schedule.systemd_units(command)
        folder = schedule.systemd_dir()
        if all(schedule.read_text(folder / name) == text for name, text in units.items()):
            return Change("schedule", "keep", f"nightly sleep is a systemd user timer: {folder}/{schedule.UNIT}.timer")

        def run(rec):
            # the folders the units and systemctl's link to the timer make (`~/.config/systemd/user`
            # and `timers.target.wants` in it, where none was): undo takes them away when left empty
            made = _missing_folders(folder / "timers.target.wants" / f"{schedule.UNIT}.timer")
            try:
                unit_files = schedule.systemd_install(units)
            except BaseException:
                _remove_made_folders(made)
                raise
            rec["schedule"] = {"kind": "systemd", "files": unit_files, "units": units}
            _note_made(rec, made)
        return Change("schedule", "add", f"add a systemd user timer {folder}/{schedule.UNIT}.timer "
                                         f"(03:30 daily, run at boot if missed): {command}", run)
    if kind == "launchd":
        plist = schedule.launchd_plist(command)
        path = schedule.launchd_path()
        if schedule.read_bytes(path) == plist:
            return Change("schedule", "keep", f"nightly sleep is a launchd agent: {path}")

        def run(rec):
            schedule.launchd_install(plist)
            rec["schedule"] = {"kind": "launchd", "file": str(path), "plist": plist.decode("utf-8")}
        return Change("schedule", "add", f"add a launchd agent {path} (03:30 daily, run on wake if missed): "
                                         f"{command}", run)
    raise SetupError(f"unknown schedule {mode!r}; use one of {', '.join(schedule.MODES)}")


def _nightly_parts() -> tuple[str, str]:
    """(the openmemory command, the env prefix) for the nightly line."""
    full = shell_command("", with_config_dir=True)
    argv, env = invocation()
    run = shlex.join(argv)
    return run, full[: len(full) - len(run)]


# -- the other agents: Codex CLI and Gemini CLI ----------------------------------------------------
#
# Each gets the same server as Claude Code, by absolute paths, and its tools allowed by name.
# setup.json keeps each file's bytes before and after, so `--undo` puts back exactly what was
# there when nothing changed it since, and else takes out only what setup added.

def agent_changes() -> list[Change]:
    """Codex's and Gemini's part of setup, for each one installed here."""
    have = agents.found()
    changes = []
    if agents.CODEX in have:
        changes.append(_codex_change())
        changes.append(Change("note", "keep", f"Codex: lessons for every project go into {paths.codex_agents_md()} "
                                              f"(render keeps a section of it); a project's own lessons only into its "
                                              f"repository's AGENTS.md, which is committed and shared, so only where "
                                              f"you put the two lines `<!-- openmemory:begin -->` and "
                                              f"`<!-- openmemory:end -->` into it and git would not commit it (ignored "
                                              f"and not tracked: add `AGENTS.md` to .git/info/exclude); into one git "
                                              f"tracks or does not ignore, none (a commit would take them along; "
                                              f"doctor says so)"))
    if agents.GEMINI in have:
        changes += _gemini_changes()
        changes.append(Change("note", "keep", f"Gemini: lessons for every project go into {paths.gemini_md()}, a "
                                              f"project's into its private {paths.gemini_chats_root()}/<project>/memory/"
                                              f"MEMORY.md (never into the repository)"))
    return changes


def _codex_change() -> Change:
    path, want = paths.codex_config_path(), mcp_server()
    text = agents.read_text(path)
    if path.exists() and text is None:
        return Change("codex", "manual", f"{path} cannot be read as text; add openmemory's server yourself:\n"
                                         f"{agents.codex_block(want)}")
    broken = agents.codex_unreadable(text)
    if broken:
        return Change("codex", "manual", f"{path} is not valid TOML ({broken}): Codex cannot read it either; fix "
                                         f"it, then run `openmemory setup` again (Codex CLI is left unconnected)")
    have = agents.codex_server(text)
    if have is not None:
        if same_server(have, want) and all(have["approvals"].get(t) == "approve" for t in agents.TOOLS):
            return Change("codex", "keep", f"Codex's MCP server `{MCP_NAME}` is in {path}: {_server_line(want)}")
        # the person's own server, or setup's with its approvals changed since: theirs to keep
        if same_server(have, want) or _without_earlier_codex(text, record().get("codex") or {}) is None:
            return Change("codex", "keep", f"{path} already has an MCP server `{MCP_NAME}` ({_server_line(have)}) "
                                           f"that setup did not add; left as it is")
    why = agents.codex_cannot_take(text)
    if why:
        return Change("codex", "manual", f"{path}: {why}; add openmemory's server there yourself:\n"
                                         f"{agents.codex_block(want)}")

    def run(rec):
        current = agents.read_text(path)
        earlier = rec.get("codex") or {}
        base = current
        if current and agents.codex_server(current) is not None:
            base = _without_earlier_codex(current, earlier)     # an earlier setup's server, for an install that moved
            if base is None:
                raise files.ConfigError(f"{path} changed while openmemory was updating it; run this again")
        added = agents.codex_appended(base, want)
        new = (base or "") + added
        made = _missing_folders(path)
        backup = files.replace_config_if_unchanged(path, current.encode("utf-8") if current is not None else None,
                                                   new.encode("utf-8"))
        _note_made(rec, made)
        rec["codex"] = {"config": str(path), "before": earlier.get("before", current) if earlier else current,
                        "after": new, "added": added}
        return f"backup of {path} as it was: {backup}" if backup else None
    return Change("codex", "add", f"register the MCP server `{MCP_NAME}` with Codex in {path}, "
                                  f"{_tools_named()} allowed without a prompt: {_server_line(want)}", run)


def _without_earlier_codex(text: str, earlier: dict) -> str | None:
    """config.toml's text without the server an earlier setup added (None when it holds no such
    server): its block where it is as written, else its tables wherever Codex moved them when it
    wrote the file again (`codex mcp add` moves them up and drops setup's comment line)."""
    added = earlier.get("added")
    if not added:
        return None
    if added in text:
        return text.replace(added, "", 1)
    if same_server(agents.codex_server(text), agents.codex_server(added)):
        return agents.codex_without_server(text)
    return None


def _gemini_changes() -> list[Change]:
    path, policy, want = paths.gemini_settings_path(), paths.gemini_policy_path(), agents.gemini_entry(mcp_server())
    out = []
    try:
        settings, _, commented = read_gemini_settings(path)
    except OpenMemoryError as e:
        return [Change("gemini", "manual", f"{e}; Gemini CLI is left unconnected")]
    have = agents.gemini_server(settings)
    if have is not None and same_server(have, want):
        out.append(Change("gemini", "keep", f"Gemini's MCP server `{MCP_NAME}` is in {path}: {_server_line(want)}"))
    elif have is not None and not same_server(have, (record().get("gemini") or {}).get("server")):
        out.append(Change("gemini", "keep", f"{path} already has an MCP server `{MCP_NAME}` ({_server_line(have)}) "
                                            f"that setup did not add; left as it is"))
    elif commented:
        # Gemini allows comments there; writing the file back as JSON would drop the person's.
        out.append(Change("gemini", "manual", f"{path} has comments (Gemini CLI allows them), which setup would "
                                              f"lose by writing the file again: add openmemory's server under "
                                              f"\"mcpServers\" there yourself:\n"
                                              f"    \"{MCP_NAME}\": {json.dumps(want, ensure_ascii=False)}"))
    else:
        def run(rec):
            current, raw = read_settings(path)
            new = dump_settings(agents.with_gemini_server(current, want), raw)
            made = _missing_folders(path)
            backup = files.replace_config_if_unchanged(path, raw, new)
            _note_made(rec, made)
            earlier = rec.get("gemini") or {}
            rec["gemini"] = dict(earlier, settings=str(path), server=want,
                                 before=earlier.get("before", _text(raw)) if "before" in earlier else _text(raw),
                                 after=new.decode("utf-8"))
            return f"backup of {path} as it was: {backup}" if backup else None
        out.append(Change("gemini", "replace" if have else "add",
                          f"register the MCP server `{MCP_NAME}` with Gemini in {path}: {_server_line(want)}", run))
    blocked = agents.gemini_blocked(settings)
    if blocked:     # the person's own list of the servers Gemini may start: theirs to change
        out.append(Change("gemini", "manual", f"{path}: {blocked}, so Gemini's model cannot call `recall`: "
                                              f"change that there yourself"))
    text = agents.gemini_policy()
    current = agents.read_text(policy)
    earlier = ((record().get("gemini") or {}).get("policy") or {})
    if current == text:
        out.append(Change("gemini", "keep", f"Gemini's policy {policy} allows {_tools_named()}"))
    elif current is not None and current == earlier.get("text"):
        def renew(rec):     # an earlier setup's words for the same rules: its file, brought up to date
            files.replace_config_if_unchanged(policy, current.encode("utf-8"), text.encode("utf-8"))
            rec.setdefault("gemini", {})["policy"] = dict(earlier, text=text)
        out.append(Change("gemini", "replace", f"allow {_tools_named()} by their full names in Gemini's policy "
                                               f"{policy} (an earlier setup's file)", renew))
    elif current is not None:
        out.append(Change("gemini", "keep", f"{policy} is there and is not setup's; left as it is (it must allow "
                                            f"`recall` for Gemini's model to call it without a prompt)"))
    else:
        def allow(rec):
            made = not policy.parent.exists()       # the policies folder too: undo takes it away if still empty
            files.replace_config_if_unchanged(policy, None, text.encode("utf-8"))
            rec.setdefault("gemini", {})["policy"] = {"path": str(policy), "text": text, "made_folder": made}
        out.append(Change("gemini", "add", f"allow {_tools_named()} by name in Gemini's policy {policy}", allow))
    return out


def _tools_named() -> str:
    """openmemory's tools as a step names them: `recall`, `remember` and `show`."""
    named = [f"`{t}`" for t in agents.TOOLS]
    return ", ".join(named[:-1]) + " and " + named[-1]


def _text(raw: bytes | None) -> str | None:
    return raw.decode("utf-8", "surrogateescape") if raw is not None else None


def _undo_agents(rec: dict) -> list[Change]:
    changes = []
    codex = rec.get("codex")
    if codex:
        changes.append(_undo_file("codex", Path(codex["config"]), codex, "Codex's MCP server",
                                  lambda text: _without_earlier_codex(text, codex)))
    gemini = rec.get("gemini") or {}
    if gemini.get("settings"):
        def take_out(text):
            try:
                settings = json.loads(text)
            except ValueError:
                return None
            if not same_server(agents.gemini_server(settings), gemini["server"]):
                return None
            return dump_settings(agents.without_gemini_server(settings), text.encode("utf-8")).decode("utf-8")
        changes.append(_undo_file("gemini", Path(gemini["settings"]), gemini, "Gemini's MCP server", take_out))
    policy = gemini.get("policy")
    if policy:
        path = Path(policy["path"])
        if agents.read_text(path) != policy["text"]:
            changes.append(Change("gemini", "keep", f"{path} changed since setup wrote it; left as it is"))
        else:
            def remove(r):
                files.remove_config_if_unchanged(path, policy["text"].encode("utf-8"))
                if policy.get("made_folder"):
                    try:
                        path.parent.rmdir()         # only when empty: what else is there stays
                    except OSError:
                        pass
                r.get("gemini", {}).pop("policy", None)
            changes.append(Change("gemini", "remove", f"remove Gemini's policy {path}", remove))
    return changes


def _undo_file(part: str, path: Path, entry: dict, what: str, take_out) -> Change:
    """Undo setup's change to another agent's file: its bytes as they were when nothing changed
    them since, else only what setup added (take_out: the text without it, or None)."""
    current = agents.read_text(path)
    if current == entry["after"]:
        new = entry.get("before")
    elif current is not None and take_out(current) is not None:
        new = take_out(current)
    else:
        return Change(part, "keep", f"{what} in {path} is not as setup left it; left as it is")

    def run(rec):
        raw = current.encode("utf-8")
        if new is None:
            files.remove_config_if_unchanged(path, raw)
            note = None
        else:
            backup = files.replace_config_if_unchanged(path, raw, new.encode("utf-8"))
            note = f"backup of {path} as it was: {backup}"
        kept = {k: v for k, v in (rec.get(part) or {}).items() if k == "policy"}
        if kept:
            rec[part] = kept
        else:
            rec.pop(part, None)
        return note
    how = "put back as it was before setup" if current == entry["after"] else "take out what setup added to"
    return Change(part, "remove", f"{how} {path} ({what})", run)


# -- undo ------------------------------------------------------------------------------------------

def undo_plan(purge: bool = False) -> list[Change]:
    """What `setup --undo` would remove: only what setup recorded, and only if it is still there;
    with purge, also every lesson render put in Claude Code's memory folders."""
    rec = record()
    changes = []
    if not rec:
        note = Change("note", "keep", f"nothing to undo: setup has not added anything ({record_path()})")
        return [note, _purge_change(), *_home_kept()] if purge else [note]
    server = rec.get("mcp", {}).get("server")
    if server:
        changes.append(_undo_mcp(server, rec["mcp"].get("replaced")))
    changes += _undo_settings(rec)
    sched = rec.get("schedule")
    if sched:
        changes.append(_undo_schedule(sched))
    changes += _undo_agents(rec)
    if purge:
        changes.append(_purge_change())
        changes += _home_kept()
    else:
        changes += _lessons_kept()
    return changes


def _lessons_kept() -> list[Change]:
    """Without --purge the lessons render wrote stay in Claude Code's memory, which loads them at
    every session start after the undo too: say so, and how to take them out."""
    found = render.rendered()
    lessons, sections = len(found["files"]) + len(found["left"]), len(found["sections"])
    if not lessons and not sections:
        return []
    return [Change("memory", "keep", f"keep the lessons openmemory wrote into Claude Code's memory folders "
                                     f"({lessons} lesson file{'' if lessons == 1 else 's'} and openmemory's section "
                                     f"of {sections} MEMORY.md): Claude Code still loads them at every session "
                                     f"start; `openmemory setup --undo --purge` removes them too")]


def _home_kept() -> list[Change]:
    """--purge takes out what openmemory put in the agents' files, not its own folder: the memory
    database (what was said in every session read), lessons.jsonl, the backups of settings.json.
    Said, with the command that removes it, so that leaving does not keep them unawares."""
    folder = paths.home()
    if not folder.is_dir():
        return []
    return [Change("note", "keep", f"keep openmemory's own folder {folder}: the memory database (what you and "
                                   f"the agents said in every session read), lessons.jsonl and the backups of "
                                   f"your settings; `rm -r {folder}` removes it, once nothing runs openmemory")]


def _purge_change() -> Change:
    """Every lesson file render wrote, as it wrote it, and openmemory's section of each MEMORY.md
    and of each other agent's instruction file (Codex's AGENTS.md, Gemini's GEMINI.md and MEMORY.md)."""
    found = render.rendered()
    lessons, sections, others = len(found["files"]), len(found["sections"]), found["agent_sections"]
    if not lessons and not sections and not others:
        return Change("memory", "keep", "no lesson of openmemory's in Claude Code's memory folders nor in Codex's "
                                        "or Gemini's instruction files: nothing to purge")
    kept = f"; {len(found['left'])} you edited stay" if found["left"] else ""
    also = f"; and openmemory's section of {', '.join(others)}" if others else ""
    return Change("memory", "remove", f"remove from Claude Code's memory folders {lessons} lesson file"
                                      f"{'' if lessons == 1 else 's'} (om-<id>.md) and openmemory's section of "
                                      f"{sections} MEMORY.md, markers included{kept}{also}", _purge)


def _purge(rec) -> str:
    done = render.purge()
    lines = [f"removed {name}" for name in done["removed"]]
    lines += [f"took openmemory's section out of {name}" for name in done["sections"]]
    lines += [f"removed {name}, left empty" for name in done.get("folders", [])]
    lines += [f"took the lessons out of {name}; the markers you put there stay (remove them to stop "
              f"lessons going there)" for name in done.get("emptied", [])]
    lines += [f"left {name}: you edited it, so it is yours (delete it yourself)" for name in done["left"]]
    return "\n".join(lines + done["warnings"]) or "nothing was left to remove"


def undo(changes: list[Change]) -> list[str]:
    """Remove what the plan says, then the record itself: what is left was reported as left."""
    made = record().get("made_folders", [])
    notes = apply(changes)
    files.remove_own(record_path())
    if str(paths.claude_dir()) in made:
        # Claude Code's folder setup made (none was there): render's projects/ in it, left empty by purge
        made = made + [str(paths.projects_dir())]
    _remove_made_folders(made)
    return notes


def _undo_mcp(server: dict, replaced: dict | None) -> Change:
    have = registered_server()
    if not same_server(have, server):
        return Change("mcp", "keep", f"MCP server `{MCP_NAME}` is not the one setup added; left as it is")
    claude = shutil.which("claude")
    if claude is None:
        return Change("mcp", "manual", f"`claude` is not on PATH: remove the MCP server yourself with\n"
                                       f"    claude mcp remove {MCP_NAME} --scope user")

    def run(rec):
        _claude([claude, "mcp", "remove", MCP_NAME, "--scope", "user"])
        if replaced:
            _claude([claude, "mcp", "add-json", MCP_NAME, json.dumps(replaced), "--scope", "user"])
        rec.pop("mcp", None)
    again = f", and put back the one it replaced ({_server_line(replaced)})" if replaced else ""
    return Change("mcp", "remove", f"remove the MCP server `{MCP_NAME}`{again}", run)


def _undo_settings(rec: dict) -> list[Change]:
    """Taking the rules and hooks setup added out of settings.json, in one write: the file as it
    was before setup, byte for byte, when nothing but setup has changed it since."""
    settings, _ = read_settings()
    path = paths.settings_path()
    rules = [r for r in rec.get("allow", []) if r in allow_rules(settings)]
    hooks = [(e, c) for e, c in rec.get("hooks", []) if c in hook_commands(settings, e)]
    run = lambda r: _restore_settings(r, rules, hooks)  # noqa: E731
    changes = []
    if rules:
        changes.append(Change("permission", "remove", f"remove the rules allowing openmemory's tools from "
                                                      f"{path}: {', '.join(rules)}", run))
    if hooks:
        changes.append(Change("hook", "remove", f"remove the hooks {', '.join(e for e, _ in hooks)} from "
                                                f"{path}: {hooks[0][1]}", _written_above if rules else run))
    return changes


def _restore_settings(rec: dict, rules: list, hooks: list) -> str | None:
    current, raw = read_settings()
    path = paths.settings_path()
    mine = rec.get("settings") or {}
    unchanged = raw is not None and mine.get("written") == _sha(raw)
    before = None
    if unchanged and mine.get("backup") and mine.get("original"):
        kept = files.read(Path(mine["backup"]))
        before = kept if kept is not None and _sha(kept) == mine["original"] and \
            not _holds_ours(kept, rec) else None
    note = None
    after = without_allow(current, rules, rec.get("allow_made"))
    for event, command in hooks:
        after, _ = without_hook(after, event, command)
    if unchanged and rec.get("settings_created") and not after:  # setup made the file: it goes as it came
        files.remove_config_if_unchanged(path, raw)
    elif before is not None:
        backup = files.replace_config_if_unchanged(path, raw, before)
        note = f"{path} is back as it was before setup, byte for byte; as it was just now: {backup}"
    else:   # what the person put in the file since stays, also in one setup made
        if after != current:
            if not after and rec.get("settings_created"):
                files.remove_config_if_unchanged(path, raw)
            else:
                backup = files.replace_config_if_unchanged(path, raw, dump_settings(after, raw))
                note = f"backup of {path} as it was: {backup}"
    for key in ("allow", "allow_made", "hooks", "settings", "settings_created"):
        rec.pop(key, None)
    return note


def _holds_ours(kept: bytes, rec: dict) -> bool:
    """Whether a backup of settings.json already holds a rule or hook setup added: one taken after an
    older setup had written the file and kept no record of it (no "settings" in setup.json), so
    not the file as it was before setup, which undo must not give back."""
    try:
        value = json.loads(kept.decode("utf-8-sig")) if kept.strip() else {}
    except (UnicodeDecodeError, ValueError):
        return False
    if not isinstance(value, dict):
        return False
    return any(r in allow_rules(value) for r in rec.get("allow", [])) or \
        any(c in hook_commands(value, e) for e, c in rec.get("hooks", []))


def _undo_schedule(sched: dict) -> Change:
    kind = sched.get("kind")
    if kind == "none":
        return Change("schedule", "keep", "no nightly job to remove (--schedule none)")
    if kind == "cron":
        if sched["line"] not in schedule.crontab_lines():
            return Change("schedule", "keep", "the crontab line setup added is gone already")
        text = f"remove from your crontab: {sched['line']}"
    elif kind == "systemd":
        text = f"disable and remove the systemd user timer {schedule.UNIT}"
    elif kind == "launchd":
        text = f"unload and remove the launchd agent {sched['file']}"
    else:
        return Change("note", "keep", f"unknown schedule {kind!r} in {record_path()}; left alone")
    return Change("schedule", "remove", text, lambda rec: _remove_schedule(rec, sched))


def _remove_schedule(rec: dict, sched: dict) -> None:
    kind = sched["kind"]
    if kind == "cron":
        schedule.cron_remove(sched["line"])
    elif kind == "systemd":
        schedule.systemd_remove(sched["files"], sched["units"])
    else:
        schedule.launchd_remove(sched["plist"].encode("utf-8"))
    rec.pop("schedule", None)


# -- helpers ---------------------------------------------------------------------------------------

def _claude(argv) -> None:
    """Run `claude mcp add/remove`, without the telemetry each run of Claude Code otherwise tries to send:
    registering a local server needs no network."""
    env = dict(os.environ, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SetupError(f"cannot run `{shlex.join(argv)}`: {e}") from e
    if p.returncode != 0:
        raise SetupError(f"`{shlex.join(argv)}` failed: {(p.stderr or p.stdout).strip()}")


def _save_record(rec: dict) -> None:
    rec.setdefault("created", iso())
    rec["version"] = __version__
    rec["updated"] = iso()
    files.write_own(record_path(), (json.dumps(rec, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))


def _server_line(server: dict | None) -> str:
    if not server:
        return "none"
    env = "".join(f"{k}={v} " for k, v in (server.get("env") or {}).items())
    return f"{env}{shlex.join([server.get('command', '?'), *(server.get('args') or [])])}"


def _settings_or_empty() -> dict:
    try:
        return read_settings()[0]
    except OpenMemoryError:
        return {}


# --------------------------------------------------------------------------------------
# Claude Code's settings.json as data: read it, and merge openmemory's hooks in and out.
#
# The file is the person's: every other key and hook is kept (parsed and written back in its
# own indentation, so its meaning is unchanged). Pure but for `read_settings`; files.py writes it.

# Any hook command that runs openmemory's hook or ingest: setup's own, one added by hand
# from the README (`openmemory hook`), or the plugin's launcher.
OPENMEMORY_COMMAND = re.compile(r"openmemory[\"']?(\s+\S+)*?\s+(hook|ingest)\b")


class SettingsError(OpenMemoryError):
    """settings.json cannot be read or written."""


def read_settings(path: Path | None = None) -> tuple[dict, bytes | None]:
    """(settings, the bytes read) of settings.json; ({}, None) when there is none."""
    path = path or paths.settings_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, None
    except OSError as e:
        raise SettingsError(f"cannot read {path}: {e.strerror}") from e
    if not raw.strip():
        return {}, raw
    try:
        value = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as e:
        raise SettingsError(f"{path} is not valid JSON ({e}); Claude Code ignores such a file too: "
                            f"fix it, then run this again") from None
    if not isinstance(value, dict):
        raise SettingsError(f"{path} holds a JSON {type(value).__name__}, not an object; fix it, then run this again")
    return value, raw


def read_gemini_settings(path: Path) -> tuple[dict, bytes | None, bool]:
    """(settings, the bytes read, whether it has comments) of Gemini's settings.json, read as
    Gemini reads it: comments allowed; ({}, None, False) when there is none."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, None, False
    except OSError as e:
        raise SettingsError(f"cannot read {path}: {e.strerror}") from e
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SettingsError(f"{path} is not UTF-8 text ({e}); fix it, then run this again") from None
    plain = agents.without_json_comments(text)
    if not plain.strip():
        return {}, raw, plain != text
    try:
        value = json.loads(plain)
    except ValueError as e:
        raise SettingsError(f"{path} is not valid JSON ({e}); Gemini CLI cannot read it either: fix it, "
                            f"then run this again") from None
    if not isinstance(value, dict):
        raise SettingsError(f"{path} holds a JSON {type(value).__name__}, not an object; fix it, then run this again")
    return value, raw, plain != text


def hook_commands(settings: dict, event: str) -> list[str]:
    """Every command hook under one event, in order."""
    out = []
    for group in _groups(settings, event):
        for hook in group.get("hooks") or []:
            if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                out.append(hook["command"])
    return out


def openmemory_hooks(settings: dict) -> list[tuple[str, str]]:
    """(event, command) of every hook that looks like openmemory's, whoever added it."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return []
    return [(event, cmd) for event in hooks for cmd in hook_commands(settings, event)
            if OPENMEMORY_COMMAND.search(cmd)]


def with_hook(settings: dict, event: str, command: str) -> tuple[dict, bool]:
    """settings with one command hook added under event (a new group); (settings, changed)."""
    if command in hook_commands(settings, event):
        return settings, False
    out = json.loads(json.dumps(settings))
    hooks = out.get("hooks")
    if hooks is None:
        hooks = out["hooks"] = {}
    if not isinstance(hooks, dict):
        raise SettingsError(f"\"hooks\" in {paths.settings_path()} is not an object; fix it, then run this again")
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise SettingsError(f"\"hooks.{event}\" in {paths.settings_path()} is not a list; fix it, then run this again")
    groups.append({"hooks": [{"type": "command", "command": command}]})
    return out, True


def without_hook(settings: dict, event: str, command: str) -> tuple[dict, bool]:
    """settings with that exact command hook removed, and whatever it alone made; (settings, changed)."""
    if command not in hook_commands(settings, event):
        return settings, False
    out = json.loads(json.dumps(settings))
    groups = out["hooks"][event]
    kept = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            inner = [h for h in group["hooks"] if not (isinstance(h, dict) and h.get("command") == command)]
            if not inner and len(inner) != len(group["hooks"]) and set(group) <= {"hooks", "matcher"}:
                continue  # the group held only our hook: it goes with it
            group = dict(group, hooks=inner)
        kept.append(group)
    if kept:
        out["hooks"][event] = kept
    else:
        del out["hooks"][event]
        if not out["hooks"]:
            del out["hooks"]
    return out, True


def allow_rules(settings: dict) -> list[str]:
    """The rules under permissions.allow, in order."""
    return permission_rules(settings, "allow")


def permission_rules(settings: dict, kind: str) -> list[str]:
    """The rules under permissions.<kind> (allow, deny, ask), in order."""
    perms = settings.get("permissions")
    rules = perms.get(kind) if isinstance(perms, dict) else None
    return [r for r in rules if isinstance(r, str)] if isinstance(rules, list) else []


def with_allow(settings: dict, rules: list[str]) -> tuple[dict, list[str]]:
    """settings with each rule appended to permissions.allow; (settings, the rules added)."""
    added = [r for r in rules if r not in allow_rules(settings)]
    if not added:
        return settings, []
    out = json.loads(json.dumps(settings))
    perms = out.setdefault("permissions", {})
    if not isinstance(perms, dict):
        raise SettingsError(f"\"permissions\" in {paths.settings_path()} is not an object; fix it, then run this again")
    allow = perms.setdefault("allow", [])
    if not isinstance(allow, list):
        raise SettingsError(f"\"permissions.allow\" in {paths.settings_path()} is not a list; fix it, then run "
                            f"this again")
    allow.extend(added)
    return out, added


def without_allow(settings: dict, rules: list[str], made: str | None = None) -> dict:
    """settings without those rules; the list (or permissions) setup made goes once it is empty."""
    if not any(r in allow_rules(settings) for r in rules):
        return settings
    out = json.loads(json.dumps(settings))
    perms = out["permissions"]
    perms["allow"] = [r for r in perms["allow"] if r not in rules]
    if not perms["allow"] and made in ("allow", "permissions"):
        del perms["allow"]
        if not perms and made == "permissions":
            del out["permissions"]
    return out


def dump_settings(settings: dict, read_bytes: bytes | None) -> bytes:
    """settings as the file's bytes, in the indentation and final newline it was written with."""
    indent, end = _style(read_bytes)
    return (json.dumps(settings, ensure_ascii=False, indent=indent) + end).encode("utf-8")


def _style(raw: bytes | None) -> tuple:
    """(indent, final newline) the file was written with, so a merge changes only what it must."""
    text = (raw or b"").decode("utf-8", "replace")
    found = re.search(r"\n([ \t]+)\S", text)
    indent = found.group(1) if found else 2
    return indent, "\n" if not text or text.endswith("\n") else ""


def _groups(settings: dict, event: str) -> list:
    hooks = settings.get("hooks")
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    return [g for g in groups if isinstance(g, dict)] if isinstance(groups, list) else []


# --------------------------------------------------------------------------------------
# `openmemory doctor`: is memory connected to Claude Code and working? One finding per check.
#
# Each finding is ok, a failure with the fix, or a note: what cannot have happened yet on a
# fresh setup (no session ended, no night passed) is a note, not a failure.

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


def doctor(now: float | None = None, ask_judge: bool = False) -> list[Finding]:
    """Every check of `openmemory doctor`, in the order a person would fix things; ask_judge (`doctor
    --judge`): the judge is asked one question with nothing of the person's in it."""
    now = time.time() if now is None else now
    findings = [check_database(), check_fts5()]
    findings += check_installs()
    findings.append(check_server())
    claude = not without_claude_code()
    if claude:      # Codex or Gemini alone: Claude Code's allow rules, hooks and folders are not theirs
        findings += check_server_turned_off()
        findings.append(check_tools_allowed())
        findings.append(check_hook())
        findings += check_project_settings()
    findings += [f for f in check_recent(now) if claude or f.check != "last hook run"]
    findings.append(check_nightly())
    findings.append(check_judge(ask=ask_judge))
    if claude:
        findings.append(check_memory_folders())
        findings += check_moved_projects()
    findings += check_agents()
    return findings


def without_claude_code() -> bool:
    """Codex or Gemini here and Claude Code not (no `claude` on PATH, no .claude.json, no plugin):
    setup leaves Claude Code's settings and folder alone, and doctor checks none of its parts."""
    return bool(agents.found()) and not claude_code_here() and not any(p["enabled"] for p in plugin_installs())


def healthy(findings: list[Finding]) -> bool:
    return all(f.status != FAIL for f in findings)


# -- the checks --------------------------------------------------------------------------------

REBUILD = "move memory.db aside and run `openmemory ingest` to rebuild it from the transcripts"


def check_database() -> Finding:
    try:
        with store.connect() as db:
            problem = db.quick_check()
            counts = None if problem else db.counts()
    except Exception as e:  # noqa: BLE001 - whatever the file does, doctor reports it
        return _database_fault(e)
    if problem:
        return Finding("database", FAIL, f"{paths.db_path()} fails SQLite's quick check: {problem}", REBUILD)
    total = counts["episodes"]["total"]
    return Finding("database", OK, f"{paths.db_path()} opens and passes SQLite's quick check "
                                   f"({total} episode{'' if total == 1 else 's'})")


def _database_fault(e: Exception) -> Finding:
    """A database that did not open, with its own fix: a rebuild only for damage. A file that is
    locked, not writable, on a full disk or of a newer openmemory is whole, and a rebuild would
    lose the notes and the lessons' history that only it holds."""
    if isinstance(e, sqlite3.Error):
        e = store.explained(e, paths.db_path())
    if isinstance(e, errors.DamagedDatabase):
        return Finding("database", FAIL, str(e), REBUILD)
    what, _, how = str(e).partition("; ")
    return Finding("database", FAIL, what, how or "run `openmemory status` to see the whole error")


def check_fts5() -> Finding:
    """A property of this Python's SQLite, asked of a database in memory: a memory.db that does not
    open is the database check's failure, not a second one here."""
    try:
        has = store.sqlite_has_fts5()
    except sqlite3.Error as e:
        return Finding("fts5", FAIL, f"cannot check SQLite's FTS5: {e}")
    if has:
        return Finding("fts5", OK, "this Python's SQLite has FTS5 (full-text recall)")
    return Finding("fts5", FAIL, "this Python's SQLite was built without FTS5: recall runs on vectors only, "
                                 "and slower", "use a Python whose sqlite3 has FTS5 (python.org, Homebrew "
                                               "and most Linux builds do)")


def check_installs() -> list[Finding]:
    """One install, one version: the plugin and setup must not both run a server and hooks."""
    plugins = [p for p in plugin_installs() if p["enabled"]]
    rec = record()
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
    others = [a.capitalize() for a in agents.found()]
    if command is None and others and not claude_code_here():
        # Codex or Gemini alone: nothing of Claude Code's to connect, and no failure of openmemory's
        return Finding("mcp server", NOTE, f"Claude Code is not installed here (no `claude` on PATH, no "
                                           f"{paths.claude_json_path()}): {' and '.join(others)} recall"
                                           f"{'s' if len(others) == 1 else ''} through "
                                           f"openmemory's server (checked below); once you install Claude Code, "
                                           f"run `{_here()} setup` again to connect it too")
    if command is None:
        fix = f"run `{_here()} setup` (or install the plugin)" if shutil.which("claude") else \
            f"`claude` is not on PATH here, so setup cannot register it; where `claude` runs: `{shlex.join(mcp_add_argv(mcp_server()))}`"
        return Finding("mcp server", FAIL, "no openmemory MCP server is registered with Claude Code", fix)
    argv, env = command
    try:
        tools = list_tools(argv, env)
    except OpenMemoryError as e:
        return Finding("mcp server", FAIL, f"`{shlex.join(argv)}` does not answer: {e}",
                       f"run `{_here()} setup` again to register a command that runs")
    missing = set(TOOLS) - set(tools)
    if missing:
        return Finding("mcp server", FAIL, f"`{shlex.join(argv)}` answers without the tools "
                                           f"{', '.join(sorted(missing))}", "upgrade openmemory")
    return Finding("mcp server", OK, f"registered and answers tools/list ({', '.join(tools)}): {shlex.join(argv)}")


def claude_code_here() -> bool:
    """Claude Code is installed or has run here: `claude` on PATH, or the state file it writes at
    its first start (.claude.json, where `claude mcp add` registers servers)."""
    return bool(shutil.which("claude")) or paths.claude_json_path().exists()


def turned_off_in() -> list[str]:
    """The project folders where the person turned openmemory's server off in Claude Code (`/mcp`),
    as .claude.json keeps it (2.1.328: `projects.<folder>.disabledMcpServers`; `claude mcp list`
    there says `⊘ Disabled for this project`)."""
    try:
        projects = json.loads(paths.claude_json_path().read_text(encoding="utf-8")).get("projects") or {}
        names = {MCP_NAME, f"plugin:{PLUGIN_NAME}:{MCP_NAME}"}
        return sorted(folder for folder, conf in projects.items() if isinstance(conf, dict)
                      and isinstance(conf.get("disabledMcpServers"), list)
                      and names & {str(n) for n in conf["disabledMcpServers"]})
    except (OSError, ValueError, AttributeError):
        return []


def check_server_turned_off() -> list[Finding]:
    """A note, not a failure: turning the server off for a project is the person's choice, but the
    agent there then has no recall, which `✔ mcp server` alone would hide."""
    folders = turned_off_in()
    if not folders:
        return []
    shown = ", ".join(folders[:3]) + (f" and {len(folders) - 3} more" if len(folders) > 3 else "")
    return [Finding("mcp server", NOTE, f"turned off in Claude Code for {len(folders)} project"
                                        f"{'' if len(folders) == 1 else 's'}, whose agent has no recall "
                                        f"(`/mcp` there turns it back on): {shown}")]


def check_tools_allowed() -> Finding:
    """The model may call each of openmemory's tools without a prompt (`claude -p` refuses one): `show`
    refused leaves the agent with hits it cannot open."""
    plugins = [p for p in plugin_installs() if p["enabled"]]
    server = PLUGIN_SERVER if plugins and registered_server() is None else MCP_NAME
    try:
        settings, _ = read_settings()
    except OpenMemoryError as e:
        return Finding("tools allowed", FAIL, str(e), "fix the file, then run `openmemory setup`")
    path = paths.settings_path()
    for kind, rule in held_back(settings, server)[:1]:
        return Finding("tools allowed", FAIL, f"{path} has `{rule}` under permissions.{kind}: the model "
                                              f"cannot call openmemory's tools without a prompt (and `claude -p` "
                                              f"refuses them)", f"remove that rule, then run `{_here()} setup`")
    allowed = allow_rules(settings)
    missing = [f"mcp__{server}__{tool}" for tool in TOOLS if not rules_naming(tool, server, allowed)]
    if missing:
        return Finding("tools allowed", FAIL, f"{', '.join(missing)} not allowed in {path}: Claude Code asks "
                                              f"before each call, and `claude -p` refuses it",
                       f"run `{_here()} setup` (it adds one rule per tool)")
    wide = [r for r in (f"mcp__{server}", f"mcp__{server}__*") if r in allowed]
    also = f" (by `{wide[0]}`, which also allows any tool a later version adds)" if wide else ""
    return Finding("tools allowed", OK, f"the model may call openmemory's tools without asking{also}: "
                                        f"{', '.join(r for r in tool_rules(server) if r in allowed) or wide[0]}")


def check_hook() -> Finding:
    plugins = [p for p in plugin_installs() if p["enabled"]]
    try:
        settings, _ = read_settings()
    except OpenMemoryError as e:
        return Finding("hook", FAIL, str(e), "fix the file, then run `openmemory setup`")
    if settings.get("disableAllHooks") is True:     # Claude Code 2.1.328 then runs none, the plugin's too
        return Finding("hook", FAIL, f"{paths.settings_path()} has \"disableAllHooks\": true: Claude Code runs no "
                                     f"hook, so no session is ingested as it ends",
                       "remove that key (or set it to false) if openmemory is to learn as sessions end")
    ours = [cmd for event, cmd in openmemory_hooks(settings) if event == "SessionEnd"]
    if not ours:
        if plugins:
            return Finding("hook", OK, f"the plugin {plugins[0]['key']} runs the SessionEnd hook")
        return Finding("hook", FAIL, f"no openmemory SessionEnd hook in {paths.settings_path()}",
                       f"run `{_here()} setup`")
    for command in ours:
        problem = try_hook(command)
        if problem:
            return Finding("hook", FAIL, f"the SessionEnd hook `{command}` does not run: {problem}",
                           f"run `{_here()} setup` to write a hook with absolute paths")
    starts = [cmd for event, cmd in openmemory_hooks(settings) if event == "SessionStart"]
    also = "" if starts else " (no SessionStart hook: a missed night is caught up only by the nightly job; " \
                             "`openmemory setup` adds it)"
    return Finding("hook", OK, f"SessionEnd hook in {paths.settings_path()} runs: {ours[0]}{also}")


PROJECT_SETTINGS = ("settings.json", "settings.local.json")


def project_settings(folder) -> list[tuple[Path, dict]]:
    """(path, settings) of the project settings Claude Code reads when started in folder: that
    folder's own `.claude/settings.json` and `.claude/settings.local.json` (2.1.328, measured with
    `claude -p`: not a parent folder's, in a git repository or not), never the person's own
    settings.json (the folder being home). A file that does not parse is left to Claude Code."""
    out = []
    for name in PROJECT_SETTINGS:
        path = Path(folder) / ".claude" / name
        try:
            if path.resolve() == paths.settings_path().resolve():
                continue
            settings, raw = read_settings(path)
        except (OSError, OpenMemoryError):
            continue
        if raw is not None and isinstance(settings, dict):
            out.append((path, settings))
    return out


def check_project_settings(folder=None) -> list[Finding]:
    """Notes, run in a project: where its own settings turn openmemory off there, naming the file
    and the key. Measured with Claude Code 2.1.328: `"disableAllHooks": true` in either file runs
    none of the person's hooks in that folder; a deny or ask rule there holds the tools back though
    the person's settings allow them. Hooks merge and a user-scope server is not one of the
    project's `.mcp.json` servers, so no other key of a project's turns openmemory off."""
    folder = os.path.realpath(folder or os.getcwd())
    server = PLUGIN_SERVER if [p for p in plugin_installs() if p["enabled"]] and registered_server() is None \
        else MCP_NAME
    out = []
    for path, settings in project_settings(folder):
        # a cloned repository's folders are named by whoever wrote it: its name starts no line of doctor's
        path, folder = paths.one_line(path), paths.one_line(folder)
        if settings.get("disableAllHooks") is True:
            out.append(Finding("hook", NOTE, f"{path} has \"disableAllHooks\": true: Claude Code started in {folder} "
                                             f"runs no hook there, openmemory's neither, so sessions there are read only "
                                             f"by the nightly job's ingest or `openmemory ingest` (remove that key there "
                                             f"to have them read as they end)"))
        for kind, rule in held_back(settings, server)[:1]:
            out.append(Finding("tools allowed", NOTE, f"{path} has `{rule}` under permissions.{kind}: in {folder} "
                                                      f"Claude Code {'refuses' if kind == 'deny' else 'asks before'} "
                                                      f"the tool it names, though {paths.settings_path()} allows it "
                                                      f"(`claude -p` there refuses it; remove that rule there to "
                                                      f"allow it)"))
    return out


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
                                                  f"{'the last hook run ' + last_hook if last_hook else _connected_by()} "
                                                  f"and the hook ingested none of them",
                           "check the hook above; `claude --debug` shows hook errors"))
    elif last_hook is None and since is None:
        out.append(Finding("last hook run", NOTE, "the hook has not run yet: nothing connects it (see above)"))
    elif last_hook is None:
        out.append(Finding("last hook run", NOTE, f"no session has ended since {_connected_by()}: the hook has "
                                                  f"not run yet"))
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


def check_nightly() -> Finding:
    """A nightly job runs sleep: the one setup added is still in place, or one was added by hand."""
    sched = record().get("schedule") or {}
    kind = sched.get("kind")
    if kind == "none":
        return Finding("nightly job", NOTE, f"none (`setup --schedule none`): {catch_up()}")
    try:
        if kind in ("cron", "systemd", "launchd"):
            there = _job_in_place(sched)
            what = {"cron": f"a crontab line: {sched.get('line')}",
                    "systemd": f"a systemd user timer: {schedule.systemd_dir()}/{schedule.UNIT}.timer",
                    "launchd": f"a launchd agent: {sched.get('file')}"}[kind]
            if there:
                return Finding("nightly job", OK, f"sleep runs at 03:30 from {what}")
            return Finding("nightly job", FAIL, f"the nightly job setup added is gone ({what})",
                           f"run `{_here()} setup` to add it again")
        found = _job_added_by_hand()
    except OpenMemoryError as e:
        return Finding("nightly job", FAIL, f"cannot look for the nightly job: {e}", f"run `{_here()} setup`")
    if found:
        return Finding("nightly job", OK, f"sleep runs nightly from {found} (not added by setup)")
    if schedule.choose("auto") == "print":
        if session_start_catches_up():     # nothing broken: a container, WSL, a machine without cron
            return Finding("nightly job", NOTE, f"none: this machine has neither systemd's user manager nor "
                                                f"`crontab`; {catch_up()} (for a nightly job as well: install cron, "
                                                f"its package is usually `cron` or `cronie`, and run `{_here()} "
                                                f"setup` again)")
        when = "when a session start catches up a night, or by hand"
        return Finding("nightly job", FAIL, "no nightly job, and this machine has neither systemd's user manager "
                                            f"nor `crontab` to run one: sleep runs only {when}",
                       f"install cron (its package is usually `cron` or `cronie`) and run `{_here()} setup`; "
                       f"or run `{_here()} sleep` each day yourself")
    wait = "a session start to catch up a night, or for you"
    return Finding("nightly job", FAIL, f"no nightly job runs sleep: lessons wait for {wait}", f"run `{_here()} setup` (it adds one; "
                                                                   f"`--schedule none` to go without)")


def check_judge(ask: bool = False) -> Finding:
    """The optional judge the nightly sleep asks: off (a note), or the one chosen and whether it can
    be reached without asking it (a call costs): Claude Code's binary still there. One that is gone
    or misconfigured fails, since each night then goes on without it and says so only in the log;
    so does one that answered nothing on the last night it was asked (_judge_silent). One no night
    has asked yet is a note saying how to check it; ask (`doctor --judge`): it is asked one question
    with nothing of the person's in it (llm.probe), and fails with what it said."""
    from . import llm
    cfg, problem = llm.config(), llm.problem()
    how = f"`{_here()} setup --judge claude` (or `--judge endpoint`, or `--judge off`)"
    if cfg is None and problem:
        by_env = any((os.environ.get(k) or "").strip() for k in ("OPENMEMORY_LLM_URL", "OPENMEMORY_LLM_MODEL"))
        return Finding("judge", FAIL, f"a judge is set but not used: {problem}",
                       "set OPENMEMORY_LLM_URL (http:// or https://) and OPENMEMORY_LLM_MODEL together, or "
                       "neither" if by_env else how)
    if cfg is None:
        return Finding("judge", NOTE, "off (optional: `openmemory setup --judge claude|endpoint` turns one on); "
                                      "nothing leaves this machine")
    if cfg.backend == "claude" and not (os.path.isfile(cfg.command) and os.access(cfg.command, os.X_OK)):
        return Finding("judge", FAIL, f"{cfg.describe()}: {cfg.command} is not there, so each night goes on "
                                      f"without the judge", f"`{_here()} setup --judge claude` finds `claude` "
                                                            f"on PATH again (or `--judge-command PATH`); "
                                                            f"`--judge off` to go without")
    fix = ("run `claude` once and log in (`/login`), or check that `claude -p` answers in a terminal; "
           if cfg.backend == "claude" else f"check that the server at {cfg.url} runs and serves {cfg.model}, "
                                           f"a model that follows instructions (the log has its answers); ")
    if ask:
        from . import llm
        why = llm.probe(cfg)
        if why:
            return Finding("judge", FAIL, f"{cfg.describe()} did not answer when asked just now: {why}",
                           fix + f"then `{_here()} doctor --judge` again (`{_here()} setup --judge off` to go without)")
        return Finding("judge", OK, f"{cfg.describe()} answered when asked just now (one question with nothing "
                                    f"of yours in it); {_judge_spends(cfg)}")
    silent = _judge_silent(cfg)
    if silent:
        return Finding("judge", FAIL, f"{cfg.describe()} gave the judge nothing usable on the last night: {silent}; the rules' "
                                      f"results stood", fix + f"the next sleep asks it again (`{_here()} setup "
                                                              f"--judge off` to go without)")
    if not _judge_asked(cfg):
        cost = "one call on your Claude usage" if cfg.backend == "claude" else "one call"
        return Finding("judge", NOTE, f"{cfg.describe()}: not asked yet, so not known to answer (the first night asks "
                                      f"it; `{_here()} doctor --judge` asks it now one question with nothing of "
                                      f"yours in it, {cost}); {_judge_spends(cfg)}")
    if cfg.backend == "claude":
        return Finding("judge", OK, f"{cfg.describe()}, run by the nightly sleep: {cfg.command} is there (not "
                                    f"called here: a call counts against your Claude usage); {_judge_spends(cfg)}")
    return Finding("judge", OK, f"{cfg.describe()}, asked by the nightly sleep (not called here; `openmemory "
                                f"status` says when it last answered); {_judge_spends(cfg)}")


def _judge_silent(cfg) -> str | None:
    """Why the judge gave no answer at all on the last night it was asked, or None: each question
    failed and the night went on without it ("Not logged in · Please run /login"), which the morning
    report warns of once and doctor, where the person checks, must not call fine. A cap reached is
    no failure."""
    from . import llm
    try:
        with store.connect() as db:
            night = json.loads(db.get_state("model_night") or "null")
            report = json.loads(db.get_state("morning") or "null")
    except Exception:  # noqa: BLE001
        return None     # the database check has said why
    if not isinstance(night, dict) or night.get("model") != cfg.describe():
        return None     # no night yet, or another judge's
    if not night.get("answered") and night.get("failures"):
        return str(night.get("stopped") or f"{night['failures']} questions failed")
    last = report.get("model") if isinstance(report, dict) else None
    if isinstance(last, dict) and last.get("model") == cfg.describe() and llm.unusable_only(last):
        return (f"it answered {last['judged']['unusable']} of the judge's questions, none in the form asked "
                f"(one JSON object, a lesson the checks pass)")
    return None


def _judge_asked(cfg) -> bool:
    """Whether a night (a sleep, an `ingest --model`) has put a question to this judge."""
    try:
        with store.connect() as db:
            night = json.loads(db.get_state("model_night") or "null")
    except Exception:  # noqa: BLE001
        return True     # the database check has said why
    return isinstance(night, dict) and night.get("model") == cfg.describe() and bool(night.get("asked"))


JUDGE_SENT = ("the messages you typed, with the agent's commands, words and error lines around them and the "
              "project's name, secrets redacted")


def _judge_spends(cfg) -> str:
    """The judge's cap a night and where what it is shown goes: a person turning one on must know
    exactly what leaves the machine, and for where (doctor is where they look again)."""
    cap = f"at most {cfg.calls} calls and {cfg.tokens:,} tokens a night"
    if cfg.backend == "claude":
        return f"{cap}; sent to Claude Code's model, on your Claude account: {JUDGE_SENT}"
    host = urllib.parse.urlsplit(cfg.url).hostname or ""
    try:
        local = host == "localhost" or host.endswith(".localhost") or ipaddress.ip_address(host).is_loopback
    except ValueError:
        local = False
    where = f"{host}, on this machine" if local else f"{host}, another machine: it leaves this one"
    return f"{cap}; sent to {where}: {JUDGE_SENT}"


def session_start_catches_up() -> bool:
    """Whether a session start here would start the catch-up: openmemory's SessionStart hook in
    Claude Code's settings (or the plugin's, enabled), or openmemory's server registered with Codex
    or Gemini, whose start runs it (mcp.catch_up_once)."""
    try:
        settings, _ = read_settings()
    except OpenMemoryError:
        settings = {}
    if any(event == "SessionStart" for event, _ in openmemory_hooks(settings)):
        return True
    if any(p["enabled"] for p in plugin_installs()):
        return True
    have = agents.found()
    if agents.CODEX in have and agents.codex_server(agents.read_text(paths.codex_config_path())) is not None:
        return True
    if agents.GEMINI in have:
        try:
            return agents.gemini_server(read_gemini_settings(paths.gemini_settings_path())[0]) is not None
        except OpenMemoryError:
            return False
    return False


def _job_in_place(sched: dict) -> bool:
    if sched["kind"] == "cron":
        return sched.get("line") in schedule.crontab_lines()
    if sched["kind"] == "systemd":
        return all(Path(f).exists() for f in sched.get("files") or []) and bool(sched.get("files"))
    return Path(sched.get("file") or "").is_file()


def _job_added_by_hand() -> str | None:
    """Where a nightly openmemory job was added by hand (or by an older setup), if anywhere."""
    if Path(schedule.launchd_path()).is_file():
        return f"the launchd agent {schedule.launchd_path()}"
    timer = schedule.systemd_dir() / f"{schedule.UNIT}.timer"
    if timer.is_file():
        return f"the systemd user timer {timer}"
    if shutil.which(schedule.program("crontab")):
        for line in schedule.crontab_lines():
            if not line.lstrip().startswith("#") and "openmemory" in line and " sleep" in line:
                return f"the crontab line `{line}`"
    return None


def check_memory_folders() -> Finding:
    off = auto_memory_off()
    if off:
        return Finding("memory folders", FAIL, f"Claude Code loads no MEMORY.md: {off}, so the lessons never "
                                               f"reach the agent (recall still works)",
                       "take that out if the agent is to start each session with the lessons")
    projects = paths.projects_dir()
    if not projects.exists():
        return Finding("memory folders", NOTE, f"{projects} does not exist yet (no Claude Code session has run)")
    bad = [str(p) for p in [projects, *projects.glob("*/memory")] if not os.access(p, os.W_OK | os.X_OK)]
    if bad:
        return Finding("memory folders", FAIL, f"not writable: {', '.join(bad[:3])}"
                                               f"{' and more' if len(bad) > 3 else ''}",
                       "give yourself write access (chmod u+w), or set CLAUDE_CONFIG_DIR")
    count = sum(1 for _ in projects.glob("*/memory"))
    if not count:
        return Finding("memory folders", OK, f"{projects} is writable; no project has a memory folder yet "
                                             f"(Claude Code, or render with a lesson to write, makes one)")
    return Finding("memory folders", OK, f"Claude Code's memory folders are writable ({count} under {projects})")


def check_moved_projects() -> list[Finding]:
    """One note per project folder live lessons are filed under that is no longer here (moved,
    renamed or deleted since): its memory folder reaches no session (render.gone_projects)."""
    from . import render
    try:
        with store.connect() as db:
            gone = render.gone_projects(db)
    except Exception:  # noqa: BLE001 - the database check says what is wrong with it
        return []
    return [Finding("moved projects", NOTE,
                    f"{len(ids)} live lesson{'' if len(ids) == 1 else 's'} filed under {paths.one_line(root)}, a folder "
                    f"no longer here: no session loads its memory folder; if it was moved or renamed, `openmemory "
                    f"lessons move {paths.one_line(shlex.quote(root))} <its new folder>` files "
                    f"{'it' if len(ids) == 1 else 'them'} under it")
            for root, ids in sorted(gone.items())]


_TRUE = ("1", "true", "yes", "on")


def auto_memory_off() -> str | None:
    """What turns Claude Code's auto memory off, which takes MEMORY.md out of every request
    (measured with 2.1.328): `"autoMemoryEnabled": false` in settings.json, or
    CLAUDE_CODE_DISABLE_AUTO_MEMORY set here or in settings.json's `env`; None when nothing does."""
    try:
        settings, _ = read_settings()
    except OpenMemoryError:
        settings = {}       # the hook check says why the file cannot be read
    if settings.get("autoMemoryEnabled") is False:
        return f"{paths.settings_path()} has \"autoMemoryEnabled\": false"
    env = settings.get("env") if isinstance(settings.get("env"), dict) else {}
    for where, value in ((f"in the `env` of {paths.settings_path()}", env.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY")),
                         ("in this shell's environment", os.environ.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY"))):
        if str(value or "").strip().lower() in _TRUE:
            return f"CLAUDE_CODE_DISABLE_AUTO_MEMORY={value} is set {where}"
    return None


def check_agents() -> list[Finding]:
    """Codex's and Gemini's connection, for each one installed here: the server registered, its
    command answering tools/list, `recall` allowed without a prompt."""
    out = []
    have = agents.found()
    if agents.CODEX in have:
        path = paths.codex_config_path()
        text = agents.read_text(path)
        broken = agents.codex_unreadable(text)
        server = agents.codex_server(text)
        off = agents.codex_switched_off(server)
        if broken:
            out.append(Finding("codex", FAIL, f"{path} is not valid TOML ({broken}): Codex does not start, "
                                              f"and no MCP server in it runs", "fix the file, then run "
                                              f"`{_here()} setup`"))
        elif off:
            out.append(Finding("codex", FAIL, f"openmemory's MCP server is in {path}, but {off}: Codex's model "
                                              f"cannot call `recall`", f"remove that from [mcp_servers.{MCP_NAME}]"))
        else:
            refused = [t for t in agents.TOOLS if (server or {}).get("approvals", {}).get(t) != "approve"]
            out.append(_check_agent_server("codex", path, server, refused,
                                           f"[mcp_servers.{MCP_NAME}.tools.{(refused or ['recall'])[0]}] approval_mode = "
                                           f"\"approve\" in {path}"))
    if agents.GEMINI in have:
        path = paths.gemini_settings_path()
        try:
            settings, _, commented = read_gemini_settings(path)
            server = agents.gemini_server(settings)
        except OpenMemoryError as e:
            out.append(Finding("gemini", FAIL, str(e), "fix the file, then run `openmemory setup`"))
        else:
            blocked = agents.gemini_blocked(settings) if server else ""
            if blocked:
                out.append(Finding("gemini", FAIL, f"{path}: {blocked}: Gemini's model cannot call `recall`",
                                   "change that there (setup leaves your lists as they are)"))
            else:
                policies = [agents.read_text(p) for p in sorted(paths.gemini_policy_path().parent.glob("*.toml"))]
                allowed = set().union(*(agents.gemini_allowed(p) for p in policies)) if policies else set()
                out.append(_check_agent_server("gemini", path, server, [t for t in agents.TOOLS if t not in allowed],
                                               f"a policy rule allowing it by name in {paths.gemini_policy_path()}",
                                               f"add the `\"{MCP_NAME}\": {{...}}` entry `{_here()} setup` prints "
                                               f"under \"mcpServers\" in {path} (it has comments, which setup "
                                               f"leaves to you)" if commented else ""))
    try:
        projects = render.agent_project_files()
    except OpenMemoryError:
        projects = {}       # render's own state unreadable: the render check says so
    held, unreached = {}, []
    if agents.CODEX in have:
        try:
            with store.connect() as db:
                held, unreached = render.held_back(db), render.codex_unreached(db)
        except Exception:  # noqa: BLE001
            held = {}       # the database check says why
    for agent, path in ((agents.CODEX, paths.codex_agents_md()), (agents.GEMINI, paths.gemini_md())):
        if agent in have:
            out.append(_check_instructions(agent, path, [p for p in projects.get(agent, []) if p not in held]))
    for path, why in sorted(held.items()):
        out.append(Finding("codex lessons", NOTE, f"{path} has openmemory's two lines, but {why}: render writes "
                                                  f"no lessons there (Codex has this project's lessons through "
                                                  f"recall only); {render.HELD_FIX}", render.HELD_FIX))
    if unreached:
        n = len(unreached)
        out.append(Finding("codex lessons", NOTE, f"the lessons of {n} project{'' if n == 1 else 's'} "
                                                  f"({', '.join(unreached[:3])}{', …' if n > 3 else ''}) reach Codex "
                                                  f"through recall only: Codex loads no file of a project's but its "
                                                  f"AGENTS.md; to have them there, put the two lines "
                                                  f"`{render.BEGIN}` and `{render.END}` into an AGENTS.md of yours "
                                                  f"that git ignores (`AGENTS.md` in .git/info/exclude)"))
    return out


def _check_instructions(agent: str, path: Path, projects: list = ()) -> Finding:
    """The file the agent loads at start, where render keeps the lessons for everywhere, and the
    files of one project each it keeps a section of (Gemini's private MEMORY.md, a repository's
    AGENTS.md where the person put the markers)."""
    from .render import BEGIN, END, find_section    # the section's format is render's
    check = f"{agent} lessons"
    for project in projects:
        try:
            find_section(agents.read_text(project) or "")
        except OpenMemoryError as e:
            return Finding(check, FAIL, f"{project}: {e}", f"keep exactly one `{BEGIN}` line and one `{END}` "
                                                           f"line after it, or remove both")
        if not os.access(project, os.W_OK):
            return Finding(check, FAIL, f"{project} is not writable: its lessons cannot be kept up to date",
                           "give yourself write access (chmod u+w)")
    also = f"; and the lessons of {len(projects)} project{'' if len(projects) == 1 else 's'} in " \
           f"{', '.join(map(str, projects))}" if projects else ""
    finding = _check_everywhere_file(agent, path, check)
    if also and finding.status != FAIL:
        return Finding(check, OK, finding.text + also)
    return finding


def _check_everywhere_file(agent: str, path: Path, check: str) -> Finding:
    from .render import BEGIN, END, find_section
    text = agents.read_text(path)
    if text is None:
        if path.exists():
            return Finding(check, FAIL, f"{path} cannot be read as UTF-8 text", "fix or move the file")
        return Finding(check, NOTE, f"{path} does not exist yet: render writes it once there is a lesson for "
                                    f"every project")
    try:
        found = find_section(text)
    except OpenMemoryError as e:
        return Finding(check, FAIL, f"{path}: {e}", f"keep exactly one `{BEGIN}` line and one `{END}` line "
                                                    f"after it, or remove both")
    if found is None:
        return Finding(check, NOTE, f"{path} has no openmemory section yet (no lesson for every project so far)")
    lines = [l for l in text[found[0]:found[1]].splitlines() if l.startswith("- ")]
    if not os.access(path, os.W_OK):
        return Finding(check, FAIL, f"{path} is not writable: its lessons cannot be kept up to date",
                       "give yourself write access (chmod u+w)")
    return Finding(check, OK, f"{path} holds openmemory's section ({len(lines)} lesson line(s)), loaded at "
                              f"every {agent} start")


def _check_agent_server(agent: str, path: Path, server: dict | None, not_allowed: list, allow: str,
                        register: str = "") -> Finding:
    if not server or not server.get("command"):
        return Finding(agent, FAIL, f"{agent} is installed, but no openmemory MCP server is in {path}",
                       register or f"run `{_here()} setup`")
    argv = [server["command"], *(server.get("args") or [])]
    try:
        tools = list_tools(argv, dict(server.get("env") or {}))
    except OpenMemoryError as e:
        return Finding(agent, FAIL, f"{agent}'s server `{shlex.join(argv)}` does not answer: {e}",
                       f"run `{_here()} setup` again")
    if not_allowed:     # each tool: `show` refused leaves the model with hits it cannot open
        return Finding(agent, FAIL, f"{agent}'s server answers ({', '.join(tools)}), but its model may not "
                                    f"call {', '.join(f'`{t}`' for t in not_allowed)} without a prompt "
                                    f"(non-interactive runs refuse it)",
                       f"add {allow} (`{_here()} setup` does)")
    return Finding(agent, OK, f"{agent}'s MCP server in {path} answers tools/list ({', '.join(tools)}), "
                              f"{', '.join(f'`{t}`' for t in agents.TOOLS)} allowed: {shlex.join(argv)}")


# -- probes ------------------------------------------------------------------------------------

def registered_server_command() -> tuple[list[str], dict] | None:
    """(argv, env) of the openmemory MCP server Claude Code would start, or None."""
    server = registered_server()
    if server and server.get("command"):
        return [server["command"], *(server.get("args") or [])], dict(server.get("env") or {})
    for plugin in plugin_installs():
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
            st = transcripts.file_stat(path)     # with its subagents, as ingest stores it
        except OSError:
            continue
        if after + HOOK_LAG_S < st.st_mtime_ns / 1e9 < now - HOOK_LAG_S and \
                ingested.get(str(path)) != (st.st_mtime_ns, st.st_size):
            out.append(str(path))
    return out


def _connected_by() -> str:
    return "setup" if record().get("created") else "the plugin was installed"


def _setup_time() -> float | None:
    """When this machine was connected: setup's record, else the plugin's install time."""
    created = record().get("created")
    if created:
        return _timestamp(created)
    for plugin in plugin_installs():
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
    return shell_command("").strip()


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
