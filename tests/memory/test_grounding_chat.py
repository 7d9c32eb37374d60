"""Grounding with the chat around the quote (#23): the speaker, pronouns, fragments, first
names, confirmations and answers, each with a true, a lying and an ambiguous case, as a
careful model writes drafts: short quotes, pronouns, first names."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import count

from rdflib import URIRef

from kgmem.memory.change import change_stated, ending_stated
from kgmem.memory.entities import key_variants
from kgmem.memory.grounding import GroundingContext, GroundingResult, RefusalCode, ground_claim
from kgmem.memory.model import (
    Authority,
    EvidenceDraft,
    Role,
    SourceRecord,
    SourceType,
)
from kgmem.memory.surface import analyse
from tests.memory.test_grounding import claim

R = RefusalCode
_ids = count()


def conversation(
    *turns: tuple[str, str], speakers: dict[int, str] | None = None
) -> list[SourceRecord]:
    """A chat's messages as stored: (role, text) in turn order."""
    chat = f"chat{next(_ids)}"
    out = []
    for n, (role, text) in enumerate(turns):
        agent = role == "assistant"
        out.append(
            SourceRecord(
                URIRef(f"https://w3id.org/kgmem/user/alice/msg/{chat}-{n}"),
                SourceType.AGENT_MESSAGE if agent else SourceType.USER_MESSAGE,
                text,
                Authority.AGENT if agent else Authority.USER,
                datetime(2026, 3, 2, 18, n, tzinfo=UTC),
                chat=chat,
                turn=n,
                role=Role.ASSISTANT if agent else Role.USER,
                speaker=(speakers or {}).get(n),
            )
        )
    return out


def ground(
    chat: list[SourceRecord],
    subject: str,
    predicate: str,
    *cited: tuple[int, str],
    value: str | None = None,
    obj: str | None = None,
    negated: bool = False,
) -> GroundingResult:
    """``subject predicate value/obj`` citing ``(turn, quote)`` items of ``chat``, with the
    whole chat as each cited message's history (as the gate reads it)."""
    said = claim(subject, predicate, value, obj, negated)
    evidence = [EvidenceDraft(source=str(chat[t].iri), quote=q) for t, q in cited]
    sources = {str(r.iri): r for r in chat}
    previous = {r.iri: chat[r.turn - 1] for r in chat if r.turn}  # type: ignore[operator]
    ctx = GroundingContext(
        user="acct-7",
        previous=previous,
        history={r.iri: tuple(chat) for r in chat},
    )
    return ground_claim(said, evidence, sources, ctx)


def codes(result: GroundingResult) -> list[RefusalCode]:
    return [r.code for r in result.reasons]


LYON = conversation(
    ("user", "Hi! I'm Ana Ruiz. I just moved to Lyon last week, can you help me?"),
    ("assistant", "Welcome, Ana! Where do you work?"),
    ("user", "I'm a UX researcher at Maison Vert, a small design studio near Part-Dieu."),
    ("assistant", "So you'll be a UX researcher at Maison Vert?"),
    ("user", "Yes, that's right."),
    ("assistant", "Did your family help with the move?"),
    ("user", "My brother Tomás drove the van from Valencia, he was exhausted after."),
    ("assistant", "And the flat?"),
    (
        "user",
        "My landlord is Marc Dupuis. Tomás and Marc sorted out the keys, he's an electrician.",
    ),
    ("assistant", "Are your guests flying into Lyon or Geneva?"),
    ("user", "Yes."),
    ("assistant", "Where are you living now? Somewhere in the Presqu'île?"),
    ("user", "No, a flat on Rue Paul Bert in the 3rd."),
)


# -- a. the speaker -----------------------------------------------------------------------


def test_the_users_introduced_name_is_the_speaker_of_their_messages() -> None:
    said = (2, "I'm a UX researcher at Maison Vert")
    assert ground(LYON, "Ana Ruiz", "schema:jobTitle", said, value="UX researcher").grounded
    assert ground(LYON, "Ana", "schema:jobTitle", said, value="UX researcher").grounded
    lie = ground(LYON, "Ana Ruiz", "schema:jobTitle", said, value="UX designer")
    assert codes(lie) == [R.QUOTE_DOES_NOT_STATE_VALUE]
    other = ground(LYON, "Tomás", "schema:jobTitle", said, value="UX researcher")
    assert not other.grounded and codes(other) == [R.QUOTE_DOES_NOT_NAME_SUBJECT]


def test_the_user_goes_by_the_name_they_introduced() -> None:
    result = ground(
        LYON, "Ana Ruiz", "schema:jobTitle", (2, "I'm a UX researcher"), value="UX researcher"
    )
    identity = result.identities["Ana Ruiz"]
    assert identity.is_user and identity.name == "Ana Ruiz"


# -- b. pronouns ----------------------------------------------------------------------------


def test_he_is_the_brother_named_before_it() -> None:
    said = (6, "he was exhausted after")
    assert ground(LYON, "Tomás", "schema:description", said, value="exhausted").grounded
    lie = ground(LYON, "Marc Dupuis", "schema:description", said, value="exhausted")
    assert not lie.grounded


def test_he_of_two_men_is_ambiguous_and_says_whom() -> None:
    said = (8, "he's an electrician")
    result = ground(LYON, "Marc Dupuis", "schema:jobTitle", said, value="electrician")
    assert codes(result) == [R.AMBIGUOUS_REFERENT]
    assert "marc dupuis" in result.reasons[0].message and "tomás" in result.reasons[0].message


# -- c. fragments -----------------------------------------------------------------------------


def test_a_fragment_takes_its_subject_from_its_own_sentence() -> None:
    moved = (0, "just moved to Lyon")
    assert ground(LYON, "I", "schema:homeLocation", moved, obj="Lyon").grounded
    studio = (2, "a small design studio")
    assert ground(LYON, "Maison Vert", "schema:description", studio, value="design studio").grounded
    # the same fragment said of someone else, and an invented value, stay refused
    assert not ground(LYON, "Tomás", "schema:homeLocation", moved, obj="Lyon").grounded
    assert not ground(LYON, "I", "schema:homeLocation", moved, obj="Paris").grounded
    assert not ground(
        LYON, "Ana Ruiz", "schema:description", studio, value="design studio"
    ).grounded


def test_a_drivers_fragment_is_not_the_speakers() -> None:
    drove = (6, "drove the van from Valencia")
    assert ground(LYON, "Tomás", "schema:description", drove, value="drove the van").grounded
    assert not ground(LYON, "I", "schema:description", drove, value="drove the van").grounded


# -- e. confirmation, denial, answers ------------------------------------------------------


def test_a_bare_yes_grounds_what_the_agent_said_right_before_it() -> None:
    result = ground(LYON, "I", "schema:jobTitle", (4, "Yes, that's right."), value="UX researcher")
    assert result.grounded
    user, agent = sorted(result.items, key=lambda i: i.source_type.value != "user_message")
    assert user.confirms == LYON[3].iri and agent.source == LYON[3].iri
    lie = ground(LYON, "I", "schema:jobTitle", (4, "Yes, that's right."), value="UX designer")
    assert not lie.grounded and R.CONFIRMATION_UNLINKED in codes(lie)


def test_a_yes_to_an_either_or_question_confirms_neither() -> None:
    result = ground(LYON, "I", "schema:description", (10, "Yes."), value="Lyon")
    assert not result.grounded


def test_a_reply_takes_its_subject_from_the_question_it_answers() -> None:
    said = (12, "No, a flat on Rue Paul Bert")
    assert ground(LYON, "I", "schema:homeLocation", said, obj="Rue Paul Bert").grounded
    assert not ground(LYON, "Tomás", "schema:homeLocation", said, obj="Rue Paul Bert").grounded
    assert not ground(LYON, "I", "schema:homeLocation", said, obj="Presqu'île").grounded


# -- d. names --------------------------------------------------------------------------------

OFFICE = conversation(
    ("user", "My colleague Claire Fontaine found me the flat. Claire is the research lead."),
    ("assistant", "Nice."),
    ("user", "My brother Arjun and my cousin Arjun both helped."),
    ("assistant", "Two Arjuns!"),
    ("user", "Arjun carried the sofa."),
    ("assistant", "Who is your boss?"),
    ("user", "Greg Olsen, everyone calls him Big G."),
)


def test_a_first_name_stands_for_the_one_full_name() -> None:
    said = (0, "Claire is the research lead")
    result = ground(OFFICE, "Claire Fontaine", "schema:jobTitle", said, value="research lead")
    assert result.grounded
    assert result.identities["Claire Fontaine"].name == "Claire Fontaine"
    assert not ground(
        OFFICE, "Claire Dubois", "schema:jobTitle", said, value="research lead"
    ).grounded


def test_a_first_name_two_people_share_is_ambiguous() -> None:
    result = ground(
        OFFICE,
        "Arjun",
        "schema:description",
        (4, "Arjun carried the sofa"),
        value="carried the sofa",
    )
    assert codes(result) == [R.AMBIGUOUS_REFERENT]


def test_a_nickname_names_whom_it_is_said_of() -> None:
    said = (6, "everyone calls him Big G")
    result = ground(OFFICE, "Greg Olsen", "schema:alternateName", said, value="Big G")
    assert result.grounded
    assert "Big G" in result.identities["Greg Olsen"].aliases


def test_the_one_speaker_of_a_named_chat_is_the_user_two_speakers_are_two_people() -> None:
    alone = conversation(("user", "I'm a data engineer."), speakers={0: "Priya Nair"})
    said = (0, "I'm a data engineer")
    assert ground(alone, "I", "schema:jobTitle", said, value="data engineer").grounded
    pair = conversation(
        ("user", "Morning."),
        ("user", "I'm a data engineer."),
        speakers={0: "Alice", 1: "Priya Nair"},
    )
    assert not ground(
        pair, "I", "schema:jobTitle", (1, "I'm a data engineer"), value="data engineer"
    ).grounded
    assert ground(
        pair, "Priya Nair", "schema:jobTitle", (1, "I'm a data engineer"), value="data engineer"
    ).grounded


# -- g. change -----------------------------------------------------------------------------


def _says(text: str, check: object) -> bool:
    doc = analyse(text)
    return check(doc, (0, len(text)))  # type: ignore[operator,no-any-return]


def test_a_change_is_what_a_source_says_changed_and_nothing_else() -> None:
    for changed in (
        "Since April 1st I'm officially a senior UX researcher",
        "ledger-api moved to the Payments Platform team as of March 1st",
        "She switched me from Symbicort to Fostair",
        "Claire got promoted too, she's head of research now",
        "Core Ledger doesn't own ledger-api anymore",
    ):
        assert _says(changed, change_stated), changed
    for unchanged in (
        "Tomás and Inés are visiting Lyon in May",
        "I should start looking at remortgage options next spring",
        "I'm thinking of opening on Sundays",
        "we added Hiroshima, two nights, after Kyoto",
    ):
        assert not _says(unchanged, change_stated), unchanged


def test_leaving_states_a_negated_claim_and_a_plan_does_not() -> None:
    assert _says("I left Riverside Striders", ending_stated)
    assert _says("Last day at Brightline is April 30th", ending_stated)
    assert not _says("I might quit the club next year", ending_stated)
    club = conversation(("user", "I left Riverside Striders in January."))
    said = (0, "I left Riverside Striders")
    assert ground(
        club, "I", "schema:memberOf", said, obj="Riverside Striders", negated=True
    ).grounded
    assert not ground(
        club, "I", "schema:memberOf", said, obj="Harbour Harriers", negated=True
    ).grounded


def test_a_company_is_found_without_its_legal_form() -> None:
    assert key_variants("Quillon Data Ltd.")[-1] == key_variants("Quillon Data")[0]
    assert key_variants("Molinos del Sur S.L.")[-1] == key_variants("Molinos del Sur Ltd")[-1]
    assert key_variants("Ana Ruiz") == ("ana ruiz",)


# -- i. a procedure's steps are claims too -----------------------------------------------

DEPLOY = (
    "1. merge to main, 2. wait for the CI build to go green, 3. run make release to tag it, "
    "4. approve the canary in Spinnaker, 5. watch the error dashboard for 15 minutes"
)


def test_steps_must_be_what_the_quotes_say_in_order() -> None:
    from kgmem.memory.grounding import unstated_numbers, unstated_steps

    steps = ["merge to main", "wait for the CI build to go green", "run make release to tag it"]
    assert unstated_steps([*steps, "watch the error dashboard for 15 minutes"], [DEPLOY]) == []
    # a changed number (the quote's own "5." numbering is no "5 minutes"), an invented step
    assert unstated_steps(["watch the error dashboard for 5 minutes"], [DEPLOY]) == [0]
    assert unstated_steps(["merge to main", "email the CTO"], [DEPLOY]) == [1]
    paint = "fill the cracks, sand everything, wipe it down, then one coat of primer"
    assert unstated_steps(["fill the cracks", "one coat of primer"], [paint]) == []
    assert unstated_steps(["two coats of primer"], [paint]) == [0]
    rollback = "if the canary error rate goes above 2%, hit rollback in Spinnaker"
    assert unstated_numbers(["the canary error rate goes above 2%", "deploying"], [rollback]) == []
    assert unstated_numbers(["the error rate goes above 5%"], [rollback]) == [0]
