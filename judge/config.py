"""The daemon's configuration: a TOML file, checked in full at start.

A configuration error is reported with the option at fault and makes the
daemon exit with status 2, which the systemd unit does not restart on.
deploy/judge.example.toml documents every option.

This module knows the core's keys (CORE_KEYS). A part with settings of its
own (a mail channel, judge/channels.py; a method, judge.methods.registry.
TABLES) declares its table and reads it itself (judge/tables.py); its
settings are `config.part("sources.imap")`.
"""

from __future__ import annotations

import importlib
import ipaddress
import os
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping

from judge.sources.size_limit import DEFAULT_MAX_BYTES
# ConfigError lives with the parts' table reader (a part imports no
# configuration module); judge.config.ConfigError is the same class.
from judge.tables import ConfigError, Table
from judge.resources import DEFAULT_DOCS_URL, default_data_dir  # noqa: F401  (judge.config.default_data_dir for its users)
from judge.variants import PowerListError, make_power_list


# [judge] docs_url: where the judge's texts link the docs (docs/NAME.md read
# on the web). None by default: a link that may not exist is worse than
# none, and every text also names the HELP topic that says as much.


# Where a judge command looks for its configuration when neither --config
# nor $JUDGE_CONFIG names one: the system's, then the user's. An MTA runs
# `judge deliver` with an empty environment, so both the daemon and the
# pipe find the operator's file here without being told (docs/operating.md).
SYSTEM_CONFIG = Path("/etc/judge/judge.toml")


def user_config() -> Path:
    """$XDG_CONFIG_HOME/judge/judge.toml, else ~/.config/judge/judge.toml."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "judge" / "judge.toml"


def find_config(given: Path | None) -> Path | None:
    """The configuration file to read: `given` (--config, or $JUDGE_CONFIG),
    else SYSTEM_CONFIG, else user_config() if it exists; None: the built-in
    defaults. A file that is there but cannot be read is still the one
    (load_config then says why), never passed over for the next."""
    if given is not None:
        return given
    for candidate in (SYSTEM_CONFIG, user_config()):
        try:
            if candidate.exists():
                return candidate
        except OSError:  # a folder on the way this user may not enter: the file is there, unreadable
            return candidate
    return None


@dataclass(frozen=True)
class Config:
    data_dir: Path
    database_url: str
    address: str = "judge@localhost"
    name: str = "Judge"
    poll_interval: float = 5.0
    default_deadline_hours: float = 72.0
    password_cost: int = 14
    # The mail channels in use, by their names in judge/channels.py: the
    # source that reads mail ([inbox] type), the transport that sends it
    # ([outbox] transport), and a forum read and posted to besides ([forum]
    # type, when the file has a [forum] table).
    inbox_type: str = "maildir"
    transport: str = "maildir"
    forum_type: str | None = None
    max_attempts: int = 8
    retry_seconds: float = 60.0
    # Postfix's default message_size_limit: a larger mail is answered, and
    # only its header is stored.
    max_message_bytes: int = DEFAULT_MAX_BYTES
    max_mails_per_sender_per_hour: int = 60
    # nJudge's lines are short; a longer line is refused before any regular
    # expression or the grammar reads it (no input costs more than linear time).
    max_line_length: int = 1000
    # Lines the judge reads in one mail (a bid list is one line a power):
    # bounds a mail's cost by its lines, not only its bytes.
    max_commands_per_mail: int = 500
    # Raw mail (passwords and all) is kept this long, then replaced by the
    # masked text of the commands (docs/security.md).
    raw_mail_retention_days: float = 30.0
    # Wrong passwords in a row before each further try waits (doubling from
    # password_backoff_seconds), and before the password is locked until the
    # master (or, for the master's, a moderator) lifts it.
    password_backoff_after: int = 3
    password_backoff_seconds: float = 60.0
    password_lock_after: int = 10
    # Moderators: told when a game is stuck or a master password locked.
    moderators: tuple[str, ...] = ()
    # Authentication-Results (RFC 8601) are read only from these authserv-ids
    # (the receiving MTA's), and a mail whose From is not DKIM- or SPF-aligned
    # there is refused when require_authenticated_from is set.
    trusted_authserv_ids: tuple[str, ...] = ()
    require_authenticated_from: bool = False
    variants: Mapping[str, list[Any]] = field(default_factory=dict)
    # CREATE ?game password with no method makes a game of this method (nJudge: preference).
    default_method: str = "preference"
    # [methods.NAME] tables: a method's settings for every new game of it,
    # over the method's own defaults (a season's LUI prize table, say); the
    # master's SET still changes them game by game.
    method_defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Where mails point players for the docs: a public URL of the docs/ folder.
    docs_url: str = DEFAULT_DOCS_URL
    # Reminders to players who have not submitted, this many hours before a
    # deadline (a game's SET REMINDERS overrides them).
    reminder_hours: tuple[float, ...] = (24.0, 1.0)
    # `judge web` and `judge serve --web` listen here ([web] host, port; docs/web.md).
    web_host: str = "127.0.0.1"
    web_port: int = 8080
    # Clients whose X-Forwarded-For (and -Proto) is believed: the reverse
    # proxies in front of `judge web` (addresses or networks). None: the
    # header is ignored, every client is the address it connects from.
    web_trusted_proxies: tuple[str, ...] = ()
    # The site's address as its readers reach it (https://judge.example.org),
    # for the links of the feeds; None: the address the server listens on,
    # never a request's Host header.
    web_public_url: str | None = None
    # The settings of the parts with a table of their own ("sources.imap",
    # "transports.smtp", "methods.blind-random"...): those in use, and those
    # whose table the file has, read and checked at load; any other is read
    # from its defaults when first asked for (part()).
    parts: dict[str, Any] = field(default_factory=dict)
    # The file's tables, as read (the part() of a part read later).
    tables: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def domain(self) -> str:
        return self.address.rpartition("@")[2] or "localhost"

    def part(self, key: str) -> Any:
        """The settings of the part `key` ("sources.imap"; "methods.NAME")."""
        if key not in self.parts:
            self.parts[key] = _read(_parts()[key], self.tables, self.data_dir)
        return self.parts[key]

    def __getattr__(self, name: str) -> Any:
        # Only for a name the Config has not: a part's settings by the name
        # they had here before parts read their own tables (inbox_path,
        # outbox_path, smtp, imap, trusted_judges), as the part declares it
        # (CONFIG_NAMES).
        if not name.startswith("_"):
            for key, module in _parts().items():
                getter = getattr(module, "CONFIG_NAMES", {}).get(name)
                if getter is not None:
                    return getter(self.part(key))
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


# The core's tables and keys; None: a table of tables ([variants.NAME],
# [methods.NAME]). The parts' own keys come from the parts (known_tables).
CORE_KEYS: dict[str, frozenset[str] | None] = {
    "judge": frozenset({"address", "name", "data_dir", "database", "poll_interval", "default_deadline_hours",
                        "password_cost", "moderators", "default_method", "docs_url", "reminder_hours"}),
    "inbox": frozenset({"type"}),
    "outbox": frozenset({"transport", "max_attempts", "retry_seconds"}),
    "forum": frozenset({"type"}),
    "limits": frozenset({"max_message_bytes", "max_mails_per_sender_per_hour", "max_line_length",
                         "max_commands_per_mail", "raw_mail_retention_days", "password_backoff_after",
                         "password_backoff_seconds", "password_lock_after"}),
    "auth": frozenset({"trusted_authserv_ids", "require_authenticated_from"}),
    "web": frozenset({"host", "port", "trusted_proxies", "public_url"}),
    "variants": None,
    "methods": None,
}


def _parts() -> dict[str, ModuleType]:
    """Every part with a table of its own, by its key: the mail channels
    ("sources.NAME", "transports.NAME") and the methods that declare one
    ("methods.NAME")."""
    from judge import channels
    from judge.methods.registry import TABLES

    return {**channels.parts(),
            **{f"methods.{name}": importlib.import_module(path) for name, path in TABLES.items()}}


def known_tables() -> dict[str, frozenset[str] | None]:
    """Every table the configuration may have, with its keys: the core's
    and those the parts declare."""
    known = dict(CORE_KEYS)
    for module in _parts().values():
        known[module.TABLE] = (known.get(module.TABLE) or frozenset()) | module.KEYS
    return known


class _KnownTables(Mapping[str, "frozenset[str] | None"]):
    """known_tables() as a mapping, worked out when read (the parts'
    packages are imported then, and a part registered meanwhile counts)."""

    def __getitem__(self, table: str) -> frozenset[str] | None:
        return known_tables()[table]

    def __iter__(self) -> Iterator[str]:
        return iter(known_tables())

    def __len__(self) -> int:
        return len(known_tables())


_KNOWN: Mapping[str, frozenset[str] | None] = _KnownTables()


def _read(module: ModuleType, raw: Mapping[str, Mapping[str, Any]], base: Path) -> Any:
    """A part's settings from its table: only its own keys are handed to it."""
    values = raw.get(module.TABLE, {})
    return module.read_settings(Table(module.TABLE, {k: v for k, v in values.items() if k in module.KEYS}, base))


def _choices(names: list[str]) -> str:
    quoted = [repr(n) for n in sorted(names)]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _chosen(raw: Mapping[str, Mapping[str, Any]]) -> tuple[str, str, str | None]:
    """The channels the file names: the source, the transport, the forum (or None)."""
    from judge import channels

    inbox = _get(raw.get("inbox", {}), "inbox", "type", str, "maildir")
    if inbox not in channels.SOURCES:
        raise ConfigError(f"[inbox] type: {_choices(list(channels.SOURCES))}, not {inbox!r}")
    transport = _get(raw.get("outbox", {}), "outbox", "transport", str, "maildir")
    if transport not in channels.TRANSPORTS:
        raise ConfigError(f"[outbox] transport: {_choices(list(channels.TRANSPORTS))}, not {transport!r}")
    forum = None
    if "forum" in raw:
        forums = channels.forums()
        forum = _get(raw["forum"], "forum", "type", str, forums[0] if len(forums) == 1 else "")
        if forum not in forums:
            raise ConfigError(f"[forum] type: {_choices(forums) if forums else 'none'} (a forum whose API "
                              f"the judge reads), not {forum!r}")
    return inbox, transport, forum


def check_methods(config: Config) -> None:
    """The options that name a method name one the judge has."""
    from judge.methods import UnknownMethod, get_method

    try:
        get_method(config.default_method)
    except UnknownMethod as err:
        raise ConfigError(f"[judge] default_method: {err}") from err
    for name, table in config.method_defaults.items():
        try:
            method = get_method(name)
        except UnknownMethod as err:
            raise ConfigError(f"[methods.{name}]: {err}") from err
        # Checked on the standard board's 7 powers: the method's own check
        # runs again on each game's powers when it is created.
        try:
            method.params_from({**method.engine().default_params(7).as_dict(), **table}, 7)
        except ValueError as err:
            raise ConfigError(f"[methods.{name}]: {err}") from err


def _is_network(value: object) -> bool:
    """An IP address or network (127.0.0.1, 10.0.0.0/8, ::1): "*" and host names are not."""
    if not isinstance(value, str):
        return False
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return True


def _get(table: Mapping[str, Any], section: str, key: str, kind: type | tuple, default: Any) -> Any:
    if key not in table:
        return default
    value = table[key]
    if isinstance(value, bool) and kind is not bool:
        raise ConfigError(f"[{section}] {key}: expected {getattr(kind, '__name__', kind)}, got {value!r}")
    if not isinstance(value, kind):
        raise ConfigError(f"[{section}] {key}: expected {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


def load_config(path: Path | None = None, *, data_dir: Path | None = None,
                overrides: Mapping[str, Mapping[str, Any]] | None = None) -> Config:
    """Read and check the configuration; every path is made absolute."""
    raw: dict[str, Any] = {}
    if path is not None:
        try:
            raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError as err:
            raise ConfigError(f"configuration file {path} not found") from err
        except UnicodeDecodeError as err:
            raise ConfigError(f"{path}: not UTF-8 text (byte {err.start})") from err
        except OSError as err:  # unreadable by this user (mode, a folder on the way), a directory...
            raise ConfigError(f"cannot read the configuration file {path}: {err.strerror or err}") from err
        except tomllib.TOMLDecodeError as err:
            raise ConfigError(f"{path}: {err}") from err
    for section, values in (overrides or {}).items():
        raw.setdefault(section, {}).update(values)
    known = known_tables()
    for section, table in raw.items():
        if section not in known:
            raise ConfigError(f"unknown section [{section}]; known: {', '.join(sorted(known))}")
        if not isinstance(table, dict):
            raise ConfigError(f"[{section}] must be a table")
        allowed = known[section]
        if allowed is not None:
            unknown = set(table) - allowed
            if unknown:
                raise ConfigError(f"[{section}] unknown option(s): {', '.join(sorted(unknown))}")
    j = raw.get("judge", {})
    base = data_dir or Path(_get(j, "judge", "data_dir", str, "") or default_data_dir())
    base = base.expanduser().resolve()
    address = _get(j, "judge", "address", str, "judge@localhost")
    if "@" not in address:
        raise ConfigError(f"[judge] address: {address!r} is not a mail address")
    database = _get(j, "judge", "database", str, "")
    if not database:
        database = f"sqlite:///{base / 'judge.sqlite3'}"
    elif not database.startswith(("sqlite:", "postgresql:", "postgresql+")):
        raise ConfigError(f"[judge] database: use sqlite:///PATH or postgresql://..., not {database!r}")
    cost = _get(j, "judge", "password_cost", int, 14)
    if not 4 <= cost <= 20:
        raise ConfigError(f"[judge] password_cost: between 4 and 20, not {cost}")
    # The channels named, and every part's table the file has or a part in
    # use needs: read (and checked) now, not at the first mail.
    inbox_type, transport, forum_type = _chosen(raw)
    in_use = {f"sources.{inbox_type}", f"transports.{transport}"}
    if forum_type is not None:
        in_use |= {f"sources.{forum_type}", f"transports.{forum_type}"}
    parts = {key: _read(module, raw, base) for key, module in _parts().items()
             if key in in_use or key.startswith("methods.") or module.TABLE in raw}
    outbox = raw.get("outbox", {})
    variants = raw.get("variants", {})
    for vname, vtable in variants.items():
        entries = vtable.get("powers") if isinstance(vtable, dict) else None
        if not isinstance(entries, list):
            raise ConfigError(f"[variants.{vname}] needs powers = [...]")
        try:
            make_power_list(entries)
        except PowerListError as err:
            raise ConfigError(f"[variants.{vname}] powers: {err}") from err
    limits = raw.get("limits", {})
    for key in ("max_message_bytes", "max_mails_per_sender_per_hour", "max_line_length", "max_commands_per_mail",
                "password_backoff_after",
                "password_lock_after"):
        if key in limits and isinstance(limits[key], int) and limits[key] < 1:
            raise ConfigError(f"[limits] {key}: at least 1, not {limits[key]}")
    for key in ("raw_mail_retention_days", "password_backoff_seconds"):
        if key in limits and isinstance(limits[key], (int, float)) and limits[key] < 0:
            raise ConfigError(f"[limits] {key}: not negative, not {limits[key]}")
    moderators = _get(j, "judge", "moderators", list, [])
    for m in moderators:
        if not isinstance(m, str) or "@" not in m:
            raise ConfigError(f"[judge] moderators: {m!r} is not a mail address")
    auth = raw.get("auth", {})
    authserv = _get(auth, "auth", "trusted_authserv_ids", list, [])
    if not all(isinstance(a, str) and a for a in authserv):
        raise ConfigError("[auth] trusted_authserv_ids: a list of host names")
    require_auth = _get(auth, "auth", "require_authenticated_from", bool, False)
    if require_auth and not authserv:
        raise ConfigError("[auth] require_authenticated_from needs trusted_authserv_ids: the MTA whose "
                          "Authentication-Results header the judge may believe")
    # Checked against the methods by check_methods (at `judge serve`): the
    # methods' modules are not imported for every `judge deliver`.
    default_method = _get(j, "judge", "default_method", str, "preference")
    docs_url = _get(j, "judge", "docs_url", str, DEFAULT_DOCS_URL).rstrip("/")
    if docs_url and not docs_url.startswith(("https://", "http://")):
        raise ConfigError(f"[judge] docs_url: a public http(s) URL of the docs folder, not {docs_url!r}")
    reminder_hours = _get(j, "judge", "reminder_hours", list, [24, 1])
    if not all(isinstance(h, (int, float)) and not isinstance(h, bool) and h > 0 for h in reminder_hours):
        raise ConfigError(f"[judge] reminder_hours: a list of positive numbers of hours, not {reminder_hours!r}")
    method_defaults = raw.get("methods", {})
    for mname, mtable in method_defaults.items():
        if not isinstance(mtable, dict):
            raise ConfigError(f"[methods.{mname}] must be a table of the method's settings")
    web = raw.get("web", {})
    web_port = _get(web, "web", "port", int, 8080)
    if not 0 < web_port < 65536:
        raise ConfigError(f"[web] port: between 1 and 65535, not {web_port}")
    proxies = _get(web, "web", "trusted_proxies", list, [])
    for proxy in proxies:
        if not _is_network(proxy):
            raise ConfigError(f"[web] trusted_proxies: an address or network (127.0.0.1, 10.0.0.0/8), "
                              f"not {proxies!r}")
    public_url = _get(web, "web", "public_url", str, "").rstrip("/") or None
    if public_url is not None and not public_url.startswith(("https://", "http://")):
        raise ConfigError(f"[web] public_url: the site's http(s) URL, not {public_url!r}")
    return Config(
        data_dir=base,
        database_url=database,
        address=address,
        name=_get(j, "judge", "name", str, "Judge"),
        poll_interval=float(_get(j, "judge", "poll_interval", (int, float), 5.0)),
        default_deadline_hours=float(_get(j, "judge", "default_deadline_hours", (int, float), 72.0)),
        password_cost=cost,
        inbox_type=inbox_type,
        transport=transport,
        forum_type=forum_type,
        max_attempts=_get(outbox, "outbox", "max_attempts", int, 8),
        retry_seconds=float(_get(outbox, "outbox", "retry_seconds", (int, float), 60.0)),
        max_message_bytes=_get(limits, "limits", "max_message_bytes", int, DEFAULT_MAX_BYTES),
        max_mails_per_sender_per_hour=_get(limits, "limits", "max_mails_per_sender_per_hour", int, 60),
        max_line_length=_get(limits, "limits", "max_line_length", int, 1000),
        max_commands_per_mail=_get(limits, "limits", "max_commands_per_mail", int, 500),
        raw_mail_retention_days=float(_get(limits, "limits", "raw_mail_retention_days", (int, float), 30.0)),
        password_backoff_after=_get(limits, "limits", "password_backoff_after", int, 3),
        password_backoff_seconds=float(_get(limits, "limits", "password_backoff_seconds", (int, float), 60.0)),
        password_lock_after=_get(limits, "limits", "password_lock_after", int, 10),
        moderators=tuple(m.strip().lower() for m in moderators),
        trusted_authserv_ids=tuple(a.strip().lower() for a in authserv),
        require_authenticated_from=require_auth,
        variants={k: v["powers"] for k, v in variants.items()},
        default_method=default_method,
        method_defaults={k: dict(v) for k, v in method_defaults.items()},
        docs_url=docs_url,
        reminder_hours=tuple(sorted((float(h) for h in reminder_hours), reverse=True)),
        web_host=_get(web, "web", "host", str, "127.0.0.1"),
        web_port=web_port,
        web_trusted_proxies=tuple(proxies),
        web_public_url=public_url,
        parts=parts,
        tables=raw,
    )
