"""A transport made of routes: each mail's recipients go to the first
route that takes them (judge/app.py puts a forum's transport in front of
the mail transport when the configuration has a [forum])."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from judge.transports.base import OutgoingMail, Transport, TransportError, no_commit_point


class CompositeTransport(Transport):
    """Routes each mail's recipients to the first route that takes them."""

    def __init__(self, routes: Sequence[Transport]) -> None:
        if not routes:
            raise ValueError("CompositeTransport needs at least one route")
        self.routes = list(routes)
        self.name = "composite:" + ",".join(t.name for t in self.routes)

    def send(self, mail: OutgoingMail, commit_point: Callable[[], None] = no_commit_point) -> None:
        left = list(mail.recipients)
        for transport in self.routes:
            if not left:
                break
            chooser = getattr(transport, "route", None)
            part = replace(mail, recipients=tuple(left))
            taken = list(chooser(part)) if chooser is not None else list(left)
            if not taken:
                continue
            transport.send(replace(mail, recipients=tuple(taken)), commit_point)
            taken_lower = {t.lower() for t in taken}
            left = [r for r in left if r.lower() not in taken_lower]
        if left:
            raise TransportError(f"no transport for {', '.join(left)}", temporary=False)

    def describe(self) -> str:
        return ", then ".join(route.describe() for route in self.routes)

    def close(self) -> None:
        for transport in self.routes:
            transport.close()
