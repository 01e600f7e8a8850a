"""Word stems read from many threads at once, as the HTTP service's workers read
them: a Snowball stemmer holds the word it works on, so one shared by threads
corrupts their words (``IndexError: string index out of range``)."""

from __future__ import annotations

import threading

from assay.verifier._text import _stem_word  # pyright: ignore[reportPrivateUsage]

WORDS = ("invoicing", "reconciliations", "approvals", "deliveries", "overdue", "replacements")


def test_stems_are_read_from_many_threads_at_once() -> None:
    expected = {word + tail: _stem_word(word + tail) for word in WORDS for tail in ("", "s")}
    errors: list[str] = []
    wrong: list[str] = []

    def stem_many(tail: str) -> None:
        try:
            for _ in range(1500):
                for word in WORDS:
                    if _stem_word(word + tail) != expected[word + tail]:
                        wrong.append(word + tail)
        except Exception as error:  # the race shows as any error of the stemmer
            errors.append(repr(error))

    threads = [threading.Thread(target=stem_many, args=("s" * (k % 2),)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and wrong == []
