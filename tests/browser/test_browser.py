"""The memory browser as a person uses it, in Chromium: sign in, the graph, search and focus,
a page with its memories and their evidence, review and revert, settings, another user's
data, the keyboard. What the page shows is checked against what the API says is stored."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Ui, World
from tests.browser.world import DRAFT, INGEST, gql, named

pytestmark = pytest.mark.browser

GRAPH = """{ graph { nodes { id name branch branchLabel hasPage }
  predicates { iri label } edges { source target inferred predicate } links { source target } } }"""


def stored_graph(world: World, uid: str) -> dict[str, Any]:
    with world.server.client(uid) as client:
        graph: dict[str, Any] = named(gql(client, GRAPH)["graph"])
    return graph


def drawn(ui: Ui) -> dict[str, Any]:
    """The graph as cytoscape holds it: nodes with their colour and class, edges with theirs."""
    found: dict[str, Any] = ui.page.evaluate(
        """() => { const cy = KgGraph.instance(); return {
          nodes: cy.nodes().map((n) => ({ id: n.id(), label: n.data('label'),
            colour: n.style('background-color'), faded: n.hasClass('faded'),
            focus: n.hasClass('focus') })),
          edges: cy.edges().map((e) => ({ source: e.source().id(), target: e.target().id(),
            classes: e.classes(), style: e.style('line-style'),
            colour: e.style('line-color') })) }; }"""
    )
    return found


def by_name(graph: dict[str, Any]) -> dict[str, str]:
    return {n["name"]: n["id"] for n in graph["nodes"]}


def two_hops(graph: dict[str, Any], start: str) -> set[str]:
    near: dict[str, set[str]] = defaultdict(set)
    for e in graph["edges"] + graph["links"]:
        near[e["source"]].add(e["target"])
        near[e["target"]].add(e["source"])
    one = {start} | near[start]
    return one | {b for a in one for b in near[a]}


def detail_text(ui: Ui) -> str:
    return str(ui.page.inner_text("#detail"))


# -- sign in and the graph -----------------------------------------------------------------


def test_a_wrong_key_shows_nothing_and_the_right_one_draws_coloured_nodes(
    ui: Ui, world: World
) -> None:
    uid, _ = world.maya()
    ui.page.goto(ui.base + "/")
    ui.page.fill("#key", "kgm_not-a-key")
    ui.page.press("#key", "Enter")
    ui.page.wait_for_selector("#sign-in-error:has-text('not accepted')")
    assert ui.page.is_hidden("#main") and ui.page.is_hidden("#views")
    ui.watch.errors = [e for e in ui.watch.errors if "401" not in e]  # the refused key's answer
    ui.shot("sign-in")

    ui.page.fill("#key", world.token(uid))
    ui.page.press("#key", "Enter")
    ui.page.wait_for_selector("body[data-graph=ready]")
    ui.shot("graph")
    stored = stored_graph(world, uid)
    cy = drawn(ui)
    assert {n["id"] for n in cy["nodes"]} == {n["id"] for n in stored["nodes"]}
    names = by_name(stored)
    assert {"Ada", "Ravi Shah", "Lumen Labs", "Berlin", "Porto", "Lisbon"} <= set(names)
    colour = {n["id"]: n["colour"] for n in cy["nodes"]}
    branch = {n["id"]: n["branchLabel"] for n in stored["nodes"]}
    # one colour per ontology branch, and different branches look different
    assert colour[names["Ada"]] == colour[names["Ravi Shah"]]
    assert colour[names["Berlin"]] == colour[names["Porto"]]
    assert branch[names["Ada"]] != branch[names["Berlin"]]
    assert colour[names["Ada"]] != colour[names["Berlin"]]
    assert colour[names["Lumen Labs"]] != colour[names["Berlin"]]
    legend = ui.page.inner_text("#legend")
    for label in {branch[names["Ada"]], branch[names["Berlin"]], branch[names["Lumen Labs"]]}:
        assert label in legend
    # asserted facts solid, inferred ones lighter, page links dashed
    kinds = defaultdict(list)
    for e in cy["edges"]:
        kinds[e["classes"][0]].append(e)
    assert kinds["asserted"] and kinds["inferred"] and kinds["link"]
    assert {e["style"] for e in kinds["asserted"] + kinds["inferred"]} == {"solid"}
    assert {e["style"] for e in kinds["link"]} == {"dashed"}
    assert {e["colour"] for e in kinds["asserted"]}.isdisjoint(
        {e["colour"] for e in kinds["inferred"]}
    )
    assert len(kinds["asserted"]) + len(kinds["inferred"]) == len(stored["edges"])
    assert len(kinds["link"]) == len(stored["links"])


def test_search_focuses_the_two_hop_neighbourhood_and_keeps_the_rest(ui: Ui, world: World) -> None:
    uid, _ = world.maya()
    ui.sign_in(world.token(uid))
    stored = stored_graph(world, uid)
    ada = by_name(stored)["Ada"]
    ui.page.fill("#search", "where does ada live now")
    ui.page.press("#search", "Enter")
    ui.page.wait_for_selector("#results button[data-hit]")
    first = ui.page.inner_text("#results li >> nth=0")
    assert "Ada lives in Porto" in first  # the server's ranking, shown as it ranked
    ui.page.click("#results button[data-hit] >> nth=0")
    ui.page.wait_for_selector(f"#detail[data-entity='{ada}']")
    ui.shot("search-focus")
    cy = drawn(ui)
    assert len(cy["nodes"]) == len(stored["nodes"])  # nothing discarded
    shown = {n["id"] for n in cy["nodes"] if not n["faded"]}
    assert shown == two_hops(stored, ada)
    assert [n["id"] for n in cy["nodes"] if n["focus"]] == [ada]
    assert any(n["faded"] for n in cy["nodes"])  # Bob-free, but not everything is two hops away
    ui.page.click("#fit")
    assert not any(n["faded"] for n in drawn(ui)["nodes"])


# -- a page, its structure, its memories and their evidence --------------------------------


def test_page_structure_and_evidence_panes_show_the_stored_quotes(ui: Ui, world: World) -> None:
    uid, written = world.maya()
    ui.sign_in(world.token(uid))
    ada = by_name(stored_graph(world, uid))["Ada"]
    ui.page.click(f"#results button[data-entity='{ada}']")
    ui.page.wait_for_selector(f"#detail[data-entity='{ada}'] #memories")
    ui.shot("page")
    text = detail_text(ui)
    page_md = ui.page.inner_text("#page-markdown")
    assert "digest:" not in page_md and "Ada" in page_md  # rendered, front matter left out
    assert ui.page.locator("#page-markdown h1, #page-markdown h2").count() >= 1
    # each ancestor once (#28: it read "person, person, persons, agent, agent generic, ...")
    assert ui.page.inner_text("#detail .types").split() == ["person", "⊑", "agent,", "thing"]
    out = ui.page.inner_text("#relations-out")
    assert "Porto — home location" in out and "Tidewater Books — works for" in out
    assert "(inferred)" in ui.page.inner_text("#relations-in") + out  # sibling, both ways

    lisbon = ui.page.locator(f"[data-memory='{written.memories['Ada lives in Lisbon']}']")
    porto = ui.page.locator(f"[data-memory='{written.memories['Ada lives in Porto']}']")
    assert "superseded" in lisbon.inner_text() and "superseded by" in lisbon.inner_text()
    assert "active" in porto.inner_text() and "supersedes" in porto.inner_text()
    assert lisbon.locator("blockquote.quote").all_inner_texts() == ["Ada lives in Lisbon"]
    assert porto.locator("blockquote.quote").all_inner_texts() == ["Ada moved to Porto"]
    assert "happened" not in lisbon.inner_text()  # a fact, no episode time
    assert "Maya was born in Hamburg" not in text  # refused: never a memory

    porto.locator("button.source-link").click()
    dialog = ui.page.locator("#source-dialog")
    dialog.wait_for(state="visible")
    ui.shot("evidence-source")
    assert dialog.locator("mark").inner_text() == "Ada moved to Porto"
    assert "Big news: Ada moved to Porto last month." in dialog.locator("#source-text").inner_text()
    assert "chat:week-2#0" in dialog.locator("#source-meta").inner_text()
    dialog.locator("button").click()
    dialog.wait_for(state="hidden")

    # a vault link on the page leads to the page it names
    ui.page.locator("#page-markdown a[href^='#page:']", has_text="Porto").first.click()
    porto_id = by_name(stored_graph(world, uid))["Porto"]
    ui.page.wait_for_selector(f"#detail[data-entity='{porto_id}']")


# -- review and revert ---------------------------------------------------------------------


MEMORY = "query($id: ID!) { memory(id: $id) { status } }"


def status(world: World, uid: str, memory: str) -> str:
    with world.server.client(uid) as client:
        return str(gql(client, MEMORY, id=memory)["memory"]["status"])


def test_approve_reject_and_revert_change_the_store_and_show_in_the_feed(
    ui: Ui, world: World
) -> None:
    uid, written = world.maya()
    peanuts = written.memories["Maya is allergic to peanuts"]
    meetup = written.memories["Maya and Ravi go to the Berlin data meetup"]
    assert written.outcomes["Maya is allergic to peanuts"] == "pending"
    ui.sign_in(world.token(uid))
    # the inbox is fetched apart from the graph sign_in waits for: its count comes after.
    # A locator assertion polls without eval, which the page's CSP (script-src 'self') forbids
    # to a wait_for_function string once its first check has failed.
    expect(ui.page.locator("#inbox-count")).to_have_text("(2)")
    ui.page.click("#views button[data-view=inbox]")
    ui.page.wait_for_selector(f"#inbox li[data-memory='{peanuts}']")
    ui.shot("inbox")
    assert "I'm allergic to peanuts" in ui.page.inner_text(f"#inbox li[data-memory='{peanuts}']")

    ui.page.click(f"#inbox li[data-memory='{peanuts}'] button.approve")
    ui.page.wait_for_selector("#inbox-status:has-text('Approved')")
    assert ui.page.locator(f"#inbox li[data-memory='{peanuts}']").count() == 0
    assert status(world, uid, peanuts) == "ACTIVE"
    ui.page.click(f"#inbox li[data-memory='{meetup}'] button.reject")
    ui.page.wait_for_selector("#inbox-status:has-text('Rejected')")
    assert status(world, uid, meetup) == "ARCHIVED"
    assert (
        ui.page.inner_text("#inbox-status")
        == "Rejected “Maya and Ravi go to the Berlin data meetup” (now archived)."
    )

    ui.page.click("#views button[data-view=decisions]")
    ui.page.wait_for_selector("#decisions tbody tr")
    ui.shot("decisions")
    rows = ui.page.locator("#decisions tbody tr")
    newest = rows.nth(0).inner_text()
    assert "Maya and Ravi go to the Berlin data meetup" in newest and "reject" in newest
    approved = rows.filter(has_text="Maya is allergic to peanuts").filter(has_text="activate")
    assert approved.count() == 1
    refusal = rows.filter(has_text="Maya was born in Hamburg")
    assert "refuse" in refusal.inner_text() and refusal.locator("button.revert").count() == 0

    approved.locator("button.revert").click()
    ui.page.wait_for_selector("#decisions-status:has-text('Reverted activate')")
    assert status(world, uid, peanuts) == "PENDING"
    assert "reverted" in rows.filter(has_text="activate").filter(has_text="peanuts").inner_text()
    ui.page.click("#views button[data-view=inbox]")
    ui.page.wait_for_selector(f"#inbox li[data-memory='{peanuts}']")


# -- consolidation and settings ------------------------------------------------------------


def test_consolidation_view_shows_the_passes_and_what_waits(ui: Ui, world: World) -> None:
    uid, _ = world.maya()
    services = world.server.app.state.services
    services.consolidation.queue(uid, [{"kind": "semantic", "title": "Maya likes trains"}])
    ui.sign_in(world.token(uid))
    ui.page.click("#views button[data-view=consolidation]")
    ui.page.wait_for_selector("#consolidation-summary p")
    ui.shot("consolidation")
    summary = ui.page.inner_text("#consolidation-summary")
    with world.server.client(uid) as client:
        c = gql(client, "{ consolidation { waitingDrafts passes { id state } } }")["consolidation"]
    assert f"{c['waitingDrafts']} drafts" in summary
    assert ui.page.locator("#passes tbody tr").count() == len(c["passes"])
    for p in c["passes"]:
        assert p["state"] in ui.page.inner_text("#passes tbody")


def test_reset_needs_the_typed_user_id_and_empties_the_graph(ui: Ui, world: World) -> None:
    user, _ = world.maya()
    ui.sign_in(world.token(user))
    ui.page.click("#views button[data-view=settings]")
    ui.shot("settings")
    assert "cannot be undone" in ui.page.inner_text("#view-settings")
    assert ui.page.is_disabled("#reset-button")
    ui.page.fill("#reset-confirm", user[:-1])
    assert ui.page.is_disabled("#reset-button")
    ui.page.fill("#reset-confirm", user)
    ui.page.click("#reset-button")
    ui.page.wait_for_selector("#reset-status:has-text('Only an admin')")
    assert stored_graph(world, user)["nodes"]  # nothing was reset

    admin = user + "-admin"
    token = world.token(admin, admin=True)
    world.maya(admin)
    assert stored_graph(world, admin)["nodes"]
    ui.page.click("#sign-out")
    ui.sign_in(token)
    ui.page.click("#views button[data-view=settings]")
    ui.page.fill("#reset-confirm", admin)
    ui.page.click("#reset-button")
    ui.page.wait_for_selector("#reset-status:has-text('Reset done')")
    assert stored_graph(world, admin)["nodes"] == []
    assert stored_graph(world, user)["nodes"]  # another user's memory is untouched
    ui.page.click("#views button[data-view=explore]")
    ui.page.wait_for_selector("#graph-status:has-text('0 entities')")


# -- tenancy -------------------------------------------------------------------------------


def test_another_users_data_never_appears(ui: Ui, world: World) -> None:
    maya, _ = world.maya()
    maya_names = set(by_name(stored_graph(world, maya))) - {maya}
    ui.sign_in(world.token("bob"))
    cy = drawn(ui)
    assert {n["label"] for n in cy["nodes"]} >= {"Quarry Systems", "Oslo"}
    assert not maya_names & {n["label"] for n in cy["nodes"]}
    ui.page.fill("#search", "Ada Lisbon Porto Lumen Labs peanuts")
    ui.page.press("#search", "Enter")
    ui.page.wait_for_selector("#finder-title:has-text('results for')")
    seen = [ui.page.inner_text("#results"), ui.page.inner_text("#graph-wrap")]
    for view in ("inbox", "decisions", "consolidation", "settings"):
        ui.page.click(f"#views button[data-view={view}]")
        ui.page.wait_for_timeout(300)
        seen.append(ui.page.inner_text("body"))
    for text in seen:
        for name in ("Ada", "Lisbon", "Lumen Labs", "peanuts", "Ravi"):
            assert name not in text, (name, text[:400])
    # the page's own GraphQL client, asked for Maya's entity by its IRI, gets nothing
    ada = by_name(stored_graph(world, maya))["Ada"]
    answer = ui.page.evaluate(
        """async (id) => { const r = await fetch('/graphql', { method: 'POST',
            headers: { 'Content-Type': 'application/json',
                       'Authorization': 'Bearer ' + sessionStorage.getItem('kgmem.key') },
            body: JSON.stringify({ query: 'query($id: ID!) { entity(id: $id) { name } }',
                                   variables: { id } }) });
          return r.json(); }""",
        ada,
    )
    assert answer == {"data": {"entity": None}}


# -- the keyboard --------------------------------------------------------------------------


def tab_to(ui: Ui, selector: str, most: int = 400) -> None:
    """Press Tab until the focused element matches ``selector``."""
    for _ in range(most):
        ui.page.keyboard.press("Tab")
        if ui.page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def test_the_keyboard_reaches_every_view(ui: Ui, world: World) -> None:
    uid, written = world.maya()
    ui.page.goto(ui.base + "/")
    assert ui.page.evaluate("document.activeElement.id") == "key"
    ui.page.keyboard.type(world.token(uid))
    ui.page.keyboard.press("Enter")
    ui.page.wait_for_selector("body[data-graph=ready]")
    for view in ("inbox", "decisions", "consolidation", "settings", "explore"):
        tab_to(ui, f"#views button[data-view={view}]")
        ui.page.keyboard.press("Enter")
        assert ui.page.is_visible(f"#view-{view}"), view
    ui.shot("keyboard")
    tab_to(ui, "#search")
    ui.page.keyboard.type("Ada")
    ui.page.keyboard.press("Enter")
    ui.page.wait_for_selector("#results button[data-hit]")
    tab_to(ui, "#results button[data-hit]")
    ui.page.keyboard.press("Enter")
    ui.page.wait_for_selector("#detail #memories")
    tab_to(ui, "#detail button.source-link")
    ui.page.keyboard.press("Enter")
    ui.page.locator("#source-dialog").wait_for(state="visible")
    ui.page.keyboard.press("Escape")
    ui.page.locator("#source-dialog").wait_for(state="hidden")
    tab_to(ui, "#views button[data-view=inbox]")
    ui.page.keyboard.press("Enter")
    peanuts = written.memories["Maya is allergic to peanuts"]
    ui.page.wait_for_selector(f"#inbox[aria-busy=false] li[data-memory='{peanuts}']")
    tab_to(ui, f"#inbox li[data-memory='{peanuts}'] button.approve")
    ui.page.keyboard.press("Enter")
    ui.page.wait_for_selector("#inbox-status:has-text('Approved')")
    assert status(world, uid, peanuts) == "ACTIVE"


# -- hostile text --------------------------------------------------------------------------


def test_markup_in_memories_is_shown_as_text_and_fetches_nothing(ui: Ui, world: World) -> None:
    """A title and a quote carrying HTML and Markdown that would load a tracker or run a
    script: the page shows them as text, and the request guard sees no request leave."""
    uid = "mallory"
    text = (
        "her links: <img src=http://tracker.example/p.png onerror=window.pwned=1> "
        "![pixel](http://tracker.example/md.png) [site](javascript:window.pwned=2)"
    )
    with world.server.client(uid) as client:
        message = {"chat": "m", "turn": 0, "role": "user", "text": f"My friend Eve. {text}"}
        assert gql(client, INGEST, m=[message])["ingestMessages"]["__typename"] == "Ingested"
        draft = {
            "kind": "SEMANTIC",
            "title": "Eve: <script>window.pwned=3</script> ![x](http://tracker.example/t.png)",
            "confidence": 0.9,
            "entities": [{"name": "Eve", "types": ["schema:Person"]}],
            "claims": [{"subject": "I", "predicate": "schema:knows", "object": "Eve"}],
            "evidence": [{"source": "chat:m#0", "quote": "My friend Eve"}],
        }
        out = gql(client, DRAFT, d=[draft])["draftMemories"]
        assert out["items"][0]["outcome"] == "active", out
        assert world.server.app.state.services.settle()  # the projection follows the commit
        names = by_name(named(gql(client, GRAPH)["graph"]))
        assert "Eve" in names, (names, out)
        eve = names["Eve"]
    ui.sign_in(world.token(uid))
    ui.page.click(f"#results button[data-entity='{eve}']")
    ui.page.wait_for_selector(f"#detail[data-entity='{eve}'] #memories")
    ui.page.click("#detail button.source-link")
    ui.page.locator("#source-dialog").wait_for(state="visible")
    ui.shot("hostile")
    assert "<img src=http://tracker.example/p.png" in ui.page.inner_text("#source-text")
    assert "<script>window.pwned=3</script>" in ui.page.inner_text("#memories")
    assert ui.page.locator("#detail img, #source-dialog img, #detail script").count() == 0
    assert ui.page.evaluate("window.pwned") is None
