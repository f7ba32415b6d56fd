"""Shared test plumbing: a private home for every test, and the CLI as a subprocess."""
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "claude-code"
if os.environ.get("OPENMEMORY_CORPUS"):
    CORPUS = Path(os.environ["OPENMEMORY_CORPUS"])


def corpus_files():
    """The real transcripts of ../shared/corpus (top-level session files only), or skip."""
    if not CORPUS.is_dir():
        raise unittest.SkipTest(f"real transcript corpus not found at {CORPUS} (set OPENMEMORY_CORPUS)")
    return sorted(p for p in CORPUS.rglob("*.jsonl") if "subagents" not in p.parts)


class TempHome(unittest.TestCase):
    """Every test gets its own OPENMEMORY_HOME and CLAUDE_CONFIG_DIR: the real home is never touched."""

    def setUp(self):
        super().setUp()
        self._tmp = tempfile.TemporaryDirectory(prefix="om-test-")
        self.tmp = Path(self._tmp.name)
        self.home = self.tmp / "om-home"
        self.claude = self.tmp / "claude"
        self.projects = self.claude / "projects"
        self._saved = {k: os.environ.get(k) for k in ("OPENMEMORY_HOME", "CLAUDE_CONFIG_DIR", "HOME",
                                                      "CODEX_HOME", "GEMINI_CLI_HOME")}
        os.environ.pop("CODEX_HOME", None)      # the other agents' folders: under the temporary HOME
        os.environ.pop("GEMINI_CLI_HOME", None)
        os.environ["OPENMEMORY_HOME"] = str(self.home)
        os.environ["CLAUDE_CONFIG_DIR"] = str(self.claude)
        os.environ["HOME"] = str(self.tmp / "user-home")  # anything that still reaches for ~ lands here

    def tearDown(self):
        for key, value in self._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._tmp.cleanup()
        super().tearDown()

    def env(self, **extra):
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        env.pop("OPENMEMORY_DEBUG", None)
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def path_with_openmemory(self) -> str:
        """A PATH on which `openmemory` runs this checkout, as the installed console script would."""
        bin_dir = self.tmp / "bin"
        shim = bin_dir / "openmemory"
        if not shim.exists():
            bin_dir.mkdir(exist_ok=True)
            shim.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m openmemory "$@"\n')
            shim.chmod(0o755)
        return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"

    def cli(self, *args, input=None, env=None, timeout=60):
        """Run `python -m openmemory ARGS`; returns CompletedProcess with text stdout/stderr."""
        return subprocess.run([sys.executable, "-m", "openmemory", *map(str, args)], input=input,
                              capture_output=True, text=True, env=env or self.env(), cwd=str(self.tmp),
                              timeout=timeout)

    def ok(self, *args, **kw):
        """Run the CLI and insist on exit 0 with nothing unexpected on stderr."""
        p = self.cli(*args, **kw)
        self.assertEqual(p.returncode, 0, f"openmemory {' '.join(map(str, args))} failed:\n{p.stderr}")
        return p


HARNESS_DIR = Path(os.environ.get("OPENMEMORY_E2E_HARNESS") or ROOT.parent / "shared" / "e2e")
_claude = {}


def claude_code():
    """(harness module, claude binary) for the real-client tests, or SkipTest saying why.

    The binary is $CLAUDE_BIN, else the pinned npm package the harness installs once into
    ~/.cache/openmemory-e2e/ (npm is the one network step of the real-client tests). Call it
    before TempHome moves HOME (setUpModule / setUpClass): the cache lives in the real home.
    OPENMEMORY_E2E=skip skips these tests outright.
    """
    if "result" in _claude:
        return _claude["result"]
    if os.environ.get("OPENMEMORY_E2E") == "skip":
        raise unittest.SkipTest("real-client tests skipped (OPENMEMORY_E2E=skip)")
    if not (HARNESS_DIR / "harness.py").is_file():
        raise unittest.SkipTest(f"e2e harness not found at {HARNESS_DIR} (set OPENMEMORY_E2E_HARNESS)")
    if _claude.get("error"):
        raise unittest.SkipTest(_claude["error"])
    sys.path.insert(0, str(HARNESS_DIR))
    try:
        import harness
        binary = harness.find_claude()  # installs the pinned version once if npm can
        subprocess.run([binary, "--version"], capture_output=True, timeout=60, check=True)
    except Exception as e:  # no npm, no network for the one-time install, a broken binary
        _claude["error"] = f"the real Claude Code CLI cannot be had: {type(e).__name__}: {e}"
        raise unittest.SkipTest(_claude["error"])
    finally:
        sys.path.remove(str(HARNESS_DIR))
    os.environ["CLAUDE_BIN"] = binary  # run_session's find_claude() under a test's HOME uses it
    _claude["result"] = (harness, binary)
    return _claude["result"]


def figures(text: str) -> None:
    """Show what a test measured, when asked (OPENMEMORY_FIGURES=1): a plain `python3 -m unittest`
    prints its dots and its result, and nothing in between."""
    if os.environ.get("OPENMEMORY_FIGURES"):
        print(text, file=sys.stderr)


def raw_db(store):
    """For tests only: the open SQLite connection behind a Store, to set up or inspect a state
    no Store method offers. The package itself reaches the database only through Store methods."""
    return store._db


USER_SETTINGS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "permissions": {"allow": ["Bash(npm run test:*)", "mcp__github"], "deny": ["Read(./.env)"]},
    "env": {"FOO": "bär ✓", "BIG": 12345678901234567890, "RATIO": 0.25, "NOTHING": None},
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh",
                                                      "timeout": 5}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "notify-send 'session over'"}]}],
    },
    "enabledPlugins": {"other@market": True},
}


FAKE_CRONTAB = """#!/bin/sh
# A stand-in for crontab(1): the table lives in $OM_TEST_CRONTAB, never the real one.
case "$1" in
  -l) if [ -f "$OM_TEST_CRONTAB" ]; then cat "$OM_TEST_CRONTAB"; else echo "no crontab for tester" >&2; exit 1; fi ;;
  -) cat > "$OM_TEST_CRONTAB" ;;
  *) echo "usage: crontab [-l | -]" >&2; exit 2 ;;
esac
"""


RECORDER = """#!/bin/sh
# A stand-in that records its arguments, one call a line.
echo "$*" >> "$OM_TEST_CALLS"
"""


class SetupCase(TempHome):
    """A TempHome with the person's own settings.json, and stand-ins for crontab, systemctl and
    launchctl under the test's folder: no test reaches the real schedule."""

    def setUp(self):
        super().setUp()
        self.claude.mkdir(parents=True)
        self.settings = self.claude / "settings.json"
        self.original = json.dumps(USER_SETTINGS, ensure_ascii=False, indent=4).encode("utf-8")
        self.settings.write_bytes(self.original)
        self.bin = self.tmp / "stand-ins"
        self.bin.mkdir()
        self.crontab_file = self.tmp / "crontab.txt"
        self.calls = self.tmp / "calls.txt"
        for name, text in (("crontab", FAKE_CRONTAB), ("systemctl", RECORDER), ("launchctl", RECORDER)):
            (self.bin / name).write_text(text)
            (self.bin / name).chmod(0o755)

    def env(self, **extra):
        base = {"OPENMEMORY_CRONTAB": self.bin / "crontab", "OPENMEMORY_SYSTEMCTL": self.bin / "systemctl",
                "OPENMEMORY_LAUNCHCTL": self.bin / "launchctl", "OM_TEST_CRONTAB": self.crontab_file,
                "OM_TEST_CALLS": self.calls, "XDG_CONFIG_HOME": self.tmp / "xdg",
                "PATH": "/usr/bin:/bin"}  # no `claude` on PATH: setup prints the command
        base.update(extra)
        return super().env(**base)

    def setup_cli(self, *args, **kw):
        return self.cli("setup", *args, **kw)

    def hooks_added(self) -> dict:
        from openmemory import setup
        settings = json.loads(self.settings.read_text(encoding="utf-8"))
        return {e: setup.hook_commands(settings, e) for e in setup.HOOK_EVENTS}


def git_repository(folder: Path, exclude_agents_md: bool = True) -> Path:
    """A real git repository at folder (git init), AGENTS.md in its .git/info/exclude: the
    person's own instructions, which render writes a project's lessons into (where the markers
    are) only when no commit would take them (files.git_would_commit)."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True, capture_output=True,
                   env=dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull))
    if exclude_agents_md:
        (folder / ".git" / "info").mkdir(exist_ok=True)
        with open(folder / ".git" / "info" / "exclude", "a", encoding="utf-8") as f:
            f.write("AGENTS.md\n")
    return folder


def git_clone(tmp: Path, name: str, origin: str) -> Path:
    """A real git clone, at tmp/name, of one upstream repository made once under tmp (so clones
    share a commit: paths.shares_history), its remote then set to origin as a clone of it from
    there would have it. Git reads no config of the person's (no system, no global file)."""
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_AUTHOR_NAME="a",
               GIT_AUTHOR_EMAIL="a@example.com", GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@example.com")
    upstream = Path(tmp) / "upstream"
    if not upstream.exists():
        upstream.mkdir()
        for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "first"]):
            subprocess.run(["git", "-C", str(upstream), *args], check=True, capture_output=True, env=env)
    folder = Path(tmp) / name
    folder.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", str(upstream), str(folder)], check=True, capture_output=True, env=env)
    subprocess.run(["git", "-C", str(folder), "remote", "set-url", "origin", origin], check=True,
                   capture_output=True, env=env)
    return Path(os.path.realpath(folder))
