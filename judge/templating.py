"""One jinja2 environment for every text a person reads (templates/)."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from judge.deadlines import format_time
from judge.resources import data_dir


def _ljust(value: Any, width: int) -> str:
    return str(value).ljust(width)


def _rjust(value: Any, width: int) -> str:
    return str(value).rjust(width)


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(data_dir("templates"))),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["when"] = format_time
    env.filters["ljust"] = _ljust
    env.filters["rjust"] = _rjust
    return env


def render(name: str, **context: Any) -> str:
    """Render templates/<name>; a missing variable is an error, never blank."""
    return environment().get_template(name).render(**context)


def render_mail(name: str, **context: Any) -> tuple[str, str]:
    """Render a mail template whose first line is 'Subject: ...'."""
    text = render(name, **context)
    first, _, body = text.partition("\n")
    if not first.startswith("Subject: "):
        raise ValueError(f"template {name} must start with a 'Subject: ' line")
    return first[len("Subject: "):].strip(), body.lstrip("\n")
