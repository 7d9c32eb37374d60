"""Reading a page file back and finding what a person changed in it (:mod:`kgmem.pages.edits`).

Every page here is written by the real renderer (``render_page``, stamped with its id and
revision as the vault file is), then edited the way people and editors edit Markdown: in
Obsidian (CRLF on Windows, the properties editor rewriting the front matter, tabs, list
continuation), in a plain text editor, by hand. Each case asserts the exact edits found.
Cases marked ``xfail`` are behaviour believed wrong for a real user: they say what should
happen, and fail until it does.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

import pytest
from rdflib import URIRef

from kgmem.memory.model import MemoryKind
from kgmem.pages.content import FactLine, MemoryLine, PageInput
from kgmem.pages.edits import (
    EditKind,
    FrontMatterError,
    LineEdit,
    PageLine,
    ReadPage,
    dated,
    fact_parts,
    page_edits,
    read_page,
)
from kgmem.pages.render import render_page
from kgmem.pages.revisions import stamped

PAGE_ID = "55f7331a2746eb46e8a9f52295510b23"
ENTITY = "https://w3id.org/kgmem/user/alice/entity/06c604b3"
UPDATED = datetime(2026, 6, 1, 12, tzinfo=UTC)

FACTS, HOWTOS, HISTORY = "Facts", "How-tos and preferences", "History"
ADDED, CHANGED = EditKind.ADDED, EditKind.CHANGED
STRUCK, REMOVED = EditKind.STRUCK, EditKind.REMOVED

EMAIL, LIVES, WORKS = "m:4d9e0f12", "m:caae7810", "m:c1e1852c"
PEANUTS, DEPLOY, MOVED = "m:0b4e2a91", "m:35d40fc9", "m:77aa01bc"

ALICE = PageInput(
    entity=URIRef(ENTITY),
    name="Alice",
    types=("person",),
    facts=(
        FactLine("works for", "Acme", (WORKS,), link="Memory/entities/acme"),
        FactLine("lives in", "Lyon", (LIVES,)),
        FactLine("email", "alice_m@example.com", (EMAIL,)),
    ),
    memories=(
        MemoryLine(PEANUTS, MemoryKind.SEMANTIC, "Allergic to peanuts"),
        MemoryLine(
            DEPLOY,
            MemoryKind.PROCEDURAL,
            "Deploying the site",
            steps=("run the tests", "push to main", "check deploy_log.txt"),
        ),
        MemoryLine(MOVED, MemoryKind.EPISODIC, "Moved to Lyon", occurred_at=datetime(2026, 5, 30)),
    ),
)

# The lines of Alice's page, as the renderer writes them (checked by the first test).
L_EMAIL = f"- **email**: alice\\_m@example.com [{EMAIL}]"
L_LIVES = f"- **lives in**: Lyon [{LIVES}]"
L_WORKS = f"- **works for**: [[Memory/entities/acme|Acme]] [{WORKS}]"
L_PEANUTS = f"- Allergic to peanuts [{PEANUTS}]"
L_DEPLOY = f"- Deploying the site [{DEPLOY}]"
STEPS = "   1. run the tests\n   2. push to main\n   3. check deploy\\_log.txt"
L_MOVED = f"- 2026-05-30: Moved to Lyon [{MOVED}]"
OLD_STEPS = ("run the tests", "push to main", "check deploy_log.txt")  # the steps' words
#: Every cited line of Alice's page (citation, section), in page order.
ALL_LINES = [
    (EMAIL, FACTS),
    (LIVES, FACTS),
    (WORKS, FACTS),
    (PEANUTS, FACTS),
    (DEPLOY, HOWTOS),
    (MOVED, HISTORY),
]


class Seen(NamedTuple):
    """One edit, as a test states it: kind, the memories it reaches, the line's words as
    they are now (None when it is gone), its section, and whether a strike says it never
    held."""

    kind: EditKind
    citations: tuple[str, ...]
    text: str | None
    section: str
    erroneous: bool = False


def render(page: PageInput, revision: int = 2) -> str:
    """The page file as the vault holds it: rendered, then stamped with id and revision."""
    return stamped(render_page(page, UPDATED), PAGE_ID, revision)


BASE = render(ALICE)


def edit(*changes: tuple[str, str], text: str = BASE) -> str:
    """``text`` with each (before, after) made; each ``before`` must occur exactly once, so
    a test cannot edit a line that is not on the page."""
    for before, after in changes:
        assert text.count(before) == 1, f"{before!r} occurs {text.count(before)} times"
        text = text.replace(before, after)
    return text


def edits_of(new: str, old: str = BASE) -> list[LineEdit]:
    return page_edits(read_page(old), read_page(new))


def seen(new: str, old: str = BASE) -> list[Seen]:
    """The edits from ``old`` to ``new``, as :class:`Seen`."""
    found: list[Seen] = []
    for e in edits_of(new, old):
        line = e.new or e.old
        assert line is not None
        if e.kind is ADDED:  # an added line reaches no memory, whatever it typed
            assert e.old is None and e.new is not None and e.new.citations == ()
        text = e.new.text if e.new is not None else None
        found.append(Seen(e.kind, e.citations, text, line.section, e.erroneous))
    return found


PROBE = "\n## Notes\n\n- Probe line a person added\n"


def assert_no_edit(new: str, old: str = BASE) -> None:
    """``new`` differs from ``old`` but says nothing new: with one line added to it, that
    line is the only edit found (so the comparison did run, and found no other edit)."""
    assert new != old
    assert seen(new + PROBE, old) == [Seen(ADDED, (), "Probe line a person added", "Notes")]


def one_line(markdown: str, section: str = FACTS) -> PageLine:
    """The single line ``markdown`` reads as, under ``section``."""
    lines = read_page(f"## {section}\n\n{markdown}\n").lines
    assert len(lines) == 1, lines
    return lines[0]


def front_matter(text: str) -> str:
    """The front matter block of ``text`` (both ``---`` lines included)."""
    end = text.index("\n---\n", 3) + len("\n---\n")
    return text[:end]


def with_front(text: str, front: str) -> str:
    """``text`` with its front matter replaced by ``front``."""
    return front + text[len(front_matter(text)) :]


# -- reading a page back -----------------------------------------------------------------


def test_a_rendered_page_reads_back_as_its_cited_lines() -> None:
    for line in (L_EMAIL, L_LIVES, L_WORKS, L_PEANUTS, f"{L_DEPLOY}\n{STEPS}", L_MOVED):
        assert f"\n{line}\n" in BASE  # the constants are the renderer's lines
    page = read_page(BASE)
    assert (page.id, page.revision, page.entity, page.heading) == (PAGE_ID, 2, ENTITY, "Alice")
    assert [(line.section, line.text, line.citations, line.steps) for line in page.lines] == [
        (FACTS, "email: alice_m@example.com", (EMAIL,), ()),
        (FACTS, "lives in: Lyon", (LIVES,), ()),
        (FACTS, "works for: Acme", (WORKS,), ()),
        (FACTS, "Allergic to peanuts", (PEANUTS,), ()),
        (HOWTOS, "Deploying the site", (DEPLOY,), OLD_STEPS),
        (HISTORY, "2026-05-30: Moved to Lyon", (MOVED,), ()),
    ]
    assert not any(line.struck for line in page.lines)
    assert page_edits(page, read_page(BASE)) == []


def test_kgmem_s_own_notes_are_not_lines() -> None:
    """The placeholder of an empty section, the summary and the note of a truncated page
    are kgmem's words, not lines a person wrote."""
    empty = render(PageInput(entity=URIRef(ENTITY), name="Bob", truncated=True))
    assert empty.count("_Nothing recorded yet._") == 3
    assert "_Only the newest memories are shown here" in empty
    assert read_page(empty).lines == ()
    assert_no_edit(empty.replace("## Facts\n", "## Facts  \n"), empty)


@pytest.mark.parametrize(
    "spelling",
    [
        f'id: "{PAGE_ID}"',
        f"id: '{PAGE_ID}'",
        f"id: {PAGE_ID}",  # the properties editor drops the quotes
    ],
)
def test_the_page_id_is_read_however_it_is_quoted(spelling: str) -> None:
    assert read_page(edit((f'id: "{PAGE_ID}"', spelling))).id == PAGE_ID


@pytest.mark.parametrize(
    "digits", ["98765432109876543210987654321098", "01234567012345670123456701234567"]
)
def test_an_all_digit_id_left_unquoted_is_read_as_written(digits: str) -> None:
    """YAML reads an unquoted all-digit id as a number (the second one as an octal one):
    the id is the text, not the number."""
    page = read_page(edit((f'id: "{PAGE_ID}"', f"id: {digits}")))
    assert isinstance(page.front["id"], int)  # not the text it was
    assert page.id == digits


@pytest.mark.parametrize(
    "spelling", ["id: 55f7331a", "id: ", f'page: "{PAGE_ID}"', f'id: "{PAGE_ID}0"']
)
def test_a_missing_or_malformed_id_is_no_id(spelling: str) -> None:
    assert read_page(edit((f'id: "{PAGE_ID}"', spelling))).id is None


@pytest.mark.parametrize(
    ("spelling", "revision"),
    [("revision: 2", 2), ('revision: "2"', 2), ("revision: true", None), ("revision: two", None)],
)
def test_the_revision_is_a_whole_number_or_none(spelling: str, revision: int | None) -> None:
    assert read_page(edit(("revision: 2", spelling))).revision == revision


def test_obsidian_s_properties_editor_rewriting_the_front_matter_is_no_edit() -> None:
    rewritten = "\n".join(
        [
            "---",
            f"id: {PAGE_ID}",
            "revision: 2",
            "title: Alice",
            "types:",
            "  - person",
            f"entity: {ENTITY}",
            "aliases:",
            "updated: 2026-06-01T12:00:00Z",
            "writer: kgmem",
            "tags:",
            "  - people",
            "---",
            "",
        ]
    )
    page = read_page(with_front(BASE, rewritten))
    assert (page.id, page.revision, page.entity) == (PAGE_ID, 2, ENTITY)
    assert page.front["types"] == ["person"]
    assert_no_edit(with_front(BASE, rewritten))


def test_crlf_line_endings_read_as_the_same_page() -> None:
    windows = BASE.replace("\n", "\r\n")
    assert read_page(windows).lines == read_page(BASE).lines
    assert read_page(windows).id == PAGE_ID
    changed = edit(("Lyon [m:caae7810]", "Paris [m:caae7810]"), text=windows)
    assert seen(changed) == [Seen(CHANGED, (LIVES,), "lives in: Paris", FACTS)]


def test_a_byte_order_mark_does_not_hide_the_front_matter() -> None:
    page = read_page("\ufeff" + BASE)
    assert (page.id, page.revision) == (PAGE_ID, 2)


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ('---\nid: "x"\ntitle: "Alice\nrevision: 2\n---\n', r"not YAML \(line 4\)"),
        ("---\ntitle: Alice\ntypes:\n\t- person\n---\n", r"not YAML \(line 4\)"),  # a tab
        ("---\ntypes: [person\n---\n", "not YAML"),
        ("---\n- person\n- place\n---\n", "not a mapping"),
        ("---\njust a sentence\n---\n", "not a mapping"),
    ],
    ids=["unclosed-quote", "tab-indent", "unclosed-list", "a-list", "a-scalar"],
)
def test_front_matter_that_is_not_a_mapping_of_properties_is_refused(
    front: str, message: str
) -> None:
    with pytest.raises(FrontMatterError, match=message):
        read_page(with_front(BASE, front))


def test_a_front_matter_never_closed_is_refused() -> None:
    unclosed = BASE.replace("\n---\n", "\n\n", 1)
    assert unclosed.startswith("---\n") and unclosed.count("\n---\n") == 0
    with pytest.raises(FrontMatterError, match="not closed"):
        read_page(unclosed)


def test_a_file_without_front_matter_is_read_as_lines_with_no_id() -> None:
    body = BASE[len(front_matter(BASE)) :]
    page = read_page(body)
    assert (page.front, page.id, page.revision, page.entity) == ({}, None, None, None)
    assert page.lines == read_page(BASE).lines


@pytest.mark.parametrize("text", ["", "\n", "   \n\n"])
def test_an_empty_file_has_nothing(text: str) -> None:
    assert read_page(text) == ReadPage({}, ())
    assert seen(text) == [Seen(REMOVED, (c,), None, s) for c, s in ALL_LINES]


def test_a_file_that_is_only_front_matter_has_properties_and_no_lines() -> None:
    page = read_page(front_matter(BASE))
    assert (page.id, page.revision, page.lines) == (PAGE_ID, 2, ())
    assert seen(front_matter(BASE)) == [Seen(REMOVED, (c,), None, s) for c, s in ALL_LINES]


def test_front_matter_closed_at_the_end_of_the_file_is_closed() -> None:
    page = read_page(front_matter(BASE).removesuffix("\n"))
    assert (page.id, page.revision, page.lines) == (PAGE_ID, 2, ())


# -- edits that are no edits -------------------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        [(L_LIVES, f"{L_LIVES}   ")],
        [(L_LIVES, f"* **lives in**: Lyon [{LIVES}]")],
        [(L_LIVES, f"-   **lives in**:   Lyon  [{LIVES}]")],
        [(L_PEANUTS, f"- allergic to Peanuts [{PEANUTS}]")],
        [(L_LIVES, f"- **lives in**: **Lyon** [{LIVES}]")],
        [(L_LIVES, f"- [{LIVES}] **lives in**: Lyon")],
        [("[[Memory/entities/acme|Acme]]", "[[Memory/entities/acme-corp|Acme]]")],
        [("[[Memory/entities/acme|Acme]]", "Acme")],
        [("[[Memory/entities/acme|Acme]]", "[[Memory/entities/acme]]")],
        [("alice\\_m@example.com", "alice_m@example.com")],
        [(f"{L_LIVES}\n{L_WORKS}", f"{L_WORKS}\n{L_LIVES}")],
        [(f"{L_LIVES}\n", f"{L_LIVES}\n\n")],
        [(f"{L_PEANUTS}\n", ""), (L_MOVED, f"{L_MOVED}\n{L_PEANUTS}")],
        [("## Facts", "## Facts about Alice")],
        [(STEPS, STEPS.replace("   ", "\t"))],
        [(STEPS, STEPS.replace(". ", ") "))],
        [(STEPS, "\n".join(f"  - {step}" for step in OLD_STEPS))],
        [("On record: 4 facts", "On record: lots of facts")],
    ],
    ids=[
        "trailing-spaces",
        "star-bullet",
        "extra-spaces",
        "case-only",
        "value-bolded",
        "citation-moved-first",
        "link-target-only",
        "link-dropped",
        "bare-link",
        "escape-removed",
        "lines-reordered",
        "blank-line-between",
        "line-moved-to-history",
        "section-renamed",
        "steps-tab-indented",
        "steps-renumbered-with-parens",
        "steps-as-bullets",
        "summary-edited",
    ],
)
def test_an_edit_that_changes_no_words_is_no_edit(changes: list[tuple[str, str]]) -> None:
    assert_no_edit(edit(*changes))


# -- added lines -------------------------------------------------------------------------


def test_a_bullet_added_at_the_end_of_facts_is_added() -> None:
    new = edit((L_PEANUTS, f"{L_PEANUTS}\n- Speaks Italian"))
    assert seen(new) == [Seen(ADDED, (), "Speaks Italian", FACTS)]


def test_a_star_bullet_with_trailing_spaces_in_the_middle_of_the_list_is_added() -> None:
    new = edit((L_LIVES, f"{L_LIVES}\n* Speaks Italian   "))
    assert seen(new) == [Seen(ADDED, (), "Speaks Italian", FACTS)]
    assert edits_of(new)[0].new == PageLine(FACTS, "Speaks Italian", "Speaks Italian")


def test_a_bullet_after_a_blank_line_at_the_end_of_a_section_is_added() -> None:
    new = edit((f"{L_PEANUTS}\n\n## How", f"{L_PEANUTS}\n\n- Has a cat named Miso\n\n## How"))
    assert seen(new) == [Seen(ADDED, (), "Has a cat named Miso", FACTS)]


def test_a_plain_sentence_with_no_bullet_is_added() -> None:
    new = edit((L_PEANUTS, f"{L_PEANUTS}\n\nShe prefers tea to coffee, no sugar."))
    assert seen(new) == [Seen(ADDED, (), "She prefers tea to coffee, no sugar.", FACTS)]


def test_a_new_fact_in_label_value_form_is_added_with_its_parts() -> None:
    new = edit((L_WORKS, f"{L_WORKS}\n- **born in**: [[Memory/entities/turin|Turin]]"))
    assert seen(new) == [Seen(ADDED, (), "born in: Turin", FACTS)]
    added = edits_of(new)[0].new
    assert added is not None and fact_parts(added) == ("born in", "Turin")


def test_a_new_dated_history_line_is_added_with_its_date() -> None:
    new = edit((L_MOVED, f"{L_MOVED}\n- 2026-06-10: Started at Globex"))
    assert seen(new) == [Seen(ADDED, (), "2026-06-10: Started at Globex", HISTORY)]
    added = edits_of(new)[0].new
    assert added is not None and dated(added) == ("2026-06-10", "Started at Globex")


def test_a_new_how_to_is_added_with_its_steps() -> None:
    howto = "- Renewing the passport\n   1. book an appointment\n   2. bring two photos"
    new = edit((STEPS, f"{STEPS}\n{howto}"))
    assert seen(new) == [Seen(ADDED, (), "Renewing the passport", HOWTOS)]
    added = edits_of(new)[0].new
    assert added is not None and added.steps == ("book an appointment", "bring two photos")


def test_a_line_in_a_section_of_one_s_own_is_added_under_it() -> None:
    new = BASE + "\n## Notes\n\n- Met at the Lyon meetup\n"
    assert seen(new) == [Seen(ADDED, (), "Met at the Lyon meetup", "Notes")]


def test_a_line_replacing_the_placeholder_of_an_empty_section_is_added() -> None:
    bob = render(PageInput(entity=URIRef(ENTITY), name="Bob"))
    new = edit(
        ("## Facts\n\n_Nothing recorded yet._", "## Facts\n\n- Plays the cello"),
        ("## History\n\n_Nothing recorded yet._", "## History\n\n_Nothing recorded yet._\n"),
        text=bob,
    )
    new += "- 2026-03-02: Joined the orchestra\n"
    assert seen(new, bob) == [
        Seen(ADDED, (), "Plays the cello", FACTS),
        Seen(ADDED, (), "2026-03-02: Joined the orchestra", HISTORY),
    ]


def test_a_typed_citation_the_page_never_showed_reaches_no_memory() -> None:
    new = edit((L_PEANUTS, f"{L_PEANUTS}\n- Lives with Bob [m:deadbeef]"))
    assert seen(new) == [Seen(ADDED, (), "Lives with Bob", FACTS)]
    added = edits_of(new)[0].new
    assert added is not None and "deadbeef" not in added.text + added.quote


def test_a_typed_citation_next_to_a_real_one_reaches_only_the_real_one() -> None:
    new = edit((L_LIVES, f"- **lives in**: Paris [{LIVES}] [m:deadbeef]"))
    assert seen(new) == [Seen(CHANGED, (LIVES,), "lives in: Paris", FACTS)]


def test_a_struck_line_of_one_s_own_is_no_edit() -> None:
    new = edit((L_PEANUTS, f"{L_PEANUTS}\n- ~~Speaks Italian~~ not really"))
    assert_no_edit(new)


@pytest.mark.parametrize(
    "changes",
    [[(L_PEANUTS, f"{L_PEANUTS}\n- ")], [(STEPS, f"{STEPS}\n   4. ")]],
    ids=["empty-bullet", "empty-step"],
)
def test_an_empty_list_item_is_no_edit(changes: list[tuple[str, str]]) -> None:
    assert_no_edit(edit(*changes))


# -- changed lines -----------------------------------------------------------------------


def test_a_changed_value_is_a_change_of_that_line_s_memory() -> None:
    new = edit((L_LIVES, f"- **lives in**: Paris [{LIVES}]"))
    assert seen(new) == [Seen(CHANGED, (LIVES,), "lives in: Paris", FACTS)]
    changed = edits_of(new)[0]
    assert changed.old is not None and changed.old.text == "lives in: Lyon"
    assert changed.new is not None and fact_parts(changed.new) == ("lives in", "Paris")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("[[Memory/entities/globex|Globex]]", "works for: Globex"),
        ("Globex", "works for: Globex"),
        ("[[Memory/entities/acme|Acme Labs]]", "works for: Acme Labs"),
    ],
    ids=["link-kept", "link-dropped", "shown-text-changed"],
)
def test_a_changed_linked_value_is_a_change(value: str, text: str) -> None:
    new = edit(("[[Memory/entities/acme|Acme]]", value))
    assert seen(new) == [Seen(CHANGED, (WORKS,), text, FACTS)]


def test_a_changed_date_is_a_change_with_the_new_date() -> None:
    new = edit(("2026-05-30: Moved", "2026-05-28: Moved"))
    assert seen(new) == [Seen(CHANGED, (MOVED,), "2026-05-28: Moved to Lyon", HISTORY)]
    changed = edits_of(new)[0].new
    assert changed is not None and dated(changed) == ("2026-05-28", "Moved to Lyon")


@pytest.mark.parametrize(
    ("before", "after", "steps"),
    [
        ("push to main", "push to the release branch", ("push to the release branch",)),
        (
            "\n   3.",
            "\n   3. announce it in #general\n   4.",
            ("push to main", "announce it in #general"),
        ),
        ("   2. push to main\n", "", ()),
    ],
    ids=["step-reworded", "step-inserted", "step-deleted"],
)
def test_an_edited_step_is_a_change_of_the_how_to(
    before: str, after: str, steps: tuple[str, ...]
) -> None:
    new = edit((before, after))
    assert seen(new) == [Seen(CHANGED, (DEPLOY,), "Deploying the site", HOWTOS)]
    changed = edits_of(new)[0].new
    assert changed is not None
    assert changed.steps == ("run the tests", *steps, "check deploy_log.txt")


def test_a_reworded_how_to_keeps_its_steps() -> None:
    new = edit((L_DEPLOY, f"- Deploying the website [{DEPLOY}]"))
    assert seen(new) == [Seen(CHANGED, (DEPLOY,), "Deploying the website", HOWTOS)]
    changed = edits_of(new)[0].new
    assert changed is not None and changed.steps == OLD_STEPS


def test_a_hard_wrapped_fact_line_is_one_line() -> None:
    new = edit((L_LIVES, f"- **lives in**: Lyon, in the old town\n  near the cathedral [{LIVES}]"))
    text = "lives in: Lyon, in the old town near the cathedral"
    assert seen(new) == [Seen(CHANGED, (LIVES,), text, FACTS)]


def test_a_hard_wrapped_step_stays_one_step() -> None:
    new = edit(("2. push to main", "2. push to main once the tests\n      are green"))
    assert seen(new) == [Seen(CHANGED, (DEPLOY,), "Deploying the site", HOWTOS)]
    changed = edits_of(new)[0].new
    assert changed is not None
    assert changed.steps == ("run the tests", "push to main once the tests are green", OLD_STEPS[2])


def test_a_blank_line_between_steps_keeps_them_the_how_to_s_steps() -> None:
    assert_no_edit(edit(("   1. run the tests\n", "   1. run the tests\n\n")))


def test_removing_an_escape_from_a_step_is_no_edit() -> None:
    assert_no_edit(edit(("deploy\\_log.txt", "deploy_log.txt")))


def test_a_line_citing_two_memories_changes_both() -> None:
    two = PageInput(
        entity=URIRef(ENTITY),
        name="Alice",
        facts=(FactLine("lives in", "Lyon", (LIVES, "m:aa11bb22")),),
    )
    old = render(two)
    line = f"- **lives in**: Lyon [{LIVES}] [m:aa11bb22]"
    assert seen(edit((line, line.replace("Lyon", "Paris")), text=old), old) == [
        Seen(CHANGED, (LIVES, "m:aa11bb22"), "lives in: Paris", FACTS)
    ]
    assert seen(
        edit((line, f"- ~~**lives in**: Lyon~~ [{LIVES}] [m:aa11bb22]"), text=old), old
    ) == [Seen(STRUCK, (LIVES, "m:aa11bb22"), "lives in: Lyon", FACTS)]
    assert_no_edit(edit((" [m:aa11bb22]", ""), text=old), old)  # one still cites it


# -- struck lines ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (
            L_PEANUTS,
            f"- ~~Allergic to peanuts~~ [{PEANUTS}]",
            Seen(STRUCK, (PEANUTS,), "Allergic to peanuts", FACTS),
        ),
        (
            L_PEANUTS,
            f"- ~~Allergic to peanuts [{PEANUTS}]~~",
            Seen(STRUCK, (PEANUTS,), "Allergic to peanuts", FACTS),
        ),
        (
            L_LIVES,
            f"- ~~**lives in**: Lyon~~ [{LIVES}]",
            Seen(STRUCK, (LIVES,), "lives in: Lyon", FACTS),
        ),
        (
            L_LIVES,
            f"- **lives in**: ~~Lyon~~ [{LIVES}]",
            Seen(STRUCK, (LIVES,), "lives in: Lyon", FACTS),
        ),
        (
            L_WORKS,
            f"- **works for**: ~~[[Memory/entities/acme|Acme]]~~ [{WORKS}]",
            Seen(STRUCK, (WORKS,), "works for: Acme", FACTS),
        ),
        (
            L_MOVED,
            f"- ~~2026-05-30: Moved to Lyon~~ [{MOVED}]",
            Seen(STRUCK, (MOVED,), "2026-05-30: Moved to Lyon", HISTORY),
        ),
        (
            L_DEPLOY,
            f"- ~~Deploying the site~~ [{DEPLOY}]",
            Seen(STRUCK, (DEPLOY,), "Deploying the site", HOWTOS),
        ),
    ],
    ids=[
        "citation-outside",
        "citation-inside",
        "whole-fact",
        "value-only",
        "linked-value-only",
        "history",
        "how-to",
    ],
)
def test_a_struck_line_is_struck(before: str, after: str, expected: Seen) -> None:
    new = edit((before, after))
    assert seen(new) == [expected]
    struck = edits_of(new)[0].new
    assert struck is not None and struck.struck and fact_parts(struck) is None


@pytest.mark.parametrize(
    ("note", "erroneous"),
    [
        ("wrong", True),
        ("(never true)", True),
        ("— not true, she never lived there", True),
        ("that was a mistake", True),
        ("Incorrect", True),
        ("outdated", False),
        ("(no longer)", False),
        ("no longer true", False),
        ("moved to Paris in 2026", False),
        ("", False),
        ("(didn't happen)", True),
        ("not correct", True),
    ],
)
def test_a_strike_is_erroneous_only_when_its_note_says_it_never_held(
    note: str, erroneous: bool
) -> None:
    new = edit((L_MOVED, f"- ~~2026-05-30: Moved to Lyon~~ [{MOVED}] {note}".rstrip()))
    found = seen(new)
    assert found == [Seen(STRUCK, (MOVED,), "2026-05-30: Moved to Lyon", HISTORY, erroneous)]
    struck = edits_of(new)[0].new
    assert struck is not None and struck.after_strike == note


# -- removed lines -----------------------------------------------------------------------


def test_a_deleted_line_is_removed() -> None:
    new = edit((f"{L_LIVES}\n", ""))
    assert seen(new) == [Seen(REMOVED, (LIVES,), None, FACTS)]
    removed = edits_of(new)[0]
    assert removed.new is None and removed.old is not None and removed.old.text == "lives in: Lyon"


def test_a_deleted_section_removes_each_of_its_lines() -> None:
    section = f"## How-tos and preferences\n\n{L_DEPLOY}\n{STEPS}\n\n"
    assert seen(edit((section, ""))) == [Seen(REMOVED, (DEPLOY,), None, HOWTOS)]
    facts = f"{L_EMAIL}\n{L_LIVES}\n{L_WORKS}\n{L_PEANUTS}"
    assert seen(edit((facts, "_Nothing recorded yet._"))) == [
        Seen(REMOVED, (c,), None, s) for c, s in ALL_LINES if s == FACTS
    ]


def test_a_line_rewritten_without_its_citation_is_added_and_the_old_one_removed() -> None:
    new = edit((L_LIVES, "- **lives in**: Paris"))
    assert seen(new) == [
        Seen(ADDED, (), "lives in: Paris", FACTS),
        Seen(REMOVED, (LIVES,), None, FACTS),
    ]


def test_a_line_that_only_lost_its_citation_marker_is_no_edit() -> None:
    assert_no_edit(edit((f" [{PEANUTS}]", "")))


# -- duplicated and moved lines ----------------------------------------------------------


def test_a_duplicated_line_is_no_edit() -> None:
    assert_no_edit(edit((L_MOVED, f"{L_MOVED}\n{L_LIVES}")))


def test_of_two_copies_of_a_cited_line_the_first_counts() -> None:
    new = edit((L_LIVES, f"- **lives in**: Paris [{LIVES}]\n{L_LIVES}"))
    assert seen(new) == [Seen(CHANGED, (LIVES,), "lives in: Paris", FACTS)]


def test_an_edited_copy_of_a_cited_line_is_added() -> None:
    new = edit((L_LIVES, f"{L_LIVES}\n- **lives in**: Paris [{LIVES}]"))
    assert seen(new) == [Seen(ADDED, (), "lives in: Paris", FACTS)]


def test_a_line_moved_and_reworded_is_a_change_in_its_new_section() -> None:
    new = edit(
        (f"{L_PEANUTS}\n", ""),
        (L_MOVED, f"{L_MOVED}\n- 2026-04-02: Diagnosed allergic to peanuts [{PEANUTS}]"),
    )
    text = "2026-04-02: Diagnosed allergic to peanuts"
    assert seen(new) == [Seen(CHANGED, (PEANUTS,), text, HISTORY)]


# -- a whole editing session -------------------------------------------------------------


def test_an_editing_session_in_obsidian_on_windows() -> None:
    """Several edits at once, the front matter rewritten and the file saved with CRLF: each
    new line's edit in page order, then the removals."""
    new = edit(
        (f'id: "{PAGE_ID}"', f"id: {PAGE_ID}"),
        ('types: ["person"]', "types:\n  - person"),
        (L_LIVES, f"- **lives in**: Paris [{LIVES}]"),
        (L_PEANUTS, f"- ~~Allergic to peanuts~~ [{PEANUTS}] wrong, that is her brother"),
        (f"{L_DEPLOY}\n{STEPS}", "- Prefers her coffee black"),
        (L_MOVED, f"{L_MOVED}\n- 2026-06-10: Started at Globex"),
    ).replace("\n", "\r\n")
    assert read_page(new).id == PAGE_ID
    assert seen(new) == [
        Seen(CHANGED, (LIVES,), "lives in: Paris", FACTS),
        Seen(STRUCK, (PEANUTS,), "Allergic to peanuts", FACTS, erroneous=True),
        Seen(ADDED, (), "Prefers her coffee black", HOWTOS),
        Seen(ADDED, (), "2026-06-10: Started at Globex", HISTORY),
        Seen(REMOVED, (DEPLOY,), None, HOWTOS),
    ]


# -- fact_parts and dated ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("markdown", "parts"),
    [
        (L_LIVES, ("lives in", "Lyon")),
        (L_WORKS, ("works for", "Acme")),
        (L_EMAIL, ("email", "alice_m@example.com")),
        ("- **not lives in**: Paris", ("not lives in", "Paris")),
        ("- **works for**: Acme \\[UK\\] [m:deadbeef]", ("works for", "Acme [UK]")),
        (L_PEANUTS, None),
        ("- lives in: Paris", None),
        ("- **lives in**:", None),
        (f"- ~~**lives in**: Lyon~~ [{LIVES}]", None),
        ("- **born in:** Turin", ("born in", "Turin")),
    ],
)
def test_fact_parts(markdown: str, parts: tuple[str, str] | None) -> None:
    assert fact_parts(one_line(markdown)) == parts


@pytest.mark.parametrize(
    ("markdown", "parts"),
    [
        (L_MOVED, ("2026-05-30", "Moved to Lyon")),
        ("- **2026-06-10**: Started at Globex", ("2026-06-10", "Started at Globex")),
        ("- ?: Moved to Lyon", None),  # the renderer's line for an event with no date
        ("- Moved to Lyon on 2026-05-30", None),
        ("- 30/05/2026: Moved to Lyon", None),
    ],
)
def test_dated(markdown: str, parts: tuple[str, str] | None) -> None:
    assert dated(one_line(markdown, HISTORY)) == parts
