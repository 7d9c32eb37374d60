"""kgmem: long-term memory for LLM agents that believes nothing without evidence."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kgmem")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0.0.0+unknown"

from kgmem.config import Settings, load_settings
from kgmem.errors import KgmemError

__all__ = ["KgmemError", "Settings", "__version__", "load_settings"]
