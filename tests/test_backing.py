"""What backs a lesson (backing.py): the person's approval or text, a judge, their standing
words, another session; a candidate otherwise, which lapses after LAPSE_DAYS."""
import unittest

from openmemory import backing


def correction(said, **facts):
    return {"kind": "correction", "facts": dict({"said": said}, **facts)}


def lesson(kind="feedback", seen=1, **backing_):
    return {"kind": kind, "seen": seen, "backing": backing_}


ONE_OFF = correction("no, add a comment to #91 so we don't forget")
STANDING = correction("from now on, always run the linter with mise run lint before you commit")


class Backers(unittest.TestCase):
    def test_one_correction_alone_is_a_candidate(self):
        self.assertEqual(backing.backers(lesson(), [ONE_OFF]), [])
        self.assertEqual(backing.state_of(lesson(), [ONE_OFF]), backing.CANDIDATE)

    def test_the_persons_standing_words_back_it(self):
        self.assertEqual(backing.backers(lesson(), [STANDING]), ["standing"])
        for said in ("in this repo we always use pnpm, never npm", "going forward, never commit generated Prisma clients",
                     "don't ever push to main directly", "we never squash release branches"):
            with self.subTest(said=said):
                self.assertEqual(backing.backers(lesson(), [correction(said)]), ["standing"])

    def test_what_we_want_or_need_now_is_no_convention(self):
        # public15 (session 49): "great, now add some more of the features that were missing. but not
        # too many as we don't want to max out on tokens" was live, rendered as a quote: "we don't"
        # read as a convention of the team. What "we" want, need or have to do now is this task's.
        from openmemory import corrections
        for said in ("great, now add some more of the features. but not too many as we don't want to max out on tokens",
                     "we don't need to run the migrations by hand this time", "we do not have to ship it today"):
            with self.subTest(said=said):
                self.assertEqual(backing.backers(lesson(), [correction(said)]), [])
                self.assertFalse(corrections.what_lasts(said, "words")["standing"])
        for said in ("we don't use yarn in this repo", "no, we never squash release branches"):
            with self.subTest(said=said):
                self.assertEqual(backing.backers(lesson(), [correction(said)]), ["standing"])

    def test_a_bare_always_or_never_backs_it_only_about_what_the_agent_just_did(self):
        # Fresh sets of other people's sessions (ARCHITECTURE.md, session 42): each first night's one
        # rendered lesson, backed by a bare "always" or "in this repo", was a product's behaviour or
        # where a thing is, not how the agent works. Said of the command or file the agent had just
        # run or touched, it is about the agent's work.
        npm = {"tool": "Bash", "command": "npm install date-fns"}
        edit = {"tool": "Edit", "command": "Edit /home/p/shop/src/config.json"}
        self.assertEqual(backing.backers(lesson(), [correction("no, always use pnpm, never npm", **npm)]), ["standing"])
        self.assertEqual(backing.backers(lesson(), [correction("never edit config.json by hand", **edit)]), ["standing"])
        for said, did in (("Always show only the newest notification - collapse the rest", edit),
                          ("never commit generated Prisma clients", npm),
                          ("do not unignore the whole folder, only add the two scripts that are already in this repo", edit),
                          ("always use pnpm, never npm", {})):
            with self.subTest(said=said):
                self.assertEqual(backing.backers(lesson(), [correction(said, standing=True, **did)]), [])

    def test_a_program_named_by_an_everyday_word_is_named_only_as_a_command(self):
        # red42: after `make test` or `go test ./...`, "always make the list ..." and "never go back to
        # the old layout" say what the product does; the word is the program's name only by chance
        # (before: live, worded "always `make` the list ..."). Written as the command, it names it.
        make, go = {"tool": "Bash", "command": "make test"}, {"tool": "Bash", "command": "go test ./..."}
        for said, did in (("Always make the list show only the newest notification", make),
                          ("Never go back to the old layout: the list shows only the newest", go)):
            with self.subTest(said=said):
                self.assertEqual(backing.backers(lesson(), [correction(said, standing=True, **did)]), [])
        for said, did in (("no, never `make` here, always use just", make), ("never run go test without -race", go),
                          ("always use gotestsum, never go", go)):
            with self.subTest(said=said):
                self.assertEqual(backing.backers(lesson(), [correction(said, standing=True, **did)]), ["standing"])

    def test_the_reading_rules_say_standing_when_they_can_and_that_is_taken_as_said(self):
        self.assertEqual(backing.backers(lesson(), [correction("from now on run the linter", standing=True)]),
                         ["standing"])
        self.assertEqual(backing.backers(lesson(), [correction("from now on run the linter", standing=False)]), [])

    def test_a_ban_said_once_without_a_standing_word_is_not_backed(self):
        for said in ("explain to me how to run the project, don't actually run", "don't run make build",
                     "stop for a second, so the issue was the global gitignore"):
            with self.subTest(said=said):
                self.assertEqual(backing.backers(lesson(), [correction(said)]), [])

    def test_another_session_backs_a_correction_a_third_backs_a_failure(self):
        self.assertEqual(backing.backers(lesson(seen=2), [ONE_OFF]), ["sessions"])
        failure = {"kind": "error", "facts": {"command": "make docs", "error": ["no rule"]}}
        self.assertEqual(backing.backers(lesson("project", seen=2), [failure, failure]), [])
        self.assertEqual(backing.backers(lesson("project", seen=3), [failure] * 3), ["sessions"])

    def test_a_judge_that_found_it_lasting_backs_it(self):
        judged = correction("no, add a comment", judge={"correction": True, "lasting": True, "lesson": "x y z"})
        self.assertEqual(backing.backers(lesson(), [judged]), ["judge"])
        failure_lesson = lesson("project", seen=2, judge={"lasting": True, "cause": "c", "fix": "f"})
        self.assertEqual(backing.backers(failure_lesson, []), ["judge"])

    def test_a_judge_that_found_nothing_lasting_outweighs_standing_words_and_sessions(self):
        no = {"correction": True, "lasting": False}
        judged = correction("from now on, always add a comment to #91", judge=no)
        self.assertEqual(backing.backers(lesson(seen=2), [judged, judged]), [])
        self.assertTrue(backing.judged_no(lesson(seen=2), [judged]))
        self.assertEqual(backing.backers(lesson(seen=2, approved="2026-12-01T00:00:00Z"), [judged]), ["approved"])

    def test_a_correction_the_judge_found_not_lasting_counts_for_nothing_else(self):
        no = {"correction": True, "lasting": False}
        judged = dict(correction("no, add a comment to #91", judge=no), session_id="b", id=2)
        standing_ = dict(STANDING, session_id="a", id=1)
        self.assertEqual(backing.backers(lesson(seen=2), [standing_, judged]), ["standing"])   # not "sessions"
        self.assertFalse(backing.judged_no(lesson(seen=2), [standing_, judged]))
        other = dict(correction("no, use pnpm"), session_id="c", id=3)
        self.assertEqual(backing.backers(lesson(seen=3), [other, judged, dict(other, id=4, session_id="d")]),
                         ["sessions"])

    def test_the_person_decides_over_everything(self):
        self.assertEqual(backing.backers(lesson(approved="2026-12-01T00:00:00Z"), [ONE_OFF]), ["approved"])
        self.assertEqual(backing.backers(lesson(edited="2026-12-01T00:00:00Z", seen=2), [STANDING]),
                         ["edited", "standing", "sessions"])

    def test_an_earlier_models_decision_on_a_doubtful_turn_counts_as_a_judge(self):
        yes = correction("did you push?", decided="model", doubtful=False, model_lesson="Push before you say done.")
        no = correction("always did you push?", decided="model", doubtful=True)
        self.assertEqual(backing.backers(lesson(), [yes]), ["judge"])
        self.assertEqual(backing.backers(lesson(), [no]), [])

    def test_a_candidate_lapses_after_sixty_days(self):
        self.assertEqual(backing.LAPSE_DAYS, 60)
        since = "2026-11-03T03:00:00.000000Z"
        self.assertFalse(backing.lapses(since, "2027-01-01T03:00:00Z"))
        self.assertTrue(backing.lapses(since, "2027-01-02T03:00:00Z"))
        self.assertFalse(backing.lapses(None, "2030-01-01T00:00:00Z"))


if __name__ == "__main__":
    unittest.main()
