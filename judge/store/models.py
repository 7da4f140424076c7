"""Tables of the judge.

Inbound mail is stored raw before anything reads it; outbound mail is an
outbox row before any transport touches it; every step of a game leaves an
event, so `judge log GAME` can retell it in time order.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class UTCDateTime(TypeDecorator):
    """Timezone-aware UTC datetimes on every backend (SQLite keeps none)."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; use the clock's aware times")
        return value.astimezone(timezone.utc).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=timezone.utc)


NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class InboundMessage(Base):
    __tablename__ = "inbound_messages"

    id: Mapped[int] = mapped_column(primary_key=True)
    source: Mapped[str] = mapped_column(String(200))
    message_id: Mapped[str] = mapped_column(String(998))
    # Message-IDs are unique per sender (the From addresses as the header
    # says them): a stranger who sends a known Message-ID first cannot make
    # the judge drop the real mail as a duplicate (docs/security.md).
    from_key: Mapped[str] = mapped_column(String(320), default="")
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)
    sender: Mapped[str | None] = mapped_column(String(320))
    subject: Mapped[str | None] = mapped_column(Text)
    # new -> done | ignored (no reply due: auto-reply, bounce...) | quarantined (kept, not processed)
    status: Mapped[str] = mapped_column(String(20), default="new", index=True)
    reason: Mapped[str | None] = mapped_column(Text)
    processed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The mail carried a password valid for a game (its SIGNON): the flood
    # cap counts such mails apart, so forged mail cannot lock a player out.
    authenticated: Mapped[bool] = mapped_column(Boolean, default=False)
    # The raw bytes were replaced by the masked text after the retention
    # period ([limits] raw_mail_retention_days).
    scrubbed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The size the mail had at the source when only its header was kept
    # (over [limits] max_message_bytes); None when the whole mail is stored.
    oversize: Mapped[int | None] = mapped_column(BigInteger)

    # The flood cap counts a sender's mails of the last hour (migration 0006).
    __table_args__ = (Index("ix_inbound_messages_sender_processed_at", "sender", "processed_at"),
                      UniqueConstraint("message_id", "from_key", name="uq_inbound_messages_message_id_from_key"))


class OutboxMessage(Base):
    __tablename__ = "outbox"

    id: Mapped[int] = mapped_column(primary_key=True)
    message_id: Mapped[str] = mapped_column(String(998), unique=True)
    envelope_from: Mapped[str] = mapped_column(String(320))
    recipients: Mapped[list[str]] = mapped_column(JSON)
    subject: Mapped[str] = mapped_column(Text)
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    kind: Mapped[str] = mapped_column(String(40))  # reply, result, notice...
    # queued -> sending -> (data_sent) -> sent, or back to queued (retry
    # later), or failed, or unconfirmed (the server may have it: judge/outbox.py)
    status: Mapped[str] = mapped_column(String(20), default="queued", index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id"), index=True)
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound_messages.id"), index=True)
    # The process that claimed the row to send it (judge/outbox_claims.py)
    # and until when its claim holds unless renewed.
    owner: Mapped[str | None] = mapped_column(String(200))
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # When the moderators were last told that this mail's fate is unknown.
    notified_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Game(Base):
    __tablename__ = "games"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    method: Mapped[str] = mapped_column(String(40))
    variant: Mapped[str] = mapped_column(String(100))
    powers: Mapped[list[Any]] = mapped_column(JSON)  # [{"name", "letter"}], fixed at CREATE/SET VARIANT
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    # forming -> bidding -> (waiting: deadline passed, players missing) -> resolved;
    # stuck: a bug met the game's work (error kept; `judge unstick` resumes it)
    state: Mapped[str] = mapped_column(String(20), default="forming")
    deadline: Mapped[datetime | None] = mapped_column(UTCDateTime)
    gm_address: Mapped[str] = mapped_column(String(320))
    gm_password: Mapped[str] = mapped_column(String(200))  # a hash (judge.passwords)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    missing_notified_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # A Blind Auction whose deadline passed and whose master set a new one:
    # when the first deadline closed the bids in. The bids in by then stand;
    # the new deadline is for the players whose bids were not in
    # (judge/methods/blind_auction/window.py, migration 0015).
    bids_closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Commit and reveal (judge.commitment): the secret stays here until the
    # results reveal it; the commitment is mailed to every player.
    secret_seed: Mapped[str | None] = mapped_column(String(128))
    commitment: Mapped[str | None] = mapped_column(String(64))
    # A stuck game: the error, and the state it had (judge.failures).
    error: Mapped[str | None] = mapped_column(Text)
    stuck_from: Mapped[str | None] = mapped_column(String(20))
    # Wrong master passwords in a row, the back-off, the lock (judge.lockout).
    gm_failures: Mapped[int] = mapped_column(Integer, default=0)
    gm_backoff_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    gm_locked: Mapped[bool] = mapped_column(Boolean, default=False)
    # SET MANUAL START: a preference game waits for START instead of starting
    # by itself when its last player signs on (nJudge's default).
    manual_start: Mapped[bool] = mapped_column(Boolean, default=False)
    # A method with a state of its own (judge.methods.interface): the state,
    # as the method writes it, and the next time it wants a tick (the
    # scheduler fires it with this time, also after a restart).
    method_state: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    next_tick: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)

    # Work asked by mail and done as a job of its own under the game's lock
    # (judge.scheduler.handle_job): "start" (the master's START), "autostart"
    # (the last player joined), "process" (the master's PROCESS); None when
    # nothing waits. A heavy draw then holds up no mail (migration 0017).
    job: Mapped[str | None] = mapped_column(String(20))
    # Raised by every write of the row (SQLAlchemy's version counter): an
    # UPDATE names the version it read and fails (StaleDataError) if another
    # process wrote the row since, so a stale state is never written over a
    # newer one; the game driver redoes the work from the fresh row
    # (judge/driver/, migration 0012).
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")

    players: Mapped[list[Player]] = relationship(back_populates="game", order_by="Player.id")

    __mapper_args__ = {"version_id_col": version}


class Player(Base):
    __tablename__ = "players"
    __table_args__ = (UniqueConstraint("game_id", "address"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), index=True)
    address: Mapped[str] = mapped_column(String(320))
    name: Mapped[str] = mapped_column(String(200))
    password: Mapped[str | None] = mapped_column(String(200))  # hash; None until a replacement signs on
    # active | ejected | replaced; observer (SIGNON Ogame: public mail only,
    # never a seat); takeover (SIGNON Xgame: asks for power X, in `power`,
    # until the master's REPLACE makes it active or EJECT drops it)
    status: Mapped[str] = mapped_column(String(20), default="active")
    gm_no_preference: Mapped[bool] = mapped_column(Boolean, default=False)
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime)
    power: Mapped[str | None] = mapped_column(String(100))
    # Wrong passwords in a row, the back-off, the lock (judge.lockout).
    failures: Mapped[int] = mapped_column(Integer, default=0)
    backoff_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    locked: Mapped[bool] = mapped_column(Boolean, default=False)
    # The password is the one-time token mailed to a replacement: the first
    # SIGNON with it spends it (judge/commands/eml_signon.py).
    password_is_token: Mapped[bool] = mapped_column(Boolean, default=False)

    game: Mapped[Game] = relationship(back_populates="players")


class Submission(Base):
    __tablename__ = "submissions"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), index=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), index=True)
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound_messages.id"))
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # When the player sent it: the mail's Date (never later than its
    # storing), else the time it was stored. An older mail never replaces a
    # newer one (a replayed mail cannot revert a later list).
    submitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    text: Mapped[str] = mapped_column(Text)
    valid: Mapped[bool] = mapped_column(Boolean)
    bids: Mapped[dict[str, int] | None] = mapped_column(JSON)  # None: No Preference (or invalid)
    violations: Mapped[list[Any]] = mapped_column(JSON, default=list)


class Entropy(Base):
    """An ENTROPY line of a player: mixed into the resolution's seed."""

    __tablename__ = "entropy"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), index=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound_messages.id"))
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)
    text: Mapped[str] = mapped_column(Text)


class Resolution(Base):
    __tablename__ = "resolutions"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), index=True)
    method: Mapped[str] = mapped_column(String(40))
    seed: Mapped[str] = mapped_column(String(200))
    input: Mapped[dict[str, Any]] = mapped_column(JSON)  # replayable with `judge resolve`
    result: Mapped[dict[str, Any]] = mapped_column(JSON)
    # What the results reveal: {"secret", "commitment", "entropy"} (judge.commitment)
    reveal: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Event(Base):
    __tablename__ = "events"

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id"), index=True)
    # inbound, command, outbound, draw, state, resolution, notice
    kind: Mapped[str] = mapped_column(String(20))
    inbound_id: Mapped[int | None] = mapped_column(ForeignKey("inbound_messages.id"))
    outbox_id: Mapped[int | None] = mapped_column(ForeignKey("outbox.id"))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


class SourceState(Base):
    """Where an inbound source stands: for IMAP the folder, its UIDVALIDITY
    and the highest UID stored (judge.sources.watermark)."""

    __tablename__ = "source_state"

    source: Mapped[str] = mapped_column(String(200), primary_key=True)
    mailbox: Mapped[str] = mapped_column(String(1000))
    # UIDs and UIDVALIDITY are unsigned 32-bit numbers: too big for a signed INTEGER.
    uidvalidity: Mapped[int] = mapped_column(BigInteger)
    last_uid: Mapped[int] = mapped_column(BigInteger, default=0)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # The source's last failure (judge.sources.watermark.note_error), for
    # the web console; a row made by a failure alone has uidvalidity 0 (no
    # watermark yet: a real UIDVALIDITY is never 0, RFC 3501).
    last_error: Mapped[str | None] = mapped_column(Text)
    last_error_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Moderator(Base):
    """An account of the web console (judge/web/auth.py); the password is a
    hash (judge.passwords), as the players'."""

    __tablename__ = "moderators"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    password: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class LoginFailure(Base):
    """A failed (or not yet checked) login to the web console from a client
    address (judge/web/auth.py, LoginLimiter): kept in the store, so every
    web process counts the same failures and a restart forgets none. Rows
    older than the limit's window are pruned when a new one is written."""

    __tablename__ = "login_failures"

    id: Mapped[int] = mapped_column(primary_key=True)
    address: Mapped[str] = mapped_column(String(100))
    # The account tried, as a hash of its name (never the name: a password
    # typed into the name field would be kept); "" when none was counted
    # (migration 0014).
    account: Mapped[str] = mapped_column(String(64), default="", server_default="")
    failed_at: Mapped[datetime] = mapped_column(UTCDateTime)

    # The limits count an address's and an account's failures of the last
    # window; the pruning deletes by time alone (migrations 0011, 0014).
    __table_args__ = (Index("ix_login_failures_address_failed_at", "address", "failed_at"),
                      Index("ix_login_failures_account_failed_at", "account", "failed_at"),
                      Index("ix_login_failures_failed_at", "failed_at"))


class WebSession(Base):
    """A moderator's open session of the web console (judge/web/auth.py):
    the cookie carries a token, the store its hash. Logging out deletes the
    row, so a copy of the cookie is no session after it; so does deleting
    the account (migration 0014)."""

    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    moderator_id: Mapped[int] = mapped_column(ForeignKey("moderators.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
