"""Errors build their messages from typed fields."""

from __future__ import annotations

from pathlib import Path

from kgmem.errors import (
    BindingError,
    ConfigFileError,
    InvalidSetting,
    KgmemError,
    QuerySyntaxError,
    StoreLocked,
    UnknownSetting,
)


def test_messages_carry_their_fields() -> None:
    err = QuerySyntaxError("queries/a.rq", 3, 7, "expected }")
    assert (err.path, err.line, err.column) == ("queries/a.rq", 3, 7)
    assert str(err) == "queries/a.rq:3:7: expected }"
    assert "port" in str(InvalidSetting("port", 0, "must be >= 1", "environment"))
    assert str(UnknownSetting("prot", "config file x.toml")) == (
        "unknown setting 'prot' in config file x.toml"
    )
    assert "?g" in str(BindingError("q", "g", "bad"))
    assert str(Path("/s")) in str(StoreLocked(Path("/s")))
    assert isinstance(ConfigFileError(Path("x"), "bad"), KgmemError)
