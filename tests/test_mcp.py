"""The MCP server: `handle` on literal JSON, a malformed-input table, tools on a real store,
and the whole protocol over real pipes (`python -m openmemory serve` as a subprocess)."""
import json
import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
import unittest
from unittest import mock

from openmemory import ingest, mcp, recall, store
from tests.fixtures import project_folder, test_session
from tests.helpers import TempHome, figures

MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}}
PROJECT = "/home/dev/shop"


def request(method, params=None, rid=1):
    msg = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def call(name, arguments, rid=1, modern=False):
    params = {"name": name, "arguments": arguments}
    if modern:
        params["_meta"] = MODERN
    return request("tools/call", params, rid)


class ErrorCodes(unittest.TestCase):
    def test_codes_are_the_specs(self):
        # JSON-RPC 2.0 and MCP 2026-07-28 (UnsupportedProtocolVersionError): clients key on these.
        self.assertEqual((mcp.PARSE_ERROR, mcp.INVALID_REQUEST, mcp.METHOD_NOT_FOUND, mcp.INVALID_PARAMS,
                          mcp.INTERNAL_ERROR, mcp.UNSUPPORTED_PROTOCOL_VERSION),
                         (-32700, -32600, -32601, -32602, -32603, -32022))


class Handshake(unittest.TestCase):
    """Both eras: server/discover (2026-07-28) and the initialize fallback."""

    def test_discover_answers_versions_capabilities_identity_and_instructions(self):
        reply = mcp.handle({"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover",
                            "params": {"_meta": MODERN}})
        self.assertEqual(reply["id"], "server-discover-probe-1")
        result = reply["result"]
        self.assertEqual(result["resultType"], "complete")
        self.assertEqual(result["supportedVersions"], ["2026-07-28"])
        self.assertEqual(result["capabilities"], {"tools": {"listChanged": False}})
        self.assertEqual(result["serverInfo"]["name"], "openmemory")
        self.assertEqual(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "openmemory")
        self.assertIn("recall", result["instructions"])
        self.assertIn("remember", result["instructions"])
        self.assertIsInstance(result["ttlMs"], int)
        self.assertIn(result["cacheScope"], ("public", "private"))

    def test_discover_is_answered_without_meta_too(self):
        reply = mcp.handle(request("server/discover"))
        self.assertEqual(reply["result"]["supportedVersions"], ["2026-07-28"])

    def test_initialize_echoes_a_supported_version_and_offers_the_latest_otherwise(self):
        table = [("2025-11-25", "2025-11-25"), ("2025-06-18", "2025-06-18"), ("2025-03-26", "2025-03-26"),
                 ("2024-11-05", "2024-11-05"), ("2024-10-07", "2025-11-25"), ("2026-07-28", "2025-11-25"),
                 ("banana", "2025-11-25")]
        for asked, answered in table:
            with self.subTest(asked=asked):
                reply = mcp.handle(request("initialize", {"protocolVersion": asked, "capabilities": {},
                                                          "clientInfo": {"name": "t", "version": "1"}}, rid=0))
                self.assertEqual(reply["id"], 0)
                self.assertEqual(reply["result"]["protocolVersion"], answered)
                self.assertEqual(reply["result"]["capabilities"], {"tools": {"listChanged": False}})
                self.assertEqual(reply["result"]["serverInfo"]["name"], "openmemory")
                self.assertIn("recall", reply["result"]["instructions"])
                self.assertNotIn("resultType", reply["result"])  # a legacy result stays legacy

    def test_no_reply_to_any_notification(self):
        for method in ("notifications/initialized", "notifications/cancelled", "notifications/roots/list_changed",
                       "no/such/notification", "ping", "tools/list"):
            with self.subTest(method=method):
                self.assertIsNone(mcp.handle({"jsonrpc": "2.0", "method": method, "params": {"requestId": 3}}))

    def test_ping_in_both_eras(self):
        self.assertEqual(mcp.handle(request("ping", rid=7)), {"jsonrpc": "2.0", "id": 7, "result": {}})
        modern = mcp.handle(request("ping", {"_meta": MODERN}, rid=8))["result"]
        self.assertEqual(modern["resultType"], "complete")

    def test_modern_request_with_unknown_version_names_the_supported_ones(self):
        reply = mcp.handle(request("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}))
        self.assertEqual(reply["error"]["code"], -32022)
        self.assertEqual(reply["error"]["data"], {"supported": ["2026-07-28"], "requested": "2099-01-01"})

    def test_instructions_and_tool_descriptions_fit_claude_codes_2kb_cut(self):
        self.assertLess(len(mcp.INSTRUCTIONS.encode("utf-8")), 2048)
        for tool in mcp.TOOLS:
            self.assertLess(len(tool["description"].encode("utf-8")), 2048, tool["name"])


class ToolsList(unittest.TestCase):
    def test_lists_recall_show_and_remember_with_their_contracts(self):
        tools = {t["name"]: t for t in mcp.handle(request("tools/list"))["result"]["tools"]}
        self.assertEqual(sorted(tools), ["recall", "remember", "show"])
        self.assertEqual(tools["show"]["inputSchema"]["required"], ["id"])
        self.assertEqual(sorted(tools["show"]["inputSchema"]["properties"]), ["around", "id"])
        self.assertIs(tools["show"]["annotations"]["readOnlyHint"], True)
        schema = tools["recall"]["inputSchema"]
        self.assertEqual(schema["type"], "object")
        self.assertEqual(schema["required"], ["query"])
        self.assertEqual((schema["properties"]["k"]["type"], schema["properties"]["k"]["minimum"],
                          schema["properties"]["k"]["maximum"], schema["properties"]["k"]["default"]),
                         ("integer", 1, 50, 5))
        self.assertEqual(schema["properties"]["include_archived"]["type"], "boolean")
        self.assertEqual(schema["properties"]["cwd"]["type"], "string")
        self.assertEqual(tools["remember"]["inputSchema"]["required"], ["text"])
        self.assertEqual(sorted(tools["remember"]["inputSchema"]["properties"]), ["cwd", "text", "title"])
        for tool in tools.values():
            self.assertNotIn("outputSchema", tool)  # text for the model, never structuredContent

    def test_modern_list_carries_cache_hints(self):
        result = mcp.handle(request("tools/list", {"_meta": MODERN}))["result"]
        self.assertEqual(result["resultType"], "complete")
        self.assertIn("ttlMs", result)
        self.assertEqual(len(result["tools"]), 3)


# Each malformed input, the error code it gets and the id it is answered with.
MALFORMED = [
    (b"not json", mcp.PARSE_ERROR, None),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', mcp.PARSE_ERROR, None),
    (b"\xff\xfe{}", mcp.PARSE_ERROR, None),
    (b"[" * 100_000, mcp.PARSE_ERROR, None),
    (b"{" * 100_000, mcp.PARSE_ERROR, None),
    (b"[]", mcp.INVALID_REQUEST, None),
    (b"42", mcp.INVALID_REQUEST, None),
    (b'"ping"', mcp.INVALID_REQUEST, None),
    (b"null", mcp.INVALID_REQUEST, None),
    (b'{"jsonrpc": "2.0", "id": 1}', mcp.INVALID_REQUEST, 1),
    (b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', mcp.INVALID_REQUEST, 1),
    (b'{"id": 1, "method": "ping"}', mcp.INVALID_REQUEST, 1),
    (b'{"jsonrpc": "2.0", "id": 1, "method": 42}', mcp.INVALID_REQUEST, 1),
    (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', mcp.INVALID_REQUEST, None),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', mcp.INVALID_REQUEST, None),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', mcp.INVALID_REQUEST, None),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', mcp.INVALID_REQUEST, None),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "nope"}', mcp.METHOD_NOT_FOUND, 1),
    (b'{"jsonrpc": "2.0", "id": "r", "method": "resources/list"}', mcp.METHOD_NOT_FOUND, "r"),
    (b'{"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}', mcp.METHOD_NOT_FOUND, 2),
    (b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": [1, 2]}', mcp.INVALID_PARAMS, 3),
    (b'{"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {}}', mcp.INVALID_PARAMS, 4),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {}}', mcp.INVALID_PARAMS, 5),
    (b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": 7}}', mcp.INVALID_PARAMS, 6),
    (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "forget"}}', mcp.INVALID_PARAMS, 7),
    (b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "recall", "arguments": "q"}}',
     mcp.INVALID_PARAMS, 8),
    (b'{"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": '
     b'{"io.modelcontextprotocol/protocolVersion": "2025-11-25"}}}', mcp.UNSUPPORTED_PROTOCOL_VERSION, 9),
]


class MalformedInput(TempHome):
    def test_each_malformed_line_gets_its_error(self):
        for line, code, rid in MALFORMED:
            with self.subTest(line=line[:70]):
                reply = mcp.handle_line(line, PROJECT)
                self.assertEqual(reply["jsonrpc"], "2.0")
                self.assertEqual(reply["error"]["code"], code, reply)
                self.assertEqual(reply["id"], rid)
                self.assertIsInstance(reply["error"]["message"], str)
                json.dumps(reply)  # always serialisable

    def test_lines_that_need_no_reply(self):
        for line in (b"", b"\n", b"  \r\n", b'{"jsonrpc": "2.0", "id": 5, "result": {}}',
                     b'{"jsonrpc": "2.0", "id": 5, "error": {"code": 1, "message": "x"}}',
                     b'{"jsonrpc": "2.0", "method": "nope"}', b'{"method": 5}'):
            with self.subTest(line=line):
                self.assertIsNone(mcp.handle_line(line, PROJECT))

    def test_a_notification_never_acts(self):
        line = json.dumps({"jsonrpc": "2.0", "method": "tools/call",
                           "params": {"name": "remember", "arguments": {"text": "sneaky"}}}).encode()
        self.assertIsNone(mcp.handle_line(line, PROJECT))
        with store.connect() as db:
            self.assertEqual(db.counts()["episodes"]["note"], 0)

    def test_batch_answers_each_request_and_skips_notifications(self):
        replies = mcp.handle([request("ping", rid=1), {"jsonrpc": "2.0", "method": "notifications/initialized"},
                              request("nope", rid=2), 17])
        self.assertEqual([r.get("id") for r in replies], [1, 2, None])
        self.assertEqual(replies[0]["result"], {})
        self.assertEqual([r["error"]["code"] for r in replies[1:]], [-32601, -32600])
        self.assertIsNone(mcp.handle([{"jsonrpc": "2.0", "method": "notifications/initialized"}]))


class ToolArguments(TempHome):
    """Arguments that do not fit a tool: a result with isError the model can read (SEP-1303)."""

    BAD = [
        ("recall", {}, "query"),
        ("recall", {"query": ""}, "query"),
        ("recall", {"query": "   "}, "query"),
        ("recall", {"query": 5}, "query"),
        ("recall", {"query": "x", "k": 0}, "k must be"),
        ("recall", {"query": "x", "k": 51}, "k must be"),
        ("recall", {"query": "x", "k": "5"}, "k must be"),
        ("recall", {"query": "x", "k": True}, "k must be"),
        ("recall", {"query": "x", "k": 2.5}, "k must be"),
        ("recall", {"query": "x", "include_archived": "yes"}, "include_archived"),
        ("recall", {"query": "x", "cwd": 5}, "cwd"),
        ("recall", {"query": "x", "limit": 3}, "unknown argument 'limit'"),
        ("remember", {}, "text"),
        ("remember", {"text": " \n "}, "text"),
        ("remember", {"text": "x" * (mcp.NOTE_MAX_CHARS + 1)}, "keep it under"),
        ("remember", {"text": "ok", "title": 5}, "title"),
        ("remember", {"text": "ok", "tags": ["a"]}, "unknown argument 'tags'"),
        ("show", {}, "id"),
        ("show", {"id": 12}, "id must be"),
        ("show", {"id": "x"}, "is not an id"),
        ("show", {"id": "p999"}, "no memory p999"),
        ("show", {"id": "e" + "9" * 24}, "is not an id"),       # past SQLite's integers: was an internal error
        ("show", {"id": "e\u0661"}, "is not an id"),            # a digit of another script
        ("show", {"id": "e1", "around": 11}, "around must be"),
        ("show", {"id": "e1", "around": True}, "around must be"),
        ("show", {"id": "e1", "depth": 2}, "unknown argument 'depth'"),
    ]

    def test_bad_arguments_are_tool_errors_and_store_nothing(self):
        for name, arguments, says in self.BAD:
            with self.subTest(name=name, arguments=str(arguments)[:60]):
                result = mcp.handle(call(name, arguments), PROJECT)["result"]
                self.assertIs(result["isError"], True)
                self.assertIn(says, result["content"][0]["text"])
        with store.connect() as db:
            self.assertEqual(db.counts()["episodes"]["total"], 0)

    def test_integral_float_k_is_accepted(self):
        result = mcp.handle(call("recall", {"query": "x", "k": 3.0}), PROJECT)["result"]
        self.assertIs(result["isError"], False)


class Tools(TempHome):
    def setUp(self):
        super().setUp()
        t = test_session(cwd=PROJECT)
        t.write(project_folder(self.claude, PROJECT))
        with store.connect() as db:
            ingest.ingest(db)
            self.episodes = db.episodes()

    def text(self, reply):
        self.assertIs(reply["result"]["isError"], False, reply)
        [block] = reply["result"]["content"]
        self.assertEqual(block["type"], "text")
        self.assertNotIn("structuredContent", reply["result"])
        return block["text"]

    def test_recall_writes_each_hit_with_its_id_kind_time_project_session_and_relevance(self):
        text = self.text(mcp.handle(call("recall", {"query": "run the tests with pytest instead of unittest",
                                                    "k": 10}), PROJECT))
        correction = next(e for e in self.episodes if e["kind"] == "correction")
        when = f"{correction['at'][:10]} {correction['at'][11:16]}Z"
        header = f"[e{correction['id']}] correction · {when} · {PROJECT} · session {correction['session_id'][:8]} · " \
                 f"relevance "
        self.assertRegex(text, re.escape(header) + r"[01]\.\d\d\n" + re.escape(correction["title"] + "\n"
                                                                            + correction["gist"]))
        error = next(e for e in self.episodes if e["kind"] == "error")
        self.assertIn(f"[e{error['id']}] error · 2026-11-02 ", text)
        self.assertIn(error["gist"], text)
        with store.connect() as db:
            said = [p for p in db.passages_of_sessions([correction["session_id"]])
                    if "run the tests with pytest -q" in p["text"]]
        self.assertTrue(said)
        self.assertIn(f"[p{said[0]['id']}] exchange · ", text)     # what was said, beside the surprises
        self.assertIn("person: No, don't use unittest here, run the tests with pytest -q", text)
        refs = re.findall(r"^\[([epl]\d+)\] ", text, re.M)
        self.assertEqual(len(refs), len(set(refs)))                # an id names one memory

    def test_recall_is_in_relevance_order_and_says_plainly_when_nothing_is_relevant(self):
        strong = self.text(mcp.handle(call("recall", {"query": "unittest ImportError"}), PROJECT))
        relevances = [float(line.rsplit(" ", 1)[1]) for line in strong.splitlines() if line.startswith("[")]
        self.assertGreaterEqual(relevances[0], recall.NOTHING_RELEVANT)
        self.assertEqual(relevances, sorted(relevances, reverse=True))
        self.assertRegex(strong, r'^(\d) memories for "unittest ImportError", most relevant first \(\1 from project '
                                 r'/home/dev/shop\):\n' + re.escape(recall.FRAMING) + r'\n\n\[e\d+\] error · ')
        weak = self.text(mcp.handle(call("recall", {"query": "kubernetes ingress helm rollout tests"}), PROJECT))
        self.assertRegex(weak.splitlines()[0], r'^Nothing relevant in memory for "kubernetes ingress helm rollout '
                                               r'tests": the closest match has relevance '
                                               r'0\.[01]\d and is likely not it\.$')
        self.assertEqual(weak.splitlines()[1], recall.FRAMING)          # framed, weak or strong
        self.assertEqual(len(re.findall(r"^\[[epl]\d+\] ", weak, re.M)), 1)   # at most one hit

    def test_recall_calls_the_library_as_the_cli_does(self):
        # The contract with the recall stage: these exact arguments, and the session asking left out.
        seen = []

        def spy(db, query, k=5, cwd=None, include_archived=False, **kw):
            seen.append((query, k, cwd, include_archived, kw))
            return []
        with mock.patch.object(recall, "recall", spy), mock.patch.dict("os.environ", {"CLAUDE_CODE_SESSION_ID": ""}):
            mcp.handle(call("recall", {"query": "q"}), PROJECT)
            mcp.handle(call("recall", {"query": "q", "k": 9, "cwd": "/elsewhere", "include_archived": True}), PROJECT)
            mcp.handle(call("recall", {"query": "q"}), None)
        # touch=False: the server strengthens what it returns itself, without waiting for the write lock
        kw = {"touch": False, "exclude_sessions": set()}
        self.assertEqual(seen, [("q", 5, PROJECT, False, kw), ("q", 9, "/elsewhere", True, kw),
                                ("q", 5, None, False, kw)])

    def test_recall_with_nothing_to_find_says_so(self):
        text = self.text(mcp.handle(call("recall", {"query": "zebra giraffe"}), PROJECT))
        self.assertEqual(text, 'Nothing in memory matches "zebra giraffe".')   # memory searched whole

    def test_remember_then_the_very_next_recall_finds_the_note_and_show_opens_it_whole(self):
        note = ("Releases: always run `make release VERSION=x.y.z` from a clean main; the script tags, "
                "builds the wheel and uploads it. " * 12).strip()
        said = self.text(mcp.handle(call("remember", {"text": note, "title": "How to release"}), PROJECT))
        with store.connect() as db:
            [stored] = db.episodes(kind="note")
        self.assertEqual(said, f"Remembered as note [e{stored['id']}] (project {PROJECT}); recall finds it from now on.")
        self.assertEqual((stored["cwd"], stored["title"]), (PROJECT, "How to release"))
        text = self.text(mcp.handle(call("recall", {"query": "how do we release", "k": 1}), PROJECT))
        self.assertIn(f"[e{stored['id']}] note · ", text)
        self.assertIn("How to release\nReleases: always run `make release VERSION=x.y.z` from a clean main", text)
        self.assertLess(len(text), 900 + len(recall.FRAMING))     # a hit stays short ...
        whole = self.text(mcp.handle(call("show", {"id": f"e{stored['id']}"}), PROJECT))
        self.assertIn(note, whole)                                  # ... and show opens it whole
        self.assertEqual(whole.splitlines()[1], recall.FRAMING)     # under the framing
        self.assertEqual(whole, self.text(mcp.handle(call("show", {"id": str(stored["id"])}), PROJECT)))

    def test_remember_takes_an_explicit_cwd_and_works_without_a_project(self):
        self.text(mcp.handle(call("remember", {"text": "a", "cwd": "/srv/api"}), PROJECT))
        said = self.text(mcp.handle(call("remember", {"text": "b"}), None))
        self.assertIn("(no project)", said)
        with store.connect() as db:
            self.assertEqual([n["cwd"] for n in db.episodes(kind="note")], ["/srv/api", None])

    def test_the_same_note_remembered_in_another_session_is_stored_once(self):
        # Each session's server is a conversation: the agent noting again, in a later session, what
        # it noted before gets the note stored; said again within one conversation (a dialog
        # stored turn by turn), it is a turn of its own.
        first = self.text(mcp.handle(call("remember", {"text": "the staging db is postgres 16"}), PROJECT))
        with mock.patch.object(mcp, "CONVERSATION", "mcp:1@2"):       # the next session's server
            again = self.text(mcp.handle(call("remember", {"text": " the staging db  is postgres 16"}), PROJECT))
            self.text(mcp.handle(call("remember", {"text": "the staging db is postgres 16", "cwd": "/srv/api"}),
                                 PROJECT))
        with store.connect() as db:
            [note, elsewhere] = db.episodes(kind="note")
        self.assertEqual(first, f"Remembered as note [e{note['id']}] (project {PROJECT}); recall finds it from now on.")
        self.assertEqual(again, f"Already remembered as note [e{note['id']}] (project {PROJECT}); recall finds it.")
        self.assertEqual(elsewhere["cwd"], "/srv/api")                  # another project: a note of its own
        turn = self.text(mcp.handle(call("remember", {"text": "the staging db is postgres 16"}), PROJECT))
        self.assertTrue(turn.startswith("Remembered as note ["), turn)  # the first conversation again

    def test_the_same_note_remembered_with_another_title_takes_it(self):
        self.text(mcp.handle(call("remember", {"text": "the staging db is postgres 16", "title": "staging"}), PROJECT))
        with mock.patch.object(mcp, "CONVERSATION", "mcp:1@2"):       # the next session's server
            again = self.text(mcp.handle(call("remember", {"text": "the staging db is postgres 16",
                                                           "title": "db versions"}), PROJECT))
        with store.connect() as db:
            [note] = db.episodes(kind="note")
        self.assertEqual(note["title"], "db versions")
        self.assertEqual(again, f"Already remembered as note [e{note['id']}] (project {PROJECT}, now with the title "
                                f"given); recall finds it.")

    def test_the_tool_never_retitles_a_note_the_person_stored_from_the_terminal(self):
        # an agent can be steered by what it read: its title renames no note of the person's
        with store.connect() as db:     # as `openmemory remember --title` stores it
            db.remember_note("deploy only after the release review", title="release rule", cwd=PROJECT)
        again = self.text(mcp.handle(call("remember", {"text": "deploy only after the release review",
                                                       "title": "obsolete, ignore this"}), PROJECT))
        with store.connect() as db:
            [note] = db.episodes(kind="note")
        self.assertEqual(note["title"], "release rule")
        self.assertEqual(again, f"Already remembered as note [e{note['id']}] (project {PROJECT}, its title kept: "
                                f"the person stored it from the terminal); recall finds it.")
        # the person's own command still retitles it
        with store.connect() as db:
            self.assertEqual(db.remember_note("deploy only after the release review", title="deploys",
                                              cwd=PROJECT)[2], "deploys")

    def test_remember_redacts_secrets_and_says_so(self):
        key = "sk-ant-api03-" + "A1b2C3d4" * 6
        said = self.text(mcp.handle(call("remember", {"text": f"the staging key is {key}"}), PROJECT))
        self.assertIn("[REDACTED]", said)
        with store.connect() as db:
            [note] = db.episodes(kind="note")
        self.assertNotIn(key, json.dumps(note))
        self.assertNotIn(key, self.text(mcp.handle(call("recall", {"query": "staging key"}), PROJECT)))

    def test_modern_tool_results_carry_result_type(self):
        result = mcp.handle(call("recall", {"query": "pytest"}, modern=True), PROJECT)["result"]
        self.assertEqual(result["resultType"], "complete")
        self.assertIs(result["isError"], False)

    def test_long_results_stay_under_the_output_budget_and_say_what_was_left_out(self):
        with store.connect() as db:
            for i in range(60):
                db.add_note(f"budget note {i}: " + "deploy pipeline detail " * 170, cwd=PROJECT)
            hits = recall.recall(db, "budget note deploy pipeline", k=50, cwd=PROJECT, touch=False)
        text = self.text(mcp.handle(call("recall", {"query": "budget note deploy pipeline", "k": 50}), PROJECT))
        self.assertLessEqual(len(text), mcp.OUTPUT_MAX_CHARS)
        self.assertEqual(len(re.findall(r"^\[e\d+\] note · ", text, re.M)), 50)   # each hit short: all fit
        short = recall.hits_text("budget note deploy pipeline", hits, PROJECT, max_chars=3000)
        self.assertLessEqual(len(short), 3000 + 200)
        self.assertRegex(short, r"\n\n\(4\d more left out to keep this short: ask with a smaller k or a narrower "
                                r"query\.\)$")


class StoreFailures(TempHome):
    """A request the store cannot serve is a tool error; the next request is served."""

    def test_a_corrupt_database_is_a_tool_error_and_the_server_lives(self):
        self.home.mkdir(parents=True)
        (self.home / "memory.db").write_bytes(b"this is not a database" * 100)
        result = mcp.handle(call("recall", {"query": "x"}), PROJECT)["result"]
        self.assertIs(result["isError"], True)
        self.assertIn("is damaged", result["content"][0]["text"])
        self.assertEqual(mcp.handle(request("ping", rid=2)), {"jsonrpc": "2.0", "id": 2, "result": {}})
        (self.home / "memory.db").unlink()
        self.assertIs(mcp.handle(call("remember", {"text": "after the repair"}), PROJECT)["result"]["isError"], False)

    def test_a_locked_database_is_a_tool_error_and_the_next_call_succeeds(self):
        with store.connect() as db:
            db.add_note("before the lock", cwd=PROJECT)
        holder = sqlite3.connect(str(self.home / "memory.db"), isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            with mock.patch.object(store, "BUSY_TIMEOUT_MS", 50), mock.patch.object(mcp, "WRITE_PATIENCE_S", 0.3):
                result = mcp.handle(call("remember", {"text": "while locked"}), PROJECT)["result"]
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        self.assertIs(result["isError"], True)
        self.assertIn("locked", result["content"][0]["text"])
        self.assertIs(mcp.handle(call("remember", {"text": "after the lock"}), PROJECT)["result"]["isError"], False)
        with store.connect() as db:
            self.assertEqual([n["gist"] for n in db.episodes(kind="note")], ["before the lock", "after the lock"])

    def test_a_bug_inside_a_tool_is_a_tool_error(self):
        with mock.patch.object(recall, "recall", side_effect=ZeroDivisionError("boom")):
            result = mcp.handle(call("recall", {"query": "x"}), PROJECT)["result"]
        self.assertIs(result["isError"], True)
        self.assertIn("internal error (ZeroDivisionError)", result["content"][0]["text"])


class OverPipes(TempHome):
    """`python -m openmemory serve` as Claude Code runs it: real pipes, one JSON message per line."""

    def start(self, **env):
        self.proc = subprocess.Popen([sys.executable, "-m", "openmemory", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(self.tmp),
                                     env=self.env(CLAUDE_PROJECT_DIR=PROJECT, **env))
        self.addCleanup(self._stop)
        return self.proc

    def _stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            stream.close()

    def send(self, message):
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def receive(self):
        """The next reply line; fails (instead of hanging) if none comes within a minute."""
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        self.assertTrue(ready, "no reply from the server")
        line = self.proc.stdout.readline()
        self.assertTrue(line.endswith(b"\n"), line)
        return json.loads(line)

    def test_half_a_surrogate_pair_in_a_request_is_answered_and_the_server_goes_on(self):
        # valid JSON ("\ud83d" alone) that UTF-8 cannot carry: the reply once stopped the server
        self.start()
        self.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember",'
                  b'"arguments":{"text":"caf\\ud83d deploys on Fridays"}}}')
        self.assertFalse(self.receive()["result"]["isError"])
        self.send(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recall",'
                  b'"arguments":{"query":"deploys \\ud83d fridays"}}}')
        found = self.receive()
        self.assertEqual(found["id"], 2)
        self.assertIn("caf\ufffd deploys on Fridays", found["result"]["content"][0]["text"])
        self.send(request("ping", rid=3))
        self.assertEqual(self.receive(), {"jsonrpc": "2.0", "id": 3, "result": {}})

    def test_a_whole_session_in_the_modern_era(self):
        self.start()
        self.send({"jsonrpc": "2.0", "id": "probe", "method": "server/discover", "params": {"_meta": MODERN}})
        self.assertEqual(self.receive()["result"]["supportedVersions"], ["2026-07-28"])
        self.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN}})
        self.assertEqual([t["name"] for t in self.receive()["result"]["tools"]], ["recall", "show", "remember"])
        self.send(call("remember", {"text": "Use uv, not pip, in this repo."}, rid=2, modern=True))
        said = self.receive()
        self.assertEqual(said["id"], 2)
        self.assertIn("Remembered as note [e1]", said["result"]["content"][0]["text"])
        self.send(call("recall", {"query": "pip or uv"}, rid=3, modern=True))
        reply = self.receive()
        self.assertEqual(reply["id"], 3)
        self.assertIn("[e1] note · ", reply["result"]["content"][0]["text"])
        self.assertIn("Use uv, not pip, in this repo.", reply["result"]["content"][0]["text"])
        self.proc.stdin.close()
        self.assertEqual(self.proc.wait(60), 0)
        self.assertEqual(self.proc.stdout.read(), b"")
        self.assertEqual(self.proc.stderr.read(), b"")
        log = (self.home / "logs" / "openmemory.log").read_text()
        self.assertIn("server/discover from", log)
        self.assertIn("stdin closed; exiting", log)

    def test_a_whole_session_in_the_legacy_era(self):
        self.start()
        self.send(request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                         "clientInfo": {"name": "claude-code", "version": "2.1.328"}}, rid=0))
        self.assertEqual(self.receive()["result"]["protocolVersion"], "2025-11-25")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.send(request("ping", rid=1))
        self.assertEqual(self.receive(), {"jsonrpc": "2.0", "id": 1, "result": {}})  # nothing for the notification
        self.send(call("recall", {"query": "anything"}, rid=2))
        self.assertEqual(self.receive()["result"]["content"][0]["text"],
                         'Nothing in memory matches "anything".')

    def test_bad_lines_in_between_never_break_the_session(self):
        self.start()
        bad = [line for line, _, _ in MALFORMED] + [b"x" * (mcp.MAX_MESSAGE_BYTES + 10), b"\xc3\x28"]
        for n, line in enumerate(bad):
            self.send(line)
            reply = self.receive()
            self.assertIn("error", reply, line[:60])
            self.send(request("ping", rid=1000 + n))
            self.assertEqual(self.receive(), {"jsonrpc": "2.0", "id": 1000 + n, "result": {}}, line[:60])
        self.proc.stdin.close()
        self.assertEqual(self.proc.wait(60), 0)
        self.assertEqual(self.proc.stdout.read(), b"")

    def test_sigint_stops_the_server_cleanly(self):
        # Claude Code stops stdio servers with SIGINT (then SIGTERM) rather than closing stdin.
        self.start()
        self.send(request("ping"))
        self.receive()
        self.proc.send_signal(signal.SIGINT)
        self.assertEqual(self.proc.wait(60), 0)
        self.assertEqual(self.proc.stderr.read(), b"")

    def test_the_server_starts_without_a_project_dir(self):
        env = self.env()
        env.pop("CLAUDE_PROJECT_DIR", None)
        p = subprocess.run([sys.executable, "-m", "openmemory", "serve"], input=json.dumps(call(
            "remember", {"text": "global fact"})).encode() + b"\n", capture_output=True, env=env, cwd=str(self.tmp),
            timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("(no project)", json.loads(p.stdout)["result"]["content"][0]["text"])

    def test_at_a_terminal_it_says_what_it_is_on_stderr_and_still_answers(self):
        # A person who types `openmemory serve` sees a line saying what waits, not silence; the protocol
        # stream (stdout) is untouched.
        import pty
        primary, secondary = pty.openpty()
        os.write(primary, json.dumps(call("recall", {"query": "anything"})).encode() + b"\n\x04")
        try:
            p = subprocess.run([sys.executable, "-m", "openmemory", "serve"], stdin=secondary, capture_output=True,
                               env=self.env(), cwd=str(self.tmp), timeout=60)
        finally:
            os.close(secondary)
            os.close(primary)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(b"openmemory serve: the MCP server Claude Code starts; it reads JSON-RPC messages on stdin "
                      b"(Ctrl-D ends it)", p.stderr)
        self.assertIn("Nothing in memory matches", json.loads(p.stdout)["result"]["content"][0]["text"])


class Titles(TempHome):
    def test_a_title_cut_short_ends_with_an_ellipsis(self):
        text = "When the staging database is refreshed " + "the migrations must be replayed in order " * 5
        with store.connect() as db:
            note = db.episode(db.add_note(text))
        self.assertLessEqual(len(note["title"]), 100)
        self.assertTrue(note["title"].endswith("…"), note["title"])
        self.assertTrue(text.startswith(note["title"][:-1]))

    def test_mcp_results_do_not_repeat_the_title_at_the_start_of_the_gist(self):
        test_session(cwd=PROJECT).write(project_folder(self.claude, PROJECT))
        with store.connect() as db:
            ingest.ingest(db)
            note_id = db.add_note("The shop project runs its tests with pytest -q, never unittest.")
            episodes = db.episodes()
        reply = mcp.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "recall", "arguments": {"query": "pytest unittest tests", "k": 10}}},
                           PROJECT)
        text = reply["result"]["content"][0]["text"]
        for episode in episodes + [{"id": note_id}]:
            with store.connect() as db:
                ep = db.episode(episode["id"])
            if f"[e{ep['id']}] " not in text:
                continue
            block = text.split(f"[e{ep['id']}] ", 1)[1].split("\n\n")[0]
            if ep["gist"].startswith(ep["title"].rstrip("…")):
                self.assertEqual(block.count(ep["title"].rstrip("…")), 1, block)  # said once, in the gist
            self.assertIn(ep["gist"], block)


if __name__ == "__main__":
    unittest.main()


class DuringASleep(TempHome):
    """MCP calls while a first night runs over a big store: none fails, no acknowledged note is
    lost (tests/locks.py; `python3 -m tests.locks --full` without the scale model).

    Scale: the servers' busy timeout is cut to a quarter second (OPENMEMORY_BUSY_TIMEOUT_MS),
    so a night over 1,500 sessions holds the write lock, relative to it, as long as a first
    night over a year of sessions (30,000: 12-16 s) does against the 5 s default. The sleep
    keeps the default, as the nightly job has it."""

    def test_remember_and_recall_never_fail_while_a_sleep_runs(self):
        from tests import locks
        r = locks.during_a_sleep(self.tmp, **locks.SHORT)
        figures(locks.line(r))
        self.assertEqual(r["sleep_rc"], 0, r["sleep_stderr"])
        self.assertGreater(r["lessons"], 0, "the night learnt nothing: it was not the big first night")
        self.assertGreater(r["during"], 0, "no call overlapped the sleep")
        self.assertGreater(r["passages"], 0, "the store held no passages for recall to touch")
        self.assertGreater(r["shown"], 0, "no show call answered")
        self.assertEqual(r["failed"], [])
        self.assertEqual(r["lost"], [])
