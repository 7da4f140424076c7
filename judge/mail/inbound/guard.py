"""One step of reading a mail, guarded: a broken header costs only its own
field, and the failure is written into the mail's problems."""

from __future__ import annotations

from typing import Callable, TypeVar

T = TypeVar("T")


def _guard(step: Callable[[], T], default: T, problems: list[str], what: str) -> T:
    try:
        return step()
    except Exception as error:
        problems.append(f"unreadable {what}: {type(error).__name__}")
        return default
