"""`judge verify`: re-run a resolution from its record and say whether it
checks out, or where it first differs. Needs no database: the record (a
results mail's resolution.json, or `judge resolve` output) holds everything.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from judge.commitment import resolution_seed
from judge.methods import METHODS
from judge.record import FILENAME
from judge.resolution import ResolveInputError, run_resolution
from judge.verify_text import check_text


_FROM_INPUT = ("method", "powers", "params", "chart", "rejected", "violations", "no_preference", "preferences")


def _rerun(record: dict[str, Any], data: Any, seed: bytes) -> dict[str, Any]:
    """The record's method re-runs its input (its Method's replay); a record
    of no known method, as `judge resolve` would."""
    name = record.get("method")
    method = METHODS.get(name) if isinstance(name, str) else None
    return method.replay(data, seed) if method is not None else run_resolution(data, seed)


class RecordError(ValueError):
    """The file holds no record that can be checked."""


@dataclass
class Verdict:
    ok: bool
    checked: list[str] = field(default_factory=list)
    difference: str | None = None


@dataclass
class Mail:
    """What a file to check holds: the record, and for a mail its text."""

    record: dict[str, Any]
    text: str | None = None  # the mail's text/plain body; None for a JSON file
    reader: str | None = None  # the mail's one To address: whom "you" means


def load(raw: bytes) -> dict[str, Any]:
    """The record from a results mail (.eml: its resolution.json) or JSON."""
    return read(raw).record


def read(raw: bytes) -> Mail:
    """The record, and for a results mail also its text and addressee."""
    text = raw.lstrip()
    if text.startswith(b"{"):
        try:
            return Mail(json.loads(raw))
        except json.JSONDecodeError as err:
            raise RecordError(f"not JSON: {err}") from err
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    for part in msg.walk():
        if part.get_filename() == FILENAME or part.get_content_type() == "application/json":
            try:
                record = json.loads(part.get_payload(decode=True))
            except (json.JSONDecodeError, TypeError) as err:
                raise RecordError(f"the mail's {FILENAME} is not JSON: {err}") from err
            return Mail(record, _body(msg), _reader(msg))
    raise RecordError(f"the mail holds no {FILENAME}: is it a results mail of the judge?")


def _body(msg: email.message.EmailMessage) -> str:
    """The text people read: the text/plain body, its transfer encoding
    (quoted-printable, base64) and charset undone; "" if there is none."""
    part = msg.get_body(preferencelist=("plain",))
    if part is None:
        return ""
    try:
        return part.get_content()
    except (LookupError, ValueError):  # an unknown charset: the bytes as well as they decode
        return (part.get_payload(decode=True) or b"").decode("utf-8", "replace")


def _reader(msg: email.message.EmailMessage) -> str | None:
    addresses = [a for _, a in email.utils.getaddresses([str(v) for v in msg.get_all("To", [])]) if a]
    return addresses[0] if len(addresses) == 1 else None


def _describe_draw(d: dict[str, Any]) -> str:
    context = ", ".join(f"{k} {v}" for k, v in d.get("context", {}).items() if k not in ("rows", "cols"))
    return (f"{d.get('what')} ({context}): index {d.get('index')} of {d.get('n')}, chosen {d.get('chosen')!r}, "
            f"word #{d.get('counter')}")


def _first_difference(path: str, recorded: Any, recomputed: Any) -> str | None:
    if isinstance(recorded, dict) and isinstance(recomputed, dict):
        for key in list(recorded) + [k for k in recomputed if k not in recorded]:
            if key not in recomputed:
                return f"{path}.{key}: in the record, but the re-run has no such entry"
            if key not in recorded:
                return f"{path}.{key}: missing from the record (the re-run gives {recomputed[key]!r})"
            diff = _first_difference(f"{path}.{key}", recorded[key], recomputed[key])
            if diff:
                return diff
        return None
    if isinstance(recorded, list) and isinstance(recomputed, list):
        for k, (a, b) in enumerate(zip(recorded, recomputed)):
            diff = _first_difference(f"{path}[{k}]", a, b)
            if diff:
                return diff
        if len(recorded) != len(recomputed):
            return f"{path}: {len(recorded)} entries in the record, {len(recomputed)} in the re-run"
        return None
    if recorded != recomputed:
        return f"{path}: the record says {recorded!r}, the re-run gives {recomputed!r}"
    return None


def verify(record: dict[str, Any]) -> Verdict:
    """Check the commitment, the seed, every draw and the outcome, in order."""
    v = Verdict(ok=False)
    result = record.get("result", record)
    data = record.get("input")
    # A method that draws nothing (LUI: its record has no seed) is re-run as it is.
    drawless = isinstance(result, dict) and "seed" not in result and "secret" not in record \
        and isinstance(result.get("method"), str) and result["method"] in METHODS
    if not isinstance(data, dict) or not isinstance(result, dict) or ("seed" not in result and not drawless):
        raise RecordError("the record has no input and seed to re-run (a results mail's resolution.json, "
                          "or `judge resolve` JSON output)")
    if "secret" in record:
        try:
            secret = bytes.fromhex(record["secret"])
        except (TypeError, ValueError):
            v.difference = f"secret: {record['secret']!r} is not hexadecimal"
            return v
        committed = hashlib.sha256(secret).hexdigest()
        if committed != record.get("commitment"):
            v.difference = (f"commitment: SHA-256 of the revealed secret is {committed}, but the commitment "
                            f"mailed before the draws was {record.get('commitment')}")
            return v
        v.checked.append(f"the secret matches the commitment {committed}")
        seed = resolution_seed(secret, record.get("entropy", [])).hex()
        if seed != result["seed"]:
            v.difference = (f"seed: the secret and the {len(record.get('entropy', []))} entropy line(s) give "
                            f"{seed}, but the record's seed is {result['seed']}")
            return v
        v.checked.append(f"the seed {seed} comes from the secret and {len(record.get('entropy', []))} "
                         f"entropy line(s)")
    elif drawless:
        v.checked.append(f"no seed: {result['method']} draws nothing")
    else:
        v.checked.append(f"seed {result['seed']} as recorded (no commitment in this record)")
    try:
        again = _rerun(record, data, bytes.fromhex(result.get("seed", "")))
    except (ResolveInputError, ValueError, KeyError) as err:
        v.difference = f"input: cannot be re-run: {err}"
        return v
    # What follows from the input alone comes first, so an altered bid or list
    # is named as such rather than by the draws it would change.
    for key in _FROM_INPUT:
        if key in result or key in again:
            diff = _first_difference(f"result.{key}", result.get(key), again.get(key))
            if diff:
                v.difference = diff + " (the record's input and its outcome disagree)"
                return v
    recorded_draws, draws = result.get("draws", []), again.get("draws", [])
    for k, (a, b) in enumerate(zip(recorded_draws, draws), 1):
        if a != b:
            v.difference = (f"draw {k}: the record says {_describe_draw(a)}; "
                            f"the re-run draws {_describe_draw(b)}")
            return v
    if len(recorded_draws) != len(draws):
        v.difference = f"draws: the record has {len(recorded_draws)}, the re-run makes {len(draws)}"
        return v
    v.checked.append(f"all {len(draws)} draw(s) re-run identically")
    # `judge resolve` output carries its input beside the result fields.
    outcome = {k: val for k, val in result.items() if not (k == "input" and result is record)}
    diff = _first_difference("result", outcome, again)
    if diff:
        v.difference = diff
        return v
    v.checked.append("the outcome (assignment and every other field) re-runs identically")
    v.ok = True
    return v


def verify_mail(mail: Mail) -> Verdict:
    """`verify` the record; then, for a mail, that its text says what the
    record says (judge/verify_text.py): the text is what people read."""
    v = verify(mail.record)
    if not v.ok or mail.text is None:
        return v
    text = check_text(mail.text, mail.record, mail.reader)
    if text.difference:
        v.ok, v.difference = False, f"the mail's text: {text.difference}"
        return v
    if not text.whole:  # a blind game's player record: that player's power alone
        v.checked.append("the mail's text agrees with the record")
        return v
    line = (f"the mail's text agrees with the record: it states the power of {len(text.stated)} of "
            f"{len(text.stated) + len(text.unchecked)} players")
    if text.unchecked:
        line += (f"; not checked: {', '.join(text.unchecked)}, named in the text only by a name the record "
                 f"does not hold")
    v.checked.append(line)
    return v
