"""The Discourse channel's settings: the [forum] table (its `type`, which
forum, is the core's), shared by the Discourse source and the Discourse
transport (judge/transports/discourse/), and the forum's user names as mail
addresses."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field

from judge.sources.imap.settings import is_loopback
from judge.tables import Table

TABLE = "forum"
KEYS = frozenset({"base_url", "api_key", "username", "categories", "topic_ids", "users", "forum_players",
                  "include_private_messages", "start_id", "fallback_topic", "timeout"})
_DOT_ATOM = re.compile(r"[A-Za-z0-9!#$%&'*+/?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/?^_`{|}~-]+)*")
_HEX_NAME = re.compile(r"=([0-9a-f]+)")
DEFAULT_IGNORED = frozenset({"system", "discobot"})


@dataclass(frozen=True)
class DiscourseSettings:
    base_url: str  # https://forum.example.org (http only to a loopback host)
    api_key: str
    username: str  # the judge's forum account (Api-Username)
    categories: frozenset[int] = frozenset()  # watch only these categories (empty: all)
    topic_ids: frozenset[int] = frozenset()  # watch only these topics (empty: all)
    users: Mapping[str, str] = field(default_factory=dict)  # forum username -> registered mail address
    forum_players: frozenset[str] = frozenset()  # registered usernames whose judge mail goes to the forum
    ignore_users: frozenset[str] = DEFAULT_IGNORED  # bots whose posts are never read
    include_private_messages: bool = True
    start_id: int = 0  # without a watermark, posts up to this id are old news
    fallback_topic: int | None = None  # where mail to a forum user goes when no topic is known
    timeout: float = 30.0
    backoff_initial: float = 5.0
    backoff_max: float = 600.0

    def __post_init__(self) -> None:
        parts = urllib.parse.urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"Discourse base_url must be an http(s) URL, not {self.base_url!r}")
        if parts.scheme == "http" and not is_loopback(parts.hostname):
            raise ValueError(f"Discourse over plain http is only allowed to a loopback host, not {parts.hostname!r}")
        if not self.api_key or not self.username:
            raise ValueError("Discourse api_key and username are required")
        object.__setattr__(self, "categories", frozenset(int(c) for c in self.categories))
        object.__setattr__(self, "topic_ids", frozenset(int(t) for t in self.topic_ids))
        object.__setattr__(self, "users", {k.lower(): v.strip().lower() for k, v in dict(self.users).items()})
        object.__setattr__(self, "forum_players", frozenset(u.lower() for u in self.forum_players))
        object.__setattr__(self, "ignore_users", frozenset(u.lower() for u in self.ignore_users))
        unknown = self.forum_players - set(self.users)
        if unknown:
            raise ValueError(f"forum_players not in users: {', '.join(sorted(unknown))}")

    @property
    def host(self) -> str:
        return (urllib.parse.urlsplit(self.base_url).hostname or "").lower()

    @property
    def forum_domain(self) -> str:
        """The mail domain of unregistered forum users."""
        return f"{self.host}.invalid"

    # -- username <-> address -------------------------------------------
    def address_of(self, username: str) -> str:
        registered = self.users.get(username.lower())
        if registered:
            return registered
        return f"{_local_part(username)}@{self.forum_domain}"

    def username_of(self, address: str) -> str | None:
        """The forum username an address belongs to, if it is a forum address
        (unregistered <user>@<host>.invalid, or a registered forum player)."""
        address = address.strip().lower()
        for name, registered in self.users.items():
            if registered == address and name in self.forum_players:
                return name
        local, _, domain = address.rpartition("@")
        if domain != self.forum_domain or not local:
            return None
        hexed = _HEX_NAME.fullmatch(local)
        if hexed:
            try:
                return bytes.fromhex(hexed.group(1)).decode("utf-8")
            except ValueError:
                return None
        return local

    def is_forum_address(self, address: str) -> bool:
        return self.username_of(address) is not None


def _local_part(username: str) -> str:
    """Discourse usernames ([\\w.-], maybe Unicode) as a mail local part; those
    that are not a plain ASCII dot-atom are hex-encoded behind '=' (which no
    Discourse username contains)."""
    lowered = username.lower()
    if lowered.isascii() and _DOT_ATOM.fullmatch(lowered) and len(lowered) <= 60:
        return lowered
    return "=" + username.encode("utf-8").hex()


def read_settings(table: Table) -> DiscourseSettings:
    try:
        return DiscourseSettings(
            base_url=table.get("base_url", str, ""),
            api_key=table.get("api_key", str, ""),
            username=table.get("username", str, ""),
            categories=frozenset(table.get("categories", list, [])),
            topic_ids=frozenset(table.get("topic_ids", list, [])),
            users=table.get("users", dict, {}),
            forum_players=frozenset(table.get("forum_players", list, [])),
            include_private_messages=table.get("include_private_messages", bool, True),
            start_id=table.get("start_id", int, 0),
            fallback_topic=table.get("fallback_topic", int, None),
            timeout=table.number("timeout", 30.0),
        )
    except ValueError as err:
        raise table.error(None, str(err)) from err
