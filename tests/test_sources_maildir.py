"""MaildirSource: unread mail in new/, acknowledged mail moved to cur/ as seen."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from judge.sources.base import RawMail, Source
from judge.sources.maildir import MaildirSource


def deliver(maildir: Path, name: str, raw: bytes, mtime: float) -> None:
    """Put a message into new/ the way an MTA does (tmp/ then rename)."""
    tmp = maildir / "tmp" / name
    tmp.write_bytes(raw)
    os.utime(tmp, (mtime, mtime))
    tmp.rename(maildir / "new" / name)


def test_new_folder_is_created_and_empty(tmp_path: Path) -> None:
    path = tmp_path / "does" / "not" / "exist"
    source = MaildirSource(path)
    assert isinstance(source, Source)
    assert source.name == "maildir:exist"
    assert all((path / sub).is_dir() for sub in ("new", "cur", "tmp"))
    assert source.fetch() == []


def test_existing_folder_without_subdirs_is_completed(tmp_path: Path) -> None:
    (tmp_path / "box").mkdir()
    assert MaildirSource(tmp_path / "box", name="maildir:inbox").fetch() == []
    assert (tmp_path / "box" / "new").is_dir()


def test_fetch_returns_new_mails_oldest_first(tmp_path: Path) -> None:
    source = MaildirSource(tmp_path, name="maildir:inbox")
    # Names sort the other way round than times, so only mtime can give this order.
    deliver(tmp_path, "c-first", b"first", mtime=1_000_000)
    deliver(tmp_path, "a-third", b"third", mtime=3_000_000)
    deliver(tmp_path, "b-second", b"second", mtime=2_000_000)
    deliver(tmp_path, "b-same-time-1", b"same1", mtime=2_000_000)
    (tmp_path / "new" / ".hidden").write_bytes(b"not a message")
    (tmp_path / "cur" / "old:2,S").write_bytes(b"already read")

    mails = source.fetch()
    assert [m.raw for m in mails] == [b"first", b"same1", b"second", b"third"]
    assert mails[0] == RawMail(raw=b"first", source="maildir:inbox", ref="c-first")
    assert [m.raw for m in source.fetch(limit=2)] == [b"first", b"same1"]
    assert source.fetch(limit=0) == []


def test_ack_moves_to_cur_as_seen_and_is_idempotent(tmp_path: Path) -> None:
    source = MaildirSource(tmp_path)
    deliver(tmp_path, "one", b"1", mtime=1_000_000)
    deliver(tmp_path, "two", b"2", mtime=2_000_000)
    first, second = source.fetch()

    source.ack(first)
    assert [m.raw for m in source.fetch()] == [b"2"]
    assert (tmp_path / "cur" / "one:2,S").read_bytes() == b"1"
    assert not (tmp_path / "new" / "one").exists()

    source.ack(first)  # again: harmless
    assert sorted(os.listdir(tmp_path / "cur")) == ["one:2,S"]

    source.ack(second)
    assert source.fetch() == []
    assert sorted(os.listdir(tmp_path / "cur")) == ["one:2,S", "two:2,S"]


def test_ack_of_vanished_file_is_not_an_error(tmp_path: Path) -> None:
    source = MaildirSource(tmp_path)
    deliver(tmp_path, "gone", b"x", mtime=1_000_000)
    (mail,) = source.fetch()
    (tmp_path / "new" / "gone").unlink()
    source.ack(mail)
    assert source.fetch() == []


def test_ack_refuses_foreign_or_unsafe_refs(tmp_path: Path) -> None:
    source = MaildirSource(tmp_path, name="maildir:a")
    with pytest.raises(ValueError):
        source.ack(RawMail(raw=b"", source="maildir:a", ref="../escape"))
    with pytest.raises(ValueError):
        source.ack(RawMail(raw=b"", source="maildir:other", ref="x"))


def test_mail_arriving_between_fetches_is_picked_up(tmp_path: Path) -> None:
    source = MaildirSource(tmp_path)
    deliver(tmp_path, "one", b"1", mtime=1_000_000)
    (mail,) = source.fetch()
    source.ack(mail)
    deliver(tmp_path, "two", b"2", mtime=500_000)  # even with an older mtime
    assert [m.raw for m in source.fetch()] == [b"2"]
    source.close()


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
@pytest.mark.parametrize("shift", range(-3, 4))
def test_an_oversize_mail_keeps_its_header_through_the_blank_line(tmp_path: Path, eol: bytes, shift: int) -> None:
    """The blank line is found also where it straddles two reads (8 KiB)."""
    head = b"From: a@b.test" + eol + b"X-Pad: " + b"p" * (8192 + shift - 21 - 3 * len(eol)) + eol
    raw = head + eol + b"body" + eol + b"z" * 5000
    source = MaildirSource(tmp_path, max_bytes=1000)
    deliver(tmp_path, "big", raw, mtime=1_000_000)
    [mail] = source.fetch()
    assert mail.raw == head + eol and mail.oversize == len(raw)
    [whole] = MaildirSource(tmp_path, max_bytes=len(raw)).fetch()
    assert whole.raw == raw and whole.oversize is None
