"""Inbound "mail" from a Discourse forum: posts in watched topics and in the
judge account's private messages.

Each new post becomes an RFC 822 message that the judge's parser reads like
any other mail:

    From: "<username>" <address>         registered address (settings.users) or
                                           <username>@<forum host>.invalid
    Subject: <topic title>
    Message-ID: <discourse-post-<post id>@<forum host>>
    X-Judge-Reply-To: discourse:<topic id>
    body: the post's raw text (its cooked HTML, as text/html, if raw is absent)

The judge answers with In-Reply-To <discourse-post-ID@host>, which the
Discourse transport (judge.transports.discourse) turns back into a reply in
the post's topic.

Post ids are global and increase with creation time, so one watermark (the
highest post id stored, in `source_state` through WatermarkStore) covers the
public posts and the private messages. fetch() returns the posts above it,
oldest first; ack() raises it. Limits of this scheme: a post that becomes
visible after a newer one was stored (approved from the moderation queue, a
private message the judge was invited to later) is never fetched; on a
database without a watermark everything above `start_id` is read (set
`start_id` to the forum's newest post id when installing on a busy forum).

Network and API faults never leave fetch(): they are logged, fetch returns []
and waits (Retry-After on 429, else backoff) before asking again, so the
daemon never exits because the forum is away. Any failure makes the whole
fetch return [] -- returning only the public posts could move the watermark
past a private message that failed to load.
"""

from __future__ import annotations

import json
import logging
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime
from typing import Any

from sqlalchemy.orm import Session

from judge.sources.base import RawMail, Source
from judge.sources.watermark import WatermarkStore

log = logging.getLogger(__name__)

_UIDVALIDITY = 1  # post ids never restart; WatermarkStore wants a validity number
_DOT_ATOM = re.compile(r"[A-Za-z0-9!#$%&'*+/?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/?^_`{|}~-]+)*")
_HEX_NAME = re.compile(r"=([0-9a-f]+)")
DEFAULT_IGNORED = frozenset({"system", "discobot"})


def _is_loopback(host: str) -> bool:
    from judge.sources.imap import is_loopback

    return is_loopback(host)


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
        if parts.scheme == "http" and not _is_loopback(parts.hostname):
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


# ------------------------------------------------------------------ HTTP client


class DiscourseError(Exception):
    """A failed API call: status None for network errors."""

    def __init__(self, message: str, status: int | None = None, retry_after: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after

    @property
    def temporary(self) -> bool:
        return self.status is None or self.status == 429 or self.status >= 500 or self.status == 408


class DiscourseClient:
    """The few API calls the judge makes, with the Api-Key/Api-Username headers."""

    def __init__(self, settings: DiscourseSettings) -> None:
        self.settings = settings

    def request(self, method: str, path: str, params: Mapping[str, object] | None = None,
                body: Mapping[str, object] | None = None) -> Any:
        st = self.settings
        url = st.base_url.rstrip("/") + path
        if params:
            url += "?" + urllib.parse.urlencode(params, doseq=True)
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method, headers={
            "Api-Key": st.api_key, "Api-Username": st.username, "Accept": "application/json",
            **({"Content-Type": "application/json"} if data is not None else {})})
        try:
            with urllib.request.urlopen(req, timeout=st.timeout) as resp:
                payload = resp.read()
        except urllib.error.HTTPError as err:
            retry_after = err.headers.get("Retry-After") if err.headers else None
            try:
                detail = err.read(500).decode("utf-8", "replace")
            except (OSError, ValueError):
                detail = ""
            msg = f"{method} {path}: HTTP {err.code}"
            if retry_after:
                msg += f" (Retry-After: {retry_after})"
            if detail:
                msg += f": {detail[:300]}"
            raise DiscourseError(msg, err.code, retry_after) from None
        except (TimeoutError, urllib.error.URLError, OSError) as err:
            raise DiscourseError(f"{method} {path}: {type(err).__name__}: {err}") from None
        try:
            return json.loads(payload.decode("utf-8")) if payload.strip() else {}
        except ValueError as err:
            raise DiscourseError(f"{method} {path}: not JSON ({err})", 502) from None

    def get(self, path: str, **params: object) -> Any:
        return self.request("GET", path, params or None)

    def post(self, path: str, body: Mapping[str, object]) -> Any:
        return self.request("POST", path, None, body)


# ------------------------------------------------------------------ the source


@dataclass(frozen=True)
class _Post:
    id: int
    topic_id: int
    username: str
    text: str
    html: bool
    title: str
    created_at: str


class DiscourseSource(Source):
    def __init__(self, settings: DiscourseSettings, watermarks: WatermarkStore, name: str | None = None, *,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.watermarks = watermarks
        self.client = DiscourseClient(settings)
        self.name = name or f"discourse:{settings.username}@{settings.host}"[:200]
        self._monotonic = monotonic
        self._backoff = 0.0
        self._retry_at = 0.0
        self._titles: dict[int, str] = {}
        self._pm_seen: dict[int, str] = {}  # PM topic id -> last_posted_at with nothing new above the watermark
        self._progressed: set[str] = set()  # refs whose watermark the daemon's transaction already wrote

    # -- watermark ------------------------------------------------------
    def last_id(self) -> int:
        mark = self.watermarks.get(self.name)
        return max(self.settings.start_id, mark.last_uid if mark else 0)

    def _advance(self, post_id: int, session: Session | None = None) -> None:
        if session is not None:
            self.watermarks.advance(session, self.name, _UIDVALIDITY, post_id, self.settings.base_url)
        else:
            with self.watermarks.sessions.begin() as s:
                self.watermarks.advance(s, self.name, _UIDVALIDITY, post_id, self.settings.base_url)

    # -- reading --------------------------------------------------------
    def _wanted(self, post: Mapping[str, Any]) -> bool:
        st = self.settings
        if st.topic_ids and int(post.get("topic_id") or 0) not in st.topic_ids:
            return False
        return not (st.categories and post.get("category_id") not in st.categories)

    def _skip(self, post: Mapping[str, Any]) -> bool:
        """The judge's own posts, bots, and non-regular posts (small actions, whispers)."""
        user = str(post.get("username") or "").lower()
        if not user or user == self.settings.username.lower() or user in self.settings.ignore_users:
            return True
        return post.get("post_type", 1) not in (1, None) or bool(post.get("hidden")) or bool(post.get("deleted_at"))

    def _to_post(self, post: Mapping[str, Any], topic_id: int, title: str) -> _Post:
        raw = post.get("raw")
        html = raw is None
        text = str(post.get("cooked") or "") if html else str(raw)
        return _Post(int(post["id"]), topic_id, str(post["username"]), text, html, title,
                     str(post.get("created_at") or ""))

    def _public_posts(self, after: int) -> tuple[list[dict[str, Any]], int]:
        """Latest posts with id > after, paging back with before= until the
        watermark; (posts, highest id seen)."""
        found: dict[int, dict[str, Any]] = {}
        before: int | None = None
        highest = after
        while True:
            page = self.client.get("/posts.json", **({"before": before} if before is not None else {}))
            posts = [p for p in page.get("latest_posts") or [] if isinstance(p, dict) and "id" in p]
            if not posts:
                break
            ids = [int(p["id"]) for p in posts]
            highest = max(highest, *ids)
            for p in posts:
                if int(p["id"]) > after:
                    found[int(p["id"])] = p
            oldest = min(ids)
            if oldest <= after + 1 or (before is not None and oldest >= before):
                break
            before = oldest
        return list(found.values()), highest

    def _pm_posts(self, after: int) -> tuple[list[tuple[dict[str, Any], int, str]], int]:
        st = self.settings
        listing = self.client.get(f"/topics/private-messages/{urllib.parse.quote(st.username)}.json")
        topics = (listing.get("topic_list") or {}).get("topics") or []
        out: list[tuple[dict[str, Any], int, str]] = []
        highest = after
        for topic in topics:
            topic_id = int(topic["id"])
            stamp = str(topic.get("last_posted_at") or topic.get("bumped_at") or "")
            if stamp and self._pm_seen.get(topic_id) == stamp:
                continue
            data = self.client.get(f"/t/{topic_id}.json")
            title = str(data.get("title") or topic.get("title") or "")
            stream = data.get("post_stream") or {}
            posts = [p for p in stream.get("posts") or [] if isinstance(p, dict) and "id" in p]
            have = {int(p["id"]) for p in posts}
            missing = [i for i in stream.get("stream") or [] if int(i) > after and int(i) not in have]
            for i in range(0, len(missing), 50):  # long topics: the first chunk holds only ~20 posts
                more = self.client.get(f"/t/{topic_id}/posts.json", **{"post_ids[]": missing[i:i + 50]})
                posts += [p for p in (more.get("post_stream") or {}).get("posts") or [] if "id" in p]
            new = [p for p in posts if int(p["id"]) > after]
            if new:
                highest = max(highest, *(int(p["id"]) for p in new))
            kept = [p for p in new if not self._skip(p)]
            out += [(p, topic_id, title) for p in kept]
            if not kept and stamp:
                self._pm_seen[topic_id] = stamp
        return out, highest

    def _title(self, topic_id: int, post: Mapping[str, Any]) -> str:
        title = post.get("topic_title")
        if title:
            self._titles[topic_id] = str(title)
            return str(title)
        if topic_id not in self._titles:
            data = self.client.get(f"/t/{topic_id}.json")
            self._titles[topic_id] = str(data.get("title") or "")
        return self._titles[topic_id]

    def fetch(self, limit: int | None = None) -> list[RawMail]:
        if self._monotonic() < self._retry_at:
            log.debug("%s: fetch skipped, forum retry not due yet", self.name)
            return []
        try:
            posts = self._fetch(limit)
        except (DiscourseError, KeyError, TypeError, ValueError, AttributeError) as exc:
            self._failed(exc)
            return []
        self._backoff = self._retry_at = 0.0
        return [RawMail(raw=self.to_mail(p), source=self.name, ref=str(p.id)) for p in posts]

    def _fetch(self, limit: int | None) -> list[_Post]:
        after = self.last_id()
        public, highest = self._public_posts(after)
        chosen: dict[int, _Post] = {}
        for p in public:
            if self._skip(p) or not self._wanted(p):
                continue
            topic_id = int(p["topic_id"])
            chosen[int(p["id"])] = self._to_post(p, topic_id, self._title(topic_id, p))
        if self.settings.include_private_messages:
            pms, pm_highest = self._pm_posts(after)
            highest = max(highest, pm_highest)
            for p, topic_id, title in pms:
                chosen.setdefault(int(p["id"]), self._to_post(p, topic_id, title))
        result = [chosen[i] for i in sorted(chosen)]
        if limit is not None:
            result = result[:limit]
        if not chosen and highest > after:
            # Only the judge's own posts, bots' or unwatched ones: nothing to
            # store, so move past them now rather than paging back to them forever.
            self._advance(highest)
        return result

    def _failed(self, exc: BaseException) -> None:
        st = self.settings
        retry_after = getattr(exc, "retry_after", None)
        wait = None
        if retry_after:
            try:
                wait = min(st.backoff_max, max(0.0, float(retry_after)))
            except ValueError:
                wait = None
        if wait is None:
            self._backoff = min(st.backoff_max, self._backoff * 2 if self._backoff else st.backoff_initial)
            wait = self._backoff
        self._retry_at = self._monotonic() + wait
        log.warning("%s: fetch failed (%s: %s); retrying in %.0f s", self.name, type(exc).__name__, exc, wait)
        self.watermarks.note_error(self.name, st.base_url, f"fetch failed ({type(exc).__name__}: {exc})")

    # -- the mail -------------------------------------------------------
    def to_mail(self, post: _Post) -> bytes:
        st = self.settings
        msg = EmailMessage(policy=SMTP)
        msg["From"] = Address(display_name=post.username, addr_spec=st.address_of(post.username))
        msg["To"] = Address(display_name=st.username, addr_spec=st.address_of(st.username))
        msg["Subject"] = " ".join((post.title or f"topic {post.topic_id}").split())
        msg["Date"] = format_datetime(_parse_time(post.created_at))
        msg["Message-ID"] = f"<discourse-post-{post.id}@{st.host}>"
        msg["X-Judge-Reply-To"] = f"discourse:{post.topic_id}"
        msg["X-Discourse-Post"] = f"{st.base_url.rstrip('/')}/p/{post.id}"
        text = post.text.replace("\r\n", "\n").replace("\r", "\n")
        if not text.endswith("\n"):
            text += "\n"
        msg.set_content(text, subtype="html" if post.html else "plain", charset="utf-8")
        return msg.as_bytes()

    def progress(self, mail: RawMail, session: Session) -> None:
        self.ack(mail, session)  # the watermark is all there is to record
        self._progressed.add(mail.ref)

    def ack(self, mail: RawMail, session: Session | None = None) -> None:
        if session is None and mail.ref in self._progressed:
            self._progressed.discard(mail.ref)  # written with the raw mail already: not twice
            return
        if mail.source != self.name:
            raise ValueError(f"mail from {mail.source!r} acknowledged at {self.name!r}")
        try:
            post_id = int(mail.ref)
        except ValueError:
            raise ValueError(f"not a Discourse post reference: {mail.ref!r}") from None
        self._advance(post_id, session)


def _parse_time(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except ValueError:
        return datetime.now(UTC)
