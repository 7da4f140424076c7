"""FOR player: the lines that follow are that player's submission, as the
master copies it from a forum post (phpBB has no API to read it from).

FOR enters a list, nothing else: bids, NO PREFERENCE and SET PREFERENCE.
SET PASSWORD and ENTROPY refuse it themselves (eml_set.py, eml_entropy.py).
Each player named by FOR is mailed, once the mail has run, the lines
entered in their name and what came of each, so a master cannot act for a
player unseen.
"""

from __future__ import annotations

import re

from sqlalchemy import select

from judge import audit
from judge.commands.base import Context, handles
from judge.commands.eml_eject import OPEN_STATES, named_player
from judge.games import notify
from judge.store.models import Event, Game, Player
from judge.syntax import CommandSyntaxError, nodes, parse_line


@handles(nodes.OnBehalf)
def on_behalf(ctx: Context, node: nodes.OnBehalf) -> str:
    if ctx.acting_master:
        ctx.role = "master"  # FOR after FOR: the master moves on to the next player
    game = ctx.require_master_in(OPEN_STATES, "submissions can only be entered before the game is resolved")
    player = named_player(ctx, game, node.player)
    ctx.player, ctx.role, ctx.acting_master = player, "player", True
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=player.address, new="submission entered by the master")
    _notices(ctx).add(game, player, node.line)
    return (f"the lines that follow count as {player.name} <{player.address}>'s, until the next SIGNON, FOR "
            f"or SIGNOFF (the master's commands are off until then); they will be mailed to the player")


def _notices(ctx: Context) -> _Notices:
    """The mail's one _Notices, queued in ctx.after at its first FOR."""
    for work in ctx.after:
        if isinstance(work, _Notices):
            return work
    notices = _Notices(ctx)
    ctx.after.append(notices)
    return notices


# The commands that end what a FOR covers (as in judge.mailrunner.run_lines).
_ENDS = (nodes.Signon, nodes.Create, nodes.Signoff, nodes.OnBehalf)
_MAY_END = re.compile(r"\s*(signon|create|signoff|for)\b", re.I)


class _Notices:
    """Run after the mail's last line: one notice to each player named by
    FOR, with the lines entered for them and their outcomes. The outcomes
    are the mail's audit events (judge.mailrunner records every line's)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.players: dict[int, tuple[Game, Player, list[int]]] = {}

    def add(self, game: Game, player: Player, line: int) -> None:
        self.players.setdefault(player.id, (game, player, []))[2].append(line)

    def __call__(self) -> None:
        ctx = self.ctx
        audit.write_pending(ctx.session)  # this mail's events so far, to read them back
        events = [e.data for e in ctx.session.scalars(
            select(Event).where(Event.inbound_id == ctx.inbound.id, Event.kind == "command").order_by(Event.id))]
        ends = self._ends()
        for game, player, starts in self.players.values():
            entries = []
            for start in starts:
                end = min((n for n in ends if n > start), default=None)
                entries += [e for e in events if e["line"] > start and (end is None or e["line"] < end)]
            if entries:
                notify(ctx.session, ctx.config, ctx.now, "player/entered_for_you.txt.j2", [player.address],
                       game=game, player=player, entries=sorted(entries, key=lambda e: e["line"]))

    def _ends(self) -> list[int]:
        """The numbers of the mail's lines that end a FOR's reach."""
        ends = []
        for number, line in enumerate(self.ctx.mail.text.split("\n"), 1):
            if line.rstrip() in ("--", "-- "):
                ends.append(number)  # a signature: nothing after it is read
                break
            if not _MAY_END.match(line):
                continue
            try:
                node = parse_line(line, number)
            except CommandSyntaxError:
                continue
            if isinstance(node, _ENDS):
                ends.append(number)
        return ends
