"""What a method package gives the shell (docs/architecture.md).

A method is a package `judge/methods/NAME/` whose `__init__.py` holds one
`Method` (module attribute `METHOD`), listed by one line in
judge/methods/registry.py. The shell (store, mail runner, commands,
scheduler, outbox, CLI) asks that object, never the method's name: the
contract lives here, each package fills in only what differs.

The package's other modules are its own: a pure engine (no I/O, no clock,
no randomness but the DrawStream or clock it is given: state + command ->
new state and events, state + tick -> new state and events, and the next
time it wants a tick), the offline replay that `judge resolve` and `judge
verify` run, and its mail commands. The `__init__.py` must stay light: it
imports its engine lazily, so that a mail or a `judge resolve` loads only
the method it uses (tests/test_startup.py).

Storage is the same for every method: the game row (`games.params`, JSON,
holds the method's settings; `games.method_state`, JSON, the state of a
method that keeps one, as it writes it), the `submissions` table (each
player's mailed text, in the order stored: the log a replay reads), the
`resolutions` table (the replay's input, seed and JSON record) and the audit
trail (`events`: every line's outcome, and the method's events). Timers are
rows the scheduler fires: the game's deadline (`games.deadline`, the shell's
life cycle below) and the method's own next tick (`games.next_tick`, which
the method sets from its engine's next_tick after each command and tick;
the scheduler calls `tick` with that time, not the time it runs, so a timer
that ran out while the daemon was down fires with its own time).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

if TYPE_CHECKING:  # the shell's types, for the hooks' signatures only
    from datetime import datetime

    from sqlalchemy.orm import Session

    from judge.config import Config
    from judge.store.models import Game, Player, Submission


class MailContext(Protocol):
    """What the shell hands a method's hook for a line of a mail (the mail
    runner's judge.commands.base.Context): the transaction, the time, the
    sender and, after SIGNON, the game and the player; `after` holds work
    to do once the mail's lines have run, in the same transaction."""

    session: Session
    config: Config
    now: datetime
    game: Game | None
    player: Player | None
    role: str | None
    acting_master: bool
    after: list[Callable[[], None]]

    @property
    def sender(self) -> str: ...

    @property
    def sent_at(self) -> datetime: ...

    def require_player(self) -> Player: ...

    def require_game(self) -> Game: ...


class GatheredBids(Protocol):
    """A mail's bid lines as the mail runner gathered them (judge.commands.base.BidLines)."""

    entries: list[Any]  # the grammar's bid entries (power, amount)
    no_preference_lines: list[int]
    readings: list[str]  # how lines posted the forums' way were read


class Bidding(Protocol):
    """What the shell asks of a method whose players send bid lines (its
    ASSIGNMENT.bidding module): the mail runner gathers a mail's bid lines and its
    sender's No Preference and hands them over when the mail's commands end."""

    def take(self, ctx: MailContext, lines: GatheredBids, text: str) -> tuple[str, str, list[str]]:
        """Store the signed-on player's list: ("done" or "rejected", the
        reply's line, its notes); CommandRejected if none is taken now."""

    def late(self, session: Session, game: Game, player: Player) -> bool:
        """A player named after the deadline who may still bid (PROCESS, LIST)."""

    def stand(self, session: Session, game: Game, player: Player) -> bool:
        """The player's bids stand through a new deadline (SET DEADLINE)."""


class Lists(Protocol):
    """What the shell asks of a method whose players' lists it stores (its
    LISTS module)."""

    def pasted_line(self, ctx: MailContext, line: str) -> bool:
        """A line the master pasted after FOR that belongs to a list."""

    def enter_pasted(self, ctx: MailContext, lines: list[tuple[int, str]]) -> tuple[str, str]:
        """Those lines as one list in the player's name: (status, message)."""

    def shown(self, submission: Submission) -> str:
        """A stored valid list in words (LIST)."""

    def digest(self, session: Session, game: Game) -> dict[str, Any]:
        """What the master's daily digest shows of the lists."""


@dataclass(frozen=True)
class Reminders:
    """The deadline waits on what players send, so reminders are worth
    sending: in which state of the game, and the reminder's template (with
    not_in_yet's context: a method's own words under templates/NAME/; the
    shell's player/reminder.txt.j2 says only that the deadline waits and
    HELP NAME says what to send)."""

    state: str
    template: str = "player/reminder.txt.j2"


@dataclass(frozen=True)
class AssignmentCapability:
    """Powers drawn from what the players sent (the shell's own life cycle:
    START, the deadline, the results of RESULTS and REPLAY). Its hooks are
    the shell's defaults; a method that differs declares a subclass of it
    (its work is the shell's own, on the store, under the game's lock)."""

    # True: drawn at START (or its deadline, or when full); False: bidding
    # is open until the deadline, and PROCESS resolves.
    resolves_at_start: bool = True
    # A forming game starts at its deadline as START would.
    starts_at_deadline: bool = True
    # Its draw may be heavy (a preference draw at 100 powers): the scheduler
    # works it out ahead, outside the game's lock (judge.driver.precompute).
    # False: a draw of a few milliseconds, made under the lock at once,
    # without reading the game twice (a deadline of many games).
    draws_ahead: bool = True
    # A forming game starts by itself when its last player signs on (SET
    # MANUAL START turns it off).
    starts_when_full: bool = False
    # When the deadline waits on what players send (None: never).
    reminders: Reminders | None = None
    # The master sets the method's parameters (SET VARIANT resets them).
    tunable: bool = False
    # Parameters that SET VARIANT keeps, being no matter of the powers.
    kept_by_variant: tuple[str, ...] = ()
    # What a replacement player is asked for (EJECT ... REPLACE).
    replacement_asked: str = ""
    # What the players send, as the shell asks it of the method: the module
    # of a `Bidding` (bid lines gathered from a mail and taken as one list
    # when its commands end: the Blind Auction), or of a `Lists` (lists
    # stored by the method's own commands, shown in the master's LIST and
    # digest: preference).
    bidding: str | None = None
    lists: str | None = None

    def bids(self) -> Bidding | None:
        return importlib.import_module(self.bidding) if self.bidding else None  # type: ignore[return-value]

    def stored_lists(self) -> Lists | None:
        return importlib.import_module(self.lists) if self.lists else None  # type: ignore[return-value]

    def refused(self, err: ValueError) -> tuple[int, int, str, str] | None:
        """The replay's error `err` as a refusal to draw (players, powers,
        limit, detail: games.AssignmentRefused), no bug: the game stays as it
        was and its master is told. None: a bug (the game is set aside)."""
        return None

    def not_in_yet(self, session: Session, game: Game) -> list[tuple[Player, dict]] | None:
        """The players the deadline waits for, each with what their reminder
        says about them; None: those without a valid submission."""
        return None

    def standing_line(self, session: Session, game: Game, player: Player) -> str:
        """What SIGNON adds about the player's submission as it stands."""
        return ""

    def roster_changed(self, ctx: MailContext, game: Game, old: Player | None = None,
                       new: Player | None = None) -> str:
        """EJECT or REPLACE changed a game's players: what the master's reply
        adds (the method may queue work in ctx.after). `old`: the player row
        ejected or replaced (its status already changed); `new`: the
        replacement's row (None for EJECT)."""
        return ""

    def list_view(self, ctx: MailContext, game: Game, master: bool) -> dict | None:
        """What LIST adds of the method's own state: {"board": text}, or a
        blinding protocol's step (list_game.txt.j2's `board` and `blind`)."""
        return None


@dataclass(frozen=True)
class LiveCapability:
    """A game that keeps its own state and runs by its own commands and
    ticks (LUI, PT3, Payola). Its hooks are pure functions of the game, in
    the module named by `module` (imported when a hook runs): the game
    driver (judge/driver/) calls them with a judge.methods.api.GameView read
    under the game's lock and stores the Outcome each returns, in the same
    transaction. They never touch the store or the outbox. The module holds:

    - `claims(line)`: whether a mail's line is the method's own (checked
      before any other of its work; `claims` may name a lighter module
      that answers it);
    - `command(game, actor, number, line, at, scratch)`: one such line,
      sent by `actor` (api.Actor), stored by the judge at `at`; `scratch`
      is the mail's, for what waits until its last line;
      `end_of_mail(game, scratch, at)`: that (an Outcome or None);
    - `begin(game, now, seed)`: START (api.Refusal if it cannot start);
      `at_deadline(game, now, seed)`: games.deadline passed;
      `tick(game, now, at)`: games.next_tick fired at `at`;
      `roster_changed(game, old, new, at)`: EJECT (new None) or REPLACE;
    - views, read only: `list_view(game)` (LIST), `public_board(game,
      names)` (the web page), `standing_line(game, player)` (SIGNON),
      `not_in_yet(game)` (the reminders: [(player id, context)], or None),
      `describe(raw_params)` (the settings in a line), `names_in_game(game)`
      (name in the record -> address, for a record that names players by
      names of its own: the web shows public names);
    - `PLAYS_VARIANT = False`: its players take seats of its own (LUI's
      board, PT3's X and O), not the variant's powers (plays_variant).

    `public_board(game, names)` gives the game's own state as its public
    web page shows it, live: {"text": fixed-width text, "png": a function
    that draws its picture (PNG bytes; called once per change of the text)
    or None}, with players named by `names` (address -> public name, never
    an address); None: nothing of its own. Optional keys: "svg" instead of
    "png", a function that draws the picture as SVG (served as
    image/svg+xml, shown by an <img>, so no script in it runs); "sections",
    a list of {"id", "title", "text"}: further fixed-width texts shown each
    under its title (the page changes when any of them does). Everything
    is text: the web escapes it.

    A hook the module does not define is the shell's default (a plain
    assignment's START, deadline, LIST...). A live game draws no
    assignment, and never starts at its deadline: the master's START."""

    module: str
    # The module whose `claims(line)` answers, if lighter than `module`.
    claims_module: str | None = None
    # When the deadline waits on what players send (None: never).
    reminders: Reminders | None = None
    # Added to START's refusal once the game runs (how to start again).
    restart_hint: str = ""

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)

    def hook(self, name: str) -> Callable[..., Any] | None:
        """The live module's hook `name`, or None where it has none."""
        return getattr(self.load(), name, None)

    def claims(self, line: str) -> bool:
        return bool(importlib.import_module(self.claims_module or self.module).claims(line))


@dataclass(frozen=True)
class ProtocolCapability:
    """A protocol the method runs by mail with third parties (blind-random's
    other judges). `module` holds what the shell asks of it:
    `judge_to_judge(node)` (a parsed line one judge sends another: run even
    in an automatic mail, and never answered), `runs(session)` (its runs for
    games of other judges, as rows of `judge games`: game, role, gm,
    started, state), `run_line(row)` (one in words), and
    `run_events(session, game)` (`judge log` of such a game by its name:
    the events, or None if this judge has no run of it). The game's life
    cycle is the protocol's: a method declares a subclass with its START,
    deadline and daily notice."""

    module: str
    # A running game's master hears once a day whom it waits for (the
    # scheduler's notice, worded by `daily_notice`).
    notices_daily: bool = False
    # Added to START's refusal once the game runs (how to start again).
    restart_hint: str = ""

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)

    def begin(self, session: Session, config: Config, now: datetime, game: Game) -> str | None:
        """START of a forming game in the protocol's way: what the master
        is told; None: the shell's assignment start."""
        return None

    def at_deadline(self, session: Session, config: Config, now: datetime, game: Game) -> str | None:
        """A running game's deadline in the protocol's way (the operator's
        log line); None: the shell's (missing players, else resolve)."""
        return None

    def daily_notice(self, session: Session, config: Config, now: datetime, game: Game) -> str:
        """The daily notice to the master of a running game (notices_daily):
        the operator's log line."""
        raise NotImplementedError


def bids_of(method: Method) -> Bidding | None:
    """The bid lines' capability of a method whose players bid (its
    ASSIGNMENT's bidding module: the Blind Auction), else None."""
    return method.ASSIGNMENT.bids() if method.ASSIGNMENT is not None else None


def lists_of(method: Method) -> Lists | None:
    """The stored lists' capability of a method whose players send lists
    (its ASSIGNMENT's lists module: preference), else None."""
    return method.ASSIGNMENT.stored_lists() if method.ASSIGNMENT is not None else None


def reminders_of(method: Method) -> Reminders | None:
    """When a method's deadline waits on what players send, whichever kind
    of game it is."""
    capability = method.ASSIGNMENT or method.LIVE_GAME
    return capability.reminders if capability is not None else None


def restart_hint(method: Method) -> str:
    """What START's refusal adds once a game of this method runs."""
    capability = method.LIVE_GAME or method.THIRD_PARTIES
    return capability.restart_hint if capability is not None else ""


class Method:
    """One method, as the shell sees it: what every method must say (its
    names, its engine and settings, its seats, how its players submit, its
    results and replay, what it adds to the CLI, the store and the web),
    and its optional capabilities by kind, each None where it has none.
    Class attributes are declarations; methods are hooks with the plain
    assignment's behaviour as default."""

    # -- names ------------------------------------------------------------
    NAME: str = ""  # as stored in games.method and in records
    ALIASES: tuple[str, ...] = ()  # other names CREATE, SET METHOD and HELP take
    HELP_ALIASES: tuple[str, ...] = ()  # other names of its HELP page only (templates/help/NAME.txt.j2)
    # Module path of the pure engine (NAME, ParamError, default_params,
    # check_params, params_from...: engine() gives them).
    ENGINE: str = ""

    # -- how it submits -------------------------------------------------------
    # Modules of the mail commands (eml_*) the method adds: judge.commands
    # imports them, so their @handles register (the words are in
    # grammars/commands.lark, or the method's own grammar under grammars/).
    COMMANDS: tuple[str, ...] = ()
    # What the players send: "bids" (bid lines, taken by ASSIGNMENT.bidding;
    # a player who sent none is missing), "list" (SET PREFERENCE; none means
    # "don't care"), or None (nothing to send).
    SUBMITS: str | None = None
    # How the game assigns powers, for a bid line sent to it by mistake.
    HOW_TO_SUBMIT: str = ""
    # Commands that extend the shell's own: GRAMMAR, a file under grammars/
    # that adds to grammars/commands.lark's `command` and `setting` (lark's
    # %extend), read as one grammar with it (judge/syntax/parser.py); SYNTAX,
    # the module of its nodes, which holds `Transform` (one callback per
    # rule, as judge.syntax.parser's), `EXPECTED` (its terminals in words),
    # `LISTED` (its commands, where a reply lists the commands) and
    # `SECRET_WORDS` (its lines whose word after the game is a secret, masked
    # in replies and logs); COMMAND_WORDS, the first words of its lines (no
    # power may be named so, judge.variants).
    GRAMMAR: str | None = None
    SYNTAX: str | None = None
    COMMAND_WORDS: tuple[str, ...] = ()

    # -- results ----------------------------------------------------------
    # templates/<RESULTS>/{player,master}.txt.j2, forum.bbcode.j2,
    # offline.txt.j2, and results.txt.j2 (what all the mails of a game say,
    # rendered once and given to the other two as `results`; `master`: the
    # master's and observers' version); None: the method mails its own results.
    RESULTS: str | None = None
    # Module with resolve(powers, raw_params, submissions, stream) -> record:
    # the offline replay of `judge resolve` (and of the daemon, which builds
    # the same input); None: the method runs by mail only.
    REPLAY: str | None = None

    # -- what else the method brings ----------------------------------------
    # Its `judge` subcommands: name -> "module:attribute" of a click command
    # or group, imported only when it runs (judge/cli.py lists them).
    CLI: Mapping[str, str] = MappingProxyType({})
    # The module of its own tables, on the store's metadata
    # (judge.store.models.Base); their migrations are the store's.
    MODELS: str | None = None
    # A blind game: the web never shows who plays which power, nor the
    # record, seed or secret that would tell it (judge/web/, docs/web.md).
    BLIND: bool = False

    # -- optional capabilities, by kind (None: the method has none of it) --
    # Powers drawn from what the players sent, at START or at the deadline
    # (the Blind Auction, preference lists, random, blind-random).
    ASSIGNMENT: AssignmentCapability | None = AssignmentCapability()
    # A game with its own state, commands and ticks (LUI, PT3, Payola:
    # LiveMethod); it has no ASSIGNMENT.
    LIVE_GAME: LiveCapability | None = None
    # A protocol run by mail with third parties (blind-random's other judges).
    THIRD_PARTIES: ProtocolCapability | None = None

    # -- the engine -------------------------------------------------------
    def engine(self) -> ModuleType:
        return importlib.import_module(self.ENGINE)

    def params_from(self, raw: Mapping[str, Any] | None, U: int) -> Any:
        return self.engine().params_from(raw, U)

    def describe_params(self, params: Mapping[str, Any], U: int) -> str:
        """The settings in one line (CREATE, SET, LIST)."""
        return ""

    def seats(self, U: int, raw: Mapping[str, Any]) -> int:
        """How many players a game of U powers takes, with these settings
        (games.params less the judge's own)."""
        return U

    def refusal(self, command: str, game: Game) -> str | None:
        """Why the method refuses a shell command ("PROCESS", "TAKEOVER",
        "NO PREFERENCE FOR") for this game, or None."""
        return None

    # -- offline replay ---------------------------------------------------
    def resolve_file(self, data: dict[str, Any], seed: bytes) -> dict[str, Any]:
        """A `judge resolve` file (a JSON object naming this method) with
        `seed`: the JSON-ready record, or ResolveInputError saying which
        field is wrong. By default an assignment's file: `powers` and
        `submissions` {player: text} in, REPLAY's resolve() record out (a
        method with another log, like LUI's timed events, reads its own)."""
        from judge.resolution import resolve_assignment

        return resolve_assignment(self, data, seed)

    def replay(self, data: dict[str, Any], seed: bytes) -> dict[str, Any]:
        """Re-run a record's input (`judge verify`)."""
        from judge.resolution import run_resolution

        return run_resolution(data, seed)


class LiveMethod(Method):
    """A method whose game is live (LIVE_GAME, required): its settings are
    described and its whole game replayed from its own log."""

    ASSIGNMENT = None

    def describe_params(self, params: Mapping[str, Any], U: int) -> str:
        assert self.LIVE_GAME is not None
        return self.LIVE_GAME.load().describe(dict(params))

    def resolve_file(self, data: dict[str, Any], seed: bytes) -> dict[str, Any]:
        """The whole game from its own log: REPLAY's replay(data), no seed
        (nothing is drawn); its ReplayError is the file's fault."""
        from judge.resolution.errors import ResolveInputError

        module = importlib.import_module(self.REPLAY or "")
        try:
            return module.replay(data)
        except module.ReplayError as err:
            raise ResolveInputError(str(err)) from err

    def replay(self, data: dict[str, Any], seed: bytes) -> dict[str, Any]:
        # The record's input is the log `judge resolve` reads: verify re-reads it.
        return self.resolve_file(data, seed)


def plays_variant(method: Method) -> bool:
    """Whether the method's players get the variant's powers. A live game
    may give out seats of its own (LUI's board, PT3's X and O): its live
    module says `PLAYS_VARIANT = False`, and CREATE, LIST and the web then
    show those seats (its describe) instead of a variant's powers (issue 26)."""
    live = method.LIVE_GAME
    return live is None or live.hook("PLAYS_VARIANT") is not False
