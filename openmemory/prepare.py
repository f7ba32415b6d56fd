"""Episodes made ready to store: redacted, with their context and hashed vector.

Pure and free of SQL, so a worker process can do it (ingest.workers) while the store,
the one writer, only writes. Store.replace_session prepares what it is given unprepared.
"""
from . import context, embed
from .redact import clean_episode, redactor_for, strings_in


def prepare(episodes: list) -> list:
    """Each episode redacted (clean_episode), with `context` (from redacted text: nothing is
    redacted twice), `embedding` (embed.encoded of title and gist) and its `legacy_key`.

    The episodes of one transcript repeat each other's words (a prompt is in the session's
    detail and in its correction's facts): their distinct texts pass the redaction gate once
    (redactor_for); when it finds nothing that could be a secret, nothing is redacted one by
    one, and when only a secret word, only that is looked for."""
    texts = []
    for e in episodes:
        texts += (e["title"], e["gist"], e.get("detail") or "", e.get("around") or "")
        strings_in(e.get("facts") or {}, texts)
    text = redactor_for(texts)
    cleaned = [dict(clean_episode(e, text), legacy_key=e.get("legacy_key"), around=text(e.get("around") or ""))
               for e in episodes]
    for ep, ctx in zip(cleaned, context.session_contexts(cleaned)):
        ep["context"] = ctx
        ep["embedding"] = embed.encoded(ep["title"] + "\n" + ep["gist"])
        del ep["around"]
    return cleaned
