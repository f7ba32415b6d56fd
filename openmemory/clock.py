"""Time: ISO 8601 UTC with microseconds everywhere, so text order is time order."""
import re
from datetime import date, datetime, timezone

# Claude Code's own timestamps ('2026-02-11T21:41:48.049Z'): canonical once three zeros are
# added, when their date is a real one (each date checked once); every other text is parsed.
_MILLIS_Z = re.compile(r"[1-9]\d{3}-\d\d-\d\dT(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z")
_REAL_DATES: dict = {}      # 'YYYY-MM-DD' -> whether it is a date


def iso(value=None) -> str:
    """Canonical timestamp text ('2026-02-11T21:41:48.049000Z') of a datetime or ISO string; now if None."""
    if value is None:  # isoformat is strftime's text for any year from 1000 on, in a tenth of the time
        return datetime.now(timezone.utc).isoformat(timespec="microseconds")[:-6] + "Z"
    if isinstance(value, str):
        if _MILLIS_Z.fullmatch(value) and _real_date(value[:10]):
            return value[:-1] + "000Z"
        value = parse_time(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _real_date(text: str) -> bool:
    known = _REAL_DATES.get(text)
    if known is None:
        try:
            known = bool(date.fromisoformat(text))
        except ValueError:
            known = False
        if len(_REAL_DATES) < 4096:
            _REAL_DATES[text] = known
    return known


def parse_time(text: str) -> datetime:
    """Parse an ISO 8601 timestamp (a trailing Z, or none, means UTC); raises ValueError."""
    text = text.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def iso_or_none(ts):
    """Canonical timestamp text of ts, or None when it is empty or not a time."""
    if not ts:
        return None
    try:
        return iso(ts)
    except (ValueError, TypeError):
        return None
