"""The conversation kept as passages: what was said, cut on sentences, redacted whole, stored,
re-read in place, forgotten for good, kept out, decayed; and the failures beside it."""
import json
import os
import sqlite3
import subprocess
import sys
import unittest
from unittest import mock

from openmemory import mcp, migrations, passages, recall, sleep, store
from openmemory.transcripts import parse_lines
from tests.fixtures import Transcript, project_folder
from tests.helpers import ROOT, TempHome, raw_db

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"      # a GitHub token's shape

REPLY = ("The push failed because the branch has no upstream yet. " * 3
         + "I ran git push --set-upstream origin feature/login, which set the remote branch. "
         + "After that the push went through and the pull request opened. " * 4).strip()


def asked_session(cwd="/home/dev/shop"):
    """The person asks, the agent answers at length, asks a question that is answered; a tool's output."""
    t = Transcript(cwd=cwd)
    t.user("why did the push fail on the login branch?")
    t.assistant(REPLY, tools=[("Bash", {"command": "git log --oneline -3"},
                               "abc123 the tool output nobody should recall\nfff000 more of it", False)])
    t.assistant("Which base branch should the pull request target?", tools=[
        ("AskUserQuestion", {"questions": [{"question": "Which base branch should the pull request target?"}]},
         "User has answered your questions.", False)])
    t.records[-1]["toolUseResult"] = {"questions": [{"question": "Which base branch should the pull request "
                                                                 "target?"}],
                                      "answers": {"Which base branch should the pull request target?":
                                                  "develop, never main"}}
    t.assistant("Opened it against develop.")
    return t


def parse(t):
    return parse_lines(t.lines(), "x.jsonl")


class Splitting(unittest.TestCase):
    def test_an_exchange_is_cut_on_sentence_ends_and_tool_output_is_not_kept(self):
        said = passages.passages_of(parse(asked_session()))
        texts = [p["text"] for p in said]
        self.assertTrue(all(len(t) <= passages.PASSAGE_CHARS for t in texts), [len(t) for t in texts])
        # The question alone (the reply's first piece would not fit beside it), then the reply.
        self.assertEqual(texts[0], "person: why did the push fail on the login branch?")
        self.assertTrue(texts[1].startswith("agent: The push failed because"), texts[1])
        self.assertIn("why did the push fail", said[1]["context"])    # a reply is found by what asked for it
        for p in said:
            if p["kind"] == "exchange":
                self.assertRegex(p["text"], r"[.?!]$")              # each piece ends where a sentence does
        whole = " ".join(texts)
        self.assertIn("git push --set-upstream origin feature/login", whole)
        self.assertNotIn("tool output nobody should recall", whole)
        self.assertEqual([p["seq"] for p in said], list(range(len(said))))
        self.assertEqual(len({p["key"] for p in said}), len(said))

    def test_what_a_script_ran_is_kept_as_its_runner_printed_it_after_what_was_said(self):
        # "What does `pnpm test` run here?" is answered only by the runner's line in the tool's output
        said = passages.passages_of(parse(scripts_session()))
        ran = [p["text"] for p in said if p["kind"] == "script"]
        self.assertEqual(ran, [
            "`bun run css:build` ran `tailwindcss -i ./src/styles.css -o ./dist/output.css`",
            "`pnpm --filter @shop/crypto test -- --run registry` ran `vitest run -- --run registry`",
            "`mise run fmt && mise run lint` ran `gofmt -w .` (fmt), `golangci-lint run ./...` (lint)"])
        # after every passage of what was said, so none of them parts a reply from what it answers (the
        # commands the agent ran come after them)
        self.assertEqual([p["kind"] for p in said if p["kind"] != "command"][-3:], ["script"] * 3)
        # a script's call is kept once, as what it ran: the one command after them ran no runner's line
        self.assertEqual([p["text"] for p in said if p["kind"] == "command"], ["ran `bun run setup`"])
        self.assertEqual([p["seq"] for p in said], list(range(len(said))))
        self.assertEqual(len({p["key"] for p in said}), len(said))
        self.assertIn("rebuild the styles and run the registry tests", said[-1]["context"])
        whole = " ".join(p["text"] for p in said)
        self.assertNotIn("rm -rf build", whole)         # a file that shows such a line is not a runner's call
        self.assertNotIn("get.example.sh", whole)       # a download is never kept as what a script ran
        self.assertNotIn("Rebuilding...", whole)        # nor anything else of the output
        self.assertNotIn("\x1b", whole)                 # nor a terminal's escape sequence

    def test_what_the_agent_wrote_into_files_is_kept_as_edits_after_what_was_said(self):
        # "How does the release script deal with the dirty files left on main?" is answered only by the
        # line the agent wrote (`commitAndPush()`), which its prose never quotes
        said = passages.passages_of(parse(edits_session()))
        made = [p["text"] for p in said if p["kind"] == "edit"]
        self.assertEqual(made[:3], [
            "`scripts/release.ts` edited:\n- logLine('Follow-up: commit and push version/changelog changes on main.')\n"
            "+ commitAndPush()",
            '`packages/cli/package.json` edited:\n- "private": true,\n+ "homepage": "https://shop.example.com",',
            "`.changeset/add-pkg-links.md` written:\n+ ---\n+ '@shop/cli': patch\n+ ---\n+ Add homepage links to every package."])
        # the edit that failed and the one refused never reached a file
        self.assertEqual(len(made), 4)
        self.assertNotIn("never reached the file", " ".join(made))
        self.assertNotIn("(refused)", " ".join(made))
        # a secret written into a file is redacted as any text is
        self.assertTrue(made[3].startswith("`.env` written:\n+ GITHUB_TOKEN="), made[3])
        self.assertNotIn(SECRET, made[3])
        # after every passage of what was said, so none of them parts a reply from what it answers
        self.assertEqual([p["kind"] for p in said][-4:], ["edit"] * 4)
        self.assertEqual([p["seq"] for p in said], list(range(len(said))))
        self.assertEqual(len({p["key"] for p in said}), len(said))
        self.assertTrue(all(len(t) <= passages.PASSAGE_CHARS for t in made))

    def test_what_the_agent_ran_is_kept_as_commands_after_what_was_said(self):
        # "Which command installed the notifier?", "how did we scrub the wrong email from the commits?" are
        # answered only by a command the agent ran, which its prose does not repeat (public21)
        said = passages.passages_of(parse(commands_session()))
        ran = [p["text"] for p in said if p["kind"] == "command"]
        self.assertEqual(ran[0], "ran `brew install terminal-notifier`: Install terminal-notifier")
        # a pipe into grep that found nothing "failed"; run again into head, it is another command, shown
        # without what only cuts its output short (what grep looked for stays)
        self.assertEqual(ran[1], "ran `chezmoi managed | grep -E '^\\.claude'`: Check if .claude is still managed")
        self.assertTrue(ran[2].startswith("ran `gh auth login --with-token <<< "), ran[2])
        self.assertNotIn(SECRET, ran[2])                # a token in a command is redacted as any text is
        self.assertTrue(ran[3].startswith("ran `cat > hooks/notify.sh <<'EOF' terminal-notifier -activate"), ran[3])
        self.assertEqual(ran[4], "ran `git filter-branch -f --env-filter 'export GIT_AUTHOR_EMAIL=t@tunc.co' "
                                 "HEAD~3..HEAD`: Rewrite the unpushed commits' author email")
        # left out: what only looks (`which`, `ls`, `git status`, `git log`), what failed, what was refused,
        # what failed before word for word and then went through (its failure's episode holds it), the
        # same command again
        self.assertEqual(len(ran), 5, ran)
        whole = " ".join(ran)
        for gone in ("which terminal-notifier", "git -C ~/dotfiles status", "npm test", "rm -rf", "already installed",
                     "Pouring"):
            self.assertNotIn(gone, whole)
        # after every passage of what was said, so none of them parts a reply from what it answers
        kinds = [p["kind"] for p in said]
        self.assertEqual(kinds[-5:], ["command"] * 5)
        self.assertNotIn("command", kinds[:-5])
        self.assertEqual([p["seq"] for p in said], list(range(len(said))))
        self.assertEqual(len({p["key"] for p in said}), len(said))
        self.assertTrue(all(len(t) <= passages.PASSAGE_CHARS for t in ran))

    def test_a_command_that_only_looks_around_is_left_out(self):
        for command in ("ls -la", "cd src && ls -la | head", "git status", "git -C /x log --oneline -5",
                        "grep -rn foo . 2>/dev/null", "git config --get user.email", "git branch -a", "node -v",
                        "git stash list", "find . -name '*.go' | sort | head",
                        'grep -n "^func a\\|^func b" x.go', "grep -rl 'a;b' . || echo \"none > found\""):
            self.assertTrue(passages._only_looks(command), command)
        for command in ("brew install x", "git config gc.auto 0", "git branch -D old", "git stash", "sed -i s/a/b/ f",
                        "echo hi > notes.txt", "env CI=1 make test", "ls | xargs rm", "git push", "chezmoi managed",
                        'git commit -m "fix: a; b | c"', 'git config user.email "dev@example.com"'):
            self.assertFalse(passages._only_looks(command), command)

    def test_a_question_the_agent_asked_is_kept_with_the_answer_chosen(self):
        said = passages.passages_of(parse(asked_session()))
        [question] = [p for p in said if p["kind"] == "question"]
        self.assertEqual(question["text"], "agent: Which base branch should the pull request target?\n"
                                           "person: develop, never main")
        # A later passage is found by the words that asked for its exchange (its context).
        last = said[-1]
        self.assertIn("Opened it against develop.", last["text"])
        self.assertIn("why did the push fail on the login branch?", last["context"])

    def test_a_short_reply_is_kept_with_the_end_of_what_the_agent_said_before_it(self):
        # "no don't set it" alone shares no word with "did we turn off auto-gc?": the unit is what
        # the agent proposed and the person's reply.
        t = Transcript()
        t.user("the worktree index broke again, why?")
        t.assistant("Git gc in the main repository pruned objects the worktree index still pointed at. "
                    "I ran git read-tree HEAD and the status is clean again. " * 4
                    + "Want me to also set gc.auto 0 on your repo now?")
        t.user("no don't set it, let's see if it keeps happening")
        t.assistant("Fair enough.")
        t.user("now write the release notes for 1.4, covering the worktree fix, the new status output, "
               "and the two renamed settings; keep it under ten lines and link the issue for each of them, "
               "as we did for 1.3, and mention that gc is left on for now since it did not recur this week "
               "and there is more than one thing for a reader to take in here already ok")
        said = passages.passages_of(parse(t))
        [reply] = [p for p in said if "no don't set it" in p["text"]]
        self.assertRegex(reply["text"], r"^agent: …?Want me to also set gc\.auto 0 on your repo now\?\n"
                                        r"person: no don't set it, let's see if it keeps happening\n"
                                        r"agent: Fair enough\.$")
        self.assertLessEqual(len(reply["text"]), passages.PASSAGE_CHARS + passages.QUOTE_CHARS + 1)
        # A long message of the person's stands on its own words; the first message quotes nothing.
        self.assertTrue(said[-1]["text"].startswith("person: now write the release notes"), said[-1]["text"])
        self.assertTrue(said[0]["text"].startswith("person: the worktree index broke again"))

    def test_words_typed_when_refusing_a_tool_are_the_persons_in_the_exchange(self):
        # The person refuses an edit and says why; the agent's words before and after the refusal are
        # one run of turns, and the person's words sit between them where they were said.
        t = Transcript()
        t.user("make the settings parsing strict: fail on unknown keys")
        t.assistant("I will hand-roll a check of every key against the known ones in mergeJSON.",
                    tools=[("Edit", {"file_path": "settings.go"}, "REJECT",
                            f"really? Can't we provide a setting to UnmarshalJSON to be strict? {SECRET}")])
        t.assistant("You're right. I can use json.Decoder with DisallowUnknownFields instead.")
        said = passages.passages_of(parse(t))
        whole = "\n".join(p["text"] for p in said)
        self.assertNotIn(SECRET, whole)      # redacted as every word of the person's is
        self.assertRegex(whole, r"agent: [^\n]*I will hand-roll a check[^\n]*\n"
                                r"person: really\? Can't we provide a setting to UnmarshalJSON to be strict\?[^\n]*\n"
                                r"agent: You're right\. I can use json\.Decoder")

    def test_the_quoted_end_is_whole_sentences_redacted_as_the_text_was(self):
        t = Transcript()
        t.user("set up the deploy")
        t.assistant(f"I stored the deploy key {SECRET} in the vault. " * 2 + "Shall I run the deploy now?")
        t.user("yes")
        said = passages.passages_of(parse(t))
        whole = "\n".join(p["text"] for p in said)
        self.assertNotIn(SECRET, whole)
        [reply] = [p for p in said if "person: yes" in p["text"]]
        self.assertRegex(reply["text"], r"^agent: (…|I stored)")
        self.assertIn("Shall I run the deploy now?\nperson: yes", reply["text"])

    def test_a_compaction_summary_and_an_approved_plan_are_passages_of_their_own_kind(self):
        t = Transcript()
        t.user("Implement the following plan:\n\n# Cache the version check\n\n1. Keep the result for a day.")
        t.assistant("Implementing the plan.")
        t.raw({"type": "user", "uuid": "cs", "isCompactSummary": True, "timestamp": "2026-11-02T10:00:00.000Z",
               "sessionId": t.session_id, "cwd": t.cwd, "message": {"role": "user", "content":
               "This session is being continued. Summary: the version check is cached in version.go."}})
        kinds = {p["kind"]: p["text"] for p in passages.passages_of(parse(t))}
        self.assertIn("Cache the version check", kinds["plan"])
        self.assertIn("the version check is cached in version.go", kinds["summary"])

    def test_a_plan_approved_where_it_was_proposed_is_a_plan_and_one_refused_or_kept_planning_is_not(self):
        t = plan_mode_session()
        said = passages.passages_of(parse(t))
        plans = [p for p in said if p["kind"] == "plan"]
        whole = "\n".join(p["text"] + p["context"] for p in said)
        self.assertEqual(len(plans), 1, [p["text"] for p in said])
        self.assertTrue(plans[0]["text"].startswith("# Cache the version check\n1. Keep the result for a day in "
                                                    "~/.cache/shop/version.json."), plans[0]["text"])
        self.assertIn("3. Add a test for a stale cache.", plans[0]["text"])
        self.assertIn("[REDACTED", plans[0]["text"])                  # redacted whole, as every passage
        self.assertNotIn(SECRET[:12], whole)
        self.assertNotIn("for an hour in memory", whole)             # "keep planning": not approved
        self.assertNotIn("lockfile beside the binary", whole)        # refused
        # where it was approved, the agent's next words after it (its neighbour)
        after = said[said.index(plans[0]) + 1]
        self.assertEqual(after["text"], "agent: Starting with the cache file under ~/.cache/shop.")
        approved = next(r for r in t.records if isinstance(r.get("toolUseResult"), dict)
                        and "plan" in r["toolUseResult"])
        self.assertEqual(plans[0]["at"][:19], approved["timestamp"][:19])     # when it was approved
        # approved with a cleared context: ExitPlanMode refused, the plan back as the prompt; kept once
        t = Transcript()
        t.user("plan how to cache the version check")
        t.assistant("Here is the plan.", tools=[("ExitPlanMode", {"plan": APPROVED_PLAN}, "REJECT")])
        t.user("Implement the following plan:\n\n" + APPROVED_PLAN)
        t.assistant("Starting with the cache file.")
        plans = [p for p in passages.passages_of(parse(t)) if p["kind"] == "plan"]
        self.assertEqual(len(plans), 1, plans)
        self.assertIn("Keep the result for a day", plans[0]["text"])

    def test_the_sessions_gist_names_a_plan_approved_where_it_was_proposed_as_decided(self):
        # plans44 kept such a plan as a passage; the session's record said "Decided:" only of one
        # that came back as "Implement the following plan:", so a session whose decision was made in
        # plan mode read as deciding nothing
        from openmemory import episodes
        [session] = [e for e in episodes.episodes_of(parse(plan_mode_session())) if e["kind"] == "session"]
        self.assertIn('Decided: approved the plan "Cache the version check"', session["gist"])
        self.assertNotIn("for an hour in memory", session["gist"])        # kept planning: no decision
        self.assertNotIn("lockfile", session["gist"])                     # refused: no decision

    def test_a_plan_a_resumed_sessions_file_holds_twice_is_kept_once(self):
        # 2.1.x writes a resumed session's records again into its file: new uuids, the same tool ids
        t = plan_mode_session()
        copies = [dict(r, uuid=t.uuid(), version="2.1.14") for r in t.records if r.get("type") in ("user", "assistant")]
        t.records += copies
        plans = [p for p in passages.passages_of(parse(t)) if p["kind"] == "plan"]
        self.assertEqual(len(plans), 1, [p["key"] for p in plans])

    def test_a_secret_is_redacted_in_the_whole_text_before_it_is_cut(self):
        t = Transcript()
        t.user("set up the deploy")
        # The token sits where a cut would fall: redacting pieces would leave its halves.
        t.assistant("x" * (passages.PASSAGE_CHARS - 30) + f" use token {SECRET} for it. Then deploy.")
        said = passages.passages_of(parse(t))
        whole = "".join(p["text"] + p["context"] for p in said)
        self.assertNotIn(SECRET[:12], whole)
        self.assertNotIn(SECRET[-12:], whole)
        self.assertIn("[REDACTED", whole)

    def test_a_secret_in_the_sessions_title_is_redacted_where_nothing_said_holds_one(self):
        # each context ends with the session's title (a custom or AI title, a summary), which is not
        # among the words said that the gate searched together: it is redacted on its own
        t = Transcript()
        t.user("tidy up the imports please")
        t.assistant("Done, the imports are sorted.")
        t.records.append({"type": "custom-title", "customTitle": f"deploy with {SECRET}", "sessionId": t.session_id})
        contexts = " ".join(p["context"] for p in passages.passages_of(parse(t)))
        self.assertIn("deploy with [REDACTED:", contexts)
        self.assertNotIn(SECRET[:12], contexts)


    def test_a_long_run_of_spaces_or_one_long_word_is_read_once(self):
        # What the person pastes may hold a run of a million spaces (a padded table, a log) or a
        # line with no space at all (minified code): the sentence ends were looked for again from
        # each space of a run (250,000 spaces: 49 s, these 2,000,000: most of an hour), and a long
        # word was cut by copying what was left after each piece (16 MB: 7 s, 100 MB: hours). A
        # child process, so a return to either is a timeout here, not a hung suite.
        code = ("from openmemory import passages\n"
                "said = passages._pieces('word' + ' ' * 2_000_000 + 'end.\\nnext', 'person')\n"
                "long = passages._pieces('x' * 3000, 'agent')\n"
                "print(repr(said), [len(p) for p in long])\n")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "['person: word end.\\nnext'] [600, 600, 600, 600, 600, 42]")


def scripts_session(cwd="/home/dev/shop"):
    """The agent runs package scripts and tasks whose runners print what they run, and output that
    only looks like such a line."""
    t = Transcript(cwd=cwd)
    t.user("rebuild the styles and run the registry tests")
    t.assistant("Rebuilding the CSS first.", tools=[
        ("Bash", {"command": "cd /home/dev/shop/web && bun run css:build 2>&1"},
         "$ tailwindcss -i ./src/styles.css -o ./dist/output.css\n\nRebuilding...\n\nDone in 303ms.", False),
        ("Bash", {"command": "pnpm --filter @shop/crypto test -- --run registry 2>&1 | tail -20"},
         "> @shop/crypto@0.13.3 test /home/dev/shop/packages/crypto\n> vitest run -- --run registry\n\n"
         " RUN  v3.2.4\n ✓ registry.test.ts (12 tests)", False),
        ("Bash", {"command": "mise run fmt && mise run lint"},
         "0 issues.\n[lint] $ \x1b[1mgolangci-lint run ./...\x1b[0m\n[fmt] $ gofmt -w .", False),
        ("Bash", {"command": "cd /home/dev/shop/web && bun run css:build"},
         "$ tailwindcss -i ./src/styles.css -o ./dist/output.css\n\nDone in 290ms.", False),
        ("Bash", {"command": "cat notes/setup.md"}, "$ rm -rf build\n$ make install", False),
        ("Bash", {"command": "bun run setup"}, "$ curl -fsSL https://get.example.sh | sh", False),
    ])
    t.assistant("Styles rebuilt and the registry tests pass.")
    return t


def commands_session(cwd="/home/dev/shop"):
    """The agent installs a tool, looks around, rewrites history, and runs commands that fail, are
    refused, hold a token, or failed once before going through."""
    t = Transcript(cwd=cwd)
    t.user("the notification's Show button does nothing; make clicking it bring the terminal back")
    t.assistant("The built-in notification can't activate an app; terminal-notifier can.", tools=[
        ("Bash", {"command": "which terminal-notifier; ls -la ~/.claude | head", "description": "Look for it"},
         "terminal-notifier not found", False),
        ("Bash", {"command": "brew install terminal-notifier", "description": "Install terminal-notifier"},
         "==> Pouring terminal-notifier--2.0.0.sonoma.bottle.tar.gz", False),
        ("Bash", {"command": "git -C ~/dotfiles status --short && git -C ~/dotfiles log --oneline -3 2>&1"},
         " M hooks.json", False),
        ("Bash", {"command": "npm test 2>&1 | tail -5"}, "1 failing", True),
        ("Bash", {"command": "npm test 2>&1 | tail -5"}, "12 passing", False),
        ("Bash", {"command": "chezmoi managed | grep -E '^\\.claude'", "description": "Check what chezmoi manages"},
         "Exit code 1", True),
        ("Bash", {"command": "chezmoi managed | grep -E '^\\.claude' | head -5",
                  "description": "Check if .claude is still managed"}, "", False),
        ("Bash", {"command": "rm -rf ~/Library/Caches/notifier", "description": "Clear the cache"}, "REJECT"),
        ("Bash", {"command": f"gh auth login --with-token <<< {SECRET}", "description": "Log in to GitHub"},
         "Logged in", False),
        ("Bash", {"command": "cat > hooks/notify.sh <<'EOF'\nterminal-notifier -activate com.apple.Terminal\nEOF",
                  "description": "Write the hook script"}, "", False),
    ])
    t.user("and scrub the wrong email from the commits I made today")
    t.assistant("Rewriting the author of today's commits.", tools=[
        ("Bash", {"command": "git filter-branch -f --env-filter 'export GIT_AUTHOR_EMAIL=t@tunc.co' HEAD~3..HEAD",
                  "description": "Rewrite the unpushed commits' author email"}, "Ref 'refs/heads/main' was rewritten",
         False),
        ("Bash", {"command": "brew install terminal-notifier"}, "already installed", False),
    ])
    t.assistant("Done: the three commits carry t@tunc.co now.")
    return t


def edits_session(cwd="/home/dev/shop"):
    """The agent edits files (an Edit, a MultiEdit, a Write of a new file), an edit fails, one is
    refused, and one writes a token into a file."""
    t = Transcript(cwd=cwd)
    t.user("after publishing, the release script leaves main dirty; fix that and add the homepage links")
    t.assistant("I'll make the script commit and push what the release changed.", tools=[
        ("Edit", {"file_path": "/home/dev/shop/scripts/release.ts",
                  "old_string": "\tpublishPackages(otp)\n\n\tlogLine('Follow-up: commit and push version/changelog "
                                "changes on main.')\n}",
                  "new_string": "\tpublishPackages(otp)\n\n\tcommitAndPush()\n}"}, "The file was updated.", False),
        ("Edit", {"file_path": "/home/dev/shop/scripts/release.ts", "old_string": "no such text",
                  "new_string": "a line that never reached the file"},
         "<tool_use_error>String to replace not found in file.</tool_use_error>", True),
        ("MultiEdit", {"file_path": "/home/dev/shop/packages/cli/package.json", "edits": [
            {"old_string": '  "license": "MIT",', "new_string": '  "license": "MIT",\n  "homepage": '
                                                               '"https://shop.example.com",'},
            {"old_string": '  "private": true,\n', "new_string": ""}]}, "Applied 2 edits.", False),
        ("Write", {"file_path": "/home/dev/shop/.changeset/add-pkg-links.md",
                   "content": "---\n'@shop/cli': patch\n---\n\nAdd homepage links to every package.\n"},
         "File created successfully.", False),
        ("Edit", {"file_path": "/home/dev/shop/README.md", "old_string": "Shop", "new_string": "Shop (refused)"},
         "REJECT"),
        ("Write", {"file_path": "/home/dev/shop/.env", "content": f"GITHUB_TOKEN={SECRET}\n"},
         "File created successfully.", False),
    ])
    t.assistant("The release script now commits and pushes after publishing, and every package links its homepage.")
    return t


KEPT_PLANNING = "# Cache the version check\n\n1. Keep the result for an hour in memory."
REFUSED_PLAN = "# Cache the version check\n\n1. Write the result to a lockfile beside the binary."
APPROVED_PLAN = ("# Cache the version check\n\n1. Keep the result for a day in ~/.cache/shop/version.json.\n"
                 f"2. Read the registry token from SHOP_TOKEN, never inline ({SECRET}).\n3. Add a test for a stale cache.")


def plan_mode_session(cwd="/home/dev/shop"):
    """Plan mode as Claude Code 2.1.x writes it: ExitPlanMode's plan answered "keep planning" (an
    error), then refused, then approved where it was proposed (its `toolUseResult` the plan approved)."""
    t = Transcript(cwd=cwd)
    t.user("plan how to cache the version check")
    t.assistant("Here is the plan.", tools=[("ExitPlanMode", {"plan": KEPT_PLANNING},
                                             "User chose to stay in plan mode and continue planning", True)])
    t.user("an hour is too short, and memory is lost between runs")
    t.assistant("Revised.", tools=[("ExitPlanMode", {"plan": REFUSED_PLAN}, "REJECT")])
    t.user("no lockfiles, use the cache folder")
    t.assistant("Revised again.", tools=[("ExitPlanMode", {"plan": APPROVED_PLAN, "allowedPrompts": [
        {"tool": "Bash", "prompt": "run the tests"}]}, "User has approved your plan. You can now start coding. Start "
        "with updating your todo list if applicable\n\nYour plan has been saved to: /home/dev/.claude/plans/"
        "quiet-caching-otter.md\nYou can refer back to it if needed during implementation.\n\n## Approved Plan:\n"
        + APPROVED_PLAN, False)])
    t.records[-1]["toolUseResult"] = {"plan": APPROVED_PLAN, "isAgent": False,
                                      "filePath": "/home/dev/.claude/plans/quiet-caching-otter.md"}
    t.assistant("Starting with the cache file under ~/.cache/shop.")
    return t


def as_before(db, migration: str, *kinds: str):
    """The database as the version before migration stored it: passages of kinds (the first, the
    kind it allowed; all of them: the kinds allowed since) not allowed, and taken out. Its raw connection, committed."""
    raw = raw_db(db)
    raw.executemany("DELETE FROM passages WHERE kind = ?", [(kind,) for kind in kinds])
    sql = raw.execute("SELECT sql FROM sqlite_master WHERE name = 'passages'").fetchone()[0]
    made = raw.execute("SELECT sql FROM sqlite_master WHERE tbl_name = 'passages' AND sql IS NOT NULL "
                       "AND type IN ('index', 'trigger')").fetchall()
    allowed = "".join(f", '{kind}'" for kind in kinds) + ")"
    raw.execute(sql.replace('"passages"', "old_passages", 1).replace(allowed, ")"))
    raw.execute("INSERT INTO old_passages SELECT * FROM passages")
    raw.execute("DROP TABLE passages")
    raw.execute("ALTER TABLE old_passages RENAME TO passages")
    for (statement,) in made:
        raw.execute(statement)
    before = [m.__name__ for m in migrations.MIGRATIONS].index(migration)
    raw.execute(f"PRAGMA user_version = {before}")
    raw.commit()
    return raw


class Stored(TempHome):
    def write(self, t):
        return t.write(project_folder(self.claude, t.cwd))

    def said(self):
        with store.connect() as db:
            return raw_db(db).execute("SELECT id, key, text, strength FROM passages ORDER BY id").fetchall()

    def test_a_transcript_read_again_keeps_its_passages_and_ids(self):
        self.write(asked_session())
        self.assertRegex(self.ok("ingest").stdout, r"\d+ new passages")
        first = [tuple(r) for r in self.said()]
        self.ok("ingest", "--force")
        self.assertEqual([tuple(r) for r in self.said()], first)
        with store.connect() as db:
            self.assertEqual(db.counts()["passages"], {"total": len(first), "archived": 0})

    def test_a_forgotten_passage_is_gone_for_good_and_its_words_with_it(self):
        self.write(asked_session())
        self.ok("ingest")
        with store.connect() as db:
            [question] = [dict(r) for r in raw_db(db).execute("SELECT * FROM passages WHERE kind = 'question'")]
        p = self.cli("forget", f"p{question['id']}", "--yes")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("1 passage(s)", p.stderr)
        self.ok("ingest", "--force")
        texts = [r["text"] for r in self.said()]
        self.assertFalse([t for t in texts if "develop, never main" in t], texts)
        hits = json.loads(self.ok("recall", "which base branch develop", "--json").stdout)
        self.assertFalse([h for h in hits if "develop, never main" in h["text"]])
        self.assertNotIn(b"develop, never main", (self.home / "memory.db").read_bytes())

    def test_passages_fade_and_archive_as_episodes_do_and_archived_recall_brings_one_back(self):
        self.write(asked_session())
        self.ok("ingest")
        with store.connect() as db:
            facts = sleep.decay(db, "2027-06-01T03:00:00.000000Z")      # seven months untouched
            n = db.counts()["passages"]
        self.assertEqual(n["archived"], n["total"])
        self.assertEqual(sum(facts["passages_archived"].values()), n["total"])
        self.assertEqual(json.loads(self.ok("recall", "which base branch develop", "--json").stdout), [])
        found = json.loads(self.ok("recall", "which base branch develop", "--archived", "--json").stdout)
        [hit] = [h for h in found if h["kind"] == "question"]
        self.assertTrue(all(h["archived"] for h in found))
        again = json.loads(self.ok("recall", "which base branch develop", "--json").stdout)
        self.assertIn((hit["id"], False), [(h["id"], h["archived"]) for h in again])    # revived

    def test_a_kept_out_project_stores_no_passage(self):
        folder = self.tmp / "private"
        folder.mkdir()
        (folder / ".openmemory-ignore").write_text("")
        self.write(asked_session(cwd=str(folder)))
        self.ok("ingest")
        self.assertEqual(self.said(), [])

    def test_show_opens_a_passage_with_its_neighbours(self):
        self.write(asked_session())
        self.ok("ingest")
        hits = json.loads(self.ok("recall", "which base branch for the pull request", "--json").stdout)
        [question] = [h for h in hits if h["kind"] == "question"]
        self.assertRegex(question["id"], r"^p\d+$")
        opened = self.ok("show", question["id"], "--around", "1").stdout
        self.assertTrue(opened.startswith(f"[{question['id']}] question · 2026-11-02 "), opened)
        before, rest = opened.split("this memory:", 1)
        self.assertIn("before:\n[p", before)
        self.assertIn("person: develop, never main", rest)
        self.assertIn("after:\n[p", rest)
        self.assertIn("agent: Opened it against develop.", rest)
        p = self.cli("show", "p9999")
        self.assertEqual(p.returncode, 2)                   # an id that names nothing: a usage error
        self.assertIn("openmemory show: error: no memory p9999", p.stderr)

    def test_recall_finds_what_a_script_ran_and_a_database_stored_before_gets_it(self):
        self.write(scripts_session())
        self.ok("ingest")
        with store.connect() as db:     # as the version before m018 stored it: no `script` kind allowed
            raw = as_before(db, "m018_script_passages", "script", "edit", "command")
            kept = raw.execute("SELECT id, text FROM passages WHERE text LIKE '%Styles rebuilt%'").fetchone()
        old = sqlite3.connect(self.home / "memory.db")
        with self.assertRaises(sqlite3.IntegrityError):     # as it was: the kind not allowed
            old.execute("INSERT INTO passages (key, session_id, seq, kind, text, at, created, last_touched, "
                        "embedding) VALUES ('k', 's', 99, 'script', 't', '', '', '', x'')")
        old.close()
        self.assertIn("read 1 of 1 transcript", self.ok("ingest").stdout)
        hits = json.loads(self.ok("recall", "what does the css:build script run", "--json").stdout)
        self.assertEqual(hits[0]["kind"], "script")
        self.assertIn("tailwindcss -i ./src/styles.css", hits[0]["text"])
        hits = json.loads(self.ok("recall", "styles rebuilt registry tests pass", "--json").stdout)
        self.assertIn(f"p{kept['id']}", [h["id"] for h in hits])       # its id and its index kept
        self.ok("forget", f"p{kept['id']}", "--yes")
        with store.connect() as db:     # the index forgets it too: its triggers were made again
            rows = [r for r, in raw_db(db).execute("SELECT rowid FROM recall_index WHERE recall_index MATCH 'rebuilt'")]
        self.assertNotIn(migrations.PASSAGE_ROWIDS + kept["id"], rows)

    def test_recall_finds_a_command_the_agent_ran_and_a_database_stored_before_gets_it(self):
        self.write(commands_session())
        self.ok("ingest")
        with store.connect() as db:     # as the version before m029 stored it: no `command` kind allowed
            as_before(db, "m029_command_passages", "command")
        self.assertIn("read 1 of 1 transcript", self.ok("ingest").stdout)     # the upgrade reads it again
        hits = json.loads(self.ok("recall", "which command installed terminal-notifier?", "--json").stdout)
        [ran] = [h for h in hits if h["kind"] == "command"]
        self.assertEqual(ran["text"], "ran `brew install terminal-notifier`: Install terminal-notifier")
        self.assertEqual(ran["cwd"], "/home/dev/shop")
        hits = json.loads(self.ok("recall", "how did we scrub the wrong email from the commits", "--json").stdout)
        self.assertIn("git filter-branch", " ".join(h["text"] for h in hits))
        self.ok("forget", ran["id"], "--yes")       # forgotten for good: a reading again does not bring it back
        self.ok("ingest", "--force")
        self.assertFalse([r for r in self.said() if "brew install" in r["text"]])

    def test_recall_finds_what_an_edit_wrote_and_a_database_stored_before_gets_it(self):
        self.write(edits_session())
        self.ok("ingest")
        with store.connect() as db:     # as the version before m020 stored it: no `edit` kind allowed
            as_before(db, "m020_edit_passages", "edit", "command")
        self.assertIn("read 1 of 1 transcript", self.ok("ingest").stdout)
        hits = json.loads(self.ok("recall", "how does the release script deal with the dirty files left on main "
                                            "after publishing?", "--json").stdout)
        self.assertIn("edit", [h["kind"] for h in hits])
        self.assertIn("+ commitAndPush()", " ".join(h["text"] for h in hits))
        hits = json.loads(self.ok("recall", "what homepage URL did we set in package.json", "--json").stdout)
        self.assertIn('"homepage": "https://shop.example.com"', hits[0]["text"])

    def test_an_approved_plan_is_recalled_forgotten_and_a_database_stored_before_gets_it(self):
        self.write(plan_mode_session())
        self.ok("ingest")
        with store.connect() as db:     # as the version before m023 stored it: no plan approved where proposed
            raw = raw_db(db)
            raw.execute("DELETE FROM passages WHERE kind = 'plan'")
            raw.execute(f"PRAGMA user_version = {[m.__name__ for m in migrations.MIGRATIONS].index('m023_approved_plans')}")
            raw.commit()
        self.assertIn("read 1 of 1 transcript", self.ok("ingest").stdout)     # the upgrade reads it again
        hits = json.loads(self.ok("recall", "where does the version check cache its result, and for how long?",
                                  "--json").stdout)
        [plan] = [h for h in hits if h["kind"] == "plan"]
        self.assertIn("Keep the result for a day in ~/.cache/shop/version.json.", plan["text"])
        self.assertEqual(plan["cwd"], "/home/dev/shop")
        self.ok("forget", plan["id"], "--yes")
        self.ok("ingest", "--force")
        texts = [r["text"] for r in self.said()]
        self.assertFalse([t for t in texts if "Keep the result for a day" in t], texts)

    def test_a_database_of_the_last_version_gets_passages_on_its_next_ingest(self):
        self.write(asked_session())
        self.home.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.home / "memory.db")
        for step in migrations.MIGRATIONS[:-1]:     # the schema before passages, as an older version left it
            with db:
                step(db)
        db.execute(f"PRAGMA user_version = {len(migrations.MIGRATIONS) - 1}")
        db.close()
        self.ok("ingest")
        with store.connect() as db:
            before = db.counts()["passages"]["total"]
            raw_db(db).execute("DELETE FROM passages")     # as if stored before passages were kept
            raw_db(db).execute("UPDATE sessions SET mtime_ns = -1")     # what m009 does to every transcript
        self.assertGreater(before, 0)
        self.ok("ingest")
        self.assertEqual(len(self.said()), before)


    def test_a_database_stored_before_loses_the_backslashes_typed_to_start_new_lines(self):
        t = Transcript(style="1.0")
        t.user("Answering your questions:\\\n1. No, we dont use marmaid.js anymnore\\\n2. Yes")
        t.assistant("Noted: no mermaid.js; I will draw the diagrams with the swimlane component.")
        self.write(t)
        self.ok("ingest")
        with store.connect() as db:     # as the version before m024 stored the person's words
            raw = raw_db(db)
            raw.execute("UPDATE passages SET text = replace(text, char(10), '\\' || char(10))")
            raw.execute(f"PRAGMA user_version = "
                        f"{[m.__name__ for m in migrations.MIGRATIONS].index('m024_typed_newlines_read_again')}")
            raw.commit()
        self.assertTrue([r for r in self.said() if "anymnore\\" in r["text"]])
        self.assertIn("read 1 of 1 transcript", self.ok("ingest").stdout)     # the upgrade reads it again
        texts = [r["text"] for r in self.said()]
        self.assertTrue([x for x in texts if "dont use marmaid.js anymnore\n" in x], texts)
        self.assertFalse([x for x in texts if "\\" in x], texts)

    def test_a_continuation_the_person_pasted_keeps_its_backslashes(self):
        # red46: clean_user_text took every backslash that ended a line for a backslash-Enter, so the
        # dry run the person pasted was recalled as three commands, `./deploy.sh` alone the first
        t = Transcript(style="1.0")
        t.user("how do we deploy safely?")
        t.assistant("Which way do you want it run?")
        t.user("always deploy with this:\\\n```\n./deploy.sh \\\n  --env prod \\\n  --dry-run\n```")
        t.assistant("Understood: a dry run first.")
        self.write(t)
        self.ok("ingest")
        hits = [h for h in json.loads(self.ok("recall", "how do we deploy with the dry run", "--json").stdout)
                if h["source"] == "passage"]
        [text] = [h["text"] for h in hits if "always deploy with this:" in h["text"]]
        self.assertIn("always deploy with this:\n```\n./deploy.sh \\\n", text)
        self.assertIn("--env prod \\\n", text)

    def test_a_database_stored_before_reads_what_came_after_a_correction_from_its_place(self):
        t = Transcript(style="1.0")
        t.user("/init")
        t.assistant("I'll analyze your codebase and create a CLAUDE.md file.")
        t.user("commit the package rename")
        t.assistant(tools=[("Bash", {"command": "git add -A && git commit -m rename"}, "REJECT")])
        t.user("The CLAUDE file is on the gitignore, dont talk about it")
        t.assistant("Understood: committing without it.")
        for rec in t.records:       # a 1.0.x resume dates the agent's records at the resume
            if rec.get("type") == "assistant" or (rec.get("type") == "user" and
                                                  not isinstance(rec["message"]["content"], str)):
                rec["timestamp"] = "2026-11-02T11:00:00.000Z"
        self.write(t)
        self.ok("ingest")

        def then():
            with store.connect() as db:
                return [ep["facts"]["then"]["said"] for ep in db.episodes("correction")
                        if ep["facts"]["said"].startswith("The CLAUDE file")]
        self.assertEqual(then(), ["Understood: committing without it."])
        with store.connect() as db:     # as the version before m025 stored it
            raw = raw_db(db)
            raw.execute("UPDATE episodes SET facts = replace(facts, 'Understood: committing without it.', "
                        "'I''ll analyze your codebase and create a CLAUDE.md file.') WHERE kind = 'correction'")
            raw.execute(f"PRAGMA user_version = "
                        f"{[m.__name__ for m in migrations.MIGRATIONS].index('m025_places_read_again')}")
            raw.commit()
        self.assertNotEqual(then(), ["Understood: committing without it."])
        self.assertIn("read 1 of 1 transcript", self.ok("ingest").stdout)     # the upgrade reads it again
        self.assertEqual(then(), ["Understood: committing without it."])

    def test_a_database_stored_before_puts_a_message_in_chinese_to_the_judge(self):
        # m026: before it a line with no space was one token of output, so a message the person
        # typed in Chinese held no words of theirs and was never kept for a judge
        t = Transcript()
        t.user("给登录页加上记住我选项")
        t.assistant("Done: added a remember-me checkbox and committed it.")
        t.user("先和我讨论方案，\n不需要写代码")
        t.assistant("好的，我们先讨论。")
        self.write(t)
        env = self.env(OPENMEMORY_LLM_URL="http://127.0.0.1:9/v1/chat/completions", OPENMEMORY_LLM_MODEL="m")

        def kept():
            with store.connect() as db:
                return [ep["facts"]["said"] for ep in db.episodes("correction", light=True)]
        # the first message too since session 48: a first message the rules cannot read waits for a judge
        both = ["给登录页加上记住我选项", "先和我讨论方案，\n不需要写代码"]
        self.ok("ingest", env=env)
        self.assertEqual(kept(), both)
        with store.connect() as db:     # as the version before m026 stored it
            raw = raw_db(db)
            raw.execute("DELETE FROM episodes WHERE kind = 'correction'")
            raw.execute(f"PRAGMA user_version = "
                        f"{[m.__name__ for m in migrations.MIGRATIONS].index('m026_spaceless_read_again')}")
            raw.commit()
        self.assertEqual(kept(), [])
        self.assertIn("read 1 of 1 transcript", self.ok("ingest", env=env).stdout)     # the upgrade reads it again
        self.assertEqual(kept(), both)


class SecretsStoredBefore(Stored):
    def test_a_database_stored_before_loses_a_key_typed_alone_and_a_value_given_to_pass(self):
        # m028: a key typed as a message of its own and "pass: …" were kept whole before 2026-12-06
        key = "qRw7TzLp0aXbN3mVc8UeYk2GsHd5Jf9WiOt4Ey1ZlKuP6oBnQa3RsD7vTf0MhXc2"
        t = Transcript()
        t.user("set up the mail relay")
        t.assistant("I need the relay's API key.")
        t.user(key)
        t.assistant("Thanks, configuring it.")
        t.user("the console login is jo@example.com pass: Alley447$Alley447$")
        t.assistant("Logged in.")
        self.write(t)
        self.ok("ingest")

        def stored():
            with store.connect() as db:
                raw = raw_db(db)
                return " ".join(str(v) for table in ("passages", "episodes")
                                for row in raw.execute(f"SELECT * FROM {table}") for v in row)
        self.assertNotIn(key, stored())
        self.assertNotIn("Alley447", stored())
        with store.connect() as db:     # as the version before m028 stored them
            raw = raw_db(db)
            for table, column in (("passages", "text"), ("passages", "context"), ("episodes", "facts"),
                                  ("episodes", "gist"), ("episodes", "context")):
                raw.execute(f"UPDATE {table} SET {column} = replace(replace({column}, '[REDACTED:secret]\nThanks', "
                            f"'{key}\nThanks'), 'pass: [REDACTED:secret]', 'pass: Alley447$Alley447$')")
            raw.execute(f"PRAGMA user_version = "
                        f"{[m.__name__ for m in migrations.MIGRATIONS].index('m028_secrets_read_again')}")
            raw.commit()
        self.assertIn("Alley447", stored())
        self.assertIn("read 1 of 1 transcript", self.ok("ingest").stdout)     # the upgrade reads it again
        self.assertNotIn(key, stored())
        self.assertNotIn("Alley447", stored())


class RecordsWithNoTime(TempHome):
    """A record whose time is missing or not a time (another writer's log, a damaged line)."""

    def test_a_passage_is_as_old_as_the_record_before_it_and_recall_still_answers(self):
        t = Transcript(cwd="/home/dev/shop")
        t.user("run the tests with make check")
        t.assistant("Running make check.")
        t.user("no, always use pnpm here, never npm")
        t.assistant("Understood, pnpm from now on.")
        first = t.records[0]["timestamp"]
        for n, rec in enumerate(t.records):
            if n:
                rec["timestamp"] = ["", "2026-13-45T99:99:99Z", "yesterday"][n % 3]
        self.write_and_ingest(t)
        with store.connect() as db:
            ats = [r[0] for r in raw_db(db).execute("SELECT at FROM passages ORDER BY seq")]
        self.assertTrue(ats)
        self.assertTrue(all(at.startswith(first[:16]) for at in ats), (first, ats))
        found = json.loads(self.ok("recall", "--json", "pnpm").stdout)
        self.assertIn("always use pnpm", found[0]["text"])

    def test_a_passage_stored_with_no_time_is_recalled_as_the_oldest(self):
        t = Transcript(cwd="/home/dev/shop")
        t.user("run the tests with make check")
        t.assistant("Running make check: the suite uses pnpm workspaces.")
        self.write_and_ingest(t)
        with store.connect() as db:             # as an ingest before 2026-12-05 stored it
            raw_db(db).execute("UPDATE passages SET at = ''")
            raw_db(db).commit()
        p = self.ok("recall", "pnpm workspaces")
        self.assertIn("undated", p.stdout)
        self.assertIn("pnpm workspaces", p.stdout)

    def write_and_ingest(self, t):
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")


class WhatAHitShows(TempHome):
    def test_the_agents_words_show_the_short_question_they_answer_and_the_reply(self):
        t = Transcript(cwd="/home/dev/shop")
        t.user("set up the login service")
        t.assistant("The login service is configured with the staging database. " * 6)
        t.user("hmm are the first two tests really testing something?")
        t.assistant("You are right to question this. The first two round-trip tests only read back what the "
                    "new code wrote, so they prove nothing about checkpoints written by an older version, "
                    "whatever the fixture. " * 4 + "Shall I remove them?")
        t.user("remove the first two")
        t.assistant("Removed them.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        query = "round-trip tests prove nothing older version checkpoints fixture"
        text = self.ok("recall", query).stdout
        # The agent's answer (two passages) is shown after the person's question it answers, and
        # before the reply to it.
        [first] = [b for b in text.split("\n\n") if b.startswith("[p") and b.splitlines()[1].startswith("person: hmm")]
        self.assertTrue(first.splitlines()[2].startswith("agent: You are right to question this."), first)
        [last] = [b for b in text.split("\n\n") if b.startswith("[p") and b.endswith("\nperson: remove the first two")]
        self.assertIn("Shall I remove them?", last)
        hits = json.loads(self.ok("recall", query, "--json").stdout)
        self.assertIn("person: hmm are the first two tests really testing something?", [h.get("asked") for h in hits])
        self.assertIn("person: remove the first two", [h.get("reply") for h in hits])

    def test_a_whole_passage_is_shown_whole_with_the_last_sentence_that_says_what_was_done(self):
        # A passage is cut to PASSAGE_CHARS so that a hit shows it whole: cut shorter, its end went,
        # where a reply says what was done ("Done. … the change is in ContentBrowserModal.tsx:130").
        t = Transcript(cwd="/home/dev/shop")
        t.user("when the browser modal holds a single file it should be selected by default")
        reply = ("The auto-select logic belongs in the shared browser modal, so every browser gets it. "
                 "I read the modal's reset effect first, which runs whenever the modal opens. "
                 "It clears the selection and scrolls the list back to the top, and it already knows "
                 "how many items the modal holds, so it is the place to select the only one. "
                 "The skills and linked docs browsers use the same modal, so they need no change. ")
        done = "Done: a modal with a single item selects it on opening, in `ContentBrowserModal.tsx:130`."
        t.assistant(reply + done)
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        with store.connect() as db:
            [text] = [r for r, in raw_db(db).execute("SELECT text FROM passages WHERE text LIKE '%auto-select logic%'")]
        self.assertGreater(len(text), 560)
        shown = self.ok("recall", "browser modal single file selected by default").stdout
        [block] = [b for b in shown.split("\n\n") if b.startswith("[p") and "auto-select logic" in b]
        self.assertIn(text, block)                  # all of it, the last sentence too
        self.assertIn("ContentBrowserModal.tsx:130", block)

    def test_a_hit_that_holds_the_persons_words_and_ends_with_a_proposal_shows_the_reply_to_it(self):
        # The passage holds a short request of the person's and the agent's answer, which ends with a
        # proposal; the person's answer to the proposal opens the next passage.
        t = Transcript(cwd="/home/dev/shop")
        t.user("the worktree index broke again, why?")
        t.assistant("Git gc in the main repository pruned loose objects the worktree index still pointed at. " * 5)
        t.user("and can we document it in the known limitations?")
        t.assistant("Done. I added the worktree gc corruption to the known limitations, with the recovery "
                    "steps. Want me to also turn off auto gc on your repository now?")
        t.user("no don't turn it off, let's see if it keeps happening")
        t.assistant("Fair enough, the recovery is written down if it does.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        query = "did we turn off auto gc for the worktree corruption"
        hits = json.loads(self.ok("recall", query, "--json").stdout)
        [hit] = [h for h in hits if "Want me to also turn off auto gc" in h["text"] and "person: and can we" in h["text"]]
        self.assertTrue((hit.get("reply") or "").startswith("person: no don't turn it off"), hit)
        [block] = [b for b in self.ok("recall", query).stdout.split("\n\n") if f"[{hit['id']}]" in b]
        self.assertTrue(block.endswith("\nperson: no don't turn it off, let's see if it keeps happening"), block)

    def test_a_long_objection_the_agent_answers_shows_its_end_beside_the_whole_answer(self):
        t = Transcript(cwd="/home/dev/shop")
        t.user("set up the test harness for the staging checks")
        t.assistant("Done: the harness now writes its fixtures under tmp and ignores the build folder. " * 3)
        t.user("Looking at the changes you did, the harness script says the whole build folder is ignored, "
               "so nothing of it is committed, and the release notes step reads from there as well\n"
               "which is not correct: we only ignore build/cache, the build/manifest.json has to be committed")
        answer = ("You are right. The manifest is tracked and only the cache is ignored; I changed the "
                  "harness to leave the rest of the folder alone. " * 4).strip()
        t.assistant(answer)
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        query = "harness manifest cache ignored tracked changed"
        hits = json.loads(self.ok("recall", query, "--json").stdout)
        [hit] = [h for h in hits if h["text"].startswith("agent: You are right.")]
        # The person's message spans two lines and is longer than a hit shows of it: its end is
        # where the objection the agent answers is.
        self.assertTrue(hit["asked"].startswith("person: …"), hit)
        self.assertTrue(hit["asked"].endswith("the build/manifest.json has to be committed"), hit)
        self.assertLessEqual(len(hit["asked"]), recall.REPLY_CHARS)
        # Shown beside the agent's answer, not in place of part of it.
        self.assertLessEqual(len(hit["text"]), recall.HIT_CHARS)
        [block] = [b for b in self.ok("recall", query).stdout.split("\n\n") if f"[{hit['id']}]" in b]
        self.assertIn(f"{hit['asked']}\nagent: {answer}", block)

    def test_a_correction_and_the_passage_of_its_words_take_one_place(self):
        t = Transcript(cwd="/home/dev/shop")
        t.user("load the orders fixture into the reporting database")
        t.assistant("Loading it now.", tools=[("Bash", {"command": "psql reporting < orders.sql"}, "COPY 120", False)])
        t.user("no, never load fixtures into the reporting database, use the reporting replica on port 5433")
        t.assistant("Understood, I will use the replica on port 5433 for the orders fixture from now on.")
        t.user("and the reporting replica needs the orders fixture refreshed every morning")
        t.assistant("I added a morning job that refreshes the orders fixture on the reporting replica.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        query = "never load fixtures into the reporting database replica port 5433"
        with store.connect() as db:
            two = recall.search(db, query, k=2)
            every = recall.search(db, query, k=10)
            [correction] = [e for e in db.episodes("correction") if "never load fixtures" in e["title"]]
        said = "never load fixtures into the reporting database"
        self.assertTrue(correction["title"].startswith("Correction: no, never load fixtures"))
        holding = [h for h in every if said in h["gist"] or said in h["title"]]
        self.assertEqual({h["source"] for h in holding}, {"episode", "passage"})
        # The correction and the passage say the same words of the person's: two hits show them
        # once, the better ranked of the two, and one other place.
        self.assertEqual([h["ref"] for h in two if said in h["gist"] or said in h["title"]], [holding[0]["ref"]], two)
        self.assertEqual(len(two), 2)
        # With room for every memory held (seven, k=10: the `psql` the agent ran is one), both appear; in
        # relevance order either way.
        self.assertEqual(len(every), 7)
        for hits in (two, every):
            self.assertEqual(hits, sorted(hits, key=lambda h: -h["score"]))


class CommandsAfterWhatWasSaid(unittest.TestCase):
    # a session's commands are many and hold the names a question asks about as often as the exchange
    # that answers it: a command comes after hits within COMMAND_TIE of it, never after a clearly worse one
    def hit(self, ref, kind, score):
        return {"ref": ref, "id": int(ref[1:]), "source": "passage", "kind": kind, "score": score,
                "relevance": score, "at": "2026-11-02T10:00:00Z"}

    def test_a_command_comes_after_hits_of_comparable_relevance_only(self):
        hits = [self.hit("p1", "command", 0.60), self.hit("p2", "exchange", 0.55), self.hit("p3", "exchange", 0.30)]
        ordered = recall.commands_later([dict(h) for h in hits])
        self.assertEqual([h["ref"] for h in ordered], ["p2", "p1", "p3"])
        self.assertEqual([h["relevance"] for h in ordered], [0.55, 0.60, 0.30])     # relevance is unchanged
        far = [self.hit("p1", "command", 0.80), self.hit("p2", "exchange", 0.55)]
        self.assertEqual([h["ref"] for h in recall.commands_later(far)], ["p1", "p2"])


class CallingSession(TempHome):
    def test_the_session_asking_is_left_out(self):
        t = asked_session()
        path = t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest", str(path))
        with store.connect() as db:
            everyone = recall.recall(db, "push fail login branch upstream", k=5, touch=False)
            mine = recall.recall(db, "push fail login branch upstream", k=5, touch=False,
                                 exclude_sessions={t.session_id})
        self.assertTrue(everyone)
        self.assertEqual(mine, [])
        # Claude Code gives its MCP servers the session's id (CLAUDE_CODE_SESSION_ID).
        env = {"CLAUDE_CODE_SESSION_ID": t.session_id}
        with mock.patch.dict("os.environ", env):
            self.assertEqual(mcp.calling_sessions(t.cwd), {t.session_id})
            reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "recall", "arguments": {"query": "push fail login branch upstream"}}}, t.cwd)
        self.assertTrue(reply["result"]["content"][0]["text"].startswith("Nothing in memory matches"))


if __name__ == "__main__":
    unittest.main()
