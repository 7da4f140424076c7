"""The console's pages and actions over the real app and store (SQLite and
PostgreSQL), through Starlette's TestClient: a game's audit trail with its
filters, mails' masked sources and replies' delivery states, the outbox's
retry, a quarantined mail run again, the sources, /metrics."""

from __future__ import annotations

import re
import socket
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from judge.sources.watermark import WatermarkStore
from judge.store.models import Game, InboundMessage, OutboxMessage
from judge.syntax import nodes
from judge.transports.smtp import SmtpSettings, SmtpTransport
from tests.web.console_helpers import add_moderator, client, csrf_of, log_in, quarantine


@pytest.fixture
def console(harness):
    add_moderator(harness)
    c = client(harness)
    assert log_in(c).status_code == 303
    yield harness, c
    c.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _fail_sending(h) -> None:
    """From now on every send fails for good (a closed SMTP port, one attempt)."""
    h.judge.transport = SmtpTransport(SmtpSettings(host="127.0.0.1", port=_closed_port(), timeout=2))
    h.config = h.judge.config = type(h.config)(**{**h.config.__dict__, "max_attempts": 1})


def _trail(html: str) -> str:
    """The trail's table, without the filter's choices above it."""
    return html[html.index('id="trail"'):]


def test_the_audit_trail_in_time_order_filtered_by_player_and_kind(console):
    h, c = console
    h.mail("gm@example.test", "CREATE ?vienna gmpw\nSET DEADLINE +24h")
    h.mail("Ann Arbor <ann@example.test>", "SIGNON ?vienna annpw")
    h.mail("bob@example.test", "SIGNON ?vienna bobpw\nLIST ?vienna")
    page = c.get("/console/game/vienna")
    assert page.status_code == 200
    times = re.findall(r'<tr class="event [a-z_]+">\n<td>([0-9: -]+)</td>', page.text)
    assert len(times) > 8 and times == sorted(times)
    assert "mail in  #" in page.text and "line 1 of mail" in page.text and "SIGNON ?vienna ****" in page.text
    # Each reply's delivery: the harness's Maildir transport sent them all.
    assert page.text.count('class="delivery sent"') == page.text.count('class="event outbound"') > 0
    assert "Ann Arbor &lt;ann@example.test&gt; (active)" in page.text  # the player filter's choices
    ann = _trail(c.get("/console/game/vienna", params={"player": "ann@example.test"}).text)
    assert "ann@example.test" in ann and "bob@example.test" not in ann and "gm@example.test" not in ann
    bobs_commands = c.get("/console/game/vienna", params={"player": "bob@example.test", "kind": "command"}).text
    assert bobs_commands.count('class="event command"') == 2 and 'class="event inbound"' not in bobs_commands
    with h.judge.sessions() as s:
        bob_mail = s.scalars(select(InboundMessage.id).where(InboundMessage.sender == "bob@example.test")).one()
    assert f'href="/console/mail/{bob_mail}"' in c.get("/console/game/vienna").text
    source = c.get(f"/console/mail/{bob_mail}").text
    assert "From: bob@example.test" in source and "SIGNON ?vienna *****" in source and "LIST ?vienna" in source
    assert "bobpw" not in source
    assert c.get("/console/game/nosuch").status_code == 404


def test_a_failed_mail_is_retried_from_the_outbox_page(console):
    h, c = console
    h.mail("cat@example.test", "LIST")  # sent
    _fail_sending(h)
    h.mail("ann@example.test", "HELP")
    with h.judge.sessions() as s:
        failed, sent = (s.scalars(select(OutboxMessage.id).where(OutboxMessage.status == st)).one()
                        for st in ("failed", "sent"))
    page = c.get("/console/outbox").text
    assert f'id="outbox-{failed}" class="failed"' in page and f'id="outbox-{sent}"' not in page
    assert "Connection refused" in page or "refused" in page.lower()
    everything = c.get("/console/outbox?all=1").text
    row = everything[everything.index(f'id="outbox-{sent}"'):]
    assert 'class="sent"' in row[:40] and "Retry" not in row[:row.index("</tr>")]
    went = c.post(f"/console/outbox/{failed}/retry", data={"csrf": csrf_of(page)})
    assert went.status_code == 303 and went.headers["location"] == "/console/outbox"
    after = c.get("/console/outbox").text
    assert f"#{failed}: queued again" in after and f'id="outbox-{failed}" class="queued"' in after
    with h.judge.sessions() as s:
        row = s.get(OutboxMessage, failed)
        assert (row.status, row.attempts) == ("queued", 0)
    again = c.post(f"/console/outbox/{sent}/retry", data={"csrf": csrf_of(after)})
    assert again.status_code == 303 and "sent already" in c.get("/console/outbox").text
    # A mail the server may have (the judge stopped after handing it over) is
    # listed with a warning, and retried only when asked.
    with h.judge.sessions.begin() as s:
        s.execute(update(OutboxMessage).where(OutboxMessage.id == sent).values(status="unconfirmed"))
    listed = c.get("/console/outbox").text
    assert f'id="outbox-{sent}" class="unconfirmed"' in listed and "The server may have it already" in listed


def test_a_quarantined_mail_is_run_again_from_its_page(console, monkeypatch):
    h, c = console

    quarantine(h, monkeypatch, nodes.Help, "ann@example.test", "HELP", "boom in HELP", subject="help please")
    with h.judge.sessions() as s:
        mail_id = s.scalars(select(InboundMessage.id).where(InboundMessage.status == "quarantined")).one()
    page = c.get("/console/quarantine").text
    assert f'id="mail-{mail_id}"' in page and "RuntimeError: boom in HELP" in page and "help please" in page
    assert "Traceback" in page
    assert "Quarantined mails</a>: 1" in c.get("/console/").text
    source = c.get(f"/console/mail/{mail_id}").text
    assert "Why it was quarantined" in source and "boom in HELP" in source
    went = c.post(f"/console/quarantine/{mail_id}/rerun", data={"csrf": csrf_of(page)})
    assert went.status_code == 303
    after = c.get("/console/quarantine").text
    assert f"#{mail_id}: queued to run again" in after and "No mail is quarantined." in after
    h.run()  # the handler is mended: the daemon's next pass runs it
    with h.judge.sessions() as s:
        assert s.get(InboundMessage, mail_id).status == "done"
    assert "HELP" in h.body(h.last_to("ann@example.test")).upper()


def test_the_sources_page_shows_watermarks_and_last_errors(console):
    h, c = console
    h.mail("ann@example.test", "LIST")
    marks = WatermarkStore(h.judge.sessions)
    marks.note_error("imap:judge@mail.example/INBOX", "INBOX", "connect failed (ConnectionRefusedError: nope)")
    with h.judge.sessions.begin() as s:
        marks.advance(s, "discourse:judge@forum.example", 1, 4711, "https://forum.example")
    page = c.get("/console/sources").text
    assert "imap:judge@mail.example/INBOX" in page and "connect failed (ConnectionRefusedError: nope)" in page
    assert "nothing yet" in page  # no watermark before its first stored mail
    assert "discourse:judge@forum.example" in page and "4711" in page
    stored = page[page.index('id="stored"'):]
    assert "<td>maildir" in stored or "maildir" in stored
    # The row a failure made is no watermark: the IMAP source starts from nothing.
    assert marks.get("imap:judge@mail.example/INBOX") is None


def _metric(text: str, name: str) -> float:
    m = re.search(rf"^{re.escape(name)} ([0-9.e+]+)$", text, re.MULTILINE)
    assert m, name
    return float(m.group(1))


def test_metrics_read_the_store_at_scrape_time(console, monkeypatch):
    h, c = console
    h.mail("gm@example.test", "CREATE ?vienna gmpw")
    h.mail("ann@example.test", "SIGNON ?vienna annpw")
    first = c.get("/metrics")
    assert first.status_code == 200 and first.headers["content-type"].startswith("text/plain")
    assert _metric(first.text, "judge_mails_received_total") == 2
    assert _metric(first.text, 'judge_mails_sent_total{kind="reply"}') == 2
    assert _metric(first.text, 'judge_games{state="forming"}') == 1
    assert _metric(first.text, "judge_mail_processing_seconds_count") == 2
    _fail_sending(h)

    quarantine(h, monkeypatch, nodes.Help, "bob@example.test", "HELP", "boom")
    h.send("cat@example.test", "LIST")  # stored, not run yet
    h.judge.poll_sources()
    with h.judge.sessions.begin() as s:  # a game resolved 90 s after its deadline
        g = s.scalars(select(Game)).one()
        s.execute(update(Game).where(Game.id == g.id).values(
            deadline=h.clock.now(), resolved_at=h.clock.now() + timedelta(seconds=90), state="resolved"))
    # Another process wrote all this: the web's figures follow the store.
    later = c.get("/metrics").text
    assert _metric(later, "judge_mails_received_total") == 4
    assert _metric(later, 'judge_inbound_mails{status="quarantined"}') == 1
    assert _metric(later, 'judge_inbound_mails{status="new"}') == 1
    assert _metric(later, 'judge_outbox_mails{status="failed"}') == 1  # bob's apology could not go
    assert _metric(later, 'judge_games{state="resolved"}') == 1
    assert _metric(later, 'judge_resolution_delay_seconds_bucket{le="60.0"}') == 0
    assert _metric(later, 'judge_resolution_delay_seconds_bucket{le="300.0"}') == 1
    assert _metric(later, "judge_resolution_delay_seconds_sum") == pytest.approx(90, abs=1)
    assert "@example.test" not in later and "vienna" not in later  # counts only
