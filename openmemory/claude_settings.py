"""Claude Code's settings.json as data: read it, and merge openmemory's hooks in and out.

The file is the person's: every other key and hook is kept (parsed and written back in its
own indentation, so its meaning is unchanged). Pure but for `read`; files.py writes it.
"""
import json
import re
from pathlib import Path

from . import paths
from .errors import OpenMemoryError

# Any hook command that runs openmemory's hook or ingest: setup's own, one added by hand
# from the README (`openmemory hook`), or the plugin's launcher.
OPENMEMORY_COMMAND = re.compile(r"openmemory[\"']?(\s+\S+)*?\s+(hook|ingest)\b")


class SettingsError(OpenMemoryError):
    """settings.json cannot be read or written."""


def settings_path() -> Path:
    return paths.settings_path()


def read(path: Path | None = None) -> tuple[dict, bytes | None]:
    """(settings, the bytes read) of settings.json; ({}, None) when there is none."""
    path = path or settings_path()
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
        raise SettingsError(f"\"hooks\" in {settings_path()} is not an object; fix it, then run this again")
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise SettingsError(f"\"hooks.{event}\" in {settings_path()} is not a list; fix it, then run this again")
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


def dumps(settings: dict, read_bytes: bytes | None) -> bytes:
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
