"""The console's login, sessions, CSRF and failed-login limits, through its
HTTP interface (Starlette's TestClient over the real app and store)."""

from __future__ import annotations

import pytest

from judge.web.auth import LoginLimiter, set_moderator
from tests.web.console_helpers import MOD, MOD_PASSWORD, add_moderator, client, csrf_of, log_in, make_harness


@pytest.fixture
def judge_and_client(tmp_path):
    h = make_harness(tmp_path)
    add_moderator(h)
    c = client(h)
    yield h, c
    c.close()
    h.close()


def test_login_opens_the_console_and_logout_closes_it(judge_and_client):
    h, c = judge_and_client
    h.mail("gm@example.test", "CREATE ?vienna gmpw")
    assert c.get("/console/").headers["location"] == "/console/login?next=%2Fconsole%2F"
    wrong = log_in(c, MOD, "not the password")
    assert wrong.status_code == 401 and "Wrong name or password." in wrong.text
    assert log_in(c, "nobody", MOD_PASSWORD).status_code == 401
    ok = log_in(c)
    assert ok.status_code == 303 and ok.headers["location"] == "/console/"
    home = c.get("/console/")
    assert home.status_code == 200 and "vienna" in home.text and f"<span>{MOD}</span>" in home.text
    assert home.headers["cache-control"] == "no-store" and home.headers["x-frame-options"] == "DENY"
    out = c.post("/console/logout", data={"csrf": csrf_of(home.text)})
    assert out.status_code == 303 and out.headers["location"] == "/console/login"
    assert c.get("/console/").status_code == 303


def test_a_new_token_after_login_and_the_old_one_is_refused(judge_and_client):
    h, c = judge_and_client
    before = csrf_of(c.get("/console/login").text)
    log_in(c)
    after = csrf_of(c.get("/console/").text)
    assert before != after
    assert c.post("/console/logout", data={"csrf": before}).status_code == 403
    assert c.get("/console/").status_code == 200  # still logged in


def test_a_new_password_ends_the_open_sessions(judge_and_client):
    h, c = judge_and_client
    log_in(c)
    assert c.get("/console/outbox").status_code == 200
    with h.judge.sessions.begin() as s:
        set_moderator(s, MOD, "another long password", h.clock.now(), cost=4)
    assert c.get("/console/outbox").status_code == 303
    assert log_in(c, MOD, "another long password").status_code == 303


def test_a_removed_account_is_logged_out(judge_and_client):
    from judge.web.auth import remove_moderator

    h, c = judge_and_client
    log_in(c)
    assert c.get("/console/").status_code == 200
    with h.judge.sessions.begin() as s:
        assert remove_moderator(s, MOD)
    assert c.get("/console/").status_code == 303
    assert log_in(c).status_code == 401


def test_login_goes_back_to_the_page_asked_for_but_never_off_the_console(judge_and_client):
    h, c = judge_and_client
    token = csrf_of(c.get("/console/login?next=/console/outbox").text)
    went = c.post("/console/login", data={"csrf": token, "name": MOD, "password": MOD_PASSWORD,
                                          "next": "/console/outbox"})
    assert went.headers["location"] == "/console/outbox"
    c.cookies.clear()
    for evil in ("https://evil.example/", "//evil.example/console/", "/console/\\\\evil.example", "/elsewhere"):
        token = csrf_of(c.get("/console/login").text)
        went = c.post("/console/login", data={"csrf": token, "name": MOD, "password": MOD_PASSWORD, "next": evil})
        assert went.headers["location"] == "/console/", evil
        c.cookies.clear()


def test_failed_logins_are_limited_per_address_and_the_limit_passes(judge_and_client):
    h, c = judge_and_client
    now = [1000.0]
    c.app.state.login_limiter = LoginLimiter(limit=5, window=900, clock=lambda: now[0])
    for _ in range(5):
        assert log_in(c, MOD, "guess").status_code == 401
    refused = log_in(c)  # even the right password: the address is refused for now
    assert refused.status_code == 429 and "Too many failed logins" in refused.text and "15 minutes" in refused.text
    assert c.get("/console/").status_code == 303  # not logged in
    now[0] += 600
    assert "about 5 minutes" in log_in(c).text
    now[0] += 301
    assert log_in(c).status_code == 303
    assert c.get("/console/").status_code == 200


@pytest.fixture
def store(migrated_database_url):
    """The sessions of a fresh store (SQLite and PostgreSQL)."""
    from judge.store.db import make_engine, session_factory, upgrade

    engine = make_engine(migrated_database_url)
    upgrade(engine)
    yield session_factory(engine)
    engine.dispose()


def test_the_limiter_counts_each_address_apart_and_forgets_after_a_success(store):
    now = [0.0]
    limits = LoginLimiter(limit=3, window=60, clock=lambda: now[0], sessions=store, address_limit=3)
    for _ in range(3):
        limits.failed("10.0.0.1")
    assert limits.wait("10.0.0.1") == 60 and limits.wait("10.0.0.2") == 0
    limits.failed("10.0.0.2")
    limits.succeeded("10.0.0.2")
    assert limits.wait("10.0.0.2") == 0
    now[0] = 30
    assert limits.wait("10.0.0.1") == 30
    now[0] = 60
    assert limits.wait("10.0.0.1") == 0


def test_old_failures_are_pruned_when_a_new_one_is_written(store):
    from sqlalchemy import func, select

    from judge.store.models import LoginFailure

    now = [0.0]
    limits = LoginLimiter(limit=5, window=900, clock=lambda: now[0], sessions=store)
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.1"):
        limits.failed(address)
    now[0] = 600
    limits.failed("10.0.0.3")
    now[0] = 900  # the first three are the window old: gone at the next failure, whoever's
    limits.failed("10.0.0.4")
    with store() as s:
        left = sorted(s.scalars(select(LoginFailure.address)).all())
    assert left == ["10.0.0.3", "10.0.0.4"]
    now[0] = 5000  # a refused attempt leaves no row either
    for _ in range(7):
        limits.attempt("10.0.0.5", "alice")
    with store() as s:
        assert s.scalar(select(func.count()).select_from(LoginFailure)) == 5


def test_a_login_lasts_a_working_day(tmp_path):
    from types import SimpleNamespace

    from judge.web.auth import SESSION_SECONDS, current_moderator, log_in as open_session

    h = make_harness(tmp_path)
    add_moderator(h)
    with h.judge.sessions() as s:
        from sqlalchemy import select

        from judge.store.models import Moderator

        row = s.scalars(select(Moderator)).one()
        request = SimpleNamespace(session={})
        open_session(request, row, now=1000.0, session=s)
        s.flush()
        assert current_moderator(request, s, now=1000.0 + SESSION_SECONDS) == MOD
        assert current_moderator(request, s, now=1001.0 + SESSION_SECONDS) is None
        assert request.session == {}  # the stale session is dropped
    h.close()


def test_logins_sent_at_once_cannot_pass_the_limit_together(store):
    import threading

    # Two limiters over one store: two web processes.
    limits = LoginLimiter(limit=5, window=900, sessions=store)
    other = LoginLimiter(limit=5, window=900, sessions=store)
    start, allowed = threading.Barrier(40), []

    def one(limiter: LoginLimiter) -> None:
        start.wait()
        if limiter.attempt("10.0.0.1", "alice") == 0:
            allowed.append(1)

    threads = [threading.Thread(target=one, args=(limits if i % 2 else other,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(allowed) == 5 and limits.wait("10.0.0.1", "alice") > 0


def test_the_log_names_no_password_tried(judge_and_client, caplog):
    h, c = judge_and_client
    with caplog.at_level("INFO", logger="judge.web.console"):
        log_in(c, "Typed1nTheNameField", "AndAGuess99")
        log_in(c)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "failed login from testclient" in logged and f"{MOD} logged in from testclient" in logged
    assert "Typed1nTheNameField" not in logged and "AndAGuess99" not in logged and MOD_PASSWORD not in logged
