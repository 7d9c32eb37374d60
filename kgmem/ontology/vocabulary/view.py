"""An in-memory view of ontology graphs: hierarchy, properties, labels and disjointness.

Built once per catalogue version from a handful of named queries, then answers the
questions the effective ontology, term search and validation ask in microseconds: the
ancestors of a class, whether two classes are disjoint and which axiom says so, the
domain, range and functionality of a property.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Collection, MutableMapping, MutableSet
from typing import TypeVar

from rdflib import URIRef

from kgmem.ontology.vocabulary.layered import LayeredMap, LayeredSet
from kgmem.ontology.vocabulary.terms import (
    DisjointAxiom,
    DisjointnessProof,
    PropertyInfo,
    TermKind,
    copy_property,
    local_name_words,
)
from kgmem.vocab import OWL, RDFS

V = TypeVar("V")

__all__ = ["Vocabulary"]

_CLASS_TYPES = {OWL.Class, RDFS.Class}


class Vocabulary:
    """Classes, properties, labels and disjointness of a set of ontology graphs.

    A user's vocabulary is a layer over the shared catalogue view (:meth:`copy`): the
    user's delta is held in the layer, the catalogue is read through it and never copied
    or written, and answers about catalogue classes the delta does not reach are the
    catalogue view's own (memoized once for every user).
    """

    def __init__(self) -> None:
        self.parents: MutableMapping[URIRef, set[URIRef]] = defaultdict(set)
        self.classes: MutableSet[URIRef] = set()
        self.properties: MutableMapping[URIRef, PropertyInfo] = {}
        self.origin: MutableMapping[URIRef, URIRef] = {}  # term -> first graph declaring it
        self.labels: MutableMapping[URIRef, list[str]] = defaultdict(list)
        self.alt_labels: MutableMapping[URIRef, list[str]] = defaultdict(list)
        self.disjoint: MutableMapping[URIRef, dict[URIRef, DisjointAxiom]] = defaultdict(dict)
        self._ancestors: dict[URIRef, dict[URIRef, URIRef | None]] = {}
        self._closure: dict[URIRef, frozenset[URIRef]] = {}
        self._proofs: dict[tuple[URIRef, URIRef], DisjointnessProof | None] = {}
        self._base: Vocabulary | None = None  # set on a layer
        self._shared = False  # set on a view that layers read: it must not change

    # -- building ----------------------------------------------------------------------

    def _writable(self) -> None:
        if self._shared:
            raise TypeError("the shared catalogue view cannot change; change a copy()")

    def add_subclass(self, child: URIRef, parent: URIRef) -> None:
        self._writable()
        self.parents[child].add(parent)
        self._ancestors.clear()
        self._closure.clear()
        self._proofs.clear()

    def add_disjoint(self, axiom: DisjointAxiom) -> None:
        self._writable()
        self._proofs.clear()
        self.disjoint[axiom.a].setdefault(axiom.b, axiom)
        self.disjoint[axiom.b].setdefault(axiom.a, axiom)

    def declare(self, term: URIRef, kind: URIRef, graph: URIRef) -> None:
        self._writable()
        self.origin.setdefault(term, graph)
        if kind in _CLASS_TYPES:
            self.classes.add(term)
            return
        info = self.property(term, create=True)
        info.functional |= kind == OWL.FunctionalProperty
        info.object_property |= kind == OWL.ObjectProperty
        info.datatype_property |= kind == OWL.DatatypeProperty

    def property(self, term: URIRef, *, create: bool = False) -> PropertyInfo:
        """The property's entry, to change (a layer copies a catalogue entry first)."""
        if term not in self.properties:
            if not create:
                raise KeyError(term)
            self._writable()
            self.properties[term] = PropertyInfo(term)
        return self.properties[term]

    def copy(self) -> Vocabulary:
        """A vocabulary that can take a user's delta without touching this one.

        It is a layer over the shared catalogue view, whatever this one is (a copy of a
        layer is a layer over the same view, with a copy of the layer's own entries), so
        copies never stack and the catalogue is never copied.
        """
        base = self._base if self._base is not None else self
        base._shared = True
        clone = Vocabulary()
        clone._base = base
        clone.parents = self._layer(self.parents, base.parents, set, set)
        clone.classes = LayeredSet(
            base.classes, self.classes.own if isinstance(self.classes, LayeredSet) else ()
        )
        clone.properties = self._layer(self.properties, base.properties, copy_property)
        clone.origin = self._layer(self.origin, base.origin)
        clone.labels = self._layer(self.labels, base.labels, list, list)
        clone.alt_labels = self._layer(self.alt_labels, base.alt_labels, list, list)
        clone.disjoint = self._layer(self.disjoint, base.disjoint, dict, dict)
        return clone

    @staticmethod
    def _layer(
        mine: MutableMapping[URIRef, V],
        base: MutableMapping[URIRef, V],
        copy: Callable[[V], V] | None = None,
        default: Callable[[], V] | None = None,
    ) -> LayeredMap[URIRef, V]:
        if isinstance(mine, LayeredMap):
            return mine.layered_copy()
        return LayeredMap(base, copy, default)

    def _reads_base(self, *classes: URIRef) -> bool:
        """True when the superclasses of ``classes`` here are the shared view's: the layer
        changed the parents of none of them."""
        if self._base is None:
            return False
        changed = self.parents.own if isinstance(self.parents, LayeredMap) else {}
        return not changed or all(
            changed.keys().isdisjoint(self._base.ancestors(c)) for c in classes
        )

    # -- answers -----------------------------------------------------------------------

    def kind_of(self, term: URIRef) -> TermKind | None:
        if term in self.properties:
            return TermKind.PROPERTY
        if term in self.classes or term in self.parents:
            return TermKind.CLASS
        return None

    def _paths(self, cls: URIRef) -> dict[URIRef, URIRef | None]:
        """Breadth-first ancestors of ``cls`` (itself included) with their predecessor."""
        cached = self._ancestors.get(cls)
        if cached is not None:
            return cached
        if self._base is not None and self._reads_base(cls):
            return self._base._paths(cls)
        found: dict[URIRef, URIRef | None] = {cls: None}
        queue = deque([cls])
        while queue:
            node = queue.popleft()
            for parent in self.parents.get(node, ()):
                if parent not in found:
                    found[parent] = node
                    queue.append(parent)
        self._ancestors[cls] = found
        return found

    def ancestors(self, cls: URIRef) -> frozenset[URIRef]:
        """Reflexive, transitive superclasses (equivalent classes count both ways).

        Memoized bottom-up, so the many shared upper classes of a large hierarchy are
        unioned once rather than walked again for every class.
        """
        done = self._closure.get(cls)
        if done is not None:
            return done
        if self._base is not None and self._reads_base(cls):
            return self._base.ancestors(cls)
        stack: list[tuple[URIRef, bool]] = [(cls, False)]
        on_path: set[URIRef] = set()
        while stack:
            node, expanded = stack.pop()
            if node in self._closure:
                continue
            if self._base is not None and self._reads_base(node):
                self._closure[node] = self._base.ancestors(node)
                continue
            all_parents = self.parents.get(node, set())
            parents = [p for p in all_parents if p not in on_path]
            if expanded or not parents:
                on_path.discard(node)
                if len(parents) < len(all_parents):  # a cycle (equivalent classes): walk it
                    self._closure[node] = frozenset(self._paths(node))
                    continue
                closure = frozenset({node}).union(*(self._closure.get(p, {p}) for p in parents))
                self._closure[node] = closure
                continue
            on_path.add(node)
            stack.append((node, True))
            stack.extend((p, False) for p in parents if p not in self._closure)
        return self._closure[cls]

    def is_subclass(self, a: URIRef, b: URIRef) -> bool:
        return b in self.ancestors(a)

    def path_up(self, cls: URIRef, ancestor: URIRef) -> tuple[URIRef, ...]:
        """The shortest chain ``cls ⊑ … ⊑ ancestor`` (empty if there is none)."""
        paths = self._paths(cls)
        if ancestor not in paths:
            return ()
        chain = [ancestor]
        while (step := paths[chain[-1]]) is not None:
            chain.append(step)
        return tuple(reversed(chain))

    def distinct_ancestors(self, classes: Collection[URIRef]) -> tuple[URIRef, ...]:
        """What ``classes`` are kinds of as a reader tells them apart: one superclass per
        label, the nearest, nearest first (ties by label, then IRI).

        Aligned vocabularies give one idea several IRIs (``schema:Person`` is
        ``foaf:Person`` and sits under ``rc:Person`` and ``kko:Persons``): listed one by one
        they read "person, person, persons". Labels compare casefolded, singular and without
        KBpedia's "generic"; one that only repeats a label of ``classes`` is left out.
        """
        own = {_label_key(self.label(c)) for c in classes}
        found: dict[str, tuple[int, str, URIRef]] = {}
        for cls in classes:
            for ancestor in self.ancestors(cls):
                text = self.label(ancestor)
                key = _label_key(text)
                if ancestor in classes or key in own:
                    continue
                entry = (len(self.path_up(cls, ancestor)), text, ancestor)
                if key not in found or entry < found[key]:
                    found[key] = entry
        return tuple(ancestor for _, _, ancestor in sorted(found.values()))

    def disjointness(self, a: URIRef, b: URIRef) -> DisjointnessProof | None:
        """The shortest proof that ``a`` and ``b`` are disjoint, or None (memoized)."""
        key = (a, b)
        base = self._base
        if base is not None and not self._own_disjoint() and self._reads_base(a, b):
            return base.disjointness(a, b)
        if key not in self._proofs:
            self._proofs[key] = self._prove_disjoint(a, b)
        return self._proofs[key]

    def _prove_disjoint(self, a: URIRef, b: URIRef) -> DisjointnessProof | None:
        if not self.disjoint:
            return None
        up_a, up_b = self._paths(a), self._paths(b)
        best: tuple[int, DisjointnessProof] | None = None
        for x in up_a:
            for y, axiom in self.disjoint.get(x, {}).items():
                if y not in up_b:
                    continue
                proof = DisjointnessProof(self.path_up(a, x), self.path_up(b, y), axiom)
                cost = len(proof.a_path) + len(proof.b_path)
                if best is None or cost < best[0]:
                    best = (cost, proof)
        return None if best is None else best[1]

    def is_functional(self, prop: URIRef) -> bool:
        """Functional itself or through a functional superproperty."""
        return any(
            info.functional
            for p in self.super_properties(prop)
            if (info := self.properties.get(p)) is not None
        )

    def super_properties(self, prop: URIRef) -> frozenset[URIRef]:
        seen = {prop}
        queue = deque([prop])
        while queue:
            info = self.properties.get(queue.popleft())
            for parent in () if info is None else info.parents:
                if parent not in seen:
                    seen.add(parent)
                    queue.append(parent)
        return frozenset(seen)

    def branch(self, cls: URIRef) -> URIRef:
        """The top-level class ``cls`` falls under: the nearest of its superclasses (itself
        included) whose every parent is a root (a class with no parent), so ``schema:City``
        falls under ``schema:Place`` and not under the ``schema:Thing`` above everything.
        Ties go to the first IRI; a root is its own branch."""
        level, seen = [cls], {cls}
        while level:
            for node in level:
                parents = self.parents.get(node, ())
                if parents and all(not self.parents.get(p) for p in parents):
                    return node
            following = sorted({p for n in level for p in self.parents.get(n, ())} - seen)
            seen.update(following)
            level = following
        return cls

    def declared_in(self, graphs: Collection[URIRef]) -> list[URIRef]:
        """The terms first declared by one of ``graphs``."""
        if isinstance(self.origin, LayeredMap) and self._base is not None:
            own = [t for t, g in self.origin.own.items() if g in graphs]
            return self._base.declared_in(graphs) + own
        return [t for t, g in self.origin.items() if g in graphs]

    def _own_disjoint(self) -> bool:
        return isinstance(self.disjoint, LayeredMap) and bool(self.disjoint.own)

    def label(self, term: URIRef) -> str:
        """The first label, else words from the local name (KBpedia concepts have none)."""
        labels = self.labels.get(term)
        return labels[0] if labels else local_name_words(term)


def _label_key(text: str) -> str:
    """``Agents``, ``agent generic`` and ``agent`` name one idea."""
    return " ".join(w.removesuffix("s") for w in text.casefold().split() if w != "generic")
