"""Playbook pages: every active procedure gets a page of its own in ``Memory/playbooks/``,
follows the procedure's changes, leaves with it, and is listed in the prompt context's
playbook index with the absolute path of its file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from rdflib import URIRef

from kgmem.api.services import Services
from kgmem.config import Settings
from kgmem.memory import Outcome
from kgmem.memory.source_inputs import MessageIn
from kgmem.store import UserGraphs
from kgmem.vocab import KGM, RDF
from tests.index.wired import wired

KG = UserGraphs("alice").kg
SAID = (
    "When I deploy the blog I first run the link checker, then build with Hugo, "
    "then rsync the public folder to the server."
)


@pytest.fixture
def services(settings: Settings) -> Iterator[Services]:
    built = wired(settings)
    yield built
    built.close()


def deploy(services: Services, turn: int = 1, said: str = SAID) -> URIRef:
    """Alice's how-to, through the real gate, as an agent drafts it from her words."""
    msg = services.sources.ingest_message(
        "alice", MessageIn(chat="c1", turn=turn, role="user", text=said)
    )
    draft = {
        "kind": "procedural",
        "title": "Deploy the blog",
        "excerpt": "How Alice ships a new version of her blog",
        "confidence": 0.9,
        "entities": [{"name": "Hugo", "types": ["schema:SoftwareApplication"]}],
        "steps": [
            "run the link checker",
            "build with Hugo",
            "rsync the public folder to the server",
        ],
        "triggers": ["deploy the blog"],
        "evidence": [{"source": str(msg.iri), "quote": said.rstrip(".")}],
    }
    [item] = services.gate.draft("alice", [draft]).items
    assert item.outcome is Outcome.ACTIVE and isinstance(item.memory, URIRef), item
    return item.memory


def playbook_file(services: Services) -> Path:
    assert services.settle() and services.vault is not None
    return services.vault.memory("alice") / "playbooks" / "deploy-the-blog.md"


def test_an_active_procedure_gets_a_playbook_page_with_steps_triggers_and_evidence(
    services: Services,
) -> None:
    memory = deploy(services)
    path = playbook_file(services)
    text = path.read_text("utf-8")
    cite = f"[m:{str(memory).rsplit('/', 1)[-1][:8]}]"
    assert (
        "# Deploy the blog" in text and f"How Alice ships a new version of her blog {cite}" in text
    )
    assert "## When to use\n\n- deploy the blog" in text
    steps = "1. run the link checker\n2. build with Hugo\n3. rsync the public folder to the server"
    assert steps in text
    assert "- [[Memory/entities/hugo|Hugo]]" in text  # linked to the entity's page
    assert "- Said in chat c1, turn 1 [^1]" in text
    assert '[^1]: "When I deploy the blog I first run the link checker' in text
    page = next(q.subject for q in services.store.quads(KG, None, KGM.pageOf, memory))
    types = {q.object for q in services.store.quads(KG, page, RDF.type)}
    assert {KGM.Page, KGM.Playbook} <= types
    assert (services.vault.memory("alice") / "entities" / "hugo.md").is_file()  # type: ignore[union-attr]


def test_the_playbook_index_lists_it_with_the_files_absolute_path(services: Services) -> None:
    deploy(services)
    path = playbook_file(services)
    packet = services.context.prompt_context("alice")
    [entry] = [e for e in packet.playbooks.items if e.kind == "playbook"]
    assert entry.title == "Deploy the blog" and entry.path == str(path)
    assert Path(entry.path).is_absolute() and Path(entry.path).read_text("utf-8").startswith("---")
    assert f"`{path}`" in packet.render()


def test_an_archived_procedure_loses_its_playbook_and_a_restored_one_gets_it_back(
    services: Services,
) -> None:
    memory = deploy(services)
    path = playbook_file(services)
    assert path.is_file()
    services.lifecycle.archive("alice", memory)
    assert not playbook_file(services).exists()
    assert not list(services.store.quads(KG, None, KGM.pageOf, memory))
    services.lifecycle.restore("alice", memory)
    assert playbook_file(services).is_file()


def test_forgetting_the_procedure_takes_its_playbook_and_its_words_away(
    services: Services,
) -> None:
    memory = deploy(services)
    assert playbook_file(services).is_file()
    services.lifecycle.forget("alice", memory)
    assert not playbook_file(services).exists()
    texts = [str(q.object) for q in services.store.quads(KG, None, KGM.markdown)]
    assert not any("link checker" in t for t in texts)


def test_an_edit_to_a_playbook_file_is_refused_and_changes_nothing(services: Services) -> None:
    memory = deploy(services)
    path = playbook_file(services)
    path.write_text(path.read_text("utf-8").replace("2. build with Hugo", "2. build with Zola"))
    assert services.sync is not None
    report = services.sync.read("alice", path)
    assert report.status.value == "refused" and "written from its procedure" in report.reason
    assert services.lifecycle.get("alice", memory).steps[1] == "build with Hugo"
