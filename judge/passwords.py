"""Password hashes (scrypt from the standard library); never stored in clear."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

DEFAULT_COST = 14  # log2 of scrypt's N: about 30 ms a check on this kind of machine


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


def hash_password(password: str, cost: int = DEFAULT_COST) -> str:
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=1 << cost, r=8, p=1, maxmem=1 << 30)
    return f"scrypt${cost}${_b64(salt)}${_b64(digest)}"


def check_password(password: str, stored: str | None) -> bool:
    if not stored:
        return False
    try:
        scheme, cost, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        want = base64.b64decode(digest)
        got = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=1 << int(cost),
                             r=8, p=1, maxmem=1 << 30, dklen=len(want))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, want)


def one_time_token(alphabet: str, length: int) -> str:
    """A one-time token of `length` characters of `alphabet`, from the
    operating system's randomness (secrets), never from a game's recorded
    draws: it must stay unguessable after the seed is revealed."""
    import secrets

    return "".join(secrets.choice(alphabet) for _ in range(length))
