"""Episodes made ready to store: redacted, with their context and hashed vector.

Pure and free of SQL, so a worker process can do it (ingest.workers) while the store,
the one writer, only writes. Store.replace_session prepares what it is given unprepared.
"""
from . import context, embed
from .redact import clean_episode, redact


def prepare(episodes: list) -> list:
    """Each episode redacted (clean_episode), with `context` (from redacted text: nothing is
    redacted twice), `embedding` (embed.encoded of title and gist) and its `legacy_key`."""
    cleaned = [dict(clean_episode(e), around=redact(e.get("around") or ""), legacy_key=e.get("legacy_key"))
               for e in episodes]
    for ep, ctx in zip(cleaned, context.session_contexts(cleaned)):
        ep["context"] = ctx
        ep["embedding"] = embed.encoded(ep["title"] + "\n" + ep["gist"])
        del ep["around"]
    return cleaned
