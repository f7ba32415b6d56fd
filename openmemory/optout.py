"""Projects the person keeps out of memory: a `.openmemory-ignore` file, or a listed folder.

A session whose working folder is at or below a folder holding `.openmemory-ignore`, or
at or below a folder listed in ~/.openmemory/ignore (one per line, `#` comments, `~`
expanded: for places the person cannot write a file into), is not ingested, and no
lesson is rendered into that project's memory folder.
"""
import os
from pathlib import Path

from . import paths, transcripts

MARKER = ".openmemory-ignore"
TRANSCRIPTS_READ = 20       # a project folder's transcripts read (first records only) to learn its folder


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
        self._folders = None
        self._folder_seen = {}

    def reason(self, cwd) -> str | None:
        """Why a session in cwd is kept out (the marker or the list entry), or None."""
        if not cwd or not isinstance(cwd, str):
            return None
        if cwd not in self._seen:
            self._seen[cwd] = self._reason(cwd)
        return self._seen[cwd]

    def memory_folder(self, folder: Path, cwds=()) -> str | None:
        """Why a Claude Code memory folder belongs to a project kept out, or None.

        Its project is known from the stored sessions' working folders (cwds) that map to
        it, and from the first records of the transcripts Claude Code keeps beside it.
        """
        key = str(folder)
        if key not in self._folder_seen:
            self._folder_seen[key] = None
            if self._folders is None:  # each stored working folder's memory folder, found once
                self._folders = {}
                for cwd in cwds:
                    self._folders.setdefault(str(paths.memory_dir_for(cwd)), []).append(cwd)
            known = self._folders.get(key, [])
            for cwd in known:
                if self.reason(cwd):
                    self._folder_seen[key] = self.reason(cwd)
                    break
            if not known:  # a project never ingested: its transcripts' first records say where
                for transcript in sorted(Path(folder).parent.glob("*.jsonl"))[:TRANSCRIPTS_READ]:
                    try:
                        with open(transcript, "rb") as f:
                            cwd = transcripts.working_folder(f)
                    except OSError:
                        continue
                    if self.reason(cwd):
                        self._folder_seen[key] = self.reason(cwd)
                        break
        return self._folder_seen[key]

    def _reason(self, cwd: str) -> str | None:
        here = Path(os.path.realpath(os.path.expanduser(cwd)))
        chain = (here, *here.parents)
        for folder in chain:
            try:
                if (folder / MARKER).exists():
                    return str(folder / MARKER)
            except OSError:  # a name too long for this file system, a folder we may not read
                continue
        for folder in self.listed:
            if folder in chain:
                return f"{folder} (listed in {paths.ignore_list_path()})"
        return None


def reason(cwd) -> str | None:
    """Why a session in cwd is kept out of memory, or None (one-off; use OptOut for many)."""
    return OptOut().reason(cwd)
