"""[methods.NAME] in the configuration: a method's settings for every new
game of it (issue 13: LUI's prize table "in the config", as SET PRIZE)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from judge.config import ConfigError, check_methods, load_config
from judge.store.models import Game
from tests.harness import Harness

GM = "gm@players.test"
PRIZES = {seat: [k % 3, k % 2] for k, seat in enumerate("OPQRSTUVWXYZ")}


def _game(h: Harness, name: str) -> Game:
    with h.judge.sessions() as s:
        return s.scalars(select(Game).where(Game.name == name)).one()


def test_a_new_lui_game_takes_the_configured_prize_table(tmp_path, migrated_database_url):
    h = Harness(tmp_path / "data", migrated_database_url, sections={"methods": {"lui": {"prizes": PRIZES}}})
    try:
        h.mail(GM, "CREATE ?season1 gmpw lui")
        reply = h.body(h.last_to(GM))
        assert "created" in reply.lower(), reply
        game = _game(h, "season1")
        assert game.params["prizes"] == PRIZES
        # No placeholder left, so the master is not warned about prizes.
        h.mail(GM, "SIGNON Mseason1 gmpw\nSET PLAYERS 2")
        reply = h.body(h.last_to(GM))
        assert "Done: 2 players" in reply and "placeholder" not in reply, reply
        # The master still sets a seat game by game.
        h.mail(GM, "SIGNON Mseason1 gmpw\nSET PRIZE Z 5 1")
        assert _game(h, "season1").params["prizes"]["Z"] == [5, 1]
        # Another method's games do not see LUI's table.
        h.mail(GM, "CREATE ?other gmpw random")
        assert "prizes" not in _game(h, "other").params
        # SET METHOD back to lui takes the table again.
        h.mail(GM, "SIGNON Mother gmpw\nSET METHOD lui")
        assert _game(h, "other").params["prizes"] == PRIZES
    finally:
        h.close()


def test_without_the_table_the_placeholder_warning_stays(tmp_path):
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    try:
        h.mail(GM, "CREATE ?plain gmpw lui")
        assert "prizes" not in _game(h, "plain").params or not _game(h, "plain").params["prizes"]
        h.mail(GM, "SIGNON Mplain gmpw\nSET PLAYERS 2")
        assert "The prize table is a placeholder" in h.body(h.last_to(GM))
    finally:
        h.close()


@pytest.mark.parametrize("table, words", [
    ({"nosuch": {"x": 1}}, "methods.nosuch"),
    ({"lui": {"prizes": {"O": "lots"}}}, "methods.lui"),
    ({"lui": {"preset": "F99"}}, "methods.lui"),
])
def test_a_bad_table_is_refused_when_the_daemon_starts(tmp_path, table, words):
    config = load_config(None, data_dir=tmp_path, overrides={"methods": table})
    with pytest.raises(ConfigError, match=words.replace(".", r"\.")):
        check_methods(config)


def test_a_methods_entry_must_be_a_table(tmp_path):
    with pytest.raises(ConfigError, match="must be a table"):
        load_config(None, data_dir=tmp_path, overrides={"methods": {"lui": 3}})
