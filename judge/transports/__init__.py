"""Where outgoing mail goes: a Transport delivers one composed mail or raises
TransportError saying whether trying again later can help."""

from judge.transports.base import ClaimLost, OutgoingMail, Transport, TransportError

__all__ = ["ClaimLost", "OutgoingMail", "Transport", "TransportError"]
