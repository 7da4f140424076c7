"""One jinja2 environment for every text a person reads (templates/)."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from judge.resources import DEFAULT_DOCS_URL
from judge.deadlines import format_time
from judge.names import one_line
from judge.wording import about, plural, reply_subject
from judge.resources import data_dir


def _ljust(value: Any, width: int) -> str:
    return str(value).ljust(width)


def _rjust(value: Any, width: int) -> str:
    return str(value).rjust(width)


# BBCode has no escape character, so a name or free text in a forum post
# must not hold a square bracket at all: "[url=...]" in a player's name
# would be a link in the post, "[/table]" would end the chart. Square
# brackets become round ones (plain text to phpBB; docs/commands.md says
# so), and the text goes on one line, so it can neither form a tag nor
# start a line of its own.
_BBCODE = str.maketrans("[]", "()")


def bbcode(value: Any) -> str:
    return one_line(str(value)).translate(_BBCODE)


class _Environment(Environment):
    """jinja2's Environment, quicker where the judge's texts spend their
    time: `result.chart` on a dict (a method's result, a game's params)
    looks the key up at once instead of first failing to find an attribute
    of that name (an exception each time: hundreds of thousands for a
    deadline's results). The same answer as jinja2's: a name that dict has
    as an attribute (`items`, `get`...) still gives the attribute."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


_DICT_ATTRIBUTES = frozenset(dir(dict))


_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> list:
    """A sort key in which numbers count as numbers: "Player 2" before
    "Player 10", as a person sorts."""
    return [int(part) if part.isdigit() else part.casefold() for part in _DIGITS.split(text)]


def by_name(keys: Any, names: Any = None) -> list:
    """The players `keys` (addresses, or names in an offline file) in the
    natural order of the names they are shown by (`names`: address -> name)."""
    return sorted(keys, key=lambda k: natural_key(str(names.get(k, k) if names else k)))


def label(key: Any, names: Any = None) -> str:
    """How the results name a player: by `names` (address -> name) where
    given, else by the key itself. A function, not a macro: the results call
    it for every cell of a chart, and a macro's call costs ten times more."""
    return str(names.get(key, key) if names else key)


def build_environment(*, html: bool = False) -> Environment:
    """An environment over templates/ with the judge's filters: for texts
    (mails, posts: kept as written, trailing newline and all), or with
    `html` for the web pages (judge.web.app: autoescaped always, so a
    player's name is text, never markup). Templates are compiled once per
    process and kept (they do not change while the judge runs: no
    look at the file's time at every use)."""
    env = _Environment(
        loader=FileSystemLoader(str(data_dir("templates"))),
        undefined=StrictUndefined,
        keep_trailing_newline=not html,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=html,
        auto_reload=False,
        cache_size=-1,
    )
    env.filters["when"] = format_time
    env.filters["ljust"] = _ljust
    env.filters["rjust"] = _rjust
    env.filters["bbcode"] = bbcode
    env.filters["plural"] = plural
    env.filters["about"] = about
    env.filters["reply_subject"] = reply_subject
    env.filters["by_name"] = by_name
    env.globals["label"] = label
    return env


@cache
def environment(docs_url: str = DEFAULT_DOCS_URL) -> Environment:
    """One environment per docs URL: `docs_url` is a global, so a macro
    imported from another template (the results' partials) points to the
    judge's own docs as well, without every import passing it on."""
    env = build_environment()
    env.globals["docs_url"] = docs_url
    return env


def render(name: str, **context: Any) -> str:
    """Render templates/<name>; a missing variable is an error, never blank.
    `docs_url` (config.docs_url) is where a text's links to docs/NAME.md
    point: "{{ docs_url }}/NAME.md"."""
    docs_url = context.pop("docs_url", None) or DEFAULT_DOCS_URL
    return environment(docs_url.rstrip("/")).get_template(name).render(**context)


@cache
def uses(name: str, variable: str) -> bool:
    """Whether templates/<name> itself reads `variable` (jinja2's own
    reading of its source, once per process): a text that does not depend on
    it need not be rendered once for each of its values."""
    from jinja2 import meta

    env = environment()
    source = env.loader.get_source(env, name)[0]
    return variable in meta.find_undeclared_variables(env.parse(source))


def render_mail(name: str, **context: Any) -> tuple[str, str]:
    """Render a mail template whose first line is 'Subject: ...'."""
    text = render(name, **context)
    first, _, body = text.partition("\n")
    if not first.startswith("Subject: "):
        raise ValueError(f"template {name} must start with a 'Subject: ' line")
    return first[len("Subject: "):].strip(), body.lstrip("\n")
