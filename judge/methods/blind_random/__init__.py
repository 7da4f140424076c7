"""Blind random (docs/blinding.md): powers drawn by a blinding protocol run
by mail between the players, a third party and the judge, so that nobody
learns who plays which power. No `judge resolve`: `judge verify` re-runs the
judge's side from a record.

The whole method is this folder:

- the protocol, pure: blinding.py names its parts (digits.py, shared.py,
  records.py, gm_side.py, third_party.py); engine.py, the method's settings,
  the seed's draws and the replay `judge verify` runs;
- by mail: runs.py (the protocol's runs in the store, models.py, and the
  mails they send, templates/blind_random/), eml_blinding.py (its
  commands), syntax.py (their nodes; grammar grammars/blind_random.lark);
- other_judges.py: what the shell asks of the protocol between judges;
- cli.py: `judge blind` (the players' side) and `judge thirdparty` (the
  operator of a third-party judge).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

from judge.methods.interface import (AssignmentCapability, MailContext, Method, ProtocolCapability, Reminders)

if TYPE_CHECKING:
    from datetime import datetime

    from sqlalchemy.orm import Session

    from judge.config import Config
    from judge.store.models import Game, Player


class _Blinding(AssignmentCapability):
    """Powers drawn by the protocol: its reminders, LIST and roster changes."""

    def not_in_yet(self, session: Session, game: Game) -> list[tuple[Player, dict]] | None:
        """The players the protocol waits for, each with what their reminder says."""
        from judge.methods.blind_random import runs

        run = runs.gm_run(session, game)
        if run is None:
            return []
        step, players = runs.awaited(run)
        waiting = set(players)
        third_party = run.third_party
        return [(p, {"step": step, "third_party": third_party})
                for p in game.players if p.status == "active" and p.address in waiting]

    def roster_changed(self, ctx: MailContext, game: Game, old: Player | None = None,
                       new: Player | None = None) -> str:
        from judge.methods.blind_random.eml_blinding import roster_changed

        return roster_changed(ctx, game)

    def list_view(self, ctx: MailContext, game: Game, master: bool) -> dict | None:
        from judge.methods.blind_random.eml_blinding import list_view

        return list_view(ctx, game, master)


class _OtherJudges(ProtocolCapability):
    """The protocol with the third party's judge runs the game's life cycle:
    START sends the blinded powers, the deadline only tells the master."""

    def begin(self, session: Session, config: Config, now: datetime, game: Game) -> str | None:
        from judge.commands.eml_start import tell_observers
        from judge.deadlines import format_time
        from judge.games import deadline_ahead, set_state
        from judge.methods.blind_random import runs

        set_state(session, game, "bidding", now)
        game.started_at = now
        deadline_ahead(config, game, now)
        runs.start_round(session, config, now, game)
        tell_observers(session, config, now, game)
        return (f"?{game.name} started: each player was sent a blinded power message and a one-time token; the "
                f"third party {game.params['third_party']} takes it from here. Deadline: "
                f"{format_time(game.deadline)}")

    def at_deadline(self, session: Session, config: Config, now: datetime, game: Game) -> str | None:
        # The blinding protocol runs by mail between the players, the third
        # party and this judge: there is nothing to resolve at a deadline.
        # The master learns that it has not finished (once: the game waits).
        from judge.games import notify, set_state
        from judge.methods.blind_random import runs

        set_state(session, game, "waiting", now)
        game.missing_notified_at = now
        step, waiting = runs.game_status(session, game)
        notify(session, config, now, f"{runs.TEMPLATES}/master_deadline.txt.j2", [game.gm_address], game=game,
               third_party=game.params.get("third_party"), step=step, waiting=waiting)
        return f"{game.name}: the blinding protocol is still running"

    def daily_notice(self, session: Session, config: Config, now: datetime, game: Game) -> str:
        from judge.games import notify
        from judge.methods.blind_random import runs

        step, waiting = runs.game_status(session, game)
        notify(session, config, now, f"{runs.TEMPLATES}/master_waiting.txt.j2", [game.gm_address], game=game, step=step,
               waiting=waiting)
        return f"{game.name}: the master was told whom the blinding protocol waits for"


class BlindRandom(Method):
    NAME = "blind-random"
    HELP_ALIASES = ("blinding",)
    ENGINE = "judge.methods.blind_random.engine"
    COMMANDS = ("judge.methods.blind_random.eml_blinding",)
    GRAMMAR = "blind_random.lark"
    SYNTAX = "judge.methods.blind_random.syntax"
    COMMAND_WORDS = ("blinded", "blind", "blindlist", "blinds", "thirdparty", "listreceived", "blindsin",
                     "finalsent", "claim", "waiting", "trace", "traced", "rerun", "closeround")
    CLI = MappingProxyType({"blind": "judge.methods.blind_random.cli:blind",
                            "thirdparty": "judge.methods.blind_random.cli:thirdparty"})
    MODELS = "judge.methods.blind_random.models"
    ASSIGNMENT = _Blinding(reminders=Reminders("bidding", "blind_random/reminder.txt.j2"),
                           kept_by_variant=("third_party",))  # the third party does not depend on the powers
    # The third party's protocol with other judges; its master hears once a
    # day whom the protocol waits for.
    THIRD_PARTIES = _OtherJudges("judge.methods.blind_random.other_judges", notices_daily=True,
                                 restart_hint=" To run the blinding protocol again as a fresh round, send RERUN")
    BLIND = True  # the web shows no power beside a player, nor the record

    def describe_params(self, params: Mapping[str, Any], U: int) -> str:
        return f"blinding protocol, third party {params.get('third_party') or '(not set: SET THIRDPARTY)'}"

    def replay(self, data: dict[str, Any], seed: bytes) -> dict[str, Any]:
        return self.engine().replay(data, seed)  # the blinding protocol's GM side

    def refusal(self, command: str, game: Game) -> str | None:
        if command == "PROCESS":
            return (f"?{game.name} is assigned by the blinding protocol, which ends by itself when the "
                    f"third party publishes the blinds: there is nothing to process. LIST ?{game.name} "
                    "shows whom it waits for; RERUN starts a fresh round")
        if command == "TAKEOVER":
            return (f"?{game.name} is a blind game: the judge never says who plays which power, and "
                    f"takes over no power by its letter. Write to its master ({game.gm_address}), who "
                    f"can REPLACE a player")
        return None


METHOD = BlindRandom()
