"""A session's surprises (episodes.py): its failed tool calls and the person's corrections, with
their identity; what the person's words and a failure's lines say of them."""
import unittest

from openmemory import corrections, episodes, failures, judge, transcripts, wording
from tests.fixtures import Transcript, test_session


def parse(t: Transcript):
    return transcripts.parse_lines(t.lines(), "/x/session.jsonl")


class Surprises(unittest.TestCase):
    def test_error_and_correction_of_the_canonical_session(self):
        found = episodes.surprises_of(parse(test_session()))
        self.assertEqual([f.kind for f in found], ["error", "correction"])
        error, correction = found
        self.assertEqual(error.command, "python -m unittest")
        self.assertEqual(error.text.splitlines(), ["Exit code 1", "ImportError: No module named shop.tests"])
        self.assertEqual(correction.text, "No, don't use unittest here, run the tests with pytest -q")
        self.assertEqual(correction.agent_did, "python -m unittest")

    def test_a_failure_the_agent_got_past_is_not_what_the_words_answer(self):
        # the lint failed, was fixed and passed; the person then speaks of something else
        t = Transcript()
        t.user("show the commit message in session list")
        t.assistant(tools=[("Bash", {"command": "mise run lint"}, "Exit code 1\nsession.go:254:2: G104: Errors unhandled (gosec)", True),
                           ("Edit", {"file_path": "/x/session.go", "old_string": "a", "new_string": "b"}, "updated", False),
                           ("Bash", {"command": "mise run lint"}, "0 issues.", False),
                           ("Bash", {"command": "mise run test"}, "ok", False)])
        t.assistant(tools=[("TodoWrite", {"todos": [{"content": "lint", "status": "completed"}]}, "ok", False)])
        t.assistant("All tests pass.")
        t.user("no, this is an unmerged PR, so going down the commit list doesn't work here")
        [c] = [s for s in episodes.surprises_of(parse(t)) if s.kind == "correction"]
        self.assertEqual((c.command, c.agent_did), ("mise run test", "mise run test"))   # not its to-do list
        t.assistant(tools=[("Bash", {"command": "git push"}, "Exit code 1\n! [rejected] main -> main (fetch first)", True),
                           ("Bash", {"command": "git status"}, "clean", False)])
        t.user("no, pull first")     # a failure nothing got past is still what the words answer
        [_, c] = [s for s in episodes.surprises_of(parse(t)) if s.kind == "correction"]
        self.assertEqual(c.command, "git push")

    def test_identical_errors_in_a_session_are_one_surprise_with_a_count(self):
        t = Transcript()
        t.user("build")
        for _ in range(3):
            t.assistant(tools=[("Bash", {"command": "make"}, "Exit code 2\nmake: *** No rule to make target", True)])
        [error] = episodes.surprises_of(parse(t))
        self.assertEqual(error.count, 3)

    def test_rejected_tool_use_is_a_correction_with_the_words_that_follow(self):
        t = Transcript()
        t.user("clean up the repo")
        t.assistant(tools=[("Bash", {"command": "rm -rf build dist"}, "REJECT")])
        t.user("don't delete dist, it is checked in")
        [c] = episodes.surprises_of(parse(t))
        self.assertEqual((c.kind, c.rejected, c.command), ("correction", True, "rm -rf build dist"))
        self.assertEqual(c.text, "don't delete dist, it is checked in")

    def test_rejection_without_words_is_still_a_correction(self):
        t = Transcript()
        t.user("deploy")
        t.assistant(tools=[("Bash", {"command": "git push --force"}, "REJECT")])
        [c] = episodes.surprises_of(parse(t))
        self.assertEqual((c.kind, c.text, c.command), ("correction", "", "git push --force"))

    def test_the_words_typed_into_a_refusal_dialog_are_that_refusals_correction(self):
        # 2.1.x: the person's reason is in the refused call's result; the next prompt, maybe an hour
        # later, is read on its own words
        t = Transcript()
        t.user("tidy the build scripts")
        t.assistant(tools=[("Bash", {"command": "rm -rf dist"}, "REJECT", "dist is checked in, never delete it")])
        t.assistant("Understood, leaving dist alone.")
        t.user("now bump the version")
        [c] = episodes.surprises_of(parse(t))
        self.assertEqual((c.text, c.rejected, c.command, c.form, c.legacy),
                         ("dist is checked in, never delete it", True, "rm -rf dist", "refusal", c.legacy))
        self.assertTrue(c.legacy.startswith("toolu_"))

    def test_a_refusal_through_a_permission_prompt_tool_is_a_correction_with_its_words(self):
        # Found by a fresh-user pass with the real 2.1.328 (`claude -p --permission-prompt-tool`):
        # the record says the person refused (permissionDecision.source "user_reject") and that the
        # result is their words (holdsPersonsWords); it was read as `npm test` failing with them.
        t = Transcript()
        t.user("run the tests")
        t.assistant(tools=[("Bash", {"command": "npm test"}, "PROMPT_TOOL_REJECT",
                            "No, never run npm test here, we use pnpm test")])
        t.assistant("OK, I won't run npm test.")
        [c] = episodes.surprises_of(parse(t))
        self.assertEqual((c.kind, c.text, c.rejected, c.command, c.form),
                         ("correction", "No, never run npm test here, we use pnpm test", True, "npm test", "refusal"))
        t = Transcript()
        t.user("run the tests")
        t.assistant(tools=[("Bash", {"command": "npm test"}, "PROMPT_TOOL_REJECT", True)])  # no words
        [c] = episodes.surprises_of(parse(t))
        self.assertEqual((c.kind, c.text, c.command), ("correction", "", "npm test"))

    def test_a_failure_that_prints_a_refusals_words_stays_a_failure(self):
        t = Transcript()
        t.user("run the tests")
        t.assistant(tools=[("Bash", {"command": "npm test"}, "Exit code 1\nNo, never run npm test here", True)])
        [e] = episodes.surprises_of(parse(t))
        self.assertEqual((e.kind, e.rejected), ("error", False))

    def test_a_run_of_refusals_is_one_correction_each(self):
        t = Transcript()
        t.user("clean up")
        t.assistant(tools=[("Bash", {"command": "rm -rf dist"}, "REJECT", "not dist")])
        t.assistant(tools=[("Bash", {"command": "rm -rf build"}, "REJECT", "not build either")])
        t.assistant(tools=[("Bash", {"command": "git clean -fdx"}, "REJECT")])
        found = episodes.surprises_of(parse(t))
        self.assertEqual([(c.command, c.text) for c in found],
                         [("rm -rf dist", "not dist"), ("rm -rf build", "not build either"), ("git clean -fdx", "")])

    def test_approving_a_plan_is_no_correction(self):
        # Claude Code's approve-and-clear-context: a bare refusal of ExitPlanMode, an interrupt,
        # then the plan sent as the prompt
        t = Transcript()
        t.user("plan the cache")
        t.assistant(tools=[("ExitPlanMode", {"plan": "# Cache\n1. add it"}, "REJECT")])
        t.user("Implement the following plan:\n\n# Cache\n1. add it")
        t.assistant("Implementing.")
        self.assertEqual(episodes.surprises_of(parse(t)), [])
        t = Transcript()
        t.user("plan the cache")
        t.assistant(tools=[("ExitPlanMode", {"plan": "# Cache\n1. add it"}, "REJECT", "use redis, not memcached")])
        [c] = episodes.surprises_of(parse(t))     # refused with words: a correction
        self.assertEqual(c.text, "use redis, not memcached")

    def test_setting_a_question_aside_to_talk_it_over_is_no_correction(self):
        t = Transcript()
        t.user("set up the release")
        t.assistant(tools=[("AskUserQuestion", {"questions": []}, "REJECT",
                            "The user wants to clarify these questions.\n    Start by asking them.")])
        self.assertEqual(episodes.surprises_of(parse(t)), [])

    def test_a_bare_refusal_and_words_that_are_no_correction_stay_apart(self):
        t = Transcript()
        t.user("look at the logs")
        t.assistant(tools=[("Bash", {"command": "cat ~/.gitconfig"}, "REJECT")])
        t.user("how can we know which agent is active?")
        refusal, words = episodes.surprises_of(parse(t))
        self.assertEqual((refusal.text, refusal.command, refusal.rejected), ("", "cat ~/.gitconfig", True))
        # the words are read as after any call: a question the rules leave to a judge, not lost
        self.assertEqual((words.text, words.verdict, words.form, words.rejected),
                         ("how can we know which agent is active?", "doubtful", episodes.UNSETTLED, False))

    def test_words_after_an_interrupt_that_refused_a_call_reach_the_judge(self):
        # Esc while a tool runs refuses its call, with no words; what the person typed next is
        # theirs all the same (a standing budget here), read as any message, never dropped
        t = Transcript()
        t.user("speed up the api tests")
        t.assistant(text="Now let's test:", tools=[("TaskOutput", {"task_id": "b1"}, "REJECT")])
        t.user("This seems messy to me and this test is still taking a long time I think. Each test should take "
               "<30s with the exception of an E2E grounding.")
        found = episodes.surprises_of(parse(t), settled=True)
        self.assertEqual([(f.rejected, f.text) for f in found],
                         [(True, ""), (False, "This seems messy to me and this test is still taking a long "
                                              "time I think. Each test should take <30s with the exception of "
                                              "an E2E grounding.")])
        self.assertEqual(found[1].verdict, "doubtful")

    def test_interrupted_tool_is_not_an_error(self):
        t = Transcript()
        t.user("run it")
        t.assistant(tools=[("Bash", {"command": "sleep 100"}, "[Request interrupted by user for tool use]", True)])
        t.user("that takes too long; run only the unit tests")
        found = episodes.surprises_of(parse(t))
        self.assertEqual([f.kind for f in found], ["correction"])

    def test_go_on_after_an_interrupt_is_no_correction_in_any_language(self):
        # public11 (session 47): "继续" ("continue") typed after an interrupt was read three times as a
        # redirect, where "continue" is a nudge to go on; public10 and public11 hold 34 such one-word
        # nudges and approvals in Chinese, Russian, Japanese and Korean, every one labelled no correction;
        # public20 (session 54): "continue啊" (a Chinese particle after the English word) read as a redirect
        for said in ("continue", "继续", "继续吧", "可以", "同意", "好的", "执行", "да", "давай", "продолжай",
                     "はい、続けてください", "계속해", "네", "sí, sigue", "continue啊", "好的呀", "可以嘛"):
            t = Transcript()
            t.user("migrate the settings page")
            t.assistant(tools=[("Bash", {"command": "npm run build"}, "[Request interrupted by user for tool use]", True)])
            t.user(said)
            self.assertEqual(episodes.surprises_of(parse(t)), [], said)
        # words of their own after it are still read
        t = Transcript()
        t.user("migrate the settings page")
        t.assistant(tools=[("Bash", {"command": "npm run build"}, "[Request interrupted by user for tool use]", True)])
        t.user("继续，但是不要用 npm，用 pnpm")
        self.assertEqual([f.kind for f in episodes.surprises_of(parse(t))], ["correction"])

    def test_a_call_cancelled_beside_a_failed_one_is_not_an_error(self):
        # Claude Code 2.1.x cancels the rest of a batch when one call fails or is refused: the
        # cancelled calls never ran, so there is no failure of theirs to keep, learn or recall
        t = Transcript()
        t.user("build and lint")
        t.assistant(tools=[("Bash", {"command": "make"}, "Exit code 2\nmake: *** No rule to make target 'all'", True),
                           ("Bash", {"command": "make lint"}, "<tool_use_error>Sibling tool call errored</tool_use_error>", True),
                           ("Bash", {"command": "make docs"}, "The user doesn't want to take this action right now. "
                            "STOP what you are doing and wait for the user to tell you how to proceed.", True),
                           # as Claude Code 2.1.92 words it, naming the call that failed
                           ("Bash", {"command": "make test"}, "<tool_use_error>Cancelled: parallel tool call "
                            "Bash(make 2>&1) errored</tool_use_error>", True)])
        found = episodes.surprises_of(parse(t))
        self.assertEqual([(f.kind, f.command) for f in found], [("error", "make")])

    def test_first_request_is_never_a_correction(self):
        t = Transcript()
        t.user("No tests yet: write them")
        self.assertEqual(episodes.surprises_of(parse(t)), [])

    def test_own_mcp_calls_are_not_evidence(self):
        # By its name from `claude mcp add`, and under the plugin (Claude Code 2.1.328).
        for name in ("mcp__openmemory__recall", "mcp__plugin_openmemory_openmemory__recall"):
            t = Transcript()
            t.user("what do you remember")
            t.assistant(tools=[(name, {"query": "x"}, "database locked", True)])
            self.assertEqual(episodes.surprises_of(parse(t)), [], name)
        t = Transcript()
        t.user("what do you remember")
        t.assistant(tools=[("mcp__notes__recall", {"query": "x"}, "database locked", True)])
        self.assertEqual(len(episodes.surprises_of(parse(t))), 1)  # another server's failure is one

    def test_correction_phrases(self):
        yes = ["No, use pytest -q", "no. wrong branch", "Stop, that's the production database",
               "don't touch the migrations", "That's not what I asked for", "use ruff instead of flake8",
               "You forgot to run the linter", "it still doesn't work", "why did you delete the fixture?",
               "Actually, the config lives in settings.toml", "the issue is the cache, not the query",
               "we deploy with make release, not npm run deploy", "Wrong file: edit the other one",
               "I said staging, not prod", "nope", "ok. uh. no. the ci runs on the current commit"]
        no = ["run the tests", "can we rebase on main, please?", "yes.", "how's it going?",
              "No problem, thanks", "I don't know if we want an agent framework yet", "ok",
              "let's get this committed", "what does the error say?", "great, now add a README"]
        for text in yes:
            self.assertTrue(corrections.is_correction_text(text), text)
        for text in no:
            self.assertFalse(corrections.is_correction_text(text), text)

    def test_error_lines_pick_the_telling_lines(self):
        out = ("Exit code 1\n\x1b[31m╭──────╮\x1b[0m\nCompiling 4 files\nGenerated app\n"
               "error: undefined function get/2\n** (CompileError) failed")
        self.assertEqual(failures.error_lines(out),
                         ["Exit code 1", "error: undefined function get/2", "** (CompileError) failed"])
        self.assertEqual(failures.error_lines("<tool_use_error>File does not exist.</tool_use_error>"),
                         ["File does not exist."])

    def test_noise_anywhere_in_a_line_and_marks_at_its_end_are_left_out(self):
        out = ("Exit code 1\n  % Total    % Received % Xferd  Average Speed   Time\n"
               "                                 Dload  Upload   Total   Spent\n"
               "check yaml...............................................Passed\n"
               "ruff.....................................................Failed\n"
               "app/x.py:3:1: F401 `os` imported but unused ✖\nSystemExit: 2")
        self.assertEqual(failures.error_lines(out),
                         ["Exit code 1", "SystemExit: 2", "app/x.py:3:1: F401 `os` imported but unused"])
        quiet = "Exit code 1\n" + "\n".join(out.splitlines()[1:5]) + "\napp/x.py: 1 file left unchanged ✖"
        self.assertEqual(failures.error_lines(quiet),   # nothing reads as an error: plain lines, then wrappers
                         ["Exit code 1", "app/x.py: 1 file left unchanged",
                          "ruff.....................................................Failed"])
        # a linter's finding (file:line:column: message) says why, so the wrapper's line is not needed
        found = "Exit code 1\n" + "\n".join(out.splitlines()[1:5]) + "\napp/x.py:3:1: F401 `os` imported ✖"
        self.assertEqual(failures.error_lines(found), ["Exit code 1", "app/x.py:3:1: F401 `os` imported"])

    def test_a_negative_exit_code_is_the_same_head_line(self):
        # a process killed by a signal: ingest and sleep read "Exit code" with one pattern
        out = "Exit code -9\nstarting worker\nfatal: out of memory"
        self.assertEqual(failures.error_lines(out), ["Exit code -9", "fatal: out of memory"])
        self.assertEqual(failures.telling_lines({"error": failures.error_lines(out)}), ["fatal: out of memory"])


class FailuresKeepTheirResolution(unittest.TestCase):
    def push_session(self):
        t = Transcript()
        t.user("push the login branch")
        out = ("fatal: The current branch feature/login has no upstream branch.\n"
               "To push the current branch and set the remote as upstream, use\n\n"
               "    git push --set-upstream origin feature/login\n\n"
               "hint: To have this happen automatically for branches without a tracking\n"
               "hint: upstream, see 'push.autoSetupRemote' in 'git help config'.")
        t.assistant(None, tools=[("Bash", {"command": "git push"}, "Exit code 128\n" + out, True)])
        t.assistant("The branch has no upstream yet; I will set it.", tools=[
            ("Bash", {"command": "git push --set-upstream origin feature/login"}, "branch set up", False)])
        t.assistant("Pushed.")
        return t

    def test_a_failure_keeps_the_tools_hints_and_how_it_was_got_past(self):
        [error] = [e for e in episodes.episodes_of(parse(self.push_session())) if e["kind"] == "error"]
        self.assertIn("fatal: The current branch feature/login has no upstream branch.", error["gist"])
        self.assertIn("To push the current branch and set the remote as upstream, use "
                      "git push --set-upstream origin feature/login", error["gist"])
        self.assertIn("hint: To have this happen automatically", error["gist"])
        self.assertIn("Worked after `git push --set-upstream origin feature/login`", error["gist"])
        self.assertIn('The agent then said: "The branch has no upstream yet; I will set it."', error["gist"])

    def test_gits_way_past_dubious_ownership_is_kept_as_its_hint(self):
        t = Transcript(cwd="/root/capsule")
        t.user("push it")
        out = ("fatal: detected dubious ownership in repository at '/root/capsule'\n"
               "To add an exception for this directory, call:\n\n"
               "\tgit config --global --add safe.directory /root/capsule")
        t.assistant(None, tools=[("Bash", {"command": "git -C /root/capsule push"}, "Exit code 128\n" + out, True)])
        t.assistant("Git refuses the folder: it belongs to another user.")
        [error] = [e for e in episodes.episodes_of(parse(t)) if e["kind"] == "error"]
        self.assertIn("To add an exception for this directory, call: git config --global --add safe.directory "
                      "/root/capsule", error["gist"])

    def errors_of(self, *calls) -> list:
        t = Transcript(cwd="/home/dev/cli")
        t.user("where is EnsureSetup?")
        for call in calls:
            t.assistant(None, tools=[call])
        t.assistant("Done.")
        return [e for e in episodes.episodes_of(parse(t)) if e["kind"] == "error"]

    def test_a_folder_guessed_is_no_file_meant_by_the_file_read_later(self):
        # Grep of `strategy/manual_commit` (a folder guessed, or a prefix: no ending), the folder
        # grepped instead, and `manual_commit.go` read four calls later: it was "the file meant",
        # so the episode said "Worked after `manual_commit.go`" and a candidate lesson "There is no
        # `manual_commit`: the file is `manual_commit.go`". A wrong ending put right stays one.
        root = "/home/dev/cli/cmd/strategy"
        [error] = self.errors_of(
            ("Grep", {"pattern": "EnsureSetup", "path": f"{root}/manual_commit"},
             f"<tool_use_error>Path does not exist: {root}/manual_commit</tool_use_error>", True),
            ("Grep", {"pattern": "EnsureSetup", "path": root}, f"{root}/auto_commit.go:60", False),
            ("Read", {"file_path": f"{root}/common.go"}, "1→package strategy", False),
            ("Read", {"file_path": f"{root}/manual_commit.go"}, "1→package strategy", False))
        self.assertNotIn("found", error["facts"])
        self.assertNotIn("fixed_by", error["facts"])
        self.assertNotIn("Worked after", error["gist"])
        [error] = self.errors_of(
            ("Read", {"file_path": "/home/dev/cli/.golangci.yml"},
             "<tool_use_error>File does not exist.</tool_use_error>", True),
            ("Read", {"file_path": "/home/dev/cli/.golangci.yaml"}, "1→version: 2", False))
        self.assertEqual((error["facts"]["found"], error["facts"]["found_by"]),
                         (".golangci.yaml", "Read /home/dev/cli/.golangci.yaml"))
        self.assertIn("Then `Read /home/dev/cli/.golangci.yaml` worked (the file `.golangci.yaml`)", error["gist"])

    def test_what_got_it_past_before_the_command_with_more_to_it_is_what_is_kept(self):
        # `git status --short` worked after `git read-tree HEAD` repaired the index: the episode
        # said "Worked after `git status --short`", as if the flag had got it past.
        [error] = self.errors_of(
            ("Bash", {"command": "git status"}, "Exit code 128\nfatal: unable to read e53647ba1f1e5203", True),
            ("Bash", {"command": "git read-tree HEAD"}, "", False),
            ("Bash", {"command": "git status --short"}, " M app.py", False))
        self.assertIn("Worked after `git read-tree HEAD`", error["gist"])
        self.assertEqual((error["facts"].get("ran"), error["facts"].get("worked_as"), error["facts"].get("fixed_by")),
                         ("git read-tree HEAD", "git status --short", None))
        # edits before it: the work itself (no lesson of it), as for the same command run again
        [error] = self.errors_of(
            ("Bash", {"command": "mise run lint"}, "Exit code 1\napp/x.go:90: 90-109 lines are duplicate (dupl)", True),
            ("Edit", {"file_path": "/home/dev/cli/app/x.go", "old_string": "a", "new_string": "b"}, "ok", False),
            ("Bash", {"command": "mise run lint && mise run test"}, "0 issues.", False))
        self.assertTrue(error["facts"].get("work"))
        self.assertFalse(failures.is_lesson_error(error["facts"]))
        self.assertIn("Worked after editing app/x.go", error["gist"])

    def test_failures_of_one_command_with_different_errors_are_never_merged(self):
        t = Transcript()
        t.user("run the tests")
        for line in ("** (ArgumentError) secret_key_base is missing", "** (UndefinedFunctionError) lazy_html",
                     "** (ArgumentError) secret_key_base is missing"):
            t.assistant(None, tools=[("Bash", {"command": "mix test"}, f"Exit code 1\n{line}", True)])
        errors = [e for e in episodes.episodes_of(parse(t)) if e["kind"] == "error"]
        self.assertEqual(len(errors), 2)
        self.assertEqual([e["facts"]["count"] for e in errors], [2, 1])
        self.assertIn("secret_key_base", errors[0]["gist"])
        self.assertIn("lazy_html", errors[1]["gist"])

    def test_a_sessions_gist_says_what_happened(self):
        [session] = [e for e in episodes.episodes_of(parse(self.push_session())) if e["kind"] == "session"]
        self.assertRegex(session["gist"], r"^Asked: push the login branch\. Outcome: Pushed\. Trouble: `git push` "
                                          r"failed \(fatal: The current branch feature/login has no upstream "
                                          r"branch\.\), worked after `git push --set-upstream origin feature/login`")

class WhatTheRulesLeaveToAJudge(unittest.TestCase):
    """Issue 24: every message the person typed that the rules do not settle is a judge's to read."""

    def surprises(self, t):
        return [s for s in episodes.surprises_of(transcripts.parse_lines(t.lines(), "/x/s.jsonl"))
                if s.kind == "correction"]

    def test_a_message_that_may_say_the_agent_was_wrong_is_left_to_a_judge(self):
        # (rules3: "but we do track multiple sessions, how ...?" and "it's a test value for the
        # secret scanner", this test's first messages, are corrections by the rules now: a fact
        # set against what the agent said, WhatTheRulesLeaveToAJudge.test_a_fact_set_straight_...)
        t = Transcript()
        t.user("clean up what the strategy leaves behind")
        t.assistant("Done! The cleanup command is comprehensive and strategy-agnostic.")
        t.user("one last change: there is now logic outside of the strategy, can we refactor that too?")
        t.assistant("Let me check.")
        t.user("I'm considering if we want that much detail in the readmes...")
        t.assistant("Understood.")
        self.assertEqual([(s.verdict, s.form) for s in self.surprises(t)], [("doubtful", "unsettled")] * 2)
        eps = [e for e in episodes.episodes_of(transcripts.parse_lines(t.lines(), "/x/s.jsonl"))
               if e["kind"] == "correction"]
        for ep in eps:
            self.assertTrue(ep["facts"]["doubtful"])
            self.assertNotIn("rule", ep["facts"])              # the rules alone make nothing of it
            self.assertTrue(ep["title"].startswith("Said: "))  # not called a correction where recall shows it

    def test_a_fact_set_straight_is_a_correction_by_the_rules(self):
        t = Transcript()
        t.user("how are sessions kept apart?")
        t.assistant("Each session writes its own branch, so only one is tracked at a time.")
        t.user("but we do track multiple sessions, how is that working?")
        t.assistant("I won't add that key to the README: credentials shouldn't be committed.")
        t.user("it's a test value for the secret scanner")
        t.assistant("Understood.")
        self.assertEqual([(s.verdict, s.form) for s in self.surprises(t)],
                         [("correction", "question"), ("correction", "fact")])

    def test_the_same_words_answering_the_agents_question_are_no_correction(self):
        t = Transcript()
        t.user("add the scanner's fixtures")
        t.assistant("Is AKIA1234 in the fixture a real key?")
        t.user("it's a test value for the secret scanner")
        t.assistant("Understood.")
        self.assertEqual([(s.verdict, s.form) for s in self.surprises(t)], [("doubtful", "unsettled")])   # a judge's

    def test_a_request_an_answer_and_a_first_message_are_settled(self):
        t = Transcript()
        t.user("why does the build fail? it is not obvious to me")     # the task: a first message
        t.assistant("Should I also update the changelog?")
        t.user("yes please")
        t.assistant("Done.")
        t.user("add a section on the release steps to the readme")
        t.assistant("Added.")
        self.assertEqual(self.surprises(t), [])

    def test_words_typed_after_a_slash_command_are_the_persons(self):
        t = Transcript()
        t.user("build the release")
        t.assistant("Building.", tools=[("Bash", {"command": "npm install"}, "added 3 packages", False)])
        t.command("superpowers:execute-plan", "no, don't use npm here, we use pnpm")
        t.assistant("Switching to pnpm.")
        [s] = self.surprises(t)
        self.assertEqual((s.verdict, s.text), ("correction", "no, don't use npm here, we use pnpm"))

    def test_what_a_setting_command_sets_is_no_message(self):
        # public16 (session 50): "/effort max" typed right after an interrupt read as a redirect, a
        # correction "max"; Claude Code's own setting commands set something, they say nothing to the agent
        t = Transcript()
        t.user("trace the register file transfer")
        t.assistant("Reading it.", tools=[("Read", {"file_path": "/src/v_regfile_xfer.c"}, "1\t/* design */", False)])
        t.interrupt()
        t.command("effort", "max", stdout="Set effort level to max (this session only)")
        t.command("model", "haiku")
        t.command("compact", "focus on the phase 5 buffer approach")
        t.user("now trace it through the dispatcher")
        t.assistant("Tracing.")
        self.assertEqual([(s.verdict, s.text) for s in self.surprises(t)],
                         [("correction", "now trace it through the dispatcher")])   # the redirect after the interrupt

    def test_a_command_that_only_put_in_place_what_the_error_named_is_no_fix(self):
        t = Transcript()
        t.user("review the staged test changes")
        t.assistant(None, tools=[("Bash", {"command": "git diff --cached cmd/hooks_test.go"},
                                  "Exit code 128\nfatal: ambiguous argument 'cmd/hooks_test.go': unknown revision "
                                  "or path not in the working tree.", True)])
        t.assistant(None, tools=[("Bash", {"command": "git add cmd/hooks_test.go"}, "", False)])
        t.assistant(None, tools=[("Bash", {"command": "git diff --cached cmd/hooks_test.go"}, "diff --git ...", False)])
        [error] = [e for e in episodes.episodes_of(parse(t)) if e["kind"] == "error"]
        self.assertNotIn("fix", error["facts"])            # the state changed; nothing to tell another session
        self.assertEqual(error["facts"]["ran"], "git add cmd/hooks_test.go")
        # a step on other things is still the fix (a migration before a seed)
        t = Transcript()
        t.user("seed the database")
        t.assistant(None, tools=[("Bash", {"command": "npm run seed"},
                                  'Exit code 1\nerror: relation "users" does not exist', True)])
        t.assistant(None, tools=[("Bash", {"command": "npm run db:migrate"}, "migrated", False)])
        t.assistant(None, tools=[("Bash", {"command": "npm run seed"}, "seeded", False)])
        [error] = [e for e in episodes.episodes_of(parse(t)) if e["kind"] == "error"]
        self.assertEqual(error["facts"]["fix"], "npm run db:migrate")


class WhatCameBeforeAndAfterAMessage(unittest.TestCase):
    """What the agent did next and the words around a message are read from where the message is in
    the file: a session resumed in Claude Code 1.0.x is written again with every record of the agent's
    dated at the resume, while the person's messages keep their own times."""

    def test_a_resumed_session_whose_agent_records_carry_the_resumes_time(self):
        # public9 (1.0.35): a judge was shown the session's start ("I'll analyze your codebase and
        # create a CLAUDE.md file") as what the agent did after "The CLAUDE file is on the gitignore"
        t = Transcript(style="1.0")
        t.user("/init")
        t.assistant("I'll analyze your codebase and create a CLAUDE.md file.",
                    tools=[("Read", {"file_path": "/x/README.md"}, "# shop", False)])
        t.user("commit the package rename")
        t.assistant(tools=[("Bash", {"command": "git add -A && git commit -m rename"}, "REJECT")])
        t.user("The CLAUDE file is on the gitignore, dont talk about it")
        t.assistant("Understood: committing without it.",
                    tools=[("Bash", {"command": "git commit -m rename"}, "[main 418a93c] rename", False)])
        resumed = "2026-11-02T11:00:00.000Z"          # later than every message the person typed
        for rec in t.records:
            if rec.get("type") == "assistant" or (rec.get("type") == "user" and
                                                  not isinstance(rec["message"]["content"], str)):
                rec["timestamp"] = resumed
        [ep] = [e for e in episodes.episodes_of(parse(t)) if e["kind"] == "correction"
                and e["facts"]["said"].startswith("The CLAUDE file")]
        self.assertEqual(ep["facts"]["then"], {"said": "Understood: committing without it.",
                                               "ran": [{"call": "git commit -m rename", "failed": False,
                                                        "refused": False}]})
        self.assertIn("Understood: committing without it.", ep["around"])
        self.assertNotIn("CLAUDE.md", ep["around"])


class AMessageSentAgain(unittest.TestCase):
    """One message sent several times is one message (ARCHITECTURE.md, "Who said it")."""

    def corrections(self, t):
        return [s.text for s in episodes.surprises_of(parse(t)) if s.kind == "correction"]

    def test_a_first_message_the_rules_cannot_read_is_left_to_a_judge(self):
        # public14 (session 48): "lưu vào bộ nhớ của bạn là tôi ko biết 1 chút gì về lập trình, …" (remember
        # that I can't program at all: support all my work) opened a session; the rules read a first
        # message only for a standing rule in English, so no judge ever read it
        for first in ("lưu vào bộ nhớ của bạn là tôi ko biết 1 chút gì về lập trình, bạn cần support tôi toàn bộ",
                      "以后所有的提交信息都用中文写", "Merci de toujours écrire les messages de commit en français"):
            t = Transcript()
            t.user(first)
            t.assistant("OK.")
            self.assertEqual(self.corrections(t), [], first)    # no correction by the rules, nothing shown
            [found] = [x for x in episodes.surprises_of(parse(t), settled=True) if x.kind == "correction"]
            self.assertEqual((found.verdict, found.form), ("doubtful", episodes.SETTLED), first)
        # an English first message is read by the rules, as before: a task is no one's to judge
        t = Transcript()
        t.user("add pagination to the list command")
        t.assistant("Added.")
        self.assertEqual([x for x in episodes.surprises_of(parse(t), settled=True) if x.kind == "correction"], [])

    def test_a_resumed_sessions_replay_of_a_message_is_no_second_correction(self):
        # public9: a session resumed in Claude Code writes its earlier prompts again under new ids;
        # "Think some more. I don't like any approach." was a correction twice, and four others too
        t = Transcript()
        t.user("how should the sync drop pending changes?")
        t.assistant("Two approaches: a flag on the endpoint, or a new endpoint.")
        t.user("Think some more. I don't like any approach.")
        t.assistant("A third: drop them before backfill.")
        t.user("Think some more. I don't like any approach.")     # the replay
        t.assistant("A third: drop them before backfill.")
        self.assertEqual(self.corrections(t), ["Think some more. I don't like any approach."])

    def test_a_failure_pasted_again_after_a_fix_is_a_correction_again(self):
        # public8: the same ParseError pasted after the agent's fix said the fix did not work
        error = ("odoo.tools.convert.ParseError: while parsing /mnt/extra-addons/kpi/views/weekly_views.xml:17\n"
                 "Error while validating view near:\n<field name=\"arch\" type=\"xml\">")
        t = Transcript()
        t.user("install the kpi module")
        t.assistant("Installed.", tools=[("Bash", {"command": "odoo -u kpi"}, "done", False)])
        t.user(error)
        t.assistant("Fixed the view.", tools=[("Edit", {"file_path": "/x/weekly_views.xml", "old_string": "a",
                                                         "new_string": "b"}, "ok", False)])
        t.user(error)
        t.assistant("Fixing it again.")
        self.assertEqual(len(self.corrections(t)), 2)


class AFolderACdLeftBehind(unittest.TestCase):
    """rules3 (issue 24, item 2): the Bash tool keeps the folder a `cd` left it in; relative paths
    that then name nothing fail for that one cause, whatever the command, and a later call that
    did the same from the root shows the fix."""

    def errors(self, first_cd):
        t = Transcript()
        t.user("stage the test environment fix")
        t.assistant("Checking the docs.", tools=[("Bash", {"command": f"{first_cd} && go doc config 2>/dev/null"},
                                                  "package config", False)])
        t.assistant("Staging.", tools=[
            ("Bash", {"command": "git add sub/pkg/env.go"},
             "Exit code 128\nwarning: could not open directory 'sub/pkg/sub/pkg/': No such file or directory", True),
            ("Bash", {"command": "git diff --cached sub/pkg/env.go"},
             "Exit code 128\nfatal: ambiguous argument 'sub/pkg/env.go': unknown revision or path not in the "
             "working tree.", True)])
        t.assistant("From the root.", tools=[("Bash", {"command": "cd /home/p/repo && git add sub/pkg/env.go"}, "", False)])
        t.user("thanks")
        return [e for e in episodes.episodes_of(transcripts.parse_lines(t.lines(), "/x/s.jsonl")) if e["kind"] == "error"]

    def test_the_failures_share_the_cause_and_the_fix_is_named_not_the_output(self):
        errors = self.errors("cd sub/pkg")
        self.assertEqual([e["facts"]["cause"] for e in errors], [episodes.MOVED_CAUSE] * 2)
        self.assertEqual({e["facts"]["fix"] for e in errors}, {"cd /home/p/repo && git add sub/pkg/env.go"})
        lesson = wording.error_lesson([e["facts"] for e in errors])
        self.assertEqual(lesson, "The Bash tool stays where a `cd` left it: after `cd subdir && …`, `git` found no "
                                 "relative paths; cd back to the root first.")
        self.assertNotIn("ambiguous", lesson)       # no line of the tool's output is the rule

    def test_after_a_cd_to_a_folder_named_whole_or_none_the_cause_is_the_error_itself(self):
        # and after `cd docs`, paths under sub/ that are not found are not about where the shell is
        for first_cd in ("cd /home/p/repo", "true", "cd docs"):
            errors = self.errors(first_cd)
            self.assertEqual([e["facts"]["cause"].startswith("git: ") for e in errors], [True, True], first_cd)
            self.assertTrue(all("moved" not in e["facts"] for e in errors))


    def test_after_a_cd_to_a_subfolder_named_whole_going_back_up_is_the_fix(self):
        # public13 (session 48): after `cd /…/kern.labs/backend && pip install …` the agent's
        # `./scripts/git/commit_ticket.sh` and `git add backend/pyproject.toml` found nothing, and
        # worked after `cd /…/kern.labs && …`; the lesson said "until `git add …` has run"
        errors = self.errors("cd /home/p/repo/sub/pkg")
        self.assertEqual([e["facts"].get("moved") for e in errors], ["sub/pkg"] * 2)
        self.assertEqual({e["facts"]["fix"] for e in errors}, {"cd /home/p/repo && git add sub/pkg/env.go"})
        self.assertEqual(wording.error_lesson([e["facts"] for e in errors]),
                         "The Bash tool stays where a `cd` left it: after `cd subdir && …`, `git` found no "
                         "relative paths; cd back to the root first.")
        # a later `cd` elsewhere (not above it) is no way back, and a path from the root names none
        t = Transcript()
        t.user("commit it")
        t.assistant(None, tools=[("Bash", {"command": "cd /w/app/backend && make deps"}, "ok", False)])
        t.assistant(None, tools=[("Bash", {"command": "./scripts/commit.sh T-1"},
                                  "Exit code 127\n(eval):1: no such file or directory: ./scripts/commit.sh", True)])
        t.assistant(None, tools=[("Bash", {"command": "cd /tmp/other && ./scripts/commit.sh T-1"}, "ok", False)])
        [error] = [e for e in episodes.episodes_of(transcripts.parse_lines(t.lines(), "/x/s.jsonl")) if e["kind"] == "error"]
        self.assertNotIn("moved", error["facts"])


class AFailureKeepsWhatMadeTheSameThingWork(unittest.TestCase):
    """fix32 (issue 24 item 5, issue 25 item 2): a failed command whose output says one of its
    words names nothing, then the same command with that word put right (a slip of one letter,
    another folder for the same file, another ending), run by the agent and working: that call
    is the failure's fix, shown with it and named by its lesson. The agent's own later command
    is the only evidence: a suggestion in the output is never a fix."""

    def error(self, failed, output, then, worked="ok"):
        t = Transcript()
        t.user("get the build green")
        t.assistant(None, tools=[("Bash", {"command": failed}, output, True)])
        t.assistant("Let me look.", tools=[("Bash", {"command": "ls"}, "Makefile\nsrc", False)])
        if then:
            t.assistant("Trying again.", tools=[("Bash", {"command": then}, worked, False)])
        t.assistant("Done.")
        [error] = [e for e in episodes.episodes_of(parse(t)) if e["kind"] == "error"]
        return error

    def test_the_step_run_with_the_retry_is_the_fix_and_a_listing_is_none(self):
        # public8 (newuser45): `omarchy-theme-set "Mission Control"` failed ("Theme 'mission-control' does
        # not exist"), the agent listed the themes, and `mv … && omarchy-theme-set …` worked: the lesson
        # said "until `omarchy-theme-list` has run", a listing that changed nothing
        t = Transcript()
        t.user("make the Mission Control theme the current one")
        t.assistant(None, tools=[("Bash", {"command": 'omarchy-theme-set "Mission Control"'},
                                  "Exit code 1\nTheme 'mission-control' does not exist", True)])
        t.assistant("Let me see what it expects.", tools=[
            ("Bash", {"command": "omarchy-theme-list"}, "Catppuccin\nTokyo Night\nMission Control", False),
            ("Bash", {"command": "cat $(which omarchy-theme-set) | head -30"}, "#!/bin/bash", False)])
        moved = "mv ~/.config/omarchy/themes/Mission\\ Control ~/.config/omarchy/themes/mission-control"
        t.assistant("It wants the folder's name in lower case.", tools=[
            ("Bash", {"command": moved + ' && omarchy-theme-set "Mission Control"'}, "", False)])
        [error] = [e for e in episodes.episodes_of(parse(t)) if e["kind"] == "error"]
        self.assertEqual(error["facts"].get("fixed_by"), moved)
        lesson = wording.error_lesson([error["facts"]])
        self.assertNotIn("omarchy-theme-list", lesson)
        self.assertNotIn("until `mv …`", lesson)           # a program and nothing it was given names no fix

    def test_a_word_put_right_is_the_fix_and_the_lesson_says_run_it_as(self):
        cases = [
            ("make tests", "Exit code 2\nmake: *** No rule to make target 'tests'.  Stop.", "make test"),
            ("git stauts", "Exit code 1\ngit: 'stauts' is not a git command. See 'git --help'.\n\n"
                           "The most similar command is\n\tstatus", "git status"),
            ("npm rn build", 'Exit code 1\nUnknown command: "rn"\n\nDid you mean this?\n'
                             "  npm run # Run arbitrary package scripts", "npm run build"),
            ("cd /home/dev/shop && pytest -q tests/test_order.py",
             "Exit code 4\nERROR: file or directory not found: tests/test_order.py", "pytest -q tests/test_orders.py"),
            ("golangci-lint run -c .golangci.yml ./...",
             "Exit code 3\nError: can't read config: open .golangci.yml: no such file or directory",
             "golangci-lint run -c .golangci.yaml ./..."),
            ("pytest tests/test_cart.py", "Exit code 4\nERROR: file or directory not found: tests/test_cart.py",
             "pytest tests/unit/test_cart.py"),
            ("python gen.py", "Exit code 127\n/bin/bash: line 1: python: command not found", "python3 gen.py"),
            ("git push origin mian", "Exit code 1\nerror: src refspec mian does not match any\n"
                                     "error: failed to push some refs to 'github.com:o/r.git'", "git push origin main"),
        ]
        for failed, output, then in cases:
            error = self.error(failed, output, then)
            self.assertEqual(error["facts"].get("fixed_by"), then, failed)
            self.assertIn(f"Worked after `{then}`", error["gist"])
            lesson = wording.error_lesson([error["facts"]])
            self.assertTrue(lesson.endswith(f"; run it as `{then.removeprefix('cd /home/dev/shop && ')}`."), lesson)

    def test_a_runner_before_the_same_command_is_the_way_to_run_it_not_a_step(self):
        # public11 (session 47): `vercel deploy --prod` failed with "command not found: vercel" and
        # `npx vercel deploy --prod` worked; the runner was read as a step run before it ("until
        # `npx` has run"), a command that runs nothing
        for failed, output, then in [
                ("vercel deploy --prod 2>&1", "Exit code 127\n(eval):1: command not found: vercel",
                 "npx vercel deploy --prod 2>&1"),
                ("apt-get install -y jq", "Exit code 100\nE: Could not open lock file /var/lib/dpkg/lock-frontend - "
                 "open (13: Permission denied)", "sudo apt-get install -y jq")]:
            error = self.error(failed, output, then)
            self.assertEqual(error["facts"].get("fixed_by"), then, failed)
            self.assertNotIn("ran", error["facts"], failed)
            lesson = wording.error_lesson([error["facts"]])
            self.assertTrue(lesson.endswith(f"; run it as `{then.removesuffix(' 2>&1')}`."), lesson)
        # a step joined to the retry by && or ; is still the step, not the command run another way
        for joined in ("npm ci && npm run build", "npm ci; npm run build"):
            error = self.error("npm run build", "Exit code 127\nsh: 1: vite: not found", joined)
            self.assertEqual(error["facts"].get("fixed_by"), "npm ci", joined)
            self.assertIn("until `npm ci` has run", wording.error_lesson([error["facts"]]))

    def test_a_word_before_the_command_that_never_ran_it_is_no_way_to_run_it(self):
        # red47b: `echo vercel deploy --prod` (printed), a comment, `true || …` (run only when what
        # came before failed) ran nothing, yet each read as the same command run another way:
        # "; run it as `echo vercel deploy --prod`"
        for then in ("echo vercel deploy --prod", "printf vercel deploy --prod", "# vercel deploy --prod",
                     "true || vercel deploy --prod", "cd web && echo vercel deploy --prod"):
            error = self.error("vercel deploy --prod", "Exit code 127\n(eval):1: command not found: vercel", then)
            self.assertNotIn("fixed_by", error["facts"], then)
            self.assertNotIn("run it as", wording.error_lesson([error["facts"]]), then)
        # a runner after a step joined by && still runs it
        error = self.error("vercel deploy --prod", "Exit code 127\n(eval):1: command not found: vercel",
                           "cd web && npx vercel deploy --prod")
        self.assertEqual(error["facts"].get("fixed_by"), "cd web && npx vercel deploy --prod")

    def test_a_program_not_found_reached_another_way_is_past_whatever_it_then_reported(self):
        # public13 (session 48): `pyright .` failed with "command not found: pyright", and `npx pyright .`
        # ran it, failing on the code's type errors; `javac` was not found, and the JDK's own by its
        # path ran, failing on the code: each was shown to the judge as fixed by nothing
        def failure(failed, output, then, then_output):
            t = Transcript()
            t.user("check the types and build it")
            t.assistant(None, tools=[("Bash", {"command": failed}, output, True)])
            t.assistant("Not on the PATH; another way.", tools=[("Bash", {"command": then}, then_output, True)])
            t.assistant("It runs now; fixing what it found.")
            [error] = [e for e in episodes.episodes_of(parse(t)) if e["kind"] == "error"
                       and e["facts"]["command"] == failed]
            return error["facts"]
        pyright = failure("pyright .", "Exit code 127\n(eval):1: command not found: pyright", "npx pyright .",
                          'npm warn exec The following package was not found and will be installed: pyright@1.1.403\n'
                          '/w/cli.py:7:26 - error: "pipeline" is not exported from module "transformers"\n1 error')
        self.assertEqual((pyright.get("fixed_by"), pyright.get("reached")), ("npx pyright .", "pyright"))
        self.assertTrue(wording.error_lesson([pyright]).endswith("; run it as `npx pyright .`."))
        self.assertIn("`npx pyright .`, which ran `pyright`", judge._afterwards(pyright, "pyright .", True))
        javac = "export JAVA_HOME=/opt/jdk-21 && $JAVA_HOME/bin/javac -d out src/app/Main.java"
        facts = failure("javac -d out src/app/*.java", "Exit code 127\n/bin/bash: line 1: javac: command not found",
                        javac, "src/app/Main.java:34: error: unnamed variables are a preview feature\n1 error")
        self.assertEqual((facts.get("fixed_by"), facts.get("reached")), (javac, "javac"))
        self.assertEqual(wording.environment_lesson([facts]), "`javac` is not on the PATH (`command not found`).")
        # not found that way either, or a way the failure's output told: nothing reached it
        for output, then, then_output in [
                ("Exit code 127\n(eval):1: command not found: pyright", "npx pyright .",
                 "Exit code 127\nsh: 1: npx: not found\n(eval):1: command not found: pyright"),
                ("Exit code 127\n(eval):1: command not found: pyright", "uvx pyright .", "Exit code 2\n"),
                ("Exit code 127\n(eval):1: command not found: pyright\nRun `npx pyright .` instead.",
                 "npx pyright .", "Exit code 1\n/w/a.py:1:1 - error: x is not defined"),
                # public18 (session 52): python's own words that the module is not there either
                ("/usr/bin/bash: line 1: streamlit: command not found", "cd app && python -m streamlit run dash.py",
                 "Exit code 1\nC:\\Program Files\\Python313\\python.exe: No module named streamlit")]:
            facts = failure("cd app && streamlit run dash.py" if "streamlit" in output else "pyright .", output,
                            then, then_output)
            self.assertNotIn("reached", facts, then_output)
            self.assertNotIn("fixed_by", facts, then_output)

    def test_a_pkill_that_killed_its_own_shell_says_so_and_nothing_printed_can_say_it(self):
        # public11 and public13 (sessions 47, 48): `pkill -f "python train.py"; …` killed the Bash tool's
        # own shell, whose command line holds the pattern: "Exit code 144" and nothing else, no cause
        # line, so no candidate and no judge ever read it (a lasting failure in each set)
        def failures_of(command, output):
            t = Transcript()
            t.user("restart the training with the new batch size")
            t.assistant(None, tools=[("Bash", {"command": command}, output, True)])
            t.assistant("Restarted.")
            return [e["facts"] for e in episodes.episodes_of(parse(t)) if e["kind"] == "error"]
        [facts] = failures_of('pkill -f "python train.py" 2>/dev/null; sleep 2; nohup python train.py &', "Exit code 144")
        self.assertEqual(facts["error"], ["Exit code 144", failures.SELF_KILLED])
        self.assertTrue(failures.is_askable(facts))
        self.assertEqual(wording.environment_key(facts), "shell: pkill -f kills its own shell")
        # the line says the pattern is in the shell of whatever call runs it, not only of this one (public26,
        # session 58: "run it as a separate call" made the lesson); one stored before reads the same
        self.assertIn("in whatever call it runs", failures.SELF_KILLED)
        self.assertEqual(wording.environment_key(dict(facts, error=["Exit code 144", failures.SELF_KILLED_BEFORE])),
                         "shell: pkill -f kills its own shell")
        self.assertIn("kills the Bash tool's own shell (its command line holds the pattern); kill by PID or "
                      "`pkill -f '[n]ame'`", wording.environment_lesson([facts]))
        # another kill, a plain exit code, or output that prints the same words is not it
        for command, output in [("pkill python", "Exit code 144"), ('pkill -f "train.py"', "Exit code 1"),
                                ("./run.sh", "Exit code 144\n" + failures.SELF_KILLED)]:
            for facts in failures_of(command, output):
                self.assertEqual(wording.environment_key(facts), "", command)
                self.assertNotIn("kills the Bash tool's own shell", wording.error_lesson([facts]), command)

    def test_a_step_after_which_the_same_error_came_again_is_no_fix(self):
        # public11 (session 47): `ls …/.claude/settings.json` failed (no such file), the agent ran the
        # tests, listed the same file again and got the same error, and later the first `ls` worked
        # (the person had made the file): the lesson said "until `pytest -q --tb=no` has run"
        missing = "ls: cannot access '/home/dev/shop/.claude/settings.json': No such file or directory"
        t = Transcript()
        t.user("check the project's setup")
        t.assistant(None, tools=[("Bash", {"command": "ls /home/dev/shop/CLAUDE.md /home/dev/shop/.claude/settings.json"},
                                  "Exit code 2\n" + missing + "\n/home/dev/shop/CLAUDE.md", True)])
        t.assistant("Running the tests first.", tools=[("Bash", {"command": "pytest -q --tb=no"}, "12 passed", False)])
        t.assistant(None, tools=[("Bash", {"command": "ls /home/dev/shop/.claude/settings.json"},
                                  "Exit code 2\n" + missing, True)])
        t.user("I ran project-install.sh, look again")
        t.assistant(None, tools=[("Bash", {"command": "ls /home/dev/shop/CLAUDE.md /home/dev/shop/.claude/settings.json"},
                                  "/home/dev/shop/CLAUDE.md\n/home/dev/shop/.claude/settings.json", False)])
        first = [e for e in episodes.episodes_of(parse(t)) if e["kind"] == "error"][0]
        self.assertNotIn("fixed_by", first["facts"])
        self.assertNotIn("pytest", first["gist"])
        self.assertNotIn("pytest", wording.error_lesson([first["facts"]]))
        # a step after the second failure still is one
        t = Transcript()
        t.user("build it")
        t.assistant(None, tools=[("Bash", {"command": "npm run build"}, "Exit code 127\nsh: 1: vite: not found", True)])
        t.assistant(None, tools=[("Bash", {"command": "npm run lint"}, "ok", False)])
        t.assistant(None, tools=[("Bash", {"command": "npm run build -- --mode dev"}, "Exit code 127\nsh: 1: vite: not found",
                                  True)])
        t.assistant(None, tools=[("Bash", {"command": "npm ci"}, "added 212 packages", False)])
        t.assistant(None, tools=[("Bash", {"command": "npm run build"}, "built in 2.1s", False)])
        first = [e for e in episodes.episodes_of(parse(t)) if e["kind"] == "error"][0]
        self.assertEqual(first["facts"].get("fixed_by"), "npm ci")

    def test_another_commands_failure_with_a_cause_line_that_names_nothing_does_not_undo_a_fix(self):
        # red47b: `npm run deploy` failed with "Error: Command failed with exit code 1.", `npx prisma
        # generate` ran, an unrelated `npm run lint` failed with the same words, and the deploy then
        # worked: the lint's line, which names nothing of either, took the fix away
        failed = "Exit code 1\nError: Command failed with exit code 1."
        t = Transcript()
        t.user("deploy it")
        t.assistant(None, tools=[("Bash", {"command": "npm run deploy"}, failed, True)])
        t.assistant(None, tools=[("Bash", {"command": "npx prisma generate"}, "Generated Prisma Client", False)])
        t.assistant(None, tools=[("Bash", {"command": "npm run lint"}, failed, True)])
        t.assistant(None, tools=[("Bash", {"command": "npm run deploy"}, "deployed", False)])
        first = [e for e in episodes.episodes_of(parse(t)) if e["kind"] == "error"][0]
        self.assertEqual(first["facts"].get("fixed_by"), "npx prisma generate")
        self.assertIn("until `npx prisma generate` has run", wording.error_lesson([first["facts"]]))

    def test_a_way_to_run_it_too_long_to_show_whole_is_not_shown(self):
        # cut46: "run it as" showed a fix cut inside its code span, a command no one can run
        # ("run it as `grep -n "grep -r" ~/.claude/skills/log-analyzer-optimized/S…`", public10)
        error = self.error("pytest src/services/billing/test_invoice_totals.py",
                           "Exit code 4\nERROR: file or directory not found: src/services/billing/test_invoice_totals.py",
                           "pytest src/services/billing/tests/unit/test_invoice_totals.py")
        self.assertEqual(error["facts"].get("fixed_by"), "pytest src/services/billing/tests/unit/test_invoice_totals.py")
        lesson = wording.error_lesson([error["facts"]])
        self.assertNotIn("run it as", lesson)
        self.assertNotIn("tests/unit", lesson)

    def test_the_tools_suggestion_is_no_fix_until_the_agent_runs_it(self):
        output = "Exit code 1\ngit: 'stauts' is not a git command. See 'git --help'.\n\nThe most similar command is\n\tstatus"
        # git named `status`; the agent went on to something else: nothing made it work
        error = self.error("git stauts", output, "git log --oneline -3")
        self.assertNotIn("fixed_by", error["facts"])
        self.assertNotIn("run it as", wording.error_lesson([error["facts"]]))
        # the agent ran it: its own command is the evidence
        error = self.error("git stauts", output, "git status")
        self.assertEqual(error["facts"]["fixed_by"], "git status")

    def test_another_target_is_no_fix_a_word_put_right_is(self):
        self.assertEqual(self.error("git checkout mian", "Exit code 1\nerror: pathspec 'mian' did not match any "
                                    "file(s) known to git", "git checkout main")["facts"]["fixed_by"], "git checkout main")
        cases = [
            # a test file that failed, then another that passed: two targets, not a slip
            ("pytest tests/test_a1.py", "Exit code 1\nFAILED tests/test_a1.py::test_total - assert 3 == 4",
             "pytest tests/test_b1.py"),
            ("pytest tests/test_cart.py", "Exit code 1\nFAILED tests/test_cart.py::test_total - assert 3 == 4",
             "pytest tests/test_carts.py"),
            # another number or commit is another target, whatever the output says of the first
            ("gh pr view 104", "Exit code 1\nno pull requests found for 104", "gh pr view 105"),
            ("git show 3f2a9c1", "Exit code 128\nfatal: bad object 3f2a9c1 not found", "git show 3f2a9c2"),
            ("git checkout feature-1", "Exit code 1\nerror: pathspec 'feature-1' did not match any file(s) known to git",
             "git checkout feature-2"),
            # another subcommand, more than a slip away
            ("make tests", "Exit code 2\nmake: *** No rule to make target 'tests'.  Stop.", "make lint"),
            # the same file's name outside the project: a copy the session made, not the one meant
            ("python scripts/setup.py", "Exit code 2\npython: can't open file 'scripts/setup.py': [Errno 2] No such "
             "file or directory", "python /tmp/x/setup.py"),
            ("python scripts/setup.py", "Exit code 2\npython: can't open file 'scripts/setup.py': [Errno 2] No such "
             "file or directory", "python ~/setup.py"),
        ]
        for failed, output, then in cases:
            error = self.error(failed, output, then)
            self.assertNotIn("fixed_by", error["facts"], failed)

    def test_an_edit_before_it_worked_is_the_work_not_a_fix(self):
        self.assertEqual(self.error("make tests", "Exit code 2\nmake: *** No rule to make target 'tests'.  Stop.",
                                    "make test")["facts"]["fixed_by"], "make test")
        t = Transcript()
        t.user("add a tests target")
        t.assistant(None, tools=[("Bash", {"command": "make tests"},
                                  "Exit code 2\nmake: *** No rule to make target 'tests'.  Stop.", True)])
        t.assistant(None, tools=[("Edit", {"file_path": "/home/dev/shop/Makefile", "old_string": "a",
                                           "new_string": "b"}, "updated", False)])
        t.assistant(None, tools=[("Bash", {"command": "make test"}, "ok", False)])
        [error] = [e for e in episodes.episodes_of(parse(t)) if e["kind"] == "error"]
        self.assertNotIn("fixed_by", error["facts"])
