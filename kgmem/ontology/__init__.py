"""The ontology layer: catalogue, effective ontology, schema delta, validation."""

from kgmem.ontology.bundled import (
    BundledFile,
    LoadReport,
    bundled_files,
    check_bundled,
    default_ontologies_dir,
    ensure_bundled,
)

__all__ = [
    "BundledFile",
    "LoadReport",
    "bundled_files",
    "check_bundled",
    "default_ontologies_dir",
    "ensure_bundled",
]
