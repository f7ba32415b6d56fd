"""Claude Code's settings.json: openmemory's hooks merged in and out, written safely with a backup.

The file is the person's: every other key and hook is kept (parsed and written back, so
its meaning is unchanged), a symlinked file is written through its link, a copy of what
was there goes to OPENMEMORY_HOME/backups/ first, and a file that changed while we worked
is never overwritten.
"""
import json
import os
import re
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from . import paths
from .store import OpenMemoryError

# Any hook command that runs openmemory's hook or ingest: setup's own, one added by hand
# from the README (`openmemory hook`), or the plugin's launcher.
OPENMEMORY_COMMAND = re.compile(r"openmemory[\"']?(\s+\S+)*?\s+(hook|ingest)\b")


class SettingsError(OpenMemoryError):
    """settings.json cannot be read or written."""


def settings_path() -> Path:
    """Claude Code's user settings: <config dir>/settings.json."""
    return paths.claude_dir() / "settings.json"


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


def write(settings: dict, read_bytes: bytes | None, path: Path | None = None) -> Path | None:
    """Write settings over the file whose bytes were read_bytes; returns the backup made, if any.

    Refuses when the file changed since it was read (Claude Code or the person wrote it).
    """
    path = path or settings_path()
    target = Path(os.path.realpath(path))  # a settings.json kept in a dotfiles repo stays a link
    current = _bytes_or_none(target)
    if current != read_bytes:
        raise SettingsError(f"{path} changed while openmemory was updating it; run this again")
    backup = _backup(target, current) if current is not None else None
    indent, end = _style(read_bytes)
    text = json.dumps(settings, ensure_ascii=False, indent=indent) + end
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = os.stat(target).st_mode & 0o777 if current is not None else 0o600
    fd, tmp = tempfile.mkstemp(prefix=".settings.", suffix=".openmemory", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if _bytes_or_none(target) != read_bytes:  # the last look before the rename
            raise SettingsError(f"{path} changed while openmemory was updating it; run this again")
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return backup


def remove_if_empty(path: Path | None = None) -> bool:
    """Delete settings.json when it holds nothing at all (setup created it); True if deleted."""
    path = path or settings_path()
    settings, raw = read(path)
    if raw is None or settings:
        return False
    _backup(Path(os.path.realpath(path)), raw)
    os.unlink(path)
    return True


def backups_dir() -> Path:
    return paths.home() / "backups"


def _backup(target: Path, content: bytes) -> Path:
    folder = backups_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    backup = folder / f"{target.name}.{stamp}"
    with open(backup, "xb") as f:
        f.write(content)
    shutil.copymode(target, backup)
    return backup


def _style(raw: bytes | None) -> tuple:
    """(indent, final newline) the file was written with, so a merge changes only what it must."""
    text = (raw or b"").decode("utf-8", "replace")
    found = re.search(r"\n([ \t]+)\S", text)
    indent = found.group(1) if found else 2
    return indent, "\n" if not text or text.endswith("\n") else ""


def _bytes_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _groups(settings: dict, event: str) -> list:
    hooks = settings.get("hooks")
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    return [g for g in groups if isinstance(g, dict)] if isinstance(groups, list) else []
