"""The moderators' console under /console/ (docs/web.md, "The console").

Every page and action needs a moderator's session (judge.web.auth): a page
asked for without one redirects to the login, a POST without one is refused
(403), and every POST must carry the session's CSRF token (403 otherwise).
Failed logins are limited per account and per client address
(auth.LoginLimiter), counted in the store, so every web process over it
counts the same ones. A client's address is the one it connects from, or
the X-Forwarded-For of a proxy in `[web] trusted_proxies` (judge.web.app).

The facts are those of `judge log`, `judge outbox` and `judge quarantine`,
read through the same functions (judge.audit, judge.outbox,
judge.failures); raw mails are shown masked (judge.web.rawmail). Page
endpoints are plain functions (Starlette runs them in its thread pool); the
POST endpoints read their form on the event loop and do their store work in
the thread pool.
"""

from __future__ import annotations

import logging
from collections import Counter
from functools import wraps
from typing import Any, Callable
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from judge.web import auth

log = logging.getLogger(__name__)

PREFIX = "/console"
# Pages of moderators: never cached, never framed, no address leaks in a Referer.
HEADERS = {"Cache-Control": "no-store", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin",
           "X-Content-Type-Options": "nosniff"}


def routes() -> list[Route]:
    return [
        Route("/", home, name="console_home"),
        Route("/login", login_page, methods=["GET"], name="console_login"),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"], name="console_logout"),
        Route("/game/{name:path}", game_trail, name="console_game"),
        Route("/mail/{mail_id:int}", mail_source, name="console_mail"),
        Route("/outbox", outbox_page, name="console_outbox"),
        Route("/outbox/{row_id:int}/retry", outbox_retry, methods=["POST"]),
        Route("/quarantine", quarantine_page, name="console_quarantine"),
        Route("/quarantine/{mail_id:int}/rerun", quarantine_rerun, methods=["POST"]),
        Route("/sources", sources_page, name="console_sources"),
    ]


def limiter(request: Request) -> auth.LoginLimiter:
    """The app's failed-login counter, over the app's store (a test may set
    its own, with its clock: it counts in the app's store too)."""
    state = request.app.state
    if getattr(state, "login_limiter", None) is None:
        state.login_limiter = auth.LoginLimiter()
    if state.login_limiter.sessions is None:
        state.login_limiter.sessions = state.sessions
    return state.login_limiter


def _now(request: Request):
    """The time an action is stamped with: the judge's clock (a test's judge
    runs on its own clock and sets it here)."""
    clock = getattr(request.app.state, "clock", None)
    if clock is None:
        from judge.clock import SystemClock

        clock = SystemClock()
    return clock.now()


def _address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = request.app.state.templates.get_template(f"web/console/{template}").render(
        request=request, csrf=auth.csrf_token(request), flash=request.session.pop("flash", None), **context)
    return HTMLResponse(html, status_code=status, headers=HEADERS)


def _refused(request: Request, status: int, message: str) -> HTMLResponse:
    return _render(request, "refused.html.j2", status=status, message=message, moderator=None)


def page(fn: Callable[..., Response]) -> Callable[[Request], Response]:
    """A page for moderators only: the others are sent to the login."""
    @wraps(fn)
    def guarded(request: Request) -> Response:
        with request.app.state.sessions() as s:
            who = auth.current_moderator(request, s)
            if who is None:
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                return RedirectResponse(f"{PREFIX}/login?next={quote(target, safe='')}", status_code=303,
                                        headers=HEADERS)
            return fn(request, s, who)
    return guarded


def action(fn: Callable[..., str]) -> Callable[[Request], Any]:
    """A POST of a moderator's form: refused (403) without a session or with
    a token that is not the session's; `fn(request, session, who, form)`
    does its work in a transaction and returns the page to go back to."""
    @wraps(fn)
    async def guarded(request: Request) -> Response:
        form = await request.form()

        def run() -> Response:
            with request.app.state.sessions.begin() as s:
                who = auth.current_moderator(request, s)
                if who is None:
                    return _refused(request, 403, "Log in first: this page is for moderators.")
                if not auth.csrf_ok(request, form.get("csrf")):
                    log.warning("console: a form without its session's token from %s refused", _address(request))
                    return _refused(request, 403, "This form is out of date or was not sent from the console: "
                                                  "reload the page and try again.")
                back = fn(request, s, who, form)
            return RedirectResponse(back, status_code=303, headers=HEADERS)

        return await run_in_threadpool(run)
    return guarded


def _outcome(request: Request, problem: str | None, done: str, logged: str, *args: Any) -> None:
    """An action's outcome, shown on the page it goes back to: `problem`
    (nothing was done), or `done`; only what was done goes to the log."""
    request.session["flash"] = problem or done
    if problem is None:
        log.info(logged, *args)


# -- login -------------------------------------------------------------------

def _next(value: object) -> str:
    """Where to go after the login: a console page, never another site."""
    if isinstance(value, str) and value.startswith(PREFIX + "/") and not value.startswith("//") \
            and "\\" not in value:
        return value
    return PREFIX + "/"


def login_page(request: Request) -> Response:
    return _render(request, "login.html.j2", moderator=None, error=None, name="",
                   next=_next(request.query_params.get("next")))


async def login(request: Request) -> Response:
    form = await request.form()
    address = _address(request)
    name, password, target = str(form.get("name", "")), str(form.get("password", "")), _next(form.get("next"))
    if not auth.csrf_ok(request, form.get("csrf")):
        return _refused(request, 403, "This form is out of date or was not sent from the console: "
                                      "reload the login page and try again.")
    limits = limiter(request)
    # Counted as failed until it succeeds; the store's work in the thread pool.
    wait = await run_in_threadpool(limits.attempt, address, name)
    if wait:
        log.warning("console: login from %s refused: too many failed logins", address)
        minutes = max(1, round(wait / 60))
        return _refused(request, 429, f"Too many failed logins for this name or from your address: try again "
                                      f"in about {minutes} minute{'s' if minutes != 1 else ''}.")

    def check():
        with request.app.state.sessions.begin() as s:
            row = auth.check_login(s, name, password, request.app.state.config.password_cost)
            if row is not None:
                auth.log_in(request, row, session=s)
            return row is not None

    if not await run_in_threadpool(check):
        # Not the name tried: a password typed into the name field would land in the log.
        log.warning("console: failed login from %s", address)
        return _render(request, "login.html.j2", status=401, moderator=None, error="Wrong name or password.",
                       name=name[:100], next=target)
    await run_in_threadpool(limits.succeeded, address, name)
    log.info("console: %s logged in from %s", name, address)
    return RedirectResponse(target, status_code=303, headers=HEADERS)


async def logout(request: Request) -> Response:
    form = await request.form()
    if not auth.csrf_ok(request, form.get("csrf")):
        return _refused(request, 403, "This form is out of date: reload the page and try again.")

    def end() -> None:
        with request.app.state.sessions.begin() as s:
            auth.log_out(request, s)

    await run_in_threadpool(end)
    return RedirectResponse(f"{PREFIX}/login", status_code=303, headers=HEADERS)


# -- pages -------------------------------------------------------------------

@page
def home(request: Request, s, who: str) -> Response:
    from sqlalchemy import func, select

    from judge import outbox
    from judge.failures import last_line
    from judge.games import overview
    from judge.store.models import InboundMessage

    games = [{**g, "error": last_line(g["error"]) if g["error"] else None} for g in overview(s)]
    waiting = outbox.listing(s)
    # A count only: the quarantine's page reads (and masks) the mails themselves.
    quarantined = s.scalar(select(func.count()).where(InboundMessage.status == "quarantined"))
    return _render(request, "home.html.j2", moderator=who, games=games,
                   outbox_counts=Counter(r["status"] for r in waiting), quarantined=quarantined)


@page
def game_trail(request: Request, s, who: str) -> Response:
    from judge import audit, outbox
    from judge.games import find_game

    g = find_game(s, request.path_params["name"].lstrip("?"))
    if g is None:
        raise HTTPException(404, "no such game")
    player = request.query_params.get("player") or None
    kind = request.query_params.get("kind") or None
    every = audit.game_events(s, g)
    events = audit.filter_events(every, player=player, kinds=(kind,) if kind else ())
    states = outbox.delivery_states(s, [e["outbox_id"] for e in events if e["kind"] == "outbound"])
    rows = [{"at": e["at"], "kind": e["kind"], "what": audit.describe(e), "inbound_id": e["inbound_id"],
             "outbox_id": e["outbox_id"], "delivery": states.get(e["outbox_id"]) if e["kind"] == "outbound"
             else None} for e in events]
    people = [{"address": g.gm_address, "label": f"{g.gm_address} (master)"}] + [
        {"address": p.address, "label": f"{p.name} <{p.address}> ({p.status})"} for p in g.players]
    return _render(request, "game.html.j2", moderator=who, game=g, events=rows, total=len(every),
                   people=people, kinds=sorted({e["kind"] for e in every}), player=player, kind=kind)


@page
def mail_source(request: Request, s, who: str) -> Response:
    from judge.store.models import InboundMessage
    from judge.masking import mask_known, secrets_of_mail
    from judge.web.rawmail import show

    row = s.get(InboundMessage, request.path_params["mail_id"])
    if row is None:
        raise HTTPException(404, "no such mail")
    own = request.app.state.config.address
    shown = show(row.raw, own)
    return _render(request, "mail.html.j2", moderator=who, mail=row, shown=shown,
                   reason=mask_known(row.reason, secrets_of_mail(row.raw, own)) if row.reason else None)


@page
def outbox_page(request: Request, s, who: str) -> Response:
    from judge import outbox

    show_all = request.query_params.get("all") == "1"
    return _render(request, "outbox.html.j2", moderator=who, rows=outbox.listing(s, show_all=show_all),
                   show_all=show_all)


@action
def outbox_retry(request: Request, s, who: str, form) -> str:
    from judge import outbox

    row_id = request.path_params["row_id"]
    _outcome(request, outbox.retry(s, row_id, _now(request)),
             f"#{row_id}: queued again; the next pass of the daemon sends it.",
             "console: %s queued outbox #%s again", who, row_id)
    return f"{PREFIX}/outbox"


@page
def quarantine_page(request: Request, s, who: str) -> Response:
    from judge.failures import quarantined_mails

    rows = quarantined_mails(s)  # their errors masked there, for `judge quarantine` too
    return _render(request, "quarantine.html.j2", moderator=who, rows=rows)


@action
def quarantine_rerun(request: Request, s, who: str, form) -> str:
    from judge.failures import rerun_mail

    mail_id = request.path_params["mail_id"]
    _outcome(request, rerun_mail(s, mail_id, _now(request), by=f"console: {who}"),
             f"#{mail_id}: queued to run again at the daemon's next pass.",
             "console: %s queued quarantined mail #%s to run again", who, mail_id)
    return f"{PREFIX}/quarantine"


@page
def sources_page(request: Request, s, who: str) -> Response:
    from sqlalchemy import func, select

    from judge.sources.watermark import source_states
    from judge.store.models import InboundMessage

    # What each source (Maildir, deliver, IMAP, forum) has stored: Maildir
    # and `judge deliver` keep no watermark, so this is how they show.
    stored = s.execute(select(InboundMessage.source, func.count(), func.max(InboundMessage.received_at))
                       .group_by(InboundMessage.source).order_by(InboundMessage.source)).all()
    return _render(request, "sources.html.j2", moderator=who, states=source_states(s),
                   stored=[{"source": r[0], "mails": r[1], "last": r[2]} for r in stored])
