"""`judge deliver`'s light path (judge/deliver_light.py) writes the very row
the store's model writes, dedups alike, and leaves to the full path every
store it does not fully understand (issue 12)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import make_url, select

from judge import deliver_light
from judge.app import build_judge
from judge.config import load_config
from judge.store.db import alembic_config, current_revisions, head_revisions, make_engine
from judge.store.models import InboundMessage
from tests.harness import make_mail

JUDGE_BIN = str(Path(sys.executable).with_name("judge"))
COLUMNS = [c.name for c in InboundMessage.__table__.columns if c.name not in ("id", "received_at")]


def judge_on(data_dir: Path, database_url: str, **limits):
    config = load_config(None, data_dir=data_dir, overrides={
        "judge": {"address": "judge@example.test", "database": database_url, "password_cost": 4},
        "limits": limits})
    return build_judge(config, with_io=False)  # the store, created and migrated


def row_of(judge, row_id: int) -> dict:
    with judge.sessions() as s:
        row = s.get(InboundMessage, row_id)
        return {"received_at": row.received_at, **{c: getattr(row, c) for c in COLUMNS}}


@pytest.mark.parametrize("oversize", [None, 12_345_678])
def test_the_light_row_is_the_models_row(tmp_path, database_url, oversize):
    """The same mail stored by Judge.receive (the model) and by the light
    path, in two stores: the rows agree in every column but their times."""
    judge = judge_on(tmp_path / "data", database_url)
    model = judge_on(tmp_path / "model", f"sqlite:///{tmp_path / 'model.sqlite3'}")
    raw = make_mail("Ann <ann@example.test>", "SIGNON ?g pw", message_id="<same@x>")
    light_id, message_id = deliver_light.store(judge.config, raw, oversize)
    model_id = model.receive(raw, "deliver", oversize=oversize)
    assert message_id == "<same@x>"
    light, reference = row_of(judge, light_id), row_of(model, model_id)
    assert {c: light[c] for c in COLUMNS} == {c: reference[c] for c in COLUMNS}
    assert light["status"] == "new" and light["oversize"] == oversize and light["raw"] == raw
    assert light["received_at"].tzinfo is not None  # read back as the UTC time the model writes
    assert abs((light["received_at"] - reference["received_at"]).total_seconds()) < 60


def test_a_message_id_is_stored_once_per_sender(tmp_path, database_url):
    judge = judge_on(tmp_path / "data", database_url)
    raw = make_mail("ann@example.test", "LIST", message_id="<one@x>")
    first, _ = deliver_light.store(judge.config, raw, None)
    assert deliver_light.store(judge.config, raw, None) == (None, "<one@x>")
    # Also when the model stored it first, and the other way round.
    assert judge.receive(raw, "deliver") is None
    other = make_mail("bob@example.test", "LIST", message_id="<two@x>")
    assert judge.receive(other, "deliver") is not None
    assert deliver_light.store(judge.config, other, None)[0] is None
    # A stranger's mail of the same Message-ID is a mail of its own.
    stranger, _ = deliver_light.store(judge.config, make_mail("eve@example.test", "LIST", message_id="<one@x>"), None)
    assert stranger not in (None, first)
    with judge.sessions() as s:
        keys = [(r.message_id, r.from_key) for r in s.scalars(select(InboundMessage).order_by(InboundMessage.id))]
    assert keys == [("<one@x>", "ann@example.test"), ("<two@x>", "bob@example.test"),
                    ("<one@x>", "eve@example.test")]


def test_a_mail_without_message_id_is_keyed_as_the_model_keys_it(tmp_path):
    judge = judge_on(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    raw = b"From: ann@example.test\r\nSubject: x\r\n\r\nLIST\r\n"
    stored, message_id = deliver_light.store(judge.config, raw, None)
    assert message_id.endswith("@judge.invalid>") and stored
    assert judge.receive(raw, "deliver") is None


def test_a_new_store_is_left_to_the_full_path_and_not_created(tmp_path):
    config = load_config(None, data_dir=tmp_path / "data", overrides={"judge": {"address": "judge@example.test"}})
    with pytest.raises(deliver_light.FullPathNeeded):
        deliver_light.store(config, make_mail("a@example.test", "LIST"), None)
    assert not (tmp_path / "data" / "judge.sqlite3").exists()


def test_a_store_behind_the_code_is_upgraded_by_deliver(tmp_path):
    """One migration behind: the light path writes nothing, the full path
    migrates the store and takes the mail."""
    from alembic import command

    url = f"sqlite:///{tmp_path / 'j.sqlite3'}"
    judge_on(tmp_path / "data", url)
    engine = make_engine(url)
    command.downgrade(alembic_config(engine), "-1")
    assert current_revisions(engine) != head_revisions()
    config = tmp_path / "judge.toml"
    config.write_text(f'[judge]\naddress = "judge@example.test"\ndatabase = "{url}"\n'
                      f'data_dir = "{tmp_path / "data"}"\npassword_cost = 4\n')
    run = subprocess.run([JUDGE_BIN, "-c", str(config), "deliver"], input=make_mail("a@example.test", "HELP"),
                         capture_output=True)
    assert run.returncode == 0, run.stderr.decode()
    assert b"stored as mail 1" in run.stdout and b"processed: done" in run.stdout
    assert current_revisions(engine) == head_revisions()
    engine.dispose()


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///j.sqlite3?check_same_thread=false",
                                 "sqlite:///j.sqlite3?timeout=soon", "sqlite:///j%20x.sqlite3",
                                 "postgresql+psycopg2://u@h/db", "postgresql://u@h/db?not_a_libpq_option=1"])
def test_urls_the_light_path_does_not_read_go_the_full_path(tmp_path, url):
    config = load_config(None, data_dir=tmp_path, overrides={"judge": {"address": "judge@example.test",
                                                                       "database": url}})
    with pytest.raises(deliver_light.FullPathNeeded):
        deliver_light.store(config, make_mail("a@example.test", "LIST"), None)


@pytest.mark.parametrize("url", ["sqlite:////srv/judge/judge.sqlite3", "sqlite:///judge.sqlite3?timeout=5",
                                 "postgresql://judge:s3cret@db.example:5432/judge",
                                 "postgresql+psycopg://judge:p%40ss@127.0.0.1/judge",
                                 "postgresql://judge@localhost/judge", "postgresql://:s3cret@h/db"])
def test_the_url_is_shown_as_sqlalchemy_shows_it(url):
    assert deliver_light.shown_url(url) == make_url(url).render_as_string(hide_password=True)


@pytest.mark.parametrize("url", ["postgresql://judge:s3c@ret@h/db", "postgresql://judge:s3cret@h/db?x=a@b",
                                 "postgresql://judge@h/db?password=s3cret&sslmode=require",
                                 "postgresql://judge:s3cret@h:5432/db?application_name=a:b@c"])
def test_an_odd_url_never_shows_its_password(url):
    shown = deliver_light.shown_url(url)
    assert "s3c" not in shown and "ret" not in shown and "***" in shown


def test_deliver_tells_the_mta_to_retry_when_the_sqlite_store_is_locked(tmp_path):
    """A store at its head migration but locked (another process writing):
    the light path waits the busy timeout, then exit 75; nothing stored."""
    import sqlite3

    url = f"sqlite:///{tmp_path / 'j.sqlite3'}?timeout=0.2"
    judge_on(tmp_path / "data", url)
    config = tmp_path / "judge.toml"
    config.write_text(f'[judge]\naddress = "judge@example.test"\ndatabase = "{url}"\n'
                      f'data_dir = "{tmp_path / "data"}"\n')
    holder = sqlite3.connect(tmp_path / "j.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        run = subprocess.run([JUDGE_BIN, "-c", str(config), "deliver"], input=make_mail("a@example.test", "LIST"),
                             capture_output=True, env={**os.environ})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert run.returncode == 75 and b"temporary failure" in run.stderr and b"locked" in run.stderr
    assert holder is not None and sqlite3.connect(tmp_path / "j.sqlite3").execute(
        "SELECT count(*) FROM inbound_messages").fetchone()[0] == 0
