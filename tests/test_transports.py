"""Transports: the Maildir one (idempotent files) and SMTP against a real server."""

from __future__ import annotations

import email
import email.policy
import os
import pickle
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

import pytest

from judge.mail.outbound import compose, make_message_id
from judge.transports.base import OutgoingMail, Transport, TransportError
from judge.transports.maildir import MaildirTransport, message_file_name, read_all
from judge.transports.smtp import SmtpSettings, SmtpTransport
from tests.smtp_server import USERNAME, SmtpTestServer, free_port

ServerFactory = Callable[..., SmtpTestServer]
TransportFactory = Callable[[SmtpSettings], SmtpTransport]


def outgoing(token: str = "1", recipients: tuple[str, ...] = ("anna@example.com",)) -> OutgoingMail:
    message_id = make_message_id("judge.example.org", token)
    raw = compose(
        sender="judge@judge.example.org",
        to=list(recipients),
        subject=f"mail {token}",
        body="Grüße\n",
        message_id=message_id,
        date=datetime(2026, 3, 3, 12, 0, tzinfo=timezone.utc),
    )
    return OutgoingMail(
        message_id=message_id, envelope_from="judge@judge.example.org", recipients=recipients, raw=raw
    )


@pytest.fixture
def transports() -> Iterator[TransportFactory]:
    """SmtpTransport maker that closes what it made."""
    made: list[SmtpTransport] = []

    def make(settings: SmtpSettings) -> SmtpTransport:
        transport = SmtpTransport(settings)
        made.append(transport)
        return transport

    yield make
    for transport in made:
        transport.close()


# -------------------------------------------------------------------- basics


def test_transport_error_carries_temporary_and_survives_pickling() -> None:
    error = TransportError("451 later", temporary=True)
    assert error.temporary is True and str(error) == "451 later"
    copy = pickle.loads(pickle.dumps(error))
    assert copy.temporary is True and str(copy) == "451 later"
    assert TransportError("550 no", temporary=False).temporary is False


def test_smtp_settings_validate_security() -> None:
    with pytest.raises(ValueError):
        SmtpSettings(security="ssl")
    assert "s3cr" not in repr(SmtpSettings(username="u", password="s3cr"))


# ------------------------------------------------------------------- Maildir


def test_maildir_transport_writes_the_raw_mail(tmp_path: Path) -> None:
    transport = MaildirTransport(tmp_path / "out")
    assert isinstance(transport, Transport)
    mail = outgoing("a")
    transport.send(mail)
    assert read_all(tmp_path / "out") == [mail.raw]
    assert (tmp_path / "out" / "new" / message_file_name(mail.message_id)).read_bytes() == mail.raw
    assert list((tmp_path / "out" / "tmp").iterdir()) == []  # no leftovers


def test_maildir_transport_is_idempotent(tmp_path: Path) -> None:
    transport = MaildirTransport(tmp_path)
    mail = outgoing("a")
    transport.send(mail)
    transport.send(mail)
    assert read_all(tmp_path) == [mail.raw]
    assert len(list((tmp_path / "new").iterdir())) == 1

    # Also after a reader moved it to cur/ and marked it seen.
    name = message_file_name(mail.message_id)
    (tmp_path / "new" / name).rename(tmp_path / "cur" / f"{name}:2,S")
    transport.send(mail)
    assert read_all(tmp_path) == [mail.raw]

    other = outgoing("b")
    transport.send(other)
    # Sorted: both may share one file-time tick (see the next test for order).
    assert sorted(read_all(tmp_path)) == sorted([mail.raw, other.raw])


def test_read_all_returns_delivery_order(tmp_path: Path) -> None:
    transport = MaildirTransport(tmp_path)
    mails = [outgoing(str(n)) for n in range(6)]
    for n, mail in enumerate(mails):
        transport.send(mail)
        path = tmp_path / "new" / message_file_name(mail.message_id)
        os.utime(path, ns=(1_000_000_000 * (n + 1), 1_000_000_000 * (n + 1)))
    assert read_all(tmp_path) == [m.raw for m in mails]


def test_maildir_transport_write_failure_is_temporary(tmp_path: Path) -> None:
    transport = MaildirTransport(tmp_path)
    (tmp_path / "tmp").rmdir()
    (tmp_path / "tmp").write_text("not a directory")
    with pytest.raises(TransportError) as caught:
        transport.send(outgoing("a"))
    assert caught.value.temporary is True


# ---------------------------------------------------------------------- SMTP


@pytest.mark.parametrize("mode", ["plain", "starttls", "tls"])
def test_smtp_delivers_in_every_mode_with_auth(
    mode: str, smtp_server_factory: ServerFactory, transports: TransportFactory
) -> None:
    server = smtp_server_factory(mode, auth=True)
    mail = outgoing("m", recipients=("anna@example.com", "bob@example.net"))
    transports(server.settings()).send(mail)

    (received,) = server.messages
    assert received.mail_from == "judge@judge.example.org"
    assert received.rcpt_tos == ("anna@example.com", "bob@example.net")
    assert received.auth_user == USERNAME
    assert received.tls is (mode != "plain")
    assert received.raw.rstrip(b"\r\n") == mail.raw.rstrip(b"\r\n")
    parsed = email.message_from_bytes(received.raw, policy=email.policy.default)
    assert parsed["Message-ID"] == mail.message_id
    assert parsed.get_content().replace("\r\n", "\n") == "Grüße\n"


def test_smtp_fixture_server_without_auth(
    smtp_server: SmtpTestServer, transports: TransportFactory
) -> None:
    transports(smtp_server.settings()).send(outgoing("plain"))
    assert [m.auth_user for m in smtp_server.messages] == [None]


def test_smtp_bare_lf_and_leading_dots_arrive_intact(
    smtp_server: SmtpTestServer, transports: TransportFactory
) -> None:
    raw = b"From: judge@x.org\nSubject: dots\n\n.hidden?\n..two\nend\n"
    transports(smtp_server.settings()).send(
        OutgoingMail(message_id="<d@x>", envelope_from="judge@x.org", recipients=("p@y.org",), raw=raw)
    )
    assert smtp_server.messages[0].raw.rstrip(b"\r\n") == raw.replace(b"\n", b"\r\n").rstrip(b"\r\n")


def test_smtp_wrong_password_is_permanent(
    smtp_server_factory: ServerFactory, transports: TransportFactory
) -> None:
    server = smtp_server_factory("starttls", auth=True)
    with pytest.raises(TransportError) as caught:
        transports(server.settings(password="wrong")).send(outgoing())
    assert caught.value.temporary is False
    assert "535" in str(caught.value)
    assert server.messages == []


def test_smtp_untrusted_certificate_is_permanent_unless_verify_off(
    smtp_server_factory: ServerFactory, transports: TransportFactory
) -> None:
    server = smtp_server_factory("tls")
    with pytest.raises(TransportError) as caught:
        transports(server.settings(cafile=None)).send(outgoing())
    assert caught.value.temporary is False
    assert "certificate" in str(caught.value)
    transports(server.settings(cafile=None, verify=False)).send(outgoing())
    assert len(server.messages) == 1


def test_smtp_server_down_is_temporary(transports: TransportFactory) -> None:
    settings = SmtpSettings(host="127.0.0.1", port=free_port(), timeout=2.0, local_hostname="judge.test")
    with pytest.raises(TransportError) as caught:
        transports(settings).send(outgoing())
    assert caught.value.temporary is True


@pytest.mark.parametrize(
    ("command", "reply", "temporary"),
    [
        ("RCPT", "550 5.1.1 No such user here", False),
        ("RCPT", "451 4.7.1 Greylisted, try again later", True),
        ("MAIL", "553 5.7.1 Sender rejected", False),
        ("MAIL", "452 4.3.1 Insufficient system storage", True),
        ("DATA", "554 5.7.1 Message rejected as spam", False),
        ("DATA", "451 4.3.0 Local error in processing", True),
    ],
)
def test_smtp_error_replies_are_classified(
    command: str,
    reply: str,
    temporary: bool,
    smtp_server: SmtpTestServer,
    transports: TransportFactory,
) -> None:
    smtp_server.fail(command, reply)
    transport = transports(smtp_server.settings())
    with pytest.raises(TransportError) as caught:
        transport.send(outgoing())
    assert caught.value.temporary is temporary
    code, text = reply.split(" ", 1)
    assert code in str(caught.value) and text in str(caught.value)
    assert smtp_server.messages == []

    # The session is still good for the next mail once the server relents.
    smtp_server.clear_faults()
    transport.send(outgoing("next"))
    assert len(smtp_server.messages) == 1
    assert smtp_server.connections == 1


def test_smtp_some_recipients_refused_still_delivers_to_the_rest(
    smtp_server: SmtpTestServer, transports: TransportFactory
) -> None:
    smtp_server.fail("RCPT", "550 5.1.1 unknown", address="gone@example.com")
    transports(smtp_server.settings()).send(outgoing(recipients=("gone@example.com", "anna@example.com")))
    assert [m.rcpt_tos for m in smtp_server.messages] == [("anna@example.com",)]


def test_smtp_reuses_one_connection(
    smtp_server: SmtpTestServer, transports: TransportFactory
) -> None:
    transport = transports(smtp_server.settings())
    transport.send(outgoing("1"))
    transport.send(outgoing("2"))
    transport.send(outgoing("3"))
    assert [m.raw for m in smtp_server.messages] == [outgoing(t).raw for t in "123"]
    assert smtp_server.connections == 1


def test_smtp_recovers_after_server_restart_between_sends(
    smtp_server_factory: ServerFactory, transports: TransportFactory
) -> None:
    server = smtp_server_factory("starttls", auth=True)
    transport = transports(server.settings())
    transport.send(outgoing("before"))
    server.restart()  # drops the open connection, same port
    transport.send(outgoing("after"))
    assert [m.raw for m in server.messages] == [outgoing("before").raw, outgoing("after").raw]
    assert server.connections == 1  # exactly one reconnect after the restart


def test_smtp_outage_then_recovery(
    smtp_server: SmtpTestServer, transports: TransportFactory
) -> None:
    transport = transports(smtp_server.settings())
    transport.send(outgoing("1"))
    smtp_server.stop()
    with pytest.raises(TransportError) as caught:
        transport.send(outgoing("2"))
    assert caught.value.temporary is True
    smtp_server.start()
    transport.send(outgoing("2"))
    assert [m.raw for m in smtp_server.messages] == [outgoing("1").raw, outgoing("2").raw]


def test_smtp_close_is_idempotent_and_send_reconnects(
    smtp_server: SmtpTestServer, transports: TransportFactory
) -> None:
    transport = transports(smtp_server.settings())
    transport.send(outgoing("1"))
    transport.close()
    transport.close()
    transport.send(outgoing("2"))
    assert len(smtp_server.messages) == 2
    assert smtp_server.connections == 2


def test_smtp_no_recipients_is_permanent(transports: TransportFactory) -> None:
    mail = OutgoingMail(message_id="<x@y>", envelope_from="a@b.org", recipients=(), raw=b"x")
    with pytest.raises(TransportError) as caught:
        transports(SmtpSettings(port=free_port())).send(mail)
    assert caught.value.temporary is False


# ------------------------------------------------- batches, pipelining (issue 29)


class RecordingProxy:
    """A TCP relay between the transport and the server that keeps what the
    client wrote, chunk by chunk as it came: commands the client sent
    without waiting for a reply arrive together."""

    def __init__(self, target_port: int) -> None:
        import socket
        import threading

        self.target_port = target_port
        self.chunks: list[bytes] = []
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.port = self.listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._start(self._accept)

    def _start(self, target, *args) -> None:  # type: ignore[no-untyped-def]
        import threading

        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        import socket

        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self._start(self._pump, client, upstream, True)
            self._start(self._pump, upstream, client, False)

    def _pump(self, source, sink, record: bool) -> None:  # type: ignore[no-untyped-def]
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if record:
                    self.chunks.append(data)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                try:
                    s.close()
                except OSError:
                    pass

    def close(self) -> None:
        self.listener.close()


def _batch(transport: SmtpTransport, mails, ours=None):  # type: ignore[no-untyped-def]
    """send_batch with a commit point that records each group (and keeps
    only `ours`, if given); returns (groups, outcomes)."""
    groups: list[list[str]] = []
    outcomes: dict[str, object] = {}

    def commit(group):  # type: ignore[no-untyped-def]
        groups.append([m.message_id for m in group])
        return {m.message_id for m in group if ours is None or m.message_id in ours}

    transport.send_batch(mails, commit, lambda mail, outcome: outcomes.__setitem__(mail.message_id, outcome))
    return groups, outcomes


@pytest.mark.parametrize("pipelining", [True, False])
def test_smtp_pipelines_where_the_server_offers_it(
    pipelining: bool, smtp_server_factory: ServerFactory, transports: TransportFactory
) -> None:
    """MAIL, RCPT and DATA in one write, and a mail's final dot with the next
    mail's commands (RFC 2920): one round trip a mail. Only where the server
    says PIPELINING."""
    server = smtp_server_factory("plain", pipelining=pipelining)
    proxy = RecordingProxy(server.port)
    try:
        transport = transports(server.settings(port=proxy.port))
        mails = [outgoing(str(i), recipients=("anna@example.com", "bob@example.net")) for i in range(5)]
        groups, outcomes = _batch(transport, mails)
        transport.close()
    finally:
        proxy.close()
    assert outcomes == {m.message_id: None for m in mails}
    assert [m.raw for m in server.messages] == [m.raw for m in mails]
    assert groups == [[m.message_id] for m in mails]  # one connection: a commit point each, in order
    # What the proxy read at once (a busy proxy may read two writes as one,
    # never a round trip's two sides: without pipelining the client waits
    # for each answer, so these never meet in one read).
    together = any(b"MAIL FROM" in c and b"RCPT TO" in c and c.endswith(b"DATA\r\n") for c in proxy.chunks)
    dot_and_next = any(b"\r\n.\r\nMAIL FROM:" in c or c.startswith(b".\r\nMAIL FROM:") for c in proxy.chunks)
    assert (together, dot_and_next) == (pipelining, pipelining)
    assert server.connections == 1


def test_smtp_sends_a_batch_side_by_side_with_one_commit_point_a_round(
    smtp_server_factory: ServerFactory, transports: TransportFactory
) -> None:
    server = smtp_server_factory("plain", pipelining=True)
    transport = transports(server.settings(connections=3))
    mails = [outgoing(str(i)) for i in range(7)]
    groups, outcomes = _batch(transport, mails)
    ids = [m.message_id for m in mails]
    assert groups == [ids[0:3], ids[3:6], ids[6:7]]
    assert outcomes == {i: None for i in ids}
    assert sorted(m.raw for m in server.messages) == sorted(m.raw for m in mails)
    assert server.connections == 3


def test_smtp_abandons_a_mail_the_outbox_no_longer_holds(
    smtp_server_factory: ServerFactory, transports: TransportFactory
) -> None:
    """The commit point says which mails are still ours: another is dropped
    before its final dot (the server throws the unfinished mail away)."""
    from judge.transports.base import ClaimLost

    server = smtp_server_factory("plain", pipelining=True)
    transport = transports(server.settings(connections=2))
    mails = [outgoing("kept"), outgoing("lost")]
    _, outcomes = _batch(transport, mails, ours={mails[0].message_id})
    assert outcomes[mails[0].message_id] is None and isinstance(outcomes[mails[1].message_id], ClaimLost)
    assert [m.raw for m in server.messages] == [mails[0].raw]
    _, outcomes = _batch(transport, [outgoing("after")])  # a new connection where one was dropped
    assert list(outcomes.values()) == [None] and len(server.messages) == 2


def test_smtp_sends_no_dot_when_the_commit_point_cannot_be_recorded(
    smtp_server: SmtpTestServer, transports: TransportFactory
) -> None:
    transport = transports(smtp_server.settings())

    def commit(group):  # type: ignore[no-untyped-def]
        raise OSError("the store is gone")

    outcomes: dict[str, object] = {}
    transport.send_batch([outgoing("1")], commit, lambda mail, outcome: outcomes.__setitem__(mail.message_id, outcome))
    (error,) = outcomes.values()
    assert isinstance(error, TransportError) and error.temporary and not error.unconfirmed
    assert "commit point could not be recorded" in str(error)
    assert smtp_server.messages == []


def test_smtp_a_connection_lost_after_the_dot_is_unconfirmed(
    smtp_server_factory: ServerFactory, transports: TransportFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server took the mail and the connection broke before its answer
    came: the one case SMTP cannot settle (RFC 1047)."""
    from tests import smtp_server as servers

    class TakesItAndHangsUp(servers._Handler):
        async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
            await super().handle_DATA(server, session, envelope)
            server.transport.abort()
            return "250 OK"

    monkeypatch.setattr(servers, "_Handler", TakesItAndHangsUp)
    server = smtp_server_factory("plain")
    _, outcomes = _batch(transports(server.settings()), [outgoing("1"), outgoing("2")])
    first = outcomes[outgoing("1").message_id]
    assert isinstance(first, TransportError) and first.unconfirmed and "may have it" in str(first)
    assert len(server.messages) == 2  # each on a new connection; each unconfirmed
    assert all(isinstance(o, TransportError) and o.unconfirmed for o in outcomes.values())


def test_smtp_sets_tcp_nodelay(smtp_server: SmtpTestServer, transports: TransportFactory) -> None:
    """A small write (the dot) must not wait ~40 ms for the server's delayed
    ACK of the body before it."""
    import socket

    transport = transports(smtp_server.settings())
    transport.send(outgoing("1"))
    conn = transport._lanes[0].conn
    assert conn is not None and conn.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
