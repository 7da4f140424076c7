"""Composing the mails of a deadline: compose() against a minimal
email.message build of the same mails (issue 29, "Composing mail").

Run:  .venv/bin/python bench/bench_compose.py [--games 500] [--reps 5]

The mails: for each game, 9 result mails (7 players, the master, an
observer), each with its own text of about 60 lines (a chart with the
players' names, some not ASCII, so quoted-printable) and the game's record
(JSON, ~6 KB) attached to all 9; and, as a LUI bid does, a board picture
(PNG-like bytes, ~40 KB) attached to 9 mails of one text. Timed in the same
process, interleaved, best of --reps:

* compose(): the judge's (judge/mail/outbound.py): headers written without
  the header registry, each text encoded once, each attachment encoded
  once however many mails carry it;
* the anchor: a minimal email.message build of the same mail (EmailMessage,
  its headers set, set_content, add_attachment, as_bytes), the way the
  standard library builds it;
* for the record, _compose_email_message(): the judge's careful
  EmailMessage build, which compose() matches byte for byte (the path every
  mail with an attachment took before).

Every mail of compose() is checked to parse back to the anchor's headers,
text and attachments. Nothing is asserted about the times.
"""

from __future__ import annotations

import argparse
import email
import email.policy
import json
import random
import sys
from datetime import datetime, timezone
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from time import perf_counter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from judge.mail import outbound  # noqa: E402
from judge.mail.outbound import _compose_email_message, compose, make_message_id  # noqa: E402

WHEN = datetime(2026, 3, 3, 12, 0, tzinfo=timezone.utc)
SENDER, NAME = "judge@example.test", "Diplomacy Judge"
POWERS = ["Austria", "England", "France", "Germany", "Italy", "Russia", "Turkey"]
PEOPLE = ["Ann", "Bob", "Cat", "Jürgen", "Eve", "Zoë", "Gus", "Hal", "Ivo", "Jo"]


def mails(games: int, seed: int = 7) -> list[dict]:
    rnd = random.Random(seed)
    out = []
    for g in range(games):
        names = rnd.sample(PEOPLE, 7)
        chart = "\n".join(f"{n:<10} " + " ".join(f"{rnd.randint(1, 40):>4}" for _ in POWERS) for n in names)
        steps = "\n".join(f"Step {i + 1}: {p} to {names[i]} (bid {rnd.randint(10, 40)})" for i, p in enumerate(POWERS))
        record = json.dumps({"game": f"g{g}", "seed": "%064x" % rnd.getrandbits(256),
                             "bids": {n: {p: rnd.randint(1, 40) for p in POWERS} for n in names},
                             "draws": [{"n": 3, "index": rnd.randint(0, 2), "counter": i} for i in range(40)]},
                            indent=1).encode()
        attachment = [("record.json", record, "application/json")]
        for k in range(9):
            who = names[k] if k < 7 else ("the master" if k == 7 else "an observer")
            body = (f"The Blind Auction of ?g{g} is resolved. You, {who}, play {POWERS[k % 7]}.\n\n"
                    f"Assignment:\n{steps}\n\nAll bids:\n{chart}\n\n" + "Verification line. " * 3 + "\n") * 2
            out.append({"to": [f"p{g}x{k}@players.test"], "subject": f"?g{g}: Blind Auction results",
                        "body": body, "attachments": attachment})
    picture = bytes(rnd.getrandbits(8) for _ in range(40_000))
    board = [("lui-board.png", picture, "image/png")]
    body = "The board of ?lui after a bid of Ann:\n" + "O P Q R\nS T U V\nW X Y Z\n" * 10
    for k in range(9):
        out.append({"to": [f"lui{k}@players.test"], "subject": "?lui: a bid", "body": body, "attachments": board})
    for i, m in enumerate(out):
        m["message_id"] = make_message_id("example.test", f"bench{i}")
    return out


def judge_compose(m: dict) -> bytes:
    return compose(sender=SENDER, sender_name=NAME, to=m["to"], subject=m["subject"], body=m["body"],
                   message_id=m["message_id"], date=WHEN, attachments=m["attachments"])


def reference_compose(m: dict) -> bytes:
    return _compose_email_message(sender=SENDER, sender_name=NAME, to=m["to"], subject=m["subject"],
                                  body=m["body"], message_id=m["message_id"], date=WHEN,
                                  attachments=m["attachments"])


def minimal(m: dict) -> bytes:
    """The same mail as the standard library builds it, nothing more."""
    msg = EmailMessage()
    msg["From"] = f"{NAME} <{SENDER}>"
    msg["To"] = ", ".join(m["to"])
    msg["Subject"] = m["subject"]
    msg["Date"] = format_datetime(WHEN)
    msg["Message-ID"] = m["message_id"]
    msg["Auto-Submitted"] = "auto-generated"
    msg.set_content(m["body"], cte="quoted-printable" if not m["body"].isascii() else "7bit")
    for filename, data, mimetype in m["attachments"]:
        maintype, _, subtype = mimetype.partition("/")
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
    return msg.as_bytes(policy=email.policy.SMTP)


def same_mail(a: bytes, b: bytes) -> bool:
    pa, pb = (email.message_from_bytes(x, policy=email.policy.default) for x in (a, b))
    if [(k, str(v)) for k, v in pa.items() if k != "Content-Type"] != \
            [(k, str(v)) for k, v in pb.items() if k != "Content-Type"]:
        return False
    body = lambda p: p.get_body(("plain",)).get_content().replace("\r\n", "\n")  # noqa: E731
    files = lambda p: [(x.get_filename(), x.get_content()) for x in p.iter_attachments()]  # noqa: E731
    return body(pa) == body(pb) and files(pa) == files(pb)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    work = mails(args.games)
    for m in work[:50] + work[-9:]:
        assert same_mail(judge_compose(m), minimal(m)), m["message_id"]
        assert judge_compose(m) == reference_compose(m)
    best = {"compose": float("inf"), "minimal": float("inf"), "reference": float("inf")}
    for _ in range(args.reps):
        for name, build in (("compose", judge_compose), ("minimal", minimal), ("reference", reference_compose)):
            if name == "compose":
                # Each repetition starts cold: no text or attachment encoded yet.
                outbound._body_part.cache_clear()
                outbound._attachment_part.cache_clear()
            t = perf_counter()
            for m in work:
                build(m)
            best[name] = min(best[name], perf_counter() - t)
    n = len(work)
    print(f"{n} mails ({args.games} games x 9 results with a record, 9 LUI board mails with a picture), "
          f"best of {args.reps}:")
    print(f"  minimal email.message build (anchor): {best['minimal']:.3f} s "
          f"({best['minimal'] / n * 1e6:.0f} us a mail)")
    print(f"  compose():                            {best['compose']:.3f} s "
          f"({best['compose'] / n * 1e6:.0f} us a mail)  ratio {best['compose'] / best['minimal']:.3f}x")
    print(f"  _compose_email_message() (before):    {best['reference']:.3f} s "
          f"({best['reference'] / n * 1e6:.0f} us a mail)  ratio {best['reference'] / best['minimal']:.3f}x")


if __name__ == "__main__":
    main()
