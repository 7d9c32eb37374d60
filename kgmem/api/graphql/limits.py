"""Depth, alias and cost limits for a GraphQL document, in time linear in the document.

Strawberry's own depth and alias limiters expand every fragment spread where it stands, so a
document whose fragments each spread the next twice costs 2^n: 760 bytes took 8.3 s, with
the event loop blocked. Here each fragment is measured once (memoized by name) and a spread
reuses its figures, so a document costs one walk of its own nodes, whatever it expands to:

* depth: the longest chain of nested fields, fragments counted where they are spread;
* aliases: every aliased field the expanded query would resolve;
* cost: each field is 1 plus its children, times the page size it asks for (a literal
  ``first``/``last``/``k``/``limit`` argument; :data:`VARIABLE_PAGE` when a variable gives
  it); a list of lists of lists multiplies out.

A fragment that spreads itself is counted as empty here (graphql-core's own rule refuses
the cycle).
"""

from __future__ import annotations

from dataclasses import dataclass

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValidationRule,
    VariableNode,
)

__all__ = ["MAX_ALIASES", "MAX_COST", "MAX_DEPTH", "VARIABLE_PAGE", "DocumentLimits"]

MAX_DEPTH = 8
MAX_ALIASES = 20
MAX_COST = 20_000
VARIABLE_PAGE = 100
_PAGE_ARGUMENTS = frozenset({"first", "last", "k", "limit"})


@dataclass(frozen=True)
class _Figures:
    depth: int = 0
    aliases: int = 0
    cost: int = 0


class _Measure:
    def __init__(self, fragments: dict[str, FragmentDefinitionNode]) -> None:
        self.fragments = fragments
        self.memo: dict[str, _Figures] = {}
        self.open: set[str] = set()

    def selection_set(self, node: SelectionSetNode | None) -> _Figures:
        depth = aliases = cost = 0
        for selection in node.selections if node is not None else ():
            if isinstance(selection, FieldNode):
                inner = self.selection_set(selection.selection_set)
                depth = max(depth, 1 + inner.depth)
                aliases += inner.aliases + (selection.alias is not None)
                cost += _page(selection) * (1 + inner.cost)
                continue
            if isinstance(selection, InlineFragmentNode):
                inner = self.selection_set(selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode):
                inner = self.fragment(selection.name.value)
            else:  # pragma: no cover - graphql-core has no other selection
                continue
            depth, aliases, cost = (
                max(depth, inner.depth),
                aliases + inner.aliases,
                cost + inner.cost,
            )
        return _Figures(depth, aliases, cost)

    def fragment(self, name: str) -> _Figures:
        if name in self.memo:
            return self.memo[name]
        definition = self.fragments.get(name)
        if definition is None or name in self.open:
            return _Figures()
        self.open.add(name)
        figures = self.selection_set(definition.selection_set)
        self.open.discard(name)
        self.memo[name] = figures
        return figures


def _page(field: FieldNode) -> int:
    for argument in field.arguments or ():
        if argument.name.value not in _PAGE_ARGUMENTS:
            continue
        if isinstance(argument.value, IntValueNode):
            return max(1, int(argument.value.value))
        if isinstance(argument.value, VariableNode):
            return VARIABLE_PAGE
    return 1


class DocumentLimits(ValidationRule):
    """Refuse an operation deeper than :data:`MAX_DEPTH`, with more than :data:`MAX_ALIASES`
    aliases, or costing more than :data:`MAX_COST`."""

    def enter_document(self, node: DocumentNode, *_args: object) -> None:
        fragments = {
            d.name.value: d for d in node.definitions if isinstance(d, FragmentDefinitionNode)
        }
        measure = _Measure(fragments)
        for definition in node.definitions:
            if not isinstance(definition, OperationDefinitionNode):
                continue
            name = definition.name.value if definition.name else "anonymous"
            figures = measure.selection_set(definition.selection_set)
            # the operation's own fields are depth 1, as strawberry's limiter counted them
            if figures.depth - 1 > MAX_DEPTH:
                self.report_error(
                    GraphQLError(f"'{name}' exceeds maximum operation depth of {MAX_DEPTH}")
                )
            if figures.aliases > MAX_ALIASES:
                self.report_error(
                    GraphQLError(f"{figures.aliases} aliases found. Allowed: {MAX_ALIASES}")
                )
            if figures.cost > MAX_COST:
                self.report_error(
                    GraphQLError(
                        f"'{name}' would resolve about {figures.cost} fields "
                        f"(page sizes times nesting); the most allowed is {MAX_COST}"
                    )
                )
