"""The few calls of Discourse's API the judge makes (the source reads
posts, the transport posts), with the Api-Key/Api-Username headers."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from judge.sources.discourse.settings import DiscourseSettings


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
