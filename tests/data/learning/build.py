"""Write the synthetic transcripts of the learning evaluation and their labels.

Run from the checkout: `python3 -m tests.data.learning.build`. The transcripts are in the
shapes Claude Code writes (tests/fixtures.py, from the real corpus and the 2.1.328 binary);
ids are deterministic so the labels can name turns. Each person's message is labelled here,
as it is written, by the definition in ARCHITECTURE.md ("What a correction is"), before
any look at what the code decides:

  verdict   correction | no | doubtful
  lasting   holds an instruction or fact worth keeping beyond this moment
  lesson    the lesson a careful reviewer would keep (null when none)

Projects with repeated failures carry `expect`: the known issue a first night should learn
(`lesson` true, the words it must hold) or that it must not learn from (`lesson` false).
"""
import json
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tests import fixtures

HERE = Path(__file__).resolve().parent
OUT = HERE / "synthetic"
C, N, D = "correction", "no", "doubtful"
T0 = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)   # months before the first night (2026-11-30)

_counter = [0]


def _uuid4():
    _counter[0] += 1
    return uuid.UUID(int=(0x5e1f << 112) | _counter[0], version=4)


fixtures.uuidlib.uuid4 = _uuid4     # deterministic ids while building (this script only)

SESSIONS = []   # (project folder name, Transcript)
LABELS = []     # one per person's message
EXPECT = []     # known issues expected (or not) per project


def session(cwd, day, name):
    sid = str(uuid.UUID(int=(0xab5e << 112) | (len(SESSIONS) + 1), version=4))
    t = fixtures.Transcript(style="2.1.328" if len(SESSIONS) % 2 else "1.0", session_id=sid, cwd=cwd,
                            start=T0 + timedelta(days=day, minutes=7 * len(SESSIONS)))
    SESSIONS.append((name, t))
    return t


def said(t, text, verdict, lasting=False, lesson=None, why="", category=""):
    rec = t.user(text)
    LABELS.append({"session": t.session_id, "turn": rec["uuid"], "text": " ".join(text.split())[:100],
                   "verdict": verdict, "lasting": lasting, "lesson": lesson, "why": why, "category": category})
    return rec


def ask(t, text):
    """A request that opens a session: labelled too, as every message the person typed is."""
    return said(t, text, N, why="first message: a request", category="negative")


def bash(command, output="", error=False, description=""):
    inp = {"command": command}
    if description:
        inp["description"] = description
    return ("Bash", inp, output, error)


def edit(path, old="a", new="b", output="The file has been updated.", error=False):
    return ("Edit", {"file_path": path, "old_string": old, "new_string": new}, output, error)


# =======================================================================================
# 1. Failing output pasted right after the agent said it was done

GHA_PYTEST = """build (3.12)
failed 3 minutes ago in 1m 12s
Run pytest -q
........................F....
=================================== FAILURES ===================================
______________________ test_invoice_total_rounds_half_up _______________________

    def test_invoice_total_rounds_half_up():
        inv = Invoice(lines=[Line(price=Decimal("0.125"), qty=1)])
>       assert inv.total == Decimal("0.13")
E       AssertionError: assert Decimal('0.12') == Decimal('0.13')

tests/test_invoice.py:41: AssertionError
=========================== short test summary info ============================
FAILED tests/test_invoice.py::test_invoice_total_rounds_half_up - AssertionError: assert Decimal('0.12') == Decimal('0.13')
1 failed, 28 passed in 0.93s
Error: Process completed with exit code 1."""

t = session("/home/dev/billing", 0, "billing")
ask(t, "make invoice totals round half up instead of banker's rounding")
t.assistant("I'll switch the rounding mode.", tools=[edit("/home/dev/billing/billing/invoice.py",
            "quantize(CENT)", "quantize(CENT, rounding=ROUND_HALF_UP)")])
t.assistant(tools=[bash("pytest -q", "28 passed in 0.88s"), bash("git add -A && git commit -m 'Round half up' && git push",
            "To github.com:acme/billing.git\n   3f2a1c9..8d0e4b2  main -> main")])
t.assistant("Done: totals now round half up. All tests pass and I pushed to main.")
said(t, GHA_PYTEST, C, why="failing CI log pasted right after 'all tests pass and I pushed'; no words", category="pasted-failure")
t.assistant("The CI runs a test I had not run locally...", tools=[edit("/home/dev/billing/billing/invoice.py")])

TSC_OUT = """> webapp@2.3.0 build
> tsc -p tsconfig.json && vite build

src/components/Cart.tsx:58:23 - error TS2339: Property 'discount' does not exist on type 'CartLine'.

58     const d = line.discount ?? 0;
                         ~~~~~~~~

Found 1 error in src/components/Cart.tsx:58
"""
t = session("/home/dev/webapp", 3, "webapp")
ask(t, "add a per-line discount to the cart view")
t.assistant(tools=[edit("/home/dev/webapp/src/components/Cart.tsx")])
t.assistant("Fixed: the cart now shows each line's discount, and the build is green.")
said(t, "still broken:\n\n" + TSC_OUT, C, why="'still broken' + the failing build pasted after 'the build is green'",
     category="pasted-failure")
t.assistant("The type lacks the field; adding it.", tools=[edit("/home/dev/webapp/src/types.ts")])
t.assistant("Added `discount?: number` to `CartLine`.")
said(t, "thanks, that works", N, why="thanks", category="negative")

PUSH_HOOK = """Running pre-push hook: mypy
billing/export.py:12: error: Incompatible return value type (got "str | None", expected "str")  [return-value]
Found 1 error in 1 file (checked 48 source files)
error: failed to push some refs to 'github.com:acme/billing.git'"""
t = session("/home/dev/billing", 9, "billing")
ask(t, "export invoices as CSV from the admin")
t.assistant(tools=[edit("/home/dev/billing/billing/export.py"),
                   bash("git add -A && git commit -m 'CSV export' && git push", PUSH_HOOK, True)])
t.assistant("The push was rejected by the pre-push type check; fixing the return type.",
            tools=[edit("/home/dev/billing/billing/export.py"), bash("git push", "   8d0e4b2..91aa0c3  main -> main")])
t.assistant("Pushed. CSV export is live.")
said(t, "ok. in future run mypy before you push, the hook is slow and I don't want half-pushed branches", C, True,
     "Run `mypy` before you push.", "after the agent's push failed on the pre-push type check: a standing rule",
     category="imperative")

# =======================================================================================
# 2. Review findings pasted back

t = session("/home/dev/billing", 14, "billing")
ask(t, "add refunds to the billing service")
t.assistant(tools=[edit("/home/dev/billing/billing/refunds.py"), bash("pytest -q", "31 passed in 1.02s")])
t.assistant("Refunds are implemented and tested. PR #88 is open.")
said(t, """PR feedback:
1. billing/refunds.py:44 - you catch bare `Exception` around the gateway call. We always catch the gateway's specific errors in this codebase, never bare Exception.
2. billing/refunds.py:71 - refund amount is not checked against the captured amount.
3. tests/test_refunds.py:12 - typo in fixture name (`captrued`).""", C, True,
     "Catch the payment gateway's specific errors, never bare `Exception`.",
     "review findings pasted back; item 1 states a rule of the codebase", category="review")
t.assistant("Addressing the three findings.", tools=[edit("/home/dev/billing/billing/refunds.py")])

t = session("/home/dev/api", 2, "api")
ask(t, "add a /users listing endpoint with filters")
t.assistant(tools=[edit("/home/dev/api/api/users.py"), bash("pytest -q tests/test_users.py", "9 passed in 0.4s")])
t.assistant("The endpoint is done and tested; ready for review.")
said(t, """reviewer says:
- api/users.py:41 N+1 query in list_users: each user loads its team separately
- api/users.py:77 missing permission check on the admin filter""", C,
     why="review findings pasted back: this change's lines", category="review")
t.assistant("Fixing both.", tools=[edit("/home/dev/api/api/users.py")])

t = session("/home/dev/webapp", 20, "webapp")
ask(t, "cache the product list in memory for 5 minutes")
t.assistant(tools=[edit("/home/dev/webapp/src/cache.ts")])
t.assistant("Added an in-memory cache with a 5 minute TTL.")
said(t, """1. src/cache.ts:23 the TTL is passed in seconds but setTimeout takes ms
2. src/cache.ts:40 entries are never evicted when the list changes""", C,
     why="numbered review findings (file:line and what is wrong) after the agent said done", category="review")
t.assistant("Right, fixing the units and eviction.", tools=[edit("/home/dev/webapp/src/cache.ts")])

# =======================================================================================
# 3. Pushback phrased as a question

t = session("/home/dev/api", 30, "api")
ask(t, "update the CI matrix for the new release")
t.assistant(tools=[edit("/home/dev/api/.github/workflows/ci.yml", "['3.10', '3.11']", "['3.8', '3.10', '3.11', '3.12']")])
t.assistant("The CI matrix now covers Python 3.8 to 3.12.")
said(t, "didn't we already drop Python 3.8? why is it back in the matrix?", C, True,
     "Python 3.8 support is dropped: keep it out of the CI matrix.",
     "pushback as a question; holds a fact about the project", category="question")
t.assistant("You're right, removing 3.8.", tools=[edit("/home/dev/api/.github/workflows/ci.yml")])

t = session("/home/dev/webapp", 33, "webapp")
ask(t, "fix the flicker on the checkout button")
t.assistant(tools=[edit("/home/dev/webapp/src/components/Checkout.tsx")])
t.assistant("Fixed the flicker: the button no longer re-mounts on each render.")
said(t, "why is the console.log still there?", C, why="pushback as a question: leftover debug output; about this change",
     category="question")
t.assistant("Removing it.", tools=[edit("/home/dev/webapp/src/components/Checkout.tsx")])

t = session("/home/dev/webapp", 36, "webapp")
ask(t, "set up a Dockerfile for the frontend")
t.assistant(tools=[("Write", {"file_path": "/home/dev/webapp/Dockerfile", "content": "FROM node:16-alpine\n"},
                    "File created successfully at: /home/dev/webapp/Dockerfile", False)])
t.assistant("Added a Dockerfile based on node:16-alpine.")
said(t, "isn't node 16 years old? we're on node 22 everywhere", C, True,
     "We're on Node 22 everywhere (not Node 16).", "pushback as a question with a standing fact", category="question")
t.assistant("Switching to node:22-alpine.", tools=[edit("/home/dev/webapp/Dockerfile")])

t = session("/home/dev/api", 40, "api")
ask(t, "add a last_login column to users")
t.assistant(tools=[edit("/home/dev/api/api/models.py"), bash("pytest -q", "40 passed in 2.1s")])
t.assistant("Added the column and the tests pass.")
said(t, "did you write a migration for it?", D, why="may be a plain question or say a step is missing",
     category="question")
t.assistant("No, adding one now.", tools=[bash("alembic revision --autogenerate -m 'last_login'", "Generating ...done")])

# =======================================================================================
# 4. A plain statement of a fact the agent got wrong

t = session("/home/dev/mobile", 5, "mobile")
ask(t, "the order list is empty in the app, can you check the API client")
t.assistant(tools=[("Read", {"file_path": "/home/dev/mobile/src/api/orders.ts"}, "export const ORDERS = '/api/orders'", False)])
t.assistant("The client calls `/api/orders`, which looks right; the problem must be on the server.")
said(t, "that endpoint was removed in v2. the app has to call /api/v2/orders now", C, True,
     "`/api/orders` was removed in v2: call `/api/v2/orders`.", "a plain statement of a fact the agent got wrong",
     category="fact")
t.assistant("Updating the client.", tools=[edit("/home/dev/mobile/src/api/orders.ts")])

t = session("/home/dev/api", 44, "api")
ask(t, "bump the version to 2.4.0 and open the release PR")
t.assistant(tools=[bash("gh pr list --head release-2.4.0", "#112  Release 2.4.0  release-2.4.0  OPEN")])
t.assistant("PR #112 for 2.4.0 already exists; I'll add the version bump to it.")
said(t, "we merged that PR already, open a new one", C, why="plain statement of a fact of the moment", category="fact")
t.assistant("Opening a new PR.", tools=[bash("gh pr create --fill", "https://github.com/acme/api/pull/118")])

t = session("/home/dev/api", 47, "api")
ask(t, "why are the integration tests slow on staging?")
t.assistant("Staging runs Postgres 14, which lacks the incremental sort the query plans rely on; upgrading would help.")
said(t, "the staging db is postgres 16, not 14", C, True, "The staging database is Postgres 16, not 14.",
     "a plain statement of a fact the agent got wrong; lasting", category="fact")
t.assistant("Then the slowness is elsewhere; looking at the plans.")

# =======================================================================================
# 5. An instruction late in a long message, after a paste

NPM_BUILD = """❯ docker build -t webapp .
[+] Building 94.2s (8/11)
 => [internal] load build definition from Dockerfile                                          0.0s
 => [internal] load .dockerignore                                                              0.0s
 => [1/6] FROM docker.io/library/node:22-alpine                                                0.0s
 => [2/6] WORKDIR /app                                                                         0.0s
 => [3/6] COPY package*.json ./                                                                0.1s
 => ERROR [4/6] RUN npm install                                                               93.8s
------
 > [4/6] RUN npm install:
93.71 npm error code 1
93.71 npm error path /app/node_modules/husky
93.71 npm error command failed
93.71 npm error command sh -c husky install
93.71 npm error fatal: not a git repository (or any of the parent directories): .git
------
ERROR: failed to solve: process "/bin/sh -c npm install" did not complete successfully: exit code: 1
"""
t = session("/home/dev/webapp", 38, "webapp")
ask(t, "the docker image should build on CI")
t.assistant(tools=[edit("/home/dev/webapp/Dockerfile")])
t.assistant("The Dockerfile is ready; the image builds now.")
said(t, NPM_BUILD + "\nthe prepare script runs husky. in the container use npm ci --ignore-scripts, never plain npm install",
     C, True, "In the container use `npm ci --ignore-scripts`, never plain `npm install`.",
     "failing build pasted after 'the image builds now', then an instruction at the end", category="late-instruction")
t.assistant("Switching to npm ci --ignore-scripts.", tools=[edit("/home/dev/webapp/Dockerfile")])

DJANGO_ERR = """$ pytest tests/test_orders.py
ImportError while loading conftest '/home/dev/shop/tests/conftest.py'.
tests/conftest.py:3: in <module>
    from shop.models import Order
shop/models.py:1: in <module>
    from django.db import models
E   django.core.exceptions.ImproperlyConfigured: Requested setting INSTALLED_APPS, but settings are not configured. You must either define the environment variable DJANGO_SETTINGS_MODULE or call settings.configure() before accessing settings.
"""
t = session("/home/dev/shop", 12, "shop")
ask(t, "add a status filter to the orders admin")
t.assistant(tools=[edit("/home/dev/shop/shop/admin.py")])
t.assistant("Added the filter. You can run `pytest tests/test_orders.py` to check it.")
said(t, DJANGO_ERR + "\nthat's what I get. always run the tests with `make test` here, it sets DJANGO_SETTINGS_MODULE", C, True,
     "Run the tests with `make test` (it sets `DJANGO_SETTINGS_MODULE`).",
     "pasted failure, then a lasting instruction at the end", category="late-instruction")
t.assistant(tools=[bash("make test", "58 passed in 3.3s")])

TRACE = """Traceback (most recent call last):
  File "/home/dev/shop/manage.py", line 22, in <module>
    main()
  File "/home/dev/shop/shop/management/commands/import_csv.py", line 31, in handle
    price = Decimal(row["price"])
decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]
"""
t = session("/home/dev/shop", 15, "shop")
ask(t, "write a management command that imports products from a CSV")
t.assistant(tools=[("Write", {"file_path": "/home/dev/shop/shop/management/commands/import_csv.py", "content": "..."},
                    "File created successfully", False)])
t.assistant("The import command is done: `python manage.py import_csv products.csv`.")
said(t, "running it on the real file:\n" + TRACE + "\ncan you look into it", C,
     why="failure pasted after the agent said it was done; no lasting instruction", category="late-instruction")
t.assistant("Some prices have a currency sign; stripping it.", tools=[edit("/home/dev/shop/shop/management/commands/import_csv.py")])

# =======================================================================================
# 6. A standing instruction in a session's first message

t = session("/home/dev/cli", 7, "cli")
said(t, "From now on, always run `ruff check .` before you commit. Now: add a --verbose flag to the sync command.",
     C, True, "Always run `ruff check .` before you commit.",
     "a standing instruction in a first message: no correction of the session, a lesson candidate", category="standing")
t.assistant(tools=[edit("/home/dev/cli/cli/sync.py"), bash("ruff check .", "All checks passed!")])
t.assistant("Added --verbose; ruff is clean.")

t = session("/home/dev/cli", 16, "cli")
said(t, "Never push to main directly in this repo, open a PR. Task: fix the typo in the README install section.",
     C, True, "Never push to `main` directly: open a PR.", "a standing instruction in a first message", category="standing")
t.assistant(tools=[edit("/home/dev/cli/README.md"), bash("gh pr create --fill", "https://github.com/acme/cli/pull/7")])
t.assistant("Opened PR #7 with the fix.")

t = session("/home/dev/cli", 25, "cli")
said(t, "add pagination to the list command, 50 items a page", N, why="first message: a request", category="negative")
t.assistant(tools=[edit("/home/dev/cli/cli/list.py")])
t.assistant("Pagination added.")
said(t, "great. now add a test for the empty case", N, why="approval and a new request", category="negative")
t.assistant(tools=[edit("/home/dev/cli/tests/test_list.py")])
t.assistant("Added the test.")
said(t, "the list command is slow on large accounts, can you profile it?", N,
     why="a new bug report about the product, not about the agent's work", category="negative")
t.assistant(tools=[bash("python -m cProfile -s cumtime -m cli list --account big", "... 2.31 s total")])
t.assistant("Most time goes to per-item API calls.")
said(t, "what does fetch_page return when the cursor is stale?", N, why="a question for information", category="negative")
t.assistant("It returns an empty page.")
said(t, "can you also update the changelog?", N, why="a new request", category="negative")
t.assistant(tools=[edit("/home/dev/cli/CHANGELOG.md")])
t.assistant("Updated the changelog.")
said(t, "stop the dev server when you're done and don't forget to bump the version", N,
     why="requests for the rest of the task, not a rejection of anything done", category="negative")
t.assistant(tools=[bash("kill %1", ""), edit("/home/dev/cli/pyproject.toml")])
t.assistant("Stopped the server and bumped the version to 0.9.0.")
said(t, "A", N, why="an answer", category="negative")

# =======================================================================================
# 7. "always X, never Y" twins: one lesson, seen in every session it came up in

t = session("/home/dev/shop", 50, "shop")
ask(t, "add the date-fns dependency")
t.assistant(tools=[bash("npm install date-fns", "added 1 package in 2s")])
t.assistant("Installed date-fns.")
said(t, "in this repo we always use pnpm, never npm", C, True, "Always use `pnpm`, never `npm`.",
     "rejects the agent's npm install; a standing rule", category="twin")
t.assistant(tools=[bash("pnpm add date-fns", "Done in 1.2s")])
t = session("/home/dev/shop", 50, "shop")
ask(t, "add zod too")
t.assistant(tools=[bash("npm install zod", "added 1 package in 1s")])
said(t, "pnpm, not npm. we always use pnpm here", C, True, "Always use `pnpm`, never `npm`.",
     "the twin, a minute later in another session", category="twin")
t.assistant(tools=[bash("pnpm add zod", "Done in 0.9s")])
t = session("/home/dev/shop", 71, "shop")
ask(t, "upgrade react-query")
t.assistant(tools=[bash("npm install @tanstack/react-query@latest", "changed 1 package in 3s")])
said(t, "no, use pnpm for packages in this repo, not npm", C, True, "Always use `pnpm`, never `npm`.",
     "the same rule weeks later, in other words", category="twin")

t = session("/home/dev/api", 52, "api")
ask(t, "format the new module")
t.assistant(tools=[bash("black api/reports.py", "reformatted api/reports.py")])
said(t, "we don't use black, always format with ruff format", C, True, "Format with `ruff format`, not `black`.",
     "rejects the agent's formatter", category="twin")
t = session("/home/dev/api", 60, "api")
ask(t, "tidy up the imports in api/users.py")
t.assistant(tools=[bash("black api/users.py && isort api/users.py", "reformatted api/users.py")])
said(t, "stop using black. ruff format, never black", C, True, "Format with `ruff format`, not `black`.",
     "the twin weeks later", category="twin")

# Momentary corrections: they stay episodes
t = session("/home/dev/mobile", 8, "mobile")
ask(t, "make the splash screen show for 2 seconds")
t.assistant(tools=[edit("/home/dev/mobile/src/Splash.tsx"), bash("npm run ios", "Build succeeded")])
t.assistant("The splash screen now stays for 2 seconds.")
said(t, "it still shows for less than a second. try again", C, why="'still' + 'try again': momentary", category="momentary")
t.assistant(tools=[edit("/home/dev/mobile/src/Splash.tsx")])
t.assistant("Now it waits for the timer before hiding.")
said(t, "check again, it still flickers", C, why="momentary", category="momentary")
t.assistant(tools=[edit("/home/dev/mobile/src/Splash.tsx")])
t.assistant("Fixed the flicker.")
said(t, "no problem, take your time with the rest", N, why="courtesy, not a rejection", category="negative")
t.assistant("Thanks! Moving on.")
said(t, "perfect, thank you", N, why="thanks", category="negative")

# =======================================================================================
# A fresh check: written and labelled after the rules were tuned on everything above, and
# measured before any change (ARCHITECTURE.md reports both figures).

t = session("/home/dev/ledger", 95, "ledger")
ask(t, "add an invoices table")
t.assistant(tools=[bash("alembic upgrade head", "Running upgrade -> 3f2a, invoices"), bash("pytest -q", "44 passed")])
t.assistant("Migration applied and all tests pass.")
said(t, 'hmm, the migration didn\'t run on the test db, see:\n\nE   sqlalchemy.exc.ProgrammingError: relation "invoices" '
        'does not exist\ntests/test_invoices.py:12: ProgrammingError', C,
     why="pasted failure after 'all tests pass'; 'didn't run'", category="fresh")
t.assistant(tools=[edit("/home/dev/ledger/tests/conftest.py")])
t.assistant("The test database now runs the migrations first.")
said(t, "nice, that's exactly it. now do the same for the payments tests", N, why="approval, a new request",
     category="fresh")
t.assistant(tools=[edit("/home/dev/ledger/tests/payments/conftest.py")])
t.assistant("Done.")
said(t, "stop here for today, we'll continue tomorrow", N, why="ends the session; nothing was wrong", category="fresh")

t = session("/home/dev/ledger", 97, "ledger")
ask(t, "turn on debug logging so I can see the SQL")
t.assistant(tools=[edit("/home/dev/ledger/ledger/settings.py", "DEBUG = False", "DEBUG = True")])
t.assistant("Set DEBUG = True in settings.py.")
said(t, "we never commit DEBUG=True, it goes in .env.local", C, True, "Never commit `DEBUG=True`: it goes in `.env.local`.",
     "a standing rule set against the agent's edit", category="fresh")
t.assistant(tools=[edit("/home/dev/ledger/ledger/settings.py"), edit("/home/dev/ledger/.env.local")])
t.assistant("Moved it to .env.local.")
said(t, "wait, before you continue: what's the deadline for the API freeze?", N,
     why="a question for information, not a rejection", category="fresh")
t.assistant("I don't know the deadline; it isn't in the repository.")
said(t, "no rush. also add a changelog entry", N, why="a request", category="fresh")

t = session("/home/dev/dashboard", 98, "dashboard")
ask(t, "debounce the search box")
t.assistant(tools=[bash("yarn add lodash", "success Saved 1 new dependency.")])
t.assistant("Added lodash for its debounce.")
said(t, "why are you adding lodash? we have our own utils for that", C, True,
     "Don't add `lodash`: the project has its own utils.", "pushback as a question, with a project fact",
     category="fresh")
t.assistant(tools=[edit("/home/dev/dashboard/src/Search.tsx")])
t.assistant("Used utils/debounce instead.")
said(t, "the export button is misaligned on mobile, can you take a look?", N,
     why="a new bug report about the product", category="fresh")
t.assistant(tools=[edit("/home/dev/dashboard/src/Export.tsx")])
t.assistant("Fixed the alignment.")
said(t, "can you explain why the cache key includes the user id?", N, why="a question", category="fresh")
t.assistant("Because results differ per user.")
said(t, "ok push it", N, why="a request", category="fresh")

t = session("/home/dev/dashboard", 99, "dashboard")
ask(t, "deploy the new charts")
t.assistant(tools=[bash("./deploy.sh prod", "Deployed build 812 to prod")])
t.assistant("Deployed to staging.")
said(t, "that's prod, not staging. be careful", C, why="sets a fact of this moment right", category="fresh")
t.assistant("Sorry, that went to prod.")

t = session("/home/dev/crawler", 100, "crawler")
ask(t, "fetch the sitemap before crawling")
t.assistant(tools=[edit("/home/dev/crawler/crawler/fetch.py", "import httpx", "import requests")])
t.assistant("The crawler now fetches the sitemap with requests.")
said(t, "please use httpx in this codebase, requests is banned", C, True, "Use `httpx`: `requests` is banned.",
     "a standing rule set against the agent's edit", category="fresh")
t.assistant(tools=[edit("/home/dev/crawler/crawler/fetch.py")])
t.assistant("Fixed the flaky test by adding a sleep before the assertion.")
said(t, "adding sleeps is not a fix. find the race", C, True, "Adding sleeps does not fix a flaky test: find the race.",
     "rejects the agent's fix; a rule worth keeping", category="fresh")
t.assistant(tools=[edit("/home/dev/crawler/tests/test_fetch.py")])
t.assistant("The test now waits on the event instead.")
said(t, "isn't that the old API? v3 uses /v3/search", C, True, "The search API is `/v3/search` (v3).",
     "pushback as a question, with a fact", category="fresh")
t.assistant(tools=[edit("/home/dev/crawler/crawler/search.py")])
t.assistant("Done: search is wired up.")
said(t, "you forgot to update the lockfile", C, why="says the work is incomplete; about this change", category="fresh")

t = session("/home/dev/crawler", 101, "crawler")
said(t, "Going forward please always write tests with pytest fixtures, not unittest classes. Today: add a CSV export.",
     C, True, "Always write tests with `pytest` fixtures, not `unittest` classes.",
     "a standing instruction in a first message", category="fresh")
t.assistant(tools=[edit("/home/dev/crawler/crawler/export.py")])
t.assistant("Added the CSV export.")
said(t, """CodeRabbit:
- crawler/export.py:88 potential None dereference of `row.site`""", C,
     why="review findings pasted back", category="fresh")

# =======================================================================================
# Repeated failures (points 3 and 6)

BUILD_FAIL = """Exit code 2
python -m buildtool --target web
Loading configuration from build.toml
Traceback (most recent call last):
  File "/home/dev/site/.venv/lib/python3.12/site-packages/buildtool/__main__.py", line 4, in <module>
    main()
  File "/home/dev/site/.venv/lib/python3.12/site-packages/buildtool/config.py", line 88, in load
    raise ConfigError(f"{key} is not set")
buildtool.config.ConfigError: SITE_URL is not set
make: *** [Makefile:2: build] Error 1"""
for day in (60, 75, 90):
    t = session("/home/dev/site", day, "site")
    ask(t, ["build the site and check the new blog post renders", "rebuild after the nav change",
            "build it once more and deploy the preview"][(day - 60) // 15])
    t.assistant("Building.", tools=[bash("make build", BUILD_FAIL, True)])
    if day < 90:
        t.assistant("The build needs SITE_URL; I'll set it for this run.",
                    tools=[bash("SITE_URL=http://localhost:8000 make build", "Built 142 pages in 3.1s")])
        t.assistant("Built with SITE_URL set for this run.")
    else:
        t.assistant("The build needs SITE_URL. Creating .env from the example.",
                    tools=[bash("cp .env.example .env", ""), bash("make build", "Built 143 pages in 3.0s")])
        t.assistant("Built.")
EXPECT.append({"project": "/home/dev/site", "lesson": True, "command": "make build",
               "must_contain": ["make build", "SITE_URL is not set"], "must_not_contain": ["Don't run", "Error 1"],
               "why": "the same build failure, a Python exception as its cause, in three sessions before any edit"})

SEED_FAIL = """Exit code 1
> shop-api@1.0.0 seed
> node scripts/seed.js

error: relation "users" does not exist
    at Parser.parseErrorMessage (/home/dev/shop-api/node_modules/pg-protocol/dist/parser.js:283:98)
    at async seed (/home/dev/shop-api/scripts/seed.js:12:3) {
  code: '42P01'
}"""
for n, day in enumerate((62, 80)):
    t = session("/home/dev/shop-api", day, "shop-api")
    ask(t, ["seed the dev database with sample data", "reset and reseed the dev db"][n])
    t.assistant(tools=[bash("npm run seed", SEED_FAIL, True)])
    t.assistant("The tables are missing; running the migrations first.",
                tools=[bash("npm run db:migrate", "Applied 12 migrations"), bash("npm run seed", "Seeded 50 users")])
    t.assistant("Seeded.")
EXPECT.append({"project": "/home/dev/shop-api", "lesson": True, "command": "npm run seed",
               "must_contain": ["npm run seed", 'relation "users" does not exist', "npm run db:migrate"],
               "must_not_contain": ["Don't run"], "why": "fails the same way in two sessions, fixed by a setup command"})

PYTEST_FAIL = """Exit code 1
============================= test session starts ==============================
collected 34 items

tests/test_parser.py ....F.....                                          [ 30%]

=================================== FAILURES ===================================
____________________________ test_parse_empty_line ____________________________
    def test_parse_empty_line():
>       assert parse("") == []
E       AssertionError: assert None == []
tests/test_parser.py:18: AssertionError
=========================== short test summary info ============================
FAILED tests/test_parser.py::test_parse_empty_line - AssertionError: assert None == []
1 failed, 33 passed in 0.41s"""
TSC_FAIL = """Exit code 2
src/parser.ts(41,7): error TS2322: Type 'string | undefined' is not assignable to type 'string'."""
for n, day in enumerate((64, 78)):
    t = session("/home/dev/parser", day, "parser")
    ask(t, ["fix the parser tests", "make the parser handle blank lines"][n])
    t.assistant(tools=[bash("pytest -q", PYTEST_FAIL, True)])
    t.assistant("Fixing the empty-line case.", tools=[edit("/home/dev/parser/parser/core.py"), bash("pytest -q", "34 passed")])
    t.assistant(tools=[edit("/home/dev/parser/src/parser.ts"), bash("npx tsc --noEmit", TSC_FAIL, True)])
    t.assistant(tools=[edit("/home/dev/parser/src/parser.ts"), bash("npx tsc --noEmit", "")])
    t.assistant(tools=[edit("/home/dev/parser/src/util.ts", output="<tool_use_error>String to replace not found in file.\n"
                            "String: const x = 1</tool_use_error>", error=True),
                       ("Write", {"file_path": "/home/dev/parser/src/new.ts", "content": "x"},
                        "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>", True)])
    t.assistant("Done.")
EXPECT.append({"project": "/home/dev/parser", "lesson": False,
               "why": "failing tests and type errors fixed by editing code, and Claude Code's file-tool checks: the work itself"})

COMPOSE_FAIL = """Exit code 1
 Network shop_default  Creating
 Network shop_default  Created
 Container shop-db-1  Creating
 Container shop-db-1  Created
 Container shop-db-1  Starting
Error response from daemon: driver failed programming external connectivity on endpoint shop-db-1: Bind for 0.0.0.0:5432 failed: port is already allocated"""
for n, day in enumerate((66, 84)):
    t = session("/home/dev/shop", day, "shop")
    ask(t, ["start the stack and run the smoke tests", "bring up the stack, I want to click through checkout"][n])
    t.assistant(tools=[bash("docker compose up -d", COMPOSE_FAIL, True)])
    t.assistant("Port 5432 is taken by a local Postgres; stopping it.",
                tools=[bash("brew services stop postgresql@16", "Stopping `postgresql@16`... (might take a while)"),
                       bash("docker compose up -d", " Container shop-db-1  Started")])
    t.assistant("The stack is up.")
EXPECT.append({"project": "/home/dev/shop", "lesson": True, "command": "docker compose up -d",
               "must_contain": ["docker compose up", "port is already allocated"], "must_not_contain": ["Don't run"],
               "why": "recurs across sessions before any edit, fixed by a setup command"})


def write():
    for old in OUT.glob("*/*.jsonl"):
        old.unlink()
    names = {}
    for name, t in SESSIONS:
        names[t.session_id] = f"{name}/{t.session_id}.jsonl"
        t.write(OUT / name)
    for label in LABELS:
        label["file"] = names[label.pop("session")]
    doc = {"about": " ".join(__doc__.split("\n\n")[1].split()),
           "turns": LABELS, "known_issues": EXPECT}
    (HERE / "synthetic_labels.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(SESSIONS)} transcripts, {len(LABELS)} labelled messages, {len(EXPECT)} projects with expectations")




# =======================================================================================
# The cause of a failure (point 3): real-shaped outputs of common tools, with the line that
# says why (`cause`, the first line kept), other lines that must be kept (`keep`) and the
# wrappers, banners and meters that must not be (`drop`). Lines are compared as kept: runs
# of spaces folded, and a leading mark that only decorates dropped (pytest's `E   `, `×`,
# `╰─▶`, BuildKit's `93.71 ` timing).

FAILURES = []


def failure(tool, command, output, cause, keep=(), drop=()):
    FAILURES.append({"tool": tool, "command": command, "output": output, "cause": cause,
                     "keep": list(keep), "drop": list(drop)})


failure("pytest", "pytest -q", """Exit code 1
ImportError while loading conftest '/home/dev/shop/tests/conftest.py'.
tests/conftest.py:4: in <module>
    from shop.db import engine
shop/db.py:9: in <module>
    engine = create_engine(os.environ["DATABASE_URL"])
E   KeyError: 'DATABASE_URL'""", "KeyError: 'DATABASE_URL'", drop=["Exit code 1"])
failure("pytest", "pytest tests/test_api.py", """Exit code 4
ERROR: file or directory not found: tests/test_api.py

no tests ran in 0.01s""", "ERROR: file or directory not found: tests/test_api.py")
failure("pytest", "pytest -q", """Exit code 1
==================================== ERRORS ====================================
_______________________ ERROR collecting tests/test_db.py _______________________
tests/test_db.py:3: in <module>
    import psycopg2
E   ModuleNotFoundError: No module named 'psycopg2'
=========================== short test summary info ============================
ERROR tests/test_db.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.12s""", "ModuleNotFoundError: No module named 'psycopg2'",
        drop=["!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!"])
failure("pytest", "pytest -q tests/test_models.py", """Exit code 1
.....E
==================================== ERRORS ====================================
__________________ ERROR at setup of test_order_total __________________
    conn = psycopg.connect(dsn)
E   psycopg.OperationalError: connection failed: connection to server at "127.0.0.1", port 5432 failed: Connection refused
tests/conftest.py:22: OperationalError
1 error, 5 passed in 0.31s""", 'psycopg.OperationalError: connection failed: connection to server at "127.0.0.1", port 5432 failed: Connection refused')
failure("unittest", "python -m unittest", """Exit code 1
E
======================================================================
ERROR: tests.test_cli (unittest.loader._FailedTest.tests.test_cli)
----------------------------------------------------------------------
ImportError: Failed to import test module: tests.test_cli
Traceback (most recent call last):
  File "/usr/lib/python3.12/unittest/loader.py", line 396, in _find_test_path
    module = self._get_module_from_name(name)
  File "/home/dev/cli/tests/test_cli.py", line 3, in <module>
    from cli.main import run
ModuleNotFoundError: No module named 'cli.main'

----------------------------------------------------------------------
Ran 1 test in 0.000s

FAILED (errors=1)""", "ModuleNotFoundError: No module named 'cli.main'", drop=["FAILED (errors=1)"])
failure("django", "python manage.py migrate", """Exit code 1
Traceback (most recent call last):
  File "/home/dev/shop/manage.py", line 22, in <module>
    main()
  File "/home/dev/shop/.venv/lib/python3.12/site-packages/django/db/backends/base/base.py", line 275, in ensure_connection
    self.connect()
django.db.utils.OperationalError: connection to server at "localhost" (127.0.0.1), port 5432 failed: FATAL:  database "shop" does not exist""",
        'django.db.utils.OperationalError: connection to server at "localhost" (127.0.0.1), port 5432 failed: FATAL:  database "shop" does not exist')
failure("django", "python manage.py runserver", """Exit code 1
Watching for file changes with StatReloader
Exception in thread django-main-thread:
Traceback (most recent call last):
  File "/home/dev/shop/.venv/lib/python3.12/site-packages/django/apps/registry.py", line 91, in populate
    app_config = AppConfig.create(entry)
django.core.exceptions.ImproperlyConfigured: 'shop.payments' must supply a name""",
        "django.core.exceptions.ImproperlyConfigured: 'shop.payments' must supply a name")
failure("django", "python manage.py test", """Exit code 1
Creating test database for alias 'default'...
Got an error creating the test database: permission denied to create database""",
        "Got an error creating the test database: permission denied to create database")
failure("npm", "npm run seed", """Exit code 1
> shop-api@1.0.0 seed
> node scripts/seed.js

error: relation "users" does not exist
    at Parser.parseErrorMessage (/home/dev/shop-api/node_modules/pg-protocol/dist/parser.js:283:98)
npm ERR! code 1
npm ERR! path /home/dev/shop-api
npm ERR! command failed
npm ERR! command sh -c node scripts/seed.js""", 'error: relation "users" does not exist',
        drop=["npm ERR! code 1", "npm ERR! command failed"])
failure("npm", "npm install", """Exit code 1
npm ERR! code ERESOLVE
npm ERR! ERESOLVE unable to resolve dependency tree
npm ERR!
npm ERR! While resolving: webapp@2.3.0
npm ERR! Found: react@18.3.1
npm ERR! Could not resolve dependency:
npm ERR! peer react@"^17.0.0" from react-beautiful-dnd@13.1.1""", "npm ERR! ERESOLVE unable to resolve dependency tree",
        drop=["npm ERR! code ERESOLVE"])
failure("npm", "npm test", """Exit code 1
> webapp@2.3.0 test
> vitest run

 RUN  v2.1.4 /home/dev/webapp

Error: Cannot find module '@vitejs/plugin-react'
Require stack:
- /home/dev/webapp/vite.config.ts""", "Error: Cannot find module '@vitejs/plugin-react'")
failure("yarn", "yarn build", """Exit code 1
yarn run v1.22.22
$ next build
Error: > Couldn't find a `pages` directory. Please create one under the project root
error Command failed with exit code 1.
info Visit https://yarnpkg.com/en/docs/cli/run for documentation about this command.""",
        "Error: > Couldn't find a `pages` directory. Please create one under the project root",
        drop=["error Command failed with exit code 1."])
failure("pnpm", "pnpm install", """Exit code 1
 ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "frozen-lockfile" because pnpm-lock.yaml is not up to date with package.json

Note that in CI environments this setting is true by default. If you still need to run install in such cases, use "pnpm install --no-frozen-lockfile\"""",
        'ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "frozen-lockfile" because pnpm-lock.yaml is not up to date with package.json')
failure("pnpm", "pnpm run dev", """Exit code 1
> webapp@2.3.0 dev /home/dev/webapp
> vite

error when starting dev server:
Error: listen EADDRINUSE: address already in use :::5173
 ELIFECYCLE  Command failed with exit code 1.""", "Error: listen EADDRINUSE: address already in use :::5173",
        drop=["ELIFECYCLE  Command failed with exit code 1."])
failure("tsc", "npx tsc --noEmit", """Exit code 2
src/api/client.ts(12,5): error TS2304: Cannot find name 'fetchJson'.""",
        "src/api/client.ts(12,5): error TS2304: Cannot find name 'fetchJson'.")
failure("tsc", "npx tsc -p tsconfig.json", """Exit code 1
error TS5058: The specified path does not exist: 'tsconfig.json'.""",
        "error TS5058: The specified path does not exist: 'tsconfig.json'.")
failure("eslint", "npx eslint .", """Exit code 2

Oops! Something went wrong! :(

ESLint: 9.14.0

ESLint couldn't find an eslint.config.(js|mjs|cjs) file.""", "ESLint couldn't find an eslint.config.(js|mjs|cjs) file.",
        drop=["Oops! Something went wrong! :("])
failure("biome", "npx biome check .", """Exit code 1
app/lib/auth.server.ts:35:11 lint/suspicious/noImplicitAnyLet ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × This variable implicitly has the any type.

    34 │ export async function getUser() {
  > 35 │   let user;
       │       ^^^^

Checked 85 files in 137ms. No fixes applied.
Found 1 error.
check ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━

  × Some errors were emitted while running checks.""",
        "This variable implicitly has the any type.",
        drop=["Some errors were emitted while running checks.", "Checked 85 files in 137ms. No fixes applied."])
failure("cargo", "cargo build", """Exit code 101
   Compiling shop v0.1.0 (/home/dev/shop-rs)
error[E0425]: cannot find value `cfg` in this scope
  --> src/main.rs:14:20
   |
14 |     let db = open(&cfg.database_url)?;
   |                    ^^^ not found in this scope

For more information about this error, try `rustc --explain E0425`.
error: could not compile `shop` (bin "shop") due to 1 previous error""",
        "error[E0425]: cannot find value `cfg` in this scope",
        drop=["error: could not compile `shop` (bin \"shop\") due to 1 previous error"])
failure("cargo", "cargo test", """Exit code 101
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.08s
     Running unittests src/lib.rs (target/debug/deps/shop-3f2a1c9)

thread 'main' panicked at src/lib.rs:9:5:
DATABASE_URL must be set: NotPresent
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
error: test failed, to rerun pass `--lib`""", "thread 'main' panicked at src/lib.rs:9:5:",
        keep=["DATABASE_URL must be set: NotPresent"], drop=["error: test failed, to rerun pass `--lib`"])
failure("go", "go build ./...", """Exit code 1
# github.com/acme/api/internal/store
internal/store/users.go:27:9: undefined: sqlx.Connectx""", "internal/store/users.go:27:9: undefined: sqlx.Connectx")
failure("go", "go test ./...", """Exit code 1
go: github.com/acme/api@v0.0.0: missing go.sum entry for module providing package github.com/lib/pq (imported by github.com/acme/api/internal/store); to add:
	go get github.com/acme/api/internal/store
FAIL	github.com/acme/api/internal/store [setup failed]""",
        "go: github.com/acme/api@v0.0.0: missing go.sum entry for module providing package github.com/lib/pq (imported by github.com/acme/api/internal/store); to add:",
        drop=["FAIL	github.com/acme/api/internal/store [setup failed]"])
failure("git", "git push", """Exit code 1
To github.com:acme/api.git
 ! [rejected]        main -> main (fetch first)
error: failed to push some refs to 'github.com:acme/api.git'
hint: Updates were rejected because the remote contains work that you do not
hint: have locally.""", " ! [rejected]        main -> main (fetch first)".strip(),
        drop=["error: failed to push some refs to 'github.com:acme/api.git'"])
failure("git", "git push", """Exit code 1
Running pre-push hook: mypy
billing/export.py:12: error: Incompatible return value type (got "str | None", expected "str")  [return-value]
Found 1 error in 1 file (checked 48 source files)
husky - pre-push script failed (code 1)
error: failed to push some refs to 'github.com:acme/billing.git'""",
        'billing/export.py:12: error: Incompatible return value type (got "str | None", expected "str")  [return-value]',
        drop=["error: failed to push some refs to 'github.com:acme/billing.git'", "husky - pre-push script failed (code 1)"])
failure("git", "git commit -m 'Add export'", """Exit code 1
trim trailing whitespace.................................................Passed
check yaml...............................................................Passed
ruff.....................................................................Failed
- hook id: ruff
- exit code: 1

billing/export.py:3:8: F401 [*] `os` imported but unused
Found 1 error.""", "billing/export.py:3:8: F401 [*] `os` imported but unused",
        drop=["trim trailing whitespace.................................................Passed"])
failure("git", "git checkout main", """Exit code 1
error: Your local changes to the following files would be overwritten by checkout:
	app/lib/ai.server.ts
Please commit your changes or stash them before you switch branches.
Aborting""", "error: Your local changes to the following files would be overwritten by checkout:", drop=["Aborting"])
failure("make", "make build", """Exit code 2
python -m buildtool --target web
Traceback (most recent call last):
  File "/home/dev/site/.venv/lib/python3.12/site-packages/buildtool/config.py", line 88, in load
    raise ConfigError(f"{key} is not set")
buildtool.config.ConfigError: SITE_URL is not set
make: *** [Makefile:2: build] Error 1""", "buildtool.config.ConfigError: SITE_URL is not set",
        drop=["make: *** [Makefile:2: build] Error 1"])
failure("make", "make docs", """Exit code 2
make: *** No rule to make target 'docs'.  Stop.""", "make: *** No rule to make target 'docs'.  Stop.")
failure("make", "make test", """Exit code 2
sqlalchemy.exc.ProgrammingError: (psycopg2.errors.UndefinedTable) relation "orders" does not exist
LINE 1: SELECT orders.id FROM orders
[SQL: SELECT orders.id FROM orders]
make: *** [Makefile:7: test] Error 1""",
        'sqlalchemy.exc.ProgrammingError: (psycopg2.errors.UndefinedTable) relation "orders" does not exist',
        drop=["make: *** [Makefile:7: test] Error 1"])
failure("docker", "docker compose up -d", """Exit code 1
 Network shop_default  Creating
 Network shop_default  Created
 Container shop-db-1  Creating
 Container shop-db-1  Created
 Container shop-db-1  Starting
Error response from daemon: driver failed programming external connectivity on endpoint shop-db-1: Bind for 0.0.0.0:5432 failed: port is already allocated""",
        "Error response from daemon: driver failed programming external connectivity on endpoint shop-db-1: Bind for 0.0.0.0:5432 failed: port is already allocated",
        drop=["Network shop_default  Creating"])
failure("docker", "docker build -t webapp .", """Exit code 1
[+] Building 94.2s (8/11)
 => [internal] load build definition from Dockerfile                                          0.0s
 => [3/6] COPY package*.json ./                                                                0.1s
 => ERROR [4/6] RUN npm install                                                               93.8s
------
 > [4/6] RUN npm install:
93.71 npm error code 1
93.71 npm error command sh -c husky install
93.71 npm error fatal: not a git repository (or any of the parent directories): .git
------
ERROR: failed to solve: process "/bin/sh -c npm install" did not complete successfully: exit code: 1""",
        "npm error fatal: not a git repository (or any of the parent directories): .git",
        drop=["[+] Building 94.2s (8/11)", "npm error code 1",
              'ERROR: failed to solve: process "/bin/sh -c npm install" did not complete successfully: exit code: 1'])
failure("docker", "docker run --rm shop", """Exit code 125
docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?.
See 'docker run --help'.""", "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?.",
        drop=["See 'docker run --help'."])
failure("psql", "psql -d shop -f schema.sql", """Exit code 3
psql:schema.sql:14: ERROR:  relation "customers" does not exist
LINE 3:     customer_id integer REFERENCES customers(id),
                                           ^""", 'psql:schema.sql:14: ERROR:  relation "customers" does not exist')
failure("psql", "psql -h localhost -U app shop", """Exit code 2
psql: error: connection to server at "localhost" (127.0.0.1), port 5432 failed: FATAL:  password authentication failed for user "app\"""",
        'psql: error: connection to server at "localhost" (127.0.0.1), port 5432 failed: FATAL:  password authentication failed for user "app"')
failure("curl", "curl -fsS http://localhost:8000/health", """Exit code 7
curl: (7) Failed to connect to localhost port 8000 after 0 ms: Couldn't connect to server""",
        "curl: (7) Failed to connect to localhost port 8000 after 0 ms: Couldn't connect to server")
failure("curl", "curl -f -o model.bin https://example.test/model.bin", """Exit code 22
  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current
                                 Dload  Upload   Total   Spent    Left  Speed
  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0
curl: (22) The requested URL returned error: 404""", "curl: (22) The requested URL returned error: 404",
        drop=["% Total    % Received % Xferd  Average Speed   Time    Time     Time  Current"])
failure("python", "python scripts/export.py", """Exit code 1
Traceback (most recent call last):
  File "/home/dev/shop/scripts/export.py", line 40, in <module>
    main()
  File "/home/dev/shop/scripts/export.py", line 31, in main
    rows = fetch(conn)
  File "/home/dev/shop/.venv/lib/python3.12/site-packages/psycopg/cursor.py", line 97, in execute
    raise ex.with_traceback(None)
psycopg.errors.UndefinedColumn: column "sku" does not exist
LINE 1: SELECT sku, price FROM products
               ^

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/home/dev/shop/scripts/export.py", line 33, in main
    raise ExportError("export failed") from e
shop.export.ExportError: export failed""", 'psycopg.errors.UndefinedColumn: column "sku" does not exist')
failure("uv", "uv run pytest", """Exit code 1
  × No solution found when resolving dependencies:
  ╰─▶ Because only django<5.0 is available and shop depends on django>=5.1, we can conclude that shop's requirements are unsatisfiable.""",
        "No solution found when resolving dependencies:",
        keep=["Because only django<5.0 is available and shop depends on django>=5.1, we can conclude that shop's requirements are unsatisfiable."])


def write_failures():
    (HERE / "failures.json").write_text(json.dumps(
        {"about": "Real-shaped failing outputs of common tools: `cause` is the line that says why (the first a "
                  "lesson may quote), `keep` other lines that must be kept, `drop` wrappers, banners and meters "
                  "that must not be.", "failures": FAILURES}, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(FAILURES)} failing outputs")


if __name__ == "__main__":
    write()
    write_failures()
