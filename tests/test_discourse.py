"""The Discourse source and transport against a fake forum on loopback, and
the whole judge reading and answering forum posts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import sessionmaker

from judge.mail.inbound import parse_message
from judge.mail.outbound import compose
from judge.sources.discourse import DiscourseSettings, DiscourseSource
from judge.sources.watermark import WatermarkStore
from judge.store.models import Base, InboundMessage
from judge.transports.base import OutgoingMail, Transport, TransportError
from judge.transports.discourse import CompositeTransport, DiscourseTransport
from tests.discourse_server import FakeDiscourse
from tests.harness import JUDGE, Harness

KEY = "test-key"


@pytest.fixture
def forum():
    with FakeDiscourse(KEY, ["judge", "ann", "bob", "cat"], page_size=5) as f:
        yield f


@pytest.fixture
def watermarks(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'w.sqlite3'}")
    Base.metadata.create_all(engine)
    yield WatermarkStore(sessionmaker(engine))
    engine.dispose()


def settings(forum: FakeDiscourse, **kw) -> DiscourseSettings:
    return DiscourseSettings(base_url=forum.url, api_key=KEY, username="judge", timeout=5.0,
                             backoff_initial=0.0, **kw)


def drain(source: DiscourseSource) -> list:
    mails = source.fetch()
    for m in mails:
        source.ack(m)
    return mails


def test_fetches_new_posts_oldest_first_as_mail(forum, watermarks):
    t1 = forum.add_topic("Game ?g signups", "ann", "CREATE stuff")
    forum.add_post(t1, "judge", "judge's own answer")
    p2 = forum.add_post(t1, "bob", "SIGNON ?g pw\nSET PREFERENCE EFG")
    t2 = forum.add_topic("Other", "cat", "hello")
    for i in range(8):  # more than one page of /posts.json
        forum.add_post(t2, "cat", f"line {i}")
    src = DiscourseSource(settings(forum, users={"Bob": "bob@mail.test"}), watermarks)
    mails = src.fetch()
    parsed = [parse_message(m.raw) for m in mails]
    assert [m.text.strip() for m in parsed] == ["CREATE stuff", "SIGNON ?g pw\nSET PREFERENCE EFG", "hello"] + [
        f"line {i}" for i in range(8)]
    assert [int(m.ref) for m in mails] == sorted(int(m.ref) for m in mails)
    ann, bob = parsed[0], parsed[1]
    host = "127.0.0.1"
    assert ann.sender == f"ann@{host}.invalid" and ann.sender_name == "ann"
    assert bob.sender == "bob@mail.test" and bob.subject == "Game ?g signups"
    assert bob.message_id == f"<discourse-post-{p2}@{host}>" and bob.auto is None
    assert f"X-Judge-Reply-To: discourse:{t1}" in mails[1].raw.decode()
    assert all("own answer" not in m.text for m in parsed)


def test_watermark_survives_a_new_instance_and_pms_are_read(forum, watermarks):
    t = forum.add_topic("Game", "ann", "first")
    src = DiscourseSource(settings(forum), watermarks)
    assert len(drain(src)) == 1
    assert src.fetch() == []
    pm = forum.add_pm("secret bids", "bob", ["judge"], "BID 5")
    forum.add_post(t, "cat", "second")
    again = DiscourseSource(settings(forum), watermarks)
    mails = drain(again)
    parsed = [parse_message(m.raw) for m in mails]
    assert [(m.text.strip(), m.subject) for m in parsed] == [("BID 5", "secret bids"), ("second", "Game")]
    assert f"discourse:{pm}" in mails[0].raw.decode()
    forum.add_post(pm, "judge", "noted")  # the judge's own answer is never read back
    assert DiscourseSource(settings(forum), watermarks).fetch() == []
    # Long PM topics: posts beyond the first chunk are loaded by id.
    forum.chunk_size = 2
    forum.add_post(pm, "bob", "BID 7")
    assert [parse_message(m.raw).text.strip() for m in drain(again)] == ["BID 7"]


def test_watched_topics_and_html_posts(forum, watermarks):
    keep = forum.add_topic("Game", "ann", "in")
    forum.add_topic("Chat", "bob", "out")
    forum.send_raw = False
    forum.add_pm("pm", "cat", ["judge"], "<b>bold</b> text")
    src = DiscourseSource(settings(forum, topic_ids={keep}), watermarks)
    texts = [parse_message(m.raw).text.strip() for m in drain(src)]
    assert texts[0] == "in" and "bold" in texts[1] and "<b>" not in texts[1] and len(texts) == 2


def test_network_errors_give_nothing_then_recover(forum, watermarks):
    forum.add_topic("Game", "ann", "hi")
    src = DiscourseSource(settings(forum), watermarks)
    forum.fail_next(1, 500, None)
    assert src.fetch() == []
    assert len(src.fetch()) == 1
    forum.fail_next(1, 429, "0")
    assert src.fetch() == []
    bad = DiscourseSource(DiscourseSettings(base_url=forum.url, api_key="wrong", username="judge"), watermarks,
                          name="other")
    assert bad.fetch() == []
    forum.stop()
    assert src.fetch() == []


def _reply(forum, to: list[str], in_reply_to: str | None, body: str = "Done: signed on", headers=None,
           message_id: str = "<judge.x1@example.test>"):
    raw = compose(sender=JUDGE, to=to, subject="Re: Game", body=body, message_id=message_id,
                  date=datetime(2026, 3, 1, tzinfo=UTC), in_reply_to=in_reply_to, extra_headers=headers)
    return OutgoingMail(message_id, JUDGE, tuple(to), raw)


def test_transport_replies_in_the_topic(forum):
    t = forum.add_topic("Game", "ann", "hi")
    p = forum.add_post(t, "bob", "SIGNON")
    other = forum.add_topic("Other", "cat", "x")
    tr = DiscourseTransport(settings(forum, users={"bob": "bob@mail.test"}))
    tr.send(_reply(forum, ["bob@mail.test"], f"<discourse-post-{p}@127.0.0.1>"))
    assert forum.replies[-1].topic_id == t and forum.replies[-1].raw == "Done: signed on"
    assert forum.replies[-1].username == "judge"
    tr.send(_reply(forum, ["cat@127.0.0.1.invalid"], None, "header route",
                   headers={"X-Judge-Reply-To": f"discourse:{other}"}))
    assert forum.replies[-1].topic_id == other
    n = len(forum.replies)
    tr.send(_reply(forum, ["bob@mail.test"], f"<discourse-post-{p}@127.0.0.1>"))  # a retry: not posted twice
    assert len(forum.replies) == n
    with pytest.raises(TransportError) as err:
        tr.send(_reply(forum, ["nobody@127.0.0.1.invalid"], None, "where to?"))
    assert not err.value.temporary


def test_transport_errors(forum):
    t = forum.add_topic("Game", "ann", "hi")
    p = forum.add_post(t, "bob", "SIGNON")
    tr = DiscourseTransport(settings(forum))
    mail = _reply(forum, ["bob@127.0.0.1.invalid"], f"<discourse-post-{p}@127.0.0.1>")
    forum.fail_next(1, 429, "42")
    with pytest.raises(TransportError) as err:
        tr.send(mail)
    assert err.value.temporary and "429" in str(err.value) and "Retry-After: 42" in str(err.value)
    forum.fail_next(1, 502, None)
    with pytest.raises(TransportError) as err:
        tr.send(mail)
    assert err.value.temporary
    bad = DiscourseTransport(DiscourseSettings(base_url=forum.url, api_key="wrong", username="judge"))
    with pytest.raises(TransportError) as err:
        bad.send(mail)
    assert not err.value.temporary and "403" in str(err.value)
    with pytest.raises(TransportError) as err:
        tr.send(_reply(forum, ["bob@127.0.0.1.invalid"], "<discourse-post-999999@127.0.0.1>"))
    assert not err.value.temporary  # the post is gone
    tr.send(mail)
    assert [r.topic_id for r in forum.replies] == [t]
    forum.stop()
    with pytest.raises(TransportError) as err:
        tr.send(_reply(forum, ["bob@127.0.0.1.invalid"], None, headers={"X-Judge-Reply-To": f"discourse:{t}"},
                       message_id="<judge.x2@example.test>"))
    assert err.value.temporary


class Recorder(Transport):
    name = "recorder"

    def __init__(self) -> None:
        self.sent: list[OutgoingMail] = []

    def send(self, mail: OutgoingMail, commit_point=None) -> None:
        self.sent.append(mail)


def test_composite_routes_by_recipient(forum):
    t = forum.add_topic("Game", "ann", "hi")
    rec = Recorder()
    tr = CompositeTransport([DiscourseTransport(settings(forum, fallback_topic=t)), rec])
    tr.send(_reply(forum, ["gm@example.test", "ann@127.0.0.1.invalid"], None, "results"))
    assert [m.recipients for m in rec.sent] == [("gm@example.test",)]
    assert forum.replies[-1].raw == "@ann\n\nresults" and forum.replies[-1].topic_id == t
    tr.send(_reply(forum, ["gm@example.test"], None, "mail only"))
    assert len(rec.sent) == 2 and len(forum.replies) == 1


def test_end_to_end_signon_on_the_forum(forum, tmp_path):
    h = Harness(tmp_path / "data", "sqlite:///" + str(tmp_path / "j.sqlite3"))
    try:
        st = settings(forum, users={"cat": "cat@example.test"})
        maildir = h.judge.sources[0]
        h.judge.sources = [maildir, DiscourseSource(st, WatermarkStore(h.judge.sessions))]
        h.judge.transport = CompositeTransport([DiscourseTransport(st), h.judge.transport])
        h.mail("gm@example.test", "create ?g gmpw preference standard\nsignoff")
        assert "?g" in h.body(h.last_to("gm@example.test"))
        topic = forum.add_topic("Game ?g: sign up here", "ann", "Who plays?")
        # Chat is not a command: the opening post gets no public error reply.
        h.run()
        assert forum.replies == []
        before = len(forum.replies)
        forum.add_post(topic, "bob", "SIGNON ?g pw\nSET PREFERENCE EFG\nSIGNOFF")
        h.run()
        answers = forum.replies[before:]
        assert len(answers) == 1 and answers[0].topic_id == topic and answers[0].username == "judge"
        assert "?g" in answers[0].raw and "preference" in answers[0].raw.lower()
        # The judge does not read its own answer back.
        h.run()
        assert len(forum.replies) == before + 1
        # A registered player: the post counts as cat's mail, the answer goes to the topic.
        forum.add_post(topic, "cat", "SIGNON ?g pw\nSET PREFERENCE F\nSIGNOFF")
        h.run()
        assert forum.replies[-1].topic_id == topic and len(forum.replies) == before + 2
        with h.judge.sessions() as s:
            senders = [r.sender for r in s.scalars(select(InboundMessage).order_by(InboundMessage.id))]
        assert senders[-2:] == ["bob@127.0.0.1.invalid", "cat@example.test"]
    finally:
        h.close()


def test_end_to_end_flood_is_read_in_order(forum, tmp_path):
    h = Harness(tmp_path / "data", "sqlite:///" + str(tmp_path / "j.sqlite3"))
    try:
        st = settings(forum)
        h.judge.sources = [DiscourseSource(st, WatermarkStore(h.judge.sessions))]
        topic = forum.add_topic("Chatter", "ann", "post 0")
        users = ["ann", "bob", "cat"]
        for i in range(1, 60):
            forum.add_post(topic, users[i % 3], f"post {i}")
        pm = forum.add_pm("pm", "bob", ["judge"], "post 60")
        forum.add_post(topic, "cat", "post 61")
        forum.add_post(pm, "bob", "post 62")
        assert h.judge.poll_sources() == 63
        assert h.judge.poll_sources() == 0
        with h.judge.sessions() as s:
            rows = s.scalars(select(InboundMessage).order_by(InboundMessage.id)).all()
            texts = [parse_message(r.raw).text.strip() for r in rows]
        assert texts == [f"post {i}" for i in range(63)]
    finally:
        h.close()


def test_a_forum_section_in_the_config_adds_the_forum(tmp_path):
    """[forum] gives the daemon a Discourse source beside its inbox, and a
    transport that posts forum players' replies in their topics."""
    from judge.app import build_judge
    from judge.config import ConfigError, load_config
    from judge.sources.discourse import DiscourseSource
    from judge.transports.discourse import CompositeTransport

    config = load_config(None, data_dir=tmp_path / "data", overrides={
        "judge": {"database": f"sqlite:///{tmp_path / 'j.sqlite3'}"},
        "forum": {"base_url": "http://127.0.0.1:9", "api_key": "k", "username": "judge",
                  "users": {"alice": "alice@example.org"}, "topic_ids": [12]},
    })
    judge = build_judge(config)
    assert isinstance(judge.sources[-1], DiscourseSource) and isinstance(judge.transport, CompositeTransport)
    with pytest.raises(ConfigError, match=r"\[forum\]"):
        load_config(None, data_dir=tmp_path / "d2", overrides={
            "forum": {"base_url": "http://forum.example.org", "api_key": "k", "username": "judge"}})
