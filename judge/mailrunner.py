"""Run the commands of one stored inbound mail and queue its one reply.

Each line gets an outcome (done, rejected and why, ignored); bid lines and a
player's own No Preference together make one submission, checked as a whole
when the mail's commands end. Everything happens in the caller's transaction:
the mail's effects, its reply and its status commit together or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Callable, Iterator

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from judge import audit, driver, mailbatch
from judge.commands import HANDLERS, CommandRejected, Context
from judge.config import Config
from judge.mail import quoting
from judge.mail.inbound import InboundMail, parse_message
from judge.mail.quoting import text_lines
from judge.methods import method_of
from judge.methods.interface import bids_of, lists_of
from judge.methods.registry import protocols
from judge.outbox import queue_mail
from judge.store.models import InboundMessage, OutboxMessage, Player
from judge.syntax import CommandSyntaxError, looks_like_command, mask_secret, nodes, parse_line
from judge.syntax.parser import MAX_LINE_LENGTH
from judge.templating import render_mail
from judge.variants import is_variant
from judge.wording import plural, were


@dataclass
class Block:
    """One entry of the reply: the line(s) it is about and their outcome."""

    lines: list[tuple[int, str]]
    status: str  # done | rejected | ignored
    message: str
    rendered_error: str | None = None
    notes: list[str] = field(default_factory=list)
    prose: bool = False  # a line that was no command and not meant as one: not quoted
    always: bool = False  # a note about the whole mail: shown even when the reply is cut short
    # The message is the judge's own text (a HELP page, LIST, a command's
    # "done" line), not the sender's: never cut mid-line (_bounded).
    own: bool = False


@dataclass
class InboundRow:
    """A stored mail while it is processed: read from `inbound_messages`,
    and its outcome (status, reason, sender, subject, processed_at) written
    back with one prepared UPDATE -- not an ORM object, whose flush before
    every later query cost more than the rest of a LIST mail's work."""

    id: int
    source: str
    message_id: str
    raw: bytes
    received_at: datetime
    oversize: int | None = None  # only the header is stored: the mail had this many bytes
    sender: str | None = None
    subject: str | None = None
    status: str = "new"
    reason: str | None = None
    processed_at: datetime | None = None
    authenticated: bool = False  # a SIGNON of the mail named a game and its right password


_T = InboundMessage.__table__
# What process_inbound reads of a waiting mail (judge.mailbatch writes the outcome).
NEW_MAILS = (select(_T.c.id, _T.c.source, _T.c.message_id, _T.c.raw, _T.c.received_at, _T.c.oversize)
             .where(_T.c.status == "new").order_by(_T.c.id))


def process_inbound(session: Session, config: Config, now: datetime, row: InboundRow) -> None:
    """Run one stored mail and queue its reply, in the caller's transaction
    (a batch's, judge.mailbatch.start, or a mail's own)."""
    _process(session, config, now, row)
    mailbatch.write_outcome(session, {
        "row_id": row.id, "status": row.status, "reason": row.reason, "sender": row.sender,
        "subject": row.subject, "processed_at": row.processed_at, "authenticated": row.authenticated})


def _process(session: Session, config: Config, now: datetime, row: InboundRow) -> None:
    mail = mailbatch.parsed(session, row.id) or parse_message(
        row.raw, own_addresses=[config.address], trusted_authserv_ids=config.trusted_authserv_ids)
    row.sender = mail.sender
    row.subject = mask_secret(mail.subject[:500])  # never a password in a column kept past the raw mail
    audit.record(session, now, "inbound", inbound_id=row.id, message_id=row.message_id, sender=mail.sender,
                 subject=row.subject, source=row.source)
    row.processed_at = now
    if config.require_authenticated_from and mail.from_authenticated is not True:
        # The receiving MTA did not vouch for the From domain (DKIM, SPF,
        # DMARC): a forged sender gets neither action nor reply.
        row.status, row.reason = "ignored", "From not authenticated by a trusted Authentication-Results header"
        return
    if mail.auto:
        if mail.sender and _judge_protocol_only(mail.text, config):
            # Another judge's protocol mail (a method's THIRD_PARTIES, like
            # docs/blinding.md's): run it, but never answer an automatic
            # mail (no loops).
            run_lines(Context(session=session, config=config, now=now, mail=mail, inbound=row), mail.text)
            row.status, row.reason = "done", f"judge-to-judge protocol mail, no reply ({mail.auto})"
            return
        row.status, row.reason = "ignored", f"no reply: {mail.auto}"
        return
    if not mail.sender:
        # No From, several From headers, or a From of several addresses
        # (judge.mail.inbound): nobody to act for, nobody to answer.
        row.status, row.reason = "quarantined", "no usable From address: nobody to answer"
        return
    if _flooding(session, config, now, row, mail):
        return
    refusal = _refusal(config, row, mail)
    if refusal is not None:
        _reply(session, config, now, row, mail, [Block([], "rejected", refusal)], game_id=None)
        row.status, row.reason = "done", refusal
        return
    ctx = Context(session=session, config=config, now=now, mail=mail, inbound=row)
    blocks = run_lines(ctx, mail.text)
    if all(b.status == "ignored" or b.prose for b in blocks):
        # Nothing in the mail was a command (spam, chat, a forged Reply-To).
        if row.source.startswith("discourse"):
            # Chat on a forum is not mail to the judge: no answer (it would
            # be a public error message under every post).
            row.status, row.reason = "ignored", "forum post without commands"
            return
        _no_command_reply(session, config, now, row, mail, blocks)
        return
    _reply(session, config, now, row, mail, blocks, game_id=ctx.log_game_id, to=ctx.reveal_to)
    row.status = "done"


def _refusal(config: Config, row: InboundRow, mail: InboundMail) -> str | None:
    """Why the judge answers this mail without reading its commands, if so."""
    size = row.oversize or len(row.raw)
    if size > config.max_message_bytes:
        return (f"your mail is {size} bytes; the judge reads mails of at most {config.max_message_bytes} bytes. "
                "Send the commands as plain text, without attachments")
    return mail.refusal


# Built once. On the table, not the ORM class: inbound rows are written
# with plain UPDATEs (judge.mailbatch), so no ORM object needs flushing.
_NOTICE_SINCE = (select(OutboxMessage.id).join(InboundMessage, OutboxMessage.inbound_id == InboundMessage.id)
                 .where(OutboxMessage.kind == bindparam("kind"), InboundMessage.sender == bindparam("sender"),
                        OutboxMessage.created_at >= bindparam("since")).limit(1))


# The day's one reply to a mail without commands: that mail's row says so.
NO_COMMAND = mailbatch.NO_COMMAND


def _flooding(session: Session, config: Config, now: datetime, row: InboundRow, mail: InboundMail) -> bool:
    """Past the hourly cap of its sender, a mail is kept but not run; the
    sender gets at most one short notice an hour.

    Mails that carried a right password (a SIGNON) are counted apart from
    the others, and a mail over the others' cap still runs if it carries
    one: sixty forged HELP mails "from" a player cannot hold up the
    player's real bids. The password of a mail over the cap is checked
    under the lockout's rules (judge.lockout), so the cap opens no way to
    guess passwords faster."""
    since, limit = now - timedelta(hours=1), config.max_mails_per_sender_per_hour
    count = mailbatch.sender_mails_since(session, mail.sender, since, authenticated=False)
    if count < limit:
        return False
    if _carries_right_password(session, config, now, mail):
        count = mailbatch.sender_mails_since(session, mail.sender, since, authenticated=True)
        if count < limit:
            return False
    row.status = "quarantined"
    row.reason = f"flood: {count} mails from {mail.sender} in the last hour (limit {limit})"
    mailbatch.flush(session)  # the notices' query reads the inbound mails' senders
    if session.scalar(_NOTICE_SINCE, {"kind": "flood", "sender": mail.sender, "since": since}) is None:
        subject, body = render_mail("flood.txt.j2", mail=mail, count=count, limit=limit, judge_name=config.name)
        queue_mail(session, config, now, to=[mail.sender], subject=subject, body=body, kind="flood",
                   inbound_id=row.id, in_reply_to=mail.message_id)
    return True


def _carries_right_password(session: Session, config: Config, now: datetime, mail: InboundMail) -> bool:
    """Whether one of the mail's SIGNON lines names a game and the right
    password for the sender in it (as its master or as the player with that
    address)."""
    from judge import lockout
    from judge.games import find_game, find_player

    for _, _, node in command_lines(mail.text, config.max_line_length,
                                    lambda name: is_variant(name, config.variants)):
        if not isinstance(node, nodes.Signon):
            continue
        game = find_game(session, node.game)
        if game is None:
            continue
        if node.master:
            if lockout.try_password(session, config, now, game, None, node.password):
                return True
            continue
        player = find_player(game, mail.sender or "")
        if (player is not None and player.status == "active" and player.address.casefold() == mail.sender
                and lockout.try_password(session, config, now, game, player, node.password)):
            return True
    return False


def command_lines(text: str, max_length: int = MAX_LINE_LENGTH, is_variant: Callable[[str], bool] | None = None
                  ) -> Iterator[tuple[int, str, nodes.Node | CommandSyntaxError]]:
    """(line number, line, its node or syntax error) for each command line:
    the lines run_lines reads (judge.mail.quoting: no quoted line, no line
    of the mail replied to, of a signature or of PGP armour), up to SIGNOFF."""
    for item in text_lines(text):
        if item.kind == quoting.END:
            return
        if item.kind != quoting.COMMAND:
            continue
        number, line = item.number, item.text
        try:
            node: nodes.Node | CommandSyntaxError = parse_line(line, number, max_length=max_length,
                                                               is_variant=is_variant)
        except CommandSyntaxError as err:
            node = err
        if isinstance(node, nodes.Signoff):
            return
        yield number, line, node


def _judge_protocol_only(text: str, config: Config) -> bool:
    """Whether the mail's commands are all messages one judge sends another
    (in a protocol of a method's with other judges: its THIRD_PARTIES)."""
    known = protocols()
    seen = False
    for _, _, node in command_lines(text, config.max_line_length):
        if not any(p.judge_to_judge(node) for p in known):
            return False
        seen = True
    return seen


# What a stuck game still answers (judge.driver.stopped): reading it, and
# the lines that only say who writes or which game.
_RUN_WHEN_STOPPED = (nodes.ListGame, nodes.Help, nodes.Signon, nodes.Signoff, nodes.Create)


def run_lines(ctx: Context, text: str) -> list[Block]:
    blocks: list[Block] = []
    bid_block: Block | None = None
    list_block: Block | None = None  # a preference list pasted after FOR, over one line or several
    quoted = introductions = armour = read = 0
    shown_once: dict[tuple, int] = {}
    lines = text.split("\n")
    limit = ctx.config.max_commands_per_mail
    for item in text_lines(text):
        number, line = item.number, item.text
        if ctx.stop or item.kind == quoting.END:
            # After SIGNOFF, a refused SIGNON, a signature, or where the mail
            # replied to begins: named by number, never quoted (a password
            # may stand there).
            first, why = number, ""
            if not ctx.stop:  # this line ends the reading
                first, why = (number + 1 if item.marker_only else number), item.why
            ctx.stop = True
            _not_read(blocks, lines, first, why)
            break
        if item.kind == quoting.BLANK:
            continue
        if item.kind in (quoting.QUOTED, quoting.INTRO):
            quoted += 1
            introductions += item.kind == quoting.INTRO
            continue
        if item.kind == quoting.ARMOUR:
            armour += 1
            continue
        read += 1
        if read > limit:
            # A mail's cost is bounded by its lines, not only its bytes:
            # 5,000 LIST lines held the daemon for seconds.
            rest = sum(1 for l in lines[number - 1:] if l.strip())
            blocks.append(Block([], "ignored", f"{plural(rest, 'line')} from line {number} on {were(rest)} not read: the judge "
                                               f"reads at most {limit} lines a mail", always=True))
            break
        if ctx.game is not None:
            # The game's method reads its own commands first (LUI's BID...).
            own = driver.mail_line(ctx, number, line)
            if own is not None:
                status, message = own
                blocks.append(Block([(number, line)], status, message, own=status == "done"))
                _record(ctx, number, line, status, message)
                continue
        try:
            node = parse_line(line, number, max_length=ctx.config.max_line_length,
                              is_variant=lambda name: is_variant(name, ctx.config.variants))
        except CommandSyntaxError as err:
            if ctx.acting_master and ctx.game is not None and _pasted_list_line(ctx, line):
                if list_block is None:
                    list_block = Block([], "done", "")
                    blocks.append(list_block)
                list_block.lines.append((number, line))
                continue
            if looks_like_command(err.text):
                blocks.append(Block([(number, err.text)], "rejected", "not understood", rendered_error=err.render()))
            elif ctx.acting_master:
                # The master's paste of a forum post (FOR): every line is shown
                # with its fate, so the master (and the player) sees what was left out.
                blocks.append(Block([(number, err.text)], "ignored", LEFT_OUT))
                _record(ctx, number, err.text, "ignored", LEFT_OUT)
                continue
            else:
                # Prose, spam, a signature without "-- ": the reply does not
                # quote it (no backscatter of other people's text).
                blocks.append(Block([], "rejected", f"line {number} is no command (not quoted)",
                                    rendered_error=f"line {number}: no command; not quoted.", prose=True))
            _record(ctx, number, err.text, "rejected", str(err))
            continue
        if isinstance(node, nodes.Markup):
            # "[code]", "[/quote]": the frame of a post pasted from a forum.
            blocks.append(Block([(number, line)], "ignored", "forum markup: skipped"))
            _record(ctx, number, line, "ignored", "forum markup", entered=False)
            continue
        if isinstance(node, nodes.Bids) or (isinstance(node, nodes.NoPreference) and node.player is None):
            if isinstance(node, nodes.Bids):
                ctx.submission.entries.extend(node.entries)
            else:
                ctx.submission.no_preference_lines.append(number)
            if bid_block is None:
                bid_block = Block([], "done", "")
                blocks.append(bid_block)
            bid_block.lines.append((number, line))
            if isinstance(node, nodes.Bids) and node.forum:
                reading = ", ".join(f"{e.power} {e.amount}" for e in node.entries)
                ctx.submission.readings.append(f"line {number} read as {reading}")
            continue
        if isinstance(node, (nodes.Signon, nodes.Create, nodes.Signoff, nodes.OnBehalf, nodes.ListGame)):
            # (LIST too: it shows the game with the bids or list above it.)
            if bid_block is not None:
                _finish_submission(ctx, bid_block)
                bid_block = None
            if list_block is not None:
                _finish_pasted_list(ctx, list_block)
                list_block = None
        if isinstance(node, (nodes.Signon, nodes.Create, nodes.Signoff)):
            ctx.acting_master = False  # a FOR's reach ends here
        shown = mask_secret(line, node)
        if isinstance(node, (nodes.ListGame, nodes.Help)):
            # Read-only and the same every time: run once a mail (a mail of
            # HELP lines made a reply of 400 KB, to a forged From).
            key = (type(node), getattr(node, "game", None) or (ctx.game.id if ctx.game else None),
                   getattr(node, "topic", None))
            if key in shown_once:
                blocks.append(Block([(number, shown)], "ignored", f"the same as line {shown_once[key]}"))
                continue
            shown_once[key] = number
        why = driver.stopped(ctx.game) if ctx.game is not None and not isinstance(node, _RUN_WHEN_STOPPED) else None
        if why is not None:
            blocks.append(Block([(number, shown)], "rejected", why))
            _record(ctx, number, shown, "rejected", why)
            continue
        try:
            message = HANDLERS[type(node)](ctx, node)
        except CommandRejected as err:
            blocks.append(Block([(number, shown)], "rejected", str(err)))
            _record(ctx, number, shown, "rejected", str(err))
            continue
        if isinstance(node, nodes.Signon) and (ctx.role == "master" or (
                ctx.player is not None and ctx.player.joined_at != ctx.now)):
            # A right password (not a first join, which sets one): the
            # flood cap counts this mail apart (_flooding).
            ctx.inbound.authenticated = True
        blocks.append(Block([(number, shown)], "done", message, own=True))
        # FOR's own line, and what the master reads (LIST, HELP), are not
        # lines entered in the player's name.
        _record(ctx, number, shown, "done", message,
                entered=not isinstance(node, (nodes.OnBehalf, nodes.ListGame, nodes.Help)))
    if bid_block is not None:
        _finish_submission(ctx, bid_block)
    if list_block is not None:
        _finish_pasted_list(ctx, list_block)
    for work in ctx.after:
        said = work()  # (status, text): what the mail's lines came to as a whole, or None
        if said:
            blocks.append(Block([], said[0], said[1], own=True))
    if quoted:
        what = "starting with >" if not introductions else "starting with >, and the line introducing them"
        blocks.append(Block([], "ignored", f"{plural(quoted, 'quoted line')} ({what}) {were(quoted)} not read"))
    if armour:
        blocks.append(Block([], "ignored", f"{plural(armour, 'line')} of PGP armour {were(armour)} not read"))
    if not any(b.status != "ignored" for b in blocks):
        blocks.append(Block([], "ignored", "your mail held no commands; send HELP for the list"))
    return blocks


def _not_read(blocks: list[Block], lines: list[str], first: int, why: str) -> None:
    """The entry for the lines from line `first` on that were not read: how
    many, which, and why, but not their text (a password may stand there:
    docs/security.md)."""
    rest = [n for n, text in enumerate(lines[first - 1:], first) if text.strip()]
    if not rest:
        return
    span = f"line {rest[0]}" if len(rest) == 1 else f"lines {rest[0]} to {rest[-1]}"
    blocks.append(Block([], "ignored", f"{plural(len(rest), 'line')} after this point {were(len(rest))} not read "
                                       f"({span}{': ' + why if why else ''}; not quoted here)"))


def text_at_lines(lines: list[tuple[int, str]]) -> str:
    """The submission's lines (mail line number, text) as one text in which
    each stands at its own line number, blank lines filling the gaps (the
    mail's other commands, its password): parse_text() of it, in the results
    and in `judge verify`, names every line as the reply to the mail did."""
    out: list[str] = []
    for number, line in lines:
        out.extend([""] * (number - 1 - len(out)))
        out.append(line)
    return "\n".join(out)


LEFT_OUT = "no bid, list or command: left out"


def _record(ctx: Context, number: int, text: str, status: str, message: str, entered: bool = True,
            notes: list[str] | None = None) -> None:
    run = {"run": ctx.blind_run_id} if ctx.blind_run_id is not None else {}
    if notes:
        run["notes"] = notes  # each violation apart, as the reply shows them
    audit.record(ctx.session, ctx.now, "command", game_id=ctx.log_game_id,
                 inbound_id=ctx.inbound.id, line=number, text=text, status=status, message=message, **run)
    if entered and ctx.acting_master and ctx.role == "player" and ctx.player is not None:
        # A line the master entered in a player's name (FOR): the player is
        # told of it (judge/commands/eml_for.py).
        ctx.entered.setdefault(ctx.player.id, (ctx.game, ctx.player, []))[2].append(
            {"line": number, "text": text, "status": status, "message": message, "notes": list(notes or [])})


def _finish_submission(ctx: Context, block: Block) -> None:
    """Hand the bid lines (or No Preference) gathered so far to the game's
    method, as one list (its `bidding` capability words the outcome)."""
    lines, ctx.submission = ctx.submission, type(ctx.submission)()
    first = block.lines[0][0]
    # Stored with each line where the mail had it: the results, made from
    # this text, then name a violation by the same line as this reply.
    text = text_at_lines(block.lines)
    try:
        ctx.require_player()
        game = ctx.require_game()
        if driver.stopped(game) is not None:
            raise CommandRejected(driver.stopped(game))
        bidding = bids_of(method_of(game))
        if bidding is None:
            how = method_of(game).HOW_TO_SUBMIT or f"with the {game.method} method: no bids are needed"
            raise CommandRejected(f"?{game.name} assigns powers {how}")
        block.status, block.message, block.notes = bidding.take(ctx, lines, text)
    except CommandRejected as err:
        block.status, block.message = "rejected", str(err)
        _record(ctx, first, text.strip("\n"), "rejected", str(err))
        return
    block.own = True
    _record(ctx, first, text.strip("\n"), block.status, block.message, notes=block.notes)


def _pasted_list_line(ctx: Context, line: str) -> bool:
    lists = lists_of(method_of(ctx.game))
    return lists is not None and lists.pasted_line(ctx, line)


def _finish_pasted_list(ctx: Context, block: Block) -> None:
    """The lines of a list pasted after FOR, as one SET PREFERENCE in the player's name."""
    lists = lists_of(method_of(ctx.require_game()))
    block.status, block.message = lists.enter_pasted(ctx, block.lines)
    block.own = block.status == "done"
    _record(ctx, block.lines[0][0], "\n".join(line for _, line in block.lines), block.status, block.message)


# A reply stays readable, and never much larger than a mail the judge
# accepts, whatever was sent: what the sender wrote (quoted lines, errors
# that quote them) is cut, and past a number of entries the rest is summed
# up. The judge's own texts are bounded as well (LIST of a judge with very
# many games), but only whole lines go: a HELP page is never cut.
MAX_REPLY_BLOCKS = 200
MAX_REPLY_CHARS = 60_000  # then the rest is summed up too
MAX_ECHO = 300
MAX_MESSAGE = 2000  # an outcome that may quote the sender (a refusal)


def _short(text: str, limit: int = MAX_ECHO) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


def _whole_lines(text: str, limit: int = MAX_REPLY_CHARS) -> str:
    """The judge's own text, up to `limit` characters of whole lines."""
    if len(text) <= limit:
        return text
    kept = text[:limit].rpartition("\n")[0]
    rest = text.count("\n") - kept.count("\n")
    return f"{kept}\n... and {plural(rest, 'more line')}, not shown: the reply would be too long"


def _bounded(blocks: list[Block]) -> list[Block]:
    notes = [b for b in blocks if b.always]
    blocks = [b for b in blocks if not b.always]
    out = []
    size = 0
    for b in blocks[:MAX_REPLY_BLOCKS]:
        if size > MAX_REPLY_CHARS:
            break
        lines = [(n, _short(t)) for n, t in b.lines[:MAX_REPLY_BLOCKS]]
        if len(b.lines) > MAX_REPLY_BLOCKS:
            lines.append((0, f"... and {len(b.lines) - MAX_REPLY_BLOCKS} more lines"))
        message = _whole_lines(b.message) if b.own else _short(b.message, MAX_MESSAGE)
        block = Block(lines, b.status, message,
                      _short(b.rendered_error, MAX_MESSAGE) if b.rendered_error else None,
                      [_short(x) for x in b.notes[:MAX_REPLY_BLOCKS]], b.prose, own=b.own)
        size += (len(block.message) + len(block.rendered_error or "") + sum(len(t) for _, t in lines)
                 + sum(len(x) for x in block.notes))
        out.append(block)
    if len(out) < len(blocks):
        rejected = sum(1 for b in blocks[len(out):] if b.status == "rejected")
        out.append(Block([], "ignored", f"{len(blocks) - len(out)} more entries not shown "
                                        f"({rejected} of them rejected); send fewer lines per mail"))
    return out + notes


def _reply(session: Session, config: Config, now: datetime, row: InboundRow, mail: InboundMail,
           blocks: list[Block], game_id: int | None, to: str | None = None) -> None:
    """The mail's one reply: to `to` when a line's answer must go to a
    registered address only (a power in a blind game), else to
    reply_address()."""
    subject, body = render_mail("reply.txt.j2", mail=mail, blocks=_bounded(blocks), judge_name=config.name,
                                received=row.received_at, subject=_short(mask_secret(mail.subject), 200))
    queue_mail(session, config, now, to=[to or reply_address(session, mail)], subject=subject, body=body, kind="reply",
               game_id=game_id, inbound_id=row.id, in_reply_to=mail.message_id, private=to is not None)


def _no_command_reply(session: Session, config: Config, now: datetime, row: InboundRow, mail: InboundMail,
                      blocks: list[Block]) -> None:
    """A mail with no command gets at most one short reply a day per
    address, quoting nothing: spam with a forged sender costs its victim
    one small mail a day, not one per spam."""
    row.status, row.reason = "done", NO_COMMAND
    if mailbatch.answered_no_command_since(session, mail.sender, now - timedelta(days=1)):
        # "ignored": no reply is due, and the flood cap (which counts the
        # mails run) is not spent on mail that runs nothing.
        row.status, row.reason = "ignored", "no command; its sender had the day's one reply for that already"
        return
    lines = sum(1 for b in blocks if b.status == "rejected")
    subject, body = render_mail("no_command.txt.j2", lines=lines, judge_name=config.name)
    queue_mail(session, config, now, to=[mail.sender], subject=subject, body=body, kind="no-command",
               inbound_id=row.id, in_reply_to=mail.message_id)


_KNOWN_ADDRESS = select(Player.id).where(func.lower(Player.address) == bindparam("address")).limit(1)


def reply_address(session: Session, mail: InboundMail) -> str:
    """Where the reply goes: the From address; a Reply-To only where it is a
    known player's address (a player writing from another mailbox), so a
    spammer's Reply-To cannot aim the judge's replies at a victim."""
    assert mail.sender is not None
    if mail.reply_to and mail.reply_to != mail.sender and session.scalar(
            _KNOWN_ADDRESS, {"address": mail.reply_to.casefold()}) is not None:
        return mail.reply_to
    return mail.sender
