"""Shortening text for a line or a field: the one way openmemory cuts text, with '…'."""


def clip(text, limit: int) -> str:
    """Text on one line (whitespace runs folded) of at most limit characters, cut with '…'."""
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def clip_block(text: str, limit: int) -> str:
    """Text with its lines kept (a pasted message, an error output), at most limit characters."""
    text = (text or "").strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
