"""Stable IRIs for everything kgmem stores about a user.

All of a user's nodes live under ``https://w3id.org/kgmem/user/{uid}/``; the part after it
names the kind and an id. Sources get ids derived from what identifies them (a chat and a
turn, a task, a note path), so ingesting the same thing twice lands on the same node;
memories, evidence, entities and decisions get fresh random ids.

Node naming lives with graph naming in the store layer: the index reads a message's
neighbours by their IRIs (``message_node``) without asking the memory layer.
"""

from __future__ import annotations

import secrets
from enum import StrEnum
from hashlib import sha256

from rdflib import URIRef

from kgmem.errors import GraphNameError
from kgmem.store.graphs import USER_NODE_BASE, check_id

__all__ = ["NodeKind", "message_node", "new_node", "node_iri", "parse_node", "stable_node"]

_BASE = USER_NODE_BASE
_REPORTED = "agent-reported"


class NodeKind(StrEnum):
    MESSAGE = "msg"
    TASK = "task"
    NOTE = "note"
    SHORT_NOTE = "short"
    MEMORY = "memory"
    EVIDENCE = "evidence"
    CLAIM = "claim"
    ENTITY = "entity"
    DECISION = "decision"
    PASS = "pass"
    PREFERENCES = "prefs"
    QUEUED_DRAFT = "queued"
    PAGE = "page"


def node_iri(uid: str, kind: NodeKind, local: str) -> URIRef:
    return URIRef(f"{_BASE}{check_id(uid, 'user id')}/{kind.value}/{check_id(local)}")


def new_node(uid: str, kind: NodeKind) -> URIRef:
    """A fresh random node (128 bits)."""
    return node_iri(uid, kind, secrets.token_hex(16))


def stable_node(uid: str, kind: NodeKind, *parts: str) -> URIRef:
    """The same node for the same ``parts``: ``stable_node(u, MESSAGE, chat, "3")``."""
    digest = sha256("\x1f".join(parts).encode()).hexdigest()[:32]
    return node_iri(uid, kind, digest)


def message_node(uid: str, chat: str, turn: int, *, reported: bool = False) -> URIRef:
    """The node of turn ``turn`` of ``chat``; an agent's second-hand report of it
    (``reported``) has a node of its own, so it never blocks the first-hand message."""
    return stable_node(uid, NodeKind.MESSAGE, chat, str(turn), *((_REPORTED,) if reported else ()))


def parse_node(iri: str) -> tuple[str, NodeKind, str]:
    """(uid, kind, local id) of a kgmem node IRI; :class:`GraphNameError` otherwise.

    >>> parse_node("https://w3id.org/kgmem/user/alice/memory/abc")
    ('alice', <NodeKind.MEMORY: 'memory'>, 'abc')
    """
    if not iri.startswith(_BASE):
        raise GraphNameError(iri, "not a kgmem node")
    parts = iri[len(_BASE) :].split("/")
    if len(parts) != 3:
        raise GraphNameError(iri, "not a kgmem node")
    uid, kind, local = parts
    try:
        return check_id(uid), NodeKind(kind), check_id(local)
    except ValueError as exc:
        raise GraphNameError(iri, f"unknown node kind {kind!r}") from exc
