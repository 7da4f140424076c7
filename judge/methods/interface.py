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
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:  # the shell's types, for the hooks' signatures only
    from datetime import datetime

    from sqlalchemy.orm import Session

    from judge.config import Config
    from judge.store.models import Game


class Method:
    """One method, as the shell sees it. Class attributes are declarations;
    methods are hooks with the plain assignment's behaviour as default."""

    # -- names ------------------------------------------------------------
    NAME: str = ""  # as stored in games.method and in records
    ALIASES: tuple[str, ...] = ()  # other names CREATE, SET METHOD and HELP take
    HELP_ALIASES: tuple[str, ...] = ()  # other names of its HELP page only (templates/help/NAME.txt.j2)
    ENGINE: str = ""  # module path of the pure engine (NAME, ParamError, default_params, check_params...)

    # -- mail -------------------------------------------------------------
    # Modules of the mail commands (eml_*) the method adds: judge.commands
    # imports them, so their @handles register (the words are in
    # grammars/commands.lark, or the method's own grammar under grammars/).
    COMMANDS: tuple[str, ...] = ()
    # What the players send: "bids" (bid lines, checked by judge.submission;
    # a player who sent none is missing), "list" (SET PREFERENCE; none means
    # "don't care"), or None (nothing to send).
    SUBMITS: str | None = None
    # How the game assigns powers, for a bid line sent to it by mistake.
    HOW_TO_SUBMIT: str = ""
    # What a replacement player is asked for (EJECT ... REPLACE).
    REPLACEMENT_ASKED: str = ""
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

    # -- life cycle ---------------------------------------------------------
    # At START (or its deadline, or when full): True, the assignment is drawn
    # at once; False, bidding opens until the deadline (PROCESS resolves).
    RESOLVES_AT_START: bool = True
    # A forming game starts at its deadline as START would.
    STARTS_AT_DEADLINE: bool = True
    # Its draw may be heavy (a preference draw at 100 powers): the scheduler
    # works it out ahead, outside the game's lock (judge.driver.precompute).
    # False: a draw of a few milliseconds, made under the lock at once,
    # without reading the game twice (a deadline of many games).
    DRAWS_AHEAD: bool = True
    # A forming game starts by itself when its last player signs on (SET
    # MANUAL START turns it off).
    STARTS_WHEN_FULL: bool = False
    # The state in which the deadline waits on what players send (so that
    # reminders are worth sending), or None.
    REMINDED_STATE: str | None = None
    # The reminder's template, with not_in_yet's context (a method's own
    # words under templates/NAME/; the default says only that the deadline
    # waits and HELP NAME says what to send).
    REMINDER: str = "player/reminder.txt.j2"
    # The master sets the method's parameters (SET VARIANT resets them).
    TUNABLE: bool = False
    # Parameters that SET VARIANT keeps, being no matter of the powers.
    KEPT_BY_VARIANT: tuple[str, ...] = ()
    # A running game's master hears once a day whom it waits for
    # (the scheduler's notice, for a method that runs a protocol by mail).
    DAILY_NOTICE: bool = False
    # Added to START's refusal once the game runs (how to start again).
    RESTART_HINT: str = ""

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
    # A protocol it runs by mail with other judges (blind-random's third
    # party), or None: the module of what the shell asks of it,
    # `judge_to_judge(node)` (a parsed line one judge sends another: run
    # even in an automatic mail, and never answered), `runs(session)` (its
    # runs for games of other judges, as rows of `judge games`: game, role,
    # gm, started, state), `run_line(row)` (one in words), and
    # `run_events(session, game)` (`judge log` of such a game by its name:
    # the events, or None if this judge has no run of it).
    PROTOCOL: str | None = None

    def protocol(self) -> ModuleType | None:
        return importlib.import_module(self.PROTOCOL) if self.PROTOCOL else None

    # -- the engine -------------------------------------------------------
    def engine(self) -> Any:
        return importlib.import_module(self.ENGINE)

    def default_params(self, U: int) -> Any:
        return self.engine().default_params(U)

    def params_from(self, raw: Mapping[str, Any] | None, U: int) -> Any:
        return self.engine().params_from(raw, U)

    def check_params(self, U: int, params: Any) -> list[str]:
        """Warnings for the master; the engine's ParamError if unusable."""
        return self.engine().check_params(U, params)

    def describe_params(self, params: Mapping[str, Any], U: int) -> str:
        """The settings in one line (CREATE, SET, LIST)."""
        return ""

    def seats(self, U: int, raw: Mapping[str, Any]) -> int:
        """How many players a game of U powers takes, with these settings
        (games.params less the judge's own)."""
        return U

    # -- offline replay ---------------------------------------------------
    def refused(self, err: ValueError) -> tuple[int, int, str, str] | None:
        """The replay's error `err` as a refusal to draw (players, powers,
        limit, detail: games.AssignmentRefused), no bug: the game stays as it
        was and its master is told. None: a bug (the game is set aside)."""
        return None

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

    # -- shell hooks (a method that runs its own protocol) ----------------
    def begin(self, session: Session, config: Config, now: datetime, game: Game) -> str | None:
        """START of a forming game in the method's own way: what the master
        is told; None: the shell's assignment or auction start."""
        return None

    def at_deadline(self, session: Session, config: Config, now: datetime, game: Game) -> str | None:
        """A running game's deadline in the method's own way (the operator's
        log line); None: the shell's (missing players, else resolve)."""
        return None

    def daily_notice(self, session: Session, config: Config, now: datetime, game: Game) -> str:
        """The daily notice to the master of a running game (DAILY_NOTICE):
        the operator's log line."""
        raise NotImplementedError

    def not_in_yet(self, session: Session, game: Game) -> list[tuple[Any, dict]] | None:
        """The players the deadline waits for, each with what their reminder
        says about them; None: those without a valid submission."""
        return None

    def standing_line(self, session: Session, game: Game, player: Any) -> str:
        """What SIGNON adds about the player's submission as it stands."""
        return ""

    def roster_changed(self, ctx: Any, game: Game, old: Any = None, new: Any = None) -> str:
        """EJECT or REPLACE changed a game's players: what the master's reply
        adds (the method may queue work in ctx.after). `old`: the player row
        ejected or replaced (its status already changed); `new`: the
        replacement's row (None for EJECT)."""
        return ""

    def list_view(self, ctx: Any, game: Game, master: bool) -> dict | None:
        """What LIST adds of the method's own state: {"board": text}, or a
        blinding protocol's step (list_game.txt.j2's `board` and `blind`)."""
        return None

    def refusal(self, command: str, game: Game) -> str | None:
        """Why the method refuses a shell command ("PROCESS", "TAKEOVER",
        "NO PREFERENCE FOR") for this game, or None."""
        return None

    # -- the public web pages (judge/web/, docs/web.md) -------------------
    # A blind game: the web never shows who plays which power, nor the
    # record, seed or secret that would tell it.
    BLIND: bool = False

    def public_board(self, game: Game, names: Mapping[str, str]) -> dict | None:
        """The game's own state as its public web page shows it, live:
        {"text": fixed-width text, "png": a function that draws its picture
        (PNG bytes; called once per change of the text) or None}, with
        players named by `names` (address -> public name, never an
        address); None: the method shows nothing of its own.

        Optional keys (a method without them is shown as before):
        "svg" instead of "png", a function that draws the picture as SVG
        (served as image/svg+xml, shown by an <img>, so no script in it
        runs); "sections", a list of {"id", "title", "text"}: further
        fixed-width texts shown each under its title (the page changes when
        any of them does). Everything is text: the web escapes it."""
        return None


class LiveMethod(Method):
    """A method that keeps its own state and runs by its own commands (LUI,
    PT3, Payola). Its hooks are pure functions of the game, in the module
    named by LIVE (imported when a hook runs): the game driver
    (judge/driver/) calls them with a judge.methods.api.GameView read under
    the game's lock and stores the Outcome each returns, in the same
    transaction. They never touch the store or the outbox. The module
    holds:

    - `claims(line)`: whether a mail's line is the method's own (checked
      before any other of its work; a package may answer it from a lighter
      module: override `claims`);
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
      `describe(raw_params)` (the settings in a line).

    A hook the module does not define is the shell's default (a plain
    assignment's START, deadline, LIST...). A package declares only what
    differs here."""

    # Module path of the pure hooks above.
    LIVE: str = ""

    def live(self) -> Any:
        return importlib.import_module(self.LIVE)

    def hook(self, name: str) -> Any:
        """The live module's hook `name`, or None where it has none."""
        return getattr(self.live(), name, None)

    def claims(self, line: str) -> bool:
        return bool(self.live().claims(line))

    def describe_params(self, params: Mapping[str, Any], U: int) -> str:
        return self.live().describe(dict(params))

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
