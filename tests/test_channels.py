"""Mail channels as plugins (issue 28, point 3): a source or a transport is
one package, found by name in judge/channels.py, reading its own table of
the configuration; the core's configuration knows none of them."""

from __future__ import annotations

import ast
import email
import email.policy
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from judge import channels
from judge.config import ConfigError, known_tables, load_config
from judge.methods.registry import TABLES
from judge.store.models import Resolution
from tests.harness import Harness

JUDGE = Path(__file__).resolve().parent.parent / "judge"
GM = "gm@example.test"
PLAYERS = ["ann", "bob", "cat", "dan", "eve", "fay", "gus"]
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]


def _config(tmp_path: Path, **tables) -> object:
    return load_config(None, data_dir=tmp_path / "data", overrides={
        "judge": {"database": f"sqlite:///{tmp_path / 'j.sqlite3'}"}, **tables})


def _body(raw: bytes) -> str:
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    part = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
    return part.get_content()


def test_a_toy_transport_of_one_folder_sends_a_blind_auction(tmp_path, monkeypatch):
    """The toy transport (tests/toy_transport/: its package, its table
    [letterbox], its transport) touches nothing but its own folder and one
    registry line, added here as a test adds it: the judge finds it by the
    name [outbox] transport gives, reads its table, and every mail of a
    Blind Auction played by mail goes through it."""
    monkeypatch.setitem(channels.TRANSPORTS, "letterbox", "tests.toy_transport")  # the one registry line
    import tests.toy_transport as toy
    from tests.toy_transport.letterbox import LetterboxTransport, letters

    folder = Path(toy.__file__).parent  # the whole toy: one folder
    assert {p.name for p in folder.glob("*.py")} == {"__init__.py", "letterbox.py"}
    assert Path(importlib.import_module(LetterboxTransport.__module__).__file__).parent == folder

    h = Harness(tmp_path / "data", f"sqlite:///{tmp_path / 'j.sqlite3'}",
                sections={"outbox": {"transport": "letterbox"}, "letterbox": {"path": "boxes", "limit": 20}})
    try:
        boxes = tmp_path / "data" / "boxes"
        assert isinstance(h.judge.transport, LetterboxTransport)
        assert h.judge.transport.describe() == f"letterboxes ({boxes})"
        h.mail(GM, "CREATE ?spring gmpw blind-auction standard\nSET DEADLINE +48h")
        for name in PLAYERS:
            h.send(f"{name}@example.test", f"SIGNON ?spring pw-{name}")
        h.run()
        h.mail(GM, "SIGNON Mspring gmpw\nSTART")
        for k, name in enumerate(PLAYERS):
            # Each player puts 40 on a power of their own: no draw decides.
            bids = [40 if i == k else 10 - i for i in range(7)]
            h.send(f"{name}@example.test", f"SIGNON ?spring pw-{name}\n" +
                   "\n".join(f"{p} {v}" for p, v in zip(POWERS, bids)))
        h.run()
        h.clock.advance(hours=49)
        h.run()

        with h.judge.sessions() as s:
            record = s.scalars(select(Resolution)).one().result
        for k, name in enumerate(PLAYERS):
            address = f"{name}@example.test"
            texts = [_body(raw) for raw in letters(boxes, address)]
            assert any("joined ?spring" in t for t in texts), texts
            assert any("bid list accepted" in t for t in texts), texts
            assert record["assignment"][address] == POWERS[k]
            assert any(f"play {POWERS[k]}" in t for t in texts), texts[-1]
        master = [_body(raw) for raw in letters(boxes, GM)]
        assert any("game ?spring created" in t for t in master)
        assert any("the auction of ?spring is open" in t for t in master)
        # Nothing went by the Maildir transport the judge would use by default.
        assert not h.sent()
    finally:
        h.close()


def test_the_toy_transport_table_is_checked_at_start(tmp_path, monkeypatch):
    """A wrong value of a plugin's own table stops the judge at start, with
    the table and the key named; its table is unknown while it is not
    registered."""
    with pytest.raises(ConfigError, match=r"unknown section \[letterbox\]"):
        _config(tmp_path, outbox={"transport": "maildir"}, letterbox={"path": "boxes"})
    with pytest.raises(ConfigError, match=r"\[outbox\] transport: 'discourse', 'maildir' or 'smtp', not 'letterbox'"):
        _config(tmp_path, outbox={"transport": "letterbox"})
    monkeypatch.setitem(channels.TRANSPORTS, "letterbox", "tests.toy_transport")
    with pytest.raises(ConfigError, match=r"^\[letterbox\] limit: at least 1, not 0$"):
        _config(tmp_path, outbox={"transport": "letterbox"}, letterbox={"limit": 0})
    with pytest.raises(ConfigError, match=r"^\[letterbox\] path: expected str, got 7$"):
        _config(tmp_path, outbox={"transport": "letterbox"}, letterbox={"path": 7})
    with pytest.raises(ConfigError, match=r"^\[letterbox\] unknown option\(s\): colour$"):
        _config(tmp_path, outbox={"transport": "letterbox"}, letterbox={"colour": "red"})
    config = _config(tmp_path, outbox={"transport": "letterbox"})
    assert config.part("transports.letterbox").path == tmp_path.resolve() / "data" / "letterboxes"


@pytest.mark.parametrize("key", sorted(channels.parts()))
def test_each_channel_is_a_package_with_its_table(key):
    module = channels.parts()[key]
    kind, name = key.split(".")
    assert module.__name__ == f"judge.{kind}.{name}" and Path(module.__file__).name == "__init__.py"
    assert module.TABLE in known_tables() and module.KEYS <= known_tables()[module.TABLE]
    assert callable(module.read_settings)
    assert callable(module.open_source if kind == "sources" else module.open_transport)


@pytest.mark.parametrize(("tables", "message"), [
    ({"inbox": {"type": "imap"}, "imap": {"host": "imap.example.org", "security": "none"}},
     r"^\[imap\] IMAP without TLS is only allowed to a loopback host"),
    ({"imap": {"port": "993"}}, r"^\[imap\] port: expected int, got '993'$"),
    ({"smtp": {"security": "ssl"}}, r"^\[smtp\] security: 'none', 'starttls' or 'tls', not 'ssl'$"),
    ({"smtp": {"port": 70000}}, r"^\[smtp\] bad SMTP port 70000$"),
    ({"outbox": {"path": 3}}, r"^\[outbox\] path: expected str, got 3$"),
    ({"inbox": {"path": True}}, r"^\[inbox\] path: expected str, got True$"),
    ({"forum": {"base_url": "http://forum.example.org", "api_key": "k", "username": "judge"}},
     r"^\[forum\] Discourse over plain http is only allowed to a loopback host"),
    ({"forum": {"type": "phpbb"}}, r"^\[forum\] type: 'discourse' \(a forum whose API the judge reads\), not 'phpbb'$"),
    ({"inbox": {"type": "pop3"}}, r"^\[inbox\] type: 'discourse', 'imap' or 'maildir', not 'pop3'$"),
    ({"blinding": {"trusted_judges": ["nobody"]}}, r"^\[blinding\] trusted_judges: 'nobody' is not a mail address$"),
])
def test_a_part_reports_its_own_table_and_key(tmp_path, tables, message):
    with pytest.raises(ConfigError, match=message):
        _config(tmp_path, **tables)


def test_the_config_keeps_the_names_it_had(tmp_path):
    """config.inbox_path, .outbox_path, .smtp, .imap and .trusted_judges
    read as before, from the parts that own them now."""
    config = _config(tmp_path, outbox={"path": "/srv/out"}, smtp={"host": "mx.example.org", "security": "tls"},
                     blinding={"trusted_judges": ["Judge@Other.Example"]})
    # Read at start: the parts in use, those whose table the file has, the methods'.
    assert set(config.parts) == {"sources.maildir", "transports.maildir", "transports.smtp", "methods.blind-random"}
    data = tmp_path.resolve() / "data"
    assert config.inbox_path == data / "inbox" and config.outbox_path == Path("/srv/out")
    assert (config.smtp.host, config.smtp.port) == ("mx.example.org", 465)
    assert config.trusted_judges == ("judge@other.example",)
    assert config.imap.host == "localhost"  # no [imap]: its defaults, read when first asked for
    assert "sources.imap" in config.parts and "sources.discourse" not in config.parts
    from judge.methods.blind_random.settings import blinding_settings

    assert blinding_settings(config).trusted_judges == config.trusted_judges
    with pytest.raises(AttributeError):
        config.no_such_option


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_channels_import_no_configuration():
    """A channel is given its settings: it imports neither judge.config nor
    the shell that reads it (judge.app, judge.cli)."""
    files = sorted((JUDGE / "sources").rglob("*.py")) + sorted((JUDGE / "transports").rglob("*.py"))
    assert len(files) > 20
    wrong = {f"{p.relative_to(JUDGE)}: {m}" for p in files for m in _imports(p)
             if m in ("judge.config", "judge.app", "judge.cli") or m.startswith("judge.config.")}
    assert not wrong, wrong
    # The configuration and the wiring name no channel but through the registry.
    for shell in ("config.py", "app.py"):
        named = {m for m in _imports(JUDGE / shell) if m.startswith(("judge.sources.", "judge.transports."))}
        assert named <= {"judge.sources.size_limit", "judge.sources.base", "judge.sources.watermark",
                         "judge.transports.base", "judge.transports.composite"}, (shell, named)


def test_reading_the_configuration_loads_no_channel_code():
    """Every channel's table is known at start (also for `judge deliver`),
    yet no server's library is imported for it: the packages are light."""
    probe = ("import sys; from pathlib import Path; from judge.config import load_config; "
             "load_config(Path(sys.argv[1]), data_dir=Path(sys.argv[2])); "
             "print(sorted(m for m in ('imapclient', 'smtplib', 'sqlalchemy', 'urllib.request', "
             "'judge.sources.imap.source', 'judge.transports.smtp.transport', 'judge.sources.discourse.source') "
             "if m in sys.modules))")
    example = JUDGE.parent / "deploy" / "judge.example.toml"
    run = subprocess.run([sys.executable, "-c", probe, str(example), "/tmp/unused"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_a_method_declares_its_table_in_the_registry():
    """[blinding] is the blind-random method's table: declared by one line
    of judge/methods/registry.py, read by the method's own module."""
    assert TABLES == {"blind-random": "judge.methods.blind_random.settings"}
    assert known_tables()["blinding"] == {"trusted_judges"}


def test_the_blinding_table_reads_as_docs_blinding_md_shows_it(tmp_path):
    text = (JUDGE.parent / "docs" / "blinding.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(\[blinding\]\n.*?)```", text, re.S)
    assert block, "docs/blinding.md shows the [blinding] table"
    path = tmp_path / "judge.toml"
    path.write_text(block.group(1), encoding="utf-8")
    from judge.methods.blind_random.settings import blinding_settings

    assert blinding_settings(load_config(path, data_dir=tmp_path)).trusted_judges == ("judge@other.example.org",)


def test_a_transport_that_publishes_must_keep_private_mail_private():
    from judge.transports.base import Transport
    from judge.transports.discourse import DiscourseTransport

    assert DiscourseTransport.publishes and callable(DiscourseTransport.send_private)
    with pytest.raises(TypeError, match="publishes mail: it must say how a private mail goes"):
        class Board(Transport):  # noqa: F841 - its definition is what fails
            publishes = True

            def send(self, mail, commit_point=None):
                pass
