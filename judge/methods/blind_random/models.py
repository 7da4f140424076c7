"""blind-random's table in the store: its protocol's runs. On the store's
metadata (judge.store.models.Base), so that its migration
(judge/store/migrations/versions/0003_blinding_protocol_runs.py) and the
models are checked together (tests/test_store.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from judge.store.models import Base, UTCDateTime


class BlindRun(Base):
    """One run of the blinding protocol (docs/blinding.md): this judge as the
    GM's side of a game of its own, or as the third party of a game run
    elsewhere. The state is the pure modules' (judge.methods.blind_random.blinding)."""

    __tablename__ = "blind_runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    role: Mapped[str] = mapped_column(String(20))  # gm | third-party
    game: Mapped[str] = mapped_column(String(100))
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id"), index=True)
    gm: Mapped[str] = mapped_column(String(320))  # the GM's judge (the address protocol mail comes from)
    third_party: Mapped[str] = mapped_column(String(320))
    state: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    finished: Mapped[bool] = mapped_column(Boolean, default=False)
