"""What each of a user's nodes held when the projections last read it: a digest per subject.

A projection kept on disk records the user's stamp it is level with and catches up from the
outbox (:mod:`kgmem.index.feed_outbox`). When the outbox no longer holds the writes since
that stamp (the store was put back from a backup, or written behind kgmem's back), no one
knows which nodes changed, and the projection had to read the whole user again: minutes at
100k memories. :class:`Digests` is a third projection, fed like the others: per user and per
projected graph (kg, sources, quarantine) a digest of every subject's statements (read
from the graph subject by subject, or ``queries/index/digest_node.rq`` for some nodes), kept
in SQLite beside the other
projections with the stamp it is level with. After a drift, comparing the digests of the
store now with the ones kept names exactly the subjects that changed (added, altered,
removed): a projection level with the same stamp re-reads those (:meth:`Digests.since`),
as it would the nodes of outbox entries.

A user's digests exist once a whole reading of them (:meth:`Digests.settle`, which the server
runs after start-up) made them; until then a refresh of that user costs nothing here, and a
drift is repaired by a whole reading as before. The digests are trusted only as far as the
other projections are: a user whose digests are behind the store at start-up by writes the
outbox cannot replay is *suspect* (its recorded stamp is not moved by drains), until
:meth:`Digests.since` or :meth:`Digests.settle` reads it whole. Comparing costs one grouped
query per graph (~20 s for 100k memories on a 2-core machine), not the minutes of reading
the user's rows into each projection.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rdflib import URIRef

from kgmem.index.base import Links
from kgmem.index.feed_outbox import Outbox
from kgmem.index.slices import sliced
from kgmem.store import QueryRegistry, TextStatement, TripleStore, UserGraphs

__all__ = ["CaughtUp", "Digests"]

log = logging.getLogger("kgmem.index")

_WHOLE = 50_000  # more nodes in one refresh: read the user whole (a reset: nothing left)
# (a node costs ~0.25 ms, a whole read ~0.05 ms a subject: 24 s for 100k memories)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (uid TEXT PRIMARY KEY, id INTEGER NOT NULL UNIQUE,
                                  stamp INTEGER);
CREATE TABLE IF NOT EXISTS digests (user INTEGER NOT NULL, kind INTEGER NOT NULL,
                                    node TEXT NOT NULL, digest INTEGER NOT NULL,
                                    PRIMARY KEY (user, kind, node)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS caught (user INTEGER NOT NULL, since TEXT NOT NULL,
                                   stamp INTEGER, nodes TEXT NOT NULL);
"""
_KEPT = 8  # answers of since() kept per user (a projection may ask in a later process)
_ROWS = 10_000  # digests read from the store per insert
# a whole reading's digests, as they are read (a user's rows, then compared and dropped)
_FRESH = """CREATE TEMP TABLE IF NOT EXISTS fresh (uid TEXT NOT NULL, kind INTEGER NOT NULL,
    node TEXT NOT NULL, digest INTEGER NOT NULL, PRIMARY KEY (uid, kind, node)) WITHOUT ROWID"""
# the nodes whose digest differs: new or changed (fresh, not kept alike), or gone (kept only)
_DIFFER = """SELECT f.kind, f.node FROM fresh f WHERE f.uid = ? AND NOT EXISTS (SELECT 1
    FROM digests d WHERE d.user = ? AND d.kind = f.kind AND d.node = f.node
    AND d.digest = f.digest)
  UNION SELECT d.kind, d.node FROM digests d WHERE d.user = ? AND NOT EXISTS (SELECT 1
    FROM fresh f WHERE f.uid = ? AND f.kind = d.kind AND f.node = d.node)"""
_GONE = """DELETE FROM digests WHERE user = ? AND NOT EXISTS (SELECT 1 FROM fresh f
    WHERE f.uid = ? AND f.kind = digests.kind AND f.node = digests.node)"""
_NEW = """INSERT OR REPLACE INTO digests SELECT ?, f.kind, f.node, f.digest FROM fresh f
    WHERE f.uid = ? AND NOT EXISTS (SELECT 1 FROM digests d WHERE d.user = ?
    AND d.kind = f.kind AND d.node = f.node AND d.digest = f.digest)"""


Key = tuple[int, str]  # (graph kind's code, node: its IRI after the user's node base)
_Fresh = tuple[int, str, int]  # a key and its digest


@dataclass(frozen=True)
class CaughtUp:
    """The nodes that changed between a stamp and ``stamp`` (the store's when they were
    compared): what a projection level with the first re-reads to be level with this one."""

    nodes: frozenset[URIRef]
    stamp: int | None


class Digests:
    """The digests of every user's subjects, kept level with the store by the change feed
    (a :class:`kgmem.index.base.StampedTarget`); ``path`` None keeps them in memory."""

    def __init__(self, store: TripleStore, queries: QueryRegistry, path: Path | None) -> None:
        self._store, self._queries = store, queries
        self._outbox = Outbox(store, queries)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            ":memory:" if path is None else str(path), check_same_thread=False
        )
        self._db.executescript(_SCHEMA)
        self._db.execute(_FRESH)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._lock = threading.RLock()  # the connection and the maps below
        self._users: dict[str, threading.Lock] = {}  # one whole reading of a user at a time
        self._building: dict[str, set[URIRef]] = {}  # refreshed during a whole reading
        self._caught: dict[tuple[str, int | None], CaughtUp] = {}
        self._suspect = self._find_suspects()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- what is kept ------------------------------------------------------------------

    def recorded(self, uid: str) -> tuple[bool, int | None]:
        """Whether ``uid`` has digests, and the stamp they are level with."""
        with self._lock:
            row = self._db.execute("SELECT stamp FROM users WHERE uid = ?", (uid,)).fetchone()
        return (False, None) if row is None else (True, row[0])

    def suspect(self) -> list[str]:
        """The users whose digests were behind the store at start-up (see the module)."""
        with self._lock:
            return sorted(self._suspect)

    def held(self, uid: str) -> dict[Key, int]:
        """Every digest kept of ``uid``."""
        with self._lock:
            found = self._id(uid)
            if found is None:
                return {}
            rows = self._db.execute(
                "SELECT kind, node, digest FROM digests WHERE user = ?", (found,)
            )
            return {(kind, node): digest for kind, node, digest in rows}

    def of_store(self, uid: str) -> dict[Key, int]:
        """Every digest of ``uid``'s subjects as the store holds them now."""
        return {(code, node): digest for code, node, digest in self._fresh(uid)}

    def _fresh(self, uid: str) -> Iterator[_Fresh]:
        """``(graph's code, node, digest)`` of every subject of ``uid``'s graphs, read from
        the store's statements subject by subject: the digest ``index/digest_node`` gives
        one subject, made the same way (the store's own ``GROUP BY`` over a graph held every
        subject's text at once: a 1M-memory user ran this machine's 24 GB out)."""
        graphs = UserGraphs(uid)
        for graph, code in _codes(graphs).items():
            lines: list[str] = []
            current: str | None = None
            for statement in self._store.statements(graph):
                if statement.subject != current:
                    if current is not None:
                        yield code, _short(graphs, current), _digest(lines)
                    current, lines = statement.subject, []
                lines.append(f"{statement.predicate} {_object(statement)}")
            if current is not None:
                yield code, _short(graphs, current), _digest(lines)

    # -- the change feed ---------------------------------------------------------------

    def refresh(self, uid: str, nodes: Iterable[URIRef], links: Links | None = None) -> int:
        """Read the digests of ``nodes`` again (none kept: the user has none yet, nothing
        is read); how many nodes were read."""
        wanted = {URIRef(str(n)) for n in nodes}
        with self._lock:
            if uid in self._building:
                self._building[uid] |= wanted
                return 0
            # a suspect user's digests stay as they were at their stamp: what a projection
            # level with that stamp asks :meth:`since` about (the nodes read since then
            # show as changed, and are read again: never missed)
            if self._id(uid) is None or uid in self._suspect or not wanted:
                return 0
        if len(wanted) > _WHOLE:
            with self._user(uid):
                self._whole(uid, None)
            return len(wanted)
        self._write(uid, self._of_nodes(uid, wanted))
        return len(wanted)

    def level(self, uid: str, stamp: int | None) -> None:
        """The feed drained every write of ``uid`` up to ``stamp`` into the digests."""
        with self._lock:
            if uid in self._building or uid in self._suspect:
                return
            if self._id(uid) is not None:
                with self._db:
                    self._db.execute("UPDATE users SET stamp = ? WHERE uid = ?", (stamp, uid))

    # -- after a drift -----------------------------------------------------------------

    def since(self, uid: str, stamp: int | None) -> CaughtUp | None:
        """The nodes of ``uid`` that changed since ``stamp``, when the digests were level
        with it (a drift: the outbox no longer says); None when they were not. The digests
        are then level with the store; the answer is kept, so every projection level with
        ``stamp`` gets it at the cost of one comparison."""
        with self._user(uid):
            caught = self._answered(uid, stamp)
            if caught is not None:
                return caught
            present, recorded = self.recorded(uid)
            if not present or recorded != stamp:
                return None
            return self._whole(uid, stamp, answer=True)

    def settle(self, uid: str) -> bool:
        """Make ``uid``'s digests level with the store if they are not (none yet, or a
        drift no projection asked about); whether they had to be read whole."""
        present, recorded = self.recorded(uid)
        with self._lock:
            suspect = uid in self._suspect
        if present and not suspect and recorded == self._outbox.stamp(uid):
            return False
        with self._user(uid):
            self._whole(uid, recorded, answer=present)
        return True

    def users(self) -> list[str]:
        """Every user with digests kept."""
        with self._lock:
            return [uid for (uid,) in self._db.execute("SELECT uid FROM users ORDER BY uid")]

    def _answered(self, uid: str, since: int | None) -> CaughtUp | None:
        """What :meth:`since` answered about ``since`` before, in this process or another."""
        with self._lock:
            found = self._caught.get((uid, since))
            user = self._id(uid)
            if found is not None or user is None:
                return found
            row = self._db.execute(
                "SELECT stamp, nodes FROM caught WHERE user = ? AND since = ?"
                " ORDER BY rowid DESC LIMIT 1",
                (user, _text(since)),
            ).fetchone()
        if row is None:
            return None
        graphs = UserGraphs(uid)
        nodes = frozenset(_long(graphs, n) for n in row[1].split("\n") if n)
        found = self._caught[(uid, since)] = CaughtUp(nodes, row[0])
        return found

    def _whole(self, uid: str, since: int | None, *, answer: bool = False) -> CaughtUp:
        """Read ``uid``'s digests whole from the store and keep them, level with the stamp
        read first. ``answer``: the kept digests were level with ``since``, so the nodes
        whose digests differ are what changed since it (returned, and kept for
        :meth:`since`, on disk too). Refreshes meanwhile are read again after.

        The store's digests go into a temporary table as they are read, and SQLite
        compares them with those kept: a million subjects are never held in Python."""
        with self._lock:
            self._building.setdefault(uid, set())
            self._db.execute("DELETE FROM fresh WHERE uid = ?", (uid,))
        try:
            stamp = self._outbox.stamp(uid)  # first: what is read next holds every write to it
            for rows in sliced(self._fresh(uid), _ROWS):
                with self._lock:
                    self._db.executemany(
                        "INSERT OR REPLACE INTO fresh VALUES (?, ?, ?, ?)",
                        ((uid, *row) for row in rows),
                    )
            with self._lock:
                user = self._ensure(uid, stamp)
                found = self._db.execute(_DIFFER, (uid, user, user, uid)) if answer else ()
                changed = list(found)
                with self._db:
                    self._db.execute(_GONE, (user, uid))
                    self._db.execute(_NEW, (user, uid, user))
                    self._db.execute("UPDATE users SET stamp = ? WHERE uid = ?", (stamp, uid))
                self._suspect.discard(uid)
        finally:
            with self._lock:
                again = self._building.pop(uid, set())
                self._db.execute("DELETE FROM fresh WHERE uid = ?", (uid,))
        if again:
            self._write(uid, self._of_nodes(uid, again))
        graphs = UserGraphs(uid)
        nodes = {_long(graphs, node) for _, node in changed}
        caught = CaughtUp(frozenset(self._outbox.with_owners(uid, nodes)), stamp)
        if answer:
            self._keep(uid, since, caught)
            log.info("digests of %s: %d nodes changed since stamp %s", uid, len(nodes), since)
        return caught

    # -- reading and writing -----------------------------------------------------------

    def _of_nodes(self, uid: str, nodes: set[URIRef]) -> dict[URIRef, dict[int, int]]:
        """Per node, the digest in each of the user's projected graphs that has it."""
        graphs, query = UserGraphs(uid), self._queries["index/digest_node"]
        codes = _codes(graphs)
        found: dict[URIRef, dict[int, int]] = {}
        for node in sorted(nodes):
            found[node] = {}
            for row in self._store.select(query, {"node": node}):
                code, digest = codes.get(URIRef(str(row["graph"]))), row["digest"]
                if code is not None and digest is not None:
                    found[node][code] = _number(str(digest))
        return found

    def _write(self, uid: str, read: dict[URIRef, dict[int, int]]) -> None:
        graphs = UserGraphs(uid)
        with self._lock:
            if uid in self._building:  # a whole reading began meanwhile: it reads these after
                self._building[uid] |= read.keys()
                return
            user = self._id(uid)
            if user is None:
                return
            with self._db:
                for node, digests in read.items():
                    short = _short(graphs, node)
                    for code in _codes(graphs).values():
                        if code in digests:
                            self._db.execute(
                                "INSERT OR REPLACE INTO digests VALUES (?, ?, ?, ?)",
                                (user, code, short, digests[code]),
                            )
                        else:
                            self._db.execute(
                                "DELETE FROM digests WHERE user = ? AND kind = ? AND node = ?",
                                (user, code, short),
                            )

    def _keep(self, uid: str, since: int | None, caught: CaughtUp) -> None:
        graphs = UserGraphs(uid)
        listed = "\n".join(sorted(_short(graphs, n) for n in caught.nodes))
        with self._lock:
            self._caught[(uid, since)] = caught
            user = self._id(uid)
            if user is None:
                return
            with self._db:
                self._db.execute(
                    "INSERT INTO caught VALUES (?, ?, ?, ?)",
                    (user, _text(since), caught.stamp, listed),
                )
                self._db.execute(
                    "DELETE FROM caught WHERE user = ? AND rowid NOT IN (SELECT rowid FROM"
                    " caught WHERE user = ? ORDER BY rowid DESC LIMIT ?)",
                    (user, user, _KEPT),
                )

    def _id(self, uid: str) -> int | None:
        row = self._db.execute("SELECT id FROM users WHERE uid = ?", (uid,)).fetchone()
        return None if row is None else int(row[0])

    def _ensure(self, uid: str, stamp: int | None) -> int:
        found = self._id(uid)
        if found is not None:
            return found
        (top,) = self._db.execute("SELECT COALESCE(MAX(id), 0) FROM users").fetchone()
        with self._db:
            self._db.execute("INSERT INTO users VALUES (?, ?, ?)", (uid, top + 1, stamp))
        return int(top) + 1

    @contextmanager
    def _user(self, uid: str) -> Iterator[None]:
        with self._lock:
            lock = self._users.setdefault(uid, threading.Lock())
        with lock:
            yield

    def _find_suspects(self) -> set[str]:
        """The users whose digests the outbox cannot bring level with the store."""
        found = set()
        with self._lock:
            rows = list(self._db.execute("SELECT uid, stamp FROM users"))
        for uid, stamp in rows:
            if stamp != self._outbox.stamp(uid) and self._outbox.since(uid, stamp) is None:
                found.add(uid)
        return found


def _codes(graphs: UserGraphs) -> dict[URIRef, int]:
    """The user's projected graphs (kg, sources, quarantine), each with the code its
    digests are kept under."""
    return {graphs.kg: 0, graphs.sources: 1, graphs.quarantine: 2}


def _short(graphs: UserGraphs, node: str) -> str:
    """A node as kept: after the user's node base when it has it, else whole after "<"."""
    base = graphs.node_base
    return node[len(base) :] if node.startswith(base) else "<" + node


def _long(graphs: UserGraphs, short: str) -> URIRef:
    return URIRef(short[1:] if short.startswith("<") else graphs.node_base + short)


def _object(statement: TextStatement) -> str:
    """An object as ``index/digest_node.rq`` writes it into a digest."""
    if statement.datatype is not None:
        return f"{statement.object}^{statement.datatype}@{statement.language}"
    return "_:" if statement.object.startswith("_:") else statement.object


def _digest(lines: list[str]) -> int:
    return _number(hashlib.md5("\n".join(lines).encode(), usedforsecurity=False).hexdigest())


def _text(stamp: int | None) -> str:
    return "" if stamp is None else str(stamp)


def _number(md5: str) -> int:
    """The first 60 bits of an MD5 in hex: an integer SQLite keeps in 8 bytes."""
    return int(md5[:15], 16)
