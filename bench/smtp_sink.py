"""An SMTP server for the outbox benches, in a process of its own: aiosmtpd
on a free 127.0.0.1 port that keeps no mail, only each Message-ID it was
given, so that a bench can check that every mail arrived exactly once.

Run by bench/bench_outbox_burst.py (not by hand):

    python bench/smtp_sink.py [--pipelining]

It prints "port N" once it listens, then answers lines on its standard
input: "count" -> "count N DISTINCT MOST" (mails, distinct Message-IDs, the
most copies of one), "clear" -> "ok", "quit" -> stops. --pipelining adds
PIPELINING to its EHLO answer: aiosmtpd reads commands from a stream, line by
line, so pipelined commands are answered in order (RFC 2920), it only does
not say so.
"""

from __future__ import annotations

import argparse
import collections
import re
import socket
import sys

from aiosmtpd.controller import Controller

_MESSAGE_ID = re.compile(rb"^Message-ID:[ \t]*(<[^>\r\n]*>)", re.IGNORECASE | re.MULTILINE)


class Sink:
    def __init__(self, pipelining: bool) -> None:
        self.pipelining = pipelining
        self.ids: collections.Counter[bytes] = collections.Counter()
        self.mails = 0

    async def handle_EHLO(self, server, session, envelope, hostname, responses):
        session.host_name = hostname
        if self.pipelining:
            responses.insert(-1, "250-PIPELINING")
        return responses

    async def handle_DATA(self, server, session, envelope):
        head = bytes(envelope.original_content or b"").split(b"\r\n\r\n", 1)[0]
        found = _MESSAGE_ID.search(head)
        self.ids[found.group(1) if found else b"(none)"] += 1
        self.mails += 1
        return "250 2.0.0 Ok: queued"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pipelining", action="store_true")
    args = parser.parse_args()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sink = Sink(args.pipelining)
    controller = Controller(sink, hostname="127.0.0.1", port=port, ready_timeout=10)
    controller.start()
    print(f"port {port}", flush=True)
    try:
        for line in sys.stdin:
            command = line.strip()
            if command == "count":
                most = max(sink.ids.values(), default=0)
                print(f"count {sink.mails} {len(sink.ids)} {most}", flush=True)
            elif command == "clear":
                sink.ids.clear()
                sink.mails = 0
                print("ok", flush=True)
            elif command == "quit":
                break
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
