"""Every location openmemory reads or writes, one small function each.

Each function reads its environment variable at call time and creates nothing:
callers that write make the folders they need.
"""
import ntpath
import os
import re
import stat
from contextlib import contextmanager
from pathlib import Path

from .errors import OpenMemoryError


_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}      # the rest as the CLI shows them: \u001b


def one_line(path) -> str:
    """A folder's path as one line of text: its line breaks and other control characters written
    as escapes (`\\n`, `\\u001b`). A folder may be named anything; in what recall, show, `lessons`
    and the morning report print, its name must not start a line of its own (a heading, a tag)."""
    return _UNSHOWN.sub(lambda m: _ESCAPES.get(m.group()) or f"\\u{ord(m.group()):04x}", str(path))

def home() -> Path:
    """openmemory's own folder: $OPENMEMORY_HOME (an absolute path, or ~/...), else ~/.openmemory."""
    value = os.environ.get("OPENMEMORY_HOME")
    if not value:
        return Path.home() / ".openmemory"
    path = Path(value).expanduser()
    if not path.is_absolute():
        # Refused, not resolved: hooks, the server and the nightly job run in other folders, and
        # each would resolve it against its own, one memory each.
        raise OpenMemoryError(f"OPENMEMORY_HOME is a relative path ({value!r}); hooks, the MCP server and the "
                              f"nightly job run in other folders, so set it to an absolute one, such as "
                              f"{os.path.abspath(path)}")
    return path


def db_path() -> Path:
    """The one SQLite file that holds every episode, session, lesson and prediction."""
    return home() / "memory.db"


def lessons_path() -> Path:
    """The lessons wire format (PROTOCOL.md), rewritten by render."""
    return home() / "lessons.jsonl"


def morning_path() -> Path:
    """The morning report that sleep writes for the person."""
    return home() / "morning.md"


def written_path() -> Path:
    """What render wrote into Claude Code's memory folders, with content hashes."""
    return home() / "written.json"


def vetoed_path() -> Path:
    """Lessons the person deleted from a memory folder: never rendered again."""
    return home() / "vetoed.json"


def tombstones_path() -> Path:
    """The tombstones of what the person forgot, beside the database so a new one keeps them."""
    return home() / "forgotten"


def ignore_list_path() -> Path:
    """Folders kept out of memory, one per line, for places a marker file cannot be put."""
    return home() / "ignore"


JUDGE_MARK = "OPENMEMORY_JUDGE"     # set in the environment of openmemory's own judge run (`claude -p`)


def own_settings_path() -> Path:
    """openmemory's own settings (the judge: which, and its nightly cap), written by setup."""
    return home() / "settings.json"


def judge_dir() -> Path:
    """The empty folder a headless Claude Code judge runs in (marked kept out of memory)."""
    return home() / "judge"


def log_path() -> Path:
    """Where the hook and the server log what they cannot print."""
    return home() / "logs" / "openmemory.log"


def claude_dir() -> Path:
    """Claude Code's configuration folder: $CLAUDE_CONFIG_DIR, else ~/.claude."""
    value = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(value).expanduser() if value else Path.home() / ".claude"


def settings_path() -> Path:
    """Claude Code's user settings (hooks among them): <config dir>/settings.json."""
    return claude_dir() / "settings.json"


def claude_json_path() -> Path:
    """Claude Code's own state, where `claude mcp add --scope user` registers servers."""
    # Measured with 2.1.328: with CLAUDE_CONFIG_DIR set it is $CLAUDE_CONFIG_DIR/.claude.json.
    value = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(value).expanduser() / ".claude.json" if value else Path.home() / ".claude.json"


def setup_record_path() -> Path:
    """What `openmemory setup` added, so `setup --undo` removes exactly that."""
    return home() / "setup.json"


def backups_dir() -> Path:
    """Copies of the person's files as they were before setup changed them."""
    return home() / "backups"


def systemd_user_dir() -> Path:
    """Where systemd looks for a user's own units: $XDG_CONFIG_HOME/systemd/user."""
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "systemd" / "user"


def launch_agents_dir() -> Path:
    """Where launchd looks for a user's agents on macOS."""
    return Path.home() / "Library" / "LaunchAgents"


def projects_dir() -> Path:
    """Where Claude Code keeps one folder of transcripts (and memory/) per project."""
    return claude_dir() / "projects"


def codex_home() -> Path:
    """OpenAI Codex CLI's folder: $CODEX_HOME, else ~/.codex (codex-cli 0.171.0)."""
    value = os.environ.get("CODEX_HOME")
    return Path(value).expanduser() if value else Path.home() / ".codex"


def codex_sessions_dir() -> Path:
    """Where Codex keeps its rollouts: <codex home>/sessions/YYYY/MM/DD/rollout-*.jsonl."""
    return codex_home() / "sessions"


def codex_archived_dir() -> Path:
    """Where Codex moves a session's rollouts when the person archives it (`codex archive`; `unarchive`
    moves them back): <codex home>/archived_sessions/rollout-*.jsonl, the same file under the same
    name, its subagents' beside it (codex-cli 0.171.0)."""
    return codex_home() / "archived_sessions"


def codex_config_path() -> Path:
    """Codex's configuration, where its MCP servers are: <codex home>/config.toml."""
    return codex_home() / "config.toml"


def codex_agents_md() -> Path:
    """The instructions Codex loads into every session, before any repository's: <codex home>/AGENTS.md,
    or AGENTS.override.md beside it when that holds anything (codex-cli 0.171.0 then reads it instead)."""
    override = codex_home() / "AGENTS.override.md"
    try:
        if override.read_bytes().strip():
            return override
    except OSError:
        pass
    return codex_home() / "AGENTS.md"


def gemini_dir() -> Path:
    """Google Gemini CLI's folder: $GEMINI_CLI_HOME/.gemini, else ~/.gemini (gemini-cli 0.61.0
    reads GEMINI_CLI_HOME as its home)."""
    value = os.environ.get("GEMINI_CLI_HOME")
    return (Path(value).expanduser() if value else Path.home()) / ".gemini"


def gemini_settings_path() -> Path:
    """Gemini's user settings, where its MCP servers are: <gemini dir>/settings.json."""
    return gemini_dir() / "settings.json"


def gemini_policy_path() -> Path:
    """openmemory's own policy file for Gemini, allowing its tools by name: <gemini dir>/policies/openmemory.toml."""
    return gemini_dir() / "policies" / "openmemory.toml"


def gemini_md() -> Path:
    """The context Gemini loads into every session, before any project's: <gemini dir>/GEMINI.md."""
    return gemini_dir() / "GEMINI.md"


def gemini_chats_root() -> Path:
    """Where Gemini keeps one folder per project: tmp/<project id>/chats/session-*.jsonl."""
    return gemini_dir() / "tmp"


SLUG_LIMIT = 200  # measured with Claude Code 2.1.328: longer names are cut here and hashed


def project_slug(path) -> str:
    """Claude Code's folder name for a path: each UTF-16 unit outside [A-Za-z0-9] becomes '-'."""
    # Measured with Claude Code 2.1.328 (a JavaScript program): it replaces each UTF-16 code
    # unit, so a character outside the Basic Multilingual Plane (an emoji) becomes "--"; a
    # name over 200 characters is cut to 200 and "-" + base-36 of |Java-style hash| appended.
    text = str(path)
    slug = re.sub(r"[^A-Za-z0-9]", lambda m: "--" if ord(m.group()) > 0xFFFF else "-", text)
    if len(slug) <= SLUG_LIMIT:
        return slug
    return slug[:SLUG_LIMIT] + "-" + _base36(abs(_java_hash(text)))


def _java_hash(text: str) -> int:
    """JavaScript's common string hash: h = h*31 + code unit, as a signed 32-bit integer."""
    units = text.encode("utf-16-le", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (h * 31 + int.from_bytes(units[i:i + 2], "little")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= (1 << 31) else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def work_tree(cwd) -> Path | None:
    """The top of the working tree holding cwd (a linked worktree's own top), or None; None for a
    folder not written as a whole path here (a Windows path read on Linux, `D:\\oh-my-posh`: as a
    relative name it was looked up below the folder openmemory ran in, whose repository it then
    was, and its lessons said "In this repository" or "In this project" by where sleep ran)."""
    if not os.path.isabs(str(cwd)):
        return None
    here = Path(os.path.realpath(cwd))
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def git_root(cwd) -> Path | None:
    """The main working tree of the git repository that holds cwd, or None outside one."""
    top = work_tree(cwd)
    if top is None or (top / ".git").is_dir():
        return top
    return _main_worktree(top, top / ".git")


def _main_worktree(folder: Path, dot_git: Path) -> Path:
    """A linked worktree's `.git` file names its gitdir; the main tree holds the common dir."""
    text = _git_text(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return folder
    gitdir = _resolved(folder / text[len("gitdir:"):].strip())
    common = _linked_common(folder, gitdir)
    if common is None:
        return folder  # a submodule or a plain gitdir file: the folder itself is the root
    return common.parent if common.name == ".git" else folder


def _linked_common(folder: Path, gitdir: Path | None) -> Path | None:
    """The common dir of the repository whose linked worktree folder is, as git keeps one: its
    gitdir is `<common>/worktrees/<id>`, whose `gitdir` file names this folder's `.git` back. None
    otherwise: a `.git` file anyone can write (a downloaded folder's) saying `gitdir: g` with
    `g/commondir` naming ~/work/bank/.git made that folder bank's worktree, its failures bank's
    lessons and bank's lessons its agent's (and kept so once it was removed: sessions.project)."""
    commondir = None if gitdir is None else _git_text(gitdir / "commondir")
    common = None if commondir is None else _resolved(gitdir / commondir)
    if common is None or gitdir.parent != common / "worktrees":
        return None
    back = _git_text(gitdir / "gitdir")
    return common if back and _resolved(gitdir / back) == _resolved(folder / ".git") else None


# A file of git's a folder holds is read only when it is a regular file of at most this size: a
# folder someone else made (a downloaded tarball with its .git) may hold a named pipe there, which
# would block the read for ever, or a link to /dev/zero, which never ends. A real config is a few
# KB; git's own files named here (config, commondir, a `.git` file) are read by every ingest,
# render and recall of a project, so none of them may hang or crash it.
GIT_FILE_LIMIT = 1 << 20


@contextmanager
def _regular_file(path: Path):
    """One of git's files open for binary reading when it is a regular file, else None (missing,
    a named pipe that would block a read for ever, a device): opened without blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):
        yield None
        return
    try:
        with os.fdopen(fd, "rb", closefd=False) as f:
            yield f if stat.S_ISREG(os.fstat(fd).st_mode) else None
    finally:
        os.close(fd)


def _git_text(path: Path) -> str | None:
    """The stripped text of one of git's small files (config, commondir, a `.git` file), or None
    when it is missing, not a regular file, larger than GIT_FILE_LIMIT or holds a NUL byte."""
    try:
        with _regular_file(path) as f:
            data = None if f is None else f.read(GIT_FILE_LIMIT + 1)
    except OSError:
        return None
    if data is None or len(data) > GIT_FILE_LIMIT or b"\0" in data:
        return None
    return data.decode("utf-8", "replace").strip()


def _resolved(path: Path) -> Path | None:
    """path with its links resolved, or None where it cannot be (a loop of links, a NUL byte)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return None


# A folder as a Windows machine writes it (C:\\Users\\…, \\\\server\\share\\…). Read elsewhere (a
# transcript copied from that machine) it names nothing here: os.path would take it for a
# relative name and resolve it against whatever folder openmemory runs in.
_WINDOWS_FOLDER = re.compile(r"^(?:[A-Za-z]:[\\/]|[\\/]{2}[^\\/]+[\\/])")


# The account a folder is under: /Users/<name>/… (macOS), /home/<name>/… (Linux), C:\\Users\\<name>\\…
# (Windows, either separator, any drive).
_HOME_OWNER = re.compile(r"^(?:/Users/|/home/|[A-Za-z]:[\\/]Users[\\/])([^/\\]+)", re.I)


def home_owner(cwd) -> str:
    """The name of the account whose home folder cwd is in, lowercased ("neilhart" of
    /Users/neilhart/Documents/app), else "" (a folder outside any home: /root, /srv, F:\\code)."""
    found = _HOME_OWNER.match(str(cwd or ""))
    return found.group(1).lower() if found else ""


def is_foreign(cwd) -> bool:
    """Whether a working folder is written for another kind of system (a Windows path here)."""
    return os.sep != "\\" and bool(_WINDOWS_FOLDER.match(str(cwd)))


def is_absolute(cwd) -> bool:
    """Whether a working folder is a whole path, on this system or as Windows writes one."""
    return os.path.isabs(str(cwd)) or is_foreign(cwd)


def project_of(cwd) -> str:
    """The project a folder belongs to: its repository's main working tree, else the folder itself.

    Used by sleep (a lesson's project), render (which memory folder) and recall (in this project?).
    Also for a folder since deleted (its repository may remain) and for a name the file system
    cannot hold (a component longer than NAME_MAX: the name, normalised). A folder that cannot be
    looked up here is kept as written: a Windows path read elsewhere (its separators made
    Windows's own), a relative one, one that does not exist in any repository here.
    """
    text = str(cwd)
    if is_foreign(text):
        return _worktree_home(ntpath.normpath(text), "\\")
    if not os.path.isabs(text):
        return text
    text = moved_to(text)
    if text in _SEEN_IN and not os.path.exists(text):
        return _SEEN_IN[text]
    try:
        root = git_root(text)
        if root:
            return str(root)
        return os.path.realpath(text) if os.path.exists(text) else _worktree_home(os.path.normpath(text), "/")
    except OSError:
        return _worktree_home(os.path.normpath(text), "/")


# The repository each working folder belonged to when its session was read (sessions.project, as
# store.connect loads it): a linked worktree is often made beside its repository, not inside it
# (`git worktree add ../shop-fix`, Conductor's workspaces), and removed once merged. Gone, nothing
# in the folder's name says whose it was, so project_of asks here for a folder that no longer
# exists; a folder that exists is always looked up.
_SEEN_IN: dict = {}


def seen_in(projects: dict) -> None:
    """{folder: the repository it belonged to when read}, for project_of (the store's, whole)."""
    global _SEEN_IN
    _SEEN_IN = dict(projects)


# The project folders the person moved or renamed (`openmemory lessons move OLD NEW`, the store's
# project_moves, as store.connect loads it): {old folder: the folder it is now}.
_MOVED: dict = {}


def moved(moves: dict) -> None:
    """{old project folder: the folder the person moved it to}, for project_of (the store's, whole)."""
    global _MOVED
    _MOVED = dict(moves)


def moved_to(folder: str) -> str:
    """Where a folder is now when it is, or is under, a project folder the person moved (the same
    place under the new folder) and nothing is there now; else the folder as written. A folder made
    again at the old path is its own (what the move filed under the new one stays there:
    store.move_project rewrote it)."""
    if not _MOVED or os.path.exists(folder):
        return folder
    for _ in range(len(_MOVED)):        # a folder moved, then moved again: each step once at most
        found = max((old for old in _MOVED if folder == old or folder.startswith(old.rstrip("/") + "/")),
                    key=len, default=None)
        if found is None or os.path.exists(folder):
            break
        folder = _MOVED[found] + folder[len(found):] if folder != found else _MOVED[found]
    return folder


def gone_from(cwd) -> bool:
    """Whether cwd is a folder removed since its session was read in another folder's project (a
    linked worktree gone): project_of names its repository; the folder as written is its own tree."""
    return cwd in _SEEN_IN and not os.path.exists(cwd)


def project_here(cwd) -> str | None:
    """The project of a working folder that is on this machine now (project_of), kept with its
    session, when it is another folder (a linked worktree's repository, a subfolder's); None for
    a folder that is its own project or is not here (removed since, another machine's)."""
    text = str(cwd or "")
    if not text or is_foreign(text) or not os.path.isabs(text):
        return None
    try:
        project = project_of(text) if os.path.isdir(text) else None
    except OSError:
        return None
    return project if project and project != text else None


def project_identity(cwd) -> str:
    """What two folders are one project by: the `origin` remote of the repository holding the
    folder when it exists here and has one (two clones of one repository are one project), else
    its project (project_of, by project_key). A folder whose project is not on this machine is
    never resolved: it stays its project as written."""
    root = project_of(cwd)
    if not is_foreign(root) and os.path.isabs(root):
        try:
            url = origin_url(root) if os.path.isdir(root) else None
        except OSError:
            url = None
        if url:
            return "origin " + url
    return project_key(root)


def same_project(a, b) -> bool:
    """Whether two folders are one project (project_identity; two clones only when they share a
    commit: shares_history); None, for every project, only as None."""
    if not a or not b:
        return not a and not b
    if a == b:
        return True
    found = project_identity(a)
    return found == project_identity(b) and (not found.startswith("origin ") or shares_history(a, b))


class Identities:
    """Each project root's identity, read once (for one render, one night, one recall): its
    project_identity, but a folder naming the same `origin` as one seen before is its clone only
    when they share a commit (shares_history), else a project of its own (a downloaded folder
    whose .git claims another repository's origin gets none of that repository's lessons)."""

    def __init__(self):
        self._of: dict = {}
        self._firsts: dict = {}     # origin identity -> the first root of each group that claims it

    def __call__(self, root) -> str:
        if root not in self._of:
            found = project_identity(root)
            if found.startswith("origin "):
                firsts = self._firsts.setdefault(found, [])
                n = next((i for i, first in enumerate(firsts) if first == root or shares_history(first, root)), None)
                if n is None:
                    firsts.append(root)
                    n = len(firsts) - 1
                found = found if n == 0 else f"{found} #{n}"
            self._of[root] = found
        return self._of[root]


def origin_url(cwd) -> str | None:
    """The `origin` remote of the repository holding cwd, read from its git config without
    running git (a linked worktree's from its common dir), normalised (remote_key); None
    without one."""
    top = work_tree(cwd)
    if top is None:
        return None
    common = _common_dir(top, _git_dir(top))
    text = None if common is None else _git_text(common / "config")
    if text is None:
        return None
    url = _config_value(text, "remote", "origin", "url")
    return remote_key(url, git_root(cwd) or top) if url else None


def _common_dir(top: Path, gitdir: Path | None) -> Path | None:
    """The directory the git directory of working tree top shares with its repository's other
    worktrees (its `commondir`, as git keeps it: _linked_common), else the git directory itself;
    None where it cannot be resolved."""
    if gitdir is None:
        return None
    if _git_text(gitdir / "commondir") is None:
        return gitdir
    return _linked_common(top, gitdir) or gitdir


def shares_history(a, b) -> bool:
    """Whether the repositories holding two folders share a commit: one of the commits the refs
    of either name (HEAD, branches, origin's branches) is an object the other holds. Clones of
    one repository do; a folder whose git config only claims that `origin` (a downloaded
    tarball's .git, written by anyone) holds none of its commits, so it is no clone of it."""
    tops = work_tree(a), work_tree(b)
    if None in tops:
        return False
    gitdirs = [_git_dir(top) for top in tops]
    commons = [_common_dir(top, g) for top, g in zip(tops, gitdirs)]
    if None in gitdirs or None in commons:
        return False
    if commons[0] == commons[1]:
        return True         # worktrees of one repository
    return _holds_any(commons[1], _commits_named(gitdirs[0], commons[0])) \
        or _holds_any(commons[0], _commits_named(gitdirs[1], commons[1]))


_OBJECT_ID = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")     # SHA-1, or SHA-256
REFS_READ = 64          # commits a repository's refs are read for, at most: enough to meet a clone's


def _commits_named(gitdir: Path, common: Path) -> list:
    """The commits a repository's refs name (HEAD first, then its branches and origin's, loose
    and packed), at most REFS_READ; read from its files, never by running git."""
    found = []

    def add(text):
        if text and _OBJECT_ID.match(text) and text not in found:
            found.append(text)
    head = _git_text(gitdir / "HEAD") or ""
    if head.startswith("ref:"):
        name = head[len("ref:"):].strip()
        if name.startswith("refs/") and ".." not in name:
            add(_git_text(common / name))
    else:
        add(head)
    for folder in ("refs/heads", "refs/remotes/origin"):
        for where, _, names in os.walk(common / folder):
            for name in sorted(names):
                if len(found) >= REFS_READ:
                    return found
                add(_git_text(Path(where) / name))
    for line in (_git_text(common / "packed-refs") or "").splitlines()[:4 * REFS_READ]:
        if len(found) >= REFS_READ:
            break
        sha, _, ref = line.partition(" ")
        if ref.startswith(("refs/heads/", "refs/remotes/origin/")):
            add(sha)
    return found


def _holds_any(common: Path, commits: list) -> bool:
    """Whether a repository holds any of these objects: a loose object, or one in a pack's index
    (version 2: a fan-out table, then the sorted ids, searched by halves)."""
    if not commits:
        return False
    objects = common / "objects"
    if any(os.path.isfile(objects / c[:2] / c[2:]) for c in commits):
        return True
    try:
        indexes = sorted(p for p in os.listdir(objects / "pack") if p.endswith(".idx"))[:256]
    except (OSError, ValueError):
        return False
    wanted = [bytes.fromhex(c) for c in commits]
    return any(_index_holds(objects / "pack" / name, wanted) for name in indexes)


def _index_holds(path: Path, wanted: list) -> bool:
    try:
        with _regular_file(path) as f:
            if f is None:
                return False
            head = f.read(8 + 1024)
            if len(head) < 8 + 1024 or head[:8] != b"\xfftOc\x00\x00\x00\x02":
                return False
            fan = [int.from_bytes(head[8 + 4 * i:12 + 4 * i], "big") for i in range(256)]
            size = os.fstat(f.fileno()).st_size
            for raw in wanted:
                width = len(raw)
                if 8 + 1024 + fan[255] * width > size:
                    continue
                lo, hi = (fan[raw[0] - 1] if raw[0] else 0), fan[raw[0]]
                while lo < hi:
                    mid = (lo + hi) // 2
                    f.seek(8 + 1024 + mid * width)
                    here = f.read(width)
                    if here == raw:
                        return True
                    lo, hi = (mid + 1, hi) if here < raw else (lo, mid)
    except OSError:
        return False
    return False


def _git_dir(top: Path) -> Path | None:
    """The git directory of a working tree: its `.git` folder, or the one its `.git` file names
    (None where that cannot be resolved)."""
    dot_git = top / ".git"
    if dot_git.is_dir():
        return dot_git
    text = _git_text(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return dot_git
    return _resolved(top / text[len("gitdir:"):].strip())


_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')


def _config_value(text: str, section: str, subsection: str, key: str) -> str | None:
    """The last value of `[section "subsection"] key` in a git config file's text (sections and
    keys without case, the subsection with it, as git reads them); includes are not followed."""
    found, inside = None, False
    for line in text.splitlines():
        head = _SECTION.match(line)
        if head:
            inside = head.group(1).lower() == section and (head.group(2) or "").replace('\\"', '"') == subsection
            line = head.group(3)
        if not inside:
            continue
        name, eq, value = line.partition("=")
        if eq and name.strip().lower() == key:
            value = value.strip()
            value = re.split(r'\s[#;]', value, maxsplit=1)[0].strip() if not value.startswith('"') else value
            found = value.strip('"').strip()
    return found


_SCP_LIKE = re.compile(r"^(?:[^@/:]+@)?([^/:]+):(?!//)(.+)$")      # git@github.com:org/cli.git
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/]*@)?([^/:]+)(?::\d*)?(/.*)?$")


def remote_key(url: str, top) -> str:
    """A remote's URL as two clones of one repository both write it: `git@github.com:org/cli.git`,
    `https://github.com/org/cli` and `ssh://git@github.com:22/org/cli.git/` are all
    `github.com/org/cli` (host without case; user, port, scheme and `.git` dropped); a path on
    this machine (`/srv/git/cli.git`, `../cli`, `file://...`) is its real path, `.git` dropped."""
    url = url.strip()
    if url.startswith("file://"):
        url = url[len("file://"):]
    found = _URL.match(url)
    if found:
        host, path = found.group(1).lower(), found.group(2) or ""
    else:
        found = _SCP_LIKE.match(url) if not os.path.isabs(url) and not url.startswith(".") else None
        if found and "/" not in found.group(1):
            host, path = found.group(1).lower(), "/" + found.group(2).lstrip("/")
        else:
            host, path = "", os.path.realpath(os.path.join(str(top), os.path.expanduser(url)))
    path = path.rstrip("/")
    if path.endswith(".git"):
        path = path[:-len(".git")].rstrip("/")
    return host + path


# A linked worktree kept inside its repository, where the tools that make them put it:
# `<repo>/.worktrees/<name>` (the superpowers skill), `<repo>/.claude/worktrees/<name>` (Claude
# Code's --worktree). Where the folder cannot be looked up (a transcript from another machine),
# this is all that tells its repository.
_WORKTREE_HOME = re.compile(r"^(.+?)[\\/](?:\.worktrees|\.claude[\\/]worktrees)(?:[\\/].*)?$")


def _worktree_home(folder: str, sep: str) -> str:
    """The repository a folder that cannot be looked up belongs to, when it sits in a worktree
    folder inside it (_WORKTREE_HOME); else the folder as written."""
    found = _WORKTREE_HOME.match(folder)
    return found.group(1) if found and found.group(1).strip(sep) else folder


def project_key(project: str) -> str:
    """What two projects are compared by: a Windows folder without case, either separator."""
    return ntpath.normcase(project) if is_foreign(project) else project


def memory_dir_for(cwd) -> Path:
    """The auto-memory folder Claude Code loads MEMORY.md from for a session started in cwd."""
    # Seen with Claude Code 2.1.328: a session in repo/sub/dir loads the MEMORY.md of repo.
    return projects_dir() / project_slug(project_of(cwd)) / "memory"


def all_paths() -> dict:
    """Every location by name, for `openmemory paths`."""
    return {
        "home": str(home()),
        "db": str(db_path()),
        "lessons": str(lessons_path()),
        "morning": str(morning_path()),
        "written": str(written_path()),
        "vetoed": str(vetoed_path()),
        "log": str(log_path()),
        "ignore": str(ignore_list_path()),
        "forgotten": str(tombstones_path()),
        "claude_dir": str(claude_dir()),
        "projects": str(projects_dir()),
        "settings": str(settings_path()),
        "own_settings": str(own_settings_path()),
        "setup_record": str(setup_record_path()),
        "codex_dir": str(codex_home()),
        "codex_sessions": str(codex_sessions_dir()),
        "codex_archived": str(codex_archived_dir()),
        "gemini_dir": str(gemini_dir()),
        "gemini_chats": str(gemini_chats_root()),
    }


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file here (False when either is missing)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
