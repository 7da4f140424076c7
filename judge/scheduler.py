"""Deadlines: at a game's deadline, resolve it, or ask its master about the
players who sent nothing (the master then ejects, replaces, or decides No
Preference for them, and sends PROCESS).

Each game's deadline work runs in a transaction and a failure domain of its
own (judge.failures): an error there sets that game aside as stuck, and the
other games go on.
"""

from __future__ import annotations

import logging
import traceback
from collections import defaultdict
from datetime import datetime, timedelta
from functools import partial

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session, sessionmaker

from judge import audit, driver, reminders
from judge.config import Config
from judge.failures import STUCK, quarantine_game
from judge.games import (AssignmentRefused, missing_players, notify, power_list, prefetch, record_refusal,
                         refusal_text, resolve_game, set_state, standings, tell_assignment_delayed)
from judge.methods import METHODS, UnknownMethod, get_method, method_of
from judge.methods.interface import reminders_of
from judge.store.lock import is_transient, lock_game, lock_games, retrying
from judge.store.models import Event, Game, InboundMessage, Player
from judge.wording import plural

log = logging.getLogger(__name__)


# A game whose Method's THIRD_PARTIES has notices_daily (blind-random) tells its master once a day whom it waits for.
BLIND_NOTICE_EVERY = timedelta(days=1)


def _methods(flag: str) -> list[str]:
    """The names of the methods whose Method declares `flag` (a dotted
    path: THIRD_PARTIES.notices_daily, None on the way is false)."""
    return [name for name in METHODS if _declares(METHODS[name], flag)]


def _declares(obj: object, flag: str) -> bool:
    for part in flag.split("."):
        obj = getattr(obj, part, None)
    return bool(obj)


def due_games(session: Session, now: datetime) -> list[int]:
    running = Game.state == "bidding"
    # At its deadline a game of these methods starts as START would; an
    # auction's deadline closes its bidding, so a forming auction waits for START.
    forming = (Game.state == "forming") & Game.method.in_(_methods("ASSIGNMENT.starts_at_deadline"))
    return list(session.scalars(
        select(Game.id).where(running | forming, Game.deadline.is_not(None), Game.deadline <= now)
        .order_by(Game.deadline)
    ))


def due_ticks(session: Session, now: datetime) -> list[int]:
    """Games whose method wants its tick (games.next_tick) by now; a stuck
    game's timers wait until it is resumed."""
    return list(session.scalars(
        select(Game.id).where(Game.next_tick.is_not(None), Game.next_tick <= now, Game.state != STUCK)
        .order_by(Game.next_tick)))


def method_tick(s: Session, config: Config, game_id: int, now: datetime) -> str | None:
    """One game's method tick, with the time it was due (not `now`). The
    timer is claimed under the game's lock and read again there: a tick
    that lost the race to another judge process finds it moved, and does
    nothing."""
    game = lock_game(s, game_id, wait=False)
    if game is None or game.state == STUCK or game.next_tick is None or game.next_tick > now:
        return None  # another judge process got there first
    at = game.next_tick
    outcome = driver.tick(s, config, now, game, at)
    if game.next_tick == at:
        # The method did not move its timer: not fired again in a loop.
        game.next_tick = None
    return outcome


def due_blind_notices(session: Session, now: datetime) -> list[int]:
    """Running games of a protocol (blind-random) whose master has not heard for a day."""
    since = now - BLIND_NOTICE_EVERY
    return list(session.scalars(
        select(Game.id).where(Game.method.in_(_methods("THIRD_PARTIES.notices_daily")), Game.state.in_(("bidding", "waiting")),
                              Game.started_at <= since,
                              (Game.missing_notified_at.is_(None)) | (Game.missing_notified_at <= since))
        .order_by(Game.id)
    ))


def due_reminders(session: Session, config: Config, now: datetime) -> list[tuple[int, float]]:
    """(game, hours before its deadline) of every reminder due now
    (judge.reminders): one query for the games in their window, one for the
    reminders they were sent already."""
    waits = or_(*[(Game.state == state) & Game.method.in_(methods)
                  for state, methods in reminders.reminded().items()])
    ahead = now + timedelta(hours=max((reminders.MOST_HOURS, *config.reminder_hours)))
    window = {}
    for game_id, deadline, params in session.execute(
            select(Game.id, Game.deadline, Game.params).where(waits, Game.deadline > now, Game.deadline <= ahead)):
        hours = reminders.game_hours(params, config.reminder_hours)
        if hours and deadline - timedelta(hours=hours[0]) <= now:
            window[game_id] = (deadline, hours)
    if not window:
        return []
    sent = _reminders_sent(session, list(window))
    due = ((game_id, reminders.due(deadline, now, hours, sent[game_id]))
           for game_id, (deadline, hours) in window.items())
    return [(game_id, h) for game_id, h in due if h is not None]


def _reminders_sent(session: Session, game_ids: list[int]) -> dict[int, list[tuple[str, float]]]:
    sent: dict[int, list[tuple[str, float]]] = defaultdict(list)
    for game_id, data in session.execute(select(Event.game_id, Event.data)
                                         .where(Event.game_id.in_(game_ids), Event.kind == "reminder")):
        sent[game_id].append((data["deadline"], data["hours"]))
    return sent


# Games whose timed work shares one transaction (one commit: SQLite's
# fsync, PostgreSQL's round trips) when many are due at once, as at the
# deadline of many games. Each game's state and its mails still commit
# together; the heavy part of each is worked out ahead, outside the
# transaction, for the whole group (at most judge.driver.precompute's _KEEP).
GROUP = 25


def tick(sessions: sessionmaker[Session], config: Config, now: datetime) -> list[str]:
    """Handle every game whose deadline has passed, and the reminders due;
    in groups of up to GROUP games a transaction, each game under its lock."""
    with sessions() as s:
        # What a mail asked (START, PROCESS, a full game) first, then the clock's.
        work = [(handle_job, i) for i in due_jobs(s)]
        work += [(handle_deadline, i) for i in due_games(s, now)]
        work += [(method_tick, i) for i in due_ticks(s, now)]
        work += [(blind_notice, i) for i in due_blind_notices(s, now)]
        work += [(partial(send_reminders, hours=h), i) for i, h in due_reminders(s, config, now)]
    done: list[str] = []
    for group in _groups(work):
        for game_id in _worked_ahead(sessions, group):
            _precompute(sessions, game_id, now)
        if len(group) > 1:
            outcomes = _together(sessions, config, now, group)
            if outcomes is not None:
                done += _logged(outcomes)
                continue
        for handle, game_id in group:
            done += _alone(sessions, config, now, handle, game_id)
    return done


def _groups(work: list) -> list[list]:
    """The work in groups of up to GROUP, a game at most once in a group (a
    second handler of a game, as a reminder after its job, sees the first's
    writes committed, as it always did)."""
    groups: list[list] = []
    seen: set[int] = set()
    for item in work:
        if not groups or len(groups[-1]) >= GROUP or item[1] in seen:
            groups.append([])
            seen = set()
        groups[-1].append(item)
        seen.add(item[1])
    return groups


def _together(sessions: sessionmaker[Session], config: Config, now: datetime, group: list) -> list | None:
    """The group's work in one transaction; None if any of it failed (a bug
    or a fault of the store): nothing of it is then written, and each game
    is done again alone (_alone), in its own transaction and failure domain."""
    try:
        with sessions.begin() as s:
            _read_together(s, group)
            return [handle(s, config, game_id, now) for handle, game_id in group]
    except Exception as err:  # noqa: BLE001 - each game is tried again alone, which reports it
        log.info("%d games' timed work did not commit together (%s); each is done alone", len(group),
                 type(err).__name__)
        return None


def _read_together(s: Session, group: list) -> None:
    """What each game's work reads first, read for the whole group in a few
    statements instead of a few for each game (on PostgreSQL each is a round
    trip): the games' rows, locked (each handler's lock_game then finds its
    game locked already), with their players; and for the deadlines that
    resolve a game, its standings and entropy (games.prefetch)."""
    games = {g.id: g for g in lock_games(s, sorted({game_id for _, game_id in group}))}
    due = [games[game_id] for handle, game_id in group if handle is handle_deadline and game_id in games]
    prefetch(s, [g for g in due if g.state == "bidding" and _assigns(g.method)])


def _method_named(name: str | None):  # noqa: ANN202 - a Method, or None for a method this judge lacks
    try:
        return get_method(name) if name is not None else None
    except UnknownMethod:
        return None


def _assigns(name: str) -> bool:
    """Whether the method `name` (known to this judge) draws an assignment."""
    method = _method_named(name)
    return method is not None and method.ASSIGNMENT is not None


def _worked_ahead(sessions: sessionmaker[Session], group: list) -> list[int]:
    """The games of the group whose due work may be worked out ahead
    (_precompute): those of a method that draws ahead or has deadline work
    of its own. One statement for the group; the others (a Blind Auction:
    drawn under the lock at once) need no session of their own."""
    ids = [game_id for handle, game_id in group if handle in (handle_deadline, handle_job)]
    if not ids:
        return []
    with sessions() as s:
        methods = dict(s.execute(select(Game.id, Game.method).where(Game.id.in_(ids))).all())
    ahead = []
    for game_id in ids:
        method = _method_named(methods.get(game_id))
        if method is not None and (method.ASSIGNMENT is None or method.ASSIGNMENT.draws_ahead):
            ahead.append(game_id)
    return ahead


def _logged(outcomes: list) -> list[str]:
    done = []
    for outcome in outcomes:
        if outcome:
            # For the operator: what each deadline (or reminder) did.
            log.info("deadline: %s", outcome)
            done.append(outcome)
    return done


def _alone(sessions: sessionmaker[Session], config: Config, now: datetime, handle, game_id: int) -> list[str]:
    """One game's timed work in a transaction of its own, tried again after
    a fault of the store; a bug sets the game aside as stuck."""
    def run() -> str | None:
        with sessions.begin() as s:
            return handle(s, config, game_id, now)

    try:
        outcome = retrying(run, f"game {game_id}'s timed work")
    except Exception as err:
        if is_transient(err):
            # The store went away (a restart, a failover): no bug of the
            # game's; the next pass does it.
            log.warning("game %s: its timed work waits for the store (%s)", game_id, type(err).__name__)
            return []
        quarantine_game(sessions, config, now, game_id, traceback.format_exc())
        log.error("game %s: its deadline's work met a bug; the game is set aside as stuck", game_id)
        return [f"game {game_id}: stuck"]
    return _logged([outcome])


def _precompute(sessions: sessionmaker[Session], game_id: int, now: datetime) -> None:
    """The heavy part of a due deadline (a resolution, a Payola phase),
    worked out from the game as it is now, without its lock and outside any
    transaction (judge.driver.precompute), so that the locked transaction
    that follows is short. Anything it meets is met again, and handled,
    under the lock."""
    from judge.games import precompute_resolution
    try:
        with sessions() as s:
            game = s.get(Game, game_id)
            if game is None or game.state == STUCK:
                return
            method = method_of(game)
            if method.ASSIGNMENT is not None and not method.ASSIGNMENT.draws_ahead:
                return  # drawn under the lock at once: cheap
            if game.job is not None:
                if method.ASSIGNMENT is not None:
                    precompute_resolution(s, game)
                return
            if game.deadline is None or game.deadline > now:
                return
            if method.ASSIGNMENT is None:  # a live game's own deadline work
                driver.precompute_deadline(s, game, now)
            elif method.ASSIGNMENT.resolves_at_start and game.state == "forming" and method.ASSIGNMENT.starts_at_deadline:
                precompute_resolution(s, game)
            elif game.state == "bidding" and not method.ASSIGNMENT.resolves_at_start:
                standing = standings(s, game)
                if not missing_players(s, game, standing):
                    precompute_resolution(s, game, standing)
    except Exception:  # noqa: BLE001 - only a head start: the locked run does the work anyway
        log.debug("game %s: nothing worked out ahead", game_id, exc_info=True)


def send_reminders(s: Session, config: Config, game_id: int, now: datetime, *, hours: float) -> str | None:
    """Remind the players of one game who have not sent what its deadline
    waits for, each in a mail of their own, once per (deadline, hours)."""
    game = lock_game(s, game_id, wait=False)
    if game is None or game.deadline is None or not reminders.waits_on_players(game.method, game.state):
        return None
    hours_now = reminders.game_hours(game.params, config.reminder_hours)
    if reminders.due(game.deadline, now, hours_now, _reminders_sent(s, [game.id])[game.id]) != hours:
        return None  # another judge process got there first, or the game changed
    late = _not_in_yet(s, game)
    if not late and not any(p.status == "active" for p in game.players):
        return None  # nobody has joined yet: those who join before the time are reminded then
    # Recorded even when nobody is late, so that the game is not looked at
    # again for this deadline and time.
    audit.record(s, now, "reminder", game_id=game.id, deadline=game.deadline.isoformat(), hours=hours,
                 players=len(late))
    left = reminders.time_left(game.deadline, now)
    for player, context in late:
        notify(s, config, now, reminders_of(method_of(game)).template, [player.address], game=game, player=player, left=left,
               powers=power_list(game), **context)
    if not late:
        return None
    return f"{game.name}: {plural(len(late), 'player')} reminded, {left} before the deadline"


def _not_in_yet(s: Session, game: Game) -> list[tuple[Player, dict]]:
    """The players the deadline waits for, each with what their reminder
    says about them (never anything about another player)."""
    own = driver.not_in_yet(s, game)
    if own is not None:
        return own
    late = []
    for st in standings(s, game):
        if st.counting is None and not st.player.gm_no_preference:
            late.append((st.player, {"invalid": st.latest is not None}))
    return late


def due_jobs(session: Session) -> list[int]:
    """Games with work a mail asked for (games.job); a stuck game's waits."""
    return list(session.scalars(select(Game.id).where(Game.job.is_not(None), Game.state != STUCK)
                                .order_by(Game.id)))


def handle_job(s: Session, config: Config, game_id: int, now: datetime) -> str | None:
    """The work a mail asked for, in a transaction of its own under the
    game's lock (the draw worked out ahead, outside it: _precompute): START
    or the start by itself of a game assigned at once, or PROCESS. The
    reply to the mail said that the results follow; a refusal of the
    solver, or a game that changed meanwhile, is told to the master by mail."""
    from judge.commands import CommandRejected
    from judge.commands.eml_start import Refused, begin, process_now

    game = lock_game(s, game_id, wait=False)
    if game is None or game.job is None or game.state == STUCK:
        return None  # another judge process got there first, or it waits for a moderator
    job, game.job = game.job, None
    command = "PROCESS" if job == "process" else "START"
    try:
        if job == "process":
            if game.state not in ("bidding", "waiting"):
                return None
            missing = missing_players(s, game)
            if missing:  # someone joined the game again meanwhile (REPLACE)
                raise CommandRejected(f"no bids from {', '.join(p.address for p in missing)}: decide for each "
                                      f"first (EJECT, REPLACE, NO PREFERENCE FOR), then PROCESS")
            done = process_now(s, config, now, game)
        else:
            if game.state != "forming":
                return None
            done = begin(s, config, now, game)
    except Refused as err:
        notify(s, config, now, "gm/job_refused.txt.j2", [game.gm_address], game=game, command=command,
               reason=str(err), refused=True, job=job)
        if job == "autostart":
            tell_assignment_delayed(s, config, now, game, "when its last player joined")
        return f"{game.name}: the assignment was refused ({command}); the master was told"
    except CommandRejected as err:
        notify(s, config, now, "gm/job_refused.txt.j2", [game.gm_address], game=game, command=command,
               reason=str(err), refused=False, job=job)
        return f"{game.name}: {command} could not be done; the master was told"
    return f"{game.name}: {done}"


def _start_at_deadline(s: Session, config: Config, game: Game, now: datetime) -> str:
    """A preference, random or blind-random game at its deadline starts as
    START would; if it cannot, its master is told why, once (the deadline is
    cleared: a new one, or START, goes on)."""
    from judge.commands import CommandRejected
    from judge.commands.eml_start import Refused, begin

    deadline = game.deadline
    # The players of a preference game who sent no list: the master hears
    # who they are (they count as not minding which power they get).
    no_list = ([st.player for st in standings(s, game) if st.counting is None]
               if method_of(game).SUBMITS == "list" else [])
    try:
        done = begin(s, config, now, game)
    except Refused as err:
        return _refused_at_deadline(s, config, game, now, str(err), "START")
    except CommandRejected as err:
        game.deadline = None
        notify(s, config, now, "gm/deadline_not_started.txt.j2", [game.gm_address], game=game, deadline=deadline,
               reason=str(err))
        return f"{game.name}: could not start at its deadline"
    notify(s, config, now, "gm/deadline_started.txt.j2", [game.gm_address], game=game, deadline=deadline,
           done=done, no_list=no_list)
    return f"{game.name}: started at its deadline"


def _refused_at_deadline(s: Session, config: Config, game: Game, now: datetime, reason: str, command: str) -> str:
    """The solver refused to draw the game's assignment at its deadline
    (games.AssignmentRefused): no bug, so the game is not stuck. Nothing of
    the resolution was written; the deadline is cleared, so that the next
    pass does not try (and mail) again: the master's command, or a new
    deadline, does. The master reads why and what to send; the players,
    waiting for the results, that they come later."""
    deadline, game.deadline = game.deadline, None
    notify(s, config, now, "gm/deadline_not_started.txt.j2", [game.gm_address], game=game, deadline=deadline,
           reason=reason, refused=True, command=command)
    tell_assignment_delayed(s, config, now, game, "at its deadline")
    return f"{game.name}: the assignment was refused at its deadline; the master was told"


def blind_notice(s: Session, config: Config, game_id: int, now: datetime) -> str | None:
    """The daily notice to the master of a game whose Method asks for one
    (THIRD_PARTIES.notices_daily: blind-random's protocol step and whom it waits for)."""
    game = lock_game(s, game_id, wait=False)
    if game is None or game.state not in ("bidding", "waiting"):
        return None
    since = now - BLIND_NOTICE_EVERY
    if game.missing_notified_at is not None and game.missing_notified_at > since:
        return None  # another judge process got there first
    game.missing_notified_at = now
    return method_of(game).THIRD_PARTIES.daily_notice(s, config, now, game)


_OLDEST_MAIL = select(func.min(InboundMessage.received_at)).where(InboundMessage.status == "new")
_OLDEST_READ = "judge.scheduler.oldest_mail"


def _mail_waiting(s: Session, deadline: datetime) -> bool:
    """Whether a mail stored by `deadline` (a time past) is not run yet.
    Read once a transaction (the scheduler's group: one statement, not one a
    game): a mail of before the deadline that commits after this read is
    missed, as it is when it commits just after a lone game's read."""
    tx = s.get_transaction()
    read = s.info.get(_OLDEST_READ)
    if tx is None or read is None or read[0] is not tx:
        read = s.info[_OLDEST_READ] = (tx, s.scalar(_OLDEST_MAIL))
    return read[1] is not None and read[1] <= deadline


def handle_deadline(s: Session, config: Config, game_id: int, now: datetime) -> str | None:
    game = lock_game(s, game_id, wait=False)
    if game is None or game.deadline is None or game.deadline > now:
        return None  # another judge process got there first
    if _mail_waiting(s, game.deadline):
        # A mail stored before the deadline is not run yet (another judge
        # process runs mail now, or a backlog): what it sends counts, so
        # the deadline waits for it (the next pass).
        return None
    method = method_of(game)
    if game.state == "forming" and method.ASSIGNMENT is not None and method.ASSIGNMENT.starts_at_deadline:
        return _start_at_deadline(s, config, game, now)
    if game.state != "bidding":
        return None
    own = driver.at_deadline(s, config, now, game)
    if own is not None:
        return own
    standing = standings(s, game)
    missing = missing_players(s, game, standing)
    if missing:
        set_state(s, game, "waiting", now)
        game.missing_notified_at = now
        notify(s, config, now, "gm/missing.txt.j2", [game.gm_address], game=game, missing=missing)
        return f"{game.name}: waiting for the master ({len(missing)} missing)"
    try:
        resolve_game(s, config, game, now, standing=standing)
    except AssignmentRefused as refusal:
        # Raised before resolve_game writes anything. A running game the
        # solver cannot draw: as at a forming game's deadline, but PROCESS
        # is what resolves it.
        record_refusal(s, game, now, refusal, command="PROCESS")
        return _refused_at_deadline(s, config, game, now, refusal_text(config, game, refusal, "PROCESS"), "PROCESS")
    return f"{game.name}: resolved"
