"""The GM's side of the blinding protocol (docs/blinding.md), the judge's
side of its own blind-random games: a frozen state and the pure steps that
move it, each returning the new state and what to send.

    state, out = start(players, powers, stream)        # 1-2: out[player] = GM-blinded message
    state = third_party_list(state, messages)          # 4: the third party's shuffled list
    state = blinds_collected(state)                    # 5: the third party holds every blind
    state, out = unblind(state, stream)                # 7: out[player] = final message
    fmt = public_format(state)                         # 7: publish this pattern
    state, record = blinds_published(state, blinds)    # 8: the GM's record
    verdict = check_claim(state, player, message)      # a player says the message was corrupted
    gm_awaiting(state)                                 # whom the protocol waits for

With `start(..., receipts=True)` the GM asks every player to quote back the
final message (`receipt`) before the format is made public.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from judge.methods.blind_random.digits import DEFAULT_LENGTH, Format, add, make_format, random_digits, reveal, sub
from judge.methods.blind_random.records import Correction, Decoding, Record, Verdict
from judge.methods.blind_random.shared import (
    ProtocolError,
    canonical_players,
    join_names,
    message_arg,
    named_powers,
)
from judge.rng import DrawStream

# What the GM side's draws are recorded as (DrawStream `what`).
WHAT_GM_BLIND = "blinding-gm-blind"
WHAT_FIRST = "blinding-first-message"
WHAT_FINAL = "blinding-final-message"

# Phases, in order (rerun ends a failed run).
AWAITING_LIST = "awaiting-list"  # step 3-4: players blind, the third party collects and forwards
AWAITING_BLINDS = "awaiting-blinds"  # step 5: the third party collects the players' blinds
READY = "ready"  # the third party holds every blind: the GM may send the final messages
AWAITING_RECEIPTS = "awaiting-receipts"  # step 7 with receipts: players quote their message back
AWAITING_PUBLICATION = "awaiting-publication"  # step 8: the third party publishes the blinds
# Two or more messages were corrupted: the third party traces the list
# (which player sent each entry), and the GM side assigns by the trace.
AWAITING_TRACE = "awaiting-trace"
DONE = "done"
RERUN = "rerun"
PHASES = (AWAITING_LIST, AWAITING_BLINDS, READY, AWAITING_RECEIPTS, AWAITING_PUBLICATION, AWAITING_TRACE, DONE,
          RERUN)


@dataclass(frozen=True)
class GMState:
    """The GM's side of one run of the protocol. Everything in it is the GM's
    secret until the protocol says otherwise: never show it to a player."""

    players: tuple[str, ...]  # canonical order
    powers: tuple[str, ...]  # power-list order
    fmt: Format
    gm_blind: str
    first: tuple[tuple[str, str], ...]  # step 2: (player, GM-blinded message), canonical order
    in_play: tuple[int, ...]  # the power numbers whose messages were sent
    third_party: str = "the third party"
    receipts_required: bool = False
    phase: str = AWAITING_LIST
    blinded_list: tuple[str, ...] = ()  # step 4, in the third party's order
    final: tuple[tuple[str, str], ...] = ()  # step 7: (player, list entry minus G), canonical order
    receipts: tuple[str, ...] = ()  # players who quoted their final message back correctly
    blinds: tuple[str, ...] = ()  # step 8, as published
    record: Record | None = None
    rerun_reason: str | None = None  # why the blinds alone did not assign the powers
    round: int = 1  # the master's RERUN starts round 2, 3...
    trace: tuple[str, ...] = ()  # the third party's trace: who sent each list entry, in list order

    @property
    def length(self) -> int:
        return self.fmt.length

    def as_dict(self) -> dict[str, Any]:
        return {
            "players": list(self.players), "powers": list(self.powers),
            "format": self.fmt.pattern, "gm_blind": self.gm_blind,
            "first": [list(x) for x in self.first], "in_play": list(self.in_play),
            "third_party": self.third_party, "receipts_required": self.receipts_required,
            "phase": self.phase, "blinded_list": list(self.blinded_list),
            "final": [list(x) for x in self.final], "receipts": list(self.receipts),
            "blinds": list(self.blinds),
            "record": self.record.as_dict() if self.record else None,
            "rerun_reason": self.rerun_reason, "round": self.round, "trace": list(self.trace),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GMState:
        return cls(
            players=tuple(d["players"]), powers=tuple(d["powers"]),
            fmt=Format(d["format"], len(d["powers"])), gm_blind=d["gm_blind"],
            first=tuple(tuple(x) for x in d["first"]), in_play=tuple(d["in_play"]),
            third_party=d.get("third_party", "the third party"),
            receipts_required=d.get("receipts_required", False), phase=d["phase"],
            blinded_list=tuple(d.get("blinded_list", ())), final=tuple(tuple(x) for x in d.get("final", ())),
            receipts=tuple(d.get("receipts", ())), blinds=tuple(d.get("blinds", ())),
            record=Record.from_dict(d["record"]) if d.get("record") else None,
            rerun_reason=d.get("rerun_reason"), round=d.get("round", 1), trace=tuple(d.get("trace", ())),
        )


def start(
    players: Iterable[str],
    powers: Iterable[Any],
    stream: DrawStream,
    *,
    third_party: str = "the third party",
    length: int = DEFAULT_LENGTH,
    receipts: bool = False,
    round: int = 1,
) -> tuple[GMState, dict[str, str]]:
    """Steps 1-2: make the format, the power messages and the GM blind G; give
    each player (in canonical order) the GM-blinded message of a power drawn
    among those left (power-list order). Returns the state and what to send:
    player -> GM-blinded message. `powers` are names or a PowerList.

    With fewer players than powers, the powers whose messages nobody gets are
    not in play; more players than powers are refused."""
    names = canonical_players(players)
    power_names = named_powers(powers)
    if len(names) > len(power_names):
        raise ProtocolError(f"{len(names)} players for {len(power_names)} powers: everyone needs a power")
    fmt, gm_blind, first = deal(names, len(power_names), stream, length)
    in_play = tuple(sorted(fmt.decode(sub(m, gm_blind)) for _, m in first))
    state = GMState(players=names, powers=power_names, fmt=fmt, gm_blind=gm_blind, first=tuple(first),
                    in_play=in_play, third_party=third_party, receipts_required=receipts, round=round)
    return state, dict(first)


def deal(players: Sequence[str], n_powers: int, stream: DrawStream, length: int = DEFAULT_LENGTH
         ) -> tuple[Format, str, list[tuple[str, str]]]:
    """Steps 1-2's draws: the format, G, and for each player in the order
    given a power drawn among those left (power-list order), as its
    GM-blinded message. Only the number of players and their order change
    the draws, not their names: a player who knows only their own place can
    re-run it (judge.methods.blind_random.player_replay)."""
    fmt = make_format(stream, n_powers, length)
    gm_blind = random_digits(stream, fmt.length, WHAT_GM_BLIND)
    left = list(range(n_powers))
    first = []
    for player in players:
        k = stream.choice(left, what=WHAT_FIRST, player=player)
        left.remove(k)
        first.append((player, add(fmt.message(k), gm_blind)))
    return fmt, gm_blind, first


def _need(state: GMState, *phases: str, doing: str) -> None:
    if state.phase in phases:
        return
    if state.phase == RERUN:
        raise ProtocolError(f"cannot {doing}: this run failed and the protocol must be run again "
                            f"({state.rerun_reason})")
    raise ProtocolError(f"cannot {doing} now. {gm_awaiting(state)}")


def third_party_list(state: GMState, messages: Sequence[str]) -> GMState:
    """Step 4: the third party's shuffled list, one blinded message per player.
    Refuses a list of the wrong size, malformed entries and duplicates (the
    errors give positions, counted from 1, never the digits)."""
    _need(state, AWAITING_LIST, doing="take the third party's list")
    if isinstance(messages, str):
        raise ProtocolError("the list must be a sequence of messages, not one text")
    entries = list(messages)
    if len(entries) != len(state.players):
        raise ProtocolError(
            f"the list from {state.third_party} has {len(entries)} message(s); "
            f"it must have one per player, {len(state.players)}"
        )
    for i, m in enumerate(entries, 1):
        message_arg(m, state.length, f"message {i} of the list")
    seen: dict[str, int] = {}
    for i, m in enumerate(entries, 1):
        if m in seen:
            raise ProtocolError(
                f"messages {seen[m]} and {i} of the list are the same: every player's message must appear once"
            )
        seen[m] = i
    return replace(state, phase=AWAITING_BLINDS, blinded_list=tuple(entries))


def blinds_collected(state: GMState) -> GMState:
    """Step 5 done: the third party confirms it holds every player's blind."""
    _need(state, AWAITING_BLINDS, doing="note that the third party holds every blind")
    return replace(state, phase=READY)


def unblind(state: GMState, stream: DrawStream) -> tuple[GMState, dict[str, str]]:
    """Steps 6-7: subtract G from every entry of the list and send one to each
    player: for each player in canonical order, an entry drawn among those
    left (in list order). Returns the state and player -> final message.

    Refused until the list is in and the third party has confirmed it holds
    every blind: sending earlier would let a player hold back their blind."""
    if state.phase == AWAITING_BLINDS:
        raise ProtocolError(
            f"cannot send the final messages yet: {state.third_party} has not confirmed "
            "that it holds every player's blind"
        )
    _need(state, READY, doing="send the final messages")
    left = [sub(m, state.gm_blind) for m in state.blinded_list]
    final = []
    for player in state.players:
        m = stream.choice(left, what=WHAT_FINAL, player=player)
        left.remove(m)
        final.append((player, m))
    phase = AWAITING_RECEIPTS if state.receipts_required else AWAITING_PUBLICATION
    return replace(state, phase=phase, final=tuple(final)), dict(final)


def message_for(state: GMState, player: str) -> str:
    """The message to send `player` again at this point (if their mail was
    lost): the final message once sent, else the GM-blinded one."""
    if player not in state.players:
        raise ProtocolError(f"{player} is not a player of this assignment")
    return dict(state.final or state.first)[player]


def receipt(state: GMState, player: str, message: str) -> tuple[GMState, bool]:
    """With receipts: `player` quotes back the final message received. True if
    it is the one sent (recorded); False if it differs: send `message_for`
    again. Once every player has confirmed, the format may be published."""
    _need(state, AWAITING_RECEIPTS, doing="take a receipt")
    if player not in state.players:
        raise ProtocolError(f"{player} is not a player of this assignment")
    if message != dict(state.final)[player]:
        return state, False
    receipts = state.receipts if player in state.receipts else state.receipts + (player,)
    phase = AWAITING_PUBLICATION if len(receipts) == len(state.players) else AWAITING_RECEIPTS
    return replace(state, receipts=receipts, phase=phase), True


def public_format(state: GMState) -> str:
    """The format to publish (step 7), once the final messages are sent (and,
    with receipts, every player has confirmed). Refused before."""
    _need(state, AWAITING_PUBLICATION, DONE, doing="publish the message format")
    return state.fmt.pattern


def _resolve(cands: list[set[int]]) -> tuple[list[int | None], list[tuple[int, ...]], list[int]]:
    """Give each message one power: a message with one candidate fixes it and
    removes it from the others, until nothing changes. Returns per message the
    power (or None), the conflicts (messages that alone decode to one same
    power), and the messages left ambiguous."""
    cands = [set(c) for c in cands]
    power: list[int | None] = [None] * len(cands)
    while True:
        singles: dict[int, list[int]] = {}
        for j, c in enumerate(cands):
            if power[j] is None and len(c) == 1:
                singles.setdefault(next(iter(c)), []).append(j)
        conflicts = [tuple(js) for js in singles.values() if len(js) > 1]
        if conflicts or not singles:
            break
        for k, (j,) in singles.items():
            power[j] = k
            for i, c in enumerate(cands):
                if i != j:
                    c.discard(k)
    ambiguous = [j for j, c in enumerate(cands) if power[j] is None and len(c) > 1]
    return power, conflicts, ambiguous


def blinds_published(state: GMState, blinds: Sequence[str]) -> tuple[GMState, Record]:
    """Step 8: the third party has published the players' blinds. Decode every
    final message with them: the GM's record of who has which power.

    One message that no blind decodes (corrupted in transit) is corrected to
    the one power left over and flagged. Two or more, two messages decoding to
    the same power, or a message that stays ambiguous: state `awaiting-trace`
    (the third party tells which player sent each list entry: `traced`)."""
    _need(state, AWAITING_PUBLICATION, doing="take the published blinds")
    if isinstance(blinds, str):
        raise ProtocolError("the blinds must be a sequence of numbers, not one text")
    blinds = list(blinds)
    if len(blinds) != len(state.players):
        raise ProtocolError(f"{len(blinds)} blind(s) published; there must be one per player, {len(state.players)}")
    for i, b in enumerate(blinds, 1):
        message_arg(b, state.length, f"blind {i}")
    in_play = set(state.in_play)
    decoded = [[(b, k) for b, k in reveal(m, blinds, state.fmt) if k in in_play] for _, m in state.final]
    power, conflicts, ambiguous = _resolve([{k for _, k in c} for c in decoded])
    undecodable = [j for j, p in enumerate(power) if p is None and j not in ambiguous
                   and not any(j in c for c in conflicts)]

    def name(j: int) -> str:
        return state.final[j][0]

    reason = None
    if conflicts:
        js = conflicts[0]
        reason = (f"the messages sent to {join_names(name(j) for j in js)} decode to the same power: one was "
                  "corrupted in transit and the GM cannot tell which")
    elif len(undecodable) >= 2:
        reason = (f"{len(undecodable)} messages decode with no blind (those sent to "
                  f"{join_names(name(j) for j in undecodable)}): more than one was corrupted in transit")
    elif ambiguous:
        reason = (f"the messages sent to {join_names(name(j) for j in ambiguous)} decode to more than one power")
    leftover = sorted(in_play - {p for p in power if p is not None})
    if reason is None and undecodable and len(leftover) != 1:  # pragma: no cover - cannot happen
        reason = "the powers left over do not match the undecodable message"
    corrections = []
    if reason is None and undecodable:
        (j,) = undecodable
        power[j] = leftover[0]
        corrections.append(Correction(
            player=name(j), message=state.final[j][1], power=state.powers[leftover[0]],
            reason="no published blind decodes this message (corrupted in transit); every other power "
                   "is accounted for, so it is the one power left over",
        ))
    decodings = []
    for j, ((player, message), cands) in enumerate(zip(state.final, decoded)):
        blind = next((b for b, k in cands if k == power[j]), None)
        decodings.append(Decoding(player, message, tuple(cands), power[j], blind,
                                  corrected=bool(corrections) and j == undecodable[0]))
    if reason is not None:
        record = Record((), tuple(decodings), (), reason)
        return (replace(state, phase=AWAITING_TRACE, blinds=tuple(blinds), record=record, rerun_reason=reason),
                record)
    by_player = {player: state.powers[p] for (player, _), p in zip(state.final, power)}
    assignment = tuple((p, by_player[p]) for p in state.players)
    record = Record(assignment, tuple(decodings), tuple(corrections))
    return replace(state, phase=DONE, blinds=tuple(blinds), record=record), record


def traced(state: GMState, senders: Sequence[str]) -> tuple[GMState, Record]:
    """The third party's trace, after two or more messages were corrupted:
    `senders[i]` is the player who sent entry i of its list. Entry i is then
    that player's GM-blinded message plus their blind, so it carries the
    power of the message the GM sent that player in step 2, whatever the
    damage to its digits; the player who got entry i in step 7 plays it.

    The trace comes after the final messages were sent (the GM side could
    otherwise choose who gets which power); it must name every player once."""
    _need(state, AWAITING_TRACE, doing="take the third party's trace")
    if isinstance(senders, str):
        raise ProtocolError("the trace must be a sequence of players, not one text")
    senders = list(senders)
    if len(senders) != len(state.blinded_list):
        raise ProtocolError(f"the trace names {len(senders)} player(s); the list has {len(state.blinded_list)} "
                            "entries")
    by_fold = {p.casefold(): p for p in state.players}
    named = []
    for i, who in enumerate(senders, 1):
        player = by_fold.get(str(who).casefold())
        if player is None:
            raise ProtocolError(f"entry {i} of the trace names {who}, who is no player of this assignment")
        if player in named:
            raise ProtocolError(f"the trace names {player} twice: every player sent one entry")
        named.append(player)
    first_power = {p: state.fmt.decode(sub(m, state.gm_blind)) for p, m in state.first}
    index = {m: i for i, m in enumerate(state.blinded_list)}
    assert state.record is not None
    decodings, corrections, assignment = [], [], {}
    for d in state.record.decodings:
        i = index[add(d.message, state.gm_blind)]
        k = first_power[named[i]]
        assignment[d.player] = state.powers[k]
        decodes = any(c == k for _, c in d.candidates)
        blind = next((b for b, c in d.candidates if c == k), None)
        decodings.append(replace(d, power=k, blind=blind, corrected=not decodes))
        if not decodes:
            corrections.append(Correction(
                player=d.player, message=d.message, power=state.powers[k],
                reason=f"traced: the third party says entry {i + 1} of its list came from {named[i]}, whose "
                       f"step-2 message carries {state.powers[k]}; no published blind decodes it to that"))
    record = Record(tuple((p, assignment[p]) for p in state.players), tuple(decodings), tuple(corrections))
    return replace(state, phase=DONE, trace=tuple(named), record=record), record


def check_claim(state: GMState, player: str, claimed_message: str) -> Verdict:
    """A player says their final message was corrupted and quotes what they
    got. The answer is always the power of the GM's record, which decoded the
    message the GM sent: a claim cannot get the player another power."""
    if state.phase == RERUN:
        raise ProtocolError(f"this run failed and the protocol is run again ({state.rerun_reason}); "
                            "there is no power to claim about")
    if state.phase != DONE:
        raise ProtocolError(f"a corruption claim can only be checked once the blinds are published. "
                            f"{gm_awaiting(state)}")
    if player not in state.players:
        raise ProtocolError(f"{player} is not a player of this assignment")
    assert state.record is not None
    sent = dict(state.final)[player]
    power = state.record.powers[player]
    decoding = next(d for d in state.record.decodings if d.player == player)
    claimed = "".join(str(claimed_message).split())
    if decoding.corrected:
        explanation = (f"The message sent to you, {sent}, was corrupted in transit: no published blind decodes "
                       f"it. Every other power is accounted for, so yours is the one left over: {power}.")
        return Verdict(player, sent, claimed, power, True, explanation)
    blind = decoding.blind
    if claimed == sent:
        explanation = (f"The message you quote, {sent}, is exactly the one the GM sent you, and it is not "
                       f"corrupted: minus published blind {blind + 1} ({state.blinds[blind]}) it gives "
                       f"{sub(sent, state.blinds[blind])}, which is in the published format "
                       f"{state.fmt.pattern}. Your power is {power}; the claim is refused.")
        return Verdict(player, sent, claimed, power, False, explanation)
    explanation = (f"The message you quote, {claimed}, is not the one the GM sent you, {sent}: it was changed "
                   f"in transit. The message sent minus published blind {blind + 1} ({state.blinds[blind]}) "
                   f"gives {sub(sent, state.blinds[blind])}, in the published format {state.fmt.pattern}. "
                   f"Your power is {power}.")
    return Verdict(player, sent, claimed, power, True, explanation)


def gm_awaiting(state: GMState) -> str:
    """Whom the protocol waits for, in words for a status mail. Names people
    and steps, never a secret."""
    tp = state.third_party
    if state.phase == AWAITING_LIST:
        return (f"Waiting for {tp} to send the list of blinded messages (each player adds their own blind to the "
                f"message the GM sent them and sends the result to {tp}).")
    if state.phase == AWAITING_BLINDS:
        return f"Waiting for {tp} to confirm that it holds every player's blinding factor."
    if state.phase == READY:
        return "Waiting for the GM to send every player their final message."
    if state.phase == AWAITING_RECEIPTS:
        missing = [p for p in state.players if p not in state.receipts]
        return f"Waiting for {join_names(missing)} to confirm receipt of their final message."
    if state.phase == AWAITING_PUBLICATION:
        return f"Waiting for {tp} to publish the players' blinding factors."
    if state.phase == AWAITING_TRACE:
        return (f"Waiting for {tp} to trace its list (who sent each entry): {state.rerun_reason}. "
                "Or the master sends RERUN for a fresh round.")
    if state.phase == DONE:
        return "Nothing: every player's power is known."
    return f"The protocol must be run again: {state.rerun_reason}."
