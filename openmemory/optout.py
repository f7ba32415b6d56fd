"""Projects the person keeps out of memory: a `.openmemory-ignore` file, or a listed folder.

A session whose working folder is at or below a folder holding `.openmemory-ignore`, or
at or below a folder listed in ~/.openmemory/ignore (one per line, `#` comments, `~`
expanded: for places the person cannot write a file into), is not ingested, and no
lesson is rendered into that project's memory folder.
"""
import os
from pathlib import Path

from . import paths

MARKER = ".openmemory-ignore"


def listed_folders() -> list:
    """The folders of ~/.openmemory/ignore, resolved; a missing or unreadable file lists none."""
    try:
        text = paths.ignore_list_path().read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(Path(os.path.realpath(os.path.expanduser(line))))
    return out


class OptOut:
    """Answers "is this working folder kept out?", reading the list once and each folder once."""

    def __init__(self):
        self.listed = listed_folders()
        self._seen = {}

    def reason(self, cwd) -> str | None:
        """Why a session in cwd is kept out (the marker or the list entry), or None."""
        if not cwd or not isinstance(cwd, str):
            return None
        if cwd not in self._seen:
            self._seen[cwd] = self._reason(cwd)
        return self._seen[cwd]

    def _reason(self, cwd: str) -> str | None:
        here = Path(os.path.realpath(os.path.expanduser(cwd)))
        chain = (here, *here.parents)
        for folder in chain:
            if (folder / MARKER).exists():
                return str(folder / MARKER)
        for folder in self.listed:
            if folder in chain:
                return f"{folder} (listed in {paths.ignore_list_path()})"
        return None


def reason(cwd) -> str | None:
    """Why a session in cwd is kept out of memory, or None (one-off; use OptOut for many)."""
    return OptOut().reason(cwd)
