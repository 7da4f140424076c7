"""The countdown's pure hooks (judge.methods.interface.LiveCapability): WAIT
hours sets its timer, the tick records that it fired."""

from __future__ import annotations

from datetime import datetime, timedelta

from judge.methods.api import Actor, GameView, Outcome, done, rejected

def claims(line: str) -> bool:
    words = line.split()
    return bool(words) and words[0].upper() == "WAIT"


def command(game: GameView, actor: Actor, number: int, line: str, at: datetime, scratch: dict) -> Outcome:
    words = line.split()
    if len(words) != 2 or not words[1].isdigit():
        return rejected("WAIT takes a number of hours")
    by = game.gm_address if actor.master else actor.player.address
    return done(f"the countdown of ?{game.name} runs out in {words[1]} hours",
                method_state={"fired": [], **(game.method_state or {}), "set_by": by},
                next_tick=at + timedelta(hours=int(words[1])))


def tick(game: GameView, now: datetime, at: datetime) -> Outcome:
    state = dict(game.method_state)
    # The timer is not set again: a tick that does not move it is not fired twice.
    return Outcome(method_state={**state, "fired": [*state["fired"], {"at": at.isoformat(), "now": now.isoformat()}]},
                   next_tick=None, log=f"{game.name}: the countdown ran out")
