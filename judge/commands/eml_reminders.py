"""SET REMINDERS: when the players who have sent nothing are reminded
before the deadline (judge/reminders.py; the judge's default is the
configuration's reminder_hours)."""

from __future__ import annotations

from judge import audit
from judge.commands.base import CommandRejected, Context, handles
from judge.methods import method_of
from judge.methods.interface import reminders_of
from judge.reminders import ReminderError, describe, game_hours, parse_hours
from judge.syntax import nodes


@handles(nodes.SetReminders)
def set_reminders(ctx: Context, node: nodes.SetReminders) -> str:
    game = ctx.require_master_in(("forming", "bidding", "waiting"), "reminders can only change before the result")
    try:
        hours = parse_hours(node.text)
    except ReminderError as err:
        raise CommandRejected(str(err)) from err
    params = {k: v for k, v in game.params.items() if k != "reminders"}
    if hours is not None:
        params["reminders"] = list(hours)
    game.params = params
    shown = describe(game_hours(params, ctx.config.reminder_hours))
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id, reminders=shown)
    default = " (the judge's default)" if hours is None else ""
    if reminders_of(method_of(game)) is None:
        return (f"reminders of ?{game.name}: {shown}{default}; a random game's players have nothing to send, "
                f"so nobody is reminded")
    return f"reminders of ?{game.name}: {shown}{default}"
