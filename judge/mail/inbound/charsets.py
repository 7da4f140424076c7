"""Bytes to text, and text safe to store.

decode_bytes() reads body or header bytes in their declared charset (or the
best guess); clean_text() leaves no lone surrogate and no NUL or other
control character in a string, because both would break storing it."""

from __future__ import annotations

import codecs
import re

_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
_SURROGATES = re.compile("[\udc80-\udcff]")  # 8-bit bytes of a header, as compat32 keeps them


def decode_bytes(data: bytes, charset: str | None, problems: list[str]) -> tuple[str, str | None]:
    """Decode body or header bytes with their declared charset.

    Unknown charset: UTF-8 if the bytes are valid UTF-8, else Latin-1 (every
    byte maps, and Western players' 8-bit mail is mostly Latin-1/cp1252).
    Known charset but broken bytes: that charset with replacement characters,
    which keeps all the well-formed text intact.
    """
    name = (charset or "").strip().strip('"').lower()
    codec = _text_codec(name) if name and name not in ("us-ascii", "ascii") else None
    problem: str | None = None
    if codec is not None:
        try:
            return clean_text(data.decode(codec)), None
        except Exception:
            problem = f"broken charset {name}"
    elif name and name not in ("us-ascii", "ascii", "unknown-8bit"):
        problem = f"undecodable charset {name}"
    if problem:
        problems.append(problem)
    try:
        return clean_text(data.decode("utf-8")), problem
    except UnicodeDecodeError:
        pass
    if codec is not None:
        try:
            return clean_text(data.decode(codec, errors="replace")), problem
        except Exception:
            pass
    return clean_text(data.decode("latin-1")), problem


def _text_codec(name: str) -> str | None:
    try:
        info = codecs.lookup(name)
    except Exception:
        return None
    # "base64", "rot13", "zlib" are codecs too, but not text encodings.
    if not getattr(info, "_is_text_encoding", True):
        return None
    return info.name


def _normalise_text(text: str) -> str:
    return _LINE_BREAKS.sub("\n", text)


def clean_text(text: str) -> str:
    """A string safe to store: surrogate escapes decoded, NUL and other control
    characters (except tab and line breaks) removed."""
    return _CONTROL_CHARS.sub("", _desurrogate(text))


def _desurrogate(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")
