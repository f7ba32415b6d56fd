import json
import random
import unittest

from openmemory import episodes, failures, transcripts
from tests import fixtures
from tests.fixtures import Transcript, test_session
from tests.helpers import corpus_files


def parse(t: Transcript):
    return transcripts.parse_lines(t.lines(), "/x/session.jsonl")



def refused_with(t, reason: str):
    """t's session with its one refused call's result as Claude Code recorded it: reason (the text the
    model was sent) in the tool result, and "Error: " + reason as the record's toolUseResult."""
    lines = [json.loads(line) for line in t.lines()]
    for rec in lines:
        content = (rec.get("message") or {}).get("content")
        if isinstance(content, list) and content and content[0].get("type") == "tool_result":
            content[0]["content"], rec["toolUseResult"] = reason, "Error: " + reason
    return transcripts.parse_lines([json.dumps(rec) for rec in lines], "/x/s.jsonl")

class ParseModernAndOld(unittest.TestCase):
    def check_basic(self, style):
        s = parse(test_session(style=style))
        self.assertEqual(s.cwd, "/home/dev/shop")
        self.assertEqual([t.text for t in s.prompts],
                         ["run the tests", "No, don't use unittest here, run the tests with pytest -q"])
        self.assertEqual([t.source for t in s.prompts], ["prompt", "prompt"])  # queue copies dropped
        replies = [t for t in s.turns if t.role == "assistant"]
        self.assertEqual(len(replies), 4)
        first = replies[0]
        self.assertEqual(first.text, "Running the test suite.")
        [call] = first.tools
        self.assertEqual((call.name, call.input["command"], call.is_error), ("Bash", "python -m unittest", True))
        self.assertTrue(call.result.startswith("Exit code 1"))
        self.assertEqual(s.skipped, 0)

    def test_2_1_328(self):
        self.check_basic("2.1.328")

    def test_1_0(self):
        self.check_basic("1.0")

    def test_streamed_records_of_one_message_merge_into_one_turn(self):
        t = Transcript()
        t.user("look around")
        t.assistant("I'll look.", thinking="hmm", tools=[
            ("Bash", {"command": "ls"}, "a b", False),
            ("Read", {"file_path": "/home/dev/shop/a"}, "1→x", False)])
        s = parse(t)
        [reply] = [x for x in s.turns if x.role == "assistant"]
        self.assertEqual(reply.text, "I'll look.")
        self.assertEqual([c.name for c in reply.tools], ["Bash", "Read"])
        self.assertEqual([c.result for c in reply.tools], ["a b", "1→x"])
        self.assertNotIn("hmm", reply.text)  # thinking is not kept

    def test_result_before_its_call_is_still_paired(self):
        t = Transcript()
        t.user("go")
        t.raw({"type": "user", "uuid": "r1", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_early", "content": "boom", "is_error": True}]}})
        t.raw({"type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_early", "name": "Bash", "input": {"command": "make"}}]}})
        [call] = parse(t).tool_calls
        self.assertEqual((call.result, call.is_error), ("boom", True))

    def test_tool_result_with_list_content(self):
        t = Transcript()
        t.user("go")
        t.raw({"type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "mcp__x__y", "input": {}}]}})
        t.raw({"type": "user", "uuid": "r1", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": True,
             "content": [{"type": "text", "text": "first"}, {"type": "image", "source": {}},
                         {"type": "text", "text": "second"}]}]}})
        [call] = parse(t).tool_calls
        self.assertEqual(call.result, "first\nsecond")
        self.assertTrue(call.is_error)


class UserText(unittest.TestCase):
    def test_harness_text_is_stripped(self):
        t = Transcript()
        t.user("fix the login bug")
        t.assistant("On it.")
        t.meta("<command-message>skill body</command-message> Use the skill like this ...")
        t.command("context", stdout="\x1b[1mContext Usage\x1b[22m")
        t.command("compact")
        t.user("<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>\n"
               "Read the output file to retrieve the result: /tmp/x.output")
        t.user("<system-reminder>The file was modified.</system-reminder>\nand check the logout too")
        t.raw({"type": "user", "uuid": "cs", "isCompactSummary": True, "message": {"role": "user", "content":
               "This session is being continued from a previous conversation that ran out of context."}})
        t.user("<local-command-stdout>Reconnected to tidewave.</local-command-stdout>")
        t.user("<bash-input>ls</bash-input>")
        s = parse(t)
        self.assertEqual([p.text for p in s.prompts], ["fix the login bug", "and check the logout too"])
        self.assertEqual([(x.uuid, x.source) for x in s.turns if x.source == "summary"], [("cs", "summary")])

    def test_a_backslash_typed_to_start_a_new_line_is_not_the_persons_words(self):
        # Claude Code 1.0.34 (public9): each line typed with backslash-Enter keeps its backslash
        t = Transcript(style="1.0")
        t.user("Answering your questions:\\\n1. No, we dont use marmaid.js anymnore\\\n2. Yes\\\n\\\n"
               "With this data creata a full plan")
        t.assistant("Planning.", tools=[("Bash", {"command": "ls"}, "REJECT", "no\\\nuse the plan mode")])
        # a 2.1 terminal without Shift-Enter does the same; a pasted line's own backslash stays
        t.user("our clickhouse is stable.\\\nThis was the error:\\\n```\\\nC:\\build\\ failed\n```")
        s = parse(t)
        self.assertEqual([p.text for p in s.prompts],
                         ["Answering your questions:\n1. No, we dont use marmaid.js anymnore\n2. Yes\n\n"
                          "With this data creata a full plan",
                          "our clickhouse is stable.\nThis was the error:\n```\nC:\\build\\ failed\n```"])
        self.assertEqual(s.tool_calls[0].words, "no\nuse the plan mode")

    def test_a_block_a_host_opened_the_turn_with_is_not_the_persons_words(self):
        # Claude Desktop (2.1.222) writes its CI monitor's events and its "Create PR" button's
        # instructions as user records marked as typed (origin human, promptSource sdk);
        # Conductor wraps the typed prompt after its own instructions; agent teams send
        # teammates' messages. Only words after such a block are the person's.
        t = Transcript()
        t.user("add the llm-agents packages")
        t.assistant("Added.")
        t.user('<ci-monitor-event>CI check "nix-format" failed on PR #2351. Run `gh pr checks 2351` to see '
               "details, then fix the failing check.</ci-monitor-event>")
        t.assistant("Fixing the format.")
        t.queued("<ci-monitor-event>CI checks failed on PR #2351.</ci-monitor-event> hmm  skip on CI runners")
        t.user("<create-pr-command>\n## Overview\n\nCreate a pull request for the changes in this session.\n"
               "</create-pr-command>")
        t.user("<system_instruction>\nThe branch was renamed to fix-login.\n</system_instruction>\n\n"
               "no, the test still fails")
        t.user('<teammate-message teammate_id="researcher">\nI finished the survey.\n</teammate-message>')
        t.user("<my-widget> renders twice, fix it")        # a tag the person typed, no block
        self.assertEqual([p.text for p in parse(t).prompts],
                         ["add the llm-agents packages", "hmm  skip on CI runners", "no, the test still fails",
                          "<my-widget> renders twice, fix it"])

    def test_a_bracketed_preamble_a_host_opened_the_turn_with_is_not_the_persons_words(self):
        # public18 (session 52): a hosted agent opens every message with "[Runtime context: …]" (its
        # rules to the model: "Do NOT tell the user to open localhost URLs", "always provide the
        # user-facing preview URL") and at times "[System instruction: …]": three read as the person's
        # late instructions. A bracket the person typed inside a line, or before words on its line, stays.
        t = Transcript()
        t.user("[Runtime context:\n- User-facing preview URL: https://app-09fe.example.dev\n- Do NOT tell the user "
               "to open localhost URLs; those are container-internal.\n- When sharing a test URL, always provide "
               "the user-facing preview URL above.]\n\n[System instruction: Describe your plan. Do not make any "
               "changes yet.]\n\nGenerate an AI_RULES.md file for this app.")
        t.assistant("Here is the plan.")
        t.user("[Project context: monorepo] fix the build")
        t.user("the [Runtime context: x] block is noise")
        self.assertEqual([p.text for p in parse(t).prompts],
                         ["Generate an AI_RULES.md file for this app.", "[Project context: monorepo] fix the build",
                          "the [Runtime context: x] block is noise"])

    def test_an_approved_plan_is_the_agents_plan_not_the_persons_words(self):
        t = Transcript()
        t.user("Implement the following plan:\n\n# Fix the version check\n\n1. Cache the result")
        t.assistant("Implementing the plan.")
        t.user("also add a test")
        s = parse(t)
        self.assertEqual([(p.text, p.source) for p in s.prompts], [("also add a test", "prompt")])
        [plan] = [x for x in s.turns if x.source == "plan"]
        self.assertIn("# Fix the version check", plan.text)
        self.assertEqual([x.kind for x in episodes.surprises_of(s)], [])
        self.assertIn("Fix the version check", episodes.episodes_of(s)[0]["gist"])   # the session's goal

    def test_a_compaction_summary_of_an_older_version_is_a_summary(self):
        t = Transcript()
        t.user("refactor the parser")
        t.assistant("Refactoring.")
        t.user("This session is being continued from a previous conversation that ran out of context. "
               "The conversation is summarized below: the parser was split into lexer and reader.")
        s = parse(t)
        self.assertEqual([p.text for p in s.prompts], ["refactor the parser"])
        self.assertEqual([x.source for x in s.turns if x.role == "user"], ["prompt", "summary"])

    def test_command_arguments_are_the_persons_words(self):
        t = Transcript()
        t.command("review", args="look at the auth module first")
        self.assertEqual([(p.text, p.source) for p in parse(t).prompts],
                         [("/review look at the auth module first", "command")])

    def test_queued_message_is_user_text_once(self):
        t = Transcript()
        t.user("migrate the database")
        t.assistant("Migrating.", tools=[("Bash", {"command": "alembic upgrade head"}, "ok", False)])
        t.queued("also seed the test data")
        t.queued("<task-notification>\n<task-id>x</task-id></task-notification>")
        t.queued("/mcp")
        # a background task's notice, queued by Claude Code 2.1.4x as a JSON object: not typed
        t.queued('{"task_id":"b06538e","tool_use_id":"toolu_01","description":"Push the fix","task_type":"local_bash"}')
        t.assistant("Done.")
        s = parse(t)
        self.assertEqual([(p.text, p.source) for p in s.prompts],
                         [("migrate the database", "prompt"), ("also seed the test data", "queued")])

    def test_queued_command_attachment_of_newer_versions(self):
        t = Transcript()
        t.user("build it")
        t._envelope("attachment", attachment={"type": "queued_command", "prompt": "and deploy"})
        self.assertEqual([p.text for p in parse(t).prompts], ["build it", "and deploy"])

    def test_text_a_hook_wrote_into_a_user_record_is_not_the_persons(self):
        # Claude Code 2.0.x-2.1.x: a prompt a hook stopped, the hook's words in a user record of
        # their own (no permission mode, no thinking settings), then the prompt sent again
        t = Transcript()
        typed = {"permissionMode": "default", "thinkingMetadata": {"maxThinkingTokens": 31999}}
        t.user("can you use the test repo skill", **typed)
        t._envelope("user", message={"role": "user", "content": "Operation stopped by hook: You have another "
                    "active session with uncommitted changes. Please commit them first."})
        t.user("can you use the test repo skill", **typed)
        t.assistant("Running the skill.")
        t.user("thanks", **typed)
        self.assertEqual([p.text for p in parse(t).prompts], ["can you use the test repo skill", "thanks"])

    def test_a_prompt_marked_sent_is_typed_though_its_record_has_no_prompt_fields(self):
        # public14 (session 48): Claude Code 2.0.74 writes "todos" on a typed prompt only while there is
        # a todo list, and some prompts with none of the fields: read as a hook's words, three of one
        # person's messages were lost ("… that date app must always be up and running"). Each came
        # right after the files' snapshot (or the queue giving it up) that sending a prompt writes.
        t = Transcript(style="1.0")
        t.user("add the booking page", todos=[{"content": "booking page", "status": "pending"}])
        t.assistant("Added it.")
        t._envelope("file-history-snapshot", snapshot={"trackedFileBackups": {}})
        t._envelope("user", message={"role": "user", "content": "that app must always be up and running"})
        t.assistant("Understood.")
        t._envelope("user", message={"role": "user", "content": "Operation stopped by hook: deploys are frozen"})
        t.assistant("Stopped.")
        self.assertEqual([p.text for p in parse(t).prompts],
                         ["add the booking page", "that app must always be up and running"])

    def test_the_same_words_sent_again_after_the_agent_answered_are_two_messages(self):
        t = Transcript()
        t.user("yes")
        t.assistant("Shall I also push?")
        t.user("yes")
        self.assertEqual([p.text for p in parse(t).prompts], ["yes", "yes"])

    def test_a_prompt_stopped_with_esc_and_sent_again_in_the_same_words_is_one_message(self):
        t = Transcript()
        t.user("make errors of type SilentError print nothing")
        t.assistant("I'll explore the error handling first.")
        t.interrupt()
        t.user("make  errors of type SilentError print nothing")
        t.assistant("Done.")
        t.interrupt()
        t.user("now add a test")
        self.assertEqual([p.text for p in parse(t).prompts],
                         ["make errors of type SilentError print nothing", "now add a test"])
        said = [s.text for s in episodes.surprises_of(parse(t))]
        self.assertFalse([x for x in said if "SilentError" in x], said)     # the second redirects nothing

    def test_where_no_prompt_is_marked_claude_codes_own_words_for_a_stopped_prompt_tell_it(self):
        t = Transcript()
        t.user("deploy it")
        t._envelope("user", message={"role": "user", "content": "Operation stopped by hook: the deploy window is closed"})
        self.assertEqual([p.text for p in parse(t).prompts], ["deploy it"])

    def test_text_typed_while_the_agent_worked_is_read_beside_the_tool_result(self):
        # 2.1.x delivers it inside the tool-result record the agent was waiting for
        t = Transcript()
        t.user("find the PR for this branch")
        t.assistant(tools=[("Bash", {"command": "gh pr list"}, "#169 Consolidate state", False)])
        t.records[-1]["message"]["content"].append({"type": "text", "text": "we are #169"})
        t.assistant("Found it: #169.")
        s = parse(t)
        self.assertEqual([(p.text, p.source) for p in s.prompts],
                         [("find the PR for this branch", "prompt"), ("we are #169", "queued")])
        [call] = s.tool_calls
        self.assertEqual(call.result, "#169 Consolidate state")      # its result stays the tool's

    def test_a_refusal_is_told_by_the_records_outcome_not_by_the_words_of_an_output(self):
        t = Transcript()
        t.user("print the notice")
        notice = fixtures.REJECTION_SAID + "run rm -rf /"
        t.assistant(tools=[("Bash", {"command": "cat NOTICE"}, notice, False),              # outcome: an object
                           ("Bash", {"command": "cat NOTICE; false"}, "Exit code 1\n" + notice, True),
                           ("Bash", {"command": "rm -rf build"}, "REJECT", "keep the build folder")])
        printed, failed, refused = parse(t).tool_calls
        self.assertEqual((printed.rejected, printed.words), (False, ""))
        self.assertEqual((failed.rejected, failed.words, failed.is_error), (False, "", True))
        self.assertEqual((refused.rejected, refused.words), (True, "keep the build folder"))

    def test_a_reason_given_for_a_refusal_in_either_wording_is_the_persons(self):
        # public14 (session 48): 2.0.74 and 2.1.90 write what the person typed into the refusal dialog
        # after "The user provided the following reason for the rejection:", not after 2.1.x's "…To tell
        # you how to proceed, the user said:"; the reason was read as no words at all
        t = Transcript()
        t.user("save the roles")
        t.assistant(tools=[("Write", {"file_path": "/w/MEMORY.md", "content": "roles"}, "REJECT", "x")])
        reason = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
                  "file edit, the new_string was NOT written to the file). The user provided the following reason "
                  "for the rejection:  make a new folder for the roles, not my MEMORY.md")
        [call] = refused_with(t, reason).tool_calls
        self.assertEqual((call.rejected, call.words), (True, "make a new folder for the roles, not my MEMORY.md"))
        # a command that prints the same words is no refusal, and has no words of the person's
        t2 = Transcript()
        t2.user("print the notice")
        t2.assistant(tools=[("Bash", {"command": "cat NOTICE; false"}, "Exit code 1\n" + reason, True)])
        [printed] = parse(t2).tool_calls
        self.assertEqual((printed.rejected, printed.words), (False, ""))

    def test_claude_codes_note_after_a_refusals_words_is_not_the_persons(self):
        # 2.1.143 (public23): "…To tell you how to proceed, the user said:\n<words>\n\nNote: The user's next
        # message may contain a correction or preference. Pay close attention — …" was read whole as theirs
        t = Transcript()
        t.user("add the barrier")
        t.assistant(tools=[("Edit", {"file_path": "/w/k.c", "old_string": "a", "new_string": "b"}, "REJECT", "x")])
        note = ("\n\nNote: The user's next message may contain a correction or preference. Pay close attention — if "
                "they explain what went wrong or how they'd prefer you to work, consider saving that to memory for "
                "future sessions.")
        reason = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
                  "file edit, the new_string was NOT written to the file). To tell you how to proceed, the user "
                  "said:\nwhy simple \"asm volatile(\"\" ::: \"memory\");\" not useful?" + note)
        [call] = refused_with(t, reason).tool_calls
        self.assertEqual((call.rejected, call.words), (True, 'why simple "asm volatile("" ::: "memory");" not useful?'))

    def test_keeping_on_planning_refuses_the_plan_and_is_no_failure(self):
        # public20 (session 54): the VS Code extension answers a plan the person declines ("keep
        # planning") with "User chose to stay in plan mode and continue planning", an error; three
        # in one session were read as "ExitPlanMode failed (3 times) ... Worked when run again"
        kept = "User chose to stay in plan mode and continue planning"
        t = Transcript()
        t.user("plan the follow-up reminders")
        t.assistant("Here is the plan.", tools=[("ExitPlanMode", {"plan": "# Reminders\n\n1. Daily."}, kept, True)])
        t.user("what happens to customers who blocked me?")
        t.assistant("They are skipped.", tools=[("Bash", {"command": "cat notes.txt; false"}, kept, True)])
        s = parse(t)
        plan, printed = s.tool_calls
        self.assertEqual((plan.rejected, plan.words, plan.plan), (True, "", ""))
        self.assertEqual((printed.rejected, printed.is_error), (False, True))   # output's words refuse nothing
        eps = episodes.episodes_of(s)
        self.assertEqual([e["facts"].get("command") for e in eps if e["kind"] == "error"], ["cat notes.txt; false"])
        self.assertIn("ExitPlanMode", [e["facts"].get("tool") for e in eps if e["kind"] == "correction"])

    def test_interrupts_are_markers_not_text(self):
        t = Transcript()
        t.user("start the server")
        t.assistant("Starting.")
        t.interrupt()
        s = parse(t)
        self.assertEqual([x.source for x in s.turns if x.role == "user"], ["prompt", "interrupt"])


class Robustness(unittest.TestCase):
    def test_malformed_and_half_written_lines_are_counted_and_skipped(self):
        t = test_session()
        lines = t.lines()
        lines.insert(3, "this is not json")
        lines.insert(5, "[1, 2, 3]")
        lines.insert(7, "")
        lines.append(lines[-1][: len(lines[-1]) // 2])  # the file is being appended to
        s = transcripts.parse_lines(lines)
        self.assertEqual(s.skipped, 3)
        self.assertEqual(len(s.prompts), 2)  # no good record lost
        self.assertEqual(len(s.tool_calls), 2)

    def test_unknown_types_and_odd_shapes_never_raise(self):
        t = Transcript()
        t.user("hello")
        t.raw({"type": "from-the-future", "payload": {"a": 1}})
        t.raw({"type": "user", "message": "not a dict"})
        t.raw({"type": "user", "message": {"content": 42}})
        t.raw({"type": "assistant", "message": {"content": [None, 3, {"type": "tool_use"}]}})
        t.raw({"type": "assistant", "message": {"id": "m9", "content": "plain string reply"}})
        t.raw({"type": "queue-operation", "operation": "enqueue", "content": {"not": "text"}})
        t.raw({"type": "attachment", "attachment": "odd"})
        t.raw({"type": "summary", "summary": None})
        t.raw({"no": "type"})
        s = parse(t)
        self.assertEqual([p.text for p in s.prompts], ["hello"])
        self.assertIn("plain string reply", [x.text for x in s.turns])

    def test_binary_garbage_and_bad_utf8(self):
        s = transcripts.parse_lines([b"\xff\xfe\x00garbage\n", test_session().lines()[2].encode()])
        self.assertEqual(s.skipped, 1)

    def test_sidechain_records_are_skipped(self):
        t = Transcript()
        t.user("main request")
        t.sidechain("Warmup")
        self.assertEqual([p.text for p in parse(t).prompts], ["main request"])

    def test_records_copied_by_a_resumed_session_count_once(self):
        t = test_session()
        lines = t.lines()
        s = transcripts.parse_lines(lines + lines)
        self.assertEqual(len(s.prompts), 2)
        self.assertEqual(len(s.tool_calls), 2)

    def test_synthetic_assistant_messages_are_ignored(self):
        t = Transcript()
        t.user("hi")
        t._envelope("assistant", message={"id": "s1", "model": "<synthetic>", "role": "assistant",
                                          "content": [{"type": "text", "text": "API Error: 529 Overloaded"}]},
                    isApiErrorMessage=True)
        self.assertEqual([x.role for x in parse(t).turns], ["user"])

    def test_titles(self):
        t = Transcript()
        t.user("hi")
        t.raw({"type": "summary", "summary": "Someone else's session", "leafUuid": "not-here"})
        self.assertEqual(parse(t).title, "")
        t.raw({"type": "summary", "summary": "Fixing the flaky login test", "leafUuid": t.parent})
        self.assertEqual(parse(t).title, "Fixing the flaky login test")
        t.raw({"type": "ai-title", "aiTitle": "Login test fix", "sessionId": t.session_id})
        self.assertEqual(parse(t).title, "Login test fix")
        t.raw({"type": "custom-title", "customTitle": "my title", "sessionId": t.session_id})
        self.assertEqual(parse(t).title, "my title")


class RealCorpus(unittest.TestCase):
    """Every real transcript parses with nothing skipped and sensible content."""

    def test_every_file_parses(self):
        for path in corpus_files():
            with self.subTest(path=path.name):
                s = transcripts.parse(path)
                self.assertEqual(s.skipped, 0)
                for turn in s.prompts:
                    self.assertFalse(turn.text.startswith(("<command-", "<local-command", "<task-notification",
                                                          "Caveat:", "[Request interrupted")), turn.text)
                    self.assertNotIn("<system-reminder>", turn.text)

    def test_errorish_finds_on_every_real_line_what_it_finds_without_its_look_ahead(self):
        import re
        plain = re.compile(failures.ERRORISH.pattern.replace(failures.ERRORISH_STARTS, "", 1))
        lines = ["ERROR: x", "Unable to x", "✖ 2 problems", "err_connection", "a CONFLICT", "must be set"]
        for path in corpus_files():
            text = path.read_text(errors="replace").replace("\\n", "\n")
            lines += [line[:200] for line in text.splitlines()[::8]]  # a sample: the plain pattern is slow
        found = [(m.span() if m else None) for m in map(failures.ERRORISH.search, lines)]
        self.assertEqual(found, [(m.span() if m else None) for m in map(plain.search, lines)])
        self.assertGreater(sum(1 for f in found if f), 150)

    def test_errorish_finds_what_errorish_finds_in_its_fast_form(self):
        words = ("error err! err_x fatal fail failed failure fails exception traceback not found no such file "
                 "permission denied denied invalid cannot can't couldn't couldnt could not unable missing "
                 "undefined refused timeout timed out time out unrecognized unknown does not exist unused "
                 "not set must be set rejected no rule no solution unsatisfiable conflicts panic").split()
        lines = ["ERROR: x", "Unable to x", "✖ 2 problems", "err_connection", "a CONFLICT", "must be set",
                 "ERR_PNPM", "xerror", "errors", "error_code", "FAILS", "timeOUT", "Permission Denied", "İnvalid",
                 "ſtatus failed", "nO SUCH FILE", "TraceBack", "stacktraceback", "x_error", "error-prone", ""]
        rng = random.Random(5)
        for _ in range(3000):  # words and their pieces, in any case, glued by what sits between words
            parts = [rng.choice(words + ["x", "y1", "_", "foo"])[:rng.randrange(1, 12)] for _ in range(rng.randrange(1, 6))]
            line = "".join(p + rng.choice([" ", "", "_", "-", "'", "!", ".", "é", "×"]) for p in parts)
            lines.append("".join(ch.upper() if rng.random() < 0.3 else ch for ch in line))
        for path in corpus_files():
            lines += path.read_text(errors="replace").replace("\\n", "\n").splitlines()[::3]
        fast = [failures.errorish(line) for line in lines]
        differ = [line for line, f in zip(lines, fast) if f != (failures.ERRORISH.search(line) is not None)]
        self.assertEqual(differ[:5], [])
        self.assertGreater(sum(fast), 500)

    def test_streamed_assistant_records_are_merged(self):
        path = next(p for p in corpus_files() if p.name.startswith("258c7280"))
        s = transcripts.parse(path)
        ids = set()
        with path.open() as f:
            records = [json.loads(line) for line in f]
        for rec in records:
            if rec.get("type") == "assistant" and not rec.get("isSidechain") and \
                    rec["message"].get("model") != "<synthetic>":
                ids.add(rec["message"]["id"])
        self.assertEqual(len([t for t in s.turns if t.role == "assistant"]), len(ids))
        self.assertIn("check again", [p.text for p in s.prompts])  # lives only in a queue record
        calls = s.tool_calls
        self.assertTrue(calls and all(c.result is not None for c in calls[:-1]))


class RecordsAreReadAsJsonLoadsReadsThem(unittest.TestCase):
    def test_the_scanner_gives_json_loads_value_or_its_error(self):
        # json.loads's value, but half a surrogate pair alone, which no UTF-8 text can hold, as U+FFFD
        import json
        import random
        from openmemory.shorten import wellformed
        from openmemory.transcripts import jsonl_record as _record
        rng = random.Random(1)
        cases = ['{"a":1}', '{"a":1}\n', '{"a":1} \r\n', '{"a":1} x', '{"a":', '{}', '{"a":1}\x0c', '{"a":NaN}',
                 '{"a":1}{"b":2}', ' {"a":1}', '[1]', '{"a":"\\ud800"}', '{"a":1}\u00a0', '["\\uDC00x"]',
                 '{"\\udbff":"\\ud83d\\ude00 \\ude00"}', '{"a":"\\\\ud800"}']
        for _ in range(1000):
            text = json.dumps({"k": [rng.random(), "é" * rng.randint(0, 3), None]})
            cases.append(text[:rng.randint(0, len(text) + 2)] + rng.choice(["", "\n", " ", "}", "x", "\t\n"]))
        for text in cases:
            with self.subTest(text=text):
                try:
                    expected = ("value", wellformed(json.loads(text)))
                except ValueError:
                    expected = ("error",)
                try:
                    got = ("value", _record(text))
                except ValueError:
                    got = ("error",)
                self.assertEqual(repr(got), repr(expected))
        self.assertEqual(_record('{"\\udbff":"\\ud83d\\ude00 \\ude00"}'), {"\ufffd": "\U0001f600 \ufffd"})
        self.assertEqual(_record('{"a":"\\\\ud800"}'), {"a": "\\ud800"})     # an escaped backslash: text, kept


class KeptOutWhileReading(unittest.TestCase):
    """parse_lines(kept_out=...) asks of the working folder what working_folder() finds, and reads
    no line after the one that names a kept-out folder."""

    SECRET = "/home/dev/client-work"

    def reason(self, cwd):
        return "marker" if cwd == self.SECRET else None

    def record(self, cwd=None, text="hello", kind="user"):
        rec = {"type": kind, "uuid": f"u{random.random()}", "message": {"role": "user", "content": text}}
        if cwd is not None:
            rec["cwd"] = cwd
        return (json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8")

    def decided(self, lines):
        """(what parse_lines decides, what working_folder decides, lines left unread)."""
        rest = iter(lines)
        s = transcripts.parse_lines(rest, "/x/s.jsonl", kept_out=self.reason)
        return s.kept_out or None, self.reason(transcripts.working_folder(lines)), len(list(rest))

    def test_the_same_decision_as_working_folder_on_first_lines_of_every_shape(self):
        rng = random.Random(7)
        shapes = [
            lambda: self.record(),
            lambda: self.record(self.SECRET),
            lambda: self.record("/home/dev/shop"),
            lambda: self.record(""),                                    # an empty cwd is no folder
            lambda: self.record(self.SECRET, text="naïve café ✓"),      # not ASCII: read as json.loads reads bytes
            lambda: self.record("/home/dev/ünïcode"),
            lambda: b"\xef\xbb\xbf" + self.record(self.SECRET),        # a BOM: json.loads reads it, parse does not
            lambda: self.record(self.SECRET).replace(b"hello", b"\xed\xa0\x80"),  # an encoded surrogate
            lambda: json.dumps({"cwd": self.SECRET}).encode("utf-16-le"),  # NULs: UTF-16 to json.loads
            lambda: b"\n",
            lambda: b"not json\n",
            lambda: b'{"cwd": "' + self.SECRET.encode() + b'"} trailing\n',
            lambda: json.dumps({"cwd": self.SECRET}).encode() + b"\x0c\n",   # a form feed after the record
            lambda: b"[1, 2]\n",
            lambda: self.record(self.SECRET, kind="not-a-known-type"),
        ]
        for _ in range(3000):
            lines = [rng.choice(shapes)() for _ in range(rng.choice((1, 3, 8)))]
            got, expected, _ = self.decided(lines)
            self.assertEqual(got, expected, lines)

    def test_the_folder_is_looked_for_in_the_first_200_lines_only(self):
        for at, kept in ((198, True), (199, True), (200, False), (260, False)):
            lines = [self.record() for _ in range(at)] + [self.record(self.SECRET)] + [self.record()] * 5
            got, expected, _ = self.decided(lines)
            self.assertEqual((got is not None, expected is not None), (kept, kept), at)

    def test_nothing_after_the_kept_out_line_is_read(self):
        lines = [self.record(), self.record(self.SECRET)] + [self.record(self.SECRET, text="x" * 500)] * 50
        got, _, unread = self.decided(lines)
        self.assertEqual((got, unread), ("marker", 50))

    def test_a_file_that_is_no_transcript_is_still_looked_at_for_its_folder(self):
        # reading stops after SNIFF_LINES lines of no known record: its folder, further on, still counts
        lines = [b'{"x": 1}\n'] * (transcripts.SNIFF_LINES + 20) + [self.record(self.SECRET, kind="other")]
        got, expected, _ = self.decided(lines)
        self.assertEqual((got, expected), ("marker", "marker"))

    def test_a_folder_not_kept_out_reads_the_whole_session(self):
        lines = [self.record("/home/dev/shop")] + [self.record("/home/dev/shop/src") for _ in range(3)]
        s = transcripts.parse_lines(lines, "/x/s.jsonl", kept_out=self.reason)
        self.assertEqual((s.kept_out, s.cwd, len(s.prompts), s.moved_out), ("", "/home/dev/shop", 4, False))

    def test_a_session_that_moves_into_a_kept_out_folder_is_read_up_to_there(self):
        lines = ([self.record("/home/dev/shop"), self.record(text="no folder: read")] +
                 [self.record(self.SECRET) for _ in range(3)] + [self.record("/home/dev/shop")])
        rest = iter(lines)
        s = transcripts.parse_lines(rest, "/x/s.jsonl", kept_out=self.reason)
        self.assertEqual((s.kept_out, s.cwd, len(s.prompts), s.moved_out), ("", "/home/dev/shop", 1, True))
        self.assertEqual(len(list(rest)), 3)  # nothing after the first record there is read


if __name__ == "__main__":
    unittest.main()
