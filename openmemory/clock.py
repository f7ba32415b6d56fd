"""Time: ISO 8601 UTC with microseconds everywhere, so text order is time order."""
from datetime import datetime, timezone


def iso(value=None) -> str:
    """Canonical timestamp text ('2026-02-11T21:41:48.049000Z') of a datetime or ISO string; now if None."""
    if value is None:
        value = datetime.now(timezone.utc)
    elif isinstance(value, str):
        value = parse_time(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    """Parse an ISO 8601 timestamp (a trailing Z, or none, means UTC); raises ValueError."""
    text = text.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
