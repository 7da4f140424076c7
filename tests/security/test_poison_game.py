"""One game must never stop the others (issue 9, critical).

The attack: a stranger creates a blind-random game with a third party of
their own, seven throwaway players sign on, the creator sets a one-minute
deadline and STARTs. Its deadline pass raised ResolveInputError on every
loop, before the outbox was sent: no reply to anyone, `judge deliver`
exited 75 for every mail, PROCESS erred too. A normal game runs beside it
here, and its mail must flow.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from judge import scheduler
from judge.games import find_game
from judge.store.models import Game, InboundMessage, OutboxMessage

GM = "creator@evil.example"
NORMAL_GM = "gm@example.test"
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]


def _poison(h) -> None:
    h.mail(GM, "CREATE ?poison pw blind-random standard\nSET THIRDPARTY tp@evil.example")
    for i in range(7):
        h.mail(f"throwaway{i}@evil.example", f"SIGNON ?poison p{i}")
    h.mail(GM, "SIGNON Mpoison pw\nSET DEADLINE +1m\nSTART")


def _normal_game_forming(h) -> None:
    h.mail(NORMAL_GM, "CREATE ?normal gmpw blind-auction standard")
    for i in range(6):
        h.mail(f"player{i}@example.test", f"SIGNON ?normal pw{i}")


def test_poison_blind_random_game_beside_a_normal_game(harness):
    h = harness
    _poison(h)
    _normal_game_forming(h)
    h.clock.advance(minutes=5)  # the poison game's deadline passes
    before = len(h.sent())
    h.run()
    # The normal game's seventh player still joins and is answered.
    h.mail("player6@example.test", "SIGNON ?normal pw6")
    reply = h.body(h.last_to("player6@example.test"))
    assert "joined ?normal" in reply
    assert len(h.sent()) > before
    with h.judge.sessions() as s:
        assert s.scalar(select(OutboxMessage.id).where(OutboxMessage.status == "queued")) is None
        poison = find_game(s, "poison")
        # The blind-random game itself no longer fails: its deadline waits
        # for the protocol, and the master is told what holds it up.
        assert poison.state in ("waiting", "bidding")
        assert poison.error is None
    told = [" ".join(h.body(m).split()) for m in h.sent_to(GM)]
    assert any("blinding protocol" in t and "deadline" in t for t in told)
    # PROCESS is refused with a reason, not a crash (the mail is answered).
    h.mail(GM, "SIGNON Mpoison pw\nPROCESS")
    assert "Rejected" in h.body(h.last_to(GM))
    with h.judge.sessions() as s:
        assert s.scalar(select(InboundMessage.id).where(InboundMessage.status == "quarantined")) is None


def test_a_failing_game_is_stuck_and_the_others_go_on(harness, monkeypatch):
    """Any error in one game's deadline work (here a bug injected into its
    resolution) quarantines that game: state stuck, the error kept, the GM
    and the moderators told once; the other games' deadlines and every mail
    go on."""
    h = harness
    h.judge.config = h.config = type(h.config)(**{**h.config.__dict__, "moderators": ("mod@example.test",)})
    for name, gm in (("broken", "gm1@example.test"), ("fine", "gm2@example.test")):
        h.mail(gm, f"CREATE ?{name} gmpw blind-auction standard")
        for i in range(7):
            h.mail(f"{name}{i}@example.test", f"SIGNON ?{name} pw{i}\nNO PREFERENCE")
        h.mail(gm, f"SIGNON M{name} gmpw\nSET DEADLINE +1h\nSTART")
        for i in range(7):
            h.mail(f"{name}{i}@example.test", f"SIGNON ?{name} pw{i}\nNO PREFERENCE")

    import judge.scheduler as sched

    real = sched.resolve_game

    def resolve(session, config, game, now, seed=None, **kwargs):
        if game.name == "broken":
            raise RuntimeError("a bug in this game's resolution")
        return real(session, config, game, now, seed, **kwargs)

    monkeypatch.setattr(sched, "resolve_game", resolve)
    h.clock.advance(hours=2)
    for _ in range(3):  # told once, however many passes
        h.run()
    with h.judge.sessions() as s:
        broken, fine = find_game(s, "broken"), find_game(s, "fine")
        assert broken.state == "stuck" and broken.stuck_from == "bidding"
        assert "a bug in this game's resolution" in broken.error
        assert fine.state == "resolved"
    assert len([m for m in h.sent_to("gm1@example.test") if "stuck" in str(m["Subject"])]) == 1
    assert len([m for m in h.sent_to("mod@example.test") if "stuck" in str(m["Subject"])]) == 1
    assert any("Blind Auction results" in h.body(m) or "results" in str(m["Subject"]).lower()
               for m in h.sent_to("fine0@example.test"))
    # Mail still flows, also for the stuck game's players.
    h.mail("someone@example.test", "LIST")
    assert "broken" in h.body(h.last_to("someone@example.test"))


def test_unstick_resumes_the_game(harness, monkeypatch):
    from judge.failures import unstick

    h = harness
    h.mail("gm1@example.test", "CREATE ?g gmpw blind-auction standard")
    for i in range(7):
        h.mail(f"g{i}@example.test", f"SIGNON ?g pw{i}")
    h.mail("gm1@example.test", "SIGNON Mg gmpw\nSET DEADLINE +1h\nSTART")
    for i in range(7):
        h.mail(f"g{i}@example.test", f"SIGNON ?g pw{i}\nNO PREFERENCE")
    import judge.scheduler as sched

    def boom(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(sched, "resolve_game", boom)
    h.clock.advance(hours=2)
    h.run()
    monkeypatch.undo()
    with h.judge.sessions.begin() as s:
        game = s.scalars(select(Game).where(Game.name == "g")).one()
        assert game.state == "stuck"
        assert unstick(s, game, h.clock.now()) == "bidding"
    h.run()
    with h.judge.sessions() as s:
        assert find_game(s, "g").state == "resolved"


def test_an_outbox_row_that_breaks_the_transport_does_not_stop_the_others(harness, monkeypatch):
    """An unexpected error while sending one row (not a TransportError)
    fails that row, keeps the error, and the other rows go out."""
    h = harness
    h.send("a@example.test", "HELP")
    h.send("b@example.test", "HELP")
    h.judge.poll_sources()
    h.judge.process_pending()
    transport = h.judge.transport
    real = transport.send

    def send(mail, commit_point):
        if "a@example.test" in mail.recipients:
            raise ValueError("a bug in the transport")
        return real(mail, commit_point)

    monkeypatch.setattr(transport, "send", send)
    h.run()
    with h.judge.sessions() as s:
        rows = s.scalars(select(OutboxMessage).order_by(OutboxMessage.id)).all()
        by_to = {r.recipients[0]: r for r in rows}
        assert by_to["b@example.test"].status == "sent"
        assert by_to["a@example.test"].status == "failed"
        assert "a bug in the transport" in by_to["a@example.test"].last_error


def test_deliver_is_not_refused_because_of_a_broken_game(tmp_path):
    """`judge deliver` exited 75 for every mail while the poison game's
    deadline pass failed: the MTA retried, then bounced them."""
    import subprocess
    import sys
    from pathlib import Path

    from tests.harness import make_mail

    judge_bin = str(Path(sys.executable).with_name("judge"))
    data = tmp_path / "data"
    env_args = [judge_bin, "--data-dir", str(data), "deliver"]

    def deliver(sender: str, body: str) -> subprocess.CompletedProcess:
        return subprocess.run(env_args, input=make_mail(sender, body), capture_output=True, timeout=120)

    assert deliver(GM, "CREATE ?poison pw blind-random standard\nSET THIRDPARTY tp@evil.example").returncode == 0
    for i in range(7):
        assert deliver(f"t{i}@evil.example", f"SIGNON ?poison p{i}").returncode == 0
    assert deliver(GM, "SIGNON Mpoison pw\nSET DEADLINE 2020-01-01 00:00").returncode == 0
    # A deadline in the past cannot be set; put the game past its deadline in the store.
    from judge.app import build_judge
    from judge.config import load_config
    from datetime import datetime, timezone

    judge = build_judge(load_config(None, data_dir=data), with_io=False)
    assert deliver(GM, "SIGNON Mpoison pw\nSTART").returncode == 0
    with judge.sessions.begin() as s:
        s.scalars(select(Game).where(Game.name == "poison")).one().deadline = datetime(2020, 1, 1, tzinfo=timezone.utc)
    done = deliver("someone@example.test", "LIST")
    assert done.returncode == 0, done.stderr
    assert scheduler  # the deadline pass ran in that deliver
    with judge.sessions() as s:
        assert find_game(s, "poison").error is None
