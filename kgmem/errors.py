"""The kgmem exception tree.

Every error kgmem raises on purpose is a ``KgmemError``; each builds its message from typed
fields, so callers can react to the fields and people can read the message::

    KgmemError
    ├── ConfigError
    │   ├── ConfigFileError          (path, reason)        unreadable or malformed kgmem.toml
    │   ├── UnknownSetting           (name, origin)        a key no setting declares
    │   └── InvalidSetting           (name, value, reason, origin)
    ├── StoreError
    │   ├── StoreLocked              (path)                another process holds the store
    │   ├── StoreCorrupt             (path, reason)        the store directory cannot be read
    │   ├── StoreClosed              ()                    used after close()
    │   ├── QueryRefused             (reason)              a caller's query is not allowed
    │   ├── ResultLimitExceeded      (limit)               a caller's query returns too much
    │   └── StoreOperationFailed     (operation, reason)   the backend refused a query or write
    ├── QueryError
    │   ├── QuerySyntaxError         (path, line, column, reason)
    │   ├── UnknownQuery             (name)
    │   ├── QueryKindMismatch        (name, expected, actual)
    │   └── BindingError             (name, variable, reason)
    ├── GraphNameError               (value, reason)       an id or graph IRI outside the scheme
    └── ResourceError                (path, reason)        a bundled ontology/shapes file is broken

Third-party exceptions are wrapped only inside adapters (``raise ... from exc``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BindingError",
    "ConfigError",
    "ConfigFileError",
    "GraphNameError",
    "InvalidSetting",
    "KgmemError",
    "QueryError",
    "QueryKindMismatch",
    "QueryRefused",
    "QuerySyntaxError",
    "ResourceError",
    "ResultLimitExceeded",
    "StoreClosed",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "StoreOperationFailed",
    "UnknownQuery",
    "UnknownSetting",
]


class KgmemError(Exception):
    """Root of every error kgmem raises on purpose."""


class ConfigError(KgmemError):
    """The settings could not be built."""


class ConfigFileError(ConfigError):
    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"config file {path}: {reason}")


class UnknownSetting(ConfigError):
    def __init__(self, name: str, origin: str) -> None:
        self.name = name
        self.origin = origin
        super().__init__(f"unknown setting {name!r} in {origin}")


class InvalidSetting(ConfigError):
    def __init__(self, name: str, value: object, reason: str, origin: str) -> None:
        self.name = name
        self.value = value
        self.reason = reason
        self.origin = origin
        super().__init__(f"setting {name!r} = {value!r} from {origin}: {reason}")


class StoreError(KgmemError):
    """The triple store could not do what was asked."""


class StoreLocked(StoreError):
    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(
            f"store {path} is locked by another process (a running kgmem server?); "
            "stop it or talk to it over HTTP"
        )


class StoreCorrupt(StoreError):
    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"store {path} cannot be opened: {reason}")


class StoreClosed(StoreError):
    def __init__(self) -> None:
        super().__init__("the store is closed")


class QueryRefused(StoreError):
    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"query refused: {reason}")


class ResultLimitExceeded(StoreError):
    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"the result has more than {limit} rows; add LIMIT or narrow the query")


class StoreOperationFailed(StoreError):
    def __init__(self, operation: str, reason: str) -> None:
        self.operation = operation
        self.reason = reason
        super().__init__(f"{operation} failed: {reason}")


class QueryError(KgmemError):
    """A named query is missing, malformed or misused."""


class QuerySyntaxError(QueryError):
    def __init__(self, path: str, line: int, column: int, reason: str) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.reason = reason
        super().__init__(f"{path}:{line}:{column}: {reason}")


class UnknownQuery(QueryError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"no query named {name!r} in queries/")


class QueryKindMismatch(QueryError):
    def __init__(self, name: str, expected: str, actual: str) -> None:
        self.name = name
        self.expected = expected
        self.actual = actual
        super().__init__(f"query {name!r} is a {actual}, used as a {expected}")


class BindingError(QueryError):
    def __init__(self, name: str, variable: str, reason: str) -> None:
        self.name = name
        self.variable = variable
        self.reason = reason
        super().__init__(f"query {name!r}, variable ?{variable}: {reason}")


class GraphNameError(KgmemError):
    def __init__(self, value: str, reason: str) -> None:
        self.value = value
        self.reason = reason
        super().__init__(f"{value!r}: {reason}")


class ResourceError(KgmemError):
    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")
