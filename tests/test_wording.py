"""Lesson wording without a model (wording.py): a lasting correction is worded as a lesson, a
momentary one is not; the person's words and the agent's own failed command make one line."""
import unittest
from pathlib import Path

from openmemory import corrections, episodes, failures, transcripts, wording
from tests.helpers import corpus_files
from tests.learning_eval import CORPUS as DEV_CORPUS


class LessonWording(unittest.TestCase):
    """A lasting correction is worded as a lesson; a momentary one ("use the other file") is not."""

    def test_a_lesson_is_worded_from_its_lesson_facts_alone(self):
        # sleep.lesson_words asks correction_lesson once a night for each set of the values of
        # wording.LESSON_FACTS (a correction said again all year is worded once): every other fact
        # of a real correction, taken away or changed, leaves its lesson as it was
        dev = DEV_CORPUS.is_dir()
        files = corpus_files() + (sorted(DEV_CORPUS.glob("*.jsonl")) if dev else [])
        facts = [ep["facts"] for path in files for ep in episodes.episodes_of(transcripts.parse(path))
                 if ep["kind"] == "correction"]
        worded = [f for f in facts if wording.correction_lesson(f)]
        self.assertGreater(len(worded), 10 if dev else 3)     # 15 with the dev corpus, 5 without
        for f in facts:
            others = {k: "x" for k in f if k not in wording.LESSON_FACTS}
            kept = {k: v for k, v in f.items() if k in wording.LESSON_FACTS}
            self.assertEqual(wording.correction_lesson({**f, **others}), wording.correction_lesson(f), f)
            self.assertEqual(wording.correction_lesson(kept), wording.correction_lesson(f), f)

    def test_what_the_person_does_not_want_done_reads_as_a_rule_not_a_quote(self):
        # public5's first night: 'The user said: "I do not want to sign my commits anymore".'
        for said, lesson in [("I do not want to sign my commits anymore", "Don't sign the user's commits."),
                             ("I don't want you to add dependencies", "Don't add dependencies.")]:
            self.assertEqual(wording.correction_lesson({"said": said, "form": "words"}), lesson, said)
        # what is not wanted of the thing at hand stays the person's words
        self.assertEqual(wording.correction_lesson({"said": "I don't want to lose it", "form": "words"}),
                         'The user said: "I don\'t want to lose it".')

    def test_lasting_instructions(self):
        for said, lesson in [
                ("never use print for debugging, use the logger", "Never use print for debugging, use the logger."),
                ("always run migrations with --fake-initial here", "Always run migrations with `--fake-initial`."),
                ("we deploy with make release, not npm run deploy", "Deploy with make release, not `npm run deploy`."),
                ("use uv, not pip, in this repo", "Use `uv`, not `pip`."),
                ("tests live in tests/unit, not tests/", "Tests live in `tests/unit`, not `tests/`."),
                ("we never commit DEBUG=True, it goes in .env.local", "Never commit `DEBUG=True`, it goes in `.env.local`."),
                ("isn't node 16 years old? we're on node 22 everywhere", 'The user said: "we\'re on node 22 everywhere".'),
                ("remember: the staging deploy needs VPN", 'The user said: "the staging deploy needs VPN".'),
                ("the docs are generated from docstrings, don't edit docs/api by hand",
                 "The docs are generated from docstrings, don't edit `docs/api` by hand."),
                ("it's `make lint`, not `npm run lint`", "It's `make lint`, not `npm run lint`."),
                ("no! we use jest here, vitest is only for the new package",
                 "Use `jest`, `vitest` is only for the new package.")]:
            self.assertEqual(wording.correction_lesson({"said": said}), lesson, said)

    def test_a_quote_after_a_refused_command_with_double_quotes_stays_whole_in_a_project(self):
        # dev tune: after a refused `git commit -m "$(cat <<'EOF' …`, the lesson read "In this
        # project, after refusing `git commit -m "$(cat <<'EOF' fix(hooks): make Cla…`." (the
        # person's words cut off: a quote was not told by its opening `After …, the user said: "`)
        command = 'git commit -m "fix: keep the login"'
        facts = {"said": "x", "trigger": command, "trigger_tool": "Bash", "rejected": True, "command": command,
                 "tool": "Bash"}
        found = {"sentence": "I think we should separate the hook types for clarity", "kind": "statement",
                 "standing": False, "lasting": True, "ban": False, "one_off": False}
        lesson = wording.scoped(wording.correction_lesson(facts, found), "/nowhere/shop", False)
        self.assertEqual(lesson, "After refusing `git commit -m 'fix: keep the login'`, the user said: "
                                 '"I think we should separate the hook types for clarity".')

    def test_a_quote_too_long_for_a_lesson_is_cut_between_words(self):
        said = ("remember: for manual-commits we use git hooks to also add the trailer to the commits, and the "
                "auto-commit strategy writes it itself when it makes the commit on the shadow branch for you")
        lesson = wording.correction_lesson({"said": said})
        self.assertTrue(lesson.startswith('The user said: "for manual-commits we use git hooks'), lesson)
        self.assertLessEqual(len(lesson), wording.LESSON_CHARS)
        quoted = lesson[len('The user said: "'):-len('…".')]
        self.assertTrue(lesson.endswith('…".'), lesson)
        self.assertIn(quoted.split()[-1], said.split(), lesson)   # its last word whole, not "com"

    def test_momentary_corrections_stay_episodes(self):
        for said in ["we do need a migration here", "it needs to be faster", "this must be a typo",
                     "you left debug prints everywhere", "no, use the other file", "use the second approach instead", "no, only change the header",
                     "use 3 retries instead of 5", "don't delete that function, we need it", "no, put it in utils.py instead",
                     "don't push yet", "never mind, use the old version", "use the staging url for this test",
                     "check again", "try again with the verbose flag", "that still fails", "the issue is the cache, not the query",
                     "it's the cache, not the query", "if it fails, don't worry"]:
            self.assertIsNone(wording.correction_lesson({"said": said, "tool": "Bash", "command": "python x.py"}), said)

    def test_words_around_a_paste_are_read_but_not_the_paste(self):
        said = ("Run npm install\nnpm error code 1\nnpm error Always use --legacy-peer-deps, never plain install\n"
                "in the container use npm ci --ignore-scripts, never plain npm install")
        facts = {"said": said, "own": "\n".join(corrections.own_lines(said)), "form": "pasted-failure"}
        self.assertEqual(wording.correction_lesson(facts),
                         "In the container use `npm ci --ignore-scripts`, never plain `npm install`.")


class Wording(unittest.TestCase):
    """Lesson text without a model: the person's words and the agent's own failed command."""

    def lesson(self, said, command="", tool="Bash", rejected=False):
        return wording.correction_lesson({"said": said, "tool": tool, "command": command, "rejected": rejected})

    def test_the_correction_and_the_failed_command_make_one_instruction(self):
        self.assertEqual(self.lesson("No, don't use unittest here, run the tests with pytest -q", "python -m unittest"),
                         "Run the tests with `pytest -q`, not `python -m unittest`.")
        self.assertEqual(self.lesson("use pytest -q for the tests, not unittest", "python -m unittest discover"),
                         "Use `pytest -q` for the tests, not `python -m unittest discover`.")
        self.assertEqual(self.lesson("No - use `uv run pytest` instead", "cd /x && python -m pytest 2>&1 | tail -20"),
                         "Use `uv run pytest` instead of `python -m pytest`.")
        # "that's wrong" says nothing of what to do: it opens the instruction, as "no" does, and is
        # no part of it (a red-team pass found "In this project That's wrong, don't use ...")
        self.assertEqual(self.lesson("That's wrong, don't use npm install here, use npm ci", "npm install"),
                         "Use `npm ci`, not `npm install`.")
        self.assertEqual(self.lesson("this is incorrect. always run the tests with make check", "npm test"),
                         "Always run the tests with make check.")
        self.assertIsNone(self.lesson("wrong file", "cat src/app.py"))
        # "that" is this moment's: no lesson says "don't run X" from it (X may be the work)
        self.assertIsNone(self.lesson("no, don't do that", "git push --force origin main"))

    def test_a_packages_three_dots_are_the_command_not_an_ellipsis(self):
        # Go's "./..." ends no sentence and is no punctuation to trim: without it the command changes
        self.assertEqual(self.lesson("no, always run go test ./... directly", "make test"),
                         "Always run go test `./...` directly.")
        self.assertEqual(self.lesson("use go test ./... instead", "make test"),
                         "Use go test `./...` instead of `make test`.")
        self.assertEqual(self.lesson("always run go test ./...!"), "Always run go test `./...`.")
        self.assertEqual(self.lesson("always run go vet ./internal/..., then the tests"),
                         "Always run go vet `./internal/...`, then the tests.")
        self.assertEqual(self.lesson("always run the linter first... it catches things"),
                         "Always run the linter first.")

    def test_parentheses_inside_a_code_span_are_the_command_not_a_sentence_break(self):
        # a parenthesis in prose ends the part that lasts; inside backticks it is the command's
        # (it had made the live lesson "Run `source <.")
        self.assertEqual(self.lesson("from now on run `source <(kubectl completion bash)` first"),
                         "Run `source <(kubectl completion bash)` first.")
        self.assertEqual(self.lesson("always call `Close()` on the store (or the test leaks it)"),
                         "Always call `Close()` on the store.")

    def test_openers_and_chatter_are_dropped(self):
        self.assertEqual(self.lesson("ok. let's use apple container instead of docker proper. it works basically "
                                     "the same way. you can run 'container' to see the help.", "Write /x/tools.ts",
                                     tool="Write"),
                         "Use apple container instead of `docker` proper.")
        self.assertEqual(self.lesson("wait, we use pnpm not npm", "npm install"), "Use `pnpm` not `npm`.")
        self.assertEqual(self.lesson("Never commit directly to main, open a PR instead!", "git commit -m wip"),
                         "Never commit directly to main, open a PR instead.")

    def test_a_fact_set_against_the_agents_guess_keeps_its_own_words(self):
        self.assertEqual(self.lesson("no, the config lives in config/settings.toml, not settings.py",
                                     "Read /x/settings.py", tool="Read"),
                         "The config lives in `config/settings.toml`, not `settings.py`.")
        self.assertEqual(self.lesson("tests are in tests/unit, not tests/", "pytest tests/"),
                         "Tests are in `tests/unit`, not `tests/`.")

    def test_other_tools_are_not_quoted_as_commands(self):
        self.assertEqual(self.lesson("don't touch the migrations", "Edit /x/migrations/0003.py", tool="Edit",
                                     rejected=True), "Don't touch the migrations.")

    def test_words_without_a_lasting_instruction_make_no_lesson(self):
        # The real corpus's corrections that no person would keep as a rule.
        for said in ("check again", "create the beads", "sorry. push up and make a pr", "that still doesn't work",
                     "why did you delete the fixtures?", "we're importing it in two different methods?",
                     "ah. the issue is the linter/formatter, not db:generate, I think.",
                     "ok. uh. no. the ci is running on the current commit...but seems to be checking the main "
                     "branch. wth?", ""):
            with self.subTest(said=said):
                self.assertIsNone(self.lesson(said, "git status"))

    def test_a_long_correction_fits_one_line(self):
        said = ("no, always run the integration tests with `docker compose run --rm app pytest -q tests/integration` "
                "and the unit tests with `pytest -q tests/unit`, never with tox, because tox rebuilds every "
                "environment and takes ten minutes")
        text = self.lesson(said, "tox")
        self.assertLessEqual(len(text), wording.LESSON_CHARS)
        self.assertTrue(text.startswith("Always run the integration tests with `docker compose run"), text)
        self.assertEqual(text.count("`") % 2, 0)
        self.assertTrue(text.endswith((".", "…")))

    def test_repeated_errors_name_the_command_and_its_error(self):
        # a known issue of the project: the command, the cause, and never "don't run it"
        make = {"tool": "Bash", "command": "make docs", "error": ["Exit code 2", "make: *** No rule to make target "
                                                                  "'docs'. Stop."]}
        self.assertEqual(wording.error_lesson([make, make]),
                         "`make docs` fails with `make: *** No rule to make target 'docs'. Stop.`.")
        python = [{"tool": "Bash", "command": cmd, "error": ["Exit code 127", "/bin/bash: line 1: python: command not found"]}
                  for cmd in ("python gen.py", "cd /w && python /w/y.py 2>&1 | head -5")]
        self.assertEqual(wording.error_lesson(python),
                         "`python` fails with `/bin/bash: line 1: python: command not found`.")
        fetch = {"tool": "WebFetch", "command": "WebFetch https://example.com/a", "error": ["Request failed with status code 403"]}
        self.assertEqual(wording.error_lesson([fetch, fetch]),
                         "WebFetch https://example.com/a fails with `Request failed with status code 403`.")

    def test_a_known_issue_names_what_fixed_it(self):
        seed = {"tool": "Bash", "command": "npm run seed", "error": ["Exit code 1", 'error: relation "users" does not exist']}
        fixed = dict(seed, fixed_by="cd /app && npm run db:migrate")
        self.assertEqual(wording.error_lesson([seed, fixed]),
                         '`npm run seed` fails with `error: relation "users" does not exist` until '
                         '`npm run db:migrate` has run.')
        build = {"tool": "Bash", "command": "make build", "error": ["buildtool.config.ConfigError: SITE_URL is not set"],
                 "fixed_by": "SITE_URL=http://localhost:8000 make build"}
        self.assertEqual(wording.error_lesson([build, build]),
                         "`make build` fails with `buildtool.config.ConfigError: SITE_URL is not set`; run it as "
                         "`SITE_URL=http://localhost:8000 make build`.")

    def test_a_cause_cut_to_fit_the_fix_is_cut_between_words(self):
        # newuser44, a week of public5 sessions: a candidate of safecast-map-MCP read "... fails with
        # `error: Your local changes to the following files wou…`; run it as `git stash && git checkout main`."
        checkout = {"tool": "Bash", "command": "git checkout main", "fixed_by": "git stash && git checkout main",
                    "error": ["Exit code 1", "error: Your local changes to the following files would be "
                              "overwritten by checkout:", "go/mcp-server"]}
        lesson = wording.scoped(wording.error_lesson([checkout]), "/home/rob/Documents/Safecast/safecast-map-MCP",
                                in_repository=False)
        self.assertEqual(lesson, "In this project `git checkout main` fails with `error: Your local changes to the "
                                 "following files…`; run it as `git stash && git checkout main`.")
        cause = lesson.split("fails with `", 1)[1].split("`", 1)[0]
        said = "error: Your local changes to the following files would be overwritten by checkout:".split()
        self.assertIn(cause.removesuffix("…").split()[-1], said)     # its last word whole, not "wou"

    def test_which_failures_can_teach(self):
        def facts(*lines, tool="Bash", guard=False):
            return {"tool": tool, "command": "x", "error": list(lines), "guard": guard}
        teach = [facts("Exit code 127", "/bin/bash: line 1: python: command not found"),
                 facts("Exit code 2", "make: *** No rule to make target 'docs'. Stop."),
                 facts("Exit code 1", "ImportError: No module named shop.tests"),
                 facts("fatal: The current branch spotter-gqc has no upstream branch.")]
        never = [facts("String to replace not found in file.", tool="Edit", guard=True),       # Claude Code's guard
                 facts("This command requires approval"),                                    # its permissions
                 facts("The user doesn't want to take this action right now. STOP what you are doing and wait "
                       "for the user to tell you how to proceed."),                          # a call cancelled with a refused one
                 facts("Exit code 1"), facts("Exit code 1", "Error"),                        # nothing said
                 facts("Exit code 1", "FAILED tests/test_cart.py::test_total - assert 3 == 4"),  # the work itself
                 facts("app/routes/api.ts(52,11): error TS7034: Variable 'session' implicitly has type 'any'"),
                 facts("3) test mount handles invalid project id gracefully (SpotterWeb.ProjectReviewLiveTest)"),
                 facts("error: undefined function get/2 (expected SpotterWeb.ProjectReviewLiveTest to define it)"),
                 facts("error: could not apply fb89908... fix: resolve all TypeScript issues"),
                 facts("│ 🥊 lefthook v1.12.3 hook: pre-commit │", "┃ biome-fix ❯"),
                 facts("% Total % Received % Xferd Average Speed Time Time Time Current")]
        for f in teach:
            self.assertTrue(failures.is_lesson_error(f), f["error"])
        for f in never:
            self.assertFalse(failures.is_lesson_error(f), f["error"])

    def test_code_goes_in_backticks(self):
        self.assertEqual(wording.codify("run pytest -q in tests/unit, not python -m unittest", ["python -m unittest"]),
                         "run `pytest -q` in `tests/unit`, not `python -m unittest`")
        self.assertEqual(wording.codify("edit settings.py and set DEBUG=1, e.g. with 'sed'", []),
                         "edit `settings.py` and set `DEBUG=1`, e.g. with `sed`")
        self.assertEqual(wording.codify("don't use `npm`, and don't run it -- ever", []),
                         "don't use `npm`, and don't run it -- ever")

    def test_a_fix_shown_as_the_failed_command_is_not_named(self):
        # found on a recorded night over other people's sessions: another script run after the same
        # `set -a && source ../../.env` worked, and both cut to the same words
        failed = {"command": "set -a && source ../../.env && set +a && uv run python scripts/run_e2e.py 2>&1",
                  "tool": "Bash", "error": ['psycopg2.errors.UndefinedColumn: column "structured" does not exist'],
                  "fixed_by": "set -a && source ../../.env && set +a && uv run python scripts/check_schema.py"}
        lesson = wording.error_lesson([failed, dict(failed, fixed_by="")])
        self.assertNotIn("until", lesson)
        self.assertIn("UndefinedColumn", lesson)
        # a step that shows as itself is still named
        seed = {"command": "npm run seed", "tool": "Bash", "error": ['error: relation "users" does not exist'],
                "fixed_by": "npm run db:migrate"}
        self.assertTrue(wording.error_lesson([seed]).endswith("until `npm run db:migrate` has run."))

    def test_a_here_a_preposition_takes_stays_in_the_lesson(self):
        # A judge's lesson for a call the person refused (newuser38, through the real Claude Code):
        # dropping "here" as a scope word left "... from; use ...", a sentence a reviewer cannot approve.
        with TempFolder() as tmp:
            plain = Path(tmp) / "plain"
            plain.mkdir()
            self.assertEqual(wording.scoped("Never run anything against the production database from here; use "
                                            "`$STAGING_DATABASE_URL`.", str(plain)),
                             "In this project never run anything against the production database from here; use "
                             "`$STAGING_DATABASE_URL`.")
            self.assertEqual(wording.scoped("Do not deploy to production from here.", str(plain)),
                             "In this project do not deploy to production from here.")
            # the scope word itself still goes: the prefix says where
            self.assertEqual(wording.scoped("Run migrations here before seeding.", str(plain)),
                             "In this project run migrations before seeding.")

    def test_a_here_set_against_another_place_stays_and_a_clause_of_no_concern_is_no_rejection(self):
        # public19 (session 53), rendered by the rules alone after a failed `python tools/…` run: "That
        # lives in a other folder and will be evaluated there, not, we only care about the R tests, not
        # `python`." ("not here" lost its "here"; "don't care about the python equivalent" read as
        # rejecting the command and dropped)
        said = ("we don't care about the python equivalent here; that lives in a other folder and will be "
                "evaluated there, not here; here we only care about the R tests. let's remove r-to-python "
                "mentions here.")
        lesson = wording.correction_lesson({"said": said, "form": "words", "trigger_tool": "Bash",
                                            "trigger": "python tools/improved_test_runner.py --golden-tests-dir ."})
        self.assertEqual(lesson, "Don't care about the `python` equivalent; that lives in a other folder and will "
                                 "be evaluated there, not here; we only care about the R tests.")
        self.assertEqual(wording.correction_lesson({"said": "run the migrations in CI, not here", "form": "words"}),
                         "Run the migrations in CI, not here.")
        # a clause that does reject the command is still rewritten against it
        self.assertEqual(wording.correction_lesson({"said": "use make test, don't run pytest directly", "form": "words",
                                                    "trigger_tool": "Bash", "trigger": "pytest -q"}),
                         "Use make test, not `pytest`.")

    def test_a_word_the_command_only_quotes_is_no_rejection_of_it_and_a_long_one_is_never_cut(self):
        # public25 (session 58), rendered by the rules alone: "In the future, don't create code examples,
        # keep it to generic or with diagrams" after `git add … && git commit -m "…Create detailed infra…"`
        # became "Keep it to generic or with diagrams, not…": the commit message's "Create" read as the
        # clause's, and the command named instead, cut with the rule
        said = "In the future, don't create code examples, keep it to generic or with diagrams"
        commit = ("git add infrastructure/loyalty-infrastructure.adoc && git commit -m \"$(cat <<'EOF' Add "
                  "comprehensive Loyalty infrastructure documentation Create detailed infra…")
        self.assertEqual(wording.correction_lesson({"said": said, "form": "words", "tool": "Bash", "command": commit}),
                         "Don't create code examples, keep it to generic or with diagrams.")
        # a clause that rejects a command too long to name whole stays as the person said it
        long_run = "python -m unittest discover --start-directory tests/integration --pattern test_checkout_flow.py"
        self.assertEqual(wording.correction_lesson({"said": "use make test, don't run python -m unittest directly",
                                                    "form": "words", "trigger_tool": "Bash", "trigger": long_run}),
                         "Use make test, don't run `python -m unittest` directly.")

    def test_scope_words_that_say_where_a_thing_is_stay_in_the_lesson(self):
        # newuser45, a week of public7's oh-my-posh sessions: "On bullet 1, do not unignore the full
        # folder, but only add the two skills that are already in this repo: ..." became the candidate
        # "In this project, on bullet 1, ... only add the two skills that are already.": the scope
        # words dropped, the sentence ended where they had said which skills.
        said = ("On bullet 1, do not unignore the full folder, but only add the two skills that are already "
                "in this repo:\n- the tracked ones, like `segment_create` and `segment_docs`")
        self.assertEqual(wording.correction_lesson({"said": said}),
                         "On bullet 1, do not unignore the full folder, but only add the two skills that are "
                         "already in this repo.")
        self.assertEqual(wording.correction_lesson({"said": "Never edit the generated files that live here."}),
                         "Never edit the generated files that live here.")
        # scope words that say where the rule holds still go: the prefix says where
        self.assertEqual(wording.correction_lesson({"said": "In this repo we always use pnpm."}), "Always use `pnpm`.")
        self.assertEqual(wording.correction_lesson({"said": "Never push to main in this repo."}), "Never push to main.")

    def test_scope_words(self):
        with TempFolder() as tmp:
            repo = Path(tmp) / "repo"
            (repo / ".git").mkdir(parents=True)
            plain = Path(tmp) / "plain"
            plain.mkdir()
            body = "Run the tests with `pytest -q`."
            self.assertEqual(wording.scoped(body, str(repo)), "In this repository run the tests with `pytest -q`.")
            self.assertEqual(wording.scoped(body, str(plain)), "In this project run the tests with `pytest -q`.")
            self.assertEqual(wording.scoped("PR titles start with the ticket.", str(plain)),
                             "In this project PR titles start with the ticket.")
            self.assertEqual(wording.scoped(body, None), body)
            self.assertEqual(wording.unscoped(wording.scoped(body, str(repo))), body)
            # a name keeps its capital; an everyday first word does not
            for name in ("Claude Code's Stop hook fires at the end of every turn.", "GitHub Actions cache the Go modules.",
                         "Claude's hooks run `go run`.",
                         "Claude Code transcript files are named by the session id.",   # a judge's wording, on the dev corpus
                         "Docker Compose files live in `deploy/`."):
                self.assertEqual(wording.scoped(name, str(plain)), "In this project " + name)
            self.assertEqual(wording.scoped("Both strategies add the trailer.", str(plain)),
                             "In this project both strategies add the trailer.")
            self.assertEqual(wording.scoped("Link every entry to its PR.", str(plain)),
                             "In this project link every entry to its PR.")
            # where the words already say it, the prefix alone does (a judge's wordings, on the dev corpus)
            self.assertEqual(wording.scoped("The golangci-lint config in this repo is `.golangci.yaml`, not `.yml`.",
                                            str(plain)),
                             "In this project the golangci-lint config is `.golangci.yaml`, not `.yml`.")
            self.assertEqual(wording.scoped("Run the linter with `mise run lint` here, not golangci-lint directly.",
                                            str(plain)),
                             "In this project run the linter with `mise run lint`, not golangci-lint directly.")
            self.assertEqual(wording.scoped("Check where the hooks live.", str(plain)),
                             "In this project check where the hooks live.")
            # a lesson that opens with when or where it holds reads as one place, not two
            for body, shown in (("In tests, compare against literal values.",
                                 "In this project, in tests, compare against literal values."),
                                ("When asked to merge from main, run `git fetch origin main` first.",
                                 "In this project, when asked to merge from main, run `git fetch origin main` first."),
                                ("After changing `src/omp.lua`, check that the prompt still renders.",
                                 "In this project, after changing `src/omp.lua`, check that the prompt still renders.")):
                self.assertEqual(wording.scoped(body, str(plain)), shown)
                self.assertEqual(wording.unscoped(shown), body)
            # one as long as the judge had room for (judge._room) keeps every word: the comma would
            # have cut it to "... name them after the real resource (ResourceClaim." (public10)
            body = ("In the quota design and code, do not prefix identifiers with `DRA`; name them after the real "
                    "resource (ResourceClaim, DeviceClass) too")
            self.assertEqual(len(body), wording.LESSON_CHARS - len("In this project "))
            shown = wording.scoped(body, str(plain))
            self.assertEqual(shown, "In this project i" + body[1:])
            self.assertEqual(wording.unscoped(shown), body)
            # a judge's wordings on other people's sessions: a verb is no name, a capital only the
            # sentence's start gave goes, and a lesson about the project itself says where already
            for body, shown in (("Attach Linear working docs to the issue, not to the project.",
                                 "In this project attach Linear working docs to the issue, not to the project."),
                                ("Connect Claude features through `claude login`, not an API key gateway.",
                                 "In this project connect Claude features through `claude login`, not an API key gateway."),
                                ("Bare `python` is not on PATH; run it through the project environment.",
                                 "In this project bare `python` is not on PATH; run it through the project environment."),
                                ("Auto mode blocks `sudo sysctl -w`; give the person the command.",
                                 "In this project auto mode blocks `sudo sysctl -w`; give the person the command."),
                                ("This project uses tooluniverse now, not umls-mcp-server.",
                                 "This project uses tooluniverse now, not umls-mcp-server."),
                                # a place of its own kind said first (public12, session 47: "In this project, in
                                # this learning project, don't write code for the person ...")
                                ("In this learning project, don't write code for the person; give suggestions.",
                                 "In this learning project, don't write code for the person; give suggestions."),
                                # a first word the lesson writes with its capital again later, mid-sentence,
                                # is a name (public8, a judge's wording: "In this project odoo tables ...")
                                ("Odoo tables like `mail_activity` are not in the `postgres` database; query the Odoo DB instead",
                                 "In this project Odoo tables like `mail_activity` are not in the `postgres` database; "
                                 "query the Odoo DB instead"),
                                ("Docker runs on the host. Docker commands need the host's socket.",
                                 "In this project docker runs on the host. Docker commands need the host's socket.")):
                self.assertEqual(wording.scoped(body, str(plain)), shown)
            # the person's words quoted go as they are
            quote = 'After `git push` failed, the user said: "use --set-upstream".'
            self.assertEqual(wording.scoped(quote, str(plain)), quote)
            self.assertEqual(wording.scoped('The user said: "we commit .entire/settings.json".', str(plain)),
                             'The user said: "we commit .entire/settings.json".')

    def test_a_first_word_only_a_path_writes_again_is_no_name(self):
        # red44: a Swift package's `Tests/` folder named in backticks kept the sentence's capital
        # ("In this project Tests fail ..."): a path or code is no sentence writing the word as a name
        with TempFolder() as tmp:
            plain = Path(tmp) / "plain"
            plain.mkdir()
            self.first_word_cases(plain)

    def first_word_cases(self, plain):
        for body, shown in (("Tests fail on a clean checkout until `Tests/Fixtures/seed.sql` is loaded.",
                             "In this project tests fail on a clean checkout until `Tests/Fixtures/seed.sql` is loaded."),
                            ("Sources are generated; edit `Sources` templates, not the output.",
                             "In this project sources are generated; edit `Sources` templates, not the output."),
                            ("Odoo tables are not in the `postgres` database; query the Odoo DB instead",
                             "In this project Odoo tables are not in the `postgres` database; query the Odoo DB instead")):
            self.assertEqual(wording.scoped(body, str(plain)), shown)

    def test_a_known_issue_leaves_out_the_numbers_and_ids_it_was_run_with(self):
        diff = {"tool": "Bash", "command": "gh pr diff 104 --stat", "error": ["Exit code 1", "unknown flag: --stat"],
                "fixed_by": "gh pr diff 104 --name-only"}
        self.assertEqual(wording.error_lesson([diff]),
                         "`gh pr diff N --stat` fails with `unknown flag: --stat`; run it as `gh pr diff N --name-only`.")
        show = {"tool": "Bash", "command": "git show 3f2a9c1e --stat", "error": ["fatal: bad object 3f2a9c1e"]}
        self.assertEqual(wording.error_lesson([show, show]),
                         "`git show SHA --stat` fails with `fatal: bad object 3f2a9c1e`.")
        tail = {"tool": "Bash", "command": "tail -n 5 build.log", "error": ["tail: build.log: No such file"]}
        self.assertIn("`tail -n 5 build.log`", wording.error_lesson([tail, tail]))    # one digit: not an id


    def test_a_long_failure_keeps_its_fix_within_the_line(self):
        # public3: "In this project `git-ai search --commit SHA --json --verbose` fails with `…--json,
        # --verbose, --porcelain, --count`.": at 150 characters the line was cut at its "; ", the fix with it
        search = {"tool": "Bash", "command": "git-ai search --commit 3e2941c --json --verbose 2>&1",
                  "error": ["Exit code 1", "Error: Only one output format can be specified. Use one of: --json, "
                                           "--verbose, --porcelain, --count"],
                  "fixed_by": "git-ai search --commit 3e2941c --json 2>&1"}
        lesson = wording.scoped(wording.error_lesson([search]), "/work/shop", in_repository=True)
        self.assertLessEqual(len(lesson), wording.LESSON_CHARS)
        self.assertTrue(lesson.endswith("; run it as `git-ai search --commit SHA --json`."), lesson)
        self.assertIn("fails with `Error: Only one output format", lesson)


class OneRule(unittest.TestCase):
    """wording.one_rule (render shows one of two such lessons) and other_rules (sleep joins no two
    such): one rule in other words, and near misses that are two rules."""

    SAME = [("Run the tests with `pytest -q`.", "Use `pytest -q`, not `python -m unittest`, for tests here."),
            ("In this repository run the tests with `pytest -q`, not `python -m unittest`.",
             "Always run the tests with `pytest -q`."),
            ("Use `pnpm`, not `npm`.", "Always use `pnpm`."),
            ("In this project use `pnpm` instead of `npm`.", "Use `pnpm`, not `npm`."),
            ("Do not add dependencies without asking me first.",
             "In this project do not add dependencies without asking me first.")]
    TWO = [("Always run `make test`.", "Always run `make test-integration`."),
           ("Run the tests with `go test ./...`.", "Run the tests with `go test -race ./...`."),
           ("Use `go test -race ./...`, not `go test ./...`.", "Use `go test ./...`."),
           ("Use `make test`, not `go test ./...`.", "Use `make test-integration`, not `go test ./...`."),
           ("Run `pytest -q` before committing.", "Run the tests with `pytest -q`."),
           ("Use `pnpm`, not `npm`.", "Use `npm`, not `pnpm`."),
           ("Use `pnpm`, not `npm`.", "Use `pnpm`, not `yarn`."),
           ("Run `make test`, not `go test`.", "Run `make test` and `make lint`."),
           ("Don't run `make docs`.", "Run `make docs`."),
           ("Never force push to main.", "Never push to main directly, open a pull request."),
           ("In this project don't use unittest, run the tests with `pytest -q`.",
            "Run the tests with `pytest -q`, not `python -m unittest`.")]

    def test_one_rule_in_other_words(self):
        for a, b in self.SAME:
            self.assertTrue(wording.one_rule(a, b) and wording.one_rule(b, a), (a, b))
            self.assertFalse(wording.other_rules(a, b), (a, b))

    def test_rules_that_share_a_word_or_a_command_are_two(self):
        for a, b in self.TWO:
            self.assertFalse(wording.one_rule(a, b) or wording.one_rule(b, a), (a, b))
        for a, b in self.TWO[:4] + [self.TWO[5]]:
            self.assertTrue(wording.other_rules(a, b), (a, b))


class TempFolder:
    def __enter__(self):
        import tempfile
        self._tmp = tempfile.TemporaryDirectory(prefix="om-test-")
        return self._tmp.name

    def __exit__(self, *exc):
        self._tmp.cleanup()
