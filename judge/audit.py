"""The audit trail: one event row per thing that happened, in time order."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from judge.store.models import Event, Game


def record(session: Session, at: datetime, kind: str, *, game_id: int | None = None,
           inbound_id: int | None = None, outbox_id: int | None = None, **data: Any) -> Event:
    event = Event(at=at, kind=kind, game_id=game_id, inbound_id=inbound_id, outbox_id=outbox_id, data=data)
    session.add(event)
    return event


def game_events(session: Session, game: Game) -> list[dict[str, Any]]:
    """Every event of a game, oldest first, including the mails that touched it."""
    inbound_ids = select(Event.inbound_id).where(Event.game_id == game.id, Event.inbound_id.is_not(None))
    rows = session.scalars(
        select(Event)
        .where(or_(Event.game_id == game.id,
                   (Event.kind == "inbound") & Event.inbound_id.in_(inbound_ids)))
        .order_by(Event.at, Event.id)
    ).all()
    return [
        {"at": e.at.isoformat(), "kind": e.kind, "inbound_id": e.inbound_id, "outbox_id": e.outbox_id, **e.data}
        for e in rows
    ]
