"""The `judge` command: the daemon, the MTA pipe, the offline resolver and
the moderators' views."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from pathlib import Path

import click

EXIT_CONFIG = 2  # the systemd unit does not restart on this status
EXIT_TEMPFAIL = 75  # sysexits EX_TEMPFAIL: the MTA keeps the mail and retries


def _config(ctx: click.Context, *, methods: bool = False, fault_status: int = EXIT_CONFIG):
    """The configuration, checked; `methods`: also the options that name a
    method (which imports the methods: only for the daemon). The file is
    --config, else $JUDGE_CONFIG, else /etc/judge/judge.toml, else the
    user's (judge.config.find_config). A fault of it exits `fault_status`:
    2 for the daemon (systemd does not restart on it), 75 for `judge
    deliver` (the MTA keeps the mail and tries again once it is mended)."""
    from judge.config import ConfigError, check_methods, find_config, load_config

    path = find_config(ctx.obj["config"])
    ctx.obj["config_found"] = path
    try:
        config = load_config(path, data_dir=ctx.obj["data_dir"])
        if methods:
            check_methods(config)
    except ConfigError as err:
        click.echo(f"judge: configuration error: {err}", err=True)
        sys.exit(fault_status)
    _use_kernel_cache(config.data_dir)
    _use_grammar_cache(config)
    return config


@contextlib.contextmanager
def started_game(ctx: click.Context, name: str, method, title: str):  # noqa: ANN001, ANN201 (a Method)
    """For a method's own command on a stored game (`judge lui log`, `judge
    pt3 advise`): (the judge, the open session, the game), a click error if
    there is no started game of `method` (called `title`) by that name."""
    from judge.app import build_judge
    from judge.games import find_game
    from judge.methods import method_of

    judge = build_judge(_config(ctx), with_io=False)
    with judge.sessions() as s:
        game = find_game(s, name.lstrip("?"))
        if game is None:
            raise click.ClickException(f"no game {name!r}")
        if method_of(game) is not method:
            raise click.ClickException(f"?{game.name} is a {game.method} game, not {title}")
        if not game.method_state:
            raise click.ClickException(f"?{game.name} has not started (it is {game.state})")
        yield judge, s, game


def _use_grammar_cache(config) -> None:
    """Parsers built by Lark are kept in DATA/cache (judge.grammar_cache):
    every later process loads them instead of building them again."""
    from judge import grammar_cache

    grammar_cache.use(config.data_dir / "cache")


def _use_kernel_cache(data_dir: Path | None, daemon: bool = False) -> None:
    """The methods' compiled code (the preference solver's kernels) only
    from the judge's own cache in the data directory, never compiled on a
    command's way (judge.methods.registry.CACHES)."""
    from judge.methods.registry import caches

    for cache in caches():
        cache.use(data_dir, daemon=daemon)


class LazyGroup(click.Group):
    """A group whose listed subcommands live in modules imported only when
    one of them runs (or --help describes them): every `judge deliver` from
    an MTA and every `judge resolve` would otherwise pay for the imports of
    all of them (click's "lazy loading of subcommands" pattern). A method's
    own subcommands (its Method's CLI) are found the same way, through the
    registry: the shell names none of them."""

    def __init__(self, *args, lazy_commands: dict[str, str] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = lazy_commands or {}  # name -> "module:attribute"

    def _methods_commands(self) -> dict[str, str]:
        from judge.methods.registry import cli_commands

        return cli_commands()

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands, *self._methods_commands()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_commands:
            return self._load(self.lazy_commands[cmd_name])
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in self._methods_commands():
            return self._load(self._methods_commands()[cmd_name])
        return command

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """As click's, but a command line `judge deliver` cannot use (an
        option mistyped in the MTA's pipe) exits 75 with one line, as every
        fault of the operator's does for deliver: click's own status 2 would
        make the MTA bounce the mail, with the usage text, to its sender."""
        argv = list(sys.argv[1:] if args is None else args)
        if not standalone_mode or "deliver" not in argv:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            status = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as err:
            click.echo(f"judge: {' '.join(err.format_message().split())}", err=True)
            sys.exit(EXIT_TEMPFAIL)
        except click.Abort:
            sys.exit(EXIT_TEMPFAIL)
        sys.exit(status if isinstance(status, int) else 0)

    def _load(self, target: str) -> click.Command:
        import importlib

        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command


@click.group(cls=LazyGroup, lazy_commands={
    # (A method's own, like `judge blind`, are its Method's CLI.)
    # Moderators: resume a stuck game, lift a password lock (docs/security.md).
    "unstick": "judge.cli_moderate:unstick",
    "unlock": "judge.cli_moderate:unlock",
    # Moderators: quarantined mails, the web console's accounts (docs/web.md).
    "quarantine": "judge.cli_moderate:quarantine",
    "moderator": "judge.cli_moderate:moderator",
    "compile": "judge.cli_compile:compile_kernels",  # Methods' compiled code (the solver's), once after installing.
    "web": "judge.web.cli:web",  # The web pages (docs/web.md): Starlette only for it.
})
# readable=False: a file this user may not read is the loader's to report
# (judge deliver exits 75 for it, not click's 2).
@click.option("--config", "-c", "config_path", type=click.Path(path_type=Path, readable=False), envvar="JUDGE_CONFIG",
              help="TOML configuration file (deploy/judge.example.toml documents every option).")
@click.option("--data-dir", type=click.Path(path_type=Path), envvar="JUDGE_DATA_DIR",
              help="Data directory (database, Maildir folders); default ~/.local/share/judge.")
@click.option("-v", "--verbose", is_flag=True, help="Log debugging detail.")
@click.pass_context
def main(ctx: click.Context, config_path: Path | None, data_dir: Path | None, verbose: bool) -> None:
    """A play-by-email judge: power assignment and bidding games."""
    ctx.obj = {"config": config_path, "data_dir": data_dir}
    # The methods' compiled code (the solver's kernels) from the data
    # directory's cache for the command's time (a command that reads the
    # configuration sets its data directory's).
    from judge.methods.registry import caches

    for cache in caches():
        ctx.with_resource(cache.used(data_dir))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Schema upgrades run at every start; their chatter is only for -v.
    logging.getLogger("alembic").setLevel(logging.DEBUG if verbose else logging.WARNING)


@main.command()
@click.option("--once", is_flag=True, help="Run one iteration and exit (for cron or tests).")
@click.option("--web", "with_web", is_flag=True, help="Also serve the web pages (as `judge web`), in a thread.")
@click.option("--host", help="With --web: address to listen on (default: [web] host).")
@click.option("--port", type=int, help="With --web: port to listen on (default: [web] port).")
@click.pass_context
def serve(ctx: click.Context, once: bool, with_web: bool, host: str | None, port: int | None) -> None:
    """Run the daemon: read the inbox, run commands, meet deadlines, send mail."""
    config = _config(ctx, methods=True)
    _use_kernel_cache(config.data_dir, daemon=not once)
    from sqlalchemy import make_url

    from judge.app import build_judge, start_failure
    from judge.config import ConfigError

    try:
        judge = build_judge(config)
        found = ctx.obj.get("config_found")
        click.echo(f"judge: configuration {found}" if found else "judge: configuration: none, the built-in defaults")
        click.echo(f"judge: data directory {config.data_dir}")
        click.echo(f"judge: database {make_url(config.database_url).render_as_string(hide_password=True)}")
        click.echo(f"judge: reading mail from {', '.join(source.describe() for source in judge.sources)}")
        _check_sources(judge)
        click.echo(f"judge: sending mail through {judge.transport.describe()} as {config.address}")
        web = None
        if with_web:
            # Its own thread, event loop and store engine: a page never
            # holds up the daemon (judge/web/server.py).
            from judge.web.server import Background, make_server

            web = Background(make_server(config, host, port)).start()
            click.echo(f"judge: web pages on http://{web.server.config.host}:{web.port}/")
        sys.stdout.flush()
        if once:
            click.echo(json.dumps(judge.run_once(), default=str))
            _without_last_collection(judge)
            return
        judge.check_store()  # before anything else starts: a locked store is exit 75, said in one line
        from contextlib import ExitStack

        from judge.methods.registry import caches

        with ExitStack() as building:  # a missing cache built beside the loop
            for cache in caches():
                building.enter_context(cache.building_in_background())
            judge.run_forever()  # its loop logs and survives faults; those at its start come here
        _without_last_collection(judge)
    except ConfigError as err:  # found at start: a folder the IMAP server refuses, the web's key...
        click.echo(f"judge: configuration error: {err}", err=True)
        sys.exit(EXIT_CONFIG)
    except Exception as err:
        failure = start_failure(err, config)
        if failure is None:
            raise  # a bug: its traceback is wanted
        temporary, message = failure
        # One line, and the status systemd acts on: 75 is retried, 2 is not.
        click.echo(f"judge: {message}", err=True)
        sys.exit(EXIT_TEMPFAIL if temporary else EXIT_CONFIG)


def _check_sources(judge) -> None:
    """Ask each source that can (IMAP: its folders) whether its settings
    work, before the loop: a setting the server refuses is a configuration
    error (ConfigError, exit 2); a server that does not answer now is not
    (the loop retries it)."""
    for source in judge.sources:
        check = getattr(source, "check", None)
        if check is not None:
            check()


@main.command()
@click.option("--no-process", is_flag=True, help="Only store the mail; the daemon processes it.")
@click.option("--background", is_flag=True,
              help="With no daemon on the store, run the mail in a process of its own and exit at once "
                   "(for an MTA; docs/operating.md).")
@click.pass_context
def deliver(ctx: click.Context, no_process: bool, background: bool) -> None:
    """Take one RFC 822 mail on standard input (for an MTA pipe or .forward).

    Exit status 0 once the mail is stored; 75 (EX_TEMPFAIL: the MTA keeps
    the mail and offers it again) for every fault that is the operator's to
    mend: the configuration missing, unreadable or invalid, the store
    unreachable, the disk full. Never 2, which an MTA takes as a bounce."""
    judge = None
    try:
        config = _config(ctx, fault_status=EXIT_TEMPFAIL)
        from judge import deliver_light
        from judge.sources.size_limit import read_mail

        # Never more than the size limit in memory: a larger mail is kept as its
        # header (answered, and taken: exit 0, or the MTA would offer it again).
        raw, oversize = read_mail(sys.stdin.buffer, config.max_message_bytes)
        try:
            # The light path: the row alone, without SQLAlchemy (issue 12).
            stored, message_id = deliver_light.store(config, raw, oversize)
        except deliver_light.FullPathNeeded:
            # A new or older store (migrated here), or a URL only SQLAlchemy reads.
            from judge.app import build_judge
            from judge.mail.inbound import dedup_key_of

            judge = build_judge(config)
            stored, message_id = judge.receive(raw, "deliver", oversize=oversize), dedup_key_of(raw)[0]
    except Exception as err:  # the MTA must keep the mail and try again
        reason = " ".join(str(err).split()) or type(err).__name__
        click.echo(f"judge: temporary failure, mail not taken: {reason}", err=True)
        sys.exit(EXIT_TEMPFAIL)
    from judge.wake import wake_daemon, wake_path

    # The mail is stored (committed), so it is taken whatever running it
    # meets now (exit 75 would only make the MTA offer it again, and bounce
    # it). A daemon on this store runs it: woken, it starts a pass at once.
    # Else this process runs it (--background: a process started for it):
    # run_once() logs a failing stage and goes on, and the next pass of any
    # judge process runs what is left. A duplicate wakes or runs too: the
    # earlier deliver of that mail may have ended between storing and
    # running it.
    woken = wake_daemon(wake_path(config.data_dir, config.database_url))
    if background and not no_process and not woken:
        from judge import deliver_runner

        if deliver_runner.start(ctx.obj.get("config_found"), ctx.obj["data_dir"], config.data_dir):
            click.echo(_delivered(config, None, message_id, stored, oversize, no_process, woken, runner=True))
            _without_last_collection(judge)
            return
    ran = False
    if not no_process and not woken:
        try:
            if judge is None:
                from judge.app import build_judge

                judge = build_judge(config)
            judge.run_once()
            ran = True
        except Exception as err:  # stored all the same: the next pass of a judge process runs it
            click.echo(f"judge: the mail is stored, but running it failed: {err}", err=True)
    # One line saying what was done (an MTA ignores standard output).
    click.echo(_delivered(config, judge if ran else None, message_id, stored, oversize, no_process, woken))
    _without_last_collection(judge)


def _without_last_collection(judge=None) -> None:
    """Leave out the interpreter's last full garbage collection at exit:
    with SQLAlchemy and the judge loaded it takes 0.2-0.5 s, which a SIGTERM
    (stopped within a second) and every `judge deliver` would wait for. The
    judge's database connections are closed first, as the collection would
    close them (SQLite folds its write-ahead log into the database when the
    last one closes); atexit handlers (logging's flush) still run."""
    import gc

    if judge is not None:
        judge.sessions.kw["bind"].dispose()
    gc.freeze()


def _delivered(config, judge, message_id: str, stored: int | None, oversize: int | None, no_process: bool,
               woken: bool, runner: bool = False) -> str:
    """`judge`: the judge that ran the mail, None if it was not run here;
    `runner`: a background runner was started for it (deliver --background)."""
    from judge.deliver_light import shown_url

    if not stored:
        return f"judge: duplicate Message-ID {message_id}, not processed again"
    what = f"judge: stored as mail {stored} ({message_id}) in the database {shown_url(config.database_url)}"
    if oversize:
        what += f", its header only ({oversize} bytes is over the limit)"
    if woken:
        return what + "; the daemon is processing it"
    if no_process:
        return what + "; the daemon will process it"
    if runner:
        from judge.deliver_runner import LOG

        return what + f"; a judge process started in the background is processing it (its log: " \
                      f"{config.data_dir / LOG})"
    if judge is None:
        return what + "; not processed now (the next pass of the daemon or of a deliver runs it)"
    from judge.store.models import InboundMessage

    try:
        with judge.sessions() as s:
            row = s.get(InboundMessage, stored)
            status, reason = row.status, " ".join((row.reason or "").split())[:200]
    except Exception as err:  # the mail is stored: still taken (exit 0)
        return what + f"; its outcome could not be read ({type(err).__name__})"
    if status == "new":
        return what + "; not processed yet (another judge process is running mail: it takes this one too)"
    return what + f"; processed: {status}" + (f" ({reason})" if reason else "")


@main.command()
@click.argument("file", type=click.File("r"))
@click.option("--seed", help="The seed as hexadecimal; a fresh one is drawn (and printed) if omitted.")
@click.option("--format", "fmt", type=click.Choice(["json", "text", "bbcode"]), default="json", show_default=True)
def resolve(file, seed: str | None, fmt: str) -> None:
    """Resolve an auction from a JSON FILE (offline: for forum games and checks)."""
    from judge import rng
    from judge.resolution import ResolveInputError, run_resolution

    try:
        data = json.load(file)
    except json.JSONDecodeError as err:
        raise click.ClickException(f"{file.name}: not JSON: {err}") from err
    try:
        seed_bytes = rng.parse_seed(seed) if seed else rng.new_seed()
        result = run_resolution(data, seed_bytes)
    except (ResolveInputError, ValueError) as err:
        raise click.ClickException(str(err)) from err
    if fmt == "json":
        # With its input, the output is a record `judge verify` can re-run.
        click.echo(json.dumps({**result, "input": data}, indent=2))
        return
    # jinja2 and the templates only for the texts that need them.
    from judge.methods import get_method
    from judge.templating import render

    folder = get_method(result["method"]).RESULTS
    if fmt == "text":
        click.echo(render(f"{folder}/offline.txt.j2", result=result).rstrip())
    else:
        click.echo(render(f"{folder}/forum.bbcode.j2", result=result, game=None, names=None).rstrip())


@main.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def games(ctx: click.Context, fmt: str) -> None:
    """List the games and their state."""
    from datetime import datetime

    from judge.deadlines import format_time
    from judge.app import build_judge
    from judge.failures import last_line
    from judge.games import overview
    from judge.methods.registry import protocols

    judge = build_judge(_config(ctx), with_io=False)
    with judge.sessions() as s:
        rows = overview(s)
        # The runs of a method's protocol for games of other judges (no row in `games`).
        runs = [(p, r) for p in protocols() for r in p.runs(s)]
    if fmt == "json":
        click.echo(json.dumps(rows + [r for _, r in runs], indent=2))
        return
    if not rows and not runs:
        click.echo("no games")
    if rows:
        click.echo(f"{'GAME':<16} {'METHOD':<14} {'STATE':<9} {'PLAYERS':<13}  {'DEADLINE':<25}  MASTER")
    for r in rows:
        deadline = format_time(datetime.fromisoformat(r["deadline"])) if r["deadline"] else "-"
        seated = f"{r['players']}/{r['seats']} players"
        click.echo(f"{r['game']:<16} {r['method']:<14} {r['state']:<9} {seated:<13}  {deadline:<25}  {r['master']}"
                   + (f"\n    stuck on: {last_line(r['error'])} (judge unstick {r['game']})" if r["error"] else ""))
    for p, r in runs:
        click.echo(p.run_line(r))


@main.command()
@click.argument("game")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--player", help="Only what concerns this player's address: their mails, what they caused, replies.")
@click.option("--kind", "kinds", multiple=True, help="Only events of this kind (inbound, command, outbound, draw, "
              "state...); may be given again.")
@click.pass_context
def log(ctx: click.Context, game: str, fmt: str, player: str | None, kinds: tuple[str, ...]) -> None:
    """Print a game's audit trail in time order: mails in and out, commands, draws."""
    from judge import audit
    from judge.app import build_judge
    from judge.games import find_game

    judge = build_judge(_config(ctx), with_io=False)
    with judge.sessions() as s:
        g = find_game(s, game.lstrip("?"))
        if g is not None:
            events = audit.game_events(s, g)
        else:
            # A game of another judge that this judge has a part in (a
            # method's protocol with other judges: the third party's runs).
            from judge.methods.registry import protocols

            found = (p.run_events(s, game) for p in protocols())
            events = next((e for e in found if e is not None), None)
            if events is None:
                raise click.ClickException(f"no game {game!r}")
    events = audit.filter_events(events, player=player, kinds=kinds)
    if fmt == "json":
        click.echo(json.dumps(events, indent=2, default=str))
        return
    for e in events:
        click.echo(_event_line(e))


def _event_line(e: dict) -> str:
    from judge.audit import describe

    return f"{e['at'][:19].replace('T', ' ')}  {describe(e)}"


@main.group(invoke_without_command=True)
@click.option("--all", "show_all", is_flag=True, help="Also list the mails already sent.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def outbox(ctx: click.Context, show_all: bool, fmt: str) -> None:
    """List the outgoing mail that waits, failed or is unconfirmed (and, with --all, was sent)."""
    if ctx.invoked_subcommand is not None:
        return
    from judge import outbox as queue
    from judge.app import build_judge

    judge = build_judge(_config(ctx), with_io=False)
    with judge.sessions() as s:
        rows = queue.listing(s, show_all=show_all)
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("the outbox is empty" if show_all else "nothing waits and nothing failed")
    for r in rows:
        when = f" next try {r['next_attempt'][:19].replace('T', ' ')}" if r["next_attempt"] else ""
        by = f" by {r['sender']}" if r.get("sender") else ""
        click.echo(f"#{r['id']:<6} {r['status']:<8} {r['attempts']} attempt(s){when}{by}  to {', '.join(r['to'])}: "
                   f"{r['subject']!r}" + (f"\n        last error: {r['last_error']}" if r["last_error"] else "")
                   + (f"\n        {r['message_id']}" if r["status"] == "unconfirmed" else ""))


@outbox.command("retry")
@click.argument("ids", nargs=-1, type=int, required=True)
@click.pass_context
def outbox_retry(ctx: click.Context, ids: tuple[int, ...]) -> None:
    """Queue failed (or waiting) mails again, to be sent at the next pass."""
    from judge import outbox as queue
    from judge.app import build_judge

    each_id(build_judge(_config(ctx.parent), with_io=False), ids, queue.retry, "queued again")


@outbox.command("confirm")
@click.argument("ids", nargs=-1, type=int, required=True)
@click.pass_context
def outbox_confirm(ctx: click.Context, ids: tuple[int, ...]) -> None:
    """Mark unconfirmed mails as sent: the mail server's log shows it got them."""
    from judge import outbox as queue
    from judge.app import build_judge

    each_id(build_judge(_config(ctx.parent), with_io=False), ids, queue.confirm, "marked sent")


def each_id(judge, ids: tuple[int, ...], act, done: str) -> None:
    """`act(session, id, now)` on each id, in one transaction (`judge outbox
    retry`, `judge quarantine rerun`): "#ID: done" for each it did, its
    problem (a sentence, or None when done) on stderr for the others, and
    exit status 1 if any had one."""
    from judge.clock import SystemClock

    now, problems = SystemClock().now(), []
    with judge.sessions.begin() as s:
        for row_id in ids:
            problem = act(s, row_id, now)
            if problem:
                problems.append(problem)
            else:
                click.echo(f"#{row_id}: {done}")
    for p in problems:
        click.echo(p, err=True)
    if problems:
        sys.exit(1)


@main.command()
@click.argument("file", type=click.File("rb"))
def verify(file) -> None:
    """Re-run a resolution from a results mail (.eml) or its JSON record: check
    the commitment, the seed, every draw and the outcome, and that the mail's
    text says what the record says. No database needed."""
    from judge.verify import RecordError, read, verify_mail

    try:
        verdict = verify_mail(read(file.read()))
    except RecordError as err:
        raise click.ClickException(str(err)) from err
    for line in verdict.checked:
        click.echo(f"  ok: {line}")
    if verdict.ok:
        click.echo("OK: the resolution checks out")
        return
    click.echo(f"DIFFERS: {verdict.difference}")
    sys.exit(1)


@main.command()
@click.pass_context
def migrate(ctx: click.Context) -> None:
    """Create or upgrade the database schema."""
    from judge.app import build_judge

    config = _config(ctx)
    build_judge(config, with_io=False)
    click.echo(f"judge: database {config.database_url} is up to date")
