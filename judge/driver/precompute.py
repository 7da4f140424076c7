"""Heavy pure work done before the game's lock is taken (issue 24).

A resolution (a preference draw at 100 powers) or a Payola phase (many
offer sheets) is a pure function of its inputs. The scheduler computes it
first from a snapshot of the game read without a lock, outside any
transaction, and keeps the result here under a digest of those exact
inputs; the short transaction that then takes the game's lock builds the
inputs again from the fresh row and finds the result, or, when the game
changed meanwhile (the inputs differ), computes it there as before. So the
lock is never held while the work runs, and nothing computed from a stale
read can be stored.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_KEEP = 64  # results kept (one per game due in a pass; the oldest go first)
_results: OrderedDict[str, Any] = OrderedDict()
_lock = threading.Lock()


def digest(*inputs: Any) -> str:
    """A key for these exact inputs (JSON-ready data, bytes, datetimes)."""
    h = hashlib.sha256()
    for x in inputs:
        h.update(x if isinstance(x, bytes) else json.dumps(x, sort_keys=True, default=str).encode())
        h.update(b"\0")
    return h.hexdigest()


def remember(key: str, value: Any) -> None:
    with _lock:
        _results[key] = value
        _results.move_to_end(key)
        while len(_results) > _KEEP:
            _results.popitem(last=False)


def computed(key: str, compute: Callable[[], T]) -> T:
    """The result remembered under `key` (taken: it is used once), or
    compute() now."""
    with _lock:
        if key in _results:
            return _results.pop(key)
    return compute()
