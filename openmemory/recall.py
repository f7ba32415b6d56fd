"""Recall: find the past episodes and lessons that answer a query.

Scoring (the design's): 0.6·relevance + 0.25·2^(−age/30 days) + 0.15·min(strength, 2)/2
over every unarchived episode and lesson; the top k are returned and the episodes among
them touched (+0.1 strength, +1 recall, last_touched now).

This first version scores by the hashed-vector cosine over every row; the hybrid,
index-driven version replaces `_candidates` and `_relevance` (ROADMAP.md, step 2).
"""
from . import embed
from .store import Store, iso, parse_time

W_RELEVANCE, W_RECENCY, W_STRENGTH = 0.6, 0.25, 0.15   # the design's weights
RECENCY_HALF_LIFE_DAYS = 30.0
STRENGTH_CAP = 2.0
TOUCH_STRENGTH = 0.1


def recall(store: Store, query: str, k: int = 5, cwd: str | None = None,
           include_archived: bool = False, now: str | None = None, touch: bool = True) -> list:
    """The k best hits for query, best first: dicts with id, kind, title, gist, cwd, at, score."""
    now = now or iso()
    qvec = embed.vector(query)
    hits = []
    for row in _candidates(store, include_archived):
        relevance = max(0.0, embed.cosine(qvec, row["embedding"]))
        hit = {key: row[key] for key in ("id", "kind", "title", "gist", "cwd", "at", "strength", "archived")}
        hit["score"] = round(score(relevance, row["at"], row["strength"], now), 4)
        hit["relevance"] = round(relevance, 4)
        hits.append(hit)
    hits.sort(key=lambda h: (h["score"], h["at"]), reverse=True)
    hits = [h for h in hits if h["relevance"] > 0][:k]
    if touch:
        touch_episodes(store, [h["id"] for h in hits if h["kind"] != "lesson"], now)
    return hits


def score(relevance: float, at: str, strength: float, now: str) -> float:
    """The design's score of one memory."""
    age_days = max(0.0, (parse_time(now) - parse_time(at)).total_seconds() / 86400)
    recency = 2 ** (-age_days / RECENCY_HALF_LIFE_DAYS)
    return W_RELEVANCE * relevance + W_RECENCY * recency + W_STRENGTH * min(strength, STRENGTH_CAP) / STRENGTH_CAP


def touch_episodes(store: Store, ids: list, now: str) -> None:
    """Strengthen what was recalled; a recalled archived episode is revived."""
    if not ids:
        return
    with store.transaction():
        store.db.executemany(
            "UPDATE episodes SET strength = strength + ?, recalls = recalls + 1, last_touched = ?, "
            "archived = 0 WHERE id = ?", [(TOUCH_STRENGTH, now, i) for i in ids])


def _candidates(store: Store, include_archived: bool):
    archived = "" if include_archived else " WHERE NOT archived"
    for row in store.db.execute(
            "SELECT id, kind, title, gist, cwd, at, strength, archived, embedding FROM episodes" + archived):
        yield row
    archived = " WHERE NOT vetoed" + ("" if include_archived else " AND NOT archived")
    for row in store.db.execute(
            "SELECT id, 'lesson' AS kind, text AS title, text AS gist, cwd, updated AS at, strength, archived, "
            "embedding FROM lessons" + archived):
        yield row
