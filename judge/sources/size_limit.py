"""The size limit at the sources: a mail over [limits] max_message_bytes is
never read whole, only its header block (RawMail.oversize), and a backlog
is read in steps bounded in bytes. Shared by the Maildir and IMAP sources
and `judge deliver`."""

from __future__ import annotations

import re
from typing import BinaryIO

# [limits] max_message_bytes when the configuration does not set it
# (judge.config takes its default from here): Postfix's default
# message_size_limit.
DEFAULT_MAX_BYTES = 10_240_000
# The most of an oversize mail's header block that is kept: enough for any
# real header, small enough that a mail of nothing but header lines is cheap.
HEADER_CAP = 64 * 1024
_CHUNK = 8 * 1024
_BLANK_LINE = re.compile(rb"\r?\n\r?\n")
# One fetch() returns at most this many times the size limit in bytes (but
# always at least one mail): a backlog of large mails is read in steps, not
# FETCH_LIMIT of them into memory at once.
BATCH_LIMITS = 4


def header_block(data: bytes) -> bytes:
    """The header block of a mail's first bytes, through its blank line; if
    that is not within HEADER_CAP, the complete lines within it."""
    end = _BLANK_LINE.search(data, 0, HEADER_CAP)
    if end is not None:
        return data[:end.end()]
    head = data[:HEADER_CAP]
    cut = head.rfind(b"\n")
    return head[:cut + 1] if cut >= 0 else head


def read_header_block(f: BinaryIO) -> bytes:
    """header_block() of an open file, read in small chunks up to the blank
    line (at most HEADER_CAP bytes are read)."""
    data = b""
    while len(data) < HEADER_CAP:
        chunk = f.read(min(_CHUNK, HEADER_CAP - len(data)))
        if not chunk:
            break
        # Look back 3 bytes: the blank line may straddle two chunks.
        start = max(0, len(data) - 3)
        data += chunk
        if _BLANK_LINE.search(data, start):
            break
    return header_block(data)


def read_mail(f: BinaryIO, max_bytes: int) -> tuple[bytes, int | None]:
    """A mail from a stream of unknown length (a pipe): (raw, None), or, past
    max_bytes, (its header block, its size). At most max_bytes + 1 bytes are
    held; the rest is read and counted, never kept, so that the writer sees
    the whole mail taken."""
    raw = f.read(max_bytes + 1)
    if len(raw) <= max_bytes:
        return raw, None
    head, size = header_block(raw), len(raw)
    del raw
    while chunk := f.read(1 << 20):
        size += len(chunk)
    return head, size


def batch_bytes(max_bytes: int) -> int:
    return BATCH_LIMITS * max_bytes
