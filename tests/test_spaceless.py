"""Recall in scripts written without spaces (Chinese, Japanese): a run of them reads as its pairs of
characters, in the text index (migrations.GRAMS) and in the vectors (embed.terms), so a question's
word is found inside a longer run; English is stored, indexed and embedded as before; an older
database gets the pairs at its upgrade (m027)."""
import sqlite3
from datetime import datetime, timezone

from openmemory import embed, migrations, recall, store
from tests.fixtures import Transcript, project_folder
from tests.helpers import TempHome, raw_db


def chinese_session():
    """Three exchanges on three things, in Chinese, as a person and an agent wrote them (no spaces)."""
    t = Transcript(cwd="/home/dev/kueue", start=datetime(2026, 11, 2, 9, 0, 0, tzinfo=timezone.utc))
    t.user("共享的ResourceClaim被同队列多个Pod引用时配额会重复计算吗？")
    t.assistant("会重复计算。我改成按Claim的UID去重：被同队列多个Pod引用的同一个Claim只计一次，"
                "队列上用一个以UID为键的集合记录已经计入的Claim。")
    t.user("设计文档里的代码标识符要不要加前缀？")
    t.assistant("不要加前缀，文档里直接写代码里原本的标识符名称，读者可以直接搜索到。")
    t.user("部署脚本失败了，日志说镜像拉取超时。")
    t.assistant("镜像仓库在内网，拉取超时是因为节点没有配置代理。我在节点上配置了代理之后重新部署成功了。")
    return t


def japanese_session():
    t = Transcript(cwd="/home/dev/jobs", start=datetime(2026, 11, 3, 9, 0, 0, tzinfo=timezone.utc))
    t.user("キューに入れたジョブが二回実行されるのはなぜ？")
    t.assistant("ワーカーが再起動したときに同じジョブを取り直していました。ジョブIDで重複排除するようにして、"
                "二回目の実行は捨てるようにしました。")
    t.user("ログの保存期間はどれくらいにした？")
    t.assistant("ログは三十日間保存して、それより古いものは毎晩の削除処理で消すようにしました。")
    return t


class ChineseAndJapanese(TempHome):
    def setUp(self):
        super().setUp()
        for t in (chinese_session(), japanese_session()):
            t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        self.db = store.connect()
        self.addCleanup(self.db.close)

    def first(self, question):
        hits = recall.search(self.db, question, k=5)
        self.assertTrue(hits, question)
        return hits[0]["gist"]

    def test_a_chinese_word_inside_a_longer_run_finds_its_exchange(self):
        # "队列" and "去重" are written inside "被同队列多个Pod" and "按Claim的UID去重：被同队列多个…": the index
        # read each run between punctuation as one token, so no question's word was found in it
        self.assertIn("按Claim的UID去重", self.first("队列上怎么去重？"))
        self.assertIn("不要加前缀", self.first("标识符的前缀是怎么决定的？"))
        self.assertIn("配置了代理", self.first("镜像拉取超时是什么原因？"))

    def test_a_japanese_word_inside_a_longer_run_finds_its_exchange(self):
        self.assertIn("重複排除", self.first("ジョブの重複はどう直した？"))
        self.assertIn("三十日間保存", self.first("ログは何日保存する？"))

    def test_the_vectors_read_the_pairs_too(self):
        # the vector channel alone (lexical_share 0) ranks by words it could not see before
        hits = recall.search(self.db, "队列去重", k=3, lexical_share=0.0)
        self.assertIn("按Claim的UID去重", hits[0]["gist"])

    def test_a_chinese_question_about_something_said_is_not_read_as_one_never_stored(self):
        # "部署", "镜像", "拉取", "超时" are held; "署的", "候镜", "取为", "么会", "会超" (the seams between the
        # question's words) and "时候", "什么" by no memory: pairs held nowhere are no words held nowhere,
        # and the question is answered (0.24 with them counted so: "nothing relevant", one hit shown)
        hits = recall.search(self.db, "部署的时候镜像拉取为什么会超时？", k=5)
        self.assertIn("配置了代理", hits[0]["gist"])
        self.assertGreaterEqual(hits[0]["relevance"], recall.NOTHING_RELEVANT)

    def test_read_again_the_same_rows_and_pairs_are_kept(self):
        rows = "SELECT id, key, text, text_grams, context_grams, embedding FROM passages ORDER BY id"
        first = raw_db(self.db).execute(rows).fetchall()
        self.assertTrue([r for r in first if "队列 列多" in r["text_grams"]])
        self.ok("ingest", "--force")
        self.assertEqual([tuple(r) for r in raw_db(self.db).execute(rows)], [tuple(r) for r in first])
        raw_db(self.db).execute("INSERT INTO recall_index (recall_index) VALUES ('integrity-check')")

    def forgets(self, word: str, said: str, held: int | None = None) -> None:
        """`forget --query word` takes the passages that hold said: `held` of them (or some) before."""
        holding = f"SELECT count(*) FROM passages WHERE text LIKE '%{said}%'"
        before = raw_db(self.db).execute(holding).fetchone()[0]
        if held is None:
            self.assertGreater(before, 0, said)
        else:
            self.assertEqual(before, held, said)
        self.assertRegex(self.ok("forget", "--query", word, "--yes").stdout, r"passage p\d+ · exchange")
        self.assertEqual(raw_db(self.db).execute(holding).fetchone()[0], 0, said)

    def test_forget_by_a_chinese_word_takes_the_passage_and_keeps_the_index_whole(self):
        holding = "SELECT count(*) FROM passages WHERE text LIKE '%镜像拉取%'"
        self.forgets("镜像拉取", "镜像拉取", held=1)
        self.assertFalse(recall.search(self.db, "镜像拉取超时", k=5))
        raw_db(self.db).execute("INSERT INTO recall_index (recall_index) VALUES ('integrity-check')")
        self.ok("ingest", "--force")      # its tombstones keep it out when its transcript is read again
        self.assertEqual(raw_db(self.db).execute(holding).fetchone()[0], 0)
        self.assertFalse(recall.search(self.db, "镜像拉取超时", k=5))
        self.assertIn("passes quick_check", self.ok("status").stdout)

    def test_forget_by_a_word_of_one_character_takes_what_holds_it(self):
        # red47: the index holds a run's pairs of characters, never one alone, so a word of one
        # character ("代" in "配置了代理", "日" in "三十日間保存": a name, 林 or 鍵, as often) matched
        # nothing: "nothing in memory to forget" of passages that held it
        for word, said in (("代", "配置了代理"), ("日", "三十日間保存")):
            self.forgets(word, said, held=1)
        self.assertEqual(self.ok("forget", "--query", "鍵 Claim").stderr, "nothing in memory to forget\n")
        self.ok("ingest", "--force")      # its tombstones keep them out when the transcripts are read again
        gone = "SELECT count(*) FROM passages WHERE text LIKE '%配置了代理%' OR text LIKE '%三十日間保存%'"
        self.assertEqual(raw_db(self.db).execute(gone).fetchone()[0], 0)
        raw_db(self.db).execute("INSERT INTO recall_index (recall_index) VALUES ('integrity-check')")

    def test_forget_by_a_word_holding_one_character_reads_its_letters_as_the_index_does(self):
        # red47b: a word of Latin letters and one character ("claim的" of "按Claim的UID去重") was looked
        # for as written, case and all: "nothing in memory to forget" where recall finds it
        self.forgets("claim的", "按Claim的UID去重")


ENGLISH = [("The deploy failed", "`./deploy.sh` failed: ssh: connect to host staging port 22: timed out", "Ran ./deploy.sh",
            "the session's request"),
           ("Café menu", "We renamed naïve_cache to café_cache — résumé builds use it.", "", "")]


# embed.encoded of the English sentence below, as the version before m027 made it
ENGLISH_VECTOR = "1eda58b55eb574da984ba7b5b3b5cf26d526d68fd84bea7fee26f5b5"


class ANameGluedToItsParticle(TempHome):
    """Korean writes a particle onto the word before it, Chinese and Japanese write no space at all:
    a name in Latin letters glued to them ("arduino-cli는", "把base.html恢复") is read apart from them
    (recall.unglued). Read whole it was a name no memory holds, and a question whose answer is stored
    said nothing relevant at 0.00 (public26 q22; public27 q58, q63, session 59)."""

    def setUp(self):
        super().setUp()
        t = Transcript(cwd="/home/dev/esp32", start=datetime(2026, 11, 4, 9, 0, 0, tzinfo=timezone.utc))
        t.user("보드에 업로드할 수 있게 설치해줘")
        t.assistant("arduino-cli를 설치하겠습니다.", tools=[
            ("Bash", {"command": "curl -fsSL https://downloads.arduino.cc/arduino-cli/arduino-cli_latest_Linux_64bit.tar.gz"
                                 " | tar -xz -C ~/tools/arduino && ~/tools/arduino/arduino-cli version"},
             "arduino-cli  Version: 1.1.1", False)])
        t.assistant("arduino-cli를 ~/tools/arduino 폴더에 설치했습니다. 이제 esp32 코어를 설치하면 업로드할 수 있습니다.")
        t.user("좋아")
        t.assistant("네.")
        t.write(project_folder(self.claude, t.cwd))
        self.ok("ingest")
        self.db = store.connect()
        self.addCleanup(self.db.close)

    def test_a_korean_question_naming_a_tool_with_its_particle_finds_the_answer(self):
        from unittest import mock
        with mock.patch.object(recall, "ABSENCE_FROM", 1):  # absence counts in full however small the store
            hits = recall.search(self.db, "arduino-cli는 어디에 설치했지?", k=5)
        self.assertFalse(recall.nothing_relevant(hits), [(h["relevance"], h["gist"][:60]) for h in hits])
        self.assertIn("~/tools/arduino", hits[0]["gist"])

    def test_the_question_is_shown_as_typed(self):
        out = self.ok("recall", "arduino-cli는 어디에 설치했지?").stdout
        self.assertIn('"arduino-cli는 어디에 설치했지?"', out)
        self.assertIn("~/tools/arduino", out)

    def test_where_a_name_meets_the_script_around_it(self):
        self.assertEqual(recall.unglued("arduino-cli는 어디에 설치했지?"), "arduino-cli 는 어디에 설치했지?")
        self.assertEqual(recall.unglued("把base.html恢复"), "把 base.html 恢复")
        self.assertEqual(recall.unglued("wingetで入れるコマンドは?"), "winget で入れるコマンドは?")
        self.assertEqual(recall.unglued("按Claim的UID去重"), "按 Claim 的 UID 去重")
        for query in ("How did we fix the push?", "队列上怎么去重？", "arduino-cli 는 어디에?", "v2.1 から"):
            self.assertEqual(recall.unglued(query), query)


class English(TempHome):
    def test_an_english_store_is_indexed_and_embedded_as_before(self):
        with store.connect() as db:
            db.replace_session({"id": "s1", "path": "/t/s1.jsonl", "mtime_ns": 0, "size": 0}, [
                {"key": f"k{i}", "kind": "error", "title": title, "gist": gist, "detail": detail, "facts": {},
                 "at": "2026-10-30T10:00:00Z", "cwd": "/home/dev/shop"} for i, (title, gist, detail, _) in enumerate(ENGLISH)])
            db.add_note("Staging's ssh port moved to 2222 — naïve scripts still use 22.")
            raw = raw_db(db)
            grams = raw.execute("SELECT title_grams || gist_grams || detail_grams || context_grams FROM episodes").fetchall()
            self.assertEqual({g for (g,) in grams}, {""})
            # the index holds exactly what the fields hold, as it did before the pairs (m013's expression)
            raw.execute("CREATE VIRTUAL TABLE temp.plain USING fts5(title, body, detail, context, content='', "
                        "tokenize='porter unicode61 remove_diacritics 2')")
            raw.execute(f"INSERT INTO temp.plain (rowid, title, body, detail, context) SELECT id, "
                        f"{migrations.EPISODE_TITLE.format('episodes')}, gist, detail, context FROM episodes")
            raw.execute("CREATE VIRTUAL TABLE temp.v1 USING fts5vocab(main, recall_index, instance)")
            raw.execute("CREATE VIRTUAL TABLE temp.v2 USING fts5vocab(temp, plain, instance)")
            self.assertEqual(raw.execute("SELECT * FROM temp.v1 ORDER BY 1, 2, 3, 4").fetchall(),
                             raw.execute("SELECT * FROM temp.v2 ORDER BY 1, 2, 3, 4").fetchall())
        # and the vectors are the ASCII words' alone, accents and dashes splitting words as before
        english = "We renamed naïve_cache to café_cache — résumé builds use it."
        self.assertEqual(embed.terms(english), ["renam", "na", "ve", "cache", "caf", "cache", "sum", "build", "use"])
        self.assertEqual(embed.encoded(english), embed.encode(embed.vector(english)))
        self.assertEqual(embed.encoded(english).hex(), ENGLISH_VECTOR)
        self.assertEqual(embed.grams("We renamed naïve_cache to café_cache — résumé"), "")


def _old_database(path):
    """A database as the version before m027 left it, holding a Chinese note, passage and lesson,
    indexed by that version's expressions (m013, m010, m003)."""
    db = sqlite3.connect(str(path), isolation_level=None)
    before = [m.__name__ for m in migrations.MIGRATIONS].index("m027_spaceless_grams")
    for step in migrations.MIGRATIONS[:before]:
        step(db)
    db.execute(f"PRAGMA user_version = {before}")
    now = "2026-11-02T09:00:00.000000Z"
    note = "共享的ResourceClaim被同队列多个Pod引用时按UID去重。"
    db.execute("INSERT INTO episodes (key, kind, title, gist, detail, at, created, last_touched, embedding) "
               "VALUES ('note:1', 'note', ?, ?, '', ?, ?, ?, ?)", (note, note, now, now, now, embed.encoded("")))
    db.execute("INSERT INTO sessions (id, path, mtime_ns, size, ingested) VALUES ('s1', '/t/s1.jsonl', 1, 1, ?)", (now,))
    said = "person: 镜像拉取超时怎么办？\nagent: 节点上配置了代理之后重新部署成功了。"
    db.execute("INSERT INTO passages (key, session_id, seq, kind, text, at, created, last_touched, embedding) "
               "VALUES ('p:1', 's1', 0, 'exchange', ?, ?, ?, ?, ?)", (said, now, now, now, embed.encoded("")))
    db.execute("INSERT INTO lessons (text, kind, created, updated, embedding) VALUES (?, 'feedback', ?, ?, ?)",
               ("设计文档里的标识符不要加前缀。", now, now, embed.encoded("")))
    db.execute(f"INSERT INTO recall_index (rowid, title, body, detail, context) SELECT id, "
               f"{migrations.EPISODE_TITLE.format('episodes')}, gist, detail, context FROM episodes")
    db.execute(f"INSERT INTO recall_index (rowid, title, body, detail, context) SELECT id + {migrations.PASSAGE_ROWIDS}, "
               f"'', {migrations.PASSAGE_BODY.format('passages')}, '', context FROM passages")
    db.close()


class AnOlderDatabase(TempHome):
    def test_its_chinese_memories_are_found_by_a_word_inside_a_run_after_the_upgrade(self):
        self.home.mkdir(parents=True)
        _old_database(self.home / "memory.db")
        with store.connect() as db:
            self.assertEqual(raw_db(db).execute("PRAGMA user_version").fetchone()[0], len(migrations.MIGRATIONS))
            found = {h["source"]: h for h in recall.search(db, "队列去重", k=5)}
            self.assertIn("episode", found)
            self.assertIn("passage", {h["source"] for h in recall.search(db, "拉取超时", k=5)})
            self.assertIn("lesson", {h["source"] for h in recall.search(db, "标识符前缀", k=5)})
            # its vector was made again from its words (an empty text's before)
            row = raw_db(db).execute("SELECT embedding FROM episodes").fetchone()
            self.assertEqual(row[0], embed.encoded(*raw_db(db).execute(
                "SELECT title || char(10) || gist FROM episodes").fetchone()))
            raw_db(db).execute("INSERT INTO recall_index (recall_index) VALUES ('integrity-check')")
        # what the upgrade indexed leaves the index whole when forgotten (its triggers read the pairs)
        self.ok("forget", "e1", "p1", "l1", "--yes")
        with store.connect() as db:
            raw_db(db).execute("INSERT INTO recall_index (recall_index) VALUES ('integrity-check')")
            self.assertEqual(raw_db(db).execute("SELECT count(*) FROM recall_index WHERE recall_index MATCH "
                                                "'\"队列\" OR \"拉取\" OR \"前缀\"'").fetchone()[0], 0)
        self.assertIn("passes quick_check", self.ok("status").stdout)
