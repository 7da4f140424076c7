"""Where outgoing mail goes: a Transport delivers one composed mail or raises
TransportError saying whether trying again later can help."""

from judge.transports.base import OutgoingMail, Transport, TransportError

__all__ = ["OutgoingMail", "Transport", "TransportError"]
