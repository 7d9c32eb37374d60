"""Who a chat's words refer to (see :mod:`kgmem.memory.discourse.reading`): speakers,
names, partial names, nicknames, pronouns and descriptions, read from the chat itself."""

from kgmem.memory.discourse.reading import LOOKBACK, Discourse, Identity, Ref, Speaker, Turn
from kgmem.memory.discourse.words import TITLES, Kind, name_keys

__all__ = [
    "LOOKBACK",
    "TITLES",
    "Discourse",
    "Identity",
    "Kind",
    "Ref",
    "Speaker",
    "Turn",
    "name_keys",
]
