"""A game as its method reads it (judge.driver.view.game_view): its players
read as rows when the session does not hold them, and then as the session
would see them: a player added or changed in the same transaction (a
mail's earlier line) is in the view; a change to the game alone is not
written for it (the game's row is written once, when the mail's work
ends)."""

from __future__ import annotations

from sqlalchemy import select

from judge.driver.view import game_view
from judge.games import find_game
from judge.store.models import Game, Player
from tests.harness import Harness

GM = "gm@example.test"


def _game(h: Harness) -> None:
    h.mail(GM, "CREATE ?view gmpw lui")
    for k in range(3):
        h.send(f"p{k}@example.test", "SIGNON ?view pw")
    h.run()


def _stored_version(h: Harness) -> int:
    with h.judge.sessions() as other:
        return other.scalar(select(Game.version).where(Game.name == "view"))


def test_the_view_reads_the_players_as_the_session_sees_them(harness: Harness):
    h = harness
    _game(h)
    with h.judge.sessions() as s:
        game = find_game(s, "view")
        assert "players" not in game.__dict__
        view = game_view(game)
        assert [p.address for p in view.players] == [f"p{k}@example.test" for k in range(3)]
        assert [p.id for p in view.players] == sorted(p.id for p in view.players)
        assert view.players == tuple(game_view(game).players)
    # A player changed or added in this transaction, not yet written: in the view.
    with h.judge.sessions() as s:
        game = find_game(s, "view")
        first = s.scalars(select(Player).where(Player.address == "p0@example.test")).one()
        first.status = "ejected"
        assert [p.status for p in game_view(game).players] == ["ejected", "active", "active"]
    with h.judge.sessions() as s:
        game = find_game(s, "view")
        s.add(Player(game=game, address="p3@example.test", name="p3", status="active", joined_at=h.clock.now()))
        assert [p.address for p in game_view(game).players][-1] == "p3@example.test"


def test_a_view_writes_nothing_of_the_game_itself(harness: Harness):
    h = harness
    _game(h)
    before = _stored_version(h)
    with h.judge.sessions() as s:
        game = find_game(s, "view")
        game.method_state = {"changed": True}
        assert len(game_view(game).players) == 3
        assert game_view(game).method_state == {"changed": True}
        assert game.version == before and game in s.dirty  # not written for the view
        s.commit()
    assert _stored_version(h) == before + 1
