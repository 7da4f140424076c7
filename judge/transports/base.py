"""The contract every outgoing mail transport fulfils."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable


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


def no_commit_point() -> None:
    """The default commit point: nothing to record."""


class Transport(ABC):
    name: str

    @abstractmethod
    def send(self, mail: OutgoingMail, commit_point: Callable[[], None] = no_commit_point) -> None:
        """Deliver the mail or raise TransportError.

        `commit_point` is called once, just before the step after which the
        far side may have the mail (SMTP: before the final dot): the outbox
        records it, so that after a crash a mail that may have been accepted
        is not sent again blindly. A failure after it raises TransportError
        with unconfirmed=True. Idempotent transports may skip the call."""

    def close(self) -> None:
        """Release connections; the default has none."""
