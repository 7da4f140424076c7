"""SET NOTICES EACH | DAILY (the master): while the game forms, a mail for
each player who joins and each preference list that comes (nJudge's habit,
the default), or one digest a day (judge/notices.py)."""

from __future__ import annotations

from judge import audit, notices
from judge.commands.base import CommandRejected, Context, handles
from judge.methods import method_of
from judge.syntax import nodes


@handles(nodes.SetNotices)
def set_notices(ctx: Context, node: nodes.SetNotices) -> str:
    game = ctx.require_master_in(("forming",), "the notices of a game are those of its forming")
    if method_of(game).LIVE_GAME is not None:
        raise CommandRejected(f"?{game.name} uses {game.method}, which mails its master as it goes")
    was_daily = notices.daily(game)
    game.params = {**game.params, "notices": node.mode}
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id, notices=node.mode)
    if node.mode == "daily":
        if not was_daily:
            notices.mark(ctx.session, ctx.now, game, "SET NOTICES DAILY")
        return (f"?{game.name}: while it forms, you get one mail a day with who joined and the lists that came "
                "(the last player's joining, and the start, at once)")
    sent = ""
    if was_daily and game.next_tick is not None:
        # What waited for the digest is not lost: it goes now.
        ctx.after.append(lambda: notices.send_digest(ctx.session, ctx.config, ctx.now, game))
        sent = "; what waited for the digest is mailed to you now"
    return f"?{game.name}: a mail for each player who joins and each list that comes{sent}"
