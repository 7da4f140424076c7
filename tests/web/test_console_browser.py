"""The console in a real headless Chromium against a real server (uvicorn
on a loopback port) over SQLite and PostgreSQL: a moderator logs in, retries
a failed mail from the outbox page and runs a quarantined mail again; the
daemon's next pass then sends the one and runs the other."""

from __future__ import annotations

from sqlalchemy import select

from judge.store.models import InboundMessage, OutboxMessage
from judge.syntax import nodes
from judge.transports.maildir import MaildirTransport
from tests.web.console_helpers import MOD, MOD_PASSWORD, add_moderator, quarantine
from tests.web.test_console_pages import _fail_sending


def _on_the_judges_clock(harness, live_web) -> None:
    """The console stamps its actions with the harness's clock, as the
    daemon's own (a retried mail is due at the judge's now)."""
    live_web.background.server.config.app.state.clock = harness.clock


def _login(page, url: str, password: str = MOD_PASSWORD) -> None:
    page.goto(url + "/console/outbox")
    assert "/console/login" in page.url  # the page asked for waits behind the login
    page.fill("input[name=name]", MOD)
    page.fill("input[name=password]", password)
    page.click("#login button[type=submit]")


def test_login_in_the_browser(harness, live_web, page):
    add_moderator(harness)
    harness.mail("gm@example.test", "CREATE ?vienna gmpw")
    harness.mail("ann@example.test", "SIGNON ?vienna annpw")
    _login(page, live_web.url, "a wrong password")
    assert page.locator("p.error").inner_text() == "Wrong name or password."
    assert "/console/login" in page.url
    page.fill("input[name=name]", MOD)
    page.fill("input[name=password]", MOD_PASSWORD)
    page.click("#login button[type=submit]")
    assert page.url.endswith("/console/outbox")  # back to the page first asked for
    assert page.locator("nav.console span").inner_text() == MOD
    page.click("nav.console a[href='/console/']")
    page.click("#games a:text('vienna')")
    assert "?vienna: the audit trail" in page.locator("h1").inner_text()
    everyone = page.locator("#trail tr.event").count()
    assert everyone > 6
    # The filter: Ann's mails and what they caused, then only their commands.
    page.select_option("select[name=player]", "ann@example.test")
    page.click("#filter button")
    anns = page.locator("#trail tr.event")
    assert 0 < anns.count() < everyone and "gm@example.test" not in page.locator("#trail").inner_text()
    page.select_option("select[name=kind]", "command")
    page.click("#filter button")
    assert page.locator("#trail tr.event").count() == 1
    assert "SIGNON ?vienna ****" in page.locator("#trail").inner_text()
    assert "annpw" not in page.content()
    page.click("nav.console button:text('Log out')")
    assert "/console/login" in page.url
    page.goto(live_web.url + "/console/")
    assert "/console/login" in page.url


def test_retry_from_the_outbox_page(harness, live_web, page):
    add_moderator(harness)
    _on_the_judges_clock(harness, live_web)
    working = harness.judge.transport
    _fail_sending(harness)
    harness.mail("ann@example.test", "HELP")
    with harness.judge.sessions() as s:
        row_id = s.scalars(select(OutboxMessage.id)).one()
        assert s.get(OutboxMessage, row_id).status == "failed"
    _login(page, live_web.url)
    row = page.locator(f"#outbox-{row_id}")
    assert row.locator("td.status").inner_text() == "failed"
    row.locator("button:text('Retry')").click()
    assert f"#{row_id}: queued again" in page.locator("p.flash").inner_text()
    assert page.locator(f"#outbox-{row_id} td.status").inner_text() == "queued"
    # The cause mended (the mail server is back): the next pass sends it.
    harness.judge.transport = working
    assert isinstance(working, MaildirTransport)
    harness.run()
    with harness.judge.sessions() as s:
        assert s.get(OutboxMessage, row_id).status == "sent"
    assert "HELP" in harness.body(harness.last_to("ann@example.test")).upper()
    page.reload()
    assert "Nothing waits and nothing failed." in page.locator("main").inner_text()


def test_rerun_of_a_quarantined_mail(harness, live_web, page, monkeypatch):
    add_moderator(harness)
    _on_the_judges_clock(harness, live_web)

    quarantine(harness, monkeypatch, nodes.ListGame, "bob@example.test", "LIST", "boom in LIST", subject="what games?")
    with harness.judge.sessions() as s:
        mail_id = s.scalars(select(InboundMessage.id)).one()
        assert s.get(InboundMessage, mail_id).status == "quarantined"
    _login(page, live_web.url)
    page.click("nav.console a:text('Quarantine')")
    row = page.locator(f"#mail-{mail_id}")
    assert "RuntimeError: boom in LIST" in row.inner_text() and "what games?" in row.inner_text()
    row.locator("summary").click()
    assert "Traceback" in row.locator("details pre").inner_text()
    row.locator("button:text('Run again')").click()
    assert f"#{mail_id}: queued to run again" in page.locator("p.flash").inner_text()
    assert page.locator(f"#mail-{mail_id}").count() == 0
    harness.run()  # the handler is mended: the daemon's next pass runs it
    with harness.judge.sessions() as s:
        assert s.get(InboundMessage, mail_id).status == "done"
    replies = harness.sent_to("bob@example.test")
    assert len(replies) == 2  # the apology, then the answer
    page.goto(live_web.url + f"/console/mail/{mail_id}")
    assert ": done" in page.locator("main p").first.inner_text()
