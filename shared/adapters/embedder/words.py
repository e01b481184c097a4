"""Single words' vectors for `Embedder.word_similarities`: embedded in one call a question,
remembered in a bounded LRU (a person's vocabulary repeats, so a warm question embeds a few
new words), as 4-byte floats (a word of 384 dimensions is 1.5 KB)."""

from __future__ import annotations

import math
import operator
from array import array
from collections import OrderedDict
from collections.abc import Awaitable, Callable

# The most words remembered: 10,000 of 384 dimensions hold about 15 MB.
WORD_CACHE = 10_000


class WordVectors:
    """Words' unit vectors by `embed`, the last `size` used remembered; `embedded` counts the
    words embedded (not found remembered) since it was made."""

    def __init__(
        self, embed: Callable[[list[str]], Awaitable[list[list[float]]]], size: int = WORD_CACHE
    ) -> None:
        self._embed = embed
        self._size = size
        self._known: OrderedDict[str, array[float]] = OrderedDict()
        self.embedded = 0

    def clear(self) -> None:
        self._known.clear()

    async def similarities(self, terms: list[str], words: list[str]) -> list[list[float]]:
        known = await self._vectors([*terms, *words])
        return [[_dot(known[t], known[w]) for w in words] for t in terms]

    async def _vectors(self, words: list[str]) -> dict[str, array[float]]:
        wanted = list(dict.fromkeys(words))
        new = [w for w in wanted if w not in self._known]
        if new:
            for word, vector in zip(new, await self._embed(new), strict=True):
                norm = math.sqrt(sum(x * x for x in vector)) or 1.0
                self._known[word] = array("f", [x / norm for x in vector])
            self.embedded += len(new)
        out = {}
        for word in wanted:
            self._known.move_to_end(word)
            out[word] = self._known[word]
        while len(self._known) > self._size:
            self._known.popitem(last=False)
        return out


def _dot(a: array[float], b: array[float]) -> float:
    return sum(map(operator.mul, a, b))
