"""The console's accounts and guards: moderators (a name and a password
hashed as the players', judge.passwords), who is logged in (a signed session
cookie: Starlette's SessionMiddleware, set up by judge.web.app), the CSRF
token of a session, and the limit on failed logins per client address.

No Starlette import here: `judge moderator add` uses the accounts without
loading the web stack. The guards read only `request.session`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from datetime import datetime, timezone
from typing import Any, Callable

from sqlalchemy import delete, select, text
from sqlalchemy.orm import Session

from judge import passwords
from judge.store.models import LoginFailure, Moderator

NAME_MAX = 100
# A hash of a password nobody has: checked when the name is unknown, so a
# login takes as long for a wrong name as for a wrong password (no probing
# of names by timing). Made once, at the first such login.
_DUMMY: dict[int, str] = {}


class AccountError(ValueError):
    """A name or password `judge moderator add` cannot take."""


def set_moderator(session: Session, name: str, password: str, now: datetime,
                  cost: int = passwords.DEFAULT_COST) -> bool:
    """Make the account `name`, or give it a new password (which ends its
    open sessions: see fingerprint). True when the account is new."""
    name = name.strip()
    if not name or len(name) > NAME_MAX or not name.isprintable():
        raise AccountError(f"a moderator's name is 1 to {NAME_MAX} printable characters")
    if len(password) < 8:
        raise AccountError("the password must have at least 8 characters")
    row = session.scalars(select(Moderator).where(Moderator.name == name)).first()
    hashed = passwords.hash_password(password, cost)
    if row is None:
        session.add(Moderator(name=name, password=hashed, created_at=now))
        return True
    row.password = hashed
    return False


def remove_moderator(session: Session, name: str) -> bool:
    """Delete the account `name` (its open sessions end with it); False if none."""
    row = session.scalars(select(Moderator).where(Moderator.name == name.strip())).first()
    if row is None:
        return False
    session.delete(row)
    return True


def moderators(session: Session) -> list[dict]:
    return [{"name": r.name, "created_at": r.created_at.isoformat()}
            for r in session.scalars(select(Moderator).order_by(Moderator.name))]


def check_login(session: Session, name: str, password: str,
                cost: int = passwords.DEFAULT_COST) -> Moderator | None:
    """The account if `password` is its password, else None. `cost`: the
    judge's password_cost, which the accounts are hashed with."""
    row = session.scalars(select(Moderator).where(Moderator.name == name.strip()[:NAME_MAX])).first()
    if row is None:
        if cost not in _DUMMY:
            _DUMMY[cost] = passwords.hash_password(secrets.token_urlsafe(16), cost)
        passwords.check_password(password, _DUMMY[cost])
        return None
    return row if passwords.check_password(password, row.password) else None


def fingerprint(row: Moderator) -> str:
    """What the session keeps of the account's password hash: a new password
    (or a deleted account) ends every session opened with the old one."""
    return hashlib.sha256(f"{row.id}:{row.password}".encode()).hexdigest()[:32]


# -- sessions -----------------------------------------------------------------

# A login lasts this long, however busy (the cookie itself would last the
# middleware's two weeks): a cookie copied off a moderator's machine is
# good for a working day at most.
SESSION_SECONDS = 12 * 3600


def log_in(request: Any, row: Moderator, now: float | None = None) -> None:
    """A fresh session for `row` (a new CSRF token too: no token seen before
    the login is good after it)."""
    request.session.clear()
    request.session.update({"moderator": row.name, "fp": fingerprint(row), "csrf": secrets.token_urlsafe(32),
                            "since": time.time() if now is None else now})


def current_moderator(request: Any, session: Session, now: float | None = None) -> str | None:
    """The logged-in moderator's name, if the session is not older than
    SESSION_SECONDS and its account still has the password it was opened
    with."""
    name, fp, since = request.session.get("moderator"), request.session.get("fp"), request.session.get("since")
    if not isinstance(name, str) or not isinstance(fp, str) or not isinstance(since, (int, float)):
        return None
    if (time.time() if now is None else now) - since > SESSION_SECONDS:
        request.session.clear()
        return None
    row = session.scalars(select(Moderator).where(Moderator.name == name)).first()
    if row is None or not hmac.compare_digest(fingerprint(row), fp):
        request.session.clear()
        return None
    return row.name


def csrf_token(request: Any) -> str:
    """The session's CSRF token, made on first use (the login form has one
    before anyone is logged in)."""
    token = request.session.get("csrf")
    if not isinstance(token, str) or len(token) < 32:
        token = secrets.token_urlsafe(32)
        request.session["csrf"] = token
    return token


def csrf_ok(request: Any, sent: object) -> bool:
    """Whether a form's token is the session's own (compared in constant time)."""
    token = request.session.get("csrf")
    return (isinstance(token, str) and len(token) >= 32 and isinstance(sent, str)
            and hmac.compare_digest(token.encode(), sent.encode()))


# -- failed logins ------------------------------------------------------------

# The store's column is this wide; a longer "address" is no real one (a
# forwarded header's junk) and is cut rather than refused with an error.
ADDRESS_MAX = 100


class LoginLimiter:
    """At most `limit` failed logins per client address in `window` seconds;
    then that address is refused until its `limit`-th newest failure is
    `window` old. The failures
    are rows of the store (LoginFailure): every web process over the store
    counts the same ones and a restart forgets none. `sessions`: the store's
    sessionmaker (the console gives the app's to a limiter made without
    one); `clock`: wall-clock seconds, shared by the processes (injected by
    the tests)."""

    def __init__(self, limit: int = 5, window: float = 900.0, clock: Callable[[], float] = time.time,
                 sessions: Callable[..., Session] | None = None) -> None:
        self.limit, self.window, self.clock, self.sessions = limit, window, clock, sessions

    @staticmethod
    def _when(seconds: float) -> datetime:
        return datetime.fromtimestamp(seconds, timezone.utc)

    def _locked(self, s: Session, address: str, now: float) -> None:
        """Begin `s`'s transaction with a lock on the address's count, held
        to its commit (PostgreSQL: the address's; SQLite: the store's write
        lock): the count and the write of an attempt are one step, whichever
        process makes it. Prunes every failure out of the window on the way."""
        if s.get_bind().dialect.name == "postgresql":
            # A lock on the address, not on the table: other addresses go on.
            key = int.from_bytes(hashlib.sha256(f"judge login {address}".encode()).digest()[:8], "big", signed=True)
            s.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})
        # On SQLite this first write takes the store's write lock (another
        # process's attempt waits for the commit; reads go on, WAL). On
        # PostgreSQL the rows another attempt is pruning are skipped, not
        # waited for: two prunings deleting in different orders would
        # deadlock.
        old = (select(LoginFailure.id).where(LoginFailure.failed_at <= self._when(now - self.window))
               .with_for_update(skip_locked=True))
        s.execute(delete(LoginFailure).where(LoginFailure.id.in_(old)))

    def _wait(self, s: Session, address: str, now: float) -> float:
        """Seconds until `address` may try again, from its failures of the
        window: one indexed query, which reads no more than `limit` rows
        (the newest ones)."""
        times = s.scalars(select(LoginFailure.failed_at)
                          .where(LoginFailure.address == address,
                                 LoginFailure.failed_at > self._when(now - self.window))
                          .order_by(LoginFailure.failed_at.desc()).limit(self.limit)).all()
        if len(times) < self.limit:
            return 0.0
        return max(0.0, times[-1].timestamp() + self.window - now)

    def _store(self) -> Callable[..., Session]:
        assert self.sessions is not None, "a LoginLimiter needs the store's sessions"
        return self.sessions

    def wait(self, address: str) -> float:
        """Seconds until `address` may try again; 0 when it may now."""
        with self._store()() as s:
            return self._wait(s, address[:ADDRESS_MAX], self.clock())

    def attempt(self, address: str) -> float:
        """Count a login attempt of `address` as failed before it is checked
        (`succeeded` clears the count): the count and the attempt's row are
        one transaction under the address's lock, committed before the
        password is checked, so of attempts sent at once (to one web process
        or several) no more than `limit` pass. Returns 0 when the attempt may
        go on, else the seconds to wait (and the attempt is not counted)."""
        address, now = address[:ADDRESS_MAX], self.clock()
        with self._store().begin() as s:
            self._locked(s, address, now)
            wait = self._wait(s, address, now)
            if not wait:
                s.add(LoginFailure(address=address, failed_at=self._when(now)))
        return wait

    def failed(self, address: str) -> None:
        now = self.clock()
        with self._store().begin() as s:
            self._locked(s, address[:ADDRESS_MAX], now)
            s.add(LoginFailure(address=address[:ADDRESS_MAX], failed_at=self._when(now)))

    def succeeded(self, address: str) -> None:
        with self._store().begin() as s:
            s.execute(delete(LoginFailure).where(LoginFailure.address == address[:ADDRESS_MAX]))
