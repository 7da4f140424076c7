#!/usr/bin/env bash
# mailrig.sh (judge test copy of ../shared/reference/mailrig.sh): throwaway real mail servers on 127.0.0.1 for integration tests (Debian 12, as root).
# Dovecot 2.3 IMAP/IMAPS/LMTP from a private config (no system service), plus an aiosmtpd SMTP
# receiver that keeps every message in the sink Maildir and delivers mail for rig users via LMTP.
# Usage: mailrig.sh start|stop|status|reset|restart-dovecot|clean     CI: eval "$(bash mailrig.sh start)"
set -euo pipefail
umask 022   # the mail (uid 8) and dovecot users must be able to traverse $D and read users
D=${MAILRIG_DIR:-/tmp/judge-mailrig}
IMAP_PORT=${MAILRIG_IMAP_PORT:-11143} IMAPS_PORT=${MAILRIG_IMAPS_PORT:-11993}
LMTP_PORT=${MAILRIG_LMTP_PORT:-11024} SMTP_PORT=${MAILRIG_SMTP_PORT:-11025}
USERS=${MAILRIG_USERS:-"judge@example.test:secret gm@example.test:secret"}  # "addr:pass ..."
SEPARATOR=${MAILRIG_SEPARATOR:-/}  # the folders' hierarchy separator; "." is Dovecot's default
PY=/usr/bin/python3   # Debian's python + python3-aiosmtpd: independent of any venv/pyenv
log() { echo "mailrig: $*" >&2; }
up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
alive() {  # pid file names a running process; zombies are dead (PID 1 here reaps slowly)
  local s; [ -s "$1" ] && s=$(cut -d' ' -f3 "/proc/$(cat "$1")/stat" 2>/dev/null) && [ "$s" != Z ]
}
all_up() { up "$IMAP_PORT" && up "$IMAPS_PORT" && up "$LMTP_PORT" && up "$SMTP_PORT"; }
dovecot_pids() {  # dovecot processes in our master's process group (even if the master died)
  local g p pg; g=$(cat "$D/run/master.pid" 2>/dev/null) || return 0
  for p in /proc/[0-9]*; do
    read -r _ _ _ _ pg _ 2>/dev/null <"$p/stat" || continue
    if [ "$pg" = "$g" ]; then
      case "$(readlink "$p/exe" 2>/dev/null)" in /usr/sbin/dovecot | /usr/lib/dovecot/*) echo "${p#/proc/}" ;; esac
    fi
  done
  return 0
}

install_pkgs() {
  if [ -x /usr/sbin/dovecot ] && [ -x /usr/lib/dovecot/imap ] && [ -x /usr/lib/dovecot/lmtp ] &&
     command -v openssl >/dev/null && "$PY" -c 'import aiosmtpd' 2>/dev/null; then return; fi
  local pkgs="dovecot-imapd dovecot-lmtpd python3-aiosmtpd"
  command -v openssl >/dev/null || pkgs="$pkgs openssl"  # if present, naming it upgrades libssl
  log "installing $pkgs"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends $pkgs >&2
}

configure() {
  mkdir -p "$D"/{run,state,log,mail,tls,sink/new,sink/cur,sink/tmp}
  chown mail:mail "$D/mail"   # Dovecot refuses uid 0 for mail access: use Debian's mail user (8:8)
  local u; : >"$D/users.new"
  for u in $USERS; do echo "${u%%:*}:{PLAIN}${u#*:}::::::" >>"$D/users.new"; done
  mv "$D/users.new" "$D/users"   # re-read by dovecot when changed
  [ -s "$D/tls/key.pem" ] || openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$D/tls/key.pem" -out "$D/tls/cert.pem" -days 3650 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 2>/dev/null
  cat >"$D/dovecot.conf" <<EOF
base_dir = $D/run
state_dir = $D/state
instance_name = mailrig
log_path = $D/log/dovecot.log
protocols = imap lmtp
listen = 127.0.0.1, 127.0.0.2
ssl = yes
ssl_cert = <$D/tls/cert.pem
ssl_key = <$D/tls/key.pem
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_uid = mail
mail_gid = mail
first_valid_uid = 8
first_valid_gid = 8
mail_location = maildir:~/Maildir
mail_fsync = never
namespace inbox {
  inbox = yes
  separator = $SEPARATOR
}
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u $D/users
}
userdb {
  driver = passwd-file
  args = username_format=%u $D/users
  default_fields = home=$D/mail/%d/%n
}
protocol imap {
  mail_max_userip_connections = 500
}
# The same server on 127.0.0.2 without IDLE: a client there must poll.
local 127.0.0.2 {
  protocol imap {
    imap_capability = IMAP4rev1 LITERAL+ SASL-IR LOGIN-REFERRALS ID ENABLE SORT SORT=DISPLAY THREAD=REFERENCES THREAD=REFS THREAD=ORDEREDSUBJECT MULTIAPPEND URL-PARTIAL CATENATE UNSELECT CHILDREN NAMESPACE UIDPLUS LIST-EXTENDED I18NLEVEL=1 CONDSTORE QRESYNC ESEARCH ESORT SEARCHRES WITHIN CONTEXT=SEARCH LIST-STATUS BINARY MOVE SNIPPET=FUZZY PREVIEW=FUZZY PREVIEW STATUS=SIZE SAVEDATE LITERAL+ NOTIFY SPECIAL-USE
  }
}
service imap-login {
  inet_listener imap {
    port = $IMAP_PORT
  }
  inet_listener imaps {
    port = $IMAPS_PORT
  }
}
service lmtp {
  inet_listener lmtp {
    port = $LMTP_PORT
  }
}
EOF
  cat >"$D/smtp_sink.py" <<'EOF'
import asyncio, mailbox, signal, smtplib, sys, threading
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult
port, sink, users_file, lmtp_port = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])

def users():
    with open(users_file) as f:
        return {line.split(":", 1)[0].lower() for line in f if ":" in line}

def lmtp(mail_from, rcpt, data):  # 1 rcpt per transaction: smtplib.LMTP reads only 1 DATA reply
    with smtplib.LMTP("127.0.0.1", lmtp_port, timeout=30) as c:
        c.sendmail(mail_from, [rcpt], data)

class Handler:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        u = users()
        if address.rsplit("@", 1)[-1].lower() in {x.rsplit("@", 1)[-1] for x in u} \
                and address.lower() not in u:
            return "550 5.1.1 <%s>: user unknown" % address
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server, session, envelope):
        data = envelope.original_content
        hdr = "X-Envelope-From: <%s>\nX-Envelope-To: %s\n" % (envelope.mail_from, ", ".join(envelope.rcpt_tos))
        mailbox.Maildir(sink, create=True).add(hdr.encode() + data.replace(b"\r\n", b"\n"))
        local = users()
        for r in envelope.rcpt_tos:
            if r.lower() in local:
                try:
                    await asyncio.get_running_loop().run_in_executor(None, lmtp, envelope.mail_from, r, data)
                except Exception as e:
                    return "451 4.3.0 LMTP delivery to %s failed: %s" % (r, e)
        return "250 2.0.0 OK"

def accept_any(server, session, envelope, mechanism, auth_data):
    return AuthResult(success=True)  # any AUTH PLAIN/LOGIN credentials, TLS not required

ctl = Controller(Handler(), hostname="127.0.0.1", port=port, server_hostname="mailrig.test",
                 authenticator=accept_any, auth_require_tls=False, enable_SMTPUTF8=True)
ctl.start()
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *a: stop.set()); signal.signal(signal.SIGINT, lambda *a: stop.set())
print("smtp sink listening on 127.0.0.1:%d" % port, flush=True)
stop.wait()
ctl.stop()
EOF
}

print_env() {
  local first=${USERS%% *}
  cat <<EOF | tee "$D/env.sh"
export MAILRIG_DIR=$D IMAP_HOST=127.0.0.1 IMAP_NOIDLE_HOST=127.0.0.2 IMAP_PORT=$IMAP_PORT IMAPS_PORT=$IMAPS_PORT IMAP_SSL=0
export IMAP_USER=${first%%:*} IMAP_PASS=${first#*:} MAILRIG_USERS='$USERS'
export SMTP_HOST=127.0.0.1 SMTP_PORT=$SMTP_PORT LMTP_PORT=$LMTP_PORT
export MAIL_SINK_MAILDIR=$D/sink MAILRIG_CAFILE=$D/tls/cert.pem
EOF
}

start() {
  install_pkgs
  configure
  if alive "$D/run/master.pid" && alive "$D/smtp.pid" && all_up; then
    log "already running"; print_env; return
  fi
  stop   # leftovers of a crashed/half-started rig
  local p; for p in "$IMAP_PORT" "$IMAPS_PORT" "$LMTP_PORT" "$SMTP_PORT"; do
    if up "$p"; then log "port $p is already in use by something else"; exit 1; fi
  done
  # no inherited stdio: a daemon holding the caller's stderr would hang `mailrig.sh start | tee`
  if ! dovecot -c "$D/dovecot.conf" </dev/null >>"$D/log/dovecot.err" 2>&1; then
    log "dovecot failed to start:"; tail -n 5 "$D/log/dovecot.err" >&2; exit 1
  fi
  setsid "$PY" "$D/smtp_sink.py" "$SMTP_PORT" "$D/sink" "$D/users" "$LMTP_PORT" \
    </dev/null >>"$D/log/smtp.log" 2>&1 &
  echo $! >"$D/smtp.pid"
  for _ in $(seq 100); do up "$SMTP_PORT" && break; sleep 0.1; done
  if ! { all_up && alive "$D/smtp.pid"; }; then
    log "failed to start"; tail -n 20 "$D/log/dovecot.log" "$D/log/smtp.log" >&2 || true; stop; exit 1
  fi
  log "up: IMAP $IMAP_PORT, IMAPS $IMAPS_PORT, LMTP $LMTP_PORT, SMTP $SMTP_PORT, data in $D"
  print_env
}

stop() {  # SIGTERM, wait up to 10 s, then SIGKILL what is left
  local p
  if alive "$D/run/master.pid"; then kill "$(cat "$D/run/master.pid")"
  else for p in $(dovecot_pids); do kill "$p" 2>/dev/null || true; done; fi
  if alive "$D/smtp.pid"; then kill "$(cat "$D/smtp.pid")"; fi
  for _ in $(seq 100); do
    if [ -z "$(dovecot_pids)" ] && ! alive "$D/smtp.pid"; then break; fi; sleep 0.1
  done
  for p in $(dovecot_pids); do kill -9 "$p" 2>/dev/null || true; done
  if alive "$D/smtp.pid"; then kill -9 "$(cat "$D/smtp.pid")"; fi
  rm -f "$D/run/master.pid" "$D/smtp.pid"
}

reset() {  # expunge all mail of all users and empty the sink (folders/UIDVALIDITY kept)
  doveadm -c "$D/dovecot.conf" expunge -A mailbox '*' all
  find "$D/sink/new" "$D/sink/cur" -type f -delete
}

restart_dovecot() {  # stop Dovecot (only) and start it again: clients see their connections drop
  local p
  if alive "$D/run/master.pid"; then kill "$(cat "$D/run/master.pid")"; fi
  for _ in $(seq 100); do [ -z "$(dovecot_pids)" ] && break; sleep 0.1; done
  for p in $(dovecot_pids); do kill -9 "$p" 2>/dev/null || true; done
  rm -f "$D/run/master.pid"
  if ! dovecot -c "$D/dovecot.conf" </dev/null >>"$D/log/dovecot.err" 2>&1; then
    log "dovecot failed to start:"; tail -n 5 "$D/log/dovecot.err" >&2; exit 1
  fi
  for _ in $(seq 100); do up "$IMAP_PORT" && up "$IMAPS_PORT" && up "$LMTP_PORT" && break; sleep 0.1; done
  all_up || { log "dovecot did not come back"; exit 1; }
  log "dovecot restarted"
}

status() {
  local rc=0 p
  for p in "IMAP $IMAP_PORT" "IMAPS $IMAPS_PORT" "LMTP $LMTP_PORT" "SMTP $SMTP_PORT"; do
    if up "${p#* }"; then echo "$p up"; else echo "$p DOWN"; rc=1; fi
  done
  return $rc
}

case "${1:-}" in
  start) start ;;
  stop) stop; log "stopped" ;;
  status) status ;;
  reset) reset ;;
  restart-dovecot) restart_dovecot ;;
  clean) stop; rm -rf "$D"; log "removed $D" ;;
  *) echo "usage: $0 start|stop|status|reset|restart-dovecot|clean" >&2; exit 2 ;;
esac
