"""Which lines of a mail the judge reads (issue 25): RFC 3676 format=flowed
(judge/mail/flowed.py), HTML quotes (judge/mail/html2text.py) and the kinds
of line (judge/mail/quoting.py). The mails of whole clients are in
tests/mail_clients/ (tests/test_mail_clients.py); these are the rules one by
one, and the lines they must leave alone."""

from __future__ import annotations

import pytest

from judge.mail.flowed import decode_flowed
from judge.mail.html2text import html_to_text
from judge.mail.inbound import parse_message
from judge.mail.quoting import ARMOUR, BLANK, COMMAND, END, INTRO, QUOTED, text_lines


def kinds(text: str) -> list[tuple[str, str]]:
    return [(line.kind, line.text) for line in text_lines(text) if line.kind != BLANK]


# ------------------------------------------------------------ format=flowed


def test_flowed_lines_are_joined_at_their_soft_breaks() -> None:
    # RFC 3676 section 4.2: a line ending in a space goes on in the next one.
    assert decode_flowed("SET PREFERENCE Turkey, Russia, \r\nEngland\r\nLIST") == \
        "SET PREFERENCE Turkey, Russia, England\nLIST"


def test_delsp_deletes_the_space_of_the_soft_break() -> None:
    text = "SET PREFERENCE Italy,  \nFrance\nab \ncd"
    assert decode_flowed(text, delsp=True) == "SET PREFERENCE Italy, France\nabcd"
    assert decode_flowed(text) == "SET PREFERENCE Italy,  France\nab cd"


def test_flowed_keeps_quote_depth_and_unstuffs() -> None:
    # Section 4.4: space-stuffing; 4.5: a change of depth ends a paragraph.
    text = "> quoted and \n> flowed\n>> deeper \n> back\n From a stuffed line\n>From"
    assert decode_flowed(text).split("\n") == [
        "> quoted and flowed", ">> deeper ", "> back", "From a stuffed line", "> From"]


def test_the_signature_separator_is_never_flowed() -> None:
    assert decode_flowed("LIST\n-- \nAnna") == "LIST\n-- \nAnna"


def test_a_flowed_part_is_decoded_and_a_fixed_one_is_not() -> None:
    def raw(params: str) -> bytes:
        return (f"From: a@players.test\r\nMessage-ID: <f@x>\r\nContent-Type: text/plain; charset=utf-8{params}\r\n"
                "\r\nSET PREFERENCE Turkey, Russia, \r\nEngland\r\n").encode()

    assert parse_message(raw("; format=flowed")).text == "SET PREFERENCE Turkey, Russia, England\n"
    assert parse_message(raw('; format="Flowed"; DelSp="Yes"')).text == "SET PREFERENCE Turkey, Russia,England\n"
    assert parse_message(raw("")).text == "SET PREFERENCE Turkey, Russia, \nEngland\n"


# ------------------------------------------------------------ HTML quotes


def test_blockquote_lines_come_out_quoted() -> None:
    html = ("<div>SIGNON ?g pw</div><blockquote type=cite><div>SIGNON ?game yourpassword</div>"
            "<blockquote>nested<br>two</blockquote><pre>a\n\nb</pre></blockquote><div>LIST</div>")
    assert html_to_text(html).split("\n") == [
        "SIGNON ?g pw", "> SIGNON ?game yourpassword", "> nested", "> two", "> a", "", "> b", "LIST"]


# ------------------------------------------------------------ kinds of line


def test_a_quote_and_its_introduction_are_not_read_and_the_lines_below_are() -> None:
    text = ("On Fri, Nov 27, 2026 at 01:21:04PM +0000, Judge wrote:\n"
            "> SIGNON ?game yourpassword\n"
            "\n"
            "SIGNON ?g pw\n")
    assert kinds(text) == [(INTRO, "On Fri, Nov 27, 2026 at 01:21:04PM +0000, Judge wrote:"),
                           (QUOTED, "> SIGNON ?game yourpassword"), (COMMAND, "SIGNON ?g pw")]


def test_gmails_introduction_wrapped_over_two_lines() -> None:
    text = "SIGNON ?g pw\n\nOn Mon, Mar 2, 2026 at 1:00 PM Diplomacy Judge <\njudge@example.test> wrote:\n\n> x\n"
    assert kinds(text) == [(COMMAND, "SIGNON ?g pw"), (INTRO, "On Mon, Mar 2, 2026 at 1:00 PM Diplomacy Judge <"),
                           (INTRO, "judge@example.test> wrote:"), (QUOTED, "> x")]


def test_a_command_just_above_an_introduction_is_read() -> None:
    # No blank line between: the command must not be taken into a wrapped introduction.
    text = "SIGNON ?g pw\nJudge <judge@example.test> wrote:\n> x"
    assert kinds(text)[0] == (COMMAND, "SIGNON ?g pw")
    text = "LIST\nOn Monday\nBob wrote:\n> x"
    assert kinds(text)[0] == (COMMAND, "LIST")


@pytest.mark.parametrize("line", [
    "Am 2. März 2026 14:00:00 MEZ schrieb Judge <judge@example.test>:",
    "Le lun. 2 mars 2026 à 13:00, Judge <judge@example.test> a écrit :",
    "El lun, 2 mar 2026 a las 13:00, Judge (<judge@example.test>) escribió:",
    "* Judge <judge@example.test> [2026-03-02 13:00]:",
    "Quoting Judge <judge@example.test>:",
])
def test_introductions_in_other_shapes(line: str) -> None:
    assert kinds(f"LIST\n{line}\n> SIGNON ?game yourpassword")[1:] == [(INTRO, line),
                                                                        (QUOTED, "> SIGNON ?game yourpassword")]


def test_an_introduction_without_a_quote_ends_the_reading() -> None:
    # The mail replied to follows unmarked (some webmails): it is not read.
    text = "LIST\nOn Monday, Judge wrote:\n\nSIGNON ?game yourpassword\n"
    assert kinds(text) == [(COMMAND, "LIST"), (END, "On Monday, Judge wrote:")]


@pytest.mark.parametrize(("marker", "why"), [
    ("-----Original Message-----", "the mail you replied to"),
    ("----- Original Message -----", "the mail you replied to"),
    ("-----Ursprüngliche Nachricht-----", "the mail you replied to"),
    ("---------- Forwarded message ---------", "a forwarded mail"),
    ("-------- Forwarded Message --------", "a forwarded mail"),
    ("Begin forwarded message:", "a forwarded mail"),
])
def test_separators_end_the_reading(marker: str, why: str) -> None:
    [*_, last] = text_lines(f"LIST\n{marker}\nSIGNON ?game yourpassword\n")
    assert (last.kind, last.text, last.why, last.marker_only) == (END, marker, why, False)


def test_outlooks_header_ends_the_reading_but_one_from_line_does_not() -> None:
    header = "From: Judge <judge@example.test>\nSent: Monday, March 2, 2026 1:00 PM\nTo: Anna\nSubject: x\n\nSTART\n"
    assert kinds("LIST\n\n" + header)[-1] == (END, "From: Judge <judge@example.test>")
    assert kinds("LIST\n____________________\n" + header)[-1] == (END, "____________________")
    german = "Von: Judge <judge@example.test>\nGesendet: Montag, 2. März 2026 13:00\nAn: Anna\nBetreff: x\nSTART"
    assert kinds(german)[0][0] == END
    # A line that starts "From:" with commands after it is read as it stands.
    assert [k for k, _ in kinds("From: me\nSIGNON ?g pw\nLIST\n")] == [COMMAND, COMMAND, COMMAND]
    # A line of underscores with no header after it: a player's rule, not a reply.
    assert [k for k, _ in kinds("LIST\n__________\nHELP\n")] == [COMMAND, COMMAND, COMMAND]


def test_pgp_clearsigned_text_is_read_without_armour_or_signature() -> None:
    text = ("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nSIGNON ?g pw\n- - dash\n- -- \nAnna\n"
            "-----BEGIN PGP SIGNATURE-----\n\niHUEARYIAB0WIQ\n-----END PGP SIGNATURE-----\n")
    got = list(text_lines(text))
    assert [(x.kind, x.text) for x in got if x.kind != BLANK] == [
        (ARMOUR, "-----BEGIN PGP SIGNED MESSAGE-----"), (ARMOUR, "Hash: SHA256"), (COMMAND, "SIGNON ?g pw"),
        (COMMAND, "- dash"), (END, "-- ")]
    assert got[-1].marker_only and got[-1].why == "a signature"
    # Outside a signed text a leading "- " is the player's own.
    assert kinds("- LIST") == [(COMMAND, "- LIST")]


def test_the_signature_separator_ends_the_reading() -> None:
    [*_, last] = text_lines("LIST\n-- \nSIGNON ?g pw\n")
    assert (last.kind, last.marker_only) == (END, True)


def test_ordinary_commands_are_untouched() -> None:
    text = "SIGNON ?g pw\nSET PREFERENCE E F G\nAustria: 40\nSET DEADLINE 2026-03-04 12:00\nSIGNOFF\n"
    assert [k for k, _ in kinds(text)] == [COMMAND] * 5
