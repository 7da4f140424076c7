"""The contract every outgoing mail transport fulfils."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass


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

    def __init__(self, message: str, *, temporary: bool) -> None:
        super().__init__(message)
        self.temporary = temporary

    def __reduce__(self) -> tuple[object, ...]:  # keep `temporary` when pickled (e.g. across processes)
        return (_rebuild_transport_error, (str(self), self.temporary))


def _rebuild_transport_error(message: str, temporary: bool) -> TransportError:
    return TransportError(message, temporary=temporary)


class Transport(ABC):
    name: str

    @abstractmethod
    def send(self, mail: OutgoingMail) -> None:
        """Deliver the mail or raise TransportError."""

    def close(self) -> None:
        """Release connections; the default has none."""
