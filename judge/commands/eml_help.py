"""HELP: the commands, with examples."""

from __future__ import annotations

from judge.commands.base import Context, handles
from judge.syntax import nodes
from judge.templating import render


@handles(nodes.Help)
def help_(ctx: Context, node: nodes.Help) -> str:
    return render("help.txt.j2", judge_address=ctx.config.address).rstrip()
