"""The third party's side of the blinding protocol (docs/blinding.md),
this judge's part when another GM asks it with THIRDPARTY: collect the
players' blinded messages, shuffle them for the GM, collect the blinds and
publish them. A frozen state; its chance comes from a passed DrawStream."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from judge.methods.blind_random.digits import DEFAULT_LENGTH, normal_token, token_hash
from judge.methods.blind_random.shared import ProtocolError, canonical_players, join_names, message_arg
from judge.rng import DrawStream

WHAT_SHUFFLE = "blinding-third-party-shuffle"  # what its shuffle's draws are recorded as


@dataclass(frozen=True)
class ThirdPartyState:
    """The third party's side: collect the players' blinded messages, shuffle
    them and send the list to the GM; collect the players' blinds and publish
    them once the GM has sent the final messages."""

    players: tuple[str, ...]  # canonical order
    digits: int = DEFAULT_LENGTH
    gm: str = "the GM"
    key: str = ""  # the run's key: the GM side's protocol lines carry it, and ours to it
    hashes: tuple[tuple[str, str], ...] = ()  # (player, SHA-256 of the player's token), canonical order
    messages: tuple[tuple[str, str], ...] = ()  # (player, blinded message), canonical order
    shuffled: tuple[str, ...] = ()  # the list sent to the GM (empty: not yet sent)
    list_confirmed: bool = False  # the GM confirmed receipt of the list (step 5)
    blinds: tuple[tuple[str, str], ...] = ()  # (player, blind), canonical order
    final_sent: bool = False  # the GM says the final messages are sent (step 7)

    @classmethod
    def new(cls, players: Iterable[str], digits: int = DEFAULT_LENGTH, gm: str = "the GM", key: str = "",
            hashes: Mapping[str, str] | None = None) -> ThirdPartyState:
        if not isinstance(digits, int) or digits < 1:
            raise ProtocolError(f"messages must have at least one digit, not {digits!r}")
        names = canonical_players(players)
        hashes = dict(hashes or {})
        return cls(players=names, digits=digits, gm=gm, key=normal_token(key) if key else "",
                   hashes=tuple((p, hashes[p].lower()) for p in names if p in hashes))

    def with_player(self, player: str, hash_: str) -> ThirdPartyState:
        """One more player (and their token's hash), while the GM side's
        THIRDPARTY lines arrive; refused once a message is in."""
        if self.messages:
            raise ProtocolError("the players are fixed once the first blinded message is in")
        hashes = dict(self.hashes)
        if any(p.casefold() == player.casefold() for p in self.players):
            raise ProtocolError(f"{player} is named twice")
        if hash_.lower() in hashes.values():
            raise ProtocolError(f"{player}'s token hash is another player's too")
        hashes[player] = hash_.lower()
        names = canonical_players([*self.players, player])
        return replace(self, players=names, hashes=tuple((p, hashes[p]) for p in names))

    def player_for(self, token: str) -> str | None:
        """The player whose token this is, if any: a line that carries it
        comes from that player (or someone they gave it to), whatever its
        From header says."""
        h = token_hash(token)
        return next((p for p, x in self.hashes if x == h), None)

    def _known(self, player: str) -> None:
        if player not in self.players:
            raise ProtocolError(f"{player} is not a player of this assignment")

    def _put(self, pairs: tuple[tuple[str, str], ...], player: str, value: str) -> tuple[tuple[str, str], ...]:
        d = dict(pairs)
        d[player] = value
        return tuple((p, d[p]) for p in self.players if p in d)

    @property
    def missing_messages(self) -> list[str]:
        have = dict(self.messages)
        return [p for p in self.players if p not in have]

    @property
    def missing_blinds(self) -> list[str]:
        have = dict(self.blinds)
        return [p for p in self.players if p not in have]

    def receive(self, player: str, message: str) -> ThirdPartyState:
        """Step 3: `player`'s message (the GM's message plus their blind). A
        new one replaces the old (a mistyped message mended) until the list
        has gone to the GM; after that it is refused. The caller has checked
        the player's token: only the player can replace their message."""
        self._known(player)
        message_arg(message, self.digits, "your blinded message")
        have = dict(self.messages)
        if player in have and have[player] != message and self.shuffled:
            raise ProtocolError(f"the list has gone to {self.gm} already: your message cannot change any more. "
                                "If it was mistyped, the GM side finds and mends it at the end")
        if player not in have and self.shuffled:  # pragma: no cover - shuffle needs every message
            raise ProtocolError(f"the list has gone to {self.gm} already")
        return replace(self, messages=self._put(self.messages, player, message))

    def shuffle(self, stream: DrawStream) -> tuple[ThirdPartyState, list[str]]:
        """Step 4: once every player has sent a message, the list for the GM in
        a random order (each place drawn among the messages left, in
        numerical order). Refused, naming who is missing, before; the same
        list again once made."""
        if self.shuffled:
            return self, list(self.shuffled)
        missing = self.missing_messages
        if missing:
            raise ProtocolError(f"cannot send the list to {self.gm} yet: waiting for the blinded message of "
                                f"{join_names(missing)}")
        left = sorted(m for _, m in self.messages)
        out = []
        for i in range(len(self.players)):
            m = stream.choice(left, what=WHAT_SHUFFLE, position=i)
            left.remove(m)
            out.append(m)
        return replace(self, shuffled=tuple(out)), out

    def confirm_list(self) -> ThirdPartyState:
        """Step 5: the GM confirmed receipt of the list; now ask every player for their blind."""
        if not self.shuffled:
            raise ProtocolError(f"no list has been sent to {self.gm} yet")
        return replace(self, list_confirmed=True)

    def receive_blind(self, player: str, blind: str) -> ThirdPartyState:
        """Step 5: `player`'s blinding factor. A new one replaces the old
        until every blind is in; then it is refused: the GM side sends the
        final messages and the format next, and a player who could change
        their blind after seeing those could choose their power."""
        self._known(player)
        message_arg(blind, self.digits, "your blinding factor")
        have = dict(self.blinds)
        if player in have and have[player] != blind and self.has_all_blinds:
            raise ProtocolError("every blinding factor is in and the final messages are on their way: "
                                "yours cannot change any more")
        return replace(self, blinds=self._put(self.blinds, player, blind))

    @property
    def has_all_blinds(self) -> bool:
        """True when the third party may confirm to the GM that it holds every blind."""
        return self.list_confirmed and not self.missing_blinds

    def final_messages_sent(self) -> ThirdPartyState:
        """Step 7: the GM says the final messages are sent; the blinds may be published."""
        if not self.has_all_blinds:
            raise ProtocolError(f"the GM cannot have sent the final messages: {self.awaiting()}")
        return replace(self, final_sent=True)

    def publish(self) -> list[str]:
        """Step 8: the players' blinds, in numerical order and without names.
        Refused, naming who is awaited, until every blind is in and the GM has
        sent the final messages (publishing earlier would let the GM see whose
        message is whose before sending them)."""
        if self.missing_blinds or not self.list_confirmed:
            raise ProtocolError(f"cannot publish the blinds yet: {self.awaiting()}")
        if not self.final_sent:
            raise ProtocolError(f"cannot publish the blinds yet: {self.gm} has not sent the final messages")
        return sorted(b for _, b in self.blinds)

    def trace(self) -> list[str]:
        """Who sent each entry of the list (in the list's order), for the GM
        side after two or more messages were corrupted. Only once the GM has
        sent the final messages: before, it would let the GM choose who gets
        which power."""
        if not self.final_sent:
            raise ProtocolError(f"the list can be traced only after {self.gm} has sent the final messages")
        senders = {}
        for player, message in self.messages:
            senders.setdefault(message, []).append(player)
        return [senders[m].pop(0) for m in self.shuffled]

    def waiting_for(self) -> tuple[str, list[str]]:
        """(step, players): the players the third party waits for and for
        what ("blinded": their blinded message, "blind": their blinding
        factor), or ("", []) when it waits for no player."""
        if not self.shuffled:
            return "blinded", self.missing_messages
        if self.list_confirmed and self.missing_blinds:
            return "blind", self.missing_blinds
        return "", []

    def awaiting(self) -> str:
        """Who the third party waits for (names only, no secret)."""
        if not self.shuffled:
            missing = self.missing_messages
            if not missing:
                return f"Every blinded message is in: shuffle them and send the list to {self.gm}."
            return (f"Waiting for the blinded message of {join_names(missing)} (each player adds their own blind to "
                    "the message the GM sent them and sends the result to the third party).")
        if not self.list_confirmed:
            return f"Waiting for {self.gm} to confirm receipt of the list of blinded messages."
        if self.missing_blinds:
            return f"Waiting for the blinding factor of {join_names(self.missing_blinds)}."
        if not self.final_sent:
            return f"Waiting for {self.gm} to send every player their final message."
        return "Nothing: the blinds can be published."

    def as_dict(self) -> dict[str, Any]:
        return {"players": list(self.players), "digits": self.digits, "gm": self.gm, "key": self.key,
                "hashes": [list(x) for x in self.hashes],
                "messages": [list(x) for x in self.messages], "shuffled": list(self.shuffled),
                "list_confirmed": self.list_confirmed, "blinds": [list(x) for x in self.blinds],
                "final_sent": self.final_sent}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ThirdPartyState:
        return cls(players=tuple(d["players"]), digits=d["digits"], gm=d.get("gm", "the GM"), key=d.get("key", ""),
                   hashes=tuple(tuple(x) for x in d.get("hashes", ())),
                   messages=tuple(tuple(x) for x in d.get("messages", ())),
                   shuffled=tuple(d.get("shuffled", ())), list_confirmed=d.get("list_confirmed", False),
                   blinds=tuple(tuple(x) for x in d.get("blinds", ())), final_sent=d.get("final_sent", False))
