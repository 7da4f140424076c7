"""The judge behind Debian's Postfix, set up as docs/operating.md says
(issue 25, points 5, 6 and 7): Postfix's local(8) pipes each mail into
`judge deliver` by the `.forward` line the docs give, pasted as it is, and
the replies go back out through Postfix's SMTP to the players' server.

Postfix runs on loopback ports, from a configuration of the test's own, in
a mount namespace of its own (unshare): there /etc is a copy with the user
`judge` and /etc/judge/judge.toml, and /usr/local/bin holds `judge`, so the
documented paths exist for Postfix and for nothing else on the machine.

- The documented line works as pasted, and each mail is answered once.
- A configuration the pipe cannot use defers the mail (exit 75) instead of
  bouncing it, and the mail is delivered once after the fix.
- An alias runs as `nobody`, who cannot read the configuration: deferred too.
- A forged `Authentication-Results: mx.judge.test; dkim=pass` sent straight
  to the MX while the verifying milter is down (milter_default_action =
  accept) is removed by the header_checks rule the docs give, so the judge
  with `require_authenticated_from` refuses the mail; without the rule it
  got through.
- With Debian's OpenDKIM up as the milter, the rule leaves the milter's own
  header alone: a mail signed for players.test (dkimpy) is run.
"""

from __future__ import annotations

import os
import re
import shutil
import smtplib
import sqlite3
import subprocess
import sys
import tempfile
import time
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest

from tests.smtp_server import SmtpTestServer, free_port

REPO = Path(__file__).resolve().parent.parent
VENV_JUDGE = Path(sys.executable).with_name("judge")
SETTLE = 90  # seconds a test waits at most for what it expects
JUDGE = "judge@judge.test"
PLAYER = "ann@players.test"
AUTHSERV = "mx.judge.test"

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                                reason="Postfix and mount namespaces need root")


def documented_line() -> str:
    """The `.forward` line of docs/operating.md, which README.md gives too."""
    lines = re.findall(r'^("\|[^"\n]+")$', (REPO / "docs" / "operating.md").read_text(), re.M)
    assert lines, "docs/operating.md gives no .forward line"
    assert lines[0] in (REPO / "README.md").read_text(), "README.md gives another line"
    return lines[0]


def header_rule() -> str:
    """The header_checks rule docs/operating.md gives, for mx.example.org."""
    [rule] = re.findall(r"^(/\^Authentication-Results:.*IGNORE)$", (REPO / "docs" / "operating.md").read_text(), re.M)
    return rule


def install_packages() -> None:
    """Debian's postfix and opendkim, if they are not here yet."""
    missing = [pkg for pkg, program in (("postfix", "/usr/sbin/postfix"), ("opendkim", "/usr/sbin/opendkim"))
               if not os.path.exists(program)]
    if not missing:
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["debconf-set-selections"], input=b"postfix postfix/main_mailer_type select No configuration\n",
                   check=True)
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env, capture_output=True)
    subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing], check=True, env=env,
                   capture_output=True)


def free_id(path: str, start: int = 2500) -> int:
    used = {int(line.split(":")[2]) for line in Path(path).read_text().splitlines() if line.count(":") >= 3}
    return next(i for i in range(start, 60000) if i not in used)


class PostfixRig:
    """A Postfix MX for judge.test on a loopback port; players.test relayed
    to an aiosmtpd server (the players' side)."""

    def __init__(self) -> None:
        install_packages()
        self.dir = Path(tempfile.mkdtemp(prefix="judge-postfix-"))
        self.dir.chmod(0o755)  # the user judge (and nobody) walk through it
        self.sink = SmtpTestServer(mode="plain").start()
        self.port = free_port()
        self.uid, self.gid = free_id("/etc/passwd"), free_id("/etc/group")
        self.home, self.data = self.dir / "home", self.dir / "data"
        self._etc()
        self._bin()
        self._postfix()
        self._start()

    # -- the namespace's files ------------------------------------------------
    def _etc(self) -> None:
        etc = self.dir / "etc"
        subprocess.run(["cp", "-a", "/etc", str(etc)], check=True)
        with (etc / "passwd").open("a") as f:
            f.write(f"judge:x:{self.uid}:{self.gid}:Judge:{self.home}:/usr/sbin/nologin\n")
        with (etc / "group").open("a") as f:
            f.write(f"judge:x:{self.gid}:\n")
        (etc / "judge").mkdir(mode=0o755, exist_ok=True)
        for folder in (self.home, self.data):
            folder.mkdir(mode=0o750)
            os.chown(folder, self.uid, self.gid)
        self.write_config()

    @property
    def config_path(self) -> Path:
        return self.dir / "etc" / "judge" / "judge.toml"

    def write_config(self, extra: str = "") -> None:
        """/etc/judge/judge.toml as the docs install it: 0640, root:judge."""
        self.config_path.write_text(
            f'[judge]\naddress = "{JUDGE}"\ndata_dir = "{self.data}"\npassword_cost = 4\n'
            f'[outbox]\ntransport = "smtp"\n[smtp]\nhost = "127.0.0.1"\nport = {self.port}\nsecurity = "none"\n'
            + extra)
        self.config_path.chmod(0o640)
        os.chown(self.config_path, 0, self.gid)

    def _bin(self) -> None:
        """/usr/local/bin/judge: this checkout's judge (the docs link the
        installed one there)."""
        folder = self.dir / "bin"
        folder.mkdir()
        script = folder / "judge"
        script.write_text(f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{VENV_JUDGE}" "$@"\n')
        script.chmod(0o755)

    def set_forward(self, line: str) -> None:
        forward = self.home / ".forward"
        forward.write_text(line + "\n")
        os.chown(forward, self.uid, self.gid)
        forward.chmod(0o644)

    def _postfix(self) -> None:
        conf = self.dir / "postfix"
        conf.mkdir()
        master = []
        for line in Path("/etc/postfix/master.cf").read_text().splitlines():
            fields = line.split()
            if line[:1] in ("#", " ", "\t") or len(fields) < 8:
                master.append(line)
                continue
            fields[4] = "n"  # no chroot: the queue is not under /var/spool/postfix
            if fields[:2] == ["smtp", "inet"]:
                fields[0] = str(self.port)
            master.append(" ".join(fields))
        (conf / "master.cf").write_text("\n".join(master) + "\n")
        (self.dir / "aliases").write_text(
            'judge-alias: "|/usr/local/bin/judge --config /etc/judge/judge.toml deliver"\n')
        (self.dir / "header_checks").write_text("")
        (conf / "main.cf").write_text(f"""\
compatibility_level = 3.6
queue_directory = {self.dir}/spool
data_directory = {self.dir}/lib
command_directory = /usr/sbin
daemon_directory = /usr/lib/postfix/sbin
mail_owner = postfix
setgid_group = postdrop
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
myhostname = {AUTHSERV}
mydomain = judge.test
myorigin = judge.test
mydestination = judge.test, {AUTHSERV}
mynetworks = 127.0.0.0/8
relayhost = [127.0.0.1]:{self.sink.port}
smtp_dns_support_level = disabled
smtp_host_lookup = native
alias_maps = hash:{self.dir}/aliases
alias_database = hash:{self.dir}/aliases
header_checks = regexp:{self.dir}/header_checks
smtpd_milters = inet:127.0.0.1:{free_port()}
milter_default_action = accept
maillog_file = {self.dir}/maillog
maillog_file_prefixes = {self.dir}
biff = no
delay_warning_time = 0
""")
        self.conf = conf

    def _start(self) -> None:
        import pwd

        (self.dir / "spool").mkdir(mode=0o755)
        (self.dir / "lib").mkdir(mode=0o700)
        os.chown(self.dir / "lib", pwd.getpwnam("postfix").pw_uid, pwd.getpwnam("postfix").pw_gid)
        self.postfix("check")  # makes the queue's folders
        self.run(["postalias", "-c", str(self.conf), f"{self.dir}/aliases"])
        script = ["set -e",
                  f'mount --bind "{self.dir}/etc" /etc',
                  f'mount --bind "{self.dir}/bin" /usr/local/bin']
        # A folder others may not walk through (/root is 0700, so is a
        # mktemp -d folder a checkout was cloned into): the users judge and
        # nobody could not run this Python and checkout under it. Its parts
        # that are needed are shown in a folder of mode 0711 in its place,
        # the outermost first.
        for number, (closed, names) in enumerate(self._closed_folders()):
            stage = self.dir / "shown" / str(number)
            for name in names:
                script.append(f'mkdir -p "{stage}/{name}" && mount --bind "{closed}/{name}" "{stage}/{name}"')
            script.append(f'mount -t tmpfs -o mode=0711 tmpfs "{closed}"')
            for name in names:
                script.append(f'mkdir "{closed}/{name}" && mount --bind "{stage}/{name}" "{closed}/{name}"')
        script.append(f'postfix -c "{self.conf}" start')
        self.run(["unshare", "-m", "--propagation", "private", "sh", "-c", "\n".join(script)])

    @staticmethod
    def _closed_folders() -> list[tuple[Path, list[str]]]:
        """The folders this Python and checkout live under that others may
        not walk through, the outermost first, each with the entries of it
        they need."""
        needed: dict[Path, set[str]] = {}
        for path in (Path(sys.executable), Path(sys.executable).resolve(), Path(sys.prefix), Path(sys.base_prefix),
                     REPO):
            parts = path.absolute().parts
            for depth in range(2, len(parts)):
                folder = Path(*parts[:depth])
                if not os.stat(folder).st_mode & 0o001:
                    needed.setdefault(folder, set()).add(parts[depth])
        return sorted(((folder, sorted(names)) for folder, names in needed.items()), key=lambda f: len(f[0].parts))

    # -- driving it ---------------------------------------------------------
    def run(self, argv: list[str]) -> subprocess.CompletedProcess:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, (argv, done.stdout, done.stderr, self.maillog()[-3000:])
        return done

    def postfix(self, *args: str) -> None:
        self.run(["postfix", "-c", str(self.conf), *args])

    def postconf(self, setting: str) -> None:
        self.run(["postconf", "-c", str(self.conf), "-e", setting])
        self.postfix("reload")

    def flush(self) -> None:
        self.run(["postqueue", "-c", str(self.conf), "-f"])

    def maillog(self) -> str:
        path = self.dir / "maillog"
        return path.read_text(errors="replace") if path.exists() else ""

    def send(self, to: str, body: str, *, headers: dict[str, str] | None = None) -> str:
        msg = EmailMessage()
        msg["From"], msg["To"], msg["Subject"] = f"Ann <{PLAYER}>", to, "commands"
        msg["Message-ID"] = make_msgid(domain="players.test")
        for name, value in (headers or {}).items():
            msg[name] = value
        msg.set_content(body)
        with smtplib.SMTP("127.0.0.1", self.port, timeout=30) as smtp:
            smtp.send_message(msg)
        return msg["Message-ID"]

    def replies_to(self, message_id: str) -> list[bytes]:
        return [m.raw for m in self.sink.messages if f"In-Reply-To: {message_id}".encode() in m.raw]

    def stored(self) -> list[tuple[str, str, str, bytes]]:
        with sqlite3.connect(self.data / "judge.sqlite3") as conn:
            return conn.execute("SELECT message_id, status, coalesce(reason, ''), raw FROM inbound_messages "
                                "ORDER BY id").fetchall()

    def row(self, message_id: str) -> tuple[str, str, bytes]:
        rows = [r for r in self.stored() if r[0] == message_id]
        assert len(rows) == 1, rows
        return rows[0][1:]

    def start_opendkim(self) -> int:
        """OpenDKIM verifying on a loopback port, as the MTA's milter:
        authserv-id mx.judge.test, the players' key from a file of its own
        (no DNS). Returns its port; stop() stops it."""
        key = self.dir / "dkim-key.pem"
        self.run(["openssl", "genrsa", "-traditional", "-out", str(key), "2048"])
        self.dkim_key = key.read_bytes()
        public = subprocess.run(["openssl", "rsa", "-in", str(key), "-pubout", "-outform", "DER"],
                                capture_output=True, check=True).stdout
        import base64

        (self.dir / "dkim-keys").write_text(f"sel._domainkey.players.test v=DKIM1; k=rsa; "
                                            f"p={base64.b64encode(public).decode()}\n")
        port = free_port()
        (self.dir / "opendkim.conf").write_text(f"""\
Mode v
AuthservID {AUTHSERV}
Socket inet:{port}@127.0.0.1
PidFile {self.dir}/opendkim.pid
Syslog no
UserID opendkim
AlwaysAddARHeader yes
InternalHosts 192.0.2.1
TestPublicKeys {self.dir}/dkim-keys
""")
        self.run(["opendkim", "-x", str(self.dir / "opendkim.conf")])
        until(lambda: (self.dir / "opendkim.pid").exists())
        return port

    def stop_opendkim(self) -> None:
        pid = self.dir / "opendkim.pid"
        if pid.exists():
            try:
                os.kill(int(pid.read_text().strip()), 15)
            except (ProcessLookupError, ValueError):
                pass
            pid.unlink(missing_ok=True)

    def send_signed(self, to: str, body: str, *, headers: dict[str, str] | None = None) -> str:
        """A mail of ann@players.test, DKIM-signed for players.test (dkimpy)."""
        import dkim
        from email.policy import SMTP

        msg = EmailMessage()
        msg["From"], msg["To"], msg["Subject"] = f"Ann <{PLAYER}>", to, "commands"
        msg["Message-ID"] = make_msgid(domain="players.test")
        for name, value in (headers or {}).items():
            msg[name] = value
        msg.set_content(body)
        raw = msg.as_bytes(policy=SMTP)
        signature = dkim.sign(raw, b"sel", b"players.test", self.dkim_key,
                              include_headers=[b"from", b"to", b"subject", b"message-id"])
        with smtplib.SMTP("127.0.0.1", self.port, timeout=30) as smtp:
            smtp.sendmail(PLAYER, [to], signature + raw)
        return msg["Message-ID"]

    def quiet(self) -> None:
        """Wait for the judge's background runner to end (LINGER seconds after
        its last mail): a runner, as a daemon, keeps the configuration it
        started with."""
        until(lambda: not self._runners(), why=lambda: "a runner still runs")

    def stop(self) -> None:
        subprocess.run(["postfix", "-c", str(self.conf), "stop"], capture_output=True, timeout=60)
        self.stop_opendkim()
        # The judge's background runner of the last mail, if it still waits.
        for _ in range(100):
            if not self._runners():
                break
            time.sleep(0.2)
        self.sink.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _runners(self) -> list[int]:
        found = []
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                if proc.stat().st_uid == self.uid:
                    found.append(int(proc.name))
            except OSError:
                pass
        return found


def until(condition, timeout: float = SETTLE, why=lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within the time allowed: {why()}"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def postfix():
    rig = PostfixRig()
    try:
        yield rig
    finally:
        rig.stop()


def test_the_documented_forward_line_delivers_and_the_reply_comes_back(postfix):
    line = documented_line()
    assert line == '"|/usr/local/bin/judge --config /etc/judge/judge.toml deliver --background"'
    postfix.set_forward(line)
    first = postfix.send(JUDGE, "CREATE ?spring gmsecret\nLIST ?spring")
    until(lambda: postfix.replies_to(first), why=postfix.maillog)
    replies = postfix.replies_to(first)
    assert len(replies) == 1, (replies, postfix.stored(), postfix.maillog())
    reply = replies[0]
    assert b"From: Judge <judge@judge.test>" in reply and b"?spring" in reply
    assert f"to=<{JUDGE}>" in postfix.maillog() and "status=sent (delivered to command: /usr/local/bin/judge " \
        "--config /etc/judge/judge.toml deliver --background)" in postfix.maillog()
    assert postfix.row(first)[0] == "done", (postfix.stored(), postfix.maillog())
    # The store is the operator's (the configuration's data_dir), not the pipe user's home.
    assert not (postfix.home / ".local").exists()
    # A second mail, while the first one's runner may still wait: answered once too.
    second = postfix.send(JUDGE, "LIST ?spring")
    until(lambda: postfix.replies_to(second), why=postfix.maillog)
    time.sleep(2)
    assert len(postfix.replies_to(first)) == 1 and len(postfix.replies_to(second)) == 1, \
        ([m.raw for m in postfix.sink.messages], postfix.maillog())


def test_a_broken_configuration_defers_and_the_mail_is_taken_once_after_the_fix(postfix):
    postfix.set_forward(documented_line())
    good = postfix.config_path.read_text()
    postfix.write_config("[judge]\npoll_intervall = 5\n")  # a typo (and a table twice): not TOML the judge takes
    before = len(postfix.sink.messages)
    mail = postfix.send(JUDGE, "LIST")
    until(lambda: "status=deferred" in postfix.maillog() and "configuration error" in postfix.maillog(),
          why=postfix.maillog)
    assert "bounced" not in postfix.maillog() and "status=sent (delivered to command" not in \
        postfix.maillog().split("status=deferred")[-1]
    time.sleep(2)
    assert len(postfix.sink.messages) == before  # no bounce to the player, no reply
    assert mail not in [r[0] for r in postfix.stored()]
    postfix.config_path.write_text(good)
    postfix.flush()
    until(lambda: postfix.replies_to(mail), why=postfix.maillog)
    postfix.flush()  # once more: nothing is delivered twice
    time.sleep(3)
    assert len(postfix.replies_to(mail)) == 1 and postfix.row(mail)[0] == "done"


def test_an_alias_runs_as_nobody_and_defers_rather_than_bounces(postfix):
    """Postfix runs an alias's command as default_privs (nobody), who cannot
    read /etc/judge/judge.toml (0640 root:judge): the mail waits in the
    queue, it is not bounced to the player (docs/operating.md says to use
    the judge user's .forward)."""
    before = len(postfix.sink.messages)
    mail = postfix.send("judge-alias@judge.test", "LIST")
    until(lambda: re.search(r"to=<judge-alias@judge\.test>.*status=deferred.*cannot read the configuration file "
                            r"/etc/judge/judge\.toml: Permission denied", postfix.maillog()), why=postfix.maillog)
    time.sleep(1)
    assert len(postfix.sink.messages) == before
    assert mail not in [r[0] for r in postfix.stored()]
    postfix.run(["postsuper", "-c", str(postfix.conf), "-d", "ALL", "deferred"])  # done with it


def test_forged_authentication_results_are_removed_by_the_documented_rule(postfix):
    postfix.set_forward(documented_line())
    postfix.quiet()
    postfix.write_config(f'[auth]\ntrusted_authserv_ids = ["{AUTHSERV}"]\nrequire_authenticated_from = true\n')
    forged = {"Authentication-Results": f"{AUTHSERV}; dkim=pass header.d=players.test header.i=@players.test"}
    # Without the rule, while the milter is down, the forged header reaches
    # the judge and is believed: the attack.
    postfix.postconf("header_checks =")
    through = postfix.send(JUDGE, "LIST", headers=forged)
    until(lambda: postfix.replies_to(through), why=postfix.maillog)
    assert postfix.row(through)[0] == "done"
    # With the docs' rule (for this MTA's name), the MTA drops it.
    rule = header_rule().replace(r"mx\.example\.org", r"mx\.judge\.test")
    assert r"mx\.judge\.test" in rule
    (postfix.dir / "header_checks").write_text(rule + "\n")
    postfix.postconf(f"header_checks = regexp:{postfix.dir}/header_checks")
    stopped = postfix.send(JUDGE, "LIST", headers=forged)
    until(lambda: stopped in [r[0] for r in postfix.stored()]
          and postfix.row(stopped)[0] != "new", why=postfix.maillog)
    status, reason, raw = postfix.row(stopped)
    assert status == "ignored" and "not authenticated" in reason
    assert b"Authentication-Results" not in raw and f"{AUTHSERV}; dkim=pass".encode() not in raw
    time.sleep(2)
    assert not postfix.replies_to(stopped)
    # Another host's header (the player's own server) is kept: not ours to drop.
    other = postfix.send(JUDGE, "LIST", headers={"Authentication-Results": "mail.players.test; dkim=pass"})
    until(lambda: other in [r[0] for r in postfix.stored()] and postfix.row(other)[0] != "new")
    assert b"Authentication-Results: mail.players.test; dkim=pass" in postfix.row(other)[2]
    postfix.quiet()
    postfix.write_config()


def test_the_real_milters_header_passes_the_rule_and_is_believed(postfix):
    """OpenDKIM up (Debian's, verifying as the MX's milter) with the rule in
    place: a mail signed for players.test gets the milter's own
    `Authentication-Results: mx.judge.test; dkim=pass`, which header_checks
    leave alone, and the judge with require_authenticated_from runs it; an
    unsigned mail with the forged header is refused (the forged header gone,
    the milter's dkim=none kept)."""
    postfix.set_forward(documented_line())
    postfix.quiet()
    port = postfix.start_opendkim()
    rule = header_rule().replace(r"mx\.example\.org", r"mx\.judge\.test")
    (postfix.dir / "header_checks").write_text(rule + "\n")
    postfix.postconf(f"header_checks = regexp:{postfix.dir}/header_checks")
    postfix.postconf(f"smtpd_milters = inet:127.0.0.1:{port}")
    postfix.write_config(f'[auth]\ntrusted_authserv_ids = ["{AUTHSERV}"]\nrequire_authenticated_from = true\n')
    try:
        signed = postfix.send_signed(JUDGE, "LIST")
        until(lambda: postfix.replies_to(signed), why=postfix.maillog)
        status, _, raw = postfix.row(signed)
        assert status == "done"
        [verdict] = [line for line in raw.decode().replace("\r\n", "\n").replace("\n\t", " ").replace("\n ", " ")
                     .splitlines() if line.startswith("Authentication-Results:")]
        assert verdict.startswith(f"Authentication-Results: {AUTHSERV};") and "dkim=pass" in verdict
        assert "header.d=players.test" in verdict
        forged = postfix.send(JUDGE, "LIST", headers={
            "Authentication-Results": f"{AUTHSERV}; dkim=pass header.d=players.test"})
        until(lambda: forged in [r[0] for r in postfix.stored()] and postfix.row(forged)[0] != "new",
              why=postfix.maillog)
        status, reason, raw = postfix.row(forged)
        assert status == "ignored" and "not authenticated" in reason
        assert b"dkim=pass" not in raw and f"Authentication-Results: {AUTHSERV}; dkim=none".encode() in raw
    finally:
        postfix.quiet()
        postfix.postconf(f"smtpd_milters = inet:127.0.0.1:{free_port()}")
        postfix.stop_opendkim()
        postfix.write_config()
