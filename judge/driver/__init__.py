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

from judge.driver.hooks import (
    at_deadline,
    begin,
    list_view,
    mail_line,
    not_in_yet,
    public_board,
    roster_changed,
    standing_line,
    stopped,
    tick,
)
from judge.store.lock import is_transient, lock_game, retrying, write_lock

__all__ = ["at_deadline", "begin", "is_transient", "list_view", "lock_game", "mail_line", "not_in_yet",
           "public_board", "retrying", "roster_changed", "standing_line", "stopped", "tick", "write_lock"]
