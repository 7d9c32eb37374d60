"""The pages layer: Markdown pages of entities, their stored revisions, and the vault.

A page is a projection of one entity's current state (:mod:`kgmem.pages.content` reads what
it may say, :mod:`kgmem.pages.render` writes it without a model), stored as revisions in the
user's kg graph (:mod:`kgmem.pages.revisions`) before any file is written. Pages follow every
committed change (:class:`PageFollower`, a target of the change feed), and each user's
vault holds them as files (:class:`Vault`). An edit a person makes to a page file is read
back as memory operations (:class:`VaultSync`, :mod:`kgmem.pages.edits`), as the watcher
reports it (:class:`VaultWatcher`).
"""

from kgmem.pages.content import (
    PAGE_FACTS,
    PAGE_MEMORIES,
    RENDERER_VERSION,
    FactLine,
    MemoryLine,
    PageInput,
    read_page_input,
    with_links,
)
from kgmem.pages.follow import PageFollower, PagesWritten, prepare_pages
from kgmem.pages.reading import PageReader, PageView
from kgmem.pages.render import frame_page, render_page
from kgmem.pages.revisions import (
    MEMORY_DIR,
    PageDraft,
    StoredPage,
    page_id,
    page_iri,
    page_writer,
    revision_quads,
    stored_page,
)
from kgmem.pages.sync import SyncReport, SyncStatus, VaultSync
from kgmem.pages.vault import FileState, PageFile, Vault, VaultReport, front_matter_ids
from kgmem.pages.watch import VaultWatcher

__all__ = [
    "MEMORY_DIR",
    "PAGE_FACTS",
    "PAGE_MEMORIES",
    "RENDERER_VERSION",
    "FactLine",
    "FileState",
    "MemoryLine",
    "PageDraft",
    "PageFile",
    "PageFollower",
    "PageInput",
    "PageReader",
    "PageView",
    "PagesWritten",
    "StoredPage",
    "SyncReport",
    "SyncStatus",
    "Vault",
    "VaultReport",
    "VaultSync",
    "VaultWatcher",
    "frame_page",
    "front_matter_ids",
    "page_id",
    "page_iri",
    "page_writer",
    "prepare_pages",
    "read_page_input",
    "render_page",
    "revision_quads",
    "stored_page",
    "with_links",
]
