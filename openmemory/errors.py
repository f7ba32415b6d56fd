"""The errors a person can act on: one line each, said by the CLI as `openmemory: error: ...`."""


class OpenMemoryError(Exception):
    """An error the person can act on: one line, said by the CLI as `openmemory: error: ...`."""


class StoreError(OpenMemoryError):
    """The database cannot be opened or used."""


class DamagedDatabase(StoreError):
    """The database file is damaged: the message names it and says how to recover."""


class RenderError(OpenMemoryError):
    """Render cannot proceed without risking the person's files."""
