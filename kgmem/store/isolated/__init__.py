"""Users' queries in processes of their own: stopped when they run too long, capped in memory.

See :mod:`kgmem.store.isolated.pool` for the parent's side and
:mod:`kgmem.store.isolated.child` for the worker.
"""

from kgmem.store.isolated.pool import QueryProcesses, Snapshottable

__all__ = ["QueryProcesses", "Snapshottable"]
