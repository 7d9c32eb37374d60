"""The graph projection in Kùzu: :class:`~kgmem.index.kuzu.projection.KuzuProjection` (the
adapter the rest of kgmem uses), the graph it reads and writes (:mod:`.graph`), opening and
checking the database (:mod:`.opening`), its schema (:mod:`.schema`) and the path queries
(:mod:`.paths`)."""

from kgmem.index.kuzu.projection import KuzuProjection

__all__ = ["KuzuProjection"]
