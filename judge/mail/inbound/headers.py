"""The headers of one mail as the judge reads them: each value through its
fast path (judge/mail/inbound/fast_headers.py), else through policy.default's
header registry, else decoded by hand; never an exception."""

from __future__ import annotations

import email.utils
from datetime import datetime, timezone
from email import policy
from email.message import Message

from judge.mail.inbound.charsets import _SURROGATES, clean_text
from judge.mail.inbound.encoded_words import decode_raw_header
from judge.mail.inbound.fast_headers import (
    _fast_address,
    _fast_date,
    _fast_text_reader,
    _fetch_unfold,
    _shaped_like_address,
)
from judge.mail.inbound.limits import _MAX_REGISTRY_CHARS

_RICH = policy.default  # the policy the judge used to parse whole mails with


class _Headers:
    """Header access that survives malformed headers.

    The results are those of the default policy's header registry (which
    parses headers into rich objects and raises on some malformed values; then
    the raw value is decoded by hand: RFC 2047 words, 8-bit bytes as UTF-8 or
    Latin-1). Values of an ordinary shape take an exact fast path instead of
    the registry; see judge/mail/inbound/fast_headers.py.
    """

    def __init__(self, msg: Message, problems: list[str], *, rich: bool = True) -> None:
        self._problems = problems
        self._rich = rich
        self._raw: dict[str, list[str]] = {}
        self._plain_addresses: dict[str, tuple[str, str] | None] = {}
        try:
            items = list(msg.raw_items())
        except Exception:
            items = []
        for key, value in items:
            self._raw.setdefault(str(key).lower(), []).append(str(value))

    def raw_all(self, name: str) -> list[str]:
        return self._raw.get(name.lower(), [])

    def all(self, name: str) -> list[str]:
        raw_values = self.raw_all(name)
        if not raw_values:
            return []
        if any(_SURROGATES.search(value) for value in raw_values):
            # 8-bit bytes in the header: the default policy turns every non-UTF-8
            # byte into U+FFFD; decoding by hand keeps Latin-1 headers readable.
            return [decode_raw_header(value) for value in raw_values]
        if not self._rich:
            return [clean_text(value) for value in raw_values]
        fast = _fast_text_reader(name)
        if fast is not None:
            values: list[str] = []
            for value in raw_values:
                try:
                    text = fast(_fetch_unfold(value))
                except Exception:
                    text = None
                if text is None:
                    break
                values.append(clean_text(text))
            else:
                return values
        if any(len(value) > _MAX_REGISTRY_CHARS for value in raw_values):
            self._problems.append(f"{name} header too long to decode exactly")
            return [decode_raw_header(value) for value in raw_values]
        try:
            return [clean_text(str(_RICH.header_fetch_parse(name, value))) for value in raw_values]
        except Exception as error:
            self._problems.append(f"malformed {name} header: {type(error).__name__}")
            return [decode_raw_header(value) for value in raw_values]

    def first(self, name: str) -> str | None:
        values = self.all(name)
        return values[0] if values else None

    def date(self, problems: list[str]) -> datetime | None:
        """_date(self.first("Date")), parsing a plain Date only once."""
        raw_values = self.raw_all("Date")
        if not (self._rich and raw_values) or any(_SURROGATES.search(value) for value in raw_values):
            return _date(self.first("Date"), problems)
        try:
            for value in raw_values[1:]:
                _fast_date(_fetch_unfold(value))  # raises where the registry would
            first = _fetch_unfold(raw_values[0])
            if not first:
                return None
            try:
                parsed: datetime | None = email.utils.parsedate_to_datetime(first)
            except ValueError:
                parsed = None
        except Exception:
            return _date(self.first("Date"), problems)  # the registry's way, problems and all
        if parsed is None:
            # The registry keeps an invalid date as it is, and all() cleans it
            # (with a NUL removed it may parse after all).
            return _date(clean_text(first), problems)
        # The registry's value is format_datetime(parsed) (which cannot fail
        # for a year of 1 to 9999), and that parses back to the same date and
        # offset.
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        return parsed

    def plain_address(self, raw: str) -> tuple[str, str] | None:
        """_fast_address() of a raw value, computed once per value."""
        try:
            return self._plain_addresses[raw]
        except KeyError:
            pass
        try:
            found = _fast_address(_fetch_unfold(raw))
        except Exception:
            found = None
        self._plain_addresses[raw] = found
        return found

    def has(self, name: str) -> bool:
        return bool(self.raw_all(name))

    def address(self, name: str) -> tuple[str, str] | None:
        """(display name, lower-cased address) of the first address in the header."""
        raw_values = self.raw_all(name)
        if not raw_values:
            return None
        if self._rich:
            found = self.plain_address(raw_values[0])
            if found is not None:
                return found
        if self._rich and len(raw_values[0]) > _MAX_REGISTRY_CHARS:
            self._problems.append(f"{name} header too long to decode exactly")
        elif self._rich:
            try:
                header = _RICH.header_fetch_parse(name, raw_values[0])
                for addr in getattr(header, "addresses", ()):
                    spec = clean_text(addr.addr_spec or "")
                    if "@" in spec:
                        return clean_text(addr.display_name or ""), spec.strip().lower()
            except Exception as error:
                self._problems.append(f"malformed {name} header: {type(error).__name__}")
        # Fallback: the lenient old parser on the decoded raw value.
        decoded = decode_raw_header(raw_values[0])
        for display, spec in email.utils.getaddresses([decoded]):
            if "@" in spec:
                return clean_text(display), clean_text(spec).strip().lower()
        # Last resort: anything shaped like an address.
        found_text = _shaped_like_address(decoded)
        if found_text:
            return "", found_text.lower()
        return None


def _date(value: str | None, problems: list[str]) -> datetime | None:
    if not value:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except Exception:
        problems.append("broken Date")
        return None
    if parsed.tzinfo is None:
        # "-0000" means "time zone unknown"; UTC is the honest reading.
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed
