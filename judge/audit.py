"""The audit trail: one event row per thing that happened, in time order.

Events are only read back later (`judge log`), never by the transaction
that records them, so record() keeps them in the session and they are
written together, in the order recorded, when the transaction commits: one
multi-row INSERT instead of one ORM object (and flush) per event. A
rollback drops them with everything else.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import event, or_, select
from sqlalchemy.orm import Session

from judge.store.models import Event, Game

_PENDING = "judge.audit.pending"


def record(session: Session, at: datetime, kind: str, *, game_id: int | None = None,
           inbound_id: int | None = None, outbox_id: int | None = None, **data: Any) -> None:
    session.info.setdefault(_PENDING, []).append(
        {"at": at, "kind": kind, "game_id": game_id, "inbound_id": inbound_id, "outbox_id": outbox_id,
         "data": data})


def write_pending(session: Session) -> None:
    """Insert the events recorded in this transaction so far."""
    pending = session.info.pop(_PENDING, None)
    if pending:
        session.connection().execute(Event.__table__.insert(), pending)


@event.listens_for(Session, "before_commit")
def _before_commit(session: Session) -> None:
    write_pending(session)


@event.listens_for(Session, "after_soft_rollback")
def _after_rollback(session: Session, previous_transaction) -> None:
    if previous_transaction.parent is None:  # the whole transaction, not a savepoint
        session.info.pop(_PENDING, None)


def game_events(session: Session, game: Game) -> list[dict[str, Any]]:
    """Every event of a game, oldest first, including the mails that touched it."""
    write_pending(session)
    inbound_ids = select(Event.inbound_id).where(Event.game_id == game.id, Event.inbound_id.is_not(None))
    rows = session.scalars(
        select(Event)
        .where(or_(Event.game_id == game.id,
                   # A mail's own events (its storing, a moderator's re-run of it) carry no game.
                   Event.kind.in_(("inbound", "rerun")) & Event.inbound_id.in_(inbound_ids)))
        .order_by(Event.at, Event.id)
    ).all()
    return [
        {"at": e.at.isoformat(), "kind": e.kind, "inbound_id": e.inbound_id, "outbox_id": e.outbox_id, **e.data}
        for e in rows
    ]


def filter_events(events: list[dict[str, Any]], *, player: str | None = None,
                  kinds: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The events of `game_events` that concern `player` (an address) and
    are of one of `kinds` (`judge log --player --kind` and the console).
    A player's events: their mails in and everything those mails caused
    (commands, state changes, replies), mails out to them, and any event
    that names their address."""
    if player:
        who = player.strip().casefold()
        theirs = {e["inbound_id"] for e in events
                  if e["kind"] == "inbound" and (e.get("sender") or "").casefold() == who}
        events = [e for e in events
                  if (e["inbound_id"] is not None and e["inbound_id"] in theirs)
                  or (e["kind"] == "outbound" and who in {str(a).casefold() for a in e.get("to", ())})
                  or any(isinstance(v, str) and v.casefold() == who for v in e.values())]
    if kinds:
        wanted = {k.casefold() for k in kinds}
        events = [e for e in events if e["kind"].casefold() in wanted]
    return events


def run_events(session: Session, run_id: int, since: datetime) -> list[dict[str, Any]]:
    """Every event of a third-party run of the blinding protocol (which has
    no game on this judge: its events carry `run`), oldest first, with the
    mails that touched it."""
    write_pending(session)
    rows = session.scalars(select(Event).where(Event.game_id.is_(None), Event.at >= since)
                           .order_by(Event.at, Event.id)).all()
    mine = [e for e in rows if e.data.get("run") == run_id]
    inbound = {e.inbound_id for e in mine if e.inbound_id is not None}
    chosen = [e for e in rows if e in mine or (e.kind == "inbound" and e.inbound_id in inbound)]
    return [
        {"at": e.at.isoformat(), "kind": e.kind, "inbound_id": e.inbound_id, "outbox_id": e.outbox_id, **e.data}
        for e in chosen
    ]


def describe(e: dict[str, Any]) -> str:
    """One event in words, as `judge log` prints it (after its time) and the
    console shows it."""
    kind = e["kind"]
    if kind == "inbound":
        what = f"mail in  #{e['inbound_id']} from {e.get('sender')}: {e.get('subject')!r}"
    elif kind == "outbound":
        what = f"mail out #{e['outbox_id']} to {', '.join(e.get('to', []))}: {e.get('subject')!r}"
    elif kind == "command":
        what = f"line {e.get('line')} of mail #{e['inbound_id']} {e.get('status')}: {e.get('text')!r} -> {e.get('message')}"
        # A refused bid list's reasons: one a line, as the reply shows them.
        what += "".join(f"\n{'':21}- {note}" for note in e.get("notes", ()))
    elif kind == "draw" and "run" in e:
        what = f"draw ({e.get('what')}, third party's shuffle): {e.get('chosen')} (word #{e.get('counter')})"
    elif kind == "draw":
        what = (f"draw ({e.get('what')}, step {e.get('context', {}).get('step')}): {e.get('chosen')} "
                f"from {e.get('options')} (word #{e.get('counter')})")
    elif kind == "resolution":
        what = f"resolved with seed {e.get('seed')}: {e.get('assignment')}"
    else:
        # A sentence of its fields, not a Python dict (JSON is for machines).
        rest = [f"{k.replace('_', ' ')} {', '.join(map(str, v)) if isinstance(v, list) else v}"
                for k, v in e.items() if k not in ("at", "kind", "inbound_id", "outbox_id") and v is not None]
        what = f"{kind}: " + "; ".join(rest)
    return what
