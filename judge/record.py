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
    return json.dumps(record, indent=1, ensure_ascii=False).encode("utf-8")
