"""Recall: find the past episodes and lessons that answer a query, fast, at any size.

Score (the design's): 0.6·relevance + 0.25·2^(−age/30 days) + 0.15·min(strength, 2)/2.
Relevance fuses two channels over one candidate set:

- lexical: SQLite FTS5 BM25 (Porter stemmer, field weights) over the `recall_index`
  table that migrations keep in sync with episodes and lessons by triggers; its fourth
  field is each memory's context (neighbours.py: its session, the memories next to it);
- vector: cosine of the 256-dimension hashed word-and-bigram vectors (embed.py), which
  sees every word of the query, common ones included, and word order (bigrams).

Candidates come from the index, never from reading every row. Each channel is scaled by
its best candidate and the two are mixed by a convex combination (Bruch, Gai and Ingber,
"An Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS 2023; reciprocal rank
fusion measured far worse here, see OPERATIONS.md). Relevance is then made comparable
across queries: the mix is multiplied by how much of the query (its words, rarer ones
weighing more) the best candidates hold, so a weak best match reads weak instead of 1.0.
When the best match is weak, the query is expanded once with the strongest words of its
first hits (pseudo-relevance feedback). Where SQLite has no FTS5, a substring filter on
the query's stems picks the candidates and the vector channel alone ranks them.
"""
import os
import re
import sqlite3
import unicodedata
from math import log

from . import embed, paths
from .clock import iso, parse_time
from .store import Store

# The design's score (spec, "Data flow in detail").
W_RELEVANCE, W_RECENCY, W_STRENGTH = 0.6, 0.25, 0.15
RECENCY_HALF_LIFE_DAYS = 30.0
STRENGTH_CAP = 2.0
TOUCH_STRENGTH = 0.1            # added to an episode each time recall returns it

# Fusion. BM25 carries what the hashed vector lacks (IDF, length normalisation, no hash
# collisions, the context field) and is much the stronger channel (issue 3: 0.58 vs 0.17
# R@5 on a public conversational benchmark; R@5 0.90 vs 0.84 on our labelled set, 0.74 vs
# 0.48 on our conversational check), so it gets most of the share; the vector channel
# re-ranks the lexical candidates by the words BM25 had to leave out and by word pairs.
# 0.8 over 0.7: R@5 0.93 vs 0.91 and 0.74 vs 0.70 (OPERATIONS.md has the tables).
LEXICAL_SHARE = 0.8
# BM25F field weights (title, body = gist or lesson text, detail, context): a title is a
# one-line summary, so its words count double; detail is raw text (every prompt of a
# session, a whole error output) and mostly repeats the gist, so it counts half; context
# (neighbours.py) is what happened around a memory, not the memory, so its words count 0.4
# of the body's: on the conversational check context weights 0.3-0.5 lift R@5 with BM25
# alone from 0.54 to 0.74 (0.1: 0.69), 1.0 loses R@1 (0.09: the neighbour outranks the
# turn itself); in the fusion 0.4 and 0.5 give R@5 0.93 and 0.74 on the two sets, 0.3
# gives 0.93 and 0.72 (OPERATIONS.md).
FIELD_WEIGHTS = (2.0, 1.0, 0.5, 0.4)

# Pseudo-relevance feedback, only when the best relevance is below FEEDBACK_BELOW
# (a strong first match needs no help, and the expansion would only add noise): the
# FEEDBACK_TERMS rarest-yet-shared words of the first FEEDBACK_DOCS hits (of the
# FEEDBACK_CHECKED most frequent there) are searched for as a second query whose BM25,
# scaled to the first query's best, adds FEEDBACK_WEIGHT of itself. Measured: R@5 0.90 ->
# 0.93 on the labelled set, the same on the conversational check (OPERATIONS.md).
FEEDBACK_BELOW = 0.6
FEEDBACK_DOCS = 2
FEEDBACK_TERMS = 5
FEEDBACK_CHECKED = 8
FEEDBACK_WEIGHT = 0.2
FEEDBACK_CANDIDATES = 50

# A best match below this relevance is weak: shown as such to the model (mcp.py). On the
# labelled set the right first hit has median relevance 0.69 (5 of 80 below 0.3: queries
# that share one word with their answer), a wrong one 0.30; of twelve queries about things
# never stored one reaches 0.30, the rest at most 0.23.
WEAK_RELEVANCE = 0.3
CONFIDENCE_FROM = 3             # the best candidates whose coverage of the query scales relevance

# Cost bounds. FTS5 computes bm25() at about 2 µs a matching row (measured at 100,000
# synthetic episodes), so a query never scores more than POSTINGS_BUDGET rows:
# terms are taken rarest first while their documents add up to the budget; a term
# more common than that is left to the vector channel (its IDF is low: at 100,000
# episodes a term in 4,000 of them has IDF 3.2, a name or an error code 8 or more).
# When every term is that common, the newest POSTINGS_BUDGET rows holding all of them
# are scored.
POSTINGS_BUDGET = 4000
CANDIDATES = 200                # lexical candidates scored by both channels
MAX_QUERY_TERMS = 24            # a pasted paragraph is cut to its first 24 distinct words
FALLBACK_SCAN = 5000            # without FTS5: newest rows holding a query stem

_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script; '_' splits snake_case


def recall(store: Store, query: str, k: int = 5, cwd: str | None = None,
           include_archived: bool = False, now: str | None = None, touch: bool = True) -> list:
    """The k best hits for query, best first, touching the episodes among them.

    Each hit is a dict: id, kind ('session', 'error', 'correction', 'note' or 'lesson'),
    title, gist, cwd, at, score, relevance, strength, recalls, archived, in_project
    (None without cwd). With cwd, memories of that project (and those that apply
    everywhere) come first.
    """
    now = now or iso()
    hits = search(store, query, k, cwd, include_archived, now)
    if touch:
        touch_episodes(store, [h["id"] for h in hits if h["kind"] != "lesson"], now)
    return hits


ARCHIVED_HINT_MAX = 50  # "N archived memories match" counts up to this many


def archived_matches(store: Store, query: str, cwd: str | None = None) -> int:
    """How many archived memories match query, for the hint when nothing live does; revives none."""
    hits = search(store, query, ARCHIVED_HINT_MAX, cwd, include_archived=True)
    return sum(1 for hit in hits if hit["archived"])


def search(store: Store, query: str, k: int = 5, cwd: str | None = None, include_archived: bool = False,
           now: str | None = None, lexical_share: float = LEXICAL_SHARE, field_weights=FIELD_WEIGHTS,
           feedback: bool = True) -> list:
    """Rank without touching anything. lexical_share 1 is BM25 alone, 0 the vectors alone;
    field_weights and feedback are there to measure what each brings (test_recall_quality)."""
    now = now or iso()
    k = int(k)
    terms = query_terms(query)
    if not terms or k <= 0:
        return []
    scope = project_scope(cwd) if cwd else None
    qvec = embed.vector(query)
    lexical = _lexical_scores(store, terms, field_weights) if lexical_share > 0 else None
    if lexical is None:
        rows = _fallback_candidates(store, query, include_archived)
        weights = {stem: 1.0 for stem in set(embed.words(_plain(query)))}
        return rank(rows, None, qvec, now, scope, lexical_share, weights, None, store.contexts)[:k]
    scores, counted = lexical
    weights = query_weights(query, counted, store.indexed_total())
    rows = _rows(store, list(scores), include_archived)
    cosines = {}
    hits = rank(rows, scores, qvec, now, scope, lexical_share, weights, cosines, store.contexts)
    if feedback and hits and max(h["relevance"] for h in hits) < FEEDBACK_BELOW:
        more = _feedback_scores(store, counted, hits[:FEEDBACK_DOCS], field_weights)
        if more:
            best, best_more = max(scores.values()), max(more.values())
            merged = dict(scores)
            for key, b in more.items():
                merged[key] = merged.get(key, 0.0) + FEEDBACK_WEIGHT * best * b / best_more
            rows += _rows(store, [key for key in more if key not in scores], include_archived)
            hits = rank(rows, merged, qvec, now, scope, lexical_share, weights, cosines, store.contexts)
    return hits[:k]


def query_terms(query: str) -> list:
    """The query's content words, lowercased, one per stem, stop words dropped; never raises."""
    seen, out = set(), []
    for word in _WORD.findall((query or "").lower()):
        if word in embed.STOP_WORDS or (len(word) < 2 and not word.isdigit()):
            continue
        key = embed.stem(word)
        if key not in seen:
            seen.add(key)
            out.append(word)
        if len(out) == MAX_QUERY_TERMS:
            break
    return out


def match_expression(terms: list, all_of: bool = False) -> str:
    """An FTS5 query for terms: each a quoted string, so nothing in it is FTS5 syntax."""
    return (" AND " if all_of else " OR ").join('"%s"' % t.replace('"', '""') for t in terms)


def rank(rows: list, lexical: dict | None, qvec: list, now: str, scope=None,
         lexical_share: float = LEXICAL_SHARE, weights: dict | None = None, cosines: dict | None = None,
         contexts=None) -> list:
    """Score candidate rows and order them: in-project first (when scoped), then by score.

    lexical is {index rowid: BM25} (None: the vectors alone); each channel is scaled by its
    best candidate, mixed, then scaled by how much of the query the best candidates hold
    (`coverage` with the query's word weights, in their text and their context, which
    contexts(ids) -> {id: context} supplies; without weights, not scaled); cosines caches
    the vector channel by rowid.
    """
    query = {i: x for i, x in enumerate(qvec) if x}  # already unit length; few words: sparse
    cosines = {} if cosines is None else cosines
    for row in rows:
        if _index_key(row) not in cosines:
            cosines[_index_key(row)] = max(0.0, embed.stored_cosine(query, row["embedding"]))
    best_cos = max((cosines[_index_key(row)] for row in rows), default=0.0)
    best_lex = max(lexical.values(), default=0.0) if lexical else 0.0
    fused = []
    for row in rows:
        vec = cosines[_index_key(row)] / best_cos if best_cos > 0 else 0.0
        if lexical is None:
            fused.append(vec)
        else:
            lex = lexical.get(_index_key(row), 0.0) / best_lex if best_lex > 0 else 0.0
            fused.append(lexical_share * lex + (1 - lexical_share) * vec)
    best = [rows[i] for i in sorted(range(len(rows)), key=fused.__getitem__, reverse=True)[:CONFIDENCE_FROM]]
    around = contexts([r["id"] for r in best if r["kind"] != "lesson"]) if contexts and best else {}
    confidence = (max((coverage(weights, r, around.get(r["id"], "") if r["kind"] != "lesson" else "")
                       for r in best), default=0.0) if weights else 1.0)
    now = parse_time(now)
    hits = []
    for row, relevance in zip(rows, fused):
        relevance = round(relevance * confidence, 4)
        if relevance <= 0:
            continue
        hit = {key: row[key] for key in ("id", "kind", "title", "gist", "cwd", "at", "strength", "recalls")}
        hit["archived"] = bool(row["archived"])
        hit["relevance"] = relevance
        hit["score"] = round(score(relevance, row["at"], row["strength"], now), 4)
        hit["in_project"] = None if scope is None else scope(row["cwd"])
        hits.append(hit)
    hits.sort(key=lambda h: (bool(h["in_project"]), h["score"], h["at"], h["kind"] != "lesson", h["id"]),
              reverse=True)
    return hits


def query_weights(query: str, counted: list, total: int) -> dict:
    """{stem: weight} of the query's words: rarer in the index, heavier (a smoothed IDF that
    stays positive however common the word; a word the index lacks weighs most)."""
    documents = {embed.stem(_plain(t)): n for n, t in counted}
    return {stem: log(1 + (total + 1) / (documents.get(stem, 0) + 1)) for stem in set(embed.words(_plain(query)))}


def _plain(text: str) -> str:
    """Text without diacritics, as the index reads it (remove_diacritics): 'café' -> 'cafe'."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def coverage(weights: dict, row, context: str = "") -> float:
    """How much of the query (its weighted words) a memory holds, in its text or context: 0 to 1."""
    held = set(embed.words(_plain(" ".join((row["title"], row["gist"], context or "")))))
    total = sum(weights.values())
    return sum(w for stem, w in weights.items() if stem in held) / total if total else 0.0


def score(relevance: float, at: str, strength: float, now) -> float:
    """The design's score of one memory; now is a timestamp or a datetime."""
    if isinstance(now, str):
        now = parse_time(now)
    age_days = max(0.0, (now - parse_time(at)).total_seconds() / 86400)
    recency = 2 ** (-age_days / RECENCY_HALF_LIFE_DAYS)
    return W_RELEVANCE * relevance + W_RECENCY * recency + W_STRENGTH * min(strength, STRENGTH_CAP) / STRENGTH_CAP


def touch_episodes(store: Store, ids: list, now: str) -> None:
    """Strengthen what was recalled; a recalled archived episode is revived."""
    if ids:
        store.touch_episodes(ids, TOUCH_STRENGTH, now)


# --------------------------------------------------------------------------------------
# Project scope: a session in repo/sub belongs to the project of repo. Paths stored in
# the database may not exist on this machine, so they are compared as text first.

def project_scope(cwd):
    """A predicate: is a memory with this cwd in the project of cwd (or meant everywhere)?"""
    foreign = {paths.project_key(str(cwd)).rstrip("\\")} if paths.is_foreign(cwd) else set()
    given = os.path.abspath(os.path.expanduser(str(cwd)))
    roots = {given, os.path.realpath(given)}
    if os.path.isdir(given):
        roots.update(str(root) for root in (paths.work_tree(given), paths.git_root(given)) if root)
    main = _main_root(given)
    cache = {}

    def in_project(memory_cwd) -> bool:
        if not memory_cwd:
            return True  # a lesson or note that applies everywhere
        if memory_cwd not in cache:
            if paths.is_foreign(memory_cwd):    # another machine's Windows folder: by its text, without case
                key = paths.project_key(memory_cwd).rstrip("\\")
                cache[memory_cwd] = any(key == k or key.startswith(k + "\\") for k in foreign)
            else:
                cache[memory_cwd] = (any(memory_cwd == r or memory_cwd.startswith(r.rstrip("/") + "/") for r in roots)
                                     or (main is not None and _main_root(memory_cwd) == main))
        return cache[memory_cwd]
    return in_project


def _main_root(path):
    """The project (paths.project_of) of path, when path exists here."""
    return paths.project_of(path) if os.path.isdir(path) else None


# --------------------------------------------------------------------------------------
# Choosing candidates (the store runs the index queries and reads the rows they name).

def has_index(store: Store) -> bool:
    """Whether this database has the full-text index (SQLite with FTS5 when it was made)."""
    return store.has_recall_index()


def _lexical_scores(store: Store, terms: list, field_weights=FIELD_WEIGHTS):
    """({index rowid: BM25 (higher is better)} of the best candidates, [(documents, term)]
    as counted), or None without FTS5."""
    if not has_index(store):
        return None
    try:
        counted = sorted((_documents_with(store, t), i, t) for i, t in enumerate(terms))
        counted = [(n, t) for n, _, t in counted]
        chosen, total = [], 0
        for n, term in counted:
            if n and total + n <= POSTINGS_BUDGET:
                chosen.append(term)
                total += n
        if not any(n for n, _ in counted):
            return {}, counted
        if chosen:
            rows = store.best_indexed(match_expression(chosen), field_weights, CANDIDATES)
            return {rowid: -b for rowid, b in rows}, counted
        # Every term is common: score the newest rows that hold all of them (else any).
        common = [t for n, t in counted if n]
        for all_of in (True, False):
            rows = store.newest_indexed(match_expression(common, all_of), field_weights, POSTINGS_BUDGET)
            if rows:
                rows.sort(key=lambda r: r[1])
                return {rowid: -b for rowid, b in rows[:CANDIDATES]}, counted
        return {}, counted
    except sqlite3.OperationalError:
        return None  # an index made by an SQLite with FTS5, read by one without: vectors alone


def _idf(total: int, n: int) -> float:
    """FTS5's IDF (fts5_aux.c): log((N − n + 0.5) / (n + 0.5)), never below 1e-6."""
    return max(1e-6, log((total - n + 0.5) / (n + 0.5)))


def _feedback_scores(store: Store, counted: list, hits: list, field_weights) -> dict:
    """{index rowid: BM25} for the strongest words of the first hits that the query lacks."""
    have = {embed.stem(t) for _, t in counted}
    docs, freq = {}, {}
    for hit in hits:
        seen = set()
        for word in _WORD.findall((hit["title"] + " " + hit["gist"]).lower()):
            stem = embed.stem(word)
            if word in embed.STOP_WORDS or len(word) < 3 or word.isdigit() or stem in have:
                continue
            freq[word] = freq.get(word, 0) + 1
            if stem not in seen:
                seen.add(stem)
                docs[word] = docs.get(word, 0) + 1
    checked = sorted(freq, key=lambda w: (-docs.get(w, 0), -freq[w]))[:FEEDBACK_CHECKED]
    total = max(store.indexed_total(), 1)
    ranked = []
    for word in checked:
        n = _documents_with(store, word)
        if 1 < n <= POSTINGS_BUDGET:  # a word only the hit holds finds nothing new
            ranked.append((docs.get(word, 0) * _idf(total, n), word, n))
    chosen, postings = [], 0
    for _, word, n in sorted(ranked, reverse=True)[:FEEDBACK_TERMS]:
        if postings + n <= POSTINGS_BUDGET:
            chosen.append(word)
            postings += n
    if not chosen:
        return {}
    return {rowid: -b for rowid, b in store.best_indexed(match_expression(chosen), field_weights,
                                                           FEEDBACK_CANDIDATES)}


def _documents_with(store: Store, term: str) -> int:
    """How many indexed rows hold term, counted up to just past the budget (cheap for any term)."""
    return store.indexed_count(match_expression([term]), POSTINGS_BUDGET + 1)


def _rows(store: Store, keys: list, include_archived: bool) -> list:
    """The live (or all) episodes and lessons named by index rowids (lessons are negative)."""
    return store.recall_rows([k for k in keys if k > 0], [-k for k in keys if k < 0], include_archived)


def _fallback_candidates(store: Store, query: str, include_archived: bool) -> list:
    """Without FTS5: the newest rows whose title or gist holds a stem of the query."""
    stems = sorted(set(embed.words(query)))
    if not stems:
        return []
    return store.rows_holding(stems, include_archived, FALLBACK_SCAN)


def _index_key(row) -> int:
    return -row["id"] if row["kind"] == "lesson" else row["id"]
