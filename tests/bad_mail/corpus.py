"""Malformed and hostile mails, each with what the judge should do with it.

corpus() returns (name, raw bytes, expected outcome) triples, outcome one of
  "answered"    exactly one reply, to the sender;
  "ignored"     no reply is due (auto-reply, bounce, list, loop): status
                "ignored" with a reason;
  "quarantined" kept with a reason, not run, no reply (nobody to answer).
Every case writes from its own address, <name>@players.test (unless the case
is about the From), so the test can tell the replies apart. The whole corpus
expects one game to exist first: GAME, created by GM with GM_PASSWORD
(see SETUP). REPLY_CONTAINS names text a case's reply must hold, and
REPLY_LACKS text it must not. No reply may carry a Bcc or X-Evil header
(the header injection cases try to smuggle them in through the Subject).
"""

from __future__ import annotations

import base64
import random

JUDGE = "judge@example.test"  # tests.harness.JUDGE
GM = "gm@players.test"
GAME, GM_PASSWORD = "bad", "gmpw"
SETUP = f"CREATE ?{GAME} {GM_PASSWORD}\nSET T 140"
CRLF = b"\r\n"
DATE = "Sun, 01 Mar 2026 11:00:00 +0000"

Case = tuple[str, bytes, str]

REPLY_CONTAINS: dict[str, list[str]] = {
    "plain_control": ["CREATE ?game password"],
    "html_only": ["?bad"],
    "nested_multipart_50": ["?bad"],
    "nested_multipart_1000": ["nested more than 50 deep"],  # InboundMail.refusal
    "unknown_charset": ["?bad"],
    "attachment_20mb": ["the judge reads mails of at most"],
    "forged_from_wrong_password": ["wrong master password for ?bad", "after this point w"],
    "invalid_utf8_body": ["?bad"],
    "image_only": ["your mail held no commands"],
    "encrypted": ["your mail held no commands"],
    "signed_with_commands": ["game ?signed created"],
    "cp1252_commands": ["game ?cp created"],
    "cp1252_labelled_utf8": ["game ?cpu created"],
    "shift_jis_commands": ["game ?sjis created"],
    "iso2022jp_commands": ["game ?jis created"],
    "rtl_and_emoji": ["game ?rtl created"],
    "forwarded_commands_only": ["your mail held no commands"],
    "nul_bytes": ["?bad"],
    "command_100kb": ["lines of at most 1000"],
    "calendar_invite": ["?bad"],
}
REPLY_LACKS: dict[str, list[str]] = {
    "forged_from_wrong_password": ["wrongpw"],
}


def addr(name: str) -> str:
    return f"{name.replace('_', '-')}@players.test"


def raw_mail(name: str, body: bytes | str, *, headers: list[tuple[str, str | bytes]] = (),
             sender: str | bytes | None = "", subject: str | bytes = "commands", message_id: str | None = "",
             content_type: str | None = "text/plain; charset=utf-8", date: str = DATE) -> bytes:
    """A mail written byte by byte, so nothing 'fixes' what a case breaks.
    sender "" is the case's own address; None leaves the header out."""
    head: list[tuple[str, str | bytes]] = []
    if sender is not None:
        head.append(("From", sender or addr(name)))
    head += [("To", JUDGE), ("Subject", subject), ("Date", date)]
    if message_id is not None:
        head.append(("Message-ID", message_id or f"<{name}@players.test>"))
    head.append(("MIME-Version", "1.0"))
    if content_type is not None:
        head.append(("Content-Type", content_type))
    head += list(headers)
    lines = [k.encode() + b": " + (v if isinstance(v, bytes) else v.encode("utf-8")) for k, v in head]
    data = body if isinstance(body, bytes) else _crlf(body)
    return CRLF.join(lines) + CRLF + CRLF + data


def _crlf(text: str) -> bytes:
    return text.replace("\r\n", "\n").replace("\n", "\r\n").encode("utf-8")


def multipart(name: str, parts: list[tuple[str, bytes | str]], *, subtype: str = "mixed", params: str = "",
              boundary: str = "b0undary", **kw) -> bytes:
    body = b""
    for ctype, content in parts:
        data = content if isinstance(content, bytes) else _crlf(content)
        body += b"--" + boundary.encode() + CRLF + b"Content-Type: " + ctype.encode() + CRLF + CRLF + data + CRLF
    body += b"--" + boundary.encode() + b"--" + CRLF
    return raw_mail(name, body, content_type=f'multipart/{subtype}; boundary="{boundary}"{params}', **kw)


def _nested(depth: int, inner: bytes) -> bytes:
    body = inner
    for level in range(depth):
        b = f"n{level}".encode()
        body = (b"Content-Type: multipart/mixed; boundary=\"" + b + b"\"\r\n\r\n--" + b + CRLF + body + CRLF
                + b"--" + b + b"--")
    return body


def _b64_lines(data: bytes) -> bytes:
    enc = base64.b64encode(data)
    return CRLF.join(enc[i:i + 76] for i in range(0, len(enc), 76))


def _big_base64(size: int) -> bytes:
    line = b"QUJD" * 19  # 76 characters of valid base64
    return CRLF.join([line] * (size // 78 + 1))


def corpus() -> list[Case]:
    rng = random.Random(20260301)
    cases: list[Case] = []

    def add(name: str, raw: bytes, outcome: str) -> None:
        cases.append((name, raw, outcome))

    add("plain_control", raw_mail("plain_control", "HELP"), "answered")

    # -- bodies the judge must dig the text out of --------------------------
    png = b"\x89PNG\r\n\x1a\n" + bytes(rng.randrange(256) for _ in range(3000))
    add("image_only", raw_mail("image_only", _b64_lines(png), content_type="image/png",
                               headers=[("Content-Transfer-Encoding", "base64")]), "answered")
    add("image_only_multipart", multipart("image_only_multipart", [
        ("image/jpeg\r\nContent-Transfer-Encoding: base64", _b64_lines(png))]), "answered")
    add("html_only", raw_mail("html_only", "<html><body><p>LIST</p><script>alert(1)</script></body></html>",
                              content_type="text/html; charset=utf-8"), "answered")
    add("broken_boundary", raw_mail("broken_boundary",
                                    "--other\r\nContent-Type: text/plain\r\n\r\nLIST\r\n--other",
                                    content_type='multipart/mixed; boundary="declared"'), "answered")
    add("multipart_without_boundary", raw_mail("multipart_without_boundary", "LIST",
                                               content_type="multipart/mixed"), "answered")
    add("unterminated_multipart", raw_mail(
        "unterminated_multipart", "--b\r\nContent-Type: text/plain\r\n\r\nLIST\r\n--b\r\nContent-Type: text/pl",
        content_type='multipart/alternative; boundary="b"'), "answered")
    add("empty_multipart", raw_mail("empty_multipart", "--b--\r\n",
                                    content_type='multipart/mixed; boundary="b"'), "answered")
    inner = b"Content-Type: text/plain\r\n\r\nLIST"
    add("nested_multipart_50", raw_mail("nested_multipart_50", _nested(50, inner).split(CRLF + CRLF, 1)[1],
                                        content_type='multipart/mixed; boundary="n49"'), "answered")
    add("nested_multipart_400", raw_mail("nested_multipart_400", _nested(400, inner).split(CRLF + CRLF, 1)[1],
                                         content_type='multipart/mixed; boundary="n399"'), "answered")
    # ~1,000 levels made the email package's parser raise RecursionError: the
    # mail lost its sender and was quarantined without a reply.
    add("nested_multipart_1000", raw_mail("nested_multipart_1000", _nested(1000, inner).split(CRLF + CRLF, 1)[1],
                                          content_type='multipart/mixed; boundary="n999"'), "answered")
    add("many_parts_1000", multipart("many_parts_1000", [("text/x-junk", f"part {i}") for i in range(1000)]
                                     + [("text/plain", "LIST")]), "answered")
    add("unknown_charset", raw_mail("unknown_charset", b"LIST\r\n\xe9t\xe9", content_type="text/plain; charset=x-klingon"),
        "answered")
    add("charset_is_a_codec", raw_mail("charset_is_a_codec", "TElTVA==\nLIST",
                                       content_type="text/plain; charset=base64"), "answered")
    add("header_8bit_bytes", raw_mail("header_8bit_bytes", "LIST",
                                      sender=b"J\xf6rg M\xfcller <header-8bit-bytes@players.test>",
                                      subject=b"Gr\xfc\xdfe \xe2\x9c\x93 \xff\xfe"), "answered")
    add("invalid_utf8_body", raw_mail("invalid_utf8_body", b"LIST\r\n\xff\xfe\xc3\x28 \xa0\xa1 \xed\xa0\x80"),
        "answered")
    attachment = _big_base64(20 * 1024 * 1024)
    add("attachment_20mb", multipart("attachment_20mb", [
        ("text/plain", "LIST"), ("application/octet-stream\r\nContent-Transfer-Encoding: base64", attachment)]),
        "answered")
    add("base64_garbage", raw_mail("base64_garbage", "!!!*** not base64 ***\n====\nTElTVA\n\x01\x02",
                                   headers=[("Content-Transfer-Encoding", "base64")]), "answered")
    add("quoted_printable_garbage", raw_mail("quoted_printable_garbage", "LIST=\n=ZZ=4=\n=E9=\n=\n=XX=0",
                                             headers=[("Content-Transfer-Encoding", "quoted-printable")]),
        "answered")
    add("unknown_transfer_encoding", raw_mail("unknown_transfer_encoding", "LIST",
                                              headers=[("Content-Transfer-Encoding", "x-gzip64")]), "answered")
    add("content_type_garbage", raw_mail("content_type_garbage", "LIST", content_type=";;;===\"\"\\"),
        "answered")
    ics = ("BEGIN:VCALENDAR\nMETHOD:REQUEST\nBEGIN:VEVENT\nSUMMARY:Deadline party\n"
           "DTSTART:20260301T120000Z\nEND:VEVENT\nEND:VCALENDAR")
    add("calendar_invite", multipart("calendar_invite", [("text/plain", "LIST"),
                                                         ("text/calendar; method=REQUEST", ics)],
                                     subtype="alternative"), "answered")
    add("calendar_only", raw_mail("calendar_only", ics, content_type="text/calendar; method=REQUEST"), "answered")
    add("signed_with_commands", multipart("signed_with_commands", [
        ("text/plain; charset=us-ascii", "CREATE ?signed pw\nLIST ?signed"),
        ("application/pgp-signature", "-----BEGIN PGP SIGNATURE-----\n\niQEzBAEBCAAdFiEE\n-----END PGP SIGNATURE-----")],
        subtype="signed", params='; micalg=pgp-sha256; protocol="application/pgp-signature"'), "answered")
    add("encrypted", multipart("encrypted", [
        ("application/pgp-encrypted", "Version: 1"),
        ("application/octet-stream", "-----BEGIN PGP MESSAGE-----\n\nhQEMA+garbage==\n-----END PGP MESSAGE-----")],
        subtype="encrypted", params='; protocol="application/pgp-encrypted"'), "answered")
    forwarded = raw_mail("forwarded_inner", "CREATE ?fwd pw", sender="other@players.test")
    add("forwarded_commands_only", multipart("forwarded_commands_only", [("message/rfc822", forwarded)]),
        "answered")

    # -- charsets and scripts, with real commands ------------------------------
    add("cp1252_commands", raw_mail("cp1252_commands",
                                    "CREATE ?cp pw\nENTROPY café “quoted” – dash €".replace("\n", "\r\n")
                                    .encode("cp1252"), content_type="text/plain; charset=windows-1252"),
        "answered")
    add("cp1252_labelled_utf8", raw_mail("cp1252_labelled_utf8",
                                         "CREATE ?cpu pw\nENTROPY “smart” – quotes".replace("\n", "\r\n")
                                         .encode("cp1252")), "answered")
    add("shift_jis_commands", raw_mail("shift_jis_commands",
                                       "CREATE ?sjis pw\nENTROPY 日本語のテキスト、ディプロマシー".replace("\n", "\r\n")
                                       .encode("shift_jis"), content_type="text/plain; charset=Shift_JIS"),
        "answered")
    add("iso2022jp_commands", raw_mail("iso2022jp_commands",
                                       "CREATE ?jis pw\nENTROPY 外交ゲーム".replace("\n", "\r\n")
                                       .encode("iso2022_jp"), content_type="text/plain; charset=ISO-2022-JP",
                                       subject="=?ISO-2022-JP?B?GyRCMzA4cjUtOSEbKEI=?="), "answered")
    add("rtl_and_emoji", raw_mail("rtl_and_emoji", "CREATE ?rtl pw\nENTROPY שלום مرحبا 🎲🎉 \u202egnp.exe\u202c",
                                  subject="\u202eLIST ?rtl \U0001F600", headers=[]), "answered")

    # -- headers: injection, NULs, odd shapes ---------------------------------
    add("subject_injection_encoded", raw_mail("subject_injection_encoded", "LIST",
                                              subject="=?utf-8?q?hi=0D=0ABcc:_victim@evil.test=0D=0A=0D=0Abody?="),
        "answered")
    add("subject_injection_raw_cr", raw_mail("subject_injection_raw_cr", "LIST",
                                             subject="hi\rBcc: victim@evil.test\rX-Evil: 1"), "answered")
    add("subject_100kb", raw_mail("subject_100kb", "LIST", subject="long " * 20_000), "answered")
    add("nul_bytes", raw_mail("nul_bytes", b"LI\x00ST\r\n\x00\x00\r\nLIST\x00",
                              subject=b"nul\x00subject"), "answered")
    add("headers_only", raw_mail("headers_only", b"")[:-4], "answered")
    add("folded_header_5000", raw_mail("folded_header_5000", "LIST",
                                       headers=[("X-Junk", "\r\n\t".join(["fold"] * 5000))]), "answered")
    add("header_line_100kb", raw_mail("header_line_100kb", "LIST", headers=[("X-Long", "y" * 100_000)]),
        "answered")
    add("bare_cr_line_ends", raw_mail("bare_cr_line_ends", "LIST").replace(CRLF, b"\r"), "answered")
    add("from_encoded_word_trick", raw_mail("from_encoded_word_trick", "LIST",
                                            sender="=?utf-8?q?evil=40evil.test_=3Cevil=40evil.test=3E?= "
                                                   "<from-encoded-word-trick@players.test>"), "answered")
    add("reply_to_garbage", raw_mail("reply_to_garbage", "LIST", headers=[("Reply-To", "<<<not an address;;")]),
        "answered")
    add("recipients_1000", raw_mail("recipients_1000", "LIST",
                                    headers=[("Cc", ", ".join(f"victim{i}@evil.test" for i in range(1000)))])
        .replace(f"To: {JUDGE}".encode(), ("To: " + ", ".join(
            [JUDGE] + [f"other{i}@evil.test" for i in range(999)])).encode()), "answered")
    add("message_id_missing", raw_mail("message_id_missing", "LIST", message_id=None), "answered")
    add("message_id_2000", raw_mail("message_id_2000", "LIST", message_id="<" + "m" * 2000 + "@players.test>"),
        "answered")
    add("duplicate_id_first", raw_mail("duplicate_id", "LIST"), "answered")
    add("duplicate_id_second", raw_mail("duplicate_id", "HELP\nLIST ?bad"), "answered")
    add("date_year_9999", raw_mail("date_year_9999", "LIST", date="Fri, 31 Dec 9999 23:59:59 +0000"), "answered")
    add("date_garbage", raw_mail("date_garbage", "LIST", date="yesterday, at teatime -9999"), "answered")

    # -- sizes ------------------------------------------------------------------
    long_body = "LIST\n" + "\n".join(f"this is line {i} of a long, long letter" for i in range(2, 10_001))
    add("lines_10000", raw_mail("lines_10000", long_body), "answered")
    add("single_line_1mb", raw_mail("single_line_1mb", "x" * 1_000_000), "answered")
    add("command_100kb", raw_mail("command_100kb", f"SIGNON ?{GAME} pw " + "p" * 100_000), "answered")

    # -- a forged From: the password protects the game ---------------------------
    add("forged_from_wrong_password", raw_mail("forged_from_wrong_password",
                                               f"SIGNON M{GAME} wrongpw\nSET T 500\nSTART", sender=GM), "answered")

    # -- nobody to answer -------------------------------------------------------
    add("missing_from", raw_mail("missing_from", "LIST", sender=None), "quarantined")
    add("from_without_at", raw_mail("from_without_at", "LIST", sender="Just A Name"), "quarantined")
    add("from_empty", raw_mail("from_empty", "LIST", sender=" "), "quarantined")
    add("from_two_ats", raw_mail("from_two_ats", "LIST", sender="a@b@players.test"), "quarantined")
    # Forged senders (tests/security/test_inbound_sender.py): one From, one
    # mailbox, its addr-spec alone, or nobody.
    add("from_two_headers", raw_mail("from_two_headers", "LIST", headers=[("From", GM)]), "quarantined")
    add("from_address_list", raw_mail("from_address_list", "LIST", sender=f"{addr('from_address_list')}, {GM}"),
        "quarantined")
    add("from_empty_group", raw_mail("from_empty_group", "LIST", sender="undisclosed-recipients:;"), "quarantined")
    add("from_encoded_word_forgery", raw_mail("from_encoded_word_forgery", "LIST",
                                              sender=f"=?utf-8?q?{GM}=0A?= <{addr('from_encoded_word_forgery')}>"),
        "answered")
    add("from_display_name_address", raw_mail("from_display_name_address", "LIST",
                                              sender=f"{GM} <{addr('from_display_name_address')}>"), "answered")
    add("no_headers", b"LIST\r\nHELP\r\nthis mail has no header at all\r\n", "quarantined")
    add("empty_file", b"", "quarantined")
    add("random_bytes", bytes(rng.randrange(256) for _ in range(4096)), "quarantined")

    # -- no reply due -----------------------------------------------------------
    add("auto_submitted", raw_mail("auto_submitted", "I am on holiday.\nLIST",
                                   headers=[("Auto-Submitted", "auto-replied")]), "ignored")
    add("x_autoreply", raw_mail("x_autoreply", "Out of office", headers=[("X-Autoreply", "yes")]), "ignored")
    add("x_auto_response_suppress", raw_mail("x_auto_response_suppress", "LIST",
                                             headers=[("X-Auto-Response-Suppress", "DR, OOF, AutoReply")]), "ignored")
    for token in ("bulk", "list", "junk"):
        add(f"precedence_{token}", raw_mail(f"precedence_{token}", "LIST", headers=[("Precedence", token)]),
            "ignored")
    report = ("--rep\r\nContent-Type: text/plain\r\n\r\nDelivery failed.\r\nLIST\r\n--rep\r\n"
              "Content-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.players.test\r\n\r\n"
              "Final-Recipient: rfc822; nobody@players.test\r\nAction: failed\r\nStatus: 5.1.1\r\n--rep--\r\n")
    add("bounce_report", raw_mail("bounce_report", report,
                                  content_type='multipart/report; report-type=delivery-status; boundary="rep"'),
        "ignored")
    add("bounce_mailer_daemon", raw_mail("bounce_mailer_daemon", "Mail delivery failed\nLIST",
                                         sender="Mail Delivery System <MAILER-DAEMON@mx.players.test>"), "ignored")
    add("bounce_bare_mailer_daemon", raw_mail("bounce_bare_mailer_daemon", "failed\nLIST",
                                              sender="MAILER-DAEMON"), "ignored")
    add("bounce_empty_return_path", raw_mail("bounce_empty_return_path", "LIST",
                                             headers=[("Return-Path", "<>")]), "ignored")
    add("list_id", raw_mail("list_id", "LIST", headers=[("List-Id", "Diplomacy talk <dip.lists.test>")]),
        "ignored")
    add("list_unsubscribe", raw_mail("list_unsubscribe", "LIST",
                                     headers=[("List-Unsubscribe", "<mailto:leave@lists.test>")]), "ignored")
    add("loop_own_address", raw_mail("loop_own_address", "LIST", sender=f"Judge <{JUDGE.upper()}>"), "ignored")
    add("own_message_id_auto", raw_mail("own_message_id_auto", "Re: your mail\nLIST", headers=[
        ("In-Reply-To", "<judge.0123456789abcdef@example.test>"), ("Auto-Submitted", "auto-generated")]),
        "ignored")
    return cases
