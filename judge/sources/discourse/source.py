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

import logging
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime
from typing import Any

from sqlalchemy.orm import Session

from judge.sources.base import RawMail, Source
from judge.sources.discourse.client import DiscourseClient, DiscourseError
from judge.sources.discourse.settings import DiscourseSettings
from judge.sources.watermark import WatermarkStore

log = logging.getLogger(__name__)

_UIDVALIDITY = 1  # post ids never restart; WatermarkStore wants a validity number


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

    def describe(self) -> str:
        return f"the Discourse forum {self.settings.base_url} (as {self.settings.username})"

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
