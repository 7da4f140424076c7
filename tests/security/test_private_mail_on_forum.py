"""A blind game's tokens, messages and powers never go into a forum topic.

Found while fixing issue 10: on a forum, a mail to a forum player went as a
post in the fallback topic (with an @mention), and a reply in the topic the
command was posted in, where everyone reads it. A blind game's first mail
(the player's one-time token) and a LIST showing the player's own power were
public there. Such mail is marked private (X-Judge-Private) and goes as a
private message instead (judge/transports/discourse.py).
"""

from __future__ import annotations

import re

from sqlalchemy import select

from judge.games import find_game
from judge.sources.discourse import DiscourseSource
from judge.sources.watermark import WatermarkStore
from judge.store.models import Player
from judge.transports.discourse import CompositeTransport, DiscourseTransport
from tests.discourse_server import FakeDiscourse
from tests.harness import Harness
from tests.test_discourse import KEY, Recorder, _reply, settings

FORUM_PLAYERS = ["ann", "bob", "cat", "dan", "eve", "fay", "gus"]


def test_a_private_mail_goes_as_a_private_message_never_in_the_topic():
    with FakeDiscourse(KEY, ["judge", *FORUM_PLAYERS]) as forum:
        t = forum.add_topic("Game", "ann", "hi")
        p = forum.add_post(t, "bob", "LIST ?g")
        rec = Recorder()
        tr = CompositeTransport([DiscourseTransport(settings(forum, fallback_topic=t)), rec])
        tr.send(_reply(forum, ["bob@127.0.0.1.invalid", "gm@example.test"], f"<discourse-post-{p}@127.0.0.1>",
                       "You play France", headers={"X-Judge-Private": "yes"}))
        pm = forum.replies[-1]
        assert pm.raw == "You play France" and forum.topics[pm.topic_id].private
        assert forum.topics[pm.topic_id].allowed == {"judge", "bob"}
        assert [q.raw for q in forum.topic_posts(t)] == ["hi", "LIST ?g"]  # nothing in the topic
        assert [m.recipients for m in rec.sent] == [("gm@example.test",)]  # the rest by mail


def test_a_blind_game_on_a_forum_keeps_its_tokens_and_powers_private(tmp_path):
    with FakeDiscourse(KEY, ["judge", *FORUM_PLAYERS]) as forum:
        h = Harness(tmp_path / "data", "sqlite:///" + str(tmp_path / "j.sqlite3"))
        try:
            topic = forum.add_topic("Blind game ?bg", "gm", "Sign up here")
            st = settings(forum, fallback_topic=topic)
            h.judge.sources = [h.judge.sources[0], DiscourseSource(st, WatermarkStore(h.judge.sessions))]
            h.judge.transport = CompositeTransport([DiscourseTransport(st), h.judge.transport])
            h.mail("gm@example.test", "CREATE ?bg gmpw blind-random\nSET THIRDPARTY tp@other.test")
            for name in FORUM_PLAYERS:
                forum.add_post(topic, name, "SIGNON ?bg pw")
            h.run()
            h.mail("gm@example.test", "SIGNON Mbg gmpw\nSTART")
            h.run()
            public = [q.raw for q in forum.topic_posts(topic)]
            assert not any(re.search(r"(?m)^    [A-Z]{12}$", raw) for raw in public), public
            first = [q for q in forum.replies if "blinded power message" in q.raw]
            assert len(first) == 7 and all(forum.topics[q.topic_id].private for q in first)
            assert all(len(forum.topics[q.topic_id].allowed) == 2 for q in first)  # the judge and one player

            # After the end, bob's LIST in the public topic shows his power: by private message.
            with h.judge.sessions.begin() as s:
                game = find_game(s, "bg")
                game.state = "resolved"
                for k, pl in enumerate(s.scalars(select(Player).where(Player.game_id == game.id))):
                    pl.power = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"][k]
                bob_power = next(pl.power for pl in game.players if pl.address.startswith("bob@"))
            before = len(forum.topic_posts(topic))
            forum.add_post(topic, "bob", "SIGNON ?bg pw\nLIST ?bg")
            h.run()
            answer = forum.replies[-1]
            assert bob_power in answer.raw and forum.topics[answer.topic_id].allowed == {"judge", "bob"}
            assert len(forum.topic_posts(topic)) == before + 1  # only bob's own post
        finally:
            h.close()
