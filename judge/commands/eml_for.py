"""FOR player: the lines that follow are that player's submission, as the
master copies it from a forum post (phpBB has no API to read it from).

FOR enters a list, nothing else: bids, NO PREFERENCE and SET PREFERENCE.
SET PASSWORD and ENTROPY refuse it themselves (eml_set.py, eml_entropy.py).
Each player named by FOR is mailed, once the mail has run, the lines
entered in their name and what came of each (the mail runner collects them
in ctx.entered), so a master cannot act for a player unseen.
"""

from __future__ import annotations

from judge import audit
from judge.commands.base import Context, handles
from judge.commands.eml_eject import OPEN_STATES, named_player
from judge.games import notify
from judge.syntax import nodes


@handles(nodes.OnBehalf)
def on_behalf(ctx: Context, node: nodes.OnBehalf) -> str:
    if ctx.acting_master:
        ctx.role = "master"  # FOR after FOR: the master moves on to the next player
    game = ctx.require_master_in(OPEN_STATES, "submissions can only be entered before the game is resolved")
    player = named_player(ctx, game, node.player)
    ctx.player, ctx.role, ctx.acting_master = player, "player", True
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=player.address, new="submission entered by the master")
    if not ctx.entered:  # the mail's first FOR: tell the players once its lines have run
        ctx.after.append(lambda: _tell_players(ctx))
    ctx.entered.setdefault(player.id, (game, player, []))
    return (f"the lines that follow count as {player.name} <{player.address}>'s, until the next SIGNON, FOR "
            f"or SIGNOFF (the master's commands are off until then); they will be mailed to the player")


def _tell_players(ctx: Context) -> None:
    """After the mail's last line: one notice to each player named by FOR,
    with the lines entered for them and their outcomes."""
    for game, player, entries in ctx.entered.values():
        if entries:
            notify(ctx.session, ctx.config, ctx.now, "player/entered_for_you.txt.j2", [player.address],
                   game=game, player=player, entries=sorted(entries, key=lambda e: e["line"]))
