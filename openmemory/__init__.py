"""openmemory: a memory for coding agents that lasts between sessions."""
__version__ = "0.1.0"
