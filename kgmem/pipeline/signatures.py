"""The prompts of consolidation: one DSPy ``Signature`` per model stage; the docstring is the
instruction the model reads, the typed fields are what it must answer.

Each instruction says what deterministic code will check afterwards, because a model that
knows its quotes are compared character by character copies instead of paraphrasing.
"""

from __future__ import annotations

import dspy

from kgmem.pipeline.proposals import (
    EntityCandidate,
    EntityChoice,
    ExtractedClaim,
    ExtractedProcedure,
    PageFact,
    PageMemory,
    SchemaPatch,
    TermCandidate,
    TermChoice,
    UndeclaredTerm,
)

__all__ = ["AssembleTerms", "AuthorPage", "ClassifyTerm", "ExtractClaims", "ResolveTieBreak"]


class ExtractClaims(dspy.Signature):
    """Extract the durable claims a conversation segment states, each with exact evidence,
    and the procedures it states as steps.

    The segment is a list of sources, each opened by a header line such as
    `=== S3 | turn 4 | user message | speaker: Alice | 2024-05-01T10:00:00+00:00 ===` and
    followed by its text. Only the text under a header is the source; headers are not quotes.

    Rules for claims:
    - One claim per fact: a subject, a predicate, and either an object (an entity) or a value
      (a literal such as a date, a number or a phrase), never both.
    - Refer to the user as "user". Use the names in `known_entities` when a source refers to
      one of them (by that name or an alias); otherwise use the name as the source writes it.
    - predicate: an ontology term as a CURIE (schema:worksFor, foaf:knows) when one obviously
      fits, otherwise a short lowerCamelCase phrase (prefersSeat). Do not invent prefixes.
    - subject_aliases / object_aliases: only other names a quote itself gives the same person
      or thing ("Robert, Bob to his friends"); an alias no quote states with the name is
      discarded.
    - negated: true only when the source says the claim is NOT so ("I don't eat meat").
    - kind: semantic for facts and relations, procedural for rules and preferences about how
      to do things, episodic for events at a time (then occurred_at is required).
    - support: explicit when the quote states the claim, derived when it follows in one step,
      inferred when it is only plausible.
    - confidence: how sure you are that the quotes state exactly this claim.

    Rules for procedures (a routine, a how-to, a checklist the sources give as steps):
    - One procedure per routine: a short title, its steps in the order the sources give
      them, and its triggers (when it applies: "before painting", "if the error rate goes
      above 2%"), if the sources say.
    - Write each step in the sources' own words, keeping every number, amount, time and name
      as said ("wait 20 minutes", never "wait a while" or "wait 30 minutes"); never add a step
      the sources do not state, never merge two routines, never reorder.
    - about: the people or things it concerns, by name (as for claims; not the user).
    - evidence: the quotes that state the steps (support explicit). Each step is checked
      against the quotes afterwards, word by word in order; a procedure with a step or a
      trigger number no quote states is discarded whole.
    - A procedure is not also a claim: do not repeat its steps as claims.

    For both:
    - evidence: cite sources by their id (S1, S2, ...) and copy each quote character for
      character from that source's text: same words, case, punctuation and spacing. Never
      paraphrase, translate, shorten inside the quote, or join text from two places. Quote the
      shortest span that names both the subject (or its pronoun) and the object or value (for
      a procedure: that holds its steps).
    - The assistant's own statements are not proof: cite the user's confirmation, a task
      record or a tool result beside them. Questions, hypotheticals, jokes and greetings are
      not claims. Skip anything you cannot quote.
    Every quote is checked verbatim against the source afterwards; a claim whose quote is not
    found, or does not name its subject and value, is discarded. Return [] for a field with
    nothing durable to remember. Write `claims` and `procedures` as strict JSON (double
    quotes, true/false, null), not as Python literals.
    """

    segment: str = dspy.InputField(desc="the sources of one conversation segment, in order")
    known_entities: list[str] = dspy.InputField(desc="names of entities already known")
    claims: list[ExtractedClaim] = dspy.OutputField(desc="the claims, in the order stated")
    procedures: list[ExtractedProcedure] = dspy.OutputField(
        desc="the procedures stated as steps, in the order stated; [] when there are none"
    )


class ClassifyTerm(dspy.Signature):
    """Choose the ontology term that means what a surface type or relation means here.

    `surface` is how a claim names a type of thing or a relation; `context` shows the claims
    that use it. Pick the one candidate whose label and description mean the same thing in
    this context, preferring the most specific term that is still certainly true. If none
    fits, answer "none": a missing term is proposed later, so never stretch a near miss.
    Return the candidate's CURIE exactly as given.
    """

    surface: str = dspy.InputField(desc="a type or relation as a claim names it")
    role: str = dspy.InputField(desc="class (a type of thing) or property (a relation)")
    context: str = dspy.InputField(desc="claims that use it")
    candidates: list[TermCandidate] = dspy.InputField(desc="ontology terms to choose from")
    choice: TermChoice = dspy.OutputField()


class ResolveTieBreak(dspy.Signature):
    """Decide which known entity a mention refers to, or that it is a new one.

    The candidates share the mention's name or an alias, and their types are compatible, so
    the name alone does not decide. Decide from the context: attributes, relations, places,
    times and what the sources say about each candidate. Choose a candidate only when the
    context supports it over the others (a "Mercury" discussed with orbits is the planet, not
    the element or a company); answer "new" when no candidate fits or when two fit equally.
    Merging two different things is worse than keeping one thing twice. Return the
    candidate's id exactly as given.
    """

    mention: str = dspy.InputField(desc="the name as the claim uses it")
    context: str = dspy.InputField(desc="the claims and quotes around the mention")
    candidates: list[EntityCandidate] = dspy.InputField(desc="known entities it may be")
    decision: EntityChoice = dspy.OutputField()


class AssembleTerms(dspy.Signature):
    """Decide, for every term a consolidation pass uses but no ontology declares, what to do
    with it, looking at all of them together so that one concept gets one term.

    Actions, one per term:
    - declare: a genuinely new class or property; give label and parent (its superclass or
      superproperty from the candidates), and for a property its domain and range;
    - align: it means an existing term; give that term as target;
    - merge: it means the same as another undeclared term of this pass; give that surface
      as target (declare that other one);
    - restrict: an existing property fits but only for narrower subjects or values; give the
      property as target and the domain or range;
    - amend: an existing term of the user's own schema needs a better label or parent;
    - defer: not enough evidence to decide; say why in reason.
    Prefer align over declare, and defer over a guess. Use only terms that appear among the
    candidates as target, parent, domain or range. The patch is validated against the
    ontology before anything is written.
    """

    terms: list[UndeclaredTerm] = dspy.InputField(desc="every undeclared term of the pass")
    patch: SchemaPatch = dspy.OutputField()


class AuthorPage(dspy.Signature):
    """Write the Markdown wiki page of one entity from its facts and memories.

    Start with a one-paragraph summary, then sections for what is known (facts), how-tos and
    preferences (procedural memories) and history (episodes, oldest first). State only what
    the facts and memories say; do not add knowledge of your own. After every sentence that
    uses a fact or memory, cite its id in brackets, e.g. [m:3f2a]. No front matter and no
    top-level heading: kgmem adds them.
    """

    entity: str = dspy.InputField(desc="the entity's name")
    types: list[str] = dspy.InputField(desc="its ontology types")
    facts: list[PageFact] = dspy.InputField()
    memories: list[PageMemory] = dspy.InputField()
    markdown: str = dspy.OutputField(desc="the page body in Markdown")
