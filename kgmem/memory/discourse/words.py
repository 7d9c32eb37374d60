"""The words a chat's referents are read from: kin, role and thing nouns, pronouns, titles,
legal forms, and the text patterns of names, nicknames and descriptions. Pure and stateless;
:mod:`kgmem.memory.discourse.reading` keeps the referents.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum

from kgmem.memory.surface import Analysis, Token, phrase
from kgmem.memory.values import word_value

Key = tuple[str, ...]


class Kind(Enum):
    PERSON = "person"
    THING = "thing"
    UNKNOWN = "unknown"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_MALE = _words(
    "brother husband son father dad daddy papa uncle grandpa grandfather granddad nephew "
    "boyfriend stepfather stepson stepbrother fiance king mr sir man boy guy gentleman "
    "foreman"
)
_FEMALE = _words(
    "sister wife daughter mother mom mum mommy mummy mama aunt grandma grandmother granny "
    "nana nan nani niece girlfriend stepmother stepdaughter stepsister fiancee queen mrs ms "
    "miss woman girl lady"
)
_KIN = _words(
    "brother sister husband wife son daughter father mother dad mom mum daddy mommy mummy "
    "papa mama uncle aunt grandpa grandma grandfather grandmother granddad granny nana nan "
    "nani nephew niece cousin boyfriend girlfriend fiance fiancee stepfather stepmother "
    "stepson stepdaughter stepbrother stepsister partner spouse"
)
_ROLES = _words(
    "friend colleague coworker boss manager lead landlord landlady neighbour neighbor "
    "doctor dr gp nurse teacher student supervisor advisor adviser mentor roommate flatmate "
    "housemate parent child kid baby grandchild sibling client therapist dentist physio "
    "physiotherapist coach trainer tutor engineer developer dba designer researcher "
    "technician electrician plumber builder carer caregiver intern teammate classmate "
    "professor prof cto ceo founder cofounder owner director pastor priest rabbi imam "
    "person people accountant lawyer solicitor pharmacist vet consultant specialist surgeon "
    "midwife optician"
)
#: verbs only people do, right after a name: the name is a person's
_PERSON_VERBS = _words(
    "said says say told tells tell thinks think thought wants want wanted asked asks ask "
    "helped helps offered offers mentioned mentions agreed agrees loves loved hates hated "
    "likes liked feels felt knows knew believes believed decided decides married talks talk "
    "talked wrote writes called calls laughed laughs cried smiled promised suggested "
    "suggests recommended recommends insisted admitted explained replied"
)
#: nouns of organizations, places and things, never of a person
_THING_NOUNS = _words(
    "company firm business brand shop store team club band group startup agency studio "
    "bank school university college hospital clinic restaurant cafe bar hotel city town "
    "country village street app service product tool library framework platform planet "
    "element river mountain building society charity supplier vendor"
)
_PETS = _words("dog cat puppy kitten horse rabbit parrot hamster pet")
_PERSON_NOUNS = _MALE | _FEMALE | _KIN | _ROLES
#: family words a family uses as names ("Dad moved into ...")
_KIN_NAMES = _words("dad mom mum mama papa grandma grandpa nana nan nani granny gran")
_TITLES = {"mr": "m", "mrs": "f", "ms": "f", "miss": "f", "dr": None, "prof": None}
#: the titles a name may carry ("Dr. Okafor" is Okafor)
TITLES = frozenset(_TITLES)
_OWNING = frozenset({"my", "our", "your"})
_POSSESSIVES = frozenset({"my", "our", "his", "her", "their", "your", "the"})
#: last words of a place's name: "Kyoto Station" is a place in Kyoto, not Kyoto
_PLACE_WORDS = _words(
    "station street st road rd avenue ave lane boulevard square park airport bridge hall "
    "hotel centre center mall market beach lake river mountain hill island bay harbour "
    "harbor port district quarter"
)
_PREPOSITIONS = frozenset(
    {"in", "at", "from", "to", "near", "into", "via", "across", "around", "outside", "of",
     "with", "for", "by", "about", "on", "under", "over", "between", "among", "without"}
)  # fmt: skip
_PLACE_PREPOSITIONS = frozenset(
    {"in", "at", "from", "to", "near", "into", "via", "across", "around", "outside"}
)
_LEGAL = _words("inc ltd llc gmbh corp corporation co plc limited company sa ag bv pty llp")
_ORG_WORDS = _LEGAL | _words(
    "society university college school hospital clinic bank group foundation institute "
    "trust builders electrics analytics labs data care services council agency"
)
_PRONOUNS: dict[str, tuple[Kind | None, str | None]] = {
    "he": (Kind.PERSON, "m"), "him": (Kind.PERSON, "m"), "his": (Kind.PERSON, "m"),
    "himself": (Kind.PERSON, "m"), "he's": (Kind.PERSON, "m"), "he'd": (Kind.PERSON, "m"),
    "he'll": (Kind.PERSON, "m"),
    "she": (Kind.PERSON, "f"), "her": (Kind.PERSON, "f"), "hers": (Kind.PERSON, "f"),
    "herself": (Kind.PERSON, "f"), "she's": (Kind.PERSON, "f"), "she'd": (Kind.PERSON, "f"),
    "she'll": (Kind.PERSON, "f"),
    "it": (Kind.THING, None), "its": (Kind.THING, None), "it's": (Kind.THING, None),
    "itself": (Kind.THING, None),
    "they": (None, None), "them": (None, None), "their": (None, None),
    "theirs": (None, None), "they're": (None, None), "they've": (None, None),
    "they'll": (None, None), "they'd": (None, None), "themselves": (None, None),
}  # fmt: skip
_WE = frozenset({"we", "us", "our", "ours", "ourselves", "we're", "we've", "we'll", "we'd"})
_NOT_SUBJECTS = _words(
    "my mine me myself our ours us ourselves your yours his him himself her hers herself "
    "its itself their theirs them themselves"
)
_NOT_NAMES = _words(
    "i i'm i've i'd i'll monday tuesday wednesday thursday friday saturday sunday january "
    "february march april may june july august september october november december ok okay "
    "hi hey hello yes yeah yep no nope thanks thank please sorry oh ah um wow great good "
    "congratulations congrats welcome dear which what who whom whose where when why how "
    "also so and but or the a an if then that this these those there here just still even "
    "maybe today tomorrow yesterday now well actually anyway by for in on at to from with "
    "as after before since until because while of not every everyone everybody some any my "
    "your our his her their its we you he she they it update btw ps funny quick is are was "
    "were do does did can could will would should has have had same new old next last "
    "first mondays tuesdays wednesdays thursdays fridays saturdays sundays weekends near "
    "into onto over under between without around across behind beside inside outside "
    "through during except via per than like about above below after once both either "
    "neither all each another other"
)
_NAME_WORD = re.compile(r"[^\W\d_][\w\u2019'.-]*")
_INTRO = re.compile(r"\b(?:I'm|I\u2019m|I am|[Mm]y name is|[Mm]y name's|[Mm]y name\u2019s)\s+")
_THIS_IS = re.compile(r"^(?:(?:[Hh]i|[Hh]ello|[Hh]ey)[,!]?\s+)?[Tt]his is\s+")
_CALLS = re.compile(r"\bcall(?:s|ed|ing)? (?P<obj>me|him|her|them|it)\s+", re.IGNORECASE)
_AKA = re.compile(
    r"\b(?:goes by|go by|went by|aka|a\.k\.a\.|also known as|known as|nicknamed|"
    r"(?:is|was|'s|\u2019s) (?:also |actually |really )?(?:called|named))\s+"
)
_FOR_SHORT = re.compile(r",\s*(?=[^\W\d_][\w'\u2019-]*\s+for\s+short\b)")
_NAME_IS = re.compile(
    r"\b(?P<pos>my|his|her|their|our)(?: (?:real|actual|full|legal|proper))? "
    r"name(?: is|'s|\u2019s)\s+",
    re.IGNORECASE,
)


def _capitalized(word: str) -> bool:
    return word[:1].isupper()


def name_keys(name: str) -> set[Key]:
    """The keys a name is known by: its words, and without a legal suffix ("Ltd.")."""
    key = phrase(name)
    if not key:
        return set()
    out = {key}
    if len(key) > 1 and key[-1].rstrip(".") in _LEGAL:
        out.add(key[:-1])
    if len(key) > 1 and key[0].rstrip(".") in _TITLES:
        out.add(key[1:])  # "Dr. Chen" is "Chen"
    return out


def _nouns_around(doc: Analysis, text: str, first: int, last: int) -> set[str]:
    """Kin and role nouns next to the name of tokens ``first:last``: "my brother X",
    "X, my dad", "my boss is X", "a woman called X"."""
    words = doc.tokens
    sentence = words[first].sentence
    before = [t for t in words[max(0, first - 6) : first] if t.sentence == sentence]
    after = [t for t in words[last : last + 4] if t.sentence == sentence]
    nouns: set[str] = set()
    if len(before) >= 2 and before[-2].norm in _POSSESSIVES:
        nouns.add(_bare(before[-1].norm))
    nouns |= _copula_noun(before)
    called = len(before) >= 2 and before[-1].norm in {"called", "named"}
    if called and before[-2].norm not in _LINKING:  # "a woman called X", not "is called X"
        nouns.add(_bare(before[-2].norm))
    governed = bool(before) and before[-1].norm in _PREPOSITIONS  # "Tom at [X] is my coach"
    if (
        not governed
        and len(after) >= 3
        and after[0].norm in {"is", "was"}
        and after[1].norm in _POSSESSIVES
    ):
        nouns.update(_bare(t.norm) for t in after[2:3])  # "X is their tech lead"
        if len(after) >= 4:
            nouns.add(_bare(after[3].norm))
    copula = len(after) >= 3 and after[2].norm in {"is", "was", "are", "were"}
    apposed = len(after) >= 2 and "," in text[words[last - 1].end : after[0].start]
    if apposed and not copula and after[0].norm in _POSSESSIVES:
        nouns.add(_bare(after[1].norm))
    if before and before[-1].norm in _PLACE_PREPOSITIONS:
        nouns.add("@place")
    if before and before[-1].norm in _TITLES:
        nouns.add(before[-1].norm)
    if after and (after[0].norm in _PERSON_VERBS or after[0].norm == "who"):
        nouns.add("@person")  # "Magda talks", "Fiona says", "Ben, who ..."
    return {n for n in nouns if n.isalpha() or n in ("@place", "@person")}


_PARTITIVES = _words("one some either neither each any none which two")
_EXPLETIVE_VERBS = _words(
    "is was 's be been can could will would may might makes made helps helped feels felt "
    "seems seemed takes took gets got really just always never so"
)


def _expletive(tokens: Sequence[Token], at: int) -> bool:
    """Whether the "it" at ``at`` is impersonal: "it's easy to", "it makes a big difference
    knowing", "it was great to see", "it's moments like these that" - a verb, then within a
    few words "to", "that" or an -ing form, before the clause ends. After a determiner an
    -ing word is a noun's ("it's our bookkeeping service" is the service)."""
    word = tokens[at]
    after = [t for t in tokens[at + 1 : at + 7] if t.clause == word.clause]
    if word.norm == "it":
        if not after or after[0].norm not in _EXPLETIVE_VERBS:
            return False
        after = after[1:]
    nominal = bool(after) and after[0].norm in _POSSESSIVES | {"a", "an", "this", "that"}
    return any(
        t.norm in {"to", "that"} or (not nominal and t.norm.endswith("ing") and len(t.norm) > 4)
        for t in after
    )


def _names_next(doc: Analysis, at: int, spans: Sequence[tuple[int, int, Key, set[str]]]) -> bool:
    """Whether the possessive at token ``at`` and its noun go on to a name: "my brother
    Tomás", "my supervisor is Prof. Elena Marsh", "my coach there is Magdalena": the name
    is the mention, with the noun describing it."""
    if not spans:
        return False
    tokens = doc.tokens
    k = at + 2
    while k < len(tokens) and tokens[k].start < spans[0][0]:
        if tokens[k].norm.rstrip(".") not in _COPULA_FILLER:
            return False
        k += 1
    return k < len(tokens) and tokens[k].start == spans[0][0] and k - at <= 6


_COPULA_FILLER = frozenset({"is", "was", "there", "here", "now", "still"}) | frozenset(_TITLES)


def _copula_noun(before: Sequence[Token]) -> set[str]:
    """The noun of "my supervisor is [Prof.] X", "my coach there is X"."""
    words = [t.norm for t in before]
    while words and words[-1].rstrip(".") in _TITLES:
        words.pop()
    if not words or words[-1] not in {"is", "was", "are"}:
        return set()
    for j in range(len(words) - 2, max(-1, len(words) - 5), -1):
        if words[j] in _POSSESSIVES and j + 1 < len(words) - 1:
            return {_bare(words[j + 1])}
    return set()


_LINKING = frozenset({"is", "was", "are", "were", "also", "actually", "really", "be", "been"})


def _bare(word: str) -> str:
    return word[:-2] if word.endswith("'s") else word


def _word_is(hay: str, want: str) -> bool:
    """Whether token ``hay`` is the name word ``want``: itself, its possessive, or the number
    a name's key holds in value form ("Org 7", "Studio 54" are ``#n7``, ``#n54`` there)."""
    if hay == want or (hay.endswith("'s") and hay[:-2] == want):
        return True
    return want[:1] == "#" and word_value(hay) == want


def _name_at(text: str, at: int) -> str:
    """The capitalized name (one to three words) starting at ``at``, or ""."""
    words = []
    pos = at
    for _ in range(3):
        match = _NAME_WORD.match(text, pos)
        if match is None or not _capitalized(match.group()):
            break
        word = match.group().rstrip(".'\u2019")
        if word.casefold() in _NOT_NAMES:
            break
        words.append(word)
        pos = match.end()
        if text[pos : pos + 1] != " ":
            break
        pos += 1
    return " ".join(words)


def _capitalized_runs(text: str, doc: Analysis, known: set[Key]) -> list[tuple[int, int, int, int]]:
    """Capitalized word runs of ``text`` that look like names, as (start, end, first token,
    last token + 1): a lone capitalized word opening a sentence is one only when ``known``."""
    out = []
    tokens = doc.tokens
    i = 0
    while i < len(tokens):
        raw = text[tokens[i].start : tokens[i].end]
        if not _capitalized(raw) or tokens[i].norm in _NOT_NAMES:
            i += 1
            continue
        opens = i == 0 or tokens[i - 1].sentence != tokens[i].sentence
        if opens and tokens[i].norm in _ASKED_TO:  # "Call Eve at five": Eve is the name
            i += 1
            continue
        j = i + 1
        while j < len(tokens) and tokens[j].sentence == tokens[i].sentence:
            gap = text[tokens[j - 1].end : tokens[j].start]
            word = text[tokens[j].start : tokens[j].end]
            if _capitalized(word) and tokens[j].norm not in _NOT_NAMES and gap in _JOINS:
                j += 1
            elif (  # "Molinos del Sur", "University of Edinburgh" (not "Yusuf of Acme")
                (
                    tokens[j].norm in _PARTICLES
                    or (tokens[j].norm == "of" and tokens[j - 1].norm in _OF_HEADS)
                )
                and gap == " "
                and j + 1 < len(tokens)
                and tokens[j + 1].sentence == tokens[i].sentence
                and _capitalized(text[tokens[j + 1].start : tokens[j + 1].end])
                and text[tokens[j].end : tokens[j + 1].start] == " "
            ):
                j += 2
            else:
                break
        lone = j == i + 1
        key = (_bare(tokens[i].norm),)
        stray = lone and (tokens[i].norm in _TITLES or len(raw) == 1)
        if (not (opens and lone) or key in known or _paired(text, tokens, i)) and not stray:
            out.append((tokens[i].start, tokens[j - 1].end, i, j))
        i = j
    return out


_JOINS = frozenset({" ", "-", " & "})
# Verbs a sentence opens with when it asks something of someone ("Call Eve", "Tell Ravi Shah",
# "Meet Ada at the station"): capitalized there, never part of the name after them. Verbs
# that are also first names (Mark, Pat, Sue, Drew, Chase, Grant, Will, Bill) are left out.
_ASKED_TO = _words(
    "call ask tell meet text email ping message remind invite thank visit see send give let "
    "make bring take show pay get help find book phone follow check contact introduce "
    "congratulate wish greet pick drive join watch ring buy feed warn wake hug"
)
_PARTICLES = frozenset({"de", "del", "della", "di", "da", "van", "von", "der", "la", "le"})
_OF_HEADS = _words(
    "university college school institute museum bank department ministry church hospital "
    "city county state republic kingdom bay isle gulf lake mount order society"
)


def _paired(text: str, tokens: Sequence[Token], i: int) -> bool:
    """Whether the capitalized word opening a sentence is joined to a name after it:
    "Tomás and Marc sorted out the keys"."""
    if i + 2 >= len(tokens) or tokens[i + 1].norm not in {"and", "or"}:
        return False
    after = text[tokens[i + 2].start : tokens[i + 2].end]
    return _capitalized(after) and tokens[i + 2].norm not in _NOT_NAMES
