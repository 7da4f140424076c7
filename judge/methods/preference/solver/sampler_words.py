"""The exact sampler's own words (judge/methods/preference/solver/sampler.py,
"Words"; docs/randomness.md): the top 62 bits of Philox4x64-10 keyed with
two words of the judge's stream, made a chunk at a time, and the exact
Bernoulli draw that accepts a trial when floating point cannot decide."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from judge.methods.preference.solver.sampler_steps import WORD_BITS


class _Words:
    """Sampler words (module docstring): top 62 bits of Philox4x64-10. Word
    k (absolute) is array[k - base]: the words before a trial that is still
    running are dropped as more are made, so a long draw holds a chunk of
    words, not all it used."""

    CHUNK = 1 << 16

    def __init__(self, key: tuple[int, int]) -> None:
        self._gen = np.random.Philox(key=np.array(key, dtype=np.uint64))
        self.array = np.zeros(0, dtype=np.int64)
        self.base = 0
        self.more()

    def more(self, keep_from: int | None = None) -> None:
        """Make CHUNK more words; drop those before word keep_from."""
        if keep_from is not None and keep_from > self.base:
            self.array = self.array[keep_from - self.base:]
            self.base = keep_from
        new = (self._gen.random_raw(self.CHUNK) >> np.uint64(2)).astype(np.int64)
        self.array = np.concatenate((self.array, new))

    def word(self, pos: int) -> int:
        while pos - self.base >= len(self.array):
            self.more()
        return int(self.array[pos - self.base])


def _bernoulli(p: Fraction, words: _Words, pos: int) -> tuple[bool, int]:
    """True with probability exactly p (0 <= p <= 1): the uniform number
    0.w1 w2 ... (62-bit words) is below p. Returns (outcome, next pos)."""
    num, den = p.numerator, p.denominator
    while True:
        digit, num = divmod(num << WORD_BITS, den)  # next 62 bits of p
        w = words.word(pos)
        pos += 1
        if w != digit:
            return w < digit, pos
        if num == 0:  # p ends here; the uniform number does not: it is above
            return False, pos
