"""A JSONL record: the value of one line, as json.loads reads it, with less on the way."""
import json
import json.scanner

# json.loads without its wrappers: the C scanner it uses, called once per record.
_scan = json.scanner.make_scanner(json.JSONDecoder())
_JSON_SPACE = " \t\n\r"


def record(line: str):
    """json.loads(line): the same value, or ValueError. A line that starts with `{` (every record
    Claude Code writes) goes straight to json's C scanner."""
    if not line.startswith("{"):
        return json.loads(line)
    try:
        value, end = _scan(line, 0)
    except StopIteration as e:
        raise ValueError(f"not JSON at {e.value}") from None
    if end != len(line) and line[end:].strip(_JSON_SPACE):
        raise ValueError("extra data after a record")
    return value
