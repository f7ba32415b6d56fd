"""The command (cli.py): every verb with its one-line help, usage errors, `status`, `ingest --json`
without a Claude Code folder, `remember` from the terminal."""
import json
import os
import re
import subprocess
import sys

from openmemory import store
from tests.fixtures import project_folder, test_session
from tests.helpers import TempHome

PROJECT = "/home/dev/shop"


class Cli(TempHome):
    def test_help_lists_every_verb_with_its_one_line_doc(self):
        out = self.ok("--help").stdout
        for verb in ("ingest", "status", "paths"):
            self.assertIn(verb, out)
        verbs = _verbs()
        self.assertGreaterEqual(set(verbs), {"ingest", "recall", "status", "render", "sleep", "morning", "paths",
                                             "serve", "hook"})
        listed = " ".join(out.split())
        for verb, doc in verbs.items():
            self.assertTrue(doc, f"{verb} has no one-line doc")
            self.assertIn(verb, out)
            self.assertIn(" ".join(doc.split())[:40], listed, f"`--help` does not show {verb}'s doc")
            p = self.ok(verb, "--help")  # each verb's own help: its doc, exit 0, nothing on stderr
            self.assertIn(f"usage: openmemory {verb}", p.stdout)
            self.assertIn(" ".join(doc.split()), " ".join(p.stdout.split()))
            self.assertEqual(p.stderr, "")

    def test_hook_help_names_every_event_setup_installs(self):
        from openmemory import setup
        text = " ".join(self.ok("hook", "--help").stdout.split())
        for event in setup.HOOK_EVENTS:
            self.assertIn(event, text)

    def test_version(self):
        self.assertRegex(self.ok("--version").stdout, r"^openmemory \d+\.\d+\.\d+")

    def test_unknown_verb_is_a_usage_error(self):
        p = self.cli("frobnicate")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")

    def test_a_usage_error_never_echoes_a_secret_typed_as_a_value(self):
        # A token pasted where an id, a session, a time or a verb goes: the error says what is
        # wrong (exit 2 as before) without printing the token back (a terminal's scrollback, a
        # CI log, the transcript of an agent that ran the command).
        token = "ghp_" + "Ab1" * 12
        for args in (["forget", token], ["forget", "--session", token], ["show", token], ["lessons", "approve", token],
                     ["sleep", "--now", token], ["setup", "--purge", token], ["recall", "-k", token, "q"], [token]):
            with self.subTest(args=args[:-1]):
                p = self.cli(*args)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertNotIn(token, p.stderr + p.stdout)
                self.assertIn("[REDACTED:", p.stderr)


class StartsLight(TempHome):
    """A command that stores nothing loads no more than its verb runs: recall and a session
    start's hook neither compile the redaction patterns nor open the log's rotating file."""

    PROBE = ("import json, sys\n"
             "from openmemory import cli\n"
             "rc = cli.main(sys.argv[1:])\n"
             "from openmemory import redact\n"
             "sys.__stderr__.write(json.dumps([rc, redact._READY, 'openmemory.forget' in sys.modules,\n"
             "                                 'logging.handlers' in sys.modules]))\n")

    def probe(self, verb: str, stdin: str = "") -> list:
        import subprocess
        import sys
        p = subprocess.run([sys.executable, "-c", self.PROBE, *verb.split()], input=stdin, capture_output=True,
                           text=True, env=self.env(), timeout=60)
        return json.loads(p.stderr.splitlines()[-1])

    def test_recall_and_a_session_start_compile_no_redaction_pattern(self):
        test_session().write(project_folder(self.claude, PROJECT), "s1.jsonl")
        self.ok("ingest")
        self.assertEqual(self.probe("recall ruff"), [0, False, False, False])
        from openmemory import schedule
        schedule.catch_up_stamp().touch()   # the usual session start: looked at within the hour
        start = json.dumps({"hook_event_name": "SessionStart", "source": "startup"})
        self.assertEqual(self.probe("hook", start), [0, False, False, False])
        # what stores redacts: a session end's hook compiles the patterns and logs what it did
        path = test_session().write(project_folder(self.claude, PROJECT), "s2.jsonl")
        end = json.dumps({"hook_event_name": "SessionEnd", "transcript_path": str(path)})
        self.assertEqual(self.probe("hook", end)[:2], [0, True])
        self.assertIn("SessionEnd", (self.home / "logs" / "openmemory.log").read_text())


def _verbs() -> dict:
    """{verb: its one-line doc} as the CLI's parser declares them."""
    import argparse
    from openmemory import cli
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {name: (parser.description or "") for name, parser in sub.choices.items()}


class Status(TempHome):
    def test_the_hooks_ingest_is_the_last_ingest(self):
        path = test_session(cwd=PROJECT).write(project_folder(self.claude, PROJECT))
        event = json.dumps({"hook_event_name": "SessionEnd", "transcript_path": str(path)})
        self.assertEqual(self.cli("hook", input=event).returncode, 0)
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual(status["sessions"], 1)
        self.assertIsNotNone(status["last_ingest"])
        self.assertNotIn("last ingest  never", self.ok("status").stdout)

    def test_a_replay_with_now_tells_its_own_time_as_the_last_ingest(self):
        test_session(cwd=PROJECT).write(project_folder(self.claude, PROJECT))
        self.ok("ingest", "--now", "2026-01-07T20:00:00Z")
        self.ok("sleep", "--now", "2026-01-08T03:30:00Z")
        status = json.loads(self.ok("status", "--json").stdout)
        self.assertEqual((status["last_ingest"][:19], status["last_sleep"][:19]),
                         ("2026-01-07T20:00:00", "2026-01-08T03:30:00"))      # one clock, as replayed

    def test_transcripts_and_session_episodes_are_named_apart(self):
        test_session(cwd=PROJECT).write(project_folder(self.claude, PROJECT))
        self.ok("ingest")
        out = self.ok("status").stdout
        self.assertIn("(1 session episode, 1 error, 1 correction, 0 notes; 0 archived)", out)
        self.assertIn("\ntranscripts  1 ingested, 0 malformed lines skipped\n", out)
        self.assertNotIn("sessions ", out)


class Backup(TempHome):
    def test_a_backup_into_a_folder_not_there_says_so_and_how_to_make_it(self):
        self.ok("remember", "--everywhere", "the staging db is postgres 16")
        dest = self.tmp / "backups" / "memory-2026-12-05.db"
        p = self.cli("backup", dest)
        self.assertEqual((p.returncode, p.stdout), (1, ""))
        self.assertEqual(p.stderr, f"openmemory: error: cannot write the backup at {dest}: there is no folder "
                                   f"{dest.parent} (make it first: mkdir -p {dest.parent})\n")
        self.assertFalse(dest.parent.exists())
        dest.parent.mkdir()
        self.assertIn(f"backed up {self.home / 'memory.db'} to {dest}", self.ok("backup", dest).stderr)


class IngestCommand(TempHome):
    def test_json_without_a_claude_code_folder_is_still_one_object(self):
        p = self.ok("ingest", "--json")
        report = json.loads(p.stdout)
        self.assertEqual((report["files"], report["read"], report["added"]), (0, 0, {}))
        self.assertIn("no sessions at", p.stderr)

    def test_a_time_that_is_none_is_a_usage_error_with_no_sessions_too(self):
        p = self.cli("ingest", "--now", "yesterday")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("openmemory ingest: error: --now takes an ISO 8601 time", p.stderr)

    def test_an_unknown_option_shows_the_verbs_own_usage(self):
        p = self.cli("ingest", "--bogus")
        self.assertEqual(p.returncode, 2)
        self.assertIn("usage: openmemory ingest [-h]", p.stderr)
        self.assertIn("openmemory ingest: error: unrecognized arguments: --bogus", p.stderr)
        self.assertEqual(p.stdout, "")


class Remember(TempHome):
    def test_remember_from_the_terminal_then_recall_finds_it(self):
        work = self.tmp / "shop"
        work.mkdir()
        p = self.cli("remember", "Deploys", "go", "out", "on", "Fridays", "after", "the", "release", "checklist",
                     env=self.env(), )
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"^remembered as note e\d+ \(project .+\)\n$")
        p = self.ok("recall", "release checklist fridays", "--json")
        [hit] = json.loads(p.stdout)
        self.assertEqual(hit["kind"], "note")
        self.assertEqual(hit["gist"], "Deploys go out on Fridays after the release checklist")
        self.assertEqual(hit["cwd"], os.path.realpath(self.tmp))

    def test_a_folder_in_a_repository_is_said_as_its_project_and_a_relative_cwd_as_a_full_path(self):
        # From a subfolder of a repository the note belongs to the repository, as recall then shows it;
        # `recall --cwd .` names the project, not '.'.
        repo = self.tmp / "shop"
        (repo / ".git").mkdir(parents=True)
        (repo / "src").mkdir()
        p = subprocess.run([sys.executable, "-m", "openmemory", "remember", "Deploys go out on Fridays"],
                           capture_output=True, text=True, env=self.env(), cwd=str(repo / "src"), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, rf"^remembered as note e\d+ \(project {re.escape(os.path.realpath(repo))}\)\n$")
        self.assertIn(f"[e1] note · ", self.ok("recall", "fridays").stdout)
        self.assertIn(f" · {os.path.realpath(repo)} · ", self.ok("recall", "fridays").stdout)
        p = subprocess.run([sys.executable, "-m", "openmemory", "recall", "deploys", "--cwd", "."],
                           capture_output=True, text=True, env=self.env(), cwd=str(repo / "src"), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith(f'1 memory for "deploys", most relevant first (1 from project '
                                            f'{os.path.realpath(repo)}):\n'), p.stdout)

    def test_remember_reads_stdin_and_can_be_for_every_project(self):
        p = self.cli("remember", "--everywhere", "--json", input="Never commit .env files.\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        note = json.loads(p.stdout)
        self.assertIsNone(note["cwd"])
        self.assertRegex(note["id"], r"^e\d+$")             # as recall shows it, and forget takes it
        with store.connect() as db:
            self.assertEqual(db.episode(int(note["id"][1:]))["gist"], "Never commit .env files.")
        [hit] = json.loads(self.ok("recall", "--json", "commit .env files").stdout)
        self.assertEqual(hit["id"], note["id"])

    def test_bytes_the_locale_cannot_decode_are_stored_as_replacement_characters(self):
        # Python hands undecodable argv and stdin bytes over as lone surrogates, which SQLite refuses
        p = subprocess.run([sys.executable, "-m", "openmemory", "remember", b"caf\xe9 deploys on Fridays"],
                           capture_output=True, env=self.env(), cwd=str(self.tmp))
        self.assertEqual(p.returncode, 0, p.stderr)
        p = subprocess.run([sys.executable, "-m", "openmemory", "remember", "--everywhere"], input=b"caf\xe9 uses uv\n",
                           capture_output=True, env=self.env(), cwd=str(self.tmp))
        self.assertEqual(p.returncode, 0, p.stderr)
        p = subprocess.run([sys.executable, "-m", "openmemory", "recall", b"caf\xe9 deploys"],
                           capture_output=True, env=self.env(), cwd=str(self.tmp))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("caf\ufffd deploys on Fridays", p.stdout.decode("utf-8"))
        self.assertIn("caf\ufffd uses uv", self.ok("recall", "uv").stdout)

    def test_the_same_note_remembered_twice_is_stored_once(self):
        repo = self.tmp / "shop"
        (repo / ".git").mkdir(parents=True)
        (repo / "src").mkdir()
        project = os.path.realpath(repo)
        first = self.ok("remember", "--cwd", repo, "the staging db is postgres 16")
        self.assertEqual(first.stdout, f"remembered as note e1 (project {project})\n")
        again = self.ok("remember", "--cwd", repo / "src", "the  staging db is\tpostgres 16 ")   # the same words
        self.assertEqual(again.stdout, f"already remembered as note e1 (project {project})\n")
        self.assertEqual(json.loads(self.ok("remember", "--cwd", repo, "--json", "the staging db is postgres 16").stdout),
                         {"id": "e1", "cwd": project, "already": True})
        with store.connect() as db:
            [note] = db.episodes(kind="note")
        self.assertGreater(note["strength"], 1.0)                          # touched: said again, it matters
        # another project, every project, other words: each a note of its own
        self.assertIn("remembered as note e2 (every project)", self.ok("remember", "--everywhere",
                                                                         "the staging db is postgres 16").stdout)
        self.assertIn("remembered as note e3", self.ok("remember", "--cwd", self.tmp, "the staging db is postgres 16").stdout)
        self.assertIn("remembered as note e4", self.ok("remember", "--cwd", repo, "the staging db is postgres 17").stdout)
        self.ok("forget", "e1", "--yes")                                   # forgotten: remembered anew
        self.assertIn("remembered as note e5", self.ok("remember", "--cwd", repo, "the staging db is postgres 16").stdout)

    def test_the_same_note_remembered_with_a_new_title_takes_the_new_title_and_says_so(self):
        repo = self.tmp / "shop"
        repo.mkdir()
        self.ok("remember", "--cwd", repo, "--title", "staging db", "the staging db is postgres 16")
        again = self.ok("remember", "--cwd", repo, "--title", "database versions", "the staging db is postgres 16")
        self.assertEqual(again.stdout, f"already remembered as note e1 (project {os.path.realpath(repo)}), "
                                       f"now titled \"database versions\"\n")
        shown = self.ok("show", "e1").stdout.splitlines()
        self.assertIn("database versions", shown)
        self.assertNotIn("staging db", shown)
        hits = json.loads(self.ok("recall", "database versions", "--json", "--cwd", repo).stdout)
        self.assertEqual([h["id"] for h in hits][:1], ["e1"])              # found by its new title
        # the same title, or none: the note as it was, nothing said of a title
        for args in (("--title", "database versions"), ()):
            p = self.ok("remember", "--cwd", repo, *args, "the staging db is postgres 16")
            self.assertEqual(p.stdout, f"already remembered as note e1 (project {os.path.realpath(repo)})\n")
        self.assertIn("database versions", self.ok("show", "e1").stdout.splitlines())

    def test_a_note_for_a_folder_that_is_not_here_is_an_error(self):
        # a typo in --cwd would file the note under a project no session ever runs in: exit 2, the
        # verb's prefix, nothing stored
        p = self.cli("remember", "--cwd", self.tmp / "shpo", "the staging db is postgres 16")
        self.assertEqual((p.returncode, p.stdout), (2, ""))
        self.assertTrue(p.stderr.startswith(f"openmemory remember: error: --cwd {self.tmp / 'shpo'}: no such folder "
                                            f"here"), p.stderr)
        with store.connect() as db:
            self.assertEqual(db.episodes(kind="note"), [])

    def test_an_empty_note_is_an_error(self):
        # nothing to store is what was typed, wrong in itself: exit 2 and the verb's prefix, as for
        # `forget` with nothing to forget; nothing stored
        for args, given in ((("remember",), "  \n"), (("remember", " "), None), (("remember", "--json"), "")):
            with self.subTest(args=args):
                p = self.cli(*args, input=given)
                self.assertEqual((p.returncode, p.stdout), (2, ""))
                self.assertEqual(p.stderr, "openmemory remember: error: a note needs some text: openmemory remember "
                                           "\"the note\" (or the note on stdin)\n")
        self.assertEqual(json.loads(self.ok("status", "--json").stdout)["episodes"]["total"], 0)

    def test_remember_at_a_terminal_says_what_it_waits_for(self):
        # `openmemory remember` typed with no words reads the note from the terminal: it says so
        # (on stderr) rather than wait in silence, and stores what was typed
        import pty
        pid, fd = pty.fork()
        if pid == 0:
            os.environ["PYTHONPATH"] = self.env()["PYTHONPATH"]
            os.chdir(self.tmp)
            os.execv(sys.executable, [sys.executable, "-m", "openmemory", "remember"])
        import select
        import signal
        out = b""
        while b"Ctrl-D" not in out and select.select([fd], [], [], 30)[0]:   # silence: it waits, unsaid
            out += os.read(fd, 1024)
        if b"Ctrl-D" not in out:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            self.fail(f"remember waited in silence for the note: {out!r}")
        os.write(fd, b"the staging db is postgres 16\n\x04")
        try:
            while True:
                chunk = os.read(fd, 1024)
                if not chunk:
                    break
                out += chunk
        except OSError:     # the terminal closed: the program ended
            pass
        self.assertEqual(os.waitpid(pid, 0)[1], 0, out)
        self.assertIn(b"openmemory remember: type the note, then Ctrl-D on a line of its own", out)
        self.assertIn(b"remembered as note e1", out)
