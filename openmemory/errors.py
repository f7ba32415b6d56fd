"""The errors a person can act on: one line each, said by the CLI as `openmemory: error: ...`."""


class OpenMemoryError(Exception):
    """An error the person can act on: one line, said by the CLI as `openmemory: error: ...`."""


class StoreError(OpenMemoryError):
    """The database cannot be opened or used."""


class RenderError(OpenMemoryError):
    """Render cannot proceed without risking the person's files."""
