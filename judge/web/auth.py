"""The console's accounts and guards: moderators (a name and a password
hashed as the players', judge.passwords), who is logged in (a signed session
cookie, Starlette's SessionMiddleware set up by judge.web.app, naming a
session row of the store that logging out deletes), the CSRF token of a
session, and the limits on failed logins per account and per client address.

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
from judge.store.models import LoginFailure, Moderator, WebSession

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


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def log_in(request: Any, row: Moderator, now: float | None = None, session: Session | None = None) -> None:
    """A fresh session for `row` (a new CSRF token too: no token seen before
    the login is good after it). With the store's `session` (which the
    caller commits) the login is a row of web_sessions too, and only a
    cookie whose row is there is a session (current_moderator): logging out
    deletes it. Rows older than SESSION_SECONDS are pruned on the way."""
    since = time.time() if now is None else now
    request.session.clear()
    request.session.update({"moderator": row.name, "fp": fingerprint(row), "csrf": secrets.token_urlsafe(32),
                            "since": since})
    if session is not None:
        token = secrets.token_urlsafe(32)
        session.execute(delete(WebSession).where(
            WebSession.created_at < datetime.fromtimestamp(since - SESSION_SECONDS, timezone.utc)))
        session.add(WebSession(token_hash=_token_hash(token), moderator_id=row.id,
                               created_at=datetime.fromtimestamp(since, timezone.utc)))
        request.session["sid"] = token


def log_out(request: Any, session: Session) -> None:
    """End the session, here and in the store: a copy of the cookie (a
    replay) is no session after this."""
    token = request.session.get("sid")
    if isinstance(token, str):
        session.execute(delete(WebSession).where(WebSession.token_hash == _token_hash(token)))
    request.session.clear()


def current_moderator(request: Any, session: Session, now: float | None = None) -> str | None:
    """The logged-in moderator's name, if the session is not older than
    SESSION_SECONDS, its row is in the store (not logged out), and its
    account still has the password it was opened with."""
    name, fp, since = request.session.get("moderator"), request.session.get("fp"), request.session.get("since")
    token = request.session.get("sid")
    if not isinstance(name, str) or not isinstance(fp, str) or not isinstance(since, (int, float)) \
            or not isinstance(token, str):
        return None
    if (time.time() if now is None else now) - since > SESSION_SECONDS:
        request.session.clear()
        return None
    row = session.scalars(select(Moderator).join(WebSession, WebSession.moderator_id == Moderator.id)
                          .where(Moderator.name == name, WebSession.token_hash == _token_hash(token))).first()
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


def account_key(name: str) -> str:
    """What the store keeps of an account name tried: its hash, never the
    name (a password typed into the name field would be kept). The name as
    check_login reads it."""
    return hashlib.sha256(f"judge console account {name.strip()[:NAME_MAX]}".encode()).hexdigest()


class LoginLimiter:
    """Failed logins, counted per account and per client address in a
    sliding `window` of seconds: an account (the name tried, known or not)
    with `limit` failures is refused from every address, so rotating or
    forged addresses gain nothing; an address with `address_limit` failures
    (over every name) is refused whatever name it sends. The first is the
    tight one: a guesser at the moderator's address (all clients behind a
    proxy that is not trusted, say) holds up only the accounts it guesses,
    not the moderator's own, until its address has `address_limit`. Each is
    refused until its oldest counted failure is `window` old.

    The failures are rows of the store (LoginFailure): every web process
    over the store counts the same ones and a restart forgets none.
    `sessions`: the store's sessionmaker (the console gives the app's to a
    limiter made without one); `clock`: wall-clock seconds, shared by the
    processes (injected by the tests). An `account` of None counts the
    address alone."""

    def __init__(self, limit: int = 5, window: float = 900.0, clock: Callable[[], float] = time.time,
                 sessions: Callable[..., Session] | None = None, address_limit: int = 25) -> None:
        self.limit, self.window, self.clock, self.sessions = limit, window, clock, sessions
        self.address_limit = address_limit

    @staticmethod
    def _when(seconds: float) -> datetime:
        return datetime.fromtimestamp(seconds, timezone.utc)

    def _locked(self, s: Session, address: str, account: str | None, now: float) -> None:
        """Begin `s`'s transaction with a lock on the counts of the address
        and the account, held to its commit (PostgreSQL: theirs, taken in one
        order; SQLite: the store's write lock): the count and the write of an
        attempt are one step, whichever process makes it. Prunes every
        failure out of the window on the way."""
        if s.get_bind().dialect.name == "postgresql":
            # Locks on the address and the account, not on the table: others go on.
            counted = [f"address {address}"] + ([f"account {account}"] if account is not None else [])
            for key in sorted(int.from_bytes(hashlib.sha256(f"judge login {what}".encode()).digest()[:8], "big",
                                             signed=True) for what in counted):
                s.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})
        # On SQLite this first write takes the store's write lock (another
        # process's attempt waits for the commit; reads go on, WAL). On
        # PostgreSQL the rows another attempt is pruning are skipped, not
        # waited for: two prunings deleting in different orders would
        # deadlock.
        old = (select(LoginFailure.id).where(LoginFailure.failed_at <= self._when(now - self.window))
               .with_for_update(skip_locked=True))
        s.execute(delete(LoginFailure).where(LoginFailure.id.in_(old)))

    def _wait_for(self, s: Session, column, value: str, limit: int, now: float) -> float:
        """Seconds until `column == value` has fewer than `limit` failures in
        the window: one indexed query, which reads at most `limit` rows."""
        times = s.scalars(select(LoginFailure.failed_at)
                          .where(column == value, LoginFailure.failed_at > self._when(now - self.window))
                          .order_by(LoginFailure.failed_at.desc()).limit(limit)).all()
        if len(times) < limit:
            return 0.0
        return max(0.0, times[-1].timestamp() + self.window - now)

    def _wait(self, s: Session, address: str, account: str | None, now: float) -> float:
        wait = self._wait_for(s, LoginFailure.address, address, self.address_limit, now)
        if account is not None:
            wait = max(wait, self._wait_for(s, LoginFailure.account, account, self.limit, now))
        return wait

    def _store(self) -> Callable[..., Session]:
        assert self.sessions is not None, "a LoginLimiter needs the store's sessions"
        return self.sessions

    @staticmethod
    def _keys(address: str, name: str | None) -> tuple[str, str | None]:
        return address[:ADDRESS_MAX], None if name is None else account_key(name)

    def wait(self, address: str, name: str | None = None) -> float:
        """Seconds until `address` may try the account `name` again; 0 when it may now."""
        address, account = self._keys(address, name)
        with self._store()() as s:
            return self._wait(s, address, account, self.clock())

    def attempt(self, address: str, name: str | None = None) -> float:
        """Count a login attempt of `address` on the account `name` as failed
        before it is checked (`succeeded` clears it): the counts and the
        attempt's row are one transaction under their locks, committed
        before the password is checked, so of attempts sent at once (to one
        web process or several) no more than the limits pass. Returns 0 when
        the attempt may go on, else the seconds to wait (and the attempt is
        not counted)."""
        (address, account), now = self._keys(address, name), self.clock()
        with self._store().begin() as s:
            self._locked(s, address, account, now)
            wait = self._wait(s, address, account, now)
            if not wait:
                s.add(LoginFailure(address=address, account=account or "", failed_at=self._when(now)))
        return wait

    def failed(self, address: str, name: str | None = None) -> None:
        (address, account), now = self._keys(address, name), self.clock()
        with self._store().begin() as s:
            self._locked(s, address, account, now)
            s.add(LoginFailure(address=address, account=account or "", failed_at=self._when(now)))

    def succeeded(self, address: str, name: str | None = None) -> None:
        """The right password: this address's failures on this account (its
        owner's typos) are forgotten; another address's guesses at it are not."""
        address, account = self._keys(address, name)
        with self._store().begin() as s:
            s.execute(delete(LoginFailure).where(LoginFailure.address == address,
                                                 LoginFailure.account == (account or "")))
