"""Deterministic grounding: one group of tests per rule, with the lying-model cases."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime
from itertools import count

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import URIRef

from kgmem.memory.grounding import (
    DEFAULT_AUTHORITY_ORDER,
    GroundingContext,
    GroundingResult,
    RefusalCode,
    ground_claim,
)
from kgmem.memory.model import (
    Authority,
    ClaimDraft,
    EvidenceDraft,
    Role,
    SourceRecord,
    SourceType,
    SupportKind,
)

R = RefusalCode
EXPLICIT, DERIVED, INFERRED = SupportKind.EXPLICIT, SupportKind.DERIVED, SupportKind.INFERRED
CTX = GroundingContext(user="Alice", user_aliases=("Ali",), entities={"Robert": ("Bob", "Rob")})
_ids = count()


def _record(text: str, type_: SourceType, authority: Authority, **kw: object) -> SourceRecord:
    iri = URIRef(f"https://w3id.org/kgmem/user/alice/msg/{next(_ids)}")
    at = datetime(2024, 5, 1, tzinfo=UTC)
    return SourceRecord(iri, type_, text, authority, at, **kw)  # type: ignore[arg-type]


def user(text: str, turn: int = 0, chat: str = "c1", **kw: object) -> SourceRecord:
    kw.setdefault("role", Role.USER)
    return _record(text, SourceType.USER_MESSAGE, Authority.USER, chat=chat, turn=turn, **kw)


def agent(text: str, turn: int = 1, chat: str = "c1", **kw: object) -> SourceRecord:
    kw.setdefault("role", Role.ASSISTANT)
    return _record(text, SourceType.AGENT_MESSAGE, Authority.AGENT, chat=chat, turn=turn, **kw)


def tool(
    text: str, name: str = "web_fetch", ok: bool | None = True, recall: bool = False
) -> SourceRecord:
    return _record(
        text,
        SourceType.TOOL_RESULT,
        Authority.TOOL,
        role=Role.TOOL,
        tool_name=name,
        tool_succeeded=ok,
        recall_tool=recall,
    )


def task(text: str) -> SourceRecord:
    return _record(text, SourceType.TASK_RECORD, Authority.TASK, task_id="t1")


def note(text: str, path: str = "Health/allergies.md") -> SourceRecord:
    return _record(text, SourceType.EXTERNAL_NOTE, Authority.USER, note_path=path)


def short_note(text: str) -> SourceRecord:
    return _record(text, SourceType.SHORT_NOTE, Authority.AGENT)


def claim(
    subject: str,
    predicate: str,
    value: str | None = None,
    obj: str | None = None,
    negated: bool = False,
) -> ClaimDraft:
    return ClaimDraft(
        subject=subject, predicate=predicate, value=value, object=obj, negated=negated
    )


Item = tuple[SourceRecord, str | None] | tuple[SourceRecord, str | None, SupportKind]


def ground(
    c: ClaimDraft, *items: Item, ctx: GroundingContext = CTX, **kw: object
) -> GroundingResult:
    evidence = [
        EvidenceDraft.model_construct(
            source=str(it[0].iri), quote=it[1], support=it[2] if len(it) == 3 else EXPLICIT
        )
        for it in items
    ]
    sources = {str(it[0].iri): it[0] for it in items}
    return ground_claim(c, evidence, sources, ctx, **kw)  # type: ignore[arg-type]


def codes(result: GroundingResult) -> list[RefusalCode]:
    return [r.code for r in result.reasons]


ALLERGY = claim("I", "ex:allergicTo", "peanuts")


# -- rule 1: verbatim quotes, spans, unknown sources -------------------------------------------


def test_quote_span_is_the_first_occurrence_in_code_points() -> None:
    src = user("Peanuts! I'm allergic to peanuts. Again: I'm allergic to peanuts.")
    result = ground(ALLERGY, (src, "I'm allergic to peanuts"))
    assert result.grounded
    (item,) = result.items
    assert (item.start, item.end) == (9, 32)
    assert src.text[item.start : item.end] == item.quote == "I'm allergic to peanuts"


def test_quote_spans_count_code_points_through_emoji_and_accents() -> None:
    text = "Café ☕ 👩🏽‍💻 — j'adore, but I'm allergic to crème brûlée 🍮."
    src = user(text)
    quote = "I'm allergic to crème brûlée"
    result = ground(claim("I", "ex:allergicTo", "crème brûlée"), (src, quote))
    (item,) = result.items
    assert (item.start, item.end) == (text.index(quote), text.index(quote) + len(quote))
    assert text[item.start : item.end] == quote


def test_decomposed_accents_are_not_verbatim() -> None:
    src = user(unicodedata.normalize("NFD", "I'm allergic to crème brûlée"))
    result = ground(claim("I", "ex:allergicTo", "crème brûlée"), (src, "allergic to crème brûlée"))
    assert codes(result) == [R.QUOTE_NOT_IN_SOURCE]


def test_leading_and_trailing_whitespace_of_a_quote_is_stripped() -> None:
    src = user("Well, I'm allergic to peanuts.")
    result = ground(ALLERGY, (src, "  \n I'm allergic to peanuts\t "))
    assert result.grounded
    assert result.items[0].quote == "I'm allergic to peanuts"
    assert src.text[result.items[0].start : result.items[0].end] == "I'm allergic to peanuts"


@pytest.mark.parametrize(
    ("text", "quote", "lie"),
    [
        ("I have 3 cats.", "I have 4 cats", "changed number"),
        ("I moved on 2024-03-03.", "I moved on 2024-03-04", "changed date"),
        ("Bob lives in Lisbon.", "Rob lives in Lisbon", "changed name"),
        ("I'm allergic to peanuts.", "I can't eat peanuts", "paraphrase as a quote"),
        ("I'm allergic to peanuts.", "I'm  allergic to peanuts", "inner whitespace changed"),
        ("I'm allergic to peanuts.", "i'm allergic to peanuts", "case changed"),
        ("I\u2019m allergic to peanuts.", "I'm allergic to peanuts", "typographic apostrophe"),
    ],
)
def test_a_quote_that_is_not_verbatim_is_refused(text: str, quote: str, lie: str) -> None:
    result = ground(claim("I", "ex:p", "peanuts"), (user(text), quote))
    assert not result.grounded, lie
    assert codes(result) == [R.QUOTE_NOT_IN_SOURCE]
    assert result.reasons[0].index == 0 and result.reasons[0].field == "quote"


def test_a_near_miss_is_explained_as_not_verbatim() -> None:
    result = ground(ALLERGY, (user("I'm allergic to peanuts."), "I'm allergic  to PEANUTS"))
    assert "not verbatim" in result.reasons[0].message


def test_a_quote_from_another_conversation_is_refused() -> None:
    here = user("Let's plan the trip to Porto.", chat="c1")
    elsewhere = user("I'm allergic to peanuts.", chat="c2")
    evidence = [EvidenceDraft(source=str(here.iri), quote="I'm allergic to peanuts")]
    result = ground_claim(ALLERGY, evidence, {str(here.iri): here}, CTX)
    assert codes(result) == [R.QUOTE_NOT_IN_SOURCE]
    # Citing the other conversation's source that the caller does not own: unknown.
    evidence = [EvidenceDraft(source=str(elsewhere.iri), quote="I'm allergic to peanuts")]
    result = ground_claim(ALLERGY, evidence, {str(here.iri): here}, CTX)
    assert codes(result) == [R.UNKNOWN_SOURCE]
    assert result.reasons[0].field == "source"


def test_missing_quote_and_missing_evidence_are_refused() -> None:
    assert codes(ground(ALLERGY, (user("I'm allergic to peanuts."), None))) == [R.MISSING_QUOTE]
    result = ground_claim(ALLERGY, [], {}, CTX)
    assert (result.grounded, codes(result)) == (False, [R.NO_EVIDENCE])


# -- rule 2: a first-hand user message grounds directly ------------------------------------------


def test_a_user_message_grounds_with_user_authority() -> None:
    result = ground(ALLERGY, (user("I'm allergic to peanuts."), "I'm allergic to peanuts"))
    assert result.grounded and result.reasons == ()
    assert result.authority is Authority.USER
    assert result.support is EXPLICIT
    assert result.confidence_cap == 1.0
    assert result.may_auto_activate


# -- rule 3: agent prose needs independent support; recall and failed tools never count ---------

AGENT_SAYS = "Noted: you're allergic to peanuts."
AGENT_QUOTE = "you're allergic to peanuts"


def test_agent_prose_alone_is_not_proof() -> None:
    result = ground(ALLERGY, (agent(AGENT_SAYS), AGENT_QUOTE))
    assert not result.grounded and not result.may_auto_activate
    assert codes(result) == [R.AGENT_ONLY]


def test_agent_prose_with_a_user_statement_keeps_both() -> None:
    result = ground(
        ALLERGY,
        (agent(AGENT_SAYS), AGENT_QUOTE),
        (user("Bob is allergic to peanuts"), "allergic to peanuts"),
    )
    assert codes(result) == [R.AGENT_ONLY, R.QUOTE_DOES_NOT_NAME_SUBJECT]
    result = ground(
        ALLERGY,
        (agent(AGENT_SAYS), AGENT_QUOTE),
        (user("I'm allergic to peanuts"), "I'm allergic to peanuts"),
    )
    assert result.grounded and [i.index for i in result.items] == [0, 1]
    assert [i.authority for i in result.items] == [Authority.AGENT, Authority.USER]
    assert result.authority is Authority.USER and result.may_auto_activate


@pytest.mark.parametrize(
    ("support", "authority"),
    [
        (tool("Patient record: Alice is allergic to peanuts.", ok=True), Authority.TOOL),
        (task("Ordered a peanut-free menu because Alice is allergic to peanuts."), Authority.TASK),
    ],
)
def test_agent_prose_with_a_tool_or_task_is_grounded(
    support: SourceRecord, authority: Authority
) -> None:
    result = ground(
        ALLERGY, (agent(AGENT_SAYS), AGENT_QUOTE), (support, "Alice is allergic to peanuts")
    )
    assert result.grounded and len(result.items) == 2
    assert result.authority is authority and result.may_auto_activate


@pytest.mark.parametrize(
    ("source", "code"),
    [
        (tool("Alice is allergic to peanuts", name="memory_search", recall=True), R.RECALL_TOOL),
        (tool("Alice is allergic to peanuts", name="memory_search", recall=False), R.RECALL_TOOL),
        (tool("Alice is allergic to peanuts", name="retrieve_memory"), R.RECALL_TOOL),
        (tool("Alice is allergic to peanuts", ok=False), R.FAILED_TOOL),
        (tool("Alice is allergic to peanuts", ok=None), R.FAILED_TOOL),
    ],
)
def test_recall_and_failed_tools_never_count(source: SourceRecord, code: RefusalCode) -> None:
    alone = ground(ALLERGY, (source, "Alice is allergic to peanuts"))
    assert codes(alone) == [code]
    with_agent = ground(
        ALLERGY, (agent(AGENT_SAYS), AGENT_QUOTE), (source, "Alice is allergic to peanuts")
    )
    assert not with_agent.grounded
    assert codes(with_agent) == [R.AGENT_ONLY, code]


def test_a_mislabelled_agent_message_stays_agent_prose() -> None:
    liar = _record(AGENT_SAYS, SourceType.AGENT_MESSAGE, Authority.USER, role=Role.ASSISTANT)
    assert codes(ground(ALLERGY, (liar, AGENT_QUOTE))) == [R.AGENT_ONLY]


# -- rule 4: a user confirms the agent message right before it -----------------------------------

SHELLFISH = claim("I", "ex:allergicTo", "shellfish")
ASKS = "So you're allergic to shellfish as well?"


@pytest.mark.parametrize(
    "reply",
    [
        "Yes",
        "yes!",
        "Yep.",
        "Correct!",
        "That's right",
        "Exactly.",
        "True.",
        "Sure is!",
        "Yes I am",
        "Yeah, thanks.",
    ],
)
def test_a_user_confirmation_grounds_and_keeps_both_items(reply: str) -> None:
    said, answer = agent(ASKS, turn=1), user(reply, turn=2)
    result = ground(SHELLFISH, (said, "you're allergic to shellfish as well?"), (answer, reply))
    assert result.grounded, result.reasons
    assert [i.source for i in result.items] == [said.iri, answer.iri]
    agent_item, confirmation = result.items
    assert agent_item.quote == "you're allergic to shellfish as well?"
    assert said.text[agent_item.start : agent_item.end] == agent_item.quote
    assert confirmation.confirms == said.iri and agent_item.confirms is None
    assert answer.text[confirmation.start : confirmation.end] == confirmation.quote
    assert result.authority is Authority.USER and result.may_auto_activate


@pytest.mark.parametrize(
    "reply",
    [
        "No, that's wrong.",
        "Not quite.",
        "Nope",
        "Wrong.",
        "Yes, but peanuts, not shellfish.",
        "Absolutely not",
    ],
)
def test_a_negated_confirmation_is_refused(reply: str) -> None:
    result = ground(
        SHELLFISH,
        (agent(ASKS, turn=1), "you're allergic to shellfish"),
        (user(reply, turn=2), reply),
    )
    assert not result.grounded
    assert R.CONFIRMATION_NEGATED in codes(result)


@pytest.mark.parametrize("reply", ["Right?", "Right now I'm busy.", "Maybe.", "ok"])
def test_a_reply_that_is_no_affirmation_confirms_nothing(reply: str) -> None:
    result = ground(
        SHELLFISH,
        (agent(ASKS, turn=1), "you're allergic to shellfish"),
        (user(reply, turn=2), reply),
    )
    assert not result.grounded


def test_a_confirmation_must_answer_the_message_right_before_it() -> None:
    said, late = agent(ASKS, turn=1), user("Yes.", turn=4)
    result = ground(SHELLFISH, (said, "you're allergic to shellfish"), (late, "Yes."))
    assert not result.grounded and R.CONFIRMATION_UNLINKED in codes(result)
    other_chat = user("Yes.", turn=2, chat="c9")
    assert not ground(
        SHELLFISH, (said, "you're allergic to shellfish"), (other_chat, "Yes.")
    ).grounded


def test_previous_in_the_context_decides_what_a_reply_answers() -> None:
    said, reply = agent(ASKS, turn=1), user("Yes.", turn=7)
    linked = GroundingContext(user="Alice", previous={reply.iri: said})
    items: tuple[Item, ...] = ((said, "you're allergic to shellfish"), (reply, "Yes."))
    assert ground(SHELLFISH, *items, ctx=linked).grounded
    adjacent = user("Yes.", turn=2)
    elsewhere = GroundingContext(user="Alice", previous={adjacent.iri: user("Hi", turn=1)})
    assert not ground(
        SHELLFISH, (said, "you're allergic to shellfish"), (adjacent, "Yes."), ctx=elsewhere
    ).grounded


def test_a_confirmation_does_not_launder_a_misquoted_agent_claim() -> None:
    said = agent("So you're allergic to peanuts?", turn=1)
    result = ground(SHELLFISH, (said, "you're allergic to peanuts"), (user("Yes!", turn=2), "Yes"))
    assert not result.grounded
    assert codes(result)[0] is R.QUOTE_DOES_NOT_STATE_VALUE


def test_a_yes_answers_the_last_question_not_a_claim_slipped_in_before_it() -> None:
    said = agent("You live in Paris. Shall I book a table?", turn=1)
    lives = claim("I", "ex:livesIn", "Paris")
    result = ground(lives, (said, "You live in Paris"), (user("Yes.", turn=2), "Yes."))
    assert not result.grounded and R.CONFIRMATION_UNLINKED in codes(result)
    asked = agent("Noted. You live in Paris, right?", turn=1)
    assert ground(lives, (asked, "You live in Paris"), (user("Yes.", turn=2), "Yes.")).grounded


def test_the_confirmation_quote_must_be_the_affirmation() -> None:
    reply = user("Yes, that's right. By the way, I love jazz.", turn=2)
    result = ground(
        SHELLFISH, (agent(ASKS, turn=1), "you're allergic to shellfish"), (reply, "I love jazz")
    )
    assert not result.grounded


def test_a_refused_quote_that_leaves_the_opening_yes_out_keeps_its_own_reason() -> None:
    said = user("Yeah, pets bring joy. It's a pity that I don't have pets.", turn=2)
    result = ground(claim("I", "ex:has", "pets"), (said, "I don't have pets"))
    assert codes(result) == [R.NEGATION_MISMATCH]  # not an unlinked confirmation


def test_an_unconfirmed_agent_question_is_not_a_statement() -> None:
    result = ground(
        SHELLFISH,
        (agent(ASKS), "you're allergic to shellfish as well?"),
        (task("Allergy check: allergic to shellfish"), "allergic to shellfish"),
    )
    assert codes(result) == [R.QUOTE_IS_QUESTION, R.QUOTE_DOES_NOT_NAME_SUBJECT]


# -- rule 5: notes, tasks, short notes ------------------------------------------------------------


def test_an_external_note_grounds_with_its_path_and_user_authority() -> None:
    src = note("# Allergies\n\nI'm allergic to peanuts (diagnosed 2019).")
    result = ground(ALLERGY, (src, "I'm allergic to peanuts"))
    assert result.grounded and result.authority is Authority.USER and result.may_auto_activate
    assert result.items[0].note_path == "Health/allergies.md"


def test_a_task_record_grounds_with_task_authority() -> None:
    result = ground(
        ALLERGY,
        (task("Booked a table; Alice is allergic to peanuts."), "Alice is allergic to peanuts"),
    )
    assert result.grounded and result.authority is Authority.TASK
    assert result.confidence_cap == 0.9 and result.may_auto_activate


def test_an_agent_short_note_reaches_the_inbox_only() -> None:
    result = ground(
        ALLERGY, (short_note("The user is allergic to peanuts."), "The user is allergic to peanuts")
    )
    assert result.grounded and result.authority is Authority.AGENT
    assert not result.may_auto_activate and result.confidence_cap == 0.6


# -- rule 6: an explicit quote must state the claim ----------------------------------------------

JAZZ = claim("I", "ex:likes", "jazz")
NOT_JAZZ = claim("I", "ex:likes", "jazz", negated=True)


@pytest.mark.parametrize(
    ("c", "text", "quote", "expected"),
    [
        # the value
        (
            SHELLFISH,
            "I'm allergic to peanuts.",
            "I'm allergic to peanuts",
            R.QUOTE_DOES_NOT_STATE_VALUE,
        ),
        (
            claim("I", "ex:likes", "art"),
            "I love party games.",
            "I love party games",
            R.QUOTE_DOES_NOT_STATE_VALUE,
        ),
        (
            claim("I", "ex:allergicTo", "peanut"),
            "I'm allergic to peanuts.",
            "I'm allergic to peanuts",
            None,
        ),
        (claim("Bob", "ex:carColor", "red"), "Bob's car is red.", "Bob's car is red", None),
        (claim("I", "ex:owns", "3 cats"), "I have three cats.", "I have three cats", None),
        (
            claim("I", "ex:owns", "4 cats"),
            "I have three cats.",
            "I have three cats",
            R.QUOTE_DOES_NOT_STATE_VALUE,
        ),
        (claim("I", "ex:age", "25"), "I'm twenty-five.", "I'm twenty-five", None),
        (
            claim("I", "ex:likes", "the Beatles"),
            "I love Beatles songs.",
            "I love Beatles songs",
            None,
        ),
        # negation
        (JAZZ, "I don't like jazz.", "I don't like jazz", R.NEGATION_MISMATCH),
        (NOT_JAZZ, "I don't like jazz.", "I don't like jazz", None),
        (NOT_JAZZ, "I like jazz.", "I like jazz", R.NEGATION_MISMATCH),
        (
            claim("I", "ex:livesIn", "Paris"),
            "I no longer live in Paris.",
            "I no longer live in Paris",
            R.NEGATION_MISMATCH,
        ),
        (JAZZ, "Honestly, I never said I like jazz.", "I like jazz", R.NEGATION_MISMATCH),
        (JAZZ, "I like everything but jazz.", "I like everything but jazz", R.NEGATION_MISMATCH),
        # a negated verb of forgetting or ceasing affirms ("never forget" is remembering)
        (
            claim("I", "ex:remembers", "first steps"),
            "I'll never forget her first steps.",
            "I'll never forget her first steps",
            None,
        ),
        (
            claim("I", "ex:thinksAbout", "mystery novel"),
            "I can't stop thinking about that mystery novel.",
            "I can't stop thinking about that mystery novel",
            None,
        ),
        (
            claim("I", "ex:remembers", "first steps", negated=True),
            "I'll never forget her first steps.",
            "I'll never forget her first steps",
            R.NEGATION_MISMATCH,
        ),
        (
            claim("I", "ex:likes", "jazz"),
            "I never stopped to listen to jazz.",
            "I never stopped to listen to jazz",
            R.NEGATION_MISMATCH,
        ),
        (
            claim("I", "ex:likes", "rock"),
            "I don't like jazz, blues, or rock.",
            "I don't like jazz, blues, or rock",
            R.NEGATION_MISMATCH,
        ),
        (
            claim("I", "ex:likes", "rock"),
            "I don't like jazz, but I love rock.",
            "I don't like jazz, but I love rock",
            None,
        ),
        (
            ALLERGY,
            "I'm allergic to peanuts, and I don't like jazz.",
            "I'm allergic to peanuts, and I don't like jazz",
            None,
        ),
        (
            claim("I", "ex:has", "community"),
            "It's comforting to know I'm not alone and have a great community around me.",
            "I'm not alone and have a great community around me",
            None,
        ),
        (
            claim("I", "ex:drinks", "milk"),
            "I don't eat meat and drink milk.",
            "I don't eat meat and drink milk",
            R.NEGATION_MISMATCH,
        ),
        # booleans use the predicate's words; the predicate never refuses otherwise
        (claim("I", "ex:isVegetarian", "true"), "I'm vegetarian.", "I'm vegetarian", None),
        (
            claim("I", "ex:isVegetarian", "true"),
            "I'm not vegetarian.",
            "I'm not vegetarian",
            R.NEGATION_MISMATCH,
        ),
        (claim("I", "ex:isVegetarian", "false"), "I'm not vegetarian.", "I'm not vegetarian", None),
        (
            claim("I", "ex:zzUnrelatedTerm", "peanuts"),
            "I'm allergic to peanuts.",
            "I'm allergic to peanuts",
            None,
        ),
        # questions, and subject and value in one sentence
        (ALLERGY, "Am I allergic to peanuts?", "Am I allergic to peanuts?", R.QUOTE_IS_QUESTION),
        (
            ALLERGY,
            "Am I allergic to peanuts? Let me check.",
            "Am I allergic to peanuts",
            R.QUOTE_IS_QUESTION,
        ),
        (
            claim("Bob", "ex:likes", "jazz"),
            "I love jazz. Bob hates it.",
            "I love jazz. Bob hates it",
            R.SUBJECT_AND_VALUE_APART,
        ),
        # a quote cut mid-word borrows nothing
        (JAZZ, "I like jazzy tunes.", "I like jazz", R.QUOTE_DOES_NOT_STATE_VALUE),
    ],
)
def test_an_explicit_quote_must_state_the_claim(
    c: ClaimDraft, text: str, quote: str, expected: RefusalCode | None
) -> None:
    result = ground(c, (user(text), quote))
    assert codes(result) == ([] if expected is None else [expected])
    assert result.grounded is (expected is None)


@pytest.mark.parametrize(
    ("value", "text", "grounded"),
    [
        ("2024-03-03", "Emma was born on March 3rd, 2024.", True),
        ("2024-03-03", "Emma was born on 3 March 2024.", True),
        ("2024-03-03", "Emma was born on the 3rd of March, 2024.", True),
        ("March 3rd, 2024", "Emma was born on 2024-03-03.", True),
        ("March 3", "Emma was born on 2024-03-03.", True),
        ("March 2024", "Emma was born on March 3rd, 2024.", True),
        ("2024", "Emma was born on March 3rd, 2024.", True),
        ("2024-03-04", "Emma was born on March 3rd, 2024.", False),
        ("2023-03-03", "Emma was born on March 3rd, 2024.", False),
        ("2024-03-03", "Emma was born on March 3rd.", False),  # the year is not stated
    ],
)
def test_dates_match_across_spellings(value: str, text: str, grounded: bool) -> None:
    result = ground(claim("Emma", "ex:birthDate", value), (user(text), text.rstrip(".")))
    assert result.grounded is grounded
    if not grounded:
        assert codes(result) == [R.QUOTE_DOES_NOT_STATE_VALUE]


def test_first_person_is_the_speaker_not_whoever_the_model_names() -> None:
    said = user("I'm allergic to peanuts.")
    for subject in ("I", "me", "Alice", "Ali", "the user"):
        assert ground(
            claim(subject, "ex:allergicTo", "peanuts"), (said, "I'm allergic to peanuts")
        ).grounded
    result = ground(claim("Bob", "ex:allergicTo", "peanuts"), (said, "I'm allergic to peanuts"))
    assert codes(result) == [R.QUOTE_DOES_NOT_NAME_SUBJECT]
    assert result.reasons[0].field == "subject"


def test_first_person_of_another_speaker_is_that_speaker() -> None:
    """In a chat of two named speakers, Carol's "I" is Carol, not the user Alice."""
    alice = user("What do you do?", turn=0, speaker="Alice")
    carol = user("I'm a nurse.", turn=1, speaker="Carol")
    ctx = GroundingContext(user="Alice", history={carol.iri: (alice, carol)})
    said = (carol, "I'm a nurse")
    assert codes(ground(claim("I", "ex:job", "nurse"), said, ctx=ctx)) == [
        R.QUOTE_DOES_NOT_NAME_SUBJECT
    ]
    assert ground(claim("Carol", "ex:job", "nurse"), said, ctx=ctx).grounded


def test_the_one_speaker_of_a_chat_is_the_user_whatever_the_host_calls_them() -> None:
    """A host that shows the user as "Carol" does not make "I" someone else."""
    carol = user("I'm a nurse.", speaker="Carol")
    assert ground(claim("I", "ex:job", "nurse"), (carol, "I'm a nurse")).grounded
    assert ground(claim("Carol", "ex:job", "nurse"), (carol, "I'm a nurse")).grounded
    lie = ground(claim("I", "ex:job", "doctor"), (carol, "I'm a nurse"))
    assert codes(lie) == [R.QUOTE_DOES_NOT_STATE_VALUE]


def test_first_person_in_an_assistant_message_is_not_the_user() -> None:
    said = agent("I'm allergic to peanuts, says the bot.", turn=1)
    result = ground(ALLERGY, (said, "I'm allergic to peanuts"), (user("Yes.", turn=2), "Yes."))
    assert not result.grounded
    assert codes(result)[0] is R.QUOTE_DOES_NOT_NAME_SUBJECT


def test_aliases_name_the_same_entity() -> None:
    said = user("My brother Bob lives in Lisbon.")
    lives = claim("Robert", "ex:livesIn", "Lisbon")
    assert ground(lives, (said, "Bob lives in Lisbon")).grounded
    assert codes(
        ground(lives, (said, "Bob lives in Lisbon"), ctx=GroundingContext(user="Alice"))
    ) == [R.QUOTE_DOES_NOT_NAME_SUBJECT]
    brother = claim("I", "ex:hasBrother", obj="Rob")
    assert ground(brother, (said, "My brother Bob")).grounded
    assert codes(ground(claim("I", "ex:hasBrother", obj="Carl"), (said, "My brother Bob"))) == [
        R.QUOTE_DOES_NOT_STATE_VALUE
    ]


# -- rule 7: derived and inferred support ---------------------------------------------------------

BORN = user("I was born in 1990 in Porto.")
AGE = claim("I", "ex:age", "34")


def test_derived_support_need_not_state_the_value_and_is_capped() -> None:
    assert codes(ground(AGE, (BORN, "I was born in 1990"))) == [R.QUOTE_DOES_NOT_STATE_VALUE]
    derived = ground(AGE, (BORN, "I was born in 1990", DERIVED))
    assert derived.grounded and derived.support is DERIVED
    assert derived.confidence_cap == 0.7 and derived.items[0].support is DERIVED
    inferred = ground(AGE, (BORN, "I was born in 1990", INFERRED))
    assert inferred.confidence_cap == 0.5 and inferred.support is INFERRED


def test_derived_support_must_still_be_verbatim_and_about_the_claim() -> None:
    assert codes(ground(AGE, (BORN, "I was born in 1991", DERIVED))) == [R.QUOTE_NOT_IN_SOURCE]
    assert codes(ground(AGE, (BORN, "in Porto", DERIVED))) == [R.QUOTE_UNRELATED]


def test_derived_support_from_agent_sources_never_auto_activates() -> None:
    from_agent = ground(AGE, (agent("So you were born in 1990?"), "you were born in 1990", DERIVED))
    assert not from_agent.grounded and codes(from_agent) == [R.AGENT_ONLY]
    from_note = ground(
        AGE, (short_note("User was born in 1990."), "User was born in 1990", DERIVED)
    )
    assert from_note.grounded and not from_note.may_auto_activate
    assert from_note.confidence_cap == 0.6


def test_the_strongest_support_wins() -> None:
    result = ground(
        claim("I", "ex:bornIn", "1990"),
        (BORN, "I was born in 1990", DERIVED),
        (BORN, "I was born in 1990"),
    )
    assert result.support is EXPLICIT and result.confidence_cap == 1.0


# -- rule 8: agent-reported sources ---------------------------------------------------------------


def test_an_agent_reported_user_message_reaches_the_inbox_only() -> None:
    reported = user("I'm allergic to peanuts.", agent_reported=True)
    result = ground(ALLERGY, (reported, "I'm allergic to peanuts"))
    assert result.grounded and not result.may_auto_activate
    assert result.authority is Authority.AGENT and result.confidence_cap == 0.6
    assert result.items[0].agent_reported
    with_agent = ground(
        ALLERGY, (agent(AGENT_SAYS), AGENT_QUOTE), (reported, "I'm allergic to peanuts")
    )
    assert with_agent.grounded and not with_agent.may_auto_activate
    first_hand = ground(
        ALLERGY,
        (reported, "I'm allergic to peanuts"),
        (user("I'm allergic to peanuts"), "I'm allergic to peanuts"),
    )
    assert first_hand.may_auto_activate and first_hand.authority is Authority.USER


# -- the claim as a whole -------------------------------------------------------------------------


def test_authority_order_is_configurable() -> None:
    items: tuple[Item, ...] = (
        (tool("Alice is allergic to peanuts."), "Alice is allergic to peanuts"),
        (task("Alice is allergic to peanuts."), "Alice is allergic to peanuts"),
    )
    assert ground(ALLERGY, *items).authority is Authority.TOOL
    order = (Authority.USER, Authority.TASK, Authority.TOOL, Authority.AGENT)
    assert ground(ALLERGY, *items, authority_order=order).authority is Authority.TASK
    assert DEFAULT_AUTHORITY_ORDER[0] is Authority.USER


def test_refused_items_are_reported_even_when_others_ground_the_claim() -> None:
    said = user("I'm allergic to peanuts.")
    result = ground(
        ALLERGY, (said, "I'm allergic to peanuts"), (said, "I'm deathly allergic to peanuts")
    )
    assert result.grounded and [i.index for i in result.items] == [0]
    (refusal,) = result.reasons
    assert (refusal.code, refusal.index, refusal.field) == (R.QUOTE_NOT_IN_SOURCE, 1, "quote")
    assert refusal.message.startswith("evidence[1].quote:")


# -- properties -----------------------------------------------------------------------------------

_words = st.sampled_from(["I", "you", "peanuts", "jazz", "Alice", "not", "yes", "like", "is", "."])
_texts = st.lists(_words, min_size=1, max_size=12).map(" ".join)


@st.composite
def _agentish(draw: st.DrawFn) -> tuple[SourceRecord, str, SupportKind]:
    text = draw(_texts)
    kind = draw(st.sampled_from(["agent", "recall", "reported", "short"]))
    src = {
        "agent": lambda: agent(text),
        "recall": lambda: tool(
            text, name=draw(st.sampled_from(["memory_search", "x"])), recall=True
        ),
        "reported": lambda: user(text, agent_reported=True),
        "short": lambda: short_note(text),
    }[kind]()
    i = draw(st.integers(0, len(text) - 1))
    j = draw(st.integers(i + 1, len(text)))
    return src, text[i:j], draw(st.sampled_from(list(SupportKind)))


@settings(max_examples=300, deadline=None)
@given(
    items=st.lists(_agentish(), min_size=1, max_size=4),
    subject=st.sampled_from(["I", "Alice", "the user"]),
    value=st.sampled_from(["peanuts", "jazz", "yes"]),
    negated=st.booleans(),
)
def test_agent_and_recall_sources_never_auto_activate(
    items: list[tuple[SourceRecord, str, SupportKind]], subject: str, value: str, negated: bool
) -> None:
    result = ground(claim(subject, "ex:likes", value, negated=negated), *items)
    assert not result.may_auto_activate
    assert result.confidence_cap <= 0.6
    only_agent_or_recall = all(
        src.type is SourceType.AGENT_MESSAGE or src.recall_tool for src, _, _ in items
    )
    if only_agent_or_recall:
        assert not result.grounded


def test_preference_quote_stating_the_opposite_is_refused() -> None:
    from datetime import UTC, datetime

    from rdflib import URIRef

    from kgmem.memory.grounding import GroundingContext, RefusalCode, ground_claim
    from kgmem.memory.model import (
        Authority,
        ClaimDraft,
        EvidenceDraft,
        Role,
        SourceRecord,
        SourceType,
    )

    rec = SourceRecord(
        URIRef("urn:m:1"),
        SourceType.USER_MESSAGE,
        "Honestly I hate jazz, but I love opera.",
        Authority.USER,
        datetime(2026, 1, 1, tzinfo=UTC),
        chat="c",
        turn=0,
        role=Role.USER,
    )
    ctx = GroundingContext(user="Alice")
    likes_jazz = ClaimDraft(subject="I", predicate="kgm:likes", object="jazz")
    result = ground_claim(
        likes_jazz, [EvidenceDraft(source="urn:m:1", quote="I hate jazz")], {"urn:m:1": rec}, ctx
    )
    assert not result.grounded
    assert result.reasons[0].code is RefusalCode.NEGATION_MISMATCH
    likes_opera = ClaimDraft(subject="I", predicate="kgm:likes", object="opera")
    ok = ground_claim(
        likes_opera, [EvidenceDraft(source="urn:m:1", quote="I love opera")], {"urn:m:1": rec}, ctx
    )
    assert ok.grounded
    dislikes = ClaimDraft(subject="I", predicate="kgm:dislikes", object="jazz")
    assert ground_claim(
        dislikes, [EvidenceDraft(source="urn:m:1", quote="I hate jazz")], {"urn:m:1": rec}, ctx
    ).grounded
