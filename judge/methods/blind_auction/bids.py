"""A mail's bid lines, checked as one list when its commands end, and what
the reply says of them (the Blind Auction's `bidding` capability:
judge.methods.interface.Bidding). The mail runner gathers the lines and
records the outcome; the words and the rules are here."""

from __future__ import annotations

from typing import Any

from judge.commands.base import BidLines, CommandRejected, Context
from judge.deadlines import format_time
from judge.games import add_submission, counting_submission, game_params, power_list, replay_refusal
from judge.methods.blind_auction import window
from judge.methods.blind_auction.submission import SubmissionParts, check
from judge.wording import plural


def take(ctx: Context, lines: BidLines, text: str) -> tuple[str, str, list[str]]:
    """Store the list of the signed-on player (valid or not): ("done" or
    "rejected", the reply's line, its notes); CommandRejected if the list
    cannot be taken now (the window is closed, an older mail)."""
    player = ctx.require_player()
    game = ctx.require_game()
    closed = window.refusal(ctx.session, game, player, ctx.now)
    if closed:
        raise CommandRejected(closed)
    standing = counting_submission(ctx.session, game, player)
    refusal = replay_refusal(standing, ctx.sent_at)
    if refusal:
        raise CommandRejected(refusal)
    parts = SubmissionParts(entries=list(lines.entries), no_preference_lines=list(lines.no_preference_lines),
                            readings=list(lines.readings))
    powers, params = power_list(game), game_params(game)
    checked = check(parts, powers, params)
    add_submission(ctx.session, game_id=game.id, player_id=player.id, inbound_id=ctx.inbound.id, received_at=ctx.now,
                   submitted_at=ctx.sent_at, text=text, valid=checked.ok,
                   bids=checked.bids.as_json() if checked.ok and checked.bids else None,
                   violations=[v.as_dict() for v in checked.violations])
    until = f"You may change it {window.until(game)}."
    status = "done"
    notes: list[str] = []
    if checked.ok and checked.bids.no_preference:
        message = f"No Preference accepted: you bid D = {params.D} on every power. {until}"
    elif checked.ok:
        total = sum(checked.bids.bids.values())
        listed = ", ".join(f"{k} {v}" for k, v in checked.bids.bids.items())
        replaced = (f" It replaces your list of {format_time(standing.received_at)}."
                    if standing else "")
        message = f"bid list accepted: {listed} (total {total} of T = {params.T}).{replaced} {until}"
        if total < params.T:
            # Allowed, but the rules advise against it: the points left are lost.
            notes.append(f"your bids add up to {total}, {params.T - total} under T = {params.T}: allowed, but "
                         f"not recommended (the rules): {params.T - total} points that could have backed "
                         "your favourites go unused")
    else:
        status = "rejected"
        notes = [v.message for v in checked.violations]
        if standing is not None:
            stands = (f"Nothing changed: your list of {format_time(standing.received_at)} still stands. "
                      f"Send a corrected list {window.before(game)} to change it.")
        else:
            stands = (f"Unless you send a valid list {window.before(game)}, you bid No Preference "
                      f"(D = {params.D} on every power).")
        message = f"bid list rejected, for {plural(len(checked.violations), 'reason')}. {stands}"
    return status, message, notes + [f"as posted: {r}" for r in parts.readings]


def late(session: Any, game: Any, player: Any) -> bool:
    """A player named after the deadline, who may bid until the master's PROCESS."""
    return window.late(session, game, player)


def stand(session: Any, game: Any, player: Any) -> bool:
    """Whether the player's bids, sent before the first deadline closed them
    in, stand through a new deadline (SET DEADLINE's mail says so)."""
    closed = window.closed_at(game)
    return (closed is not None and window.sent_before(session, game, player, closed)
            and not (player.joined_at and player.joined_at >= closed))
