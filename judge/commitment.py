"""Commit and reveal: how a resolution's seed is made, so that neither the
judge's operator nor any player alone can steer it (docs/randomness.md).

    secret      = 32 bytes drawn by the judge when the game is created
    commitment  = SHA-256(secret), hex: mailed to every player before any draw
    entropy     = every ENTROPY line of the game as [player, text] pairs,
                  in the order the judge received them
    seed        = SHA-256(b"pbem-judge seed v1" || secret || SHA-256(E))
                  with E = the entropy list as compact JSON, UTF-8:
                  json.dumps(entropy, ensure_ascii=False, separators=(",", ":"))

The results reveal the secret, every entropy line and the seed.
"""

from __future__ import annotations

import hashlib
import json
from typing import Sequence

DOMAIN = b"pbem-judge seed v1"


def commitment(secret: bytes) -> str:
    return hashlib.sha256(secret).hexdigest()


def entropy_json(entropy: Sequence[Sequence[str]]) -> bytes:
    return json.dumps([[str(p), str(t)] for p, t in entropy], ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")


def resolution_seed(secret: bytes, entropy: Sequence[Sequence[str]]) -> bytes:
    return hashlib.sha256(DOMAIN + secret + hashlib.sha256(entropy_json(entropy)).digest()).digest()
