"""The newest migrations, read from the migration files themselves (stdlib
only): the store skips alembic when the database is at them
(judge/store/db.py), and `judge deliver` takes its light path only then
(judge/deliver_light.py), without importing SQLAlchemy or alembic."""

from __future__ import annotations

import re
from pathlib import Path

VERSIONS = Path(__file__).resolve().parent / "migrations" / "versions"

_REVISION = re.compile(r"^revision\s*=\s*['\"]([^'\"]+)['\"]", re.MULTILINE)
_DOWN_REVISION = re.compile(r"^down_revision\s*=\s*(.*)$", re.MULTILINE)
_QUOTED = re.compile(r"['\"]([^'\"]+)['\"]")


def head_revisions() -> set[str] | None:
    """The newest migrations (those no other one follows), read from the
    files' `revision = '...'` and `down_revision = ...` lines; None when a
    file does not say them plainly (then alembic itself decides)."""
    revisions: set[str] = set()
    followed: set[str] = set()
    for path in VERSIONS.glob("*.py"):
        source = path.read_text(encoding="utf-8")
        revision, down = _REVISION.search(source), _DOWN_REVISION.search(source)
        if revision is None or down is None:
            return None
        revisions.add(revision.group(1))
        followed.update(_QUOTED.findall(down.group(1)))
    return (revisions - followed) or None
