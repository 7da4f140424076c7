"""EJECT player, REPLACE player newaddress, NO PREFERENCE FOR player (master).

EJECT address also ends an observer, or refuses a take-over request; REPLACE
player asker approves the asker's SIGNON Xgame request (eml_takeover.py),
also once the powers are assigned.

REPLACE mails the replacement a one-time token, and the seat takes no
other password until they sign on with it (eml_signon.py): a forged SIGNON
from the new address, sent before the real one, cannot claim the seat.
"""

from __future__ import annotations

from email.utils import parseaddr

from judge import audit, driver, passwords
from judge.commands.base import CommandRejected, Context, handles
from judge.commands import eml_takeover as takeover
from judge.games import active_players, find_player, notify, player_at, power_list, standings
from judge.methods import method_of
from judge.names import clean_name, looks_like
from judge.store.models import Game, Player
from judge.syntax import nodes


OPEN_STATES = ("forming", "bidding", "waiting")

# The token's letters: capitals and digits without look-alikes (no 0/O,
# 1/I/L), so it survives being read aloud or copied by hand. 31^10 is about
# 2^50 tokens; with the lockout's ten tries, guessing one is hopeless.
TOKEN_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
TOKEN_LENGTH = 10


def new_token() -> str:
    return passwords.one_time_token(TOKEN_ALPHABET, TOKEN_LENGTH)


def _power_name(game: Game, who: str) -> str | None:
    """The power `who` names (its name or letter), if any."""
    key = who.strip().casefold()
    return next((p.name for p in power_list(game) if key in (p.name.casefold(), p.letter.casefold())), None)


def named_player(ctx: Context, game: Game, who: str) -> Player:
    """The active player `who` names: an address, or a name as the judge
    shows it (names come from From: and hold spaces: FOR Alice Player).
    Refused, saying which, where it names two, or none."""
    found = _named(game, who)
    if len(found) == 1:
        return found[0]
    if found:
        raise CommandRejected(f"{who!r} names two players of ?{game.name}: "
                              + " and ".join(f"{p.name} <{p.address}> (by {how})" for p, how in (
                                  (p, "address" if p.address.casefold() == _key(who) else "name") for p in found))
                              + "; name the one you mean by address")
    active = [p for p in game.players if p.status == "active"]
    near = [p for p in active if _key(who) in p.name.casefold() or _key(who) in p.address.casefold()]
    if near:
        raise CommandRejected(f"no player {who!r} in ?{game.name}; did you mean "
                              + " or ".join(f"{p.name} <{p.address}>" for p in near)
                              + "? Name a player by address, or by their whole name as LIST shows it")
    names = ", ".join(f"{p.name} <{p.address}>" for p in active)
    raise CommandRejected(f"no player {who!r} in ?{game.name}; the players are: {names or 'none'}")


def _key(who: str) -> str:
    return " ".join(who.strip().strip("<>").split()).casefold()


def _named(game: Game, who: str) -> list[Player]:
    """The active players `who` names by address, then those by name."""
    key = _key(who)
    active = [p for p in game.players if p.status == "active"]
    by_address = [p for p in active if p.address.casefold() == key]
    by_name = [p for p in active if " ".join(p.name.split()).casefold() == key and p not in by_address]
    return by_address + by_name


@handles(nodes.Eject)
def eject(ctx: Context, node: nodes.Eject) -> str:
    game = ctx.require_master()
    other = player_at(game, node.player, "observer", "takeover")
    if other is not None:
        # An observer, or a take-over request the master refuses: at any time.
        was = "observer" if other.status == "observer" else f"request to take over {other.power}"
        other.status = "ejected"
        audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                     player=other.address, old=was, new="ejected")
        notify(ctx.session, ctx.config, ctx.now, "player/ejected.txt.j2", [other.address], game=game, player=other)
        return f"the {was} of {other.name} <{other.address}> in ?{game.name} is ended"
    game = ctx.require_master_in(OPEN_STATES, "players can only change before the powers are assigned")
    player = named_player(ctx, game, node.player)
    player.status = "ejected"
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=player.address, new="ejected")
    notify(ctx.session, ctx.config, ctx.now, "player/ejected.txt.j2", [player.address], game=game, player=player)
    return (f"{player.name} <{player.address}> ejected from ?{game.name}"
            + driver.roster_changed(ctx, game, old=player))


@handles(nodes.Replace)
def replace(ctx: Context, node: nodes.Replace) -> str:
    game = ctx.require_master()
    # The new address is the last word (bare, or <in brackets> after a name).
    last = node.new_player if node.split or not node.text else node.text.split()[-1]
    given, address = parseaddr(last)
    asker = takeover.pending(game, address) if "@" in address else None
    if asker is not None:
        # An approved SIGNON Xgame request (eml_takeover.py): the player may
        # be named by a power they play.
        holder = takeover.holder_of(game, _power_name(game, node.player) or "")
        return takeover.approve(ctx, game, holder or named_player(ctx, game, node.player), asker)
    game = ctx.require_master_in(OPEN_STATES, "players can only change before the powers are assigned "
                                              "(a new player asks for a power with SIGNON Xgame password; "
                                              "then REPLACE approves it)")
    old, new_player = _replaced(ctx, game, node)
    given, address = parseaddr(new_player)
    if "@" not in address:
        raise CommandRejected(f"{new_player!r} is not a mail address; write REPLACE {old.name} WITH "
                              "new@example.com")
    address = address.lower()
    if find_player(game, address) is not None:
        raise CommandRejected(f"{address} has been in ?{game.name} already")
    name = clean_name(given, address.split("@")[0])
    other = looks_like(name, [(p.name, p) for p in active_players(game) if p is not old])
    if other is not None:
        raise CommandRejected(f"the name {name!r} looks like that of the player {other.name!r}; give the "
                              f"replacement another: REPLACE {node.player} Full Name <{address}>")
    old.status = "replaced"
    token = new_token()
    new = Player(game=game, address=address, name=name, status="active", joined_at=ctx.now,
                 password=passwords.hash_password(token, ctx.config.password_cost), password_is_token=True)
    ctx.session.add(new)
    ctx.session.flush()
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=old.address, new="replaced", by=address)
    notify(ctx.session, ctx.config, ctx.now, "player/ejected.txt.j2", [old.address], game=game, player=old)
    # kind "token": the raw-mail retention clears this mail's text later
    # (judge.retention), so the token is not kept in the outbox for ever.
    notify(ctx.session, ctx.config, ctx.now, "player/replacement.txt.j2", [address], game=game, old=old,
           player=new, token=token, kind="token")
    assignment = method_of(game).ASSIGNMENT
    asked = assignment.replacement_asked if assignment is not None else ""
    return (f"{old.name} <{old.address}> replaced by {address} ({name}), who was mailed a one-time token to "
            f"sign on with{asked}" + driver.roster_changed(ctx, game, old=old, new=new))


def _replaced(ctx: Context, game: Game, node: nodes.Replace) -> tuple[Player, str]:
    """(the player REPLACE names, the new player as written). Without WITH,
    the old player's name may hold spaces: the old player is the start of
    the line that names one (REPLACE Ivy Green olga@example.net), the new
    one the rest; where two starts name a player, WITH must say."""
    if node.split or not node.text:
        return named_player(ctx, game, node.player), node.new_player
    words = node.text.split()
    readings = [(found[0], " ".join(words[k:])) for k in range(1, len(words))
                for found in [_named(game, " ".join(words[:k]))] if len(found) == 1]
    if len(readings) == 1:
        return readings[0]
    if len(readings) > 1:
        raise CommandRejected(f"REPLACE {node.text} can be read {len(readings)} ways ("
                              + "; ".join(f"{p.name} <{p.address}> by {rest}" for p, rest in readings)
                              + f"): write REPLACE old WITH new, like REPLACE {readings[0][0].address} WITH "
                              f"{readings[0][1]}")
    return named_player(ctx, game, node.player), node.new_player


@handles(nodes.NoPreference)
def no_preference_for(ctx: Context, node: nodes.NoPreference) -> str:
    # The player's own "No Preference" is part of their submission (runner);
    # this handler is the master's decision for a player who sent nothing.
    game = ctx.require_master()
    submits = method_of(game).SUBMITS
    if submits == "list":
        raise CommandRejected(f"?{game.name} has no bids: a player without a list simply does not mind")
    if submits != "bids":
        raise CommandRejected(f"?{game.name} uses {game.method}: its powers are drawn at random, so there is no "
                              f"preference to decide for a player")
    game = ctx.require_master_in(("bidding", "waiting"), "only during the auction")
    player = named_player(ctx, game, node.player or "")
    standing = next(s for s in standings(ctx.session, game) if s.player.id == player.id)
    if standing.latest is not None:
        raise CommandRejected(f"{player.name} has sent bids; their own submission counts")
    player.gm_no_preference = True
    audit.record(ctx.session, ctx.now, "state", game_id=game.id, inbound_id=ctx.inbound.id,
                 player=player.address, new="no preference (master's decision)")
    if game.state == "waiting":
        return f"{player.name} <{player.address}> bids No Preference (D on every power)"
    return f"{player.name} <{player.address}> will bid No Preference unless they send bids first"

