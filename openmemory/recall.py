"""Recall: find the past episodes and lessons that answer a query, fast, at any size.

Score (the design's): 0.6·relevance + 0.25·2^(−age/30 days) + 0.15·min(strength, 2)/2.
Relevance fuses two channels over one candidate set:

- lexical: SQLite FTS5 BM25 (Porter stemmer, field weights) over the `recall_index`
  table that migration m003 keeps in sync with episodes and lessons by triggers;
- vector: cosine of the 256-dimension hashed word-and-bigram vectors (embed.py), which
  sees every word of the query, common ones included, and word order (bigrams).

Candidates come from the index, never from reading every row; each channel is scaled to
[0, 1] by its best candidate (its theoretical minimum is 0) and the two are mixed by a
convex combination (Bruch, Gai and Ingber, "An Analysis of Fusion Functions for Hybrid
Retrieval", ACM TOIS 2023: a convex combination of normalised scores does at least as
well as reciprocal rank fusion and keeps the score gaps that RRF throws away, which
matter here because relevance is then mixed with recency and strength). Where SQLite
has no FTS5, a substring filter on the query's stems picks the candidates and the
vector channel alone ranks them.
"""
import os
import re
import sqlite3

from . import embed, paths
from .clock import iso, parse_time
from .store import Store

# The design's score (spec, "Data flow in detail").
W_RELEVANCE, W_RECENCY, W_STRENGTH = 0.6, 0.25, 0.15
RECENCY_HALF_LIFE_DAYS = 30.0
STRENGTH_CAP = 2.0
TOUCH_STRENGTH = 0.1            # added to an episode each time recall returns it

# Fusion. BM25 carries what the hashed vector lacks (IDF, length normalisation, no hash
# collisions) and is much the stronger channel (issue 3: 0.58 vs 0.17 R@5 on a public
# conversational benchmark), so it gets the larger share; the vector channel re-ranks
# the lexical candidates by the words BM25 had to leave out and by word pairs.
LEXICAL_SHARE = 0.7
# BM25F field weights (title, body = gist or lesson text, detail): a title is a
# one-line summary, so its words count double; detail is raw text (every prompt of a
# session, a whole error output) and mostly repeats the gist, so it counts half.
FIELD_WEIGHTS = (2.0, 1.0, 0.5)

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
           now: str | None = None, lexical_share: float = LEXICAL_SHARE) -> list:
    """Rank without touching anything. lexical_share 1 is BM25 alone, 0 the vectors alone."""
    now = now or iso()
    k = int(k)
    terms = query_terms(query)
    if not terms or k <= 0:
        return []
    lexical = _lexical_scores(store, terms) if lexical_share > 0 else None
    if lexical is None:
        rows = _fallback_candidates(store, query, include_archived)
    else:
        rows = _rows(store, list(lexical), include_archived)
    scope = project_scope(cwd) if cwd else None
    return rank(rows, lexical, embed.vector(query), now, scope, lexical_share)[:k]


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
         lexical_share: float = LEXICAL_SHARE) -> list:
    """Score candidate rows and order them: in-project first (when scoped), then by score."""
    query = {i: x for i, x in enumerate(qvec) if x}  # already unit length; few words: sparse
    cosines = [max(0.0, embed.stored_cosine(query, row["embedding"])) for row in rows]
    best_cos = max(cosines, default=0.0)
    best_lex = max(lexical.values(), default=0.0) if lexical else 0.0
    now = parse_time(now)
    hits = []
    for row, cos in zip(rows, cosines):
        vec = cos / best_cos if best_cos > 0 else 0.0
        if lexical is None:
            relevance = vec
        else:
            lex = lexical.get(_index_key(row), 0.0) / best_lex if best_lex > 0 else 0.0
            relevance = lexical_share * lex + (1 - lexical_share) * vec
        if relevance <= 0:
            continue
        hit = {key: row[key] for key in ("id", "kind", "title", "gist", "cwd", "at", "strength", "recalls")}
        hit["archived"] = bool(row["archived"])
        hit["relevance"] = round(relevance, 4)
        hit["score"] = round(score(relevance, row["at"], row["strength"], now), 4)
        hit["in_project"] = None if scope is None else scope(row["cwd"])
        hits.append(hit)
    hits.sort(key=lambda h: (bool(h["in_project"]), h["score"], h["at"], h["kind"] != "lesson", h["id"]),
              reverse=True)
    return hits


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


def _lexical_scores(store: Store, terms: list):
    """{index rowid: BM25 score (higher is better)} of the best candidates; None without FTS5."""
    if not has_index(store):
        return None
    try:
        counted = sorted((_documents_with(store, t), i, t) for i, t in enumerate(terms))
        chosen, total = [], 0
        for n, _, term in counted:
            if n and total + n <= POSTINGS_BUDGET:
                chosen.append(term)
                total += n
        if not any(n for n, _, _ in counted):
            return {}
        if chosen:
            rows = store.best_indexed(match_expression(chosen), FIELD_WEIGHTS, CANDIDATES)
            return {rowid: -b for rowid, b in rows}
        # Every term is common: score the newest rows that hold all of them (else any).
        common = [t for n, _, t in counted if n]
        for all_of in (True, False):
            rows = store.newest_indexed(match_expression(common, all_of), FIELD_WEIGHTS, POSTINGS_BUDGET)
            if rows:
                rows.sort(key=lambda r: r[1])
                return {rowid: -b for rowid, b in rows[:CANDIDATES]}
        return {}
    except sqlite3.OperationalError:
        return None  # an index made by an SQLite with FTS5, read by one without: vectors alone


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
