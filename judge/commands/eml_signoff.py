"""SIGNOFF: the end of the commands; the rest of the mail is not read."""

from __future__ import annotations

from judge.commands.base import Context, handles
from judge.syntax import nodes


@handles(nodes.Signoff)
def signoff(ctx: Context, node: nodes.Signoff) -> str:
    ctx.stop = True
    return "signed off; the rest of the mail is ignored"
