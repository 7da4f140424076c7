"""The game driver: the one place where a game changes, whatever its method
(docs/architecture.md, "The game driver").

Every change is made in a transaction that holds the game's lock
(judge.driver.lock: PostgreSQL's row lock, SQLite's write lock), with the
row's version checked at the write; the method's pure hooks are given the
game as data and hand back an Outcome (judge.methods.api), which
judge.driver.outcome stores: state, next tick, deadline, events, record
and mails, all in that transaction or none of it. A transient fault of the
store (a dropped connection, a serialization failure, a stale version) is
tried again on a fresh connection, never taken for a bug.
"""

from typing import Any

# The shell's entry points (judge.driver.hooks), looked up when first used:
# judge.games, which the hooks use, itself uses judge.driver.precompute.
_HOOKS = ("at_deadline", "begin", "list_view", "mail_line", "not_in_yet", "precompute_deadline", "public_board",
          "roster_changed", "standing_line", "stopped", "tick")
_LOCKS = ("is_transient", "lock_game", "retrying", "write_lock")

__all__ = [*_HOOKS, *_LOCKS]


def __getattr__(name: str) -> Any:
    if name in _HOOKS:
        from judge.driver import hooks

        return getattr(hooks, name)
    if name in _LOCKS:
        from judge.store import lock

        return getattr(lock, name)
    raise AttributeError(f"module 'judge.driver' has no attribute {name!r}")
