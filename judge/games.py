"""Game-level work of the shell: reading a game's state from the store,
resolving it with its (pure) method, and queuing the mails that follow.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from functools import lru_cache
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import bindparam, event, func, select
from sqlalchemy.orm import Session

from judge import audit, record, rng
from judge.commitment import resolution_seed
from judge.driver import precompute
from judge.config import Config
from judge.methods import get_method, method_of
from judge.resolution import run_resolution
from judge.outbox import queue_mail, queue_mails
from judge.store.lock import write_lock
from judge.store.models import Entropy, Game, Player, Resolution, Submission
from judge.templating import render, render_mail, uses
from judge.variants import PowerList, make_power_list


log = logging.getLogger(__name__)

# Built once: every SIGNON and LIST ?game looks a game up by name.
_GAME_BY_NAME = select(Game).where(func.lower(Game.name) == bindparam("name"))
_GAME_BY_NAME_LOCKED = _GAME_BY_NAME.with_for_update().execution_options(populate_existing=True)


# A session that runs mail sets this in its info: every game it finds is
# locked (judge.driver.lock) until its transaction ends, so that nothing the
# mail reads of a game can be changed meanwhile by another judge process's
# timer, deadline or mail (docs/architecture.md, "The game driver").
LOCK_GAMES = "judge.games.lock"


def find_game(session: Session, name: str) -> Game | None:
    # A batch of mail runs in one session: once found, a game is taken from
    # the session's identity map (no query), checked by name in case it went.
    key = name.casefold()
    known = session.info.setdefault("judge.games.by_name", {})
    if key in known:
        game = session.get(Game, known[key])
        if game is not None and game.name.casefold() == key:
            return game
    if session.info.get(LOCK_GAMES):
        # Found and locked in one read (judge.store.lock.lock_game's, by name).
        write_lock(session)
        game = session.scalars(_GAME_BY_NAME_LOCKED, {"name": key}).first()
        if game is not None and "players" in game.__dict__:
            session.expire(game, ["players"])  # read again with the lock held, when next asked
    else:
        game = session.scalars(_GAME_BY_NAME, {"name": key}).first()
    if game is not None:
        known[key] = game.id
        # Held here: the session's identity map keeps objects only while
        # something else does, and without this every mail of a batch
        # loaded its game again (the query session.get saves).
        session.info.setdefault("judge.games.held", {})[game.id] = game
    return game


def power_list(game: Game) -> PowerList:
    # Every bid mail needs it; a game's list rarely changes and PowerList is
    # immutable, so each distinct list is built once.
    return _power_list(json.dumps(game.powers, sort_keys=True))


@lru_cache(maxsize=1024)
def _power_list(powers_json: str) -> PowerList:
    return make_power_list(json.loads(powers_json))


def active_players(game: Game) -> list[Player]:
    return [p for p in game.players if p.status == "active"]


def overview(session: Session) -> list[dict[str, Any]]:
    """Every game and its state, by name: `judge games` and the console."""
    return [{"game": g.name, "method": g.method, "variant": g.variant, "state": g.state,
             "players": len(active_players(g)), "powers": len(g.powers), "seats": _seats_or_powers(g),
             "deadline": g.deadline.isoformat() if g.deadline else None, "master": g.gm_address, "error": g.error}
            for g in session.scalars(select(Game).order_by(Game.name))]


def _seats_or_powers(game: Game) -> int:
    """seats(), or one a power for a game of a method this judge lacks."""
    try:
        return seats(game)
    except Exception:  # noqa: BLE001 - an unknown method, or settings it cannot read
        return len(game.powers or [])


def observers(game: Game) -> list[Player]:
    """Who observes the game (SIGNON Ogame): they get its public mail only."""
    return [p for p in game.players if p.status == "observer"]


def player_at(game: Game, address: str, *statuses: str) -> Player | None:
    """The game's row (player, observer, request...) of `address`, case
    ignored; only of those `statuses` if any are given."""
    key = address.strip().strip("<>").casefold()
    return next((p for p in game.players
                 if p.address.casefold() == key and (not statuses or p.status in statuses)), None)


def find_player(game: Game, who: str) -> Player | None:
    """A player named by address or by name (case ignored), active first."""
    key = who.strip().strip("<>").casefold()
    ordered = sorted(game.players, key=lambda p: p.status != "active")
    for p in ordered:
        if p.address.casefold() == key:
            return p
    for p in ordered:
        if p.name.casefold() == key:
            return p
    return None


# Keys of game.params that are the judge's settings (SET REMINDERS), not
# the method's: the method never sees them (its params_from refuses keys it
# does not know).
JUDGE_PARAMS = frozenset({"reminders", "notices"})


def raw_params(game: Game) -> dict[str, Any]:
    return {k: v for k, v in game.params.items() if k not in JUDGE_PARAMS}


def new_params(config: Any, method: Any, U: int) -> dict[str, Any]:
    """A new game's settings for `method` on U powers: the method's
    defaults, then the operator's [methods.NAME] table (judge.config)."""
    return {**method.engine().default_params(U).as_dict(), **config.method_defaults.get(method.NAME, {})}


def judge_params(game: Game) -> dict[str, Any]:
    """The judge's own settings among game.params: kept when SET VARIANT or
    SET METHOD resets the method's."""
    return {k: v for k, v in (game.params or {}).items() if k in JUDGE_PARAMS}


def game_params(game: Game) -> Any:
    """The method's parameters as numbers (a Blind Auction's "T/U" for D
    worked out, so that it follows T); the method's ParamError if unusable."""
    return method_of(game).params_from(raw_params(game), len(game.powers))


def param_warnings(game: Game) -> list[str]:
    """Warnings for the master; ParamError (the method's) if unusable."""
    return method_of(game).engine().check_params(len(game.powers), game_params(game))


def describe_params(game: Game) -> str:
    return method_of(game).describe_params(game.params, len(game.powers))


def seats(game: Game) -> int:
    """How many players the game takes: one per power, or SET PLAYERS (duplex)."""
    return method_of(game).seats(len(game.powers), raw_params(game))


@dataclass
class Standing:
    """What a player's submissions amount to right now."""

    player: Player
    latest: Submission | None  # the last submission, valid or not
    counting: Submission | None  # the last valid one
    auction: bool = True  # a Blind Auction (else a preference list)

    @property
    def missing(self) -> bool:
        # A preference game needs no list: none means "don't care".
        return self.auction and self.latest is None and not self.player.gm_no_preference

    def as_text(self) -> str:
        """The submission as a player would mail it (the offline resolver's input)."""
        if not self.auction:
            return self.counting.text if self.counting is not None else ""
        if self.counting is not None and self.counting.bids is not None:
            return "\n".join(f"{k}: {v}" for k, v in self.counting.bids.items())
        if self.counting is None and self.latest is not None:
            # Only invalid lists: the text itself, so the record (and a replay)
            # shows why it stands as No Preference.
            return self.latest.text
        return "No Preference"


# Each player's newest submission and newest valid one, in one query with
# two small subqueries (this runs for every bid mail, and for each game at a
# deadline; a game may hold many resubmissions). Built once: SQLAlchemy then
# skips compiling it again.
_NEWEST = (select(func.max(Submission.id)).where(Submission.game_id == bindparam("game_id"))
           .group_by(Submission.player_id))
_NEWEST_VALID = (select(func.max(Submission.id)).where(Submission.game_id == bindparam("game_id"), Submission.valid)
                 .group_by(Submission.player_id))
_STANDING = select(Submission).where(Submission.id.in_(_NEWEST) | Submission.id.in_(_NEWEST_VALID))


def standings(session: Session, game: Game) -> list[Standing]:
    ahead = _prefetched(session, "standings", game.id)
    rows = ({s.id: s for s in ahead} if ahead is not None
            else {s.id: s for s in session.scalars(_STANDING, {"game_id": game.id})})
    latest: dict[int, Submission] = {}
    counting: dict[int, Submission] = {}
    for sub_id in sorted(rows):
        sub = rows[sub_id]
        latest[sub.player_id] = sub
        if sub.valid:
            counting[sub.player_id] = sub
    # (The declaration only: the bids' module is not imported for a standing.)
    assignment = method_of(game).ASSIGNMENT
    bids = assignment is not None and assignment.bidding is not None
    return [Standing(p, latest.get(p.id), counting.get(p.id), bids) for p in active_players(game)]


# What prefetch() read for several games at once, taken (once) by
# standings() and committed_seed(); only for the transaction that read it.
_PREFETCHED = "judge.games.prefetched"


def prefetch(session: Session, games: list[Game]) -> None:
    """Read the standings and the entropy of several games, locked in this
    transaction, in two statements (the scheduler's group at a deadline),
    not two for each game: standings() and committed_seed() of each game
    take them, once, instead of reading them alone. Only for games whose
    next step reads them before changing anything."""
    if not games:
        return
    ids = [g.id for g in games]
    newest = select(func.max(Submission.id)).where(Submission.game_id.in_(ids)).group_by(Submission.player_id)
    newest_valid = (select(func.max(Submission.id)).where(Submission.game_id.in_(ids), Submission.valid)
                    .group_by(Submission.player_id))
    subs: dict[int, list[Submission]] = {i: [] for i in ids}
    for sub in session.scalars(select(Submission).where(Submission.id.in_(newest) | Submission.id.in_(newest_valid))):
        subs[sub.game_id].append(sub)
    entropy: dict[int, list[list[str]]] = {g.id: [] for g in games if g.secret_seed}
    if entropy:
        for game_id, player, text in session.execute(
                select(Entropy.game_id, Player.address, Entropy.text).join(Player, Entropy.player_id == Player.id)
                .where(Entropy.game_id.in_(list(entropy))).order_by(Entropy.id)):
            entropy[game_id].append([player, text])
    session.info[_PREFETCHED] = (session.get_transaction(), {"standings": subs, "entropy": entropy})


def _prefetched(session: Session, what: str, game_id: int) -> Any:
    """What prefetch() read of the game in this transaction (taken: a second
    reading asks the store again), or None."""
    ahead = session.info.get(_PREFETCHED)
    if ahead is None or ahead[0] is not session.get_transaction():
        return None
    return ahead[1][what].pop(game_id, None)


_COUNTING = (select(Submission).where(Submission.game_id == bindparam("game_id"),
                                      Submission.player_id == bindparam("player_id"), Submission.valid)
             .order_by(Submission.id.desc()).limit(1))


def counting_submission(session: Session, game: Game, player: Player) -> Submission | None:
    """The player's list that stands now: the newest valid one (standings()
    for one player, in one query, built once)."""
    memo = session.info.setdefault(_COUNTING_READ, {}) if session.info.get(LOCK_GAMES) else None
    key = (game.id, player.id)
    if memo is not None and key in memo:
        return memo[key]
    sub = session.scalars(_COUNTING, {"game_id": game.id, "player_id": player.id}).first()
    if memo is not None:
        memo[key] = sub
    return sub


_ANY_SUBMISSION = (select(Submission.id).where(Submission.game_id == bindparam("game_id"),
                                                Submission.player_id == bindparam("player_id")).limit(1))


def sent_a_list(session: Session, game: Game, player: Player) -> bool:
    """Whether the player (an active one) sent a list to the game, valid
    or not: standings()'s `latest` for one player, without reading the
    whole game's."""
    return (player.status == "active"
            and session.scalar(_ANY_SUBMISSION, {"game_id": game.id, "player_id": player.id}) is not None)


_INSERT_SUBMISSION = Submission.__table__.insert()


def add_submission(session: Session, **values: Any) -> None:
    """Store a player's list (Submission's columns): a plain INSERT, not an
    ORM object (its flush before the next mail's first query cost more than
    the INSERT), in the session's transaction."""
    session.connection().execute(_INSERT_SUBMISSION, {"violations": [], **values})
    session.info.pop(_COUNTING_READ, None)


# The standing lists counting_submission read in a transaction that runs
# mail (LOCK_GAMES): a SIGNON shows the player's list and the bid lines
# below it read it again. Kept until a submission is added (they are never
# changed or deleted) or the transaction ends; only mail adds submissions,
# and one process at a time runs mail (judge.daemon.processing_lock), so
# nothing else can add one meanwhile.
_COUNTING_READ = "judge.games.counting"


@event.listens_for(Session, "transient_to_pending")
def _submission_added(session: Session, instance: object) -> None:
    if isinstance(instance, Submission):
        session.info.pop(_COUNTING_READ, None)


@event.listens_for(Session, "after_transaction_end")
def _transaction_ended(session: Session, transaction) -> None:
    session.info.pop(_COUNTING_READ, None)  # (a savepoint's end too: what it added may be gone)


def replay_refusal(standing: Submission | None, sent_at: datetime) -> str | None:
    """Why a list sent at `sent_at` must not replace the player's standing
    list (`standing`, counting_submission()), or None: an older mail never
    replaces a newer list (a replayed mail, or one that arrived late). Only
    the standing list matters: a newer invalid list replaced nothing."""
    if standing is None or standing.submitted_at is None or standing.submitted_at <= sent_at:
        return None
    # To the second: two mails of the same minute read "sent 13:00, before
    # your list of 13:00" to the minute, which explains nothing.
    return (f"this mail was sent {_to_the_second(sent_at)}, before your list of "
            f"{_to_the_second(standing.submitted_at)}, which stands: an older mail never replaces a newer one")


def _to_the_second(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%a %d %b %Y %H:%M:%S UTC")


def missing_players(session: Session, game: Game, standing: list[Standing] | None = None) -> list[Player]:
    """`standing`: standings(session, game), when the caller has it already."""
    return [s.player for s in (standing or standings(session, game)) if s.missing]


def resolver_input(session: Session, game: Game, standing: list[Standing] | None = None) -> dict[str, Any]:
    """The game as a `judge resolve` file: replaying it with the recorded
    seed gives the same result (a moderator's check). `standing`:
    standings(session, game), when the caller has it already."""
    return {
        "method": game.method,
        "powers": list(game.powers),
        "params": game_params(game).as_dict(),
        "submissions": {s.player.address: s.as_text() for s in (standing or standings(session, game))},
    }


def committed_seed(session: Session, game: Game) -> tuple[bytes, list[list[str]]]:
    """Commit and reveal (judge/commitment.py): the judge's secret, committed
    to at CREATE, mixed with every ENTROPY line received so far; and those
    lines as [player, text], in the order received."""
    entropy = _prefetched(session, "entropy", game.id)
    if entropy is None:
        entropy = [[player, text] for player, text in session.execute(
            select(Player.address, Entropy.text).join(Player, Entropy.player_id == Player.id)
            .where(Entropy.game_id == game.id).order_by(Entropy.id))]
    return resolution_seed(bytes.fromhex(game.secret_seed), entropy), entropy


class AssignmentRefused(Exception):
    """The preference solver refused to draw the assignment: a tied block
    too big to count whose exact draw would pass the solver's work limit
    (judge.methods.preference.solver.assignment.TooHard). No bug: the lists
    are legal, the master chooses how to go on (SET PRFRAND, or a change of
    the game; docs/preference.md, "Bounded work"). Raised before anything
    of the resolution is written, so the game is left as it was."""

    def __init__(self, players: int, powers: int, limit: str, detail: str) -> None:
        super().__init__(detail)
        self.players, self.powers = players, powers
        self.limit = limit  # "work", or "precision" (a step finer than the sampler's words)
        self.detail = detail  # the solver's own sentence, for the log and the audit


@dataclass(frozen=True)
class Drawn:
    """A game's resolution computed, not yet written (draw_resolution)."""

    data: dict[str, Any]
    seed: bytes
    reveal: dict[str, Any] | None
    result: dict[str, Any]


def draw_resolution(session: Session, game: Game, seed: bytes | None = None,
                    standing: list[Standing] | None = None) -> Drawn:
    """Compute the game's resolution without writing anything: a refusal
    (AssignmentRefused) leaves the store and the game untouched."""
    get_method(game.method)  # a game with an unknown method must not get here
    data = resolver_input(session, game, standing)
    reveal = None
    if seed is None and game.secret_seed:
        seed, entropy = committed_seed(session, game)
        reveal = {"commitment": game.commitment, "secret": game.secret_seed, "entropy": entropy}
    seed = seed or rng.new_seed()
    try:
        # Drawn ahead, outside the game's lock, when the scheduler could
        # (precompute_resolution): used if the input is still the same.
        result = precompute.computed(precompute.digest("resolution", data, seed),
                                     lambda: run_resolution(data, seed))
    except ValueError as err:
        assignment = method_of(game).ASSIGNMENT
        refused = assignment.refused(err) if assignment is not None else None
        if refused is None:
            raise
        refusal = AssignmentRefused(*refused)
        # One line for the operator per refusal, whichever path met it (a
        # deadline, START, PROCESS, the start by itself).
        log.info("?%s: assignment refused: %d players tie among %d powers; the exact draw passed the "
                 "solver's %s limit (the master is told)", game.name, refusal.players, refusal.powers,
                 refusal.limit)
        raise refusal from err
    return Drawn(data, seed, reveal, result)


def precompute_resolution(session: Session, game: Game, standing: list[Standing] | None = None) -> None:
    """The draw of a game with a committed seed, from its submissions as
    they are now (no lock), done here before the transaction that resolves
    it takes the game's lock (judge.driver.precompute); a refusal or an
    error is left for that transaction to meet. A game without a committed
    seed draws a fresh one then: nothing to do ahead."""
    if not game.secret_seed:
        return
    data = resolver_input(session, game, standing)
    seed = committed_seed(session, game)[0]
    session.rollback()  # no transaction, and no snapshot, is held while the draw runs
    try:
        precompute.remember(precompute.digest("resolution", data, seed), run_resolution(data, seed))
    except Exception:  # noqa: BLE001 - met again, and handled, under the lock
        pass


def record_refusal(session: Session, game: Game, now: datetime, refusal: AssignmentRefused,
                   **data: Any) -> None:
    """The refusal in the game's audit trail (`judge log GAME`)."""
    audit.record(session, now, "assignment_refused", game_id=game.id, players=refusal.players,
                 powers=refusal.powers, limit=refusal.limit, detail=refusal.detail, **data)


def refusal_text(config: Config, game: Game, refusal: AssignmentRefused, command: str) -> str:
    """What the master reads about a refusal, and what to send: `command`
    is the one that resolves the game in its state (START, or PROCESS)."""
    return render("gm/assignment_refused.txt.j2", game=game, refusal=refusal, command=command,
                  forming=game.state == "forming", docs_url=config.docs_url).strip()


def tell_assignment_delayed(session: Session, config: Config, now: datetime, game: Game, when: str) -> None:
    """The players (and observers) of a game the judge tried to start by
    itself, at its deadline or when its last player joined, were promised
    the results: one short mail each says they come later."""
    for p in [*active_players(game), *observers(game)]:
        notify(session, config, now, "player/assignment_delayed.txt.j2", [p.address], game=game,
               when=when, can_change=game.state == "forming" and p.status == "active")


def resolve_game(session: Session, config: Config, game: Game, now: datetime,
                 seed: bytes | None = None, drawn: Drawn | None = None,
                 standing: list[Standing] | None = None) -> Resolution:
    """Resolve the game now and queue the results to everybody at once.
    `drawn`: the resolution draw_resolution computed already (else it is
    computed here; AssignmentRefused then comes before any write).
    `standing`: standings(session, game), read under the game's lock."""
    if drawn is None:
        drawn = draw_resolution(session, game, seed, standing)
    data, seed, reveal, result = drawn.data, drawn.seed, drawn.reveal, drawn.result
    resolution = Resolution(game_id=game.id, method=game.method, seed=seed.hex(), input=data,
                            result=result, reveal=reveal, created_at=now)
    # Written with the rest of the transaction's changes (at a deadline of
    # many games, one INSERT for a group's resolutions), not flushed here.
    session.add(resolution)
    for d in result["draws"]:
        audit.record(session, now, "draw", game_id=game.id, **d)
    audit.record(session, now, "resolution", game_id=game.id, seed=seed.hex(),
                 assignment=result["assignment"], unassigned=result["unassigned"])
    by_address = {p.address: p for p in active_players(game)}
    for address, power in result["assignment"].items():
        # Duplex players hold several powers: kept as "Austria, England".
        by_address[address].power = ", ".join(power) if isinstance(power, list) else power
    set_state(session, game, "resolved", now)
    game.resolved_at = now
    names = display_names(game)
    folder = method_of(game).RESULTS
    attachment = [(record.FILENAME, record.to_bytes(record.sealed(game.name, game.method, data, reveal, result,
                                                                             names)),
                   "application/json")]
    ctx = dict(game=game, result=result, names=names, powers=power_list(game), reveal=reveal,
               docs_url=config.docs_url,
               bbcode=render(f"{folder}/forum.bbcode.j2", game=game, result=result, names=names,
                             powers=power_list(game)))
    # What every mail of the game says is rendered once (results.txt.j2),
    # not once per recipient: at a deadline of many games it was most of the
    # time of the pass (issue 29).
    results = {False: render(f"{folder}/results.txt.j2", master=False, **ctx)}
    results[True] = (render(f"{folder}/results.txt.j2", master=True, **ctx)
                     if uses(f"{folder}/results.txt.j2", "master") else results[False])
    mails = []

    def mail(to: str, subject: str, body: str) -> None:
        mails.append(dict(to=[to], subject=subject, body=body, kind="result", game_id=game.id,
                          attachments=attachment))

    for p in active_players(game):
        mail(p.address, *render_mail(f"{folder}/player.txt.j2", player=p, results=results[False], **ctx))
    ctx["results"] = results[True]
    mail(game.gm_address, *render_mail(f"{folder}/master.txt.j2", **ctx))
    # Observers get what all may read: the master's results, without the
    # master's forum post to paste (one mail each: observers' addresses are
    # not shared).
    subject, body = render_mail(f"{folder}/master.txt.j2", observer=True, **ctx)
    for o in observers(game):
        mail(o.address, subject, body)
    queue_mails(session, config, now, mails)  # one INSERT for them all
    return resolution


def display_names(game: Game) -> dict[str, str]:
    """How results name each player: by name, with the address where two
    players' names look alike (judge.names: the same TS#39 skeleton, case
    ignored, so also where they are equal). Names are cleaned again here:
    a name stored before judge.names existed may hold a line break."""
    from judge.names import clean_name, skeleton_keys  # ICU only when results are made

    players = active_players(game)
    shown = {p.address: clean_name(p.name, p.address.split("@")[0]) for p in players}
    keys = {address: skeleton_keys(name) for address, name in shown.items()}
    alike = {a for a in keys for b in keys if a != b and keys[a] & keys[b]}
    return {a: f"{name} <{a}>" if a in alike else name for a, name in shown.items()}


def deadline_ahead(config: Config, game: Game, now: datetime) -> None:
    """A game that starts (or runs again) without a deadline in the future
    gets the default one (`default_deadline_hours` from now)."""
    if game.deadline is None or game.deadline <= now:
        game.deadline = now + timedelta(hours=config.default_deadline_hours)


def set_state(session: Session, game: Game, state: str, now: datetime) -> None:
    if game.state != state:
        audit.record(session, now, "state", game_id=game.id, old=game.state, new=state)
        game.state = state


def tell_observers(session: Session, config: Config, now: datetime, game: Game) -> None:
    """The observers hear that the game started (a game assigned at once
    sends them its results instead); one mail each, as their addresses are
    not shared."""
    for o in observers(game):
        notify(session, config, now, "observer/started.txt.j2", [o.address], game=game,
               players=len(active_players(game)))


def notify(session: Session, config: Config, now: datetime, template: str, to: list[str], *,
           game: Game | None = None, kind: str = "notice", **context: Any) -> None:
    subject, body = render_mail(template, game=game, docs_url=config.docs_url, **context)
    queue_mail(session, config, now, to=to, subject=subject, body=body, kind=kind,
               game_id=game.id if game else None)
