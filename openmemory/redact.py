"""Secret redaction: everything openmemory stores passes through `redact` first.

The patterns are the well-known shapes of credentials (provider token prefixes, private
key blocks, JWTs, credentials in URLs, `password=...` assignments). A false positive
costs a few characters of a memory; a false negative would copy a secret into a
database that outlives the transcript, so the patterns lean towards redacting.
"""
import re

# (name, pattern); the whole match is replaced unless the pattern has a group named
# "secret", in which case only that group is.
_PATTERNS = [
    ("private-key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)"),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{16,}"),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("stripe-key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("gitlab-token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"),
    ("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("google-oauth", r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("bearer", r"(?i)\b(?:bearer|token)\s+(?P<secret>[A-Za-z0-9_\-\.=+/]{20,})"),
    ("url-credentials", r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:(?P<secret>[^\s@/]+)@"),
    ("assignment", r"(?i)\b[A-Za-z0-9_\-]*(?:password|passwd|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|auth[_\-]?key|client[_\-]?secret)[A-Za-z0-9_\-]*"
                   r"[\"']?\s*[:=]\s*[\"']?(?P<secret>[^\s\"',;}{)(\]\[]{6,})"),
]
_COMPILED = [(name, re.compile(pattern)) for name, pattern in _PATTERNS]
# Values in an assignment that are clearly not secrets (placeholders, references).
_PLACEHOLDER = re.compile(r"^(?:\d+|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^>]*>|\*+|x+|\.\.\.|null|none|true|false|"
                          r"\[REDACTED[^\]]*\]|process\.env\.[A-Za-z0-9_]+|os\.environ.*|getenv.*)$", re.I)


def redact(text: str) -> str:
    """Return text with every credential-shaped substring replaced by [REDACTED:kind]."""
    if not text:
        return text
    for name, pattern in _COMPILED:
        if name in ("bearer", "url-credentials", "assignment"):
            text = pattern.sub(lambda m, n=name: _replace_group(m, n), text)
        else:
            text = pattern.sub(f"[REDACTED:{name}]", text)
    return text


def _replace_group(match: re.Match, name: str) -> str:
    secret = match.group("secret")
    if name == "assignment" and _PLACEHOLDER.match(secret):
        return match.group(0)
    start, end = match.span("secret")
    whole = match.group(0)
    offset = match.start()
    return whole[: start - offset] + f"[REDACTED:{name}]" + whole[end - offset:]


def redact_obj(value):
    """Redact every string inside a JSON-like value (dicts, lists, strings)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_obj(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_obj(v) for v in value]
    return value
