"""The moderators' commands the console shares its facts with: `judge
moderator add`, `judge quarantine` (list, rerun) and `judge log --player
--kind`; the console reads through the same functions (judge.failures,
judge.audit, judge.outbox)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import select

from judge import commands
from judge.cli import main
from judge.passwords import check_password
from judge.store.models import Event, InboundMessage, Moderator
from judge.syntax import nodes
from tests.harness import Harness


def _config(tmp_path: Path) -> list[str]:
    path = tmp_path / "judge.toml"
    path.write_text(f'[judge]\naddress = "judge@example.test"\ndatabase = "sqlite:///{tmp_path / "j.sqlite3"}"\n'
                    f'data_dir = "{tmp_path / "data"}"\npassword_cost = 4\n')
    return ["-c", str(path)]


def test_moderator_add_stores_a_hash_and_a_new_password_replaces_it(tmp_path):
    args, runner = _config(tmp_path), CliRunner()
    made = runner.invoke(main, [*args, "moderator", "add", "alice", "--password-stdin"], input="correct horse\n")
    assert made.exit_code == 0, made.output
    assert "account made" in made.output and "correct horse" not in made.output
    again = runner.invoke(main, [*args, "moderator", "add", "alice", "--password-stdin"], input="battery staple\n")
    assert again.exit_code == 0 and "password changed" in again.output
    short = runner.invoke(main, [*args, "moderator", "add", "bob", "--password-stdin"], input="short\n")
    assert short.exit_code == 1 and "at least 8" in short.output
    # On a terminal: asked twice, and two different answers are refused.
    typed = runner.invoke(main, [*args, "moderator", "add", "carol"], input="first one\nsecond one\nsame pass\n"
                                                                          "same pass\n")
    assert typed.exit_code == 0 and "account made" in typed.output and "do not match" in typed.output
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    with h.judge.sessions() as s:
        rows = {m.name: m.password for m in s.scalars(select(Moderator))}
    h.close()
    assert set(rows) == {"alice", "carol"}
    assert rows["alice"].startswith("scrypt$") and "battery" not in rows["alice"]
    assert check_password("battery staple", rows["alice"]) and not check_password("correct horse", rows["alice"])
    assert check_password("same pass", rows["carol"])
    listed = runner.invoke(main, [*args, "moderator", "list"]).output.splitlines()
    assert [line.split()[0] for line in listed] == ["alice", "carol"]
    assert "same pass" not in "".join(listed) and "scrypt" not in "".join(listed)
    assert runner.invoke(main, [*args, "moderator", "remove", "carol"]).output.strip() == "moderator carol: account removed"
    gone = runner.invoke(main, [*args, "moderator", "remove", "carol"])
    assert gone.exit_code == 1 and "no moderator 'carol'" in gone.output
    assert [line.split()[0] for line in runner.invoke(main, [*args, "moderator", "list"]).output.splitlines()] == [
        "alice"]


def test_a_quarantined_mail_is_listed_and_run_again(tmp_path, monkeypatch):
    def broken(ctx, node):
        raise RuntimeError("boom in the handler")

    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    with monkeypatch.context() as m:
        m.setitem(commands.HANDLERS, nodes.Help, broken)
        h.mail("ann@example.test", "HELP", subject="help me")
    args, runner = _config(tmp_path), CliRunner()
    listed = runner.invoke(main, [*args, "quarantine"])
    assert listed.exit_code == 0 and "ann@example.test" in listed.output and "RuntimeError: boom" in listed.output
    [row] = json.loads(runner.invoke(main, [*args, "quarantine", "--format", "json"]).output)
    # A bug whose error quotes the command: its password is masked in the list.

    def quoting(ctx, node):
        raise RuntimeError(f"cannot handle {node!r}")

    with monkeypatch.context() as m:
        m.setitem(commands.HANDLERS, nodes.Signon, quoting)
        h.mail("bob@example.test", "SIGNON ?nosuch BobsSecret9")
    with h.judge.sessions() as s:
        assert "BobsSecret9" in s.scalars(select(InboundMessage.reason).where(
            InboundMessage.sender == "bob@example.test")).one()
    both = runner.invoke(main, [*args, "quarantine", "--format", "json"]).output
    assert "cannot handle Signon(" in both and "BobsSecret9" not in both
    assert "BobsSecret9" not in runner.invoke(main, [*args, "quarantine"]).output
    runner.invoke(main, [*args, "quarantine", "rerun", str(json.loads(both)[1]["id"])])
    h.run()
    with h.judge.sessions() as s:
        rerun = s.scalars(select(Event).where(Event.kind == "rerun")).all()
    assert len(rerun) == 1 and rerun[0].data["by"] == "judge quarantine rerun"
    assert "cannot handle Signon(" in rerun[0].data["error_was"] and "BobsSecret9" not in rerun[0].data["error_was"]
    assert row["subject"] == "help me" and "Traceback" in row["traceback"]
    rerun = runner.invoke(main, [*args, "quarantine", "rerun", str(row["id"]), "9999"])
    assert rerun.exit_code == 1 and f"#{row['id']}: queued to run again" in rerun.output
    assert "#9999: no such mail" in rerun.output
    again = runner.invoke(main, [*args, "quarantine", "rerun", str(row["id"])])
    assert again.exit_code == 1 and "not quarantined (it is new)" in again.output
    h.run()  # the handler is mended: the mail is done, and answered
    with h.judge.sessions() as s:
        assert s.get(InboundMessage, row["id"]).status == "done"
    assert "HELP" in h.body(h.last_to("ann@example.test")).upper()
    assert runner.invoke(main, [*args, "quarantine"]).output.strip() == "no mail is quarantined"
    h.close()


def test_a_rerun_shows_in_the_games_log(tmp_path, monkeypatch):
    def quoting(ctx, node):
        raise RuntimeError(f"cannot handle {node!r}")

    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    h.mail("gm@example.test", "CREATE ?vienna gmpw")
    with monkeypatch.context() as m:
        m.setitem(commands.HANDLERS, nodes.Signon, quoting)
        h.mail("ann@example.test", "SIGNON ?vienna AnnSecret1")
    args, runner = _config(tmp_path), CliRunner()
    [row] = json.loads(runner.invoke(main, [*args, "quarantine", "--format", "json"]).output)
    runner.invoke(main, [*args, "quarantine", "rerun", str(row["id"])])
    h.run()
    h.close()
    log = runner.invoke(main, [*args, "log", "vienna"]).output.splitlines()
    # (The re-run is stamped with the real time, the mail's run with the harness's clock: no order asserted.)
    [rerun] = [line for line in log if "rerun:" in line]
    assert "by judge quarantine rerun" in rerun and "cannot handle Signon(password='**********'" in rerun
    assert any(f"line 1 of mail #{row['id']} done" in line and "joined ?vienna" in line for line in log)
    assert "AnnSecret1" not in "\n".join(log)


def test_log_filters_by_player_and_kind(tmp_path):
    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}")
    h.mail("gm@example.test", "CREATE ?vienna gmpw")
    h.mail("ann@example.test", "SIGNON ?vienna annpw")
    h.mail("bob@example.test", "SIGNON ?vienna bobpw")
    h.close()
    args, runner = _config(tmp_path), CliRunner()
    ann = json.loads(runner.invoke(main, [*args, "log", "vienna", "--player", "ANN@example.test", "--format",
                                          "json"]).output)
    assert {e["kind"] for e in ann} >= {"inbound", "command", "outbound"}
    assert all(e.get("sender") in (None, "ann@example.test") for e in ann)
    assert all(e["to"] == ["ann@example.test"] for e in ann if e["kind"] == "outbound")
    assert not any("bob@example.test" in json.dumps(e) for e in ann)
    commands_only = json.loads(runner.invoke(main, [*args, "log", "vienna", "--kind", "command", "--format",
                                                    "json"]).output)
    assert len(commands_only) == 3 and {e["kind"] for e in commands_only} == {"command"}
    text = runner.invoke(main, [*args, "log", "vienna", "--player", "bob@example.test", "--kind", "inbound"]).output
    assert len(text.splitlines()) == 1 and "mail in" in text and "bob@example.test" in text
