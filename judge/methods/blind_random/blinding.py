"""Murky's blinding protocol: a secret, verifiable random power assignment.

The protocol (docs/blinding.md; seed ../shared/seeds/random-assignment-blinding.txt,
whose beginning is cut and was reconstructed) lets a GM hand out powers at
random in a blind game so that no player learns another's power, the GM
cannot bias who gets which power, and everybody can check the result.

Its pure parts, one name for all of them:
digit arithmetic without carry and message formats (digits.py), the two
state machines a mail shell drives, `GMState` (the judge as GM, gm_side.py)
and `ThirdPartyState` (the judge as third party, third_party.py), the GM's
record (records.py) and what both check (shared.py). Nothing here does I/O,
reads a clock or uses global randomness: every random choice comes from a
passed `DrawStream`. States are frozen; every transition returns a new
state (and what to send), so a shell can store them (`as_dict`/`from_dict`)
between mails. gm_side.py shows the GM side step by step.
"""

from __future__ import annotations

from judge.methods.blind_random.digits import (
    DEFAULT_LENGTH,
    DIGITS,
    MIN_VERIFICATION_DIGITS,
    WHAT_POSITION,
    WHAT_VERIFICATION,
    Format,
    add,
    check_digits,
    make_format,
    normal_token,
    power_messages,
    power_width,
    random_digits,
    reveal,
    sub,
    token_hash,
)
from judge.methods.blind_random.gm_side import (
    AWAITING_BLINDS,
    AWAITING_LIST,
    AWAITING_PUBLICATION,
    AWAITING_RECEIPTS,
    AWAITING_TRACE,
    DONE,
    PHASES,
    READY,
    RERUN,
    WHAT_FINAL,
    WHAT_FIRST,
    WHAT_GM_BLIND,
    GMState,
    blinds_collected,
    blinds_published,
    check_claim,
    deal,
    gm_awaiting,
    message_for,
    public_format,
    receipt,
    start,
    third_party_list,
    traced,
    unblind,
)
from judge.methods.blind_random.records import Correction, Decoding, Record, Verdict
from judge.methods.blind_random.shared import ProtocolError, canonical_players
from judge.methods.blind_random.third_party import WHAT_SHUFFLE, ThirdPartyState

NAME = "blinding"


def awaiting(state: GMState | ThirdPartyState) -> str:
    """Whom the protocol waits for, in words for a status mail. Names people
    and steps, never a secret."""
    if isinstance(state, ThirdPartyState):
        return state.awaiting()
    return gm_awaiting(state)


__all__ = [
    "AWAITING_BLINDS",
    "AWAITING_LIST",
    "AWAITING_PUBLICATION",
    "AWAITING_RECEIPTS",
    "AWAITING_TRACE",
    "DEFAULT_LENGTH",
    "DIGITS",
    "DONE",
    "MIN_VERIFICATION_DIGITS",
    "PHASES",
    "READY",
    "RERUN",
    "WHAT_FINAL",
    "WHAT_FIRST",
    "WHAT_GM_BLIND",
    "WHAT_POSITION",
    "WHAT_SHUFFLE",
    "WHAT_VERIFICATION",
    "Correction",
    "Decoding",
    "Format",
    "GMState",
    "ProtocolError",
    "Record",
    "ThirdPartyState",
    "Verdict",
    "add",
    "awaiting",
    "blinds_collected",
    "blinds_published",
    "canonical_players",
    "check_claim",
    "check_digits",
    "deal",
    "make_format",
    "normal_token",
    "message_for",
    "power_messages",
    "power_width",
    "public_format",
    "random_digits",
    "receipt",
    "reveal",
    "start",
    "sub",
    "third_party_list",
    "token_hash",
    "traced",
    "unblind",
]
