"""The contract every outgoing mail transport fulfils (a transport is a
package judge/transports/NAME/, found through judge/channels.py)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Union

if TYPE_CHECKING:
    from email.message import EmailMessage


# A mail for its recipients' eyes only (a one-time token, a blind game's
# power, a player's own purchase): the outbox writes this header into it
# when it is queued. A transport that shows mail to others than its
# recipients (a forum topic) declares `publishes` and sends such a mail to
# its recipients alone (send_private).
PRIVATE_HEADER = "X-Judge-Private"


def private_header(private: bool) -> dict[str, str] | None:
    """The header that marks a mail private, for compose()'s extra headers."""
    return {PRIVATE_HEADER: "yes"} if private else None


def is_private(msg: EmailMessage) -> bool:
    return str(msg.get(PRIVATE_HEADER) or "").strip().lower() == "yes"


@dataclass(frozen=True)
class OutgoingMail:
    message_id: str
    envelope_from: str
    recipients: tuple[str, ...]
    raw: bytes


class TransportError(Exception):
    """Sending failed. `temporary` tells the outbox whether to retry later
    (connection trouble, 4xx replies) or give up on this mail (5xx replies,
    refused recipients, bad credentials)."""

    # The far side could not be reached at all: the other mails of a batch
    # need not try now either.
    unreachable = False

    def __init__(self, message: str, *, temporary: bool, unconfirmed: bool = False) -> None:
        super().__init__(message)
        self.temporary = temporary
        # The mail may have been accepted: the failure came after the commit
        # point (see Transport.send), so sending it again could send it twice.
        self.unconfirmed = unconfirmed

    def __reduce__(self) -> tuple[object, ...]:  # keep the flags when pickled (e.g. across processes)
        return (_rebuild_transport_error, (str(self), self.temporary, self.unconfirmed))


def _rebuild_transport_error(message: str, temporary: bool, unconfirmed: bool = False) -> TransportError:
    return TransportError(message, temporary=temporary, unconfirmed=unconfirmed)


class ClaimLost(Exception):
    """The outbox no longer holds this mail (its claim lapsed and another
    sender took it over): it must not go out from here. Raised by a commit
    point; the transport abandons the mail before the step after which the
    far side may have it."""


def no_commit_point() -> None:
    """The default commit point: nothing to record."""


# What became of one mail of a batch: None (the far side has it), a
# TransportError, ClaimLost (abandoned, never sent from here), or any other
# exception (a bug met the mail).
Outcome = Union[None, Exception]


class Transport(ABC):
    name: str
    # True: the transport may show a mail to readers other than its
    # recipients (a forum topic). Such a transport must define
    # send_private(), the way a private mail (PRIVATE_HEADER) goes to its
    # recipients alone, and send() must take that way for every mail
    # is_private() finds marked.
    publishes: bool = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.publishes and not callable(getattr(cls, "send_private", None)):
            raise TypeError(f"{cls.__name__} publishes mail: it must say how a private mail goes (send_private)")

    @abstractmethod
    def send(self, mail: OutgoingMail, commit_point: Callable[[], None] = no_commit_point) -> None:
        """Deliver the mail or raise TransportError.

        `commit_point` is called once, just before the step after which the
        far side may have the mail (SMTP: before the final dot): the outbox
        records it, so that after a crash a mail that may have been accepted
        is not sent again blindly. A failure after it raises TransportError
        with unconfirmed=True. If it raises ClaimLost (or anything else),
        the mail is abandoned before that step and the exception goes on.
        Idempotent transports may skip the call."""

    def send_batch(self, mails: Sequence[OutgoingMail],
                   commit: Callable[[Sequence[OutgoingMail]], Collection[str]],
                   done: Callable[[OutgoingMail, Outcome], None]) -> None:
        """Deliver several mails, reporting each one's outcome to `done` as
        soon as it is known (in any order).

        `commit(group)` is the commit point of a group of mails at once:
        called just before the step after which the far side may have them
        (one record for the group, instead of one per mail), it returns the
        Message-IDs that may go on; a mail not among them is abandoned
        before that step and reported as ClaimLost. If it raises, the whole
        group is abandoned (a TransportError each, temporary). The default
        sends one mail at a time with send(), each its own group."""
        for mail in mails:
            def point(mail: OutgoingMail = mail) -> None:
                if mail.message_id not in commit([mail]):
                    raise ClaimLost(mail.message_id)

            try:
                self.send(mail, point)
            except Exception as outcome:  # TransportError, ClaimLost, or a bug: the outbox tells them apart
                done(mail, outcome)
                continue
            done(mail, None)

    def describe(self) -> str:
        """How the transport sends, for the daemon's start-up lines (never a
        password)."""
        return self.name

    def close(self) -> None:
        """Release connections; the default has none."""
