"""Shortening text for a line or a field: the one way openmemory cuts text, with '…'."""


def clip(text, limit: int) -> str:
    """Text on one line (whitespace runs folded) of at most limit characters, cut with '…'."""
    text = str(text or "")
    if len(text) > 4 * limit > 0:
        # A long text's start, folded, is the start of the whole text folded: when it is already
        # longer than limit, the rest (a whole tool output, say) need not be folded at all.
        head = " ".join(text[: 4 * limit].split())
        if len(head) > limit:
            return head[: limit - 1].rstrip() + "…"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def clip_block(text: str, limit: int) -> str:
    """Text with its lines kept (a pasted message, an error output), at most limit characters."""
    text = (text or "").strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
