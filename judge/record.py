"""The sealed record of a resolution: everything needed to check it.

It travels with every results mail as `resolution.json`, and is what
`judge verify` checks (judge/verify.py):

    {"format": "pbem-judge/resolution-1", "game": ..., "method": ...,
     "input":  the `judge resolve` file the game amounts to,
     "commitment": SHA-256 of the secret (mailed before any draw),
     "secret": the judge's secret seed, "entropy": [[player, text], ...],
     "names": {address: the name the mail's text calls the player} (results
               mails name players so; `judge verify` checks the text by it),
     "result": the resolution record (seed, assignment, draws, ...)}
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

FORMAT = "pbem-judge/resolution-1"
FILENAME = "resolution.json"


def sealed(game: str | None, method: str, data: dict[str, Any], reveal: dict[str, Any] | None,
           result: dict[str, Any], names: dict[str, str] | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"format": FORMAT, "game": game, "method": method, "input": data}
    if reveal:
        record.update(commitment=reveal["commitment"], secret=reveal["secret"], entropy=reveal["entropy"])
    if names:
        record["names"] = names
    record["result"] = result
    return record


def to_bytes(record: dict[str, Any]) -> bytes:
    """json.dumps(record, indent=1, ensure_ascii=False), byte for byte.
    json's C encoder takes no indent, and its pure Python one takes twice
    as long as this (a record per game of a deadline, issue 29: 0.11 s
    against 0.06 s of CPU for 500 records of 7 KB): one recursion into a
    list of pieces, strings escaped by json's own C function. Anything it does not know (another type, a loop) is left to
    json.dumps, which says what is wrong as it always did."""
    try:
        out: list[str] = []
        _encode(record, out, "\n")
    except (TypeError, ValueError, RecursionError):
        return json.dumps(record, indent=1, ensure_ascii=False).encode("utf-8")
    return "".join(out).encode("utf-8")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    # json's order: str, float, True, False, None, int; any other key is an error.
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def _encode(value: Any, out: list[str], newline: str) -> None:
    """`value` as json.dumps(indent=1) writes it, `newline` being the line
    break and indent of the level it stands at (json's own order of tests)."""
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = newline + " "
        out.append("[")
        first = True
        for item in value:
            out.append(inner if first else "," + inner)
            first = False
            _encode(item, out, inner)
        out.append(newline + "]")
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + " "
        out.append("{")
        first = True
        for key, item in value.items():
            out.append(inner if first else "," + inner)
            first = False
            out.append(encode_basestring(_key(key)))
            out.append(": ")
            _encode(item, out, inner)
        out.append(newline + "}")
    else:
        raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")
