"""Who a chat's words refer to (memory/discourse/), read as a person reads the chat."""

from __future__ import annotations

from kgmem.memory.discourse import Discourse, Kind, Speaker, Turn

USER = Speaker(is_user=True)
BOT = Speaker(assistant=True)


def chat(*texts: str, speakers: tuple[Speaker, ...] = ()) -> Discourse:
    """Turns alternate user, assistant, user, ... unless ``speakers`` says otherwise."""
    turns = [
        Turn(t, speakers[i] if i < len(speakers) else (USER if i % 2 == 0 else BOT))
        for i, t in enumerate(texts)
    ]
    return Discourse(turns, user_names=["acct-7"])


def whom(d: Discourse, turn: int, text: str, nth: int = 0) -> list[str]:
    """The longest name of each referent the ``nth`` mention ``text`` of ``turn`` may mean
    ("<user>" for the user)."""
    refs = [r for r in d.refs(turn) if r.text == text]
    ref = refs[nth]
    return sorted(
        "<user>" if user else " ".join(max(names, key=lambda n: (len(n), n)))
        for names, user in zip(ref.candidates, ref.user, strict=True)
    )


# -- speakers ---------------------------------------------------------------------------


def test_a_self_introduction_names_the_user_wherever_it_comes() -> None:
    d = chat(
        "Can you help me plan a party?",
        "Of course.",
        "My brother Arjun is doing the music. By the way, I'm Meera, I never said. Meera Iyer.",
    )
    assert d.identity("Meera Iyer") is not None and d.identity("Meera Iyer").is_user  # type: ignore[union-attr]
    assert d.identity("Meera") is not None and d.identity("Meera").is_user  # type: ignore[union-attr]
    assert whom(d, 0, "me") == ["<user>"]
    assert d.identity("Arjun") is not None and not d.identity("Arjun").is_user  # type: ignore[union-attr]


def test_call_me_and_everyone_calls_me_are_the_users_nicknames() -> None:
    d = chat("Morning! Call me Leo. Everyone at the club calls me Nardo, sadly.")
    leo = d.identity("Leo")
    assert leo is not None and leo.is_user
    assert "Nardo" in (leo.name, *leo.aliases)


def test_i_of_the_assistant_is_nobody_and_you_is_the_user() -> None:
    d = chat("Hi.", "I can help. Are you new in Lyon?")
    assert whom(d, 1, "I") == []
    assert whom(d, 1, "you") == ["<user>"]


def test_two_named_speakers_are_two_people() -> None:
    jo, sam = Speaker(("Jolene",)), Speaker(("Sam",))
    d = chat("I love hiking.", "I prefer the beach.", speakers=(jo, sam))
    assert whom(d, 0, "I") == ["jolene"] and whom(d, 1, "I") == ["sam"]


def test_you_between_two_people_is_the_other_one() -> None:
    jo, sam = Speaker(("Jolene",)), Speaker(("Sam",))
    d = chat("I ran a 10k!", "You're doing awesome work.", speakers=(jo, sam))
    assert whom(d, 1, "You're") == ["jolene"]
    # with an assistant in the chat, the user's "you" is the assistant: no one
    d = chat("Can you help me?", "Sure.")
    assert not [r for r in d.refs(0) if r.text == "you" and any(r.candidates)]


# -- names ------------------------------------------------------------------------------


def test_a_first_name_is_the_one_full_name_it_belongs_to() -> None:
    d = chat("My colleague Claire Fontaine lent me a hotspot.", "Nice.", "Claire is great.")
    assert whom(d, 2, "Claire") == ["claire fontaine"]
    identity = d.identity("Claire")
    assert identity is not None and identity.name == "Claire Fontaine"


def test_two_people_of_one_first_name_stay_apart_by_what_describes_them() -> None:
    d = chat(
        "My brother Arjun and my cousin Arjun are both coming.",
        "Two Arjuns!",
        "My brother is Arjun Iyer, the cousin is Arjun Menon. Cousin Arjun works at a bank.",
        "Noted.",
        "Arjun said he'll bring speakers.",
    )
    assert whom(d, 2, "Arjun Iyer") == ["arjun iyer"]
    assert whom(d, 2, "Arjun") == ["arjun menon"]  # "Cousin Arjun"
    assert whom(d, 4, "Arjun") == ["arjun iyer", "arjun menon"]  # which one: not said
    assert whom(d, 4, "he'll") == ["arjun iyer", "arjun menon"]


def test_a_partner_does_not_take_a_colleagues_surname() -> None:
    d = chat(
        "My partner Sam and I are going to Japan.",
        "Lovely.",
        "My colleague Sam Ortiz lived in Osaka, he gave me a list.",
        "Which Sam?",
        "Ha, the colleague. My partner is Sam Lee.",
    )
    assert whom(d, 0, "Sam") == ["sam lee"]
    assert whom(d, 2, "Sam Ortiz") == ["sam ortiz"]
    assert whom(d, 2, "he") == ["sam ortiz"]


def test_a_place_is_not_a_longer_name_of_the_city() -> None:
    d = chat("Tokyo first, then Kyoto.", "Where in Kyoto?", "Near Kyoto Station.")
    assert whom(d, 2, "Kyoto Station") == ["kyoto station"]
    assert whom(d, 0, "Kyoto") == ["kyoto"]


def test_nicknames_join_whom_they_are_said_of() -> None:
    d = chat(
        "My dad's memory is getting worse.",
        "Tell me about your dad.",
        "His name is Harold Price. Everyone calls him Hal. My coach is Magdalena Kowalska, "
        "Magda for short.",
    )
    assert whom(d, 1, "your dad") == ["harold price"]
    assert whom(d, 2, "Hal") == ["harold price"]
    assert whom(d, 2, "Magda") == ["magdalena kowalska"]


def test_a_nickname_shared_with_a_company_goes_to_whom_it_names() -> None:
    d = chat(
        "Juno Electrics does the wiring. Funny, because our dog is also called Juno. "
        "She hates the drilling."
    )
    assert whom(d, 0, "Juno Electrics") == ["juno electrics"]
    assert whom(d, 0, "Juno") == ["juno"]
    assert whom(d, 0, "She") == ["juno"]


def test_a_legal_form_and_a_title_are_no_part_of_the_name() -> None:
    d = chat("Our flour comes from Molinos del Sur Ltd. I saw Dr. Chen yesterday.")
    molinos = d.identity("Molinos del Sur")
    assert molinos is not None and molinos == d.identity("Molinos del Sur Ltd.")
    assert whom(d, 0, "Molinos del Sur Ltd") == ["molinos del sur"]
    assert d.identity("Dr. Chen") is not None


def test_a_name_that_ends_in_a_number_is_read_whole() -> None:
    # the draft names them; the chat writes the numbers as digits or as a word
    turns = [
        Turn("I tend bar at Studio 54 and my band is Maroon 5.", USER),
        Turn("Cool!", BOT),
        Turn("We open for Blink-182 next week at Studio Fifty-Four, no, at Studio 54.", USER),
    ]
    names = {"Studio 54": (), "Maroon 5": ()}
    d = Discourse(turns, names, user_names=["acct-7"])
    studio = d.identity("Studio 54")
    assert studio is not None and studio.name == "Studio 54" and studio.aliases == ()
    assert whom(d, 0, "Studio 54") == ["studio #n54"]
    assert whom(d, 0, "Maroon 5") == ["maroon #n5"]
    # a count after a first name is no part of it
    d = Discourse([Turn("I gave Tom 5 apples.", USER)], {"Tom": ()}, user_names=["acct-7"])
    assert whom(d, 0, "Tom") == ["tom"]


# -- pronouns ---------------------------------------------------------------------------


def test_he_is_the_one_man_before_it_and_a_place_is_never_he() -> None:
    d = chat("My brother Tomás drove the van from Valencia, he was exhausted.")
    assert whom(d, 0, "he") == ["tomás"]


def test_two_possible_antecedents_are_ambiguous_never_a_guess() -> None:
    d = chat(
        "My landlord is Marc Dupuis.",
        "OK.",
        "Tomás and Marc sorted out the keys, he's an electrician.",
    )
    assert whom(d, 2, "he's") == ["marc dupuis", "tomás"]


def test_a_pronoun_looks_back_across_turns() -> None:
    d = chat("My physio is Sara Lind.", "How often do you see her?", "Monthly. She's great.")
    assert whom(d, 1, "her") == ["sara lind"]
    assert whom(d, 2, "She's") == ["sara lind"]


def test_a_disjunction_names_either() -> None:
    turns = [Turn("Something restarted overnight, either ledger-api or Mercury.", USER)]
    d = Discourse(turns, {"ledger-api": ()})
    assert whom(d, 0, "ledger-api") == ["ledger api", "mercury"]


def test_they_refers_to_everyone_it_can() -> None:
    d = chat("Tomás and Inés are visiting in May, they'll stay with me.")
    assert whom(d, 0, "they'll") == ["inés", "tomás"]
    ref = next(r for r in d.refs(0) if r.text == "they'll")
    assert ref.group


def test_what_the_caller_knows_marks_things_never_people() -> None:
    """A draft's own typing must not make its subject win a pronoun over a rival."""
    turns = [Turn("Greg and JB are meeting tomorrow, he'll draft the posting.", USER)]
    d = Discourse(turns, {"Greg": ()}, {"Greg": Kind.PERSON})
    assert whom(d, 0, "he'll") == ["greg", "jb"]


def test_an_object_pronoun_is_never_its_own_clauses_subject() -> None:
    d = chat(
        "Hale & Sons took over the job, their foreman is Dan Hale.",
        "So Hale & Sons is your contractor now?",
        "Yep, Mike joined them too, he's working under Dan now.",
    )
    assert "mike" not in whom(d, 2, "them")
    assert "hale sons" in whom(d, 2, "them")
    assert whom(d, 2, "he's") == ["mike"]
    # set off by a comma, a name is no subject of the clause after it
    d = chat("Mohamed Haddad, everyone calls him Mo, he's my head baker.")
    assert whom(d, 0, "him") == ["mohamed haddad"]


def test_he_takes_up_the_subject_before_it_over_an_object() -> None:
    d = chat("Dad lives alone. Lucy's son Ethan visits him on Wednesdays, he's 17.")
    assert whom(d, 0, "him") == ["dad"]
    assert whom(d, 0, "he's") == ["ethan"]
    # two subjects stay two
    d = chat("Tomás and Marc sorted out the keys, he's an electrician.")
    assert whom(d, 0, "he's") == ["marc", "tomás"]


def test_we_is_the_speaker_and_whom_they_joined_with_and() -> None:
    d = chat(
        "My partner Sam and I are going to Japan.",
        "Nice!",
        "We bought the rail pass. Call us later.",
    )
    assert whom(d, 2, "We") == ["<user>", "sam"]
    assert whom(d, 2, "us") == ["<user>"]
    d = chat("My brother Arjun and my mum are helping.", "Nice!", "We booked the hall.")
    assert whom(d, 2, "We") == ["<user>"]


def test_a_name_given_later_in_the_turn_settles_its_pronouns() -> None:
    d = chat(
        "The electrics are a separate job, Juno does those.",
        "Juno?",
        "Juno Electrics, a two-person firm. Funny, our dog is also called Juno."
        " She hates the drilling.",
    )
    assert whom(d, 2, "She") == ["juno"]  # the dog, not the firm
    assert whom(d, 2, "Juno Electrics") == ["juno electrics"]


def test_a_verb_opening_a_sentence_is_no_part_of_the_name_after_it() -> None:
    """Found in the browser's hostile test: "Call Eve at ..." made Eve "Call Eve"."""
    d = chat(
        "My friend Eve is in town. Call Eve at five. Tell Ravi Shah too.",
        "Will do.",
        "Meet Ada at the station, she lands at six. Ask Mark Oduya if he can drive.",
    )
    for name, full in (
        ("Eve", "Eve"),
        ("Ravi", "Ravi Shah"),
        ("Ada", "Ada"),
        ("Mark", "Mark Oduya"),
    ):
        found = d.identity(name)
        assert found is not None and found.name == full, (name, found)
    for wrong in ("Call Eve", "Tell Ravi Shah", "Meet Ada", "Ask Mark Oduya"):
        assert d.identity(wrong) is None, wrong
