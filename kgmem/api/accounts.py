"""Accounts and API keys: who may call the server, as whom, in the ``urn:kgmem:accounts`` graph.

A key is ``kgm_<key id>_<secret>``: the id (12 hex digits) finds the key, the secret (43
URL-safe characters, 256 bits) proves it. Only the SHA-256 of the secret is stored (a secret
of 256 random bits needs no slow hash), and it is compared in constant time; the whole key is
shown once, when it is made. A revoked key or account authenticates nothing; revoking is a
date, never a deletion, so ``kgmem users list`` shows what was revoked when.

Roles: ``user`` (its own graphs only) and ``admin`` (also the catalogue, shapes, other
accounts and reset). No user's query can read this graph: every surface scopes queries to
the caller's graphs and the catalogue.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import threading
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.clock import Clock, SystemClock
from kgmem.errors import AccountError, Unauthenticated
from kgmem.store import (
    ACCOUNTS_GRAPH,
    Bindings,
    Changeset,
    Quad,
    QueryRegistry,
    TripleStore,
    check_id,
    instant,
)
from kgmem.vocab import KGM, RDF

__all__ = ["Account", "Accounts", "ApiKey", "IssuedKey", "Principal", "Role", "write_key_file"]

_KEY = re.compile(r"kgm_([0-9a-f]{12})_([A-Za-z0-9_-]{43})")
_NODE = "https://w3id.org/kgmem/account/"


class Role(StrEnum):
    USER = "user"
    ADMIN = "admin"


@dataclass(frozen=True)
class Principal:
    """Who a request acts as: the account's user id (the only scope a surface uses)."""

    uid: str
    role: Role
    key_id: str
    host: bool = False  # a host key: what it reports of a chat is first-hand (reflect_session)

    @property
    def admin(self) -> bool:
        return self.role is Role.ADMIN


@dataclass(frozen=True)
class Account:
    uid: str
    role: Role
    created_at: datetime
    name: str | None = None
    revoked_at: datetime | None = None
    keys: int = 0  # live keys


@dataclass(frozen=True)
class ApiKey:
    key_id: str
    created_at: datetime
    label: str | None = None
    revoked_at: datetime | None = None
    host: bool = False


@dataclass(frozen=True)
class IssuedKey:
    """A key just made: ``token`` is shown now and never again."""

    uid: str
    key_id: str
    token: str


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _when(value: datetime) -> Literal:
    return Literal(value, datatype=XSD.dateTime)


class Accounts:
    """The account registry over the store; thread-safe. Authentication results are cached
    per key id and dropped by every change made here (this process owns the store)."""

    def __init__(
        self, store: TripleStore, queries: QueryRegistry, clock: Clock | None = None
    ) -> None:
        self._store, self._queries = store, queries
        self._clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[str, Principal]] = {}

    # -- reading -------------------------------------------------------------------------

    def all(self) -> list[Account]:
        """Every account, by user id."""
        rows = self._store.select(self._queries["accounts/accounts"], {"graph": ACCOUNTS_GRAPH})
        live: dict[str, set[str]] = {}
        found: dict[str, Account] = {}
        for row in rows:
            uid = str(row["uid"])
            live.setdefault(uid, set()).update([str(row["live"])] if "live" in row else [])
            found[uid] = Account(
                uid=uid,
                role=Role(str(row["role"])),
                created_at=instant(row["created"]) or self._clock.now(),
                name=str(row["name"]) if "name" in row else None,
                revoked_at=instant(row.get("revoked")),
            )
        return [replace(a, keys=len(live[uid])) for uid, a in sorted(found.items())]

    def get(self, uid: str) -> Account:
        found = [a for a in self.all() if a.uid == check_id(uid, "user id")]
        if not found:
            raise AccountError(uid, "no such account")
        return found[0]

    def keys(self, uid: str) -> list[ApiKey]:
        self.get(uid)
        bindings = {"graph": ACCOUNTS_GRAPH, "account": _account(uid)}
        return [
            ApiKey(
                key_id=str(row["keyId"]),
                created_at=instant(row["created"]) or self._clock.now(),
                label=str(row["label"]) if "label" in row else None,
                revoked_at=instant(row.get("revoked")),
                host="host" in row,
            )
            for row in self._store.select(self._queries["accounts/keys"], bindings)
        ]

    def any(self) -> bool:
        return bool(self.all())

    # -- authentication ------------------------------------------------------------------

    def authenticate(self, token: str) -> Principal:
        """The principal ``token`` stands for; :class:`Unauthenticated` otherwise."""
        match = _KEY.fullmatch(token.strip())
        if match is None:
            raise Unauthenticated("malformed API key (expected kgm_<id>_<secret>)")
        key_id, secret = match.groups()
        with self._lock:
            entry = self._cache.get(key_id)
        if entry is None:  # only live keys are cached: unknown ids cannot fill the cache
            entry = self._load(key_id)
            if entry is not None:
                with self._lock:
                    self._cache[key_id] = entry
        if entry is None or not hmac.compare_digest(entry[0], _hash(secret)):
            raise Unauthenticated("API key not accepted (unknown or revoked)")
        return entry[1]

    def _load(self, key_id: str) -> tuple[str, Principal] | None:
        bindings: Bindings = {"graph": ACCOUNTS_GRAPH, "keyId": Literal(key_id)}
        rows = self._store.select(self._queries["accounts/key"], bindings)
        if len(rows) != 1 or "keyRevoked" in rows[0] or "accountRevoked" in rows[0]:
            return None
        row = rows[0]
        principal = Principal(str(row["uid"]), Role(str(row["role"])), key_id, "host" in row)
        return str(row["hash"]), principal

    # -- changes -------------------------------------------------------------------------

    def add(
        self, uid: str, *, role: Role = Role.USER, name: str | None = None, label: str = "first"
    ) -> IssuedKey:
        """A new account with its first key."""
        check_id(uid, "user id")
        if any(a.uid == uid for a in self.all()):
            raise AccountError(
                uid,
                f"already exists: add a key with `kgmem users token {uid}`, or while a server"
                f" runs with POST /api/admin/users/{uid}/keys",
            )
        account, g = _account(uid), ACCOUNTS_GRAPH
        quads = [
            Quad(account, RDF.type, KGM.Account, g),
            Quad(account, KGM.accountId, Literal(uid), g),
            Quad(account, KGM.role, Literal(role.value), g),
            Quad(account, KGM.createdAt, _when(self._clock.now()), g),
        ]
        if name:
            quads.append(Quad(account, KGM.name, Literal(name), g))
        issued, key_quads = self._new_key(uid, label)
        self._commit(Changeset.of([*quads, *key_quads], []))
        return issued

    def issue(self, uid: str, label: str | None = None, *, host: bool = False) -> IssuedKey:
        """Another key for an existing, live account (``host``: for the application the
        agent runs in, whose reports of a chat are first-hand)."""
        account = self.get(uid)
        if account.revoked_at is not None:
            raise AccountError(uid, "is revoked")
        issued, quads = self._new_key(uid, label, host=host)
        self._commit(Changeset.of(quads, []))
        return issued

    def revoke(self, uid: str, key_id: str | None = None) -> int:
        """Revoke one key of ``uid`` (``key_id``), or the account and every key; how many
        keys were live and are not any more."""
        account = self.get(uid)
        now, g = _when(self._clock.now()), ACCOUNTS_GRAPH
        live = [k for k in self.keys(uid) if k.revoked_at is None]
        if key_id is not None:
            live = [k for k in live if k.key_id == key_id]
            if not live and all(k.key_id != key_id for k in self.keys(uid)):
                raise AccountError(uid, f"has no key {key_id}")
        quads = [Quad(_key(k.key_id), KGM.revokedAt, now, g) for k in live]
        if key_id is None and account.revoked_at is None:
            quads.append(Quad(_account(uid), KGM.revokedAt, now, g))
        if quads:
            self._commit(Changeset.of(quads, []))
        return len(live)

    def _new_key(
        self, uid: str, label: str | None, *, host: bool = False
    ) -> tuple[IssuedKey, list[Quad]]:
        key_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        key, g = _key(key_id), ACCOUNTS_GRAPH
        quads = [
            Quad(key, RDF.type, KGM.ApiKey, g),
            Quad(key, KGM.keyId, Literal(key_id), g),
            Quad(key, KGM.keyOf, _account(uid), g),
            Quad(key, KGM.secretHash, Literal(_hash(secret)), g),
            Quad(key, KGM.createdAt, _when(self._clock.now()), g),
        ]
        if label:
            quads.append(Quad(key, KGM.label, Literal(label), g))
        if host:
            quads.append(Quad(key, KGM.hostKey, Literal(True), g))
        return IssuedKey(uid, key_id, f"kgm_{key_id}_{secret}"), quads

    def _commit(self, changes: Changeset) -> None:
        self._store.commit(changes)
        with self._lock:
            self._cache.clear()


def _account(uid: str) -> URIRef:
    return URIRef(f"{_NODE}{uid}")


def _key(key_id: str) -> URIRef:
    return URIRef(f"{_NODE}key/{key_id}")


def write_key_file(path: Path, token: str) -> None:
    """Keep ``token`` in ``path``, readable by its owner only (0600 from the start)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")
