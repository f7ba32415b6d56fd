"""`openmemory setup`: connect Claude Code in one step (MCP server, hooks, nightly sleep), and undo it.

Every command written runs this very openmemory by absolute path (the installed script, or
the interpreter and the package's folder), so it works from a venv that is not on PATH and
from cron's bare environment. What setup added is recorded in OPENMEMORY_HOME/setup.json,
and `setup --undo` removes exactly that. Nothing is done twice; the plugin and setup never
both run a server and hooks.
"""
import json
import os
import shlex
import shutil
import site
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import __version__, claude_settings, files, paths, schedule
from .clock import iso
from .errors import OpenMemoryError

MCP_NAME = "openmemory"
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
        argv = [str(script)] if script.is_file() and os.access(script, os.X_OK) else \
            [sys.executable, "-m", "openmemory"]
    else:
        argv = [sys.executable, "-m", "openmemory"]
        env["PYTHONPATH"] = str(package_parent())
    if os.environ.get("OPENMEMORY_HOME"):
        env["OPENMEMORY_HOME"] = str(paths.home())
    return argv, env


def shell_command(verb: str, with_config_dir: bool = False) -> str:
    """`VAR=value ... /abs/openmemory VERB` for sh (hooks, cron, systemd, launchd)."""
    argv, env = invocation()
    if with_config_dir and os.environ.get("CLAUDE_CONFIG_DIR"):
        env["CLAUDE_CONFIG_DIR"] = str(paths.claude_dir())
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
    """What setup would change, each step with the function that does it."""
    changes = []
    plugins = [p for p in plugin_installs() if p["enabled"]]
    if plugins:
        changes.append(Change("note", "skip", f"the openmemory plugin ({plugins[0]['key']}, version "
                                              f"{plugins[0]['version']}) already runs the MCP server and "
                                              f"the hooks: setup adds neither"))
    else:
        changes.append(_mcp_change())
        changes += _hook_changes()
    changes.append(_schedule_change(schedule_mode))
    return changes


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


def _hook_changes() -> list[Change]:
    """The hooks as one change: one write of settings.json, one backup. Hooks an earlier setup
    added with another command (an install that moved, an upgrade) are replaced."""
    settings, _ = claude_settings.read()
    path = claude_settings.settings_path()
    command = shell_command("hook")
    missing = [e for e in HOOK_EVENTS if command not in claude_settings.hook_commands(settings, e)]
    stale = [(e, c) for e, c in record().get("hooks", [])
             if c != command and c in claude_settings.hook_commands(settings, e)]
    changes = []
    if not missing and not stale:
        changes.append(Change("hook", "keep", f"hooks {', '.join(HOOK_EVENTS)} are in {path}: {command}"))
    else:
        def run(rec):
            current, raw = claude_settings.read()
            added = []
            for event, old in stale:
                current, _ = claude_settings.without_hook(current, event, old)
            for event in missing:
                current, changed = claude_settings.with_hook(current, event, command)
                if changed:
                    added.append(event)
            if not added and not stale:
                return None
            backup = files.replace_config_if_unchanged(path, raw, claude_settings.dumps(current, raw))
            rec["hooks"] = [h for h in rec.get("hooks", []) if tuple(h) not in stale]
            rec["hooks"] += [[e, command] for e in added if [e, command] not in rec["hooks"]]
            if raw is None:
                rec["settings_created"] = str(path)
            return f"backup of {path} as it was: {backup}" if backup else None

        what = f"add the hooks {', '.join(missing)}" if missing else "replace the hooks"
        if stale:
            what += f" (in place of setup's earlier `{stale[0][1]}`)"
        changes.append(Change("hook", "replace" if stale else "add", f"{what} to {path}: {command}", run))
    earlier = {c for _, c in stale}
    for event, other in claude_settings.openmemory_hooks(settings):
        if other != command and other not in earlier:
            changes.append(Change("note", "keep", f"also in {path}: a {event} hook `{other}` that setup did "
                                                  f"not add; remove it, or that event runs openmemory twice"))
    return changes


def _schedule_change(mode: str) -> Change:
    kind = schedule.choose(mode)
    command = schedule.nightly_command(*_nightly_parts())
    if kind == "none":
        return Change("schedule", "skip", "nightly sleep: not scheduled (--schedule none); "
                                          "each session start catches up a sleep over a day old")
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
            unit_files = schedule.systemd_install(units)
            rec["schedule"] = {"kind": "systemd", "files": unit_files, "units": units}
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


# -- undo ------------------------------------------------------------------------------------------

def undo_plan() -> list[Change]:
    """What `setup --undo` would remove: only what setup recorded, and only if it is still there."""
    rec = record()
    changes = []
    if not rec:
        return [Change("note", "keep", f"nothing to undo: setup has not added anything ({record_path()})")]
    server = rec.get("mcp", {}).get("server")
    if server:
        changes.append(_undo_mcp(server, rec["mcp"].get("replaced")))
    settings, _ = claude_settings.read()
    present = [(e, c) for e, c in rec.get("hooks", []) if c in claude_settings.hook_commands(settings, e)]
    if present:
        changes.append(Change("hook", "remove", f"remove the hooks {', '.join(e for e, _ in present)} from "
                                                f"{claude_settings.settings_path()}: {present[0][1]}",
                              lambda r: _remove_hooks(r, present)))
    sched = rec.get("schedule")
    if sched:
        changes.append(_undo_schedule(sched))
    return changes


def undo(changes: list[Change]) -> list[str]:
    """Remove what the plan says, then the record itself: what is left was reported as left."""
    notes = apply(changes)
    files.remove_own(record_path())
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


def _remove_hooks(rec: dict, hooks: list) -> str | None:
    current, raw = claude_settings.read()
    removed = False
    for event, command in hooks:
        current, changed = claude_settings.without_hook(current, event, command)
        removed = removed or changed
    note = None
    path = claude_settings.settings_path()
    if removed:
        if not current and rec.get("settings_created"):  # setup made the file: it goes as it came
            files.remove_config_if_unchanged(path, raw)
        else:
            backup = files.replace_config_if_unchanged(path, raw, claude_settings.dumps(current, raw))
            note = f"backup of {path} as it was: {backup}"
    rec["hooks"] = [h for h in rec.get("hooks", []) if h not in [list(x) for x in hooks]]
    if not rec["hooks"]:
        rec.pop("settings_created", None)
    return note


def _undo_schedule(sched: dict) -> Change:
    kind = sched.get("kind")
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
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
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
        return claude_settings.read()[0]
    except OpenMemoryError:
        return {}
