"""A search analyses its query while a refresh analyses documents, in another thread. The
stemmer keeps the word it is stemming in itself: two stems at once broke words (cached so
for good) or raised IndexError, and a refresh that raised left its memories out of search
(seen in benchmarks/longmemeval.py: "LexicalIndex failed to refresh 2 nodes")."""

from __future__ import annotations

import random
import string
import sys
import threading
from collections.abc import Iterator

import pytest
import snowballstemmer  # type: ignore[import-untyped]

from kgmem.index.lexical.docs import stem


@pytest.fixture
def switching() -> Iterator[None]:
    """Threads switch as often as the interpreter can: the race shows in a second."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_words_stemmed_in_eight_threads_at_once_are_stemmed_right(switching: None) -> None:
    rng = random.Random(7)
    endings = ("ing", "s", "ed", "ies", "ational", "ness", "fulness", "ly")
    words = [
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 12))) + rng.choice(endings)
        for _ in range(40_000)
    ]
    words = [w for w in dict.fromkeys(words)]  # each word stemmed once: a cache miss each
    stem.cache_clear()
    failed: list[BaseException] = []

    def run(part: list[str]) -> None:
        try:
            for word in part:
                stem(word)
        except BaseException as exc:
            failed.append(exc)

    threads = [threading.Thread(target=run, args=(words[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failed == []
    alone = snowballstemmer.stemmer("english")  # one thread, a stemmer of its own
    assert [stem(w) for w in words] == [alone.stemWord(w) for w in words]
