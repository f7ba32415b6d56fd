"""Every file openmemory writes, each through the writer for its place and that writer's guard.

Three writers, and nothing else in openmemory creates, replaces or removes a file (the store
makes its database, the CLI its log folder):

- its own files, only under OPENMEMORY_HOME, private (`write_own`, `append_own`, `Lock`):
  lessons.jsonl, written.json, vetoed.json, morning.md, the tombstones (`forgotten`,
  appended), the lock files, setup's record and backups, the marker of a first ingest
  written unsynced (store.py);
- Claude Code's memory folders, only inside `<config dir>/projects/*/memory/` (also once
  symlinks resolve), never over content that changed since it was read: a file the person
  (or Claude Code) changed meanwhile is left as it is (`replace_memory_file_if_unchanged`);
- the configuration `openmemory setup` manages, only at its one known path: Claude Code's
  settings.json (through its symlink, so a file kept in a dotfiles repository stays a link;
  copied to OPENMEMORY_HOME/backups/ before it is changed), and the nightly job's systemd
  user units or launchd agent (`replace_config_if_unchanged`, `write_config`).

Each writes atomically: a temporary file beside its target, complete and synced before the
one rename that puts it in place (the primitives at the top; call the writers, not these).
"""
import errno
import fcntl
import os
import stat
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from . import paths
from .errors import OpenMemoryError, RenderError

# --------------------------------------------------------------------------------------
# The atomic primitives the three writers share. Nothing here decides where a write may go.

TEMP_SUFFIX = ".om-tmp"


def _resolved(path: Path) -> Path:
    """Where a write to path would land (its folder's symlinks resolved); refuses a non-file name."""
    path = Path(path)
    if path.name in ("", ".", "..") or os.sep in path.name:
        raise RenderError(f"refusing to write {path}: not a file name")
    return Path(os.path.realpath(path.parent)) / path.name


def read(path: Path):
    """A file's bytes, or None when it does not exist or is no regular file: a named pipe (which
    would block the read for ever: a repository's AGENTS.md is anyone's) or a device."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def _temp_beside(path: Path, data: bytes, mode: int) -> str:
    """A complete, synced temporary file in path's folder, to be renamed or linked into place."""
    # The writer's pid in the name: a temporary file whose writer is gone (killed between
    # writing and renaming) is swept by the next render (`_stale_temps`).
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=str(path.parent))
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _replace(path: Path, data: bytes, mode: int) -> None:
    """Put data at path in one rename, through a synced temporary file beside it (none left behind)."""
    tmp = _temp_beside(path, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _stale_temps(folder: Path) -> list:
    """The temporary files in folder whose writing process no longer runs."""
    out = []
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for name in names:
        if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
            continue
        parts = name[: -len(TEMP_SUFFIX)].rsplit(".", 2)
        pid = int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None
        if pid is None or not running(pid):
            out.append(Path(folder) / name)
    return out


def running(pid: int) -> bool:
    """Whether a process with this pid runs (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _unlink(path) -> None:
    """Remove a file that may already be gone."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


# --------------------------------------------------------------------------------------
# openmemory's own files: under OPENMEMORY_HOME, and only there

def own_guard(path: Path) -> Path:
    """Refuse any write outside OPENMEMORY_HOME."""
    path = Path(path)
    real = _resolved(path)
    home = Path(os.path.realpath(paths.home()))
    if real.parent == home or home in real.parents:
        return path
    raise RenderError(f"refusing to write {path}: openmemory writes its own files only inside {paths.home()}")


def write_own(path: Path, data: bytes) -> None:
    """Atomically (re)write one of openmemory's own files under OPENMEMORY_HOME, mode 0600."""
    own_guard(path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _replace(path, data, 0o600)


def append_own(path: Path, data: bytes) -> None:
    """Add data at the end of one of openmemory's own files (0600, never through a symlink),
    synced before it returns; a line a killed writer left unfinished is ended first."""
    own_guard(path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        while data:
            data = data[os.write(fd, data):]
        os.fsync(fd)
    finally:
        os.close(fd)


def drop_own_lines(path: Path, gone) -> int:
    """Take the lines for which gone(line) is true out of one of openmemory's own files (the log),
    rewritten in place: a process appending to it (O_APPEND) goes on writing at its end. Returns
    how many went; a file that is not there is fine."""
    own_guard(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    except FileNotFoundError:
        return 0
    try:
        with os.fdopen(fd, "r+b") as f:
            lines = f.read().splitlines(keepends=True)
            kept = [ln for ln in lines if not gone(ln.decode("utf-8", "replace"))]
            if len(kept) != len(lines):
                f.seek(0)
                f.write(b"".join(kept))
                f.truncate()
                f.flush()
                os.fsync(f.fileno())
            return len(lines) - len(kept)
    except OSError:
        return 0


def remove_own(path: Path) -> None:
    """Remove one of openmemory's own files (setup's record, when undone); gone already is fine."""
    own_guard(path)
    _unlink(path)


def move_own(path: Path, to: Path) -> None:
    """Give one of openmemory's own files another name under OPENMEMORY_HOME, never over a file."""
    own_guard(path)
    own_guard(to)
    if to.exists():
        raise FileExistsError(f"{to} exists")
    os.rename(path, to)


def sweep_own_temps() -> list:
    """Remove temporary files a killed writer left in openmemory's folder; returns their names."""
    gone = []
    for tmp in _stale_temps(paths.home()):
        own_guard(tmp)
        _unlink(tmp)
        gone.append(str(tmp))
    return gone


class Lock:
    """An exclusive lock on a file of openmemory's own folder, waited for up to wait_seconds
    (one render at a time: cron's sleep and a manual render may overlap)."""

    def __init__(self, name: str, wait_seconds: float, holder: str):
        self.path, self.wait, self.holder = paths.home() / name, wait_seconds, holder

    def __enter__(self):
        path = own_guard(self.path)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(self.fd)
                    raise RenderError(f"another {self.holder} has held {path} for {self.wait} s; "
                                      f"try again when it has finished")
                time.sleep(0.05)

    def __exit__(self, *exc):
        os.close(self.fd)


# --------------------------------------------------------------------------------------
# Claude Code's memory folders: inside `<config dir>/projects/*/memory/`, and nowhere else in
# Claude Code's folder

def memory_guard(path: Path) -> Path:
    """Refuse any write outside `<config dir>/projects/*/memory/` but the other agents' instruction
    files render keeps a section of (agent_instruction_file)."""
    path = Path(path)
    real = _resolved(path)
    projects = Path(os.path.realpath(paths.projects_dir()))
    if real.parent.name == "memory" and real.parent.parent.parent == projects:
        return path
    if agent_instruction_file(path):
        return path
    raise RenderError(f"refusing to write {path}: openmemory writes in Claude Code's folder only inside "
                      f"{paths.projects_dir()}/*/memory/, and of the other agents' files only their "
                      f"instruction files")


def agent_instruction_file(path: Path) -> bool:
    """Whether path is an instruction file of another agent's that render may keep a section of:
    Codex's $CODEX_HOME/AGENTS.md, Gemini's ~/.gemini/GEMINI.md and a project's private
    ~/.gemini/tmp/<project>/memory/MEMORY.md; or a repository's AGENTS.md that already holds
    openmemory's two marker lines (the person put them there: the only way into a repository)."""
    real = Path(os.path.realpath(path))
    if real in (Path(os.path.realpath(paths.codex_agents_md())), Path(os.path.realpath(paths.gemini_md()))):
        return True
    if real.name == "MEMORY.md" and real.parent.name == "memory" and \
            real.parent.parent.parent == Path(os.path.realpath(paths.gemini_chats_root())):
        return True
    if real.name == "AGENTS.md":
        try:
            held = read(real) if os.stat(real).st_size <= AGENTS_MD_LIMIT else None
        except OSError:
            return False
        lines = [] if held is None else [l.strip() for l in held.decode("utf-8", "replace").splitlines()]
        return MARKERS[0] in lines and MARKERS[1] in lines
    return False


def git_would_commit(path: Path) -> str:
    """Why git would take this file of a repository into a commit ("" when it would not: no git
    repository holds it, or git ignores it and does not track it). A lesson written into a file git
    tracks is in the next `git commit -a` and, pushed, public; one git does not ignore, in the next
    `git add -A`. Git is asked (`ls-files`, `check-ignore`: .gitignore, .git/info/exclude and the
    person's core.excludesFile), with the repository's fsmonitor command off (a downloaded
    repository's config may name any program) and no lock taken."""
    import shutil
    import subprocess
    if paths.work_tree(path.parent) is None:
        return ""
    git = shutil.which("git")
    if git is None:
        return "it is in a git repository, and git is not here to say whether a commit would take it"
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
    base = [git, "-c", "core.fsmonitor=false", "-C", str(path.parent)]

    def ask(*args):
        try:
            return subprocess.run([*base, *args, "--", path.name], env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=GIT_TIMEOUT_S).returncode
        except (OSError, subprocess.SubprocessError):
            return None
    tracked = ask("ls-files", "--error-unmatch")
    if tracked == 0:
        return "git tracks it, so a commit would take the lessons with it"
    ignored = ask("check-ignore", "-q") if tracked == 1 else None
    if ignored == 0:
        return ""
    if ignored == 1:
        return "git does not ignore it, so `git add` would take the lessons with it"
    return "git could not say whether a commit would take it"


GIT_TIMEOUT_S = 10
MARKERS = ("<!-- openmemory:begin -->", "<!-- openmemory:end -->")   # render.BEGIN, render.END
AGENTS_MD_LIMIT = 4 << 20   # a repository's AGENTS.md larger than this (a sparse file in a tarball) is none of ours


def make_memory_folder(folder: Path) -> None:
    """Create a project's memory folder (private to the person)."""
    memory_guard(folder / "MEMORY.md")
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)


def replace_memory_file_if_unchanged(path: Path, expected: bytes | None, data: bytes, before_replace=None) -> bool:
    """Put data at path only if path still holds expected (None: does not exist yet).

    Returns False, writing nothing, when someone else changed the file since it was read.
    The new content is complete in a temporary file beside it and moved in with one rename;
    a new file is linked in, which fails rather than replace a file that appeared meanwhile.
    """
    memory_guard(path)
    try:
        mode = os.stat(path).st_mode & 0o777 if expected is not None else 0o600
    except FileNotFoundError:
        return False
    tmp = _temp_beside(path, data, mode)
    try:
        if before_replace:
            before_replace(path)  # tests make the race happen here
        if expected is None:
            try:
                os.link(tmp, path)
            except FileExistsError:
                return False
            except OSError:  # a file system without hard links: exclusive create instead
                return _create_exclusive(path, data, mode)
            return True
        if read(path) != expected:
            return False
        os.replace(tmp, path)
        tmp = None
        return True
    finally:
        if tmp:
            _unlink(tmp)


def _create_exclusive(path: Path, data: bytes, mode: int) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return True


def remove_memory_file_if_unchanged(path: Path, expected: bytes) -> bool:
    """Delete path only if it still holds exactly what openmemory wrote."""
    memory_guard(path)
    if read(path) != expected:
        return False
    _unlink(path)
    return True


def sweep_memory_temps(folder: Path) -> list:
    """Remove temporary files a killed writer left in a memory folder; returns their names."""
    gone = []
    for tmp in _stale_temps(folder):
        memory_guard(tmp)
        _unlink(tmp)
        gone.append(str(tmp))
    return gone


# --------------------------------------------------------------------------------------
# The configuration `openmemory setup` manages: settings.json, the nightly job's units or agent

SYSTEMD_UNITS = ("openmemory-sleep.service", "openmemory-sleep.timer")
LAUNCHD_AGENT = "com.openmemory.sleep.plist"


class ConfigError(OpenMemoryError):
    """A configuration file cannot be written safely."""


def config_guard(path: Path) -> Path:
    """Refuse any write but settings.json, the two systemd units and the launchd agent."""
    _resolved(path)  # refuses a name that is no file name
    real = Path(os.path.realpath(path))  # through a symlinked file too: the write lands there
    places = [paths.settings_path(), paths.launch_agents_dir() / LAUNCHD_AGENT]
    places += [paths.systemd_user_dir() / name for name in SYSTEMD_UNITS]
    places += [paths.codex_config_path(), paths.gemini_settings_path(), paths.gemini_policy_path()]
    allowed = {Path(os.path.realpath(p)) for p in places}
    if real in allowed:
        return real
    raise ConfigError(f"refusing to write {path}: setup writes only {paths.settings_path()}, the "
                      f"openmemory-sleep units, the {LAUNCHD_AGENT} agent, Codex's config.toml and "
                      f"Gemini's settings.json and policies/openmemory.toml")


def replace_config_if_unchanged(path: Path, expected: bytes | None, data: bytes) -> Path | None:
    """Put data at path (through a symlink) if it still holds expected (None: absent); returns
    the backup made of what was there. Raises ConfigError, writing nothing, if it changed."""
    target = config_guard(path)
    current = read(target)
    if current != expected:
        raise ConfigError(f"{path} changed while openmemory was updating it; run this again")
    backup = _back_up(target, current) if current is not None else None
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = os.stat(target).st_mode & 0o777 if current is not None else 0o600
    tmp = _temp_beside(target, data, mode)
    try:
        if read(target) != expected:  # the last look before the rename
            raise ConfigError(f"{path} changed while openmemory was updating it; run this again")
        os.replace(tmp, target)
        tmp = None
    finally:
        if tmp:
            _unlink(tmp)
    return backup


def write_config(path: Path, data: bytes) -> None:
    """(Re)write a unit or agent file of openmemory's own nightly job."""
    target = config_guard(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    _replace(target, data, 0o644)


def remove_config_if_unchanged(path: Path, expected: bytes) -> bool:
    """Delete path only if it still holds exactly expected (what setup wrote); True if deleted."""
    target = config_guard(path)
    if read(target) != expected:
        return False
    if target == Path(os.path.realpath(paths.settings_path())):
        _back_up(target, expected)
    _unlink(target)
    return True


def _back_up(target: Path, content: bytes) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    backup = paths.backups_dir() / f"{target.name}.{stamp}"
    write_own(backup, content)
    return backup
