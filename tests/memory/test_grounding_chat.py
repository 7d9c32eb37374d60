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
    from kgmem.memory.steps import unstated_numbers, unstated_steps

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


# -- replies that complete a question, and what a sentence says around its quote ---------------

ONCALL = conversation(
    ("user", "I'm on call this week for ledger-api."),
    ("assistant", "What does ledger-api do?"),
    ("user", "It's our double-entry bookkeeping service, written in Go."),
    ("assistant", "Okay. Who's the tech lead on Payments Platform?"),
    ("user", "Dmitri Volkov. Lena moved to the data team."),
    ("assistant", "Still on the night rota, I assume?"),
    ("user", "Yes, same as before."),
    ("assistant", "Big Mike says six weeks, so roughly end of March?"),
    ("user", "Yes, that's his estimate."),
)


def test_it_opening_an_answer_is_what_the_question_asked_about() -> None:
    said = (2, "It's our double-entry bookkeeping service")
    value = "double-entry bookkeeping service"
    assert ground(ONCALL, "ledger-api", "schema:description", said, value=value).grounded
    # an -ing word after "our" is a noun's, not an impersonal "it's ... -ing"
    assert not ground(ONCALL, "Go", "schema:description", said, value=value).grounded


def test_a_bare_name_answers_the_wh_question_before_it() -> None:
    asked, answer = (3, "Who's the tech lead on Payments Platform?"), (4, "Dmitri Volkov.")
    for cited in ((asked, answer), (answer,)):
        result = ground(ONCALL, "Dmitri Volkov", "schema:memberOf", *cited, obj="Payments Platform")
        assert result.grounded, result.reasons
        assert any(i.confirms == ONCALL[3].iri for i in result.items)
    # the question names another team; the answer another person; a sentence that is more
    # than the name is no bare answer
    lie = ground(ONCALL, "Dmitri Volkov", "schema:memberOf", asked, answer, obj="Core Ledger")
    assert not lie.grounded
    lie = ground(ONCALL, "Lena", "schema:memberOf", asked, answer, obj="Payments Platform")
    assert not lie.grounded
    moved = (4, "Lena moved to the data team")
    assert not ground(ONCALL, "Lena", "schema:memberOf", moved, obj="Payments Platform").grounded


def test_the_assistants_subjectless_question_asks_about_the_user() -> None:
    cited = ((5, "Still on the night rota, I assume?"), (6, "Yes, same as before."))
    result = ground(ONCALL, "I", "schema:description", *cited, value="night rota")
    assert result.grounded and any(i.confirms == ONCALL[5].iri for i in result.items)
    assert not ground(
        ONCALL, "Dmitri Volkov", "schema:description", *cited, value="night rota"
    ).grounded


def test_a_confirmation_may_name_whom_the_question_leaves_out() -> None:
    cited = (
        (7, "Big Mike says six weeks, so roughly end of March?"),
        (8, "Yes, that's his estimate."),
    )
    result = ground(ONCALL, "Big Mike", "schema:description", *cited, value="roughly end of March")
    assert result.grounded, result.reasons
    lie = ground(ONCALL, "Big Mike", "schema:description", *cited, value="end of April")
    assert not lie.grounded


BAKERY = conversation(
    (
        "user",
        "My partner Sam and I run the bakery. Plus bread rolls when we need them,"
        " which is maybe twice a week.",
    ),
    ("assistant", "What are your bestsellers?"),
    (
        "user",
        "The sourdough, we sell about 60 loaves a day."
        " Kestrel: first interview with Kestrel is on March 3rd.",
    ),
    ("assistant", "Do you have a savings account?"),
    ("user", "Yes, a stocks and shares ISA with Lumen, 5,000 in so far. We bought the van in May."),
    ("assistant", "Anyone helping?"),
    ("user", "Our accountant Yusuf is helping us with the paperwork."),
    ("user", "I take salbutamol when I need it, which is maybe twice a week."),
)


def test_a_topic_set_off_by_a_comma_or_colon_is_what_its_sentence_is_about() -> None:
    said = (2, "we sell about 60 loaves a day")
    assert ground(
        BAKERY, "sourdough", "schema:description", said, value="about 60 loaves a day"
    ).grounded
    assert not ground(
        BAKERY, "croissant", "schema:description", said, value="about 60 loaves a day"
    ).grounded
    interview = (2, "first interview with Kestrel is on March 3rd")
    value = "interview on March 3rd"
    # the value's words in order, with only the subject's name and glue words between
    assert ground(BAKERY, "Kestrel", "schema:description", interview, value=value).grounded
    assert not ground(
        BAKERY, "Kestrel", "schema:description", interview, value="interview on March 4th"
    ).grounded
    # "on" is no glue a value may leave out; another subject's name is none either
    skipped = "first interview March 3rd"
    assert not ground(BAKERY, "Kestrel", "schema:description", interview, value=skipped).grounded
    assert not ground(BAKERY, "Arden", "schema:description", interview, value=value).grounded


def test_a_comma_joins_an_apposition_only_to_a_noun_phrase() -> None:
    said = (4, "5,000 in so far")
    assert ground(
        BAKERY, "stocks and shares ISA", "schema:description", said, value="5,000 in so far"
    ).grounded
    assert not ground(BAKERY, "Lumen", "schema:description", said, value="5,000 in so far").grounded


def test_an_it_that_ends_its_clause_is_no_subject() -> None:
    said = (7, "which is maybe twice a week")
    assert ground(BAKERY, "I", "schema:description", said, value="maybe twice a week").grounded


def test_we_takes_in_the_one_the_speaker_joined_with_and() -> None:
    said = (4, "We bought the van in May")
    assert ground(BAKERY, "Sam", "schema:owns", said, obj="van").grounded
    assert ground(BAKERY, "I", "schema:owns", said, obj="van").grounded
    assert not ground(BAKERY, "Yusuf", "schema:owns", said, obj="van").grounded
    # "us" may be any of the speaker's circles: it names no companion
    helping = (6, "helping us with the paperwork")
    assert not ground(
        BAKERY, "Sam", "schema:description", helping, value="helping us with the paperwork"
    ).grounded


def test_a_thing_moved_to_a_new_holder_is_said_in_that_order() -> None:
    from kgmem.memory.change import moved_to

    def says(text: str, thing: str, holder: str) -> bool:
        return moved_to(analyse(text), thing, holder)

    assert says(
        "ledger-api moved to the Payments Platform team as of March 1st",
        "ledger-api",
        "Payments Platform",
    )
    assert says(
        "Also we switched flour to Harinas Norte, prices went up.", "flour", "Harinas Norte"
    )
    assert says("We handed the van over to Dan last week.", "van", "Dan")
    # the holder moved, not the thing; a plan; no "to"
    assert not says("Sam moved to the data team.", "data team", "Sam")
    assert not says("We might switch flour to Harinas Norte.", "flour", "Harinas Norte")
    assert not says("Harinas Norte sells flour now.", "flour", "Harinas Norte")


def test_a_firm_without_its_legal_form_is_no_surname() -> None:
    chat = conversation(
        ("user", "My accountant, Yusuf Haddad of Haddad & Co. Ltd, does my taxes."),
        ("assistant", "Good."),
        ("user", "Yusuf from Haddad & Co. said I should open an ISA."),
    )
    said = (2, "Yusuf from Haddad & Co.")
    result = ground(chat, "Yusuf Haddad", "schema:worksFor", said, obj="Haddad & Co.")
    assert result.grounded
    assert result.identities["Haddad & Co."].name != "Yusuf Haddad"
    assert result.identities["Yusuf Haddad"].name == "Yusuf Haddad"


def test_a_sentence_that_names_no_one_goes_on_from_the_one_before() -> None:
    chat = conversation(
        ("assistant", "Do you have a mortgage?"),
        ("user", "Yes, I have one with Northgate Building Society. Fixed at 3.4% until 2027."),
        ("user", "Sam met Jo at the bank. Fixed at 2% for five years."),
    )
    said = (1, "Fixed at 3.4% until 2027")
    value = "Fixed at 3.4% until 2027"
    assert ground(
        chat, "Northgate Building Society", "schema:description", said, value=value
    ).grounded
    assert not ground(chat, "Halden Bank", "schema:description", said, value=value).grounded
    assert not ground(
        chat, "Northgate Building Society", "schema:description", said, value="Fixed at 4%"
    ).grounded
    # two people before it: which one is not said
    two = (2, "Fixed at 2% for five years")
    assert not ground(chat, "Sam", "schema:description", two, value="Fixed at 2%").grounded


def test_a_denial_that_corrects_the_question_is_about_what_it_asked() -> None:
    chat = conversation(
        ("user", "We're getting a hypoallergenic dog, a poodle called Biscuit."),
        ("assistant", "Ha! Are you sure about the poodle? Some people still react."),
        ("user", "Actually no, not a poodle, a Maltese. Biscuit is a Maltese."),
    )
    said = (2, "not a poodle, a Maltese")
    assert ground(chat, "Biscuit", "schema:description", said, value="a Maltese").grounded
    # the denied value stays denied; another dog is not what was asked about
    assert not ground(chat, "Biscuit", "schema:description", said, value="a poodle").grounded
    assert not ground(chat, "Rex", "schema:description", said, value="a Maltese").grounded


def test_what_someone_says_of_a_thing_is_what_they_say() -> None:
    chat = conversation(
        ("user", "The foreman is Michael Osei, everyone calls him Big Mike."),
        ("assistant", "When does work start?"),
        ("user", "Demolition on February 16th. Big Mike says it should take six weeks."),
    )
    said = (2, "should take six weeks")
    value = "should take six weeks"
    assert ground(chat, "Michael Osei", "schema:description", said, value=value).grounded
    assert not ground(chat, "Dan Hale", "schema:description", said, value=value).grounded
    assert not ground(
        chat, "Michael Osei", "schema:description", said, value="should take two weeks"
    ).grounded


def test_a_value_someone_elses_possessive_owns_is_not_the_speakers() -> None:
    jo, sam = "Jolene", "Sam"
    chat = conversation(
        ("user", "I finally finished the mural."),
        ("user", "I'm in awe of your courage. Your support is encouraging. It's our best year."),
        ("user", "Here's a photo of my horse painting. My mother passed away last year."),
        speakers={0: jo, 1: sam, 2: sam},
    )
    awe = (1, "I'm in awe of your courage")
    assert not ground(chat, "Sam", "schema:description", awe, value="courage").grounded
    assert ground(chat, "Jolene", "schema:description", awe, value="courage").grounded
    # "my" before a noun of the value is the speaker's own
    mine = (2, "my horse painting")
    assert ground(chat, "Sam", "schema:description", mine, value="horse painting").grounded
    # a subject named by name is whom the clause is about, whoever the value is for
    flour = conversation(("user", "Molinos del Sur Ltd. supplies our flour."))
    said = (0, "Molinos del Sur Ltd. supplies our flour")
    assert ground(flour, "Molinos del Sur Ltd.", "schema:description", said, value="flour").grounded


RENO = conversation(
    ("user", "Our builder is Brightwork Builders Inc., they start Monday."),
    ("assistant", "Great. Did the budget change?"),
    ("user", "It went up to 21,000 because of the delay."),
    ("assistant", "Did Brightwork send the invoice?"),
    ("user", "It came today, 4,000 up front."),
    ("assistant", "Did your deadline move?"),
    ("user", "Not really, it's still May 15th."),
)


def test_an_it_answering_a_question_about_an_unnamed_thing_is_the_users_affair() -> None:
    """ "Did the budget change?" "It went up to 21,000": the user's budget, not the last
    company the chat named; what is said of it, the user says of their own affairs."""
    said = (2, "It went up to 21,000 because of the delay")
    assert ground(RENO, "I", "schema:description", said, value="21,000").grounded
    assert ground(RENO, "I", "schema:description", (6, "it's still May 15th"), value="May 15th")
    for lie in (
        ground(RENO, "Brightwork Builders Inc.", "schema:description", said, value="21,000"),
        ground(RENO, "I", "schema:description", said, value="12,000"),  # invented value
    ):
        assert not lie.grounded
    # the question names a company: its "it" is no affair of the user's said so
    invoice = (4, "It came today, 4,000 up front")
    assert not ground(RENO, "I", "schema:description", invoice, value="4,000").grounded
