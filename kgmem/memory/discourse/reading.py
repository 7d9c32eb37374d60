"""Who a chat's words refer to: speakers, names, partial names, nicknames, pronouns and
descriptions, read from the chat itself. Pure, deterministic, no store.

Grounding asks one question of it: whom may a referring expression of a message (a name, a
first name, "I", "she", "my brother", "the service") mean? The answer comes from the chat,
read in order the way a person reads it, never from the claim under test:

* **Speakers.** "I"/"me"/"my"/"we" in a user message is its speaker: the user, or the display
  name the host gave the message. "you" in an assistant message is the user; "I" there is
  the assistant, who is nobody. A speaker who introduces themselves ("I'm Ana Ruiz", "my name
  is ...", "call me ...", "everyone calls me Anita") takes those names, wherever in the chat.
* **Names.** Capitalized word runs (a lone capitalized word opening a sentence only when it
  is a name known already), plus the names the caller knows. A first or last word alone is
  the one longer name it belongs to ("Claire" after "Claire Fontaine"); the longer name of a
  name said alone joins it ("Arjun", then "Arjun Iyer"); of two, it is ambiguous.
  "Ltd."/"Inc." and the like are left out of a name's key, so "Quillon Data Ltd." is
  "Quillon Data".
* **Descriptions.** "my brother Tomás", "Harold Price, my dad", "my landlord is Marc",
  "Cousin Arjun", "a woman called Bernadette": the noun describes the referent, so "my
  brother" (and a family word used as a name: "Dad") later refers to it, a kin or role noun
  makes it a person (with a gender when the noun has one), and two different kin nouns are
  two different people of one first name ("my brother Arjun", "my cousin Arjun"). "my dad"
  with no name yet is a referent too, and takes a name later ("His name is Harold Price").
* **Nicknames.** "calls him Hal", "goes by JB", "aka", "also known as", "is called", "her
  actual name is": the name joins the names of whom it is said of.
* **Pronouns.** he/him/his, she/her, it/its, they/them/their look back: the mentions before
  them in their sentence, then earlier sentences, then earlier turns (at most
  :data:`LOOKBACK` turns), and stop at the first sentence with a candidate that agrees
  (person or thing, gender when known; a person before a thing of unknown kind for he/she).
  One candidate: resolved, and its gender learnt. Two or more: ambiguous, never a guess
  ("they" refers to them all).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from itertools import pairwise

from kgmem.memory.discourse.words import (
    _AKA,
    _CALLS,
    _FEMALE,
    _FOR_SHORT,
    _INTRO,
    _KIN,
    _KIN_NAMES,
    _LEGAL,
    _MALE,
    _NAME_IS,
    _NOT_SUBJECTS,
    _ORG_WORDS,
    _PARTITIVES,
    _PERSON_NOUNS,
    _PETS,
    _PLACE_WORDS,
    _POSSESSIVES,
    _PREPOSITIONS,
    _PRONOUNS,
    _THING_NOUNS,
    _THIS_IS,
    _TITLES,
    _WE,
    Key,
    Kind,
    _bare,
    _capitalized,
    _capitalized_runs,
    _expletive,
    _name_at,
    _names_next,
    _nouns_around,
    _word_is,
    name_keys,
)
from kgmem.memory.surface import FIRST_PERSON, SECOND_PERSON, Analysis, Token, analyse
from kgmem.memory.values import word_value

__all__ = ["LOOKBACK", "Discourse", "Identity", "Kind", "Ref", "Speaker", "Turn", "name_keys"]

#: how many turns back a pronoun may find its antecedent
LOOKBACK = 4


@dataclass(frozen=True)
class Speaker:
    """Who wrote a turn: the user (``is_user``), a named speaker, or nobody (the assistant,
    a tool)."""

    names: tuple[str, ...] = ()
    is_user: bool = False
    assistant: bool = False


@dataclass(frozen=True)
class Turn:
    """One message of a chat as discourse reads it."""

    text: str
    speaker: Speaker


@dataclass(frozen=True)
class Ref:
    """A referring expression of a turn and whom it may refer to (one: resolved)."""

    start: int
    end: int
    sentence: int
    text: str
    candidates: tuple[frozenset[Key], ...]  # each referent's names
    user: tuple[bool, ...]  # whether each candidate is the user
    pronoun: bool = False
    group: bool = False  # "they": it refers to every candidate at once
    subject: bool = True  # it can be a clause's subject (not "my", "her", "them")
    persons: tuple[bool, ...] = ()  # whether each candidate is known to be a person
    ids: tuple[int, ...] = ()  # each candidate's referent, as the discourse knows it
    asked: bool = False  # the unnamed thing the assistant's question before it asked about

    @property
    def resolved(self) -> bool:
        return len(self.candidates) == 1


@dataclass(frozen=True)
class Identity:
    """Whom a name of a claim means in a chat: the user, or someone the chat calls by
    ``name`` (its longest name) and ``aliases`` (nicknames, other full names; never a bare
    first or last word of a longer name)."""

    is_user: bool
    name: str
    aliases: tuple[str, ...] = ()
    person: bool = False  # the chat's own words make it a person ("my colleague X")


@dataclass(eq=False)
class _Entity:
    """One referent of the chat: its names (phrase keys), kind, gender, descriptions."""

    names: set[Key] = field(default_factory=set)
    kind: Kind = Kind.UNKNOWN
    gender: str | None = None  # "m", "f"
    nouns: set[str] = field(default_factory=set)
    is_user: bool = False
    parent: _Entity | None = None  # merged into
    asked_in: int | None = None  # an unnamed thing a reply's "it" is: that reply's turn


@dataclass(eq=False)
class _Mention:
    start: int
    end: int
    sentence: int
    owners: list[_Entity]
    pronoun: bool = False
    group: bool = False
    subject: bool = True
    partial: bool = False  # a first or last word taken for a longer name
    fresh: bool = False  # its referent is new, made for this very name
    key: Key = ()  # the name said, for a name
    token: int | None = None  # where a third-person pronoun stands (its token), to read again


class Discourse:
    """A chat's turns and whom their words mean.

    ``known``: names the caller knows, each with its aliases (the draft's entities, its
    claims' terms): they are found in the text even lower case or opening a sentence, and a
    name with its aliases is one referent. ``kinds``: what the caller knows a name to be.
    ``user_names``: what the user goes by.
    """

    def __init__(
        self,
        turns: Sequence[Turn],
        known: Mapping[str, Iterable[str]] = {},
        kinds: Mapping[str, Kind] = {},
        user_names: Iterable[str] = (),
    ) -> None:
        self.turns = tuple(turns)
        user_names = tuple(user_names)
        self.docs = tuple(analyse(t.text) for t in self.turns)
        self._entities: list[_Entity] = []
        user = _Entity(is_user=True, kind=Kind.PERSON)
        for name in user_names:
            user.names |= name_keys(name)
        self._entities.append(user)
        self._user = user
        self._kinds = {k: kind for n, kind in kinds.items() for k in name_keys(n)}
        self._known: list[set[Key]] = []
        for name, aliases in known.items():
            group = set().union(*(name_keys(a) for a in (name, *aliases)))
            if group:
                self._known.append(group)
        self._surface: dict[Key, str] = {}  # a name's first spelling in the chat
        self._nicks: set[Key] = set()  # names given as nicknames ("calls him Hal")
        self._fresh: _Entity | None = None  # the referent the last name read made new
        self._account = set().union(*(name_keys(n) for n in user_names)) if user_names else set()
        for name in (*user_names, *known, *(a for al in known.values() for a in al)):
            for key in name_keys(name):
                self._surface.setdefault(key, name)
        self._mentions: list[list[_Mention]] = []
        self._companions: dict[int, list[_Entity]] = {}  # whom a speaker's "we" takes in
        self._speakers: list[_Entity | None] = []
        for index in range(len(self.turns)):
            self._speakers.append(self._speaker_entity(index))
        for index in range(len(self.turns)):
            self._mentions.append(self._read_turn(index))
        self._refs: dict[int, tuple[Ref, ...]] = {}

    # -- entities -----------------------------------------------------------------------------

    def _root(self, entity: _Entity) -> _Entity:
        while entity.parent is not None:
            entity = entity.parent
        return entity

    def _live(self) -> list[_Entity]:
        return [e for e in self._entities if e.parent is None]

    def _new(self, keys: Iterable[Key] = (), kind: Kind = Kind.UNKNOWN) -> _Entity:
        entity = _Entity(names=set(keys), kind=kind)
        for key in list(entity.names):
            for group in self._known:
                if key in group:
                    entity.names |= group
            # what the caller knows may say a name is a thing, never that it is a person:
            # a draft's own typing must not make its subject win a pronoun over a rival
            if self._kinds.get(key) is Kind.THING and entity.kind is Kind.UNKNOWN:
                entity.kind = Kind.THING
        if entity.kind is Kind.UNKNOWN and any(k[-1] in _ORG_WORDS for k in entity.names):
            entity.kind = Kind.THING
        self._entities.append(entity)
        return entity

    def _merge(self, into: _Entity, other: _Entity) -> _Entity:
        into, other = self._root(into), self._root(other)
        if into is other:
            return into
        if other.is_user and not into.is_user:
            into, other = other, into
        into.names |= other.names
        into.nouns |= other.nouns
        into.kind = into.kind if into.kind is not Kind.UNKNOWN else other.kind
        into.gender = into.gender or other.gender
        other.parent = into
        return into

    def _exact(self, key: Key) -> list[_Entity]:
        return [e for e in self._live() if key in e.names]

    def _partial(self, key: Key) -> list[_Entity]:
        """The entities of a longer name whose first or last word is the one-word ``key``."""
        if len(key) != 1:
            return []
        return [
            e for e in self._live() if any(len(n) > 1 and key[0] in (n[0], n[-1]) for n in e.names)
        ]

    def _short(self, key: Key, kin: set[str], nouns: Set[str] = frozenset()) -> list[_Entity]:
        """The one entity called only by the first or last word of the longer ``key``
        (with ``kin`` nouns, the one they describe); none when another longer name shares
        its first word and no kin noun tells them apart, when the nouns said with the name
        describe someone else ("my partner Sam" is not "my colleague Sam Ortiz"), or when
        the longer name is a place's ("Kyoto Station" is not Kyoto)."""
        if len(key) < 2 or key[-1] in _PLACE_WORDS:
            return []
        said = {n for n in nouns if not n.startswith("@")}
        owners = [
            e
            for e in self._live()
            if ((key[0],) in e.names or (key[-1],) in e.names)
            and not any(len(n) > 1 for n in e.names)
            and "@place" not in e.nouns
            and not (said and e.nouns - {"@person"} and not said & e.nouns)
        ]
        if kin:
            described = [e for e in owners if e.nouns & kin]
            return described if len(described) == 1 else []
        rivals = [e for e in self._live() if any(len(n) > 1 and n[0] == key[0] for n in e.names)]
        return owners if len(owners) == 1 and not rivals else []

    def _speaker_entity(self, index: int) -> _Entity | None:
        speaker = self.turns[index].speaker
        if speaker.assistant:
            return None
        keys = set().union(*(name_keys(n) for n in speaker.names)) if speaker.names else set()
        if speaker.is_user:
            self._user.names |= keys
            return self._user
        if not keys:
            return None
        found = [e for k in keys for e in self._exact(k)]
        entity = found[0] if found else self._new(keys, Kind.PERSON)
        entity.names |= keys
        entity.kind = Kind.PERSON
        return entity

    def _other_party(self, me: _Entity | None) -> _Entity | None:
        """In a chat of two people and no assistant, the one who is not ``me``."""
        if me is None or any(t.speaker.assistant for t in self.turns):
            return None
        people = {id(r): r for e in self._speakers if e is not None for r in [self._root(e)]}
        others = [e for e in people.values() if e is not self._root(me)]
        return others[0] if len(people) == 2 and len(others) == 1 else None

    def speaker(self, index: int) -> _Entity | None:
        """Whom "I" means in turn ``index``."""
        entity = self._speakers[index]
        return None if entity is None else self._root(entity)

    def addressee(self, index: int) -> _Entity | None:
        """Whom the assistant speaks to in turn ``index``: the user ("Still at Maison
        Vert?" asks the user about themself)."""
        return self._root(self._user) if self.turns[index].speaker.assistant else None

    # -- reading a turn -----------------------------------------------------------------------

    def _read_turn(self, index: int) -> list[_Mention]:
        doc, text = self.docs[index], self.turns[index].text
        me = self.speaker(index)
        spans = self._name_spans(index)
        mentions: list[_Mention] = []
        at = 0
        tokens = doc.tokens
        while at < len(tokens):
            token = tokens[at]
            span = next((s for s in spans if s[0] == token.start), None)
            if span is not None:
                start, end, key, nouns = span
                partial = not self._exact(key) and bool(self._partial(key))
                self._fresh = None
                owners = self._name_owners(key, nouns, me)
                # "from Haddad & Co.", "at Maison Vert": not who the clause is about
                governed = at > 0 and tokens[at - 1].norm in _PREPOSITIONS
                mentions.append(_Mention(start, end, token.sentence, owners, subject=not governed))
                mentions[-1].partial, mentions[-1].key = partial, key
                mentions[-1].fresh = self._fresh is not None and owners == [self._fresh]
                if len(mentions) > 1:
                    self._coordinate(doc, mentions[-2:])
                self._surface.setdefault(key, _strip_possessive(text[start:end]))
                at = next(
                    (k for k in range(at, len(tokens)) if tokens[k].start >= end), len(tokens)
                )
                continue
            later = [s for s in spans if s[0] > token.start]
            mention = self._word_mention(index, at, me, mentions, later)
            if mention is not None:
                mentions.append(mention)
                at = next(
                    (k for k in range(at, len(tokens)) if tokens[k].start >= mention.end),
                    len(tokens),
                )
                continue
            at += 1
        self._aliases(index, mentions, me)
        self._companion(index, mentions, me)
        # the turn's names are known now ("our dog is also called Juno. She ..."): its
        # pronouns are read again with them
        for n, mention in enumerate(mentions):
            if mention.token is not None and len(mention.owners) > 1:
                later = [s for s in spans if s[0] > mention.start]
                again = self._word_mention(index, mention.token, me, mentions[:n], later)
                if again is not None:
                    mention.owners = again.owners
        _disjoin(doc, mentions)
        return mentions

    def _companion(self, index: int, mentions: list[_Mention], me: _Entity | None) -> None:
        """ "My partner Sam and I", "me and Sam": the person joined to the speaker by "and"
        is who the speaker's "we" means from then on."""
        doc = self.docs[index]
        if me is None:
            return
        for first, second in pairwise(mentions):
            between = [t.norm for t in doc.tokens if first.end <= t.start and t.end <= second.start]
            if between != ["and"]:
                continue
            pair = [first, second]
            text = self.turns[index].text
            mine = [m for m in pair if m.owners == [me] and text[m.start : m.end].lower() in _I]
            other = [m for m in pair if m not in mine and len(m.owners) == 1]
            if len(mine) != 1 or len(other) != 1:
                continue
            entity = self._root(other[0].owners[0])
            if entity.kind is Kind.PERSON and entity is not self._root(me):
                self._companions[id(self._root(me))] = [entity]

    def _coordinate(self, doc: Analysis, mentions: list[_Mention]) -> None:
        """ "Tomás and Marc": names joined by "and" are of one kind; a person's partner in
        the phrase is a person."""
        for first, second in pairwise(mentions):
            between = [t.norm for t in doc.tokens if first.end <= t.start and t.end <= second.start]
            if between != ["and"] or len(first.owners) != 1 or len(second.owners) != 1:
                continue
            a, b = self._root(first.owners[0]), self._root(second.owners[0])
            kinds = {a.kind, b.kind}
            if Kind.PERSON in kinds and Kind.UNKNOWN in kinds:
                a.kind = b.kind = Kind.PERSON

    def _word_mention(
        self,
        index: int,
        at: int,
        me: _Entity | None,
        mentions: list[_Mention],
        spans: Sequence[tuple[int, int, Key, set[str]]],
    ) -> _Mention | None:
        doc, speaker = self.docs[index], self.turns[index].speaker
        token = doc.tokens[at]
        word = token.norm
        nxt = doc.tokens[at + 1] if at + 1 < len(doc.tokens) else None
        subject = word not in _NOT_SUBJECTS and not _object_it(doc, at)
        named = _names_next(doc, at, spans)
        if (
            nxt is not None
            and word in _POSSESSIVES
            and nxt.sentence == token.sentence
            and _noun(nxt.norm) is not None
            and not named  # "my brother Tomás": the name is the mention, described
            and self.turns[index].text[nxt.end : nxt.end + 1] != "-"  # "sister-in-law"
        ):
            owners = self._described(_noun(nxt.norm) or "", word, speaker, me)
            if owners:
                return _Mention(token.start, nxt.end, token.sentence, owners, pronoun=True)
        if word in _WE_SUBJECT and me is not None and self._companions.get(id(self._root(me))):
            # "My partner Sam and I are going ... We bought the passes": the two of them
            owners = [me, *self._companions[id(self._root(me))]]
            return _Mention(token.start, token.end, token.sentence, owners, True, True, subject)
        if word in FIRST_PERSON or word in _WE:
            owners = [me] if me is not None else []
            return _Mention(token.start, token.end, token.sentence, owners, True, False, subject)
        if word in SECOND_PERSON and speaker.assistant:
            return _Mention(token.start, token.end, token.sentence, [self._user], True)
        if word in SECOND_PERSON and (other := self._other_party(me)) is not None:
            # two people talking: "you" is the other one ("I'm sorry you're dealing with
            # health issues", Sam says to Evan)
            return _Mention(token.start, token.end, token.sentence, [other], True, False, subject)
        if word in {"it", "it's"} and _expletive(doc.tokens, at):
            return None  # "It's easy to ...", "It really helps to ...": no one, nothing
        if word in {"it", "it's"} and not mentions and self._asks_of_a_thing(index, at):
            # "Did the budget change?" "It went up to 21,000": the thing asked about, which
            # has no name (not the last company the chat named)
            thing = self._new(kind=Kind.THING)
            thing.asked_in = index
            return _Mention(token.start, token.end, token.sentence, [thing], True, False, subject)
        if word in _PRONOUNS:
            kind, gender = _PRONOUNS[word]
            # "Mike joined them": an object pronoun is not its own clause's subject
            own = [
                m
                for m in mentions
                if _clause_at(doc, m.start) == token.clause
                and not re.search(
                    r"[,;:]", doc.text[m.end : token.start]
                )  # "X, everyone calls him"
            ]
            own = own if _object_pronoun(doc, at) else []
            others = [m for m in mentions if m not in own]
            owners = self._antecedents(index, token, kind, gender, others, subject)
            if len(owners) == 1 and gender and owners[0].gender is None:
                owners[0].gender = gender
            # "one of them offered 85k" is one of them, which one not said
            partitive = (
                at >= 2
                and doc.tokens[at - 1].norm == "of"
                and (doc.tokens[at - 2].norm in _PARTITIVES)
            )
            group = kind is None and not partitive
            mention = _Mention(token.start, token.end, token.sentence, owners, True, group, subject)
            mention.token = at
            return mention
        return None

    def _asks_of_a_thing(self, index: int, at: int) -> bool:
        """Whether the "it" at token ``at`` opens a user's reply to the assistant's question
        about an unnamed thing ("the budget", "your deadline") that names nothing else."""
        doc, before = self.docs[index], index - 1
        if before < 0 or doc.tokens[at].sentence or not self.turns[index].speaker.is_user:
            return False
        asked = self.docs[before]
        if not self.turns[before].speaker.assistant or not asked.tokens:
            return False
        last = asked.tokens[-1].sentence
        if last not in asked.questions:
            return False
        named = [m for m in self._mentions[before] if m.sentence == last]
        if any(self._root(o) is not self._user for m in named for o in m.owners):
            return False
        words = [t for t in asked.tokens if t.sentence == last]
        return any(
            a.norm in {"the", "your"} and b.norm.isalpha() and asked.text[b.start].islower()
            for a, b in pairwise(words)
        )

    def _described(
        self, noun: str, possessive: str, speaker: Speaker, me: _Entity | None
    ) -> list[_Entity]:
        """Whom "my brother", "the service" means; a first "my dad" is a new referent."""
        found = [e for e in self._live() if noun in e.nouns and e is not me]
        if not found and possessive == "the":
            # "the party" is "Nani's birthday party": the one name the chat or the caller
            # knows whose head noun it is
            heads = [e for e in self._live() if any(len(n) > 1 and n[-1] == noun for n in e.names)]
            known = [g for g in self._known if any(len(n) > 1 and n[-1] == noun for n in g)]
            if len(heads) == 1 and all(group & heads[0].names for group in known):
                found = heads  # the one named so (and the caller knows no other)
            elif not heads and len(known) == 1:
                found = [self._new(known[0])]
        owning = possessive in {"my", "our"} or (possessive == "your" and speaker.assistant)
        if not found and owning and (noun in _PERSON_NOUNS or noun in _PETS):
            entity = self._new(kind=Kind.PERSON if noun in _PERSON_NOUNS else Kind.UNKNOWN)
            _add_noun(entity, noun)
            found = [entity]
        return found

    def _name_owners(self, key: Key, nouns: set[str], me: _Entity | None) -> list[_Entity]:
        """Whom a name said with ``nouns`` ("my cousin Arjun") means; a new referent when
        none fits."""
        if len(key) == 1 and key[0] in _KIN_NAMES:
            nouns = nouns | {key[0]}  # "Dad" is "my dad"
            family = [e for e in self._live() if key[0] in e.nouns and e is not me]
            if len(family) == 1:
                family[0].names.add(key)
                return family
        exact = [e for e in self._exact(key) if e is not me or not nouns]
        found = exact or self._partial(key)
        kin = nouns & _KIN
        if not found:
            short = self._short(key, kin, nouns)
            if short:
                short[0].names.add(key)
                found = short
        fitting = [e for e in found if _fits(e, kin) and _same_kind(e, nouns)]
        if kin and len(fitting) > 1:
            fitting = [e for e in fitting if e.nouns & kin] or fitting
        if not fitting and not found:
            described = [e for e in self._live() if nouns & e.nouns and not e.names]
            fitting = described[:1] if len(described) == 1 else []
            if fitting:
                fitting[0].names.add(key)
        if not fitting:
            fitting = [self._new([key])]
            self._fresh = fitting[0]
        if len(fitting) == 1:
            for noun in nouns:
                _add_noun(fitting[0], noun)
        return fitting

    def _antecedents(
        self,
        index: int,
        token: Token,
        kind: Kind | None,
        gender: str | None,
        current: Sequence[_Mention],
        subject: bool = False,
    ) -> list[_Entity]:
        for turn in range(index, max(-1, index - LOOKBACK - 1), -1):
            me = self.speaker(turn)
            mentions = current if turn == index else self._mentions[turn]
            if turn == index:
                mentions = [m for m in mentions if m.end <= token.start]
            # a "they" of several names no one new: the names themselves are nearer
            mentions = [m for m in mentions if not (m.group and m.pronoun and len(m.owners) > 1)]
            by_sentence: dict[int, list[_Mention]] = {}
            for mention in mentions:
                by_sentence.setdefault(mention.sentence, []).append(mention)
            for sentence in sorted(by_sentence, reverse=True):
                found: list[_Entity] = []
                for mention in by_sentence[sentence]:
                    for owner in map(self._root, mention.owners):
                        if owner is me or owner.is_user or owner in found:
                            continue
                        if owner.asked_in is not None and owner.asked_in != index:
                            continue  # a thing asked about unnamed lives in its reply only
                        if _agrees(owner, kind, gender):
                            found.append(owner)
                if len(found) > 1 and subject and gender is not None:
                    # "Ethan visits him on Wednesdays, he's 17": a subject "he", "she"
                    # takes up the subject before it, when one alone of them was one
                    named = [
                        self._root(o)
                        for m in by_sentence[sentence]
                        if m.subject and len(m.owners) == 1
                        for o in m.owners
                    ]
                    if len([e for e in found if e in named]) == 1:
                        found = [e for e in found if e in named]
                if found:
                    if kind is Kind.PERSON:
                        found = [e for e in found if e.kind is Kind.PERSON] or found
                    elif kind is Kind.THING:
                        found = [e for e in found if e.kind is Kind.THING] or found
                    return found  # several: ambiguous (or, for "they", all of them)
        return []

    def _name_spans(self, index: int) -> list[tuple[int, int, Key, set[str]]]:
        """The names of turn ``index``: capitalized runs and known names, each with the
        nouns that describe it there."""
        doc, text = self.docs[index], self.turns[index].text
        said = {k for group in self._known for k in group}  # the caller's own names
        said_words = {w for k in said for w in k}
        lexicon = set(said)
        lexicon |= {k for e in self._live() for k in e.names}
        partials = {(n[0],) for k in lexicon for n in [k] if len(n) > 1}
        partials |= {(n[-1],) for k in lexicon for n in [k] if len(n) > 1}
        kin_names = {(k,) for k in _KIN_NAMES}
        words = doc.tokens
        candidates = [
            (f, t)
            for _, _, f, t in _capitalized_runs(text, doc, lexicon | partials | kin_names)
            # "a Maltese", "an Audi": a kind of thing, no one's name
            if not (f > 0 and words[f - 1].norm in {"a", "an"} and words[f].norm not in said_words)
        ]
        by_first: dict[str, list[Key]] = {}
        for key in lexicon:
            by_first.setdefault(key[0], []).append(key)
        for i, word in enumerate(words):
            for key in (*by_first.get(word.norm, ()), *by_first.get(_bare(word.norm), ())):
                n = len(key)
                if i + n > len(words) or not all(
                    _word_is(words[i + k].norm, key[k]) for k in range(n)
                ):
                    continue
                raw = text[words[i].start : words[i + n - 1].end]
                lower = n == 1 and not _capitalized(raw) and not raw.isupper()
                described = i > 0 and words[i - 1].norm in _POSSESSIVES
                if lower and key not in said and (key[0] not in _KIN_NAMES or described):
                    continue  # "will" is not Will; "my dad" is a description
                candidates.append((i, i + n))
        # the longest name wins where two overlap: "Arjun Iyer" over "Arjun", "community
        # hall on Elm Street" over "Elm Street"
        taken: set[int] = set()
        found = []
        for first, last in sorted(set(candidates), key=lambda c: (c[0] - c[1], c[0])):
            if not taken.intersection(range(first, last)):
                taken.update(range(first, last))
                found.append((words[first].start, words[last - 1].end, first, last))
        out = []
        for start, end, first, last in sorted(found):
            keys = [word_value(w.norm) for w in words[first:last]]  # "Org 7": org #n7
            nouns: set[str] = set()
            while len(keys) > 1 and (keys[0] in _PERSON_NOUNS or keys[0] in _TITLES):
                _title_or_noun(keys[0], nouns)
                first, keys = first + 1, keys[1:]
                start = words[first].start
            if keys and keys[-1].endswith("'s"):
                keys[-1] = keys[-1][:-2]
            key = tuple(keys)
            if len(key) > 2 and key[-1].rstrip(".") in _LEGAL:
                key = key[:-1]  # "Brightwork Builders Inc." is "Brightwork Builders"
            if not (last - first > 1 and words[first].norm.endswith("'s")):
                # "your brother [Arjun's house]" describes Arjun, not his house
                nouns |= _nouns_around(doc, text, first, last)
            out.append((start, end, key, nouns))
        return out

    def _aliases(self, index: int, mentions: list[_Mention], me: _Entity | None) -> None:
        """Nicknames and names said of someone: "calls him Hal", "her name is Kamala"."""
        text = self.turns[index].text

        def at(start: int) -> _Mention | None:
            return next((m for m in mentions if m.start == start), None)

        def before(start: int) -> _Mention | None:
            sentence = next((m.sentence for m in mentions if m.start >= start), None)
            earlier = [
                m
                for m in mentions
                if m.end <= start and m.subject and (sentence is None or m.sentence == sentence)
            ]
            return earlier[-1] if earlier else None

        def name(match: re.Match[str], owner: _Mention | _Entity | None, nick: bool = True) -> None:
            named = at(match.end())
            if owner is None or named is None:
                return
            who = owner if isinstance(owner, _Entity) else None
            if isinstance(owner, _Mention):
                who = owner.owners[0] if len(owner.owners) == 1 else None
            if who is None:
                return
            who = self._root(who)
            mine = [self._root(o) for o in named.owners]
            # only a referent this very turn made for the name is the nickname's own (merged);
            # one the chat knew before ("Juno" the firm) keeps its identity
            alone = len(mine) == 1 and mine[0] is not who and named.fresh
            if alone and _only_named(mine[0], text, named):
                who = self._merge(who, mine[0])
            else:
                who.names |= set().union(*(name_keys(text[named.start : named.end]),))
            named.owners, named.partial = [who], False
            if nick:
                self._nicks |= name_keys(text[named.start : named.end])

        if me is not None:
            for match in _INTRO.finditer(text):
                if _name_at(text, match.end()):
                    name(match, me, nick=False)
            for match in _THIS_IS.finditer(text):
                if _name_at(text, match.end()):
                    name(match, me, nick=False)
        for match in _CALLS.finditer(text):
            obj = match.group("obj")
            name(match, me if obj == "me" else at(match.start("obj")))
        for match in _AKA.finditer(text):
            name(match, before(match.start()))
        for match in _FOR_SHORT.finditer(text):  # "Magdalena Kowalska, Magda for short"
            name(match, next((m for m in mentions if m.end == match.start()), None))
        for match in _NAME_IS.finditer(text):
            name(match, me if match.group("pos") in {"my", "our"} else at(match.start("pos")))

    # -- reading ------------------------------------------------------------------------------

    def keys(self) -> frozenset[Key]:
        """Every name any referent of the chat goes by."""
        return frozenset(k for e in self._live() for k in e.names)

    def identity(self, term: str) -> Identity | None:
        """Whom ``term`` (a claim's subject or object) means in this chat, if one referent:
        the one of that name, or of a longer name it is the first or last word of."""
        keys = name_keys(term)
        found = {self._root(e) for k in keys for e in self._exact(k)}
        if not found:
            found = {self._root(e) for k in keys for e in self._partial(k)}
        if len(found) != 1:
            return None
        return self._identity(found.pop(), term)

    def identity_of(self, ref: Ref, term: str) -> Identity | None:
        """Whom a resolved referring expression means ("My brother Arjun": the brother, of
        the chat's two Arjuns)."""
        if not ref.resolved or not ref.ids:
            return None
        entity = next((e for e in self._live() if id(e) == ref.ids[0]), None)
        return None if entity is None else self._identity(entity, term)

    def _identity(self, entity: _Entity, term: str) -> Identity:
        order = list(self._surface)

        def rank(n: Key) -> tuple[bool, bool, int, int]:
            # a full name the chat gives beats a nickname, which beats the account's name
            first = order.index(n) if n in order else len(order)
            return (n in self._account, n in self._nicks, -len(n), first)

        names = sorted(entity.names, key=rank)
        whole = [n for n in names if not any(_part_of(n, other) for other in names)]
        shown = [self._surface.get(n, " ".join(n)) for n in whole]
        person = entity.is_user or bool(entity.nouns & _PERSON_NOUNS)
        return Identity(entity.is_user, shown[0] if shown else term, tuple(shown[1:]), person)

    def refs(self, index: int) -> tuple[Ref, ...]:
        """Every referring expression of turn ``index`` and whom it may mean."""
        if index not in self._refs:
            text = self.turns[index].text
            self._refs[index] = tuple(self._ref(m, text) for m in self._mentions[index])
        return self._refs[index]

    def _ref(self, mention: _Mention, text: str) -> Ref:
        owners = list(dict.fromkeys(self._root(o) for o in mention.owners))
        if mention.partial and len(owners) == 1:
            # a bare "Marsh" is every longer name of the chat it may be part of, said
            # before or after it ("One of them is Dr. Marsh too, Owen Marsh")
            owners = list(dict.fromkeys([*owners, *self._partial(mention.key)]))
        return Ref(
            mention.start,
            mention.end,
            mention.sentence,
            text[mention.start : mention.end],
            tuple(frozenset(o.names) for o in owners),
            tuple(o.is_user for o in owners),
            mention.pronoun,
            mention.group,
            mention.subject,
            tuple(o.kind is Kind.PERSON for o in owners),
            tuple(id(o) for o in owners),
            len(owners) == 1 and owners[0].asked_in is not None,
        )


#: the "we" that says who did something; "us", "our" may mean any of the speaker's circles
_WE_SUBJECT = frozenset({"we", "we're", "we've", "we'll", "we'd"})
_I = frozenset({"i", "me"})  # "Sam and I", "me and Sam"; not "Sam and my mum"


def _object_pronoun(doc: Analysis, at: int) -> bool:
    """ "him", "them", an "it" or "her" that ends its clause: never its own clause's subject
    ("Mike joined them"); a possessive may be ("he did his own bathroom")."""
    word = doc.tokens[at].norm
    return word in {"him", "them"} or (word in {"it", "her"} and _object_it(doc, at, word))


def _clause_at(doc: Analysis, start: int) -> int | None:
    return next((t.clause for t in doc.tokens if t.start == start), None)


def _object_it(doc: Analysis, at: int, word: str = "it") -> bool:
    """Whether the "it" at token ``at`` is an object: after a preposition ("about it") or
    ending its clause ("when I need it, which is ...", "I love it.")."""
    tokens = doc.tokens
    if tokens[at].norm != word:
        return False
    if (
        at > 0
        and tokens[at - 1].clause == tokens[at].clause
        and tokens[at - 1].norm in _PREPOSITIONS
    ):
        return True
    nxt = tokens[at + 1] if at + 1 < len(tokens) else None
    return at > 0 and (
        nxt is None
        or nxt.clause != tokens[at].clause
        or bool(re.match(r"\s*[,;:.!?]", doc.text[tokens[at].end :]))
    )


def _part_of(name: Key, other: Key) -> bool:
    """Whether ``name`` is a bare first or last word of the longer ``other`` (not the same
    name without its "Inc.")."""
    if len(other) == 2 and other[-1].rstrip(".") in _LEGAL:
        return False
    return len(name) == 1 and len(other) > 1 and name[0] in (other[0], other[-1])


def _strip_possessive(text: str) -> str:
    return text[:-2] if text.endswith(("'s", "\u2019s")) else text


def _disjoin(doc: Analysis, mentions: list[_Mention]) -> None:
    """ "A or B" names one of two: each of them may be either ("either ledger-api or
    Mercury restarted", "She or Yusuf will ping me")."""
    for first, second in pairwise(mentions):
        between = [t.norm for t in doc.tokens if first.end <= t.start and t.end <= second.start]
        if between == ["or"] and first.sentence == second.sentence:
            both = list(dict.fromkeys([*first.owners, *second.owners]))
            first.owners = second.owners = both
            first.group = second.group = False


def _only_named(entity: _Entity, text: str, mention: _Mention) -> bool:
    """Whether ``entity`` is no more than the name just said (a nickname's own referent)."""
    said = name_keys(text[mention.start : mention.end])
    return not entity.is_user and all(
        any(n[0] == k[0] or n[-1] == k[-1] for k in said) for n in entity.names
    )


def _noun(word: str) -> str | None:
    base = word[:-2] if word.endswith("'s") else word
    return base if base in _PERSON_NOUNS or base in _PETS or base.isalpha() else None


def _add_noun(entity: _Entity, noun: str) -> None:
    entity.nouns.add(noun)
    if noun in _THING_NOUNS and entity.kind is Kind.UNKNOWN:
        entity.kind = Kind.THING
    if noun in _PERSON_NOUNS:
        entity.kind = Kind.PERSON  # "my colleague X": outweighs what a draft typed it
    elif noun == "@person" and entity.kind is Kind.UNKNOWN:
        entity.kind = Kind.PERSON  # "X says": a hint only (companies say things too)
    if noun in _MALE:
        entity.gender = entity.gender or "m"
    elif noun in _FEMALE:
        entity.gender = entity.gender or "f"


def _title_or_noun(word: str, nouns: set[str]) -> None:
    nouns.add(word)


def _same_kind(entity: _Entity, nouns: Set[str]) -> bool:
    """Whether ``nouns`` said with a name may describe ``entity``: "my friend Jordan" and
    "the company Jordan" are two referents."""
    said_person, said_thing = bool(nouns & _PERSON_NOUNS), bool(nouns & _THING_NOUNS)
    is_person, is_thing = bool(entity.nouns & _PERSON_NOUNS), bool(entity.nouns & _THING_NOUNS)
    return not ((said_person and is_thing) or (said_thing and is_person))


def _fits(entity: _Entity, kin: set[str]) -> bool:
    """Whether kin nouns ``kin`` may describe ``entity`` (one is not both brother and
    cousin)."""
    theirs = entity.nouns & _KIN
    return not kin or not theirs or bool(kin & theirs)


def _agrees(entity: _Entity, kind: Kind | None, gender: str | None) -> bool:
    if kind is None:
        return True
    if kind is Kind.THING:
        return entity.kind is not Kind.PERSON
    if entity.kind is Kind.THING or ("@place" in entity.nouns and entity.kind is not Kind.PERSON):
        return False
    return gender is None or entity.gender in (None, gender)
