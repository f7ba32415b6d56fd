"""openmemory: a memory for coding agents that lasts between sessions."""
import logging

__version__ = "0.1.0"

# A library logs, the CLI decides where to (serve and hook: the log file); silent otherwise.
logging.getLogger(__name__).addHandler(logging.NullHandler())
