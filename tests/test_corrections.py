"""Correction detection, measured on every human-typed message of the real corpus, labelled
by the written definition (ARCHITECTURE.md, "What a correction is")."""
import json
import os
import re
import subprocess
import sys
import unittest
from pathlib import Path

from openmemory import corrections, episodes, transcripts
from tests.fixtures import Transcript
from tests.helpers import CORPUS, ROOT, corpus_files, figures

LABELS = Path(__file__).with_name("data") / "learning" / "corpus_labels.json"
MIN_PRECISION = 0.85    # a false correction becomes a wrong lesson: precision matters most
MIN_RECALL = 0.60       # without a model (issue 10's target); doubtful turns are left out of both


def typed_turns(path):
    """(anchor, text) of every message the person typed, first ones included."""
    for turn in transcripts.parse(path).turns:
        if turn.role == "user" and turn.source in ("prompt", "queued", "command"):
            yield turn.uuid, turn.text


def verdicts(path) -> dict:
    """{anchor: 'correction' | 'doubtful' | 'standing'} as the rules decide (refusals by call)."""
    return {s.anchor if not s.legacy else s.legacy: s.verdict
            for s in episodes.surprises_of(transcripts.parse(path)) if s.kind == "correction"}


class CorrectionsOnRealCorpus(unittest.TestCase):
    def test_every_typed_message_is_labelled(self):
        labelled = {(t["file"], t["turn"]) for t in json.loads(LABELS.read_text())["turns"]}
        missing = [(p.relative_to(CORPUS).as_posix(), anchor, text[:60]) for p in corpus_files()
                   for anchor, text in typed_turns(p) if (p.relative_to(CORPUS).as_posix(), anchor) not in labelled]
        self.assertEqual(missing, [], "new typed messages: label them in tests/data/learning/corpus_labels.json")

    def test_precision_and_recall(self):
        labels = {(t["file"], t["turn"]): t["verdict"] for t in json.loads(LABELS.read_text())["turns"]}
        tp = fp = fn = tn = 0
        for path in corpus_files():
            rel = path.relative_to(CORPUS).as_posix()
            said = verdicts(path)
            anchors = {a for a, _ in typed_turns(path)} | {a for (f, a) in labels if f == rel}
            for anchor in anchors:
                truth = labels.get((rel, anchor))
                if truth is None or truth == "doubtful":
                    continue
                found = said.get(anchor) in ("correction", "standing")
                tp += truth == "correction" and found
                fp += truth != "correction" and found
                fn += truth == "correction" and not found
                tn += truth != "correction" and not found
        precision, recall = tp / (tp + fp), tp / (tp + fn)
        figures(f"\ncorrections on the real corpus: {tp} found, {fp} false, {fn} missed, {tn} rightly ignored; "
              f"precision {precision:.2f}, recall {recall:.2f}")
        self.assertGreaterEqual(precision, MIN_PRECISION)
        self.assertGreaterEqual(recall, MIN_RECALL)

    def test_refusals_without_words_are_corrections(self):
        short = next(p for p in corpus_files() if p.name == "short.jsonl")
        found = [s for s in episodes.surprises_of(transcripts.parse(short)) if s.kind == "correction"]
        self.assertEqual([(s.rejected, s.command) for s in found],
                         [(True, "mix phx.server 2>&1 | head -80"), (True, "Glob /home/marco/projects/spotter")])


class Verdicts(unittest.TestCase):
    """What the person typed after the agent said "Done! All tests pass.", by the definition."""
    DONE = "Done! All tests pass."

    def verdict(self, text, **kw):
        return corrections.correction_verdict(text, self.DONE, **kw)[0]

    def test_corrections(self):
        for text in ["that's wrong", "no", "revert that", "you broke the build", "why did you delete the fixtures?",
                     "I told you to use yarn", "the tests are still failing", "No. Use the v2 client",
                     "don't touch package.json", "this breaks the login flow", "didn't I say to keep the old API?",
                     "that doesn't compile", "the migration already exists, you created a duplicate",
                     "we use tabs, not spaces", "you forgot the tests", "isn't node 16 years old?",
                     "we never commit DEBUG=True, it goes in .env.local", "that endpoint was removed in v2",
                     "pr feedback:\n1. api/users.py:41 - N+1 query", "Traceback (most recent call last):\n"
                     "  File \"x.py\", line 1\nKeyError: 'a'"]:
            self.assertEqual(self.verdict(text), "correction", text)

    def test_not_corrections(self):
        for text in ["continue", "sounds good, proceed", "let's do option 2", "can you also add a test for it?",
                     "what about the mobile layout?", "commit and push", "great work!", "lgtm, merge it",
                     "The login page is broken on staging, can you look?", "always nice to see green tests",
                     "stop here for today, we'll continue tomorrow", "no rush. also add a changelog entry",
                     "wait, before you continue: what's the deadline for the API freeze?",
                     "stop the dev server when you're done", "how hard would it be to switch to OpenAI?"]:
            self.assertIsNone(self.verdict(text), text)

    def test_what_the_agent_should_be_doing_instead_is_a_correction(self):
        # public15 (session 49): "i am sorry, you should be updating index.html" after the agent had
        # edited the CSS; what the person expects to see ("you should be seeing the logs now") or
        # can do is no correction
        for text in ["i am sorry, you should be updating index.html",
                     "at this point, you should be updating the .md backup of our conversation"]:
            self.assertEqual(self.verdict(text), "correction", text)
        for text in ["you should be seeing the logs now", "you should be able to run it now",
                     "you should be getting an email shortly"]:
            self.assertIsNone(self.verdict(text), text)

    def test_doubt_of_what_the_agent_reported_is_a_correction(self):
        # public15 (session 49): after the agent reported its results or a change done
        for text in ["I still don't trust you, test thoroughly", "Still looks too good to be true, test more carefully",
                     "there was no visual difference. what other options do i have", "nothing changed on the page"]:
            self.assertEqual(self.verdict(text), "correction", text)
        for text in ["I see no difference between the two approaches, pick one", "i trust you, go ahead",
                     "can you also show the change in the changelog?"]:
            self.assertIsNone(self.verdict(text), text)

    def test_skepticism_of_what_the_agent_reported_is_a_correction(self):
        # public15 (session 50): after the agent reported benchmark results, twice in one session
        for text in ["I am even skeptical about this one, thoroughly test the baseline again",
                     "So what is different about that system, and I am still a bit skeptical so test again",
                     "i'm not convinced this fixed it"]:
            self.assertEqual(self.verdict(text), "correction", text)
        for text in ["External feedback - be skeptical, but check carefully", "I am convinced, go ahead",
                     "the reviewers were skeptical at first, so add a benchmark section"]:
            self.assertIsNone(self.verdict(text), text)

    def test_what_the_person_does_not_understand_is_no_correction(self):
        # public16 (session 50): "don't understand the issue", "don't understand at all" after the agent
        # explained: the person's "I" left out, asking to be told again; a ban with them stays one
        for text in ["don't understand the issue", "don't understand at all", "don't know what you mean",
                     "Don't get it"]:
            self.assertIsNone(self.verdict(text), text)
        for text in ["don't understand the port change, put it back to 3000", "don't run the tests yet",
                     "please don't use npm here", "don't follow the old layout, keep tests beside the code",
                     "don't get it working with npm, use pnpm"]:
            self.assertEqual(self.verdict(text), "correction", text)

    def test_doubtful(self):
        for text in ["did you push?", "i think the oracle and the agent should be the same agent?",
                     "did you write a migration for it?"]:
            self.assertEqual(self.verdict(text), "doubtful", text)
        log = "npm test\nFAIL src/a.test.ts\nError: expected 1 to be 2"
        self.assertEqual(corrections.correction_verdict(log, "I've looked at the structure.")[0], "doubtful")

    def test_a_first_message_is_standing_only_with_a_standing_rule(self):
        self.assertEqual(self.verdict("From now on, always run ruff before you commit. Now fix the typo.", first=True),
                         "standing")
        self.assertIsNone(self.verdict("Use the new endpoint; the old one always fails", first=True))
        self.assertIsNone(self.verdict("add pagination to the list command", first=True))

    def test_a_short_reply_to_a_question_with_options_is_a_choice_not_a_correction(self):
        # public13 (session 48): an interview of 35 questions, each with options under it; "No migration
        # needed", "Nope, and we're not considering adding it", "Not our concern" read as corrections
        asked = ("Perfect - ProfileService becomes the single point of integration.\n\n**Question 12:** What about "
                 "**historical Cases** from D365 CE?\n\n- **Migrate them to Salesforce**?\n- **Archive separately**?\n"
                 "- **No migration needed** (limited value)?")
        then_which = ("Moving on.\n\n**Question 35:** How do Cases get assigned?\n\n- **Option A:** assignment rules\n"
                      "- **Option B:** a general queue\n- **Option D:** Not our concern\n\nWhich approach?")
        for text, said in (("No migration needed", asked), ("Nope, and we're not considering adding it", asked),
                           ("Not our concern", then_which)):
            self.assertEqual(corrections.correction_verdict(text, said), (None, ""), text)
        # saying the agent got something wrong, or the same words with no options asked for, still correct
        self.assertEqual(corrections.correction_verdict("No, that's wrong: we already migrate them nightly", asked),
                         ("correction", "words"))
        self.assertEqual(corrections.correction_verdict("Not our concern", "I added the routing rules. Done."),
                         ("correction", "words"))
        self.assertFalse(corrections.asked_to_choose("Which approach?\n- one option"))

    def test_next_time_ending_what_is_asked_now_is_no_standing_rule(self):
        # public13 (session 48): "save our current conversation for when i reopen next time" went
        # live as "In this project save our current conversation for when i reopen next time."
        for text in ("save our current conversation for when i reopen next time",
                     "keep the notes somewhere for next time.", "we can pick this up next time!"):
            self.assertIsNone(self.verdict(text, first=True), text)
            self.assertFalse(corrections.what_lasts(text)["standing"], text)
        for text in ("Next time, run the linter first.", "next time ask before you push", "Next time use pnpm, not npm."):
            self.assertTrue(corrections.what_lasts(text)["standing"], text)

    def test_in_future_as_a_purpose_is_no_standing_rule(self):
        # public20 (session 54): "… store the full architecture so that in future we can recall if we
        # miss anything" went live as "In this project DOn't miss anything store the full architecture
        # so that in future we can recall …" (a reviewer dropped it): "so (that) in future" gives
        # what the task at hand is for, not a rule for the sessions to come
        for text in ("DOn't miss anything store the full architecture so that in future we can recall if we miss "
                     "anything , so be carefull", "write the decisions down so in the future we know why"):
            self.assertFalse(corrections.what_lasts(text)["standing"], text)
        for text in ("In future, always run the linter first.", "make sure that in the future you run make lint",
                     "in the future use pnpm, not npm"):
            self.assertTrue(corrections.what_lasts(text)["standing"], text)

    def test_a_first_message_without_a_standing_word_is_not_read_further(self):
        # the shortcut never changes a verdict: where the sentence kept is cut from the message,
        # a standing word at its end may lose the word boundary it had ("alwaysplease")
        def read_whole(text):
            found = corrections.lasting_sentence(text)
            return bool(found and (corrections._STANDING.search(found[0].split(";")[0])
                                   or corrections._STANDING_LEAD.match(text[:240])))
        texts = ["From now on, always run ruff before you commit.", "we never commit DEBUG=True",
                 "use uv, not pip. in this repo we use uv.", "please, please, not npm, don't everplease",
                 "). we use uv run the tests no,alwaysplease. ", "add pagination to the list command",
                 "Use the new endpoint; the old one always fails", "next time, run the linter first", ""]
        for text in texts:
            self.assertEqual(self.verdict(text, first=True) == "standing", read_whole(text), text)
        self.assertGreaterEqual(sum(map(read_whole, texts)), 4)

    def test_a_later_message_is_read_for_a_standing_rule_only_with_a_standing_word(self):
        # the same shortcut after the agent acted: "use uv neverthanks" keeps "use uv never"
        self.assertEqual(corrections.correction_verdict("use uv neverthanks"), ("correction", "words"))
        self.assertEqual(corrections.correction_verdict("please, we alwaysplease "), ("correction", "words"))
        self.assertEqual(corrections.correction_verdict("add pagination to the list command"), (None, ""))


class WhatLasts(unittest.TestCase):
    """What of the person's words lasts (corrections.what_lasts): a one-off task, a request to
    explain, a ban not said as standing, a line of a paste never do."""

    def lasts(self, said, form="words"):
        return corrections.what_lasts(said, form)

    def test_a_closing_word_is_taken_off_whole_never_the_end_of_a_word(self):
        # public14 (session 48): "… never used as a sales hook." rendered "… never used as a sales ho."
        for said, kept in (("never use the charity mission as a sales hook.", "never use the charity mission as a sales hook"),
                           ("always test the webhook", "always test the webhook"),
                           ("always run lint first, thanks", "always run lint first"),
                           ("always use Facebook login, ok?", "always use Facebook login")):
            self.assertEqual(self.lasts(said)["sentence"], kept, said)

    def test_what_the_person_does_not_get_is_no_ban(self):
        # public13 (session 48): "Don't get what you're trying to figure out. Just tell me who added the
        # new calculator" made the candidate "In this project don't get what you're trying to figure out."
        for said in ("Don't get what you're trying to figure out. Just tell me who added the new calculator",
                     "Don't understand what you mean.", "don't see the point of the wrapper"):
            self.assertIsNone(self.lasts(said)["sentence"], said)
        self.assertEqual(self.lasts("Don't know why it fails, use pytest -x")["sentence"], "use pytest -x")
        # public16 (session 51): after an interrupt every message redirects, and "don't understand the
        # issue" made the candidate "In this project don't understand the issue."
        for said in ("don't understand the issue", "Don't remember the last run.", "don't follow",
                     "do not know the answer yet"):
            self.assertIsNone(self.lasts(said)["sentence"], said)
        self.assertEqual(self.lasts("Don't get it. Use pnpm here, not npm.")["sentence"], "Use pnpm here, not npm")
        self.assertTrue(self.lasts("don't follow the old layout, keep tests beside the code")["lasting"])
        self.assertTrue(self.lasts("don't get the data from the cache, read it from the db")["lasting"])

    def test_a_message_in_another_language_makes_no_rule_of_its_english_words(self):
        # public13 (session 48): "Merci. Stop ici. Je passe en review humaine du Ticket 01. …" made the
        # candidate "In this project stop ici."; the rules read English only, a judge reads the rest
        for said in ("Merci. Stop ici. Je passe en review humaine du Ticket 01. Ne lance aucun autre ticket.",
                     "No uses npm, usa pnpm para todo por favor", "Bitte nicht pushen, ich mache das selbst"):
            self.assertIsNone(self.lasts(said)["sentence"], said)
        # English with a few words of another language in it still reads
        for said in ("Use the label 'Ajouter au panier' for the French button, not 'Add to cart'.",
                     "use pnpm, never npm. The French page title stays 'Mon compte' et 'Mes commandes'.",
                     "always use the es and de locales for the Spanish and German copy"):
            self.assertTrue(self.lasts(said)["lasting"], said)

    def test_a_one_off_task_or_a_request_to_explain_is_not_standing(self):
        for said in ["explain to me how to run the project, don't actually run.",
                     "add a comment to #91 so we don't forget.", "no, rename this function to parse_all",
                     "show me how the cache is filled, don't change anything"]:
            found = self.lasts(said)
            self.assertFalse(found["lasting"], said)
            self.assertFalse(found["standing"], said)

    def test_asking_for_no_changes_this_time_is_of_the_moment(self):
        # public12 (session 47, gathered blind): "im just curious, please don't make any changes. If i want to
        # have multiple workflows, is there a directory i should …" and, in another session, "I don't want you to
        # make any changes. Only answer questions for this session" went live in MEMORY.md as "Im just curious,
        # please don't make any changes.", said in two sessions: the agent told never to change that project
        for said in ["im just curious, please don't make any changes. If i want to have multiple workflows, is there "
                     "a directory i should or could put them in?",
                     "I don't want you to make any changes. Only answer questions for this session",
                     "please don't change anything, just explain the retry loop",
                     "always answer in one line for this session"]:
            found = self.lasts(said)
            self.assertTrue(found["one_off"], said)
            self.assertFalse(found["lasting"], said)
        # a ban on changing one thing can still last, said as standing or again
        self.assertTrue(self.lasts("never make any changes to the generated client")["lasting"])
        self.assertFalse(self.lasts("don't touch anything in vendor/")["one_off"])

    def test_a_request_to_report_back_is_of_the_moment(self):
        # public4: "dont necessary fix it, just check it let me know why its flaky" was a candidate
        said = ("this test seems to be flaky, check why. dont necessary fix it, just check it let me know why its "
                "flaky, and why its important")
        found = self.lasts(said)
        self.assertTrue(found["one_off"], found)
        self.assertFalse(found["lasting"], found)

    def test_what_the_task_at_hand_needs_is_no_rule_however_it_is_kept_in_mind(self):
        # public3: "Please keep in mind that we need to build metrics ..." was quoted as a candidate
        found = self.lasts("Please keep in mind that we need to build metrics based on the entire output files to "
                           "check the structure with all commits")
        self.assertIsNone(found["sentence"], found)
        self.assertEqual(self.lasts("remember: the staging deploy needs VPN")["sentence"],
                         "the staging deploy needs VPN")        # a fact kept in mind stays one

    def test_a_task_written_out_as_a_list_holds_for_that_task_unless_said_as_standing(self):
        # a long prompt that lists the task's steps and limits: "Don't skip ahead", "locked, do
        # not change" are this task's, not rules for every later session (public5's first night)
        spec = ("Build the settings page in three steps.\n\n"
                "1. Add the form component.\n2. Wire it to the API client.\n3. Add the tests.\n"
                "- Follow the steps in order.\n- The API schema is locked, do not change it.\n"
                "- Don't skip ahead to styling.\n")
        found = self.lasts(spec)
        self.assertFalse(found["lasting"], found)
        self.assertTrue(found["one_off"], found)
        standing = self.lasts(spec + "- From now on, never edit generated files by hand.\n")
        self.assertEqual((standing["standing"], standing["lasting"]), (True, True), standing)
        # the same limit said alone, after the agent acted, is read as before
        self.assertFalse(self.lasts("Don't skip ahead to styling, use the `ui-kit` form first")["one_off"])

    def test_a_ban_lasts_only_when_said_as_standing(self):
        ban = self.lasts("don't touch the migrations")
        self.assertEqual((ban["ban"], ban["standing"], ban["lasting"]), (True, False, False))
        for said in ["never touch the migrations", "from now on, don't touch the migrations",
                     "in this repo we don't touch the migrations by hand"]:
            found = self.lasts(said)
            self.assertEqual((found["standing"], found["lasting"]), (True, True), said)
        instead = self.lasts("don't use unittest here, run the tests with pytest -q")     # not only a ban
        self.assertEqual((instead["ban"], instead["lasting"]), (False, True))

    def test_what_the_person_asks_to_be_remembered_lasts(self):
        found = self.lasts("Option 1 doesn't work since the commit hash can change, that's why we add the trailer "
                           "to the real commits. I wonder if we should add this to CLAUDE.md so you remember this?")
        self.assertEqual((found["sentence"], found["lasting"], found["standing"]),
                         ("Option 1 doesn't work since the commit hash can change, that's why we add the trailer "
                          "to the real commits", True, False))

    def test_a_line_of_a_pasted_log_is_never_the_rule(self):
        said = ("npm run build\n(node:4242) [DEP0180] DeprecationWarning: fs.Stats constructor is deprecated.\n"
                "(Use `node --trace-deprecation ...` to show where the warning was created)\nit still fails")
        self.assertEqual(corrections.own_lines(said), ["npm run build", "it still fails"])
        for form in ("words", "pasted-failure"):
            self.assertIsNone(self.lasts(said, form)["sentence"])
        words = "2024-05-01 12:00:01 ERROR db: connection refused\nalways start the db with make db-up first"
        self.assertEqual(self.lasts(words)["sentence"], "always start the db with make db-up first")

    def test_a_sentence_that_opens_with_at_or_file_is_the_persons_and_a_frame_is_not(self):
        # public15 (session 49): "at this point, you should be updating the .md backup of our
        # conversation …" was read as a stack frame ("at …"), so the judge was told the whole message
        # was pasted and said it could not be a correction
        for said in ("at this point, you should be updating the .md backup of our conversation",
                     "at least run the tests before you push", "File uploads go to S3, not the local disk"):
            self.assertEqual(corrections.own_lines(said), [said], said)
        trace = ("it crashes again\nTypeError: x is undefined\nat Object.<anonymous> (/w/app/index.js:12:5)\n"
                 "at com.shop.Cart.total(Cart.java:42)\nat new Promise (<anonymous>)\n"
                 'File "/w/app/main.py", line 3, in <module>')
        self.assertEqual(corrections.own_lines(trace), ["it crashes again"])

    def test_a_line_the_person_opens_as_themselves_is_theirs_though_it_says_failed(self):
        # public24 (session 58): "I am working via a mobile hotspot. The SFTP connection is failing with
        # 'Authentication failed'. Please update …" read as a line of output (it says "failed"), so the
        # judge was told the whole message was pasted and that it held no words of the person's
        for said in ("I am on a mobile hotspot. The SFTP login keeps failing with 'Authentication failed'. "
                     "Please retry with a 20 s timeout", "we failed to deploy again, use make deploy-staging"):
            self.assertEqual(corrections.own_lines(said), [said], said)
        for line in ("Login failed: [401] Invalid username or password.", "I/O failed on /dev/sdb",
                     "Build failed with exit code 2"):
            self.assertEqual(corrections.own_lines("it still breaks\n" + line), ["it still breaks"], line)

    def test_a_paste_is_one_block_and_a_line_typed_before_a_prompts_gap_is_the_persons(self):
        # a terminal's right-hand prompt after the person's words; git's progress lines among its errors
        said = ("I pushed it and got this from the server: git push" + " " * 40 + "~ 42%\n"
                "Counting objects: 12, done.\nWriting objects: 100% (12/12), 3.1 KiB, done.\n"
                "remote: error: object 1f2e3d: bad file mode\nerror: failed to push some refs to 'origin'\n"
                "To example.org:team/app.git\n ! [remote rejected] main -> main (failed)")
        self.assertEqual(corrections.own_lines(said), [said.splitlines()[0]])
        # a line of the person's between two pasted ones stays theirs when they speak in it
        mine = "error: build failed\nwe never build from this folder, use the root\nerror: no such target"
        self.assertEqual(corrections.own_lines(mine), ["we never build from this folder, use the root"])
        # a quoted line ("> ...") is not the person's however it reads
        self.assertEqual(corrections.own_lines("> I think you should restart it   now\nno, don't"), ["no, don't"])

    def test_a_hypothetical_is_no_rule(self):
        # "if we use X, this could ..." thinks aloud: neither an instruction nor the team's convention
        for said in ("if we use a signing key that is derived from the user's key, this could be a way to share a file/folder",
                     "If I use the assistant.example.org it works well"):
            self.assertIsNone(self.lasts(said)["sentence"], said)
        self.assertEqual(self.lasts("when committing, always use conventional commits")["sentence"],
                         "when committing, always use conventional commits")
        self.assertEqual(self.lasts("we use pnpm here, not npm")["sentence"], "use pnpm here, not npm")

    def test_a_step_of_the_task_said_before_a_standing_rule_is_not_part_of_it(self):
        found = self.lasts("finish the migration, and never skip the pre-commit hooks")
        self.assertEqual((found["sentence"], found["standing"]), ("never skip the pre-commit hooks", True))
        found = self.lasts("redo the release, always sign the tags")
        self.assertEqual((found["sentence"], found["standing"]), ("always sign the tags", True))
        self.assertEqual(self.lasts("use pnpm, never npm")["sentence"], "use pnpm, never npm")   # one rule, both halves

    def test_review_findings_pasted_without_a_header_are_not_the_persons_words(self):
        # numbered findings with a severity, a finding's text after it, a list of places in the code
        said = ("1. Critical: tokens are written to the debug log, use the redactor instead of fmt.Printf\n"
                "the log file is world-readable\n"
                "2. **Suggestion:** prefer errors.Join over joining strings\n"
                "- `cache/lru.go:41-57` never releases the lock on the error path\n\n"
                "can you go through these? always run the linter before you push")
        self.assertEqual(corrections.own_lines(said), ["can you go through these? always run the linter before you push"])
        self.assertTrue(corrections.review_findings("Suggestion: use errors.Is instead of comparing strings"))
        verdict, form = corrections.correction_verdict(said, "Done, pushed.")
        self.assertEqual(verdict, "correction")
        self.assertNotIn("redactor", self.lasts(said, form)["sentence"] or "")
        # the person's own numbered list names no severity and no place in the code: theirs
        mine = ("what I'd like:\n1. if the error is silent, print nothing\n2. always exit with status 1\n"
                "3. in cmd/main.go:31 call the suggestion helper")
        self.assertEqual(corrections.own_lines(mine), mine.splitlines())
        rule = "Critical thing to remember: never push to main\nand keep the changelog tidy"      # a severity word, the person's own
        self.assertEqual(corrections.own_lines(rule), rule.splitlines())


    def test_a_message_of_one_word_is_the_persons(self):
        # a word alone reads as output among other lines (a log's "PASS"), never as the whole message:
        # a judge was shown the person's "stop" as pasted, and said it held no words of theirs
        for said in ("stop", "Revert!", "wait...", "origin/main", "release-1.4?"):
            self.assertEqual(corrections.own_lines(said), [said])
        self.assertEqual(corrections.own_lines("/tmp/build/out.log"), [])       # a path pasted alone stays pasted
        self.assertEqual(corrections.own_lines("npm test\nPASS\nit passes now"), ["npm test", "it passes now"])

    def test_a_line_of_a_script_written_without_spaces_is_the_persons(self):
        # scripts46: a line with no space was read as one token of output, so every line a person
        # typed in Chinese or Japanese was pasted, unless it was the whole message and under 100
        # characters (one word alone): five of public10's messages in Chinese, each longer or of
        # several lines ("我检查了一下，当前~/.claude/skills/路径下的skill-creator并不是我希望使用的skill，
        # …"), were never asked about at all (carries_nothing: no words of the person's)
        for said in ("我检查了一下，当前路径下的技能并不是我希望使用的，我希望使用的是从市场中安装的那个版本。先帮我解决这个问题，"
                     "然后再从第二阶段重新再来一遍，并且每一步都先和我确认，不要自己决定下一步该做什么，也不要跳过任何一个验证步骤。",
                     "未解决我的根本问题。\n请解决你一直报找不到的根因。",
                     "ダークモード切り替えで背景が変わらない\nもう一度確認してください"):
            self.assertEqual(corrections.own_lines(said), said.splitlines(), said)
            self.assertFalse(corrections.carries_nothing(said), said)
        # one token of output stays pasted, with a CJK character in it or not
        self.assertEqual(corrections.own_lines("npm test\nPASS\n它现在通过了"), ["npm test", "它现在通过了"])
        self.assertEqual(corrections.own_lines("看这个\n/tmp/构/out.log\na1b2c3d4e5"), ["看这个"])

    def test_the_judge_is_shown_a_one_word_message_as_the_persons(self):
        from openmemory import judge
        shown, pasted = judge._message({"said": "stop"})
        self.assertEqual((shown, pasted), ("stop", ""))


class Facts(unittest.TestCase):
    """What a correction episode carries for sleep and a judge (PROTOCOL.md, "Stored: episodes")."""

    def facts(self, said, first=False):
        t = Transcript()
        if not first:
            t.user("set up the project")
            t.assistant(tools=[("Bash", {"command": "npm install"}, "added 12 packages", False)])
        t.user(said)
        t.assistant("OK.")
        [ep] = [e for e in episodes.episodes_of(transcripts.parse_lines(t.lines(), "/x/s.jsonl"))
                if e["kind"] == "correction"]
        return ep["facts"]

    def test_a_standing_rule(self):
        f = self.facts("no, in this repo we always use pnpm, never npm")
        self.assertEqual((f["verdict"], f["standing"], f["lasting"], f["rule"], f["words"]),
                         ("correction", True, True, "Always use `pnpm`, never `npm`.",
                          "no, in this repo we always use pnpm, never npm"))

    def test_a_ban_of_the_moment_has_its_rule_but_does_not_last_alone(self):
        f = self.facts("no, don't run npm install")
        self.assertEqual((f["standing"], f["lasting"]), (False, False))

    def test_the_person_own_words_without_the_paste(self):
        f = self.facts("that still fails:\nnpm ERR! code 1\nnpm ERR! missing script: build")
        self.assertEqual((f["words"], f["lasting"]), ("that still fails:", False))
        self.assertNotIn("rule", f)

    def test_a_first_message_that_sets_a_rule(self):
        f = self.facts("From now on, always run ruff before you commit. Now fix the typo.", first=True)
        self.assertEqual((f["verdict"], f["form"], f["standing"], f["lasting"]), ("correction", "standing", True, True))


class ReadWithoutAModel(unittest.TestCase):
    """Pushback on a destructive command, and a preference said as a dislike (issue 24, item 4)."""

    def corrections_after(self, command, said):
        t = Transcript()
        t.user("tidy up the branch")
        t.assistant("Tidying.", tools=[("Bash", {"command": command}, "done", False)])
        t.user(said)
        t.assistant("Sorry.")
        return [e["facts"] for e in episodes.episodes_of(transcripts.parse_lines(t.lines(), "/x/s.jsonl"))
                if e["kind"] == "correction"]

    def test_an_alarmed_question_after_a_destructive_command_is_pushback(self):
        [f] = self.corrections_after("git reset --hard origin/main", "what are you doing...??")
        self.assertEqual((f["form"], f["lasting"]), ("question", False))     # it objects; it states no rule
        self.assertNotIn("rule", f)

    def left_to_a_judge(self, facts):
        """The forms of what the rules made of a message, each one left to a judge (no correction by them)."""
        self.assertTrue(all(f["doubtful"] and f["verdict"] == "doubtful" and not f["lasting"] for f in facts), facts)
        return [f["form"] for f in facts]

    def test_the_same_question_after_a_harmless_command_is_none(self):
        # no correction by the rules; a message they do not settle is a judge's to read (episodes.UNSETTLED)
        self.assertEqual(self.left_to_a_judge(self.corrections_after("git status", "what are you doing...??")),
                         ["unsettled"])
        self.assertEqual(self.left_to_a_judge(self.corrections_after("git reset --hard origin/main",
                                                                     "what is origin/main at now?")), ["unsettled"])

    def test_a_dislike_of_a_kind_of_thing_is_a_candidate_rule_not_a_standing_one(self):
        [f] = self.corrections_after("touch tests/run_loader.sh",
                                     "i hate .sh tests, write them in go. no relative imports please")
        self.assertEqual((f["verdict"], f["standing"], f["lasting"], f["rule"]),
                         ("correction", False, True, "Avoid .sh tests."))

    def test_a_dislike_of_this_one_thing_is_no_rule(self):
        self.assertEqual(self.left_to_a_judge(self.corrections_after("touch a.txt", "i don't like it but fine")),
                         ["unsettled"])
        self.assertNotIn("rule", self.corrections_after("touch a.txt", "i don't like it but fine")[0])
        self.assertEqual(corrections.dislike("2024-01-01 12:00:00 ERROR i hate mondays"), None)   # a log line

    def test_a_dislike_of_what_the_agent_offered_is_no_rule(self):
        # public9, after the agent proposed approaches: the candidate read "In this project avoid any
        # approach." (newuser47's week). Pushback on this moment's proposals (still a correction), no
        # kind of thing to avoid.
        for said in ("Think some more. I don't like any approach.", "I don't like either option, think again",
                     "i hate both of them"):
            with self.subTest(said=said):
                [f] = self.corrections_after("ls docs/plans", said)
                self.assertNotIn("rule", f)
        [f] = self.corrections_after("ls docs/plans", "I don't like any mocks in unit tests")
        self.assertEqual(f.get("rule"), "Avoid any mocks in unit tests.")
        # red47b: "any of the <kind>" names a kind, as "any <kind>" does; "any of these" is the moment's
        [f] = self.corrections_after("ls docs/plans", "I don't like any of the mocking libraries")
        self.assertEqual(f.get("rule"), "Avoid any of the mocking libraries.")
        [f] = self.corrections_after("ls docs/plans", "I don't like any of these, think again")
        self.assertNotIn("rule", f)


class SaidInPassing(unittest.TestCase):
    """rules3 (issue 24, item 1): a practice for a whole kind of work said in passing, a fact set
    against what the agent said, a tool it forgot it has, a convention in a clause: each read
    by its shape, with a real message shape that must fire and one that must not."""

    def read(self, said, agent="Done."):
        verdict, form = corrections.correction_verdict(said, agent)
        kept = corrections.what_lasts(said, form)
        return verdict, kept["sentence"], kept["lasting"], kept["standing"]

    def test_a_practice_for_each_commit_or_all_the_tests_is_a_candidate_not_a_standing_rule(self):
        self.assertEqual(self.read("keep each commit with working code please (no micro-committing broken state)"),
                         ("correction", "keep each commit with working code", True, False))
        self.assertEqual(self.read("let's not leave _all_ the tests to the very end..."),
                         ("correction", "don't leave all the tests to the very end", True, False))
        self.assertEqual(self.read("write every test alongside its step"),
                         ("correction", "write every test alongside its step", True, False))

    def test_one_task_over_many_items_is_no_practice(self):
        for said in ["fix every test in the suite", "run all the tests", "update each file", "commit all the changes",
                     "check every file in the folder", "check every file with grep", "leave it for later",
                     "let's leave the refactor for later", "save the docs for the end"]:
            self.assertEqual(self.read(said)[:3], (None, None, False), said)
        self.assertFalse(corrections.habit("no testing on fridays?"))       # a question, not a sign-like ban

    def test_a_sign_like_ban_is_a_practice_and_a_description_is_not(self):
        self.assertTrue(corrections.habit("no force-pushing to main"))
        for said in ["no existing tests cover this, add some", "no working solution yet", "(no matching entries)",
                     "no pending changes, good", "no missing imports now"]:
            self.assertFalse(corrections.habit(said), said)

    def test_a_fact_set_straight_after_the_agent_said_something_is_a_correction(self):
        refusal = "I won't add that key to the README: credentials shouldn't be committed."
        self.assertEqual(self.read("it's a test value for gitleaks detection", refusal)[0], "correction")
        self.assertEqual(corrections.correction_verdict(
            "the command string sent only contains the last command. it should send the whole command line",
            "Run `./entire status` to test it.")[1], "fact")

    def test_the_same_words_answering_a_question_or_asking_are_no_correction(self):
        self.assertIsNone(self.read("it's a test value for gitleaks detection", "Is that a real key?")[0])
        for said in ["it's a great start, now add the docs", "it's a small change, can you also add a test?",
                     "that's a good plan, thanks", "this is a test", "it's in the README", "that's for later",
                     "the api only returns 100 items per page"]:
            self.assertIsNone(self.read(said)[0], said)

    def test_a_tool_the_agent_forgot_it_has_is_an_instruction(self):
        self.assertEqual(self.read("you can use your LSP right?", "I'll grep for the callers."),
                         ("correction", "use your LSP", True, False))
        self.assertIsNone(self.read("you can use your LSP to find the callers", "I'll grep.")[0])   # a request
        for said in ["you can run it now, right?", "you could use a map right?"]:     # a step of the moment
            self.assertIsNone(self.read(said, "I'll grep.")[0], said)

    def test_a_review_finding_pasted_bare_is_a_review(self):
        # as a review tool writes one: the code named, in the third person, what is wrong or to consider
        for said in ["LoadConfig() opens the file and never closes it on the error path. Consider using defer "
                     "f.Close() right after os.Open so the handle is released.",
                     "The retry loop in SyncRemote has no upper bound and can hang the CLI when the server is down.",
                     "The error from cmd.Run() is checked but not wrapped, so callers cannot use errors.Is on it."]:
            self.assertEqual(corrections.correction_verdict(said, "Done, pushed.")[:2], ("correction", "review"), said)
            self.assertIsNone(corrections.what_lasts(said, "review")["sentence"], said)   # a finding is no rule
        # the person's own words around it, or a question: not a bare finding
        for said in ["I think LoadConfig() can fail here, can you check?",
                     "could SyncRemote hang when the server is down?",
                     "we should consider using SyncRemote for the mirror too"]:
            self.assertFalse(corrections.bare_finding(said), said)

    def test_output_the_agent_asked_for_is_an_answer_not_a_review(self):
        # public18 (session 52): a session of debugging a leaking worker, the agent asking each time
        # "Now run `window.__asyncTracker.debugWorkers()` in the browser console. This will show us …"
        # and the person pasting the console's lines back (`useAsyncInspector.js:52 [AsyncTracker] …`):
        # eight read as review findings pasted back, each a false correction
        log = ("useAsyncInspector.js:52 [AsyncTracker] Worker Process Debug\nuseAsyncInspector.js:53 Total worker "
               "processes: 1\nuseAsyncInspector.js:55 Worker 1: {id: 'worker-4-1', registeredAt: 12:01:33}")
        self.assertTrue(corrections.review_findings(log))
        for asked in ["Now run `window.__asyncTracker.debugWorkers()` in the browser console. This will show us which "
                      "worker is tracked.",
                      "I added logging to the cleanup. Try the upload again; you'll see each step, including whether "
                      "the call completes successfully."]:
            self.assertEqual(corrections.correction_verdict(log, asked)[:2], ("doubtful", "review"), asked)
        # after the agent said it put the work right, or with no such ask, it says the work was not done
        for said in ["The leak is fixed: the worker is terminated on unmount. Try the upload again and check the "
                     "console.", "Done, pushed.", "I refactored the worker registry."]:
            self.assertEqual(corrections.correction_verdict(log, said)[:2], ("correction", "review"), said)

    def test_forms_anyone_uses_to_say_the_agent_got_it_wrong(self):
        done, looked = "Done! All tests pass.", "I've read the handler."
        for said in ["hmm you edited the wrong file", "there's no such flag in gh", "but that method doesn't exist",
                     "this is overkill, a dict is enough", "please put it back", "leave them as they were",
                     "go back to the previous version", "but I asked for a table, not a list",
                     "ok, i never said to delete it", "same error", "nothing changed in the output"]:
            self.assertEqual(corrections.correction_verdict(said, looked)[0], "correction", said)
        for said in ["now I get a panic on startup", "the release build is broken now"]:   # since the agent's work
            self.assertEqual(corrections.correction_verdict(said, done)[:2], ("correction", "fact"), said)
            self.assertEqual(corrections.correction_verdict(said, looked)[0], "doubtful", said)
        for said in ["create the config if it doesn't exist", "make sure that folder doesn't exist first",
                     "the login page is broken on staging, can you look?",
                     "> same error\n> nothing changed"]:       # a request; pasted output
            self.assertIsNone(corrections.correction_verdict(said, looked)[0], said)

    def test_doing_what_the_agent_said_cannot_be_done_is_a_fact_set_straight(self):
        limit = "The export API only supports CSV, not direct uploads to the bucket. Want me to write a CSV?"
        for said in ["hm, I was able to do it from the dashboard", "works fine for me with the v3 client"]:
            self.assertEqual(corrections.correction_verdict(said, limit)[:2], ("correction", "fact"), said)
            self.assertIsNone(corrections.correction_verdict(said, "I've added the upload step.")[0], said)
        self.assertIsNone(corrections.correction_verdict("> I was able to connect\nok", limit)[0])     # pasted

    def test_not_as_this_but_as_that_is_a_preference(self):
        self.assertEqual(self.read("not as a comment, but as a document attached to the issue directly.",
                                   "I've added it as a comment.")[1:3],
                         ("not as a comment, but as a document attached to the issue directly", True))

    def test_a_convention_in_a_clause_after_a_rejection_is_kept_from_we(self):
        said = "which removes `git add .entire` but that is not correct, we don't gitignore the whole .entire folder"
        self.assertEqual(self.read(said), ("correction", "we don't gitignore the whole .entire folder", True, True))
        # a quoted code comment's "so we don't commit it" is not the team's convention; "we don't need" no rule
        self.assertIsNone(self.read("# Note: .entire is in .gitignore so we don't commit it")[1])
        self.assertEqual(self.read("yes, but we don't need to commit", "Should I commit?")[:3], (None, None, False))


if __name__ == "__main__":
    unittest.main()


class LedPatterns(unittest.TestCase):
    """corrections._led: a pattern led by a look-ahead for what its matches open with finds
    what the pattern finds, where it finds it; one it cannot read is kept as it is."""

    TEXTS = ["", "no", "No, use pnpm instead of npm", "we don't use mocks here", "ok so\nwe never push on fridays",
             "That's not it. Why is it still failing?", "see #91 first", "x, not y", "  — remember: staging needs VPN",
             "İstanbul KELVIN \u212a ſtop", "don't!", "it's\tbroken again?!", "wait… instead", "a,b;c.d!e?f"]

    def same(self, pattern):
        led = corrections._led(pattern)
        self.assertNotEqual(led.pattern, pattern.pattern)
        for text in self.TEXTS + [t.upper() for t in self.TEXTS] + [" ".join(self.TEXTS)]:
            for pos in range(0, len(text) + 1, 3):
                a, b = pattern.search(text, pos), led.search(text, pos)
                self.assertEqual(a and (a.span(), a.groups()), b and (b.span(), b.groups()), (pattern.pattern, text, pos))

    def test_the_same_matches(self):
        for source, flags in ((r"\b(?:we|i)\s+(?:always|never)\b|,\s*not\b|(?:^|[.!?]\s+)(?:please\s+)?(?:don'?t|stop)\s+\w+", re.I),
                              (r"""(?xi) \bnot\s+\w+   # a comment at the end
                                   | ^\s*remember\b""", 0),
                              (r"(?:very\s+)?(?<!\w)#\d+|\bst(op)\b|\s+instead\b", 0),
                              (r"(?m)^(?:no|nope)\b|[\u2014\u2026]", 0)):
            with self.subTest(source=source):
                self.same(re.compile(source, flags))

    def test_what_cannot_be_read_is_kept(self):
        for source in (r"[^a]b", r"(?:x)?", r".\bword", r"(?i:ab)c", r"\b$"):
            pattern = re.compile(source)
            self.assertIs(corrections._led(pattern), pattern, source)

    def test_the_rules_patterns_are_led(self):
        # a rule written so that its openings cannot be read would quietly lose the look-ahead
        for name in ("_PHRASE", "_RULE", "_WRONG_FACT", "_PUSHBACK", "_MAY_STAND", "_UNSETTLED", "_STANDING"):
            self.assertTrue(getattr(corrections, name).pattern.startswith("(?:"), name)


class ALongPaste(unittest.TestCase):
    def test_a_pasted_list_of_a_hundred_thousand_lines_is_read_once(self):
        # Each line's nearest pasted line before and after it was looked for from that line: a
        # list of 40,000 lines pasted into a message held ingest for a minute, this one 5 (a child
        # process, so a return to that is a timeout here, not a hung suite).
        code = ("from openmemory import corrections\n"
                "lines = corrections.own_lines('- item\\n' * 100_000 + '\\nand this one too')\n"
                "print(len(lines), lines[-2:])\n")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "100001 ['- item', 'and this one too']")



class AcrossPeople(unittest.TestCase):
    """rules38: shapes found in the sessions of more than one person (the dev team and public3's
    five others), each with paraphrased messages that must read as they do and near misses."""

    def verdict(self, said, agent="Done: the form now posts to /api/save and the tests pass."):
        return corrections.correction_verdict(said, agent)[0]

    def test_still_said_of_the_agents_work_is_pushback_and_still_said_of_the_person_is_not(self):
        for said in ["is the login test still failing?", "why is the old flag still there?",
                     "are you still calling the v1 client?", "I still see the old banner on the page?"]:
            self.assertEqual(self.verdict(said), "correction", said)
        for said in ["how do I try these pages while still on a feature branch?",
                     "when still on main, can I run the deploy preview?",
                     "I still don't understand why the worker cannot reach the queue?",
                     "i still dont get how the cache key is built?"]:
            self.assertNotEqual(self.verdict(said), "correction", said)

    def test_something_wrong_said_beside_failing_output_is_a_correction_whether_or_not_done_was_claimed(self):
        looked = "I've looked at the worktree setup."            # no claim of being done
        for said in ["hm, something's wrong: `TypeError: cannot read properties of undefined (reading 'id')`",
                     "npm run build\nERROR: failed to resolve ./routes\nexit code 1\n\nhelp!",
                     "something went wrong again:\nfatal: unable to read tree 4b1c\nerror: failed to push"]:
            self.assertEqual(corrections.correction_verdict(said, looked), ("correction", "pasted-failure"), said)
        # the words in the output are the tool's; no failure beside the words; help asked for
        self.assertEqual(corrections.correction_verdict("Error: Something went wrong\n  at load (app.js:3)", looked),
                         ("doubtful", "pasted-failure"))
        for said in ["something is off with the spacing, make it 8px", "something's wrong with my wifi, one sec",
                     "can you help me write the `parse_error` test?", "help me understand the `failed` state"]:
            self.assertNotEqual(self.verdict(said, looked), "correction", said)

    def test_a_claim_about_a_named_thing_set_straight_with_what_it_is_lasts(self):
        for said, standing in [("the retry flag is not correct, that is for uploads only", False),
                               ("no. the pre-push hook is not where it runs, it is in the CI job", False),
                               ("the changelog should not be edited by hand, it is a generated file", False),
                               ("the seed data must not be changed ever, it is the fixture of the e2e suite", True)]:
            kept = corrections.what_lasts(said, "words")
            self.assertEqual((kept["kind"], kept["lasting"], kept["standing"]), ("fact", True, standing), said)
        # "must not … ever" is a standing rule said in a first message; "does not ever", "haven't ever" describe
        self.assertEqual(corrections.correction_verdict(
            "please tidy the docs. the seed data must not be changed ever, it is the fixture of the e2e suite.",
            first=True)[0], "standing")
        for said in ["I haven't ever seen this error, it is new to me", "the job does not ever finish, it is stuck"]:
            self.assertIsNone(corrections.correction_verdict(said, first=True)[0], said)
        # a pronoun's state, or a taste about this one change, is of the moment
        for said in ["the page isn't loading, it's blank", "it's not right, it is the wrong color",
                     "the button is not right, it's too small", "the build is not correct, it is still failing"]:
            self.assertNotEqual(corrections.what_lasts(said, "words")["kind"], "fact", said)


class NoNeed(unittest.TestCase):
    """A step said to be unneeded ("we don't need to restore the old server") is no rule: found on
    a first night over public4, where it went live as "In this project don't need to restore the
    umls-mcp-server." (its labeller: a redirect of the moment)."""

    def test_a_step_said_to_be_unneeded_makes_no_lesson_and_a_convention_still_does(self):
        for said in ["We don't need to bring back the old auth service", "we don't have to rebuild the image",
                     "no need to run the seed script by hand"]:
            self.assertIsNone(corrections.lasting_sentence(said), said)
        for said, rule in [("we don't commit generated clients", "don't commit generated clients"),
                           ("we don't use npm here, use pnpm", "don't use npm here, use pnpm")]:
            self.assertEqual(corrections.lasting_sentence(said)[0], rule)


class ANewTaskWrittenOut(unittest.TestCase):
    """rules45: a task written out as a list (corrections.task_written_out) starts new work, whatever
    its length: public5's stage briefs ("Continuing ... Stage 1 is done. Now build Stage 2", "We're
    making three changes ... Do them in this order. STEP 1 ..."), public3's agent-team prompt and
    public6's "Read the feedback at ... Do NOT modify any code files." were read as late
    instructions, standing rules or corrections by their "don't" lines. Only the words before the
    list may say the last work was wrong."""

    def corrections_after(self, said, first=False):
        t = Transcript()
        if not first:
            t.user("build the importer in src/importer.py")
            t.assistant("Done: src/importer.py reads the feed and the tests pass.",
                        tools=[("Bash", {"command": "pytest -q"}, "4 passed", False)])
        t.user(said)
        t.assistant("On it.")
        return [e["facts"] for e in episodes.episodes_of(transcripts.parse_lines(t.lines(), "/x/s.jsonl"))
                if e["kind"] == "correction" and e["facts"]["verdict"] in ("correction", "standing")]

    BRIEF = ("Stage 1 is finished and the feed is imported. Now build Stage 2: src/score.py.\n\n"
             "Time budget: one hour. Don't add features that are not listed here.\n\n"
             "Build src/score.py to:\n"
             "1. Load the newest import from data/raw/\n"
             "2. Drop rows with an empty body\n"
             "3. Score each row with the rubric in prompts/score.md\n"
             "4. Save every scored row to data/scored/{date}.json\n"
             "5. Print a table of the ten best rows\n\n"
             "Do NOT change src/importer.py. If the rubric file is missing, never invent one: stop and tell me.")

    def test_a_brief_for_the_next_piece_of_work_is_no_correction(self):
        self.assertEqual(self.corrections_after(self.BRIEF), [])
        self.assertEqual(self.corrections_after("# Team prompt: multi-profile support\n\n" + self.BRIEF, first=True), [])

    def test_a_written_out_task_that_opens_by_saying_the_last_work_is_broken_is_one(self):
        [f] = self.corrections_after("The importer has real bugs. Fix these, don't add anything else.\n\n"
                                     + self.BRIEF.split("\n\n", 3)[3])
        self.assertEqual((f["verdict"], f["form"], f["lasting"]), ("correction", "words", False))

    def test_a_list_of_rules_is_no_task_and_its_rules_count(self):
        # red46: a list of five rules was read by its opening alone ("A few rules for this repo:"),
        # which says nothing: neither a correction after the agent's work nor, first in a session,
        # a standing rule, where before rules45 it was both
        rules = ("A few rules for this repo:\n1. Never push to main, open a PR\n2. Always use pnpm, not npm\n"
                 "3. Run the tests before you commit\n4. Keep each commit small\n5. Don't edit the generated files")
        [f] = self.corrections_after(rules)
        self.assertEqual((f["verdict"], f["form"]), ("correction", "words"))
        [f] = self.corrections_after(rules, first=True)
        self.assertEqual((f["verdict"], f["form"], f["standing"]), ("correction", "standing", True))

    def test_a_sentence_that_opens_a_list_is_not_glued_to_its_first_item(self):
        # public17 (session 51): "Update @CLAUDE.md to instruct Claude to do the following: - Never use
        # the `any` type when writing TypeScript. - Always f…" made the candidate "In this project update
        # `@CLAUDE.md` to instruct Claude to do the following:, Never use the `any` type …": the "never"
        # after it was read as the second half of one sentence ("it needs to be local. not in the cloud")
        said = ("Update @CLAUDE.md to instruct Claude to do the following:\n- Never use the `any` type when writing "
                "TypeScript.\n- Always fix every warning the tests print.")
        kept = corrections.what_lasts(said, "words")
        self.assertEqual((kept["sentence"], kept["standing"]), ("Never use the `any` type when writing TypeScript", True))
        for said, sentence in (("it needs to be local. not in the cloud", "it needs to be local, not in the cloud"),
                               ("The rule is: never in the cloud", None)):
            with self.subTest(said=said):
                got = corrections.what_lasts(said, "words")["sentence"]
                if sentence:
                    self.assertEqual(got, sentence)
                else:
                    self.assertNotIn(":,", got or "")

    def test_a_rule_said_late_in_a_message_that_is_no_task_list_still_counts(self):
        said = ("ok so I looked at the output of the run and most of it is fine, the rows look right and the "
                "table prints well, though the dates are in the wrong zone for me. I will check the rest of "
                "the scoring later tonight when I have a moment to read it all properly. From now on, always "
                "run the linter before you say it is done.")
        [f] = self.corrections_after(said)
        self.assertEqual(f["verdict"], "correction")


class AdviceAskedFor(unittest.TestCase):
    """rules45: a question about what the person may or should do, or what they are missing, asks
    for advice (corrections._ADVICE): public4's "Can I still run vitests with npx command or must
    use vitest?", public7's "what should i do still it is missig?" and "What am I missing?" were
    pushback by their "still" and "missing". The same words said of the agent's work still are."""

    def verdicts_after(self, said):
        t = Transcript()
        t.user("move the unit tests to vitest")
        t.assistant("Done: the suite runs under vitest and all 41 tests pass.",
                    tools=[("Bash", {"command": "npx vitest run"}, "41 passed", False)])
        t.user(said)
        t.assistant("Here is how.")
        return [e["facts"]["verdict"] for e in
                episodes.episodes_of(transcripts.parse_lines(t.lines(), "/x/s.jsonl")) if e["kind"] == "correction"]

    def test_asking_what_the_person_may_do_or_is_missing_is_no_correction(self):
        for said in ["Can I still run the tests with jest, or must it be vitest now?",
                     "ok, and for the coverage report what should I do, it is still missing?",
                     "Could the config be too old for this? What am I missing?"]:
            self.assertNotIn("correction", self.verdicts_after(said), said)

    def test_the_same_words_said_of_the_agents_work_are_pushback(self):
        for said in ["why am I still seeing the jest banner?", "are we missing a test for the date helper?",
                     "is the snapshot test still failing?"]:
            self.assertEqual(self.verdicts_after(said), ["correction"], said)

    def test_asking_whether_one_has_to_say_it_again_is_pushback(self):
        # red46: "should I" read as advice asked for, so a reproach for a thing said before was lost
        for said in ["should I really have to tell you again to use vitest?",
                     "why should I have to ask twice for vitest?"]:
            self.assertEqual(self.verdicts_after(said), ["correction"], said)


class AnotherWayChosen(unittest.TestCase):
    """rules45: "X instead" in answer to the agent's offer picks another way than the one offered,
    as "no" to it declines (corrections._OTHER_CHOICE beside _DECLINE): public4's "yes pls put them
    into a dist dir instead" after "... or would you like me to add *.js to .gitignore?" and "Add it
    to *Project-level memory instead, and then commit all changes" after "Want me to add it directly
    to your CLAUDE.md?" were corrections. After work the agent did unasked, the same words are one."""

    def verdicts_after(self, agent, said):
        t = Transcript()
        t.user("write up the conventions we settled on")
        t.assistant(agent, tools=[("Write", {"file_path": "/home/dev/shop/notes.md", "content": "x"}, "ok", False)])
        t.user(said)
        t.assistant("Sure.")
        return [e["facts"]["verdict"] for e in
                episodes.episodes_of(transcripts.parse_lines(t.lines(), "/x/s.jsonl")) if e["kind"] == "correction"]

    def test_another_way_than_the_one_offered_is_an_answer(self):
        offer = "Here is the section. Want me to add it directly to your CLAUDE.md?"
        for said in ["Add it to the project's AGENTS.md instead, and then commit", "yes, put it in docs/ instead"]:
            self.assertNotIn("correction", self.verdicts_after(offer, said), said)

    def test_the_same_words_after_work_done_unasked_or_with_a_rejection_are_a_correction(self):
        self.assertEqual(self.verdicts_after("Done: I added the section to your CLAUDE.md.",
                                             "Add it to the project's AGENTS.md instead, and then commit"),
                         ["correction"])
        self.assertEqual(self.verdicts_after("Here is the section. Want me to add it directly to your CLAUDE.md?",
                                             "that's not what I asked, put it in docs/ instead"), ["correction"])

    def test_the_same_words_after_work_done_then_an_offer_are_a_correction(self):
        # red46: an offer after the work the agent says it did made "X instead" an answer to the offer,
        # where it sets that work right
        for agent, said in (("I wrote the section into notes.md. Want me to add it to your CLAUDE.md too?",
                             "put it in docs/conventions.md instead"),
                            ("Done: the section is in notes.md. Should I commit it?", "call it CONVENTIONS.md instead")):
            self.assertEqual(self.verdicts_after(agent, said), ["correction"], said)


class StillNotFarEnough(unittest.TestCase):
    """rules45: "still" with a state the agent's change did not get past is a correction, as
    "still not", "still failing", "still seeing" were (corrections._PHRASE): public7's "still too
    hard." after a gradient made softer, public6's "I'm still having trouble scrolling vertically
    on mobile." after a scrolling fix were missed."""

    def verdicts_after(self, said):
        t = Transcript()
        t.user("the page scrolls badly on phones and the fade is harsh")
        t.assistant("Fixed: the scroll container no longer traps touch and the fade is softer.",
                    tools=[("Edit", {"file_path": "/home/dev/shop/app.css", "old_string": "a", "new_string": "b"},
                            "ok", False)])
        t.user(said)
        t.assistant("Looking again.")
        return [e["facts"]["verdict"] for e in
                episodes.episodes_of(transcripts.parse_lines(t.lines(), "/x/s.jsonl")) if e["kind"] == "correction"]

    def test_still_too_much_or_still_having_trouble_is_a_correction(self):
        for said in ["still too harsh.", "I'm still having trouble scrolling on my phone, it sticks halfway",
                     "the fade is still too slow"]:
            self.assertEqual(self.verdicts_after(said), ["correction"], said)

    def test_still_of_the_persons_own_plans_is_none(self):
        for said in ["great, I still have two other pages to check, then we ship", "still on it, give me a minute"]:
            self.assertNotIn("correction", self.verdicts_after(said), said)

    def test_still_too_early_or_still_having_trouble_understanding_is_the_persons(self):
        # red46: "still too …" and "still having trouble …" took any word after them, so an idiom
        # of time and the person's own understanding read as the agent's change not getting past it
        for said in ["still too early to tell, I'll check it on my phone tonight",
                     "I'm still having trouble understanding the scroll container, can you explain it?"]:
            self.assertNotIn("correction", self.verdicts_after(said), said)


class InChinese(unittest.TestCase):
    """session 55: the plainest ways of saying in Chinese that the agent was wrong (no labelled
    Chinese session read before they were written). public10, public11 and public20 had a third of
    their sessions in Chinese, and the rules found none of the corrections typed in it."""

    def verdicts_after(self, said, agent="依赖已安装，测试全部通过。"):
        t = Transcript()
        t.user("帮我安装依赖并运行测试")
        t.assistant("好的。", tools=[("Bash", {"command": "npm install && npm test"}, "12 passing", False)])
        t.assistant(agent)
        t.user(said)
        t.assistant("明白了。")
        return [(e["facts"]["verdict"], e["facts"]["form"]) for e in
                episodes.episodes_of(transcripts.parse_lines(t.lines(), "/x/s.jsonl")) if e["kind"] == "correction"]

    def test_that_is_wrong_it_still_fails_do_not_and_from_now_on_are_corrections(self):
        for said in ["不对，这个项目用 pnpm", "嗯，不是这样的，测试要在容器里跑", "错了", "还是不行", "又报错了",
                     "测试依然没有通过", "这个配置没有生效", "不要用 mock", "别改 package.json", "停！", "回滚刚才的修改",
                     "我的意思是只改前端", "你忘了提交", "你又把测试删了", "以后都用 pnpm 安装依赖",
                     "记住：提交前先跑 lint"]:
            self.assertEqual(self.verdicts_after(said), [("correction", "words")], said)
        self.assertEqual(self.verdicts_after("你确定测试都通过了吗？"), [("correction", "question")])

    def test_are_you_sure_said_either_way_is_pushback(self):
        # public23 (session 56): "你确认…都实现对了吗" (are you sure … both are right?) as "你确定"; "你确认一下"
        # (please confirm) is a request, as "你确定一下" is
        self.assertEqual(self.verdicts_after("你确认nvfp4和mxfp4都实现对了吗"), [("correction", "question")])
        self.assertNotIn("correction", [v for v, _ in self.verdicts_after("你确认一下版本号")])

    def test_a_request_an_answer_a_question_or_a_nudge_is_none(self):
        # what shares a correction's characters and is none: "对不对" (right or not?), "行不行", "要不要",
        # "别的" (other), "没用的" (unused), "不要忘了" (don't forget), "不行的话" (if not)
        for said in ["好的，继续", "帮我再加一个登录页面", "这个函数是做什么的？", "这样写对不对？", "行不行？",
                     "要不要加测试？", "别的文件不用改", "删掉没用的代码", "不要忘了更新文档", "不行的话就先跳过",
                     "不是很清楚，能解释一下吗", "为什么会这样？", "停止服务器之后再部署", "我还是不能理解这段代码",
                     "如果没有生效就重启一下", "你确定一下版本号", "这不是很好吗？", "现在每次都要手动做一遍",
                     "帮我删除不必要的代码"]:
            self.assertNotIn("correction", [v for v, _ in self.verdicts_after(said)], said)

    def test_traditional_characters_a_later_ban_shouldnt_and_said_before_are_corrections(self):
        for said in ["還是點不開", "顏色不用改，不要把變化放在右上角", "不應標紅", "我們之前討論過這個事情",
                     "再想想有沒有更好的方案", "我不是還有階段嗎"]:
            self.assertIn(self.verdicts_after(said)[0][0], ("correction",), said)

    def test_what_does_not_show_is_a_correction_after_done_was_claimed_and_doubtful_before(self):
        for said in ["访问了，没看到这个表", "24小时的数据获取不到", "並沒有看到這19個package啊"]:
            self.assertEqual(self.verdicts_after(said), [("correction", "fact")], said)      # after "全部通过"
            self.assertEqual(self.verdicts_after(said, agent="我来看看这个页面的数据从哪里来。"),
                             [("doubtful", "fact")], said)
        self.assertEqual(self.verdicts_after("没看到这个表", agent="Done: the table is added and the tests pass."),
                         [("correction", "fact")])

    def test_english_with_a_chinese_word_is_read_as_english(self):
        self.assertEqual(corrections.chinese_verdict("please update the 中文 docs too"), (None, ""))
        self.assertEqual(corrections.chinese_verdict("不对 wrong wrong wrong wrong wrong"), (None, ""))

    def test_a_pasted_log_is_not_the_persons_words(self):
        # a log line that happens to hold "还是不行" is output, not what the person said of the work
        said = "跑了一下：\n  [ERROR] 2026-11-02 10:00:01 还是不行 retry=3\n  at main (app.js:3:1)\n看看这个"
        self.assertNotIn("correction", [v for v, _ in self.verdicts_after(said)], said)


class ThePersonsOwn(unittest.TestCase):
    """public21 (session 55): what reads like pushback or a redirect but is the person's own: typing
    into the wrong session, asking how to do something, saying yes after an interrupt."""

    def verdicts_after(self, said, interrupt=False):
        t = Transcript()
        t.user("cache the files the session reads")
        t.assistant("Done: files are cached by path; all tests pass.",
                    tools=[("Bash", {"command": "pytest -q"}, "12 passed", False)])
        if interrupt:
            t.assistant("Now I'll also drop the old cache folder.")
            t.interrupt()
        t.user(said)
        t.assistant("OK.")
        return [e["facts"]["verdict"] for e in
                episodes.episodes_of(transcripts.parse_lines(t.lines(), "/x/s.jsonl")) if e["kind"] == "correction"]

    def test_typing_into_the_wrong_session_is_no_correction(self):
        for said in ["wait, wrong session sry", "oops, that was meant for another window", "wrong chat"]:
            self.assertNotIn("correction", self.verdicts_after(said), said)
        for said in ["wait, that's the wrong file", "wrong branch, use main"]:        # the agent's, still
            self.assertEqual(self.verdicts_after(said), ["correction"], said)

    def test_not_liking_what_was_done_is_a_correction(self):
        # public23 (session 56): "Version 2 might affect the performance. I don't like it" after the agent's proposal
        for said in ["Version 2 might affect the performance. I don't like it", "hmm, I dont like this",
                     "I do not like that, keep the old cache"]:
            self.assertEqual(self.verdicts_after(said), ["correction"], said)
        for said in ["do you like it?", "I like it, ship it", "would I like this more with a second level?"]:
            self.assertNotIn("correction", self.verdicts_after(said), said)

    def test_asking_how_to_do_something_is_advice_asked_for(self):
        self.assertNotIn("correction", self.verdicts_after("how do I make sure the same file isn't fetched twice?"))
        self.assertEqual(self.verdicts_after("why is the same file still fetched twice?"), ["correction"])

    def test_yeah_after_an_interrupt_is_an_answer_as_yes_is(self):
        for said in ["yeah remove that.", "yes remove that."]:
            self.assertNotIn("correction", self.verdicts_after(said, interrupt=True), said)
        self.assertEqual(self.verdicts_after("keep the old cache folder", interrupt=True), ["correction"])
