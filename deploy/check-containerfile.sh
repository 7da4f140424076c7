#!/usr/bin/env bash
# Runs deploy/Containerfile's steps, in order, in a fresh Debian bookworm root
# made by debootstrap (minbase: what debian:bookworm-slim holds), for a
# machine with no container engine: FROM is that root, ENV is exported,
# COPY copies from the repository, RUN runs in the root (chroot, in a mount
# namespace of its own with /proc and /dev), USER and WORKDIR apply to the
# checks at the end, which run the image's ENTRYPOINT as its USER:
# `judge --help`, `judge resolve` of an auction, `judge serve --once`.
#
# Usage (as root, from anywhere): bash deploy/check-containerfile.sh [ROOT]
# ROOT defaults to a new folder under /tmp, removed at the end unless KEEP=1.
# Needs debootstrap (apt-get install debootstrap) and the network to Debian's
# mirror and to PyPI. Takes a few minutes (pip downloads numpy, scipy, numba).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FILE=$REPO/deploy/Containerfile
ROOT=${1:-$(mktemp -d /tmp/judge-containerfile-XXXXXX)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
say() { echo "check-containerfile: $*" >&2; }

[ "$(id -u)" = 0 ] || { say "run as root"; exit 2; }
command -v debootstrap >/dev/null || { say "needs debootstrap (apt-get install debootstrap)"; exit 2; }
grep -q '^FROM debian:bookworm-slim$' "$FILE" || { say "FROM is not debian:bookworm-slim: this check does not fit"; exit 2; }

cleanup() { [ "${KEEP:-}" = 1 ] || rm -rf --one-file-system "$ROOT"; }
trap cleanup EXIT
chmod 0755 "$ROOT"  # the root's "/" (mktemp makes it 0700): the image's USER walks through it

say "debootstrap --variant=minbase bookworm $ROOT"
debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >"$ROOT.debootstrap.log" 2>&1 \
  || { tail -20 "$ROOT.debootstrap.log" >&2; exit 1; }
rm -f "$ROOT.debootstrap.log"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# This machine may reach PyPI through a CA of its own: pip in the root is
# given the host's bundle, as the host's pip is (PIP_CERT). Not part of the
# image's steps; a machine with the public CAs needs none of it.
HOST_CA=/etc/ssl/certs/ca-certificates.crt
[ -s "$HOST_CA" ] && cp "$HOST_CA" "$ROOT/host-ca.crt"

declare -A ENV=([PATH]=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin [DEBIAN_FRONTEND]=noninteractive)
USER_=root WORKDIR_=/ ENTRYPOINT_= CMD_=

in_root() {  # in_root USER DIR COMMAND: a shell command in the root, in a mount namespace of its own
  local user=$1 dir=$2 cmd=$3 envs=() key home
  for key in "${!ENV[@]}"; do envs+=("$key=${ENV[$key]}"); done
  home=$(awk -F: -v u="$user" '$1 == u {print $6}' "$ROOT/etc/passwd")  # as the engine sets HOME
  [ -s "$ROOT/host-ca.crt" ] && envs+=("PIP_CERT=/host-ca.crt")
  unshare -m --propagation private sh -c '
      root=$1 user=$2; shift 2
      mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" &&
      exec chroot --userspec="$user" "$root" /usr/bin/env -i "$@"' sh "$ROOT" "$user" \
    "${envs[@]}" "HOME=${home:-/}" /bin/sh -c "cd $dir && $cmd"
}

# The Containerfile's instructions, continuation lines joined, comments dropped.
steps=$(sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$FILE" | grep -v '^[[:space:]]*#' | grep -v '^[[:space:]]*$')
while IFS= read -r line; do
  op=${line%% *} arg=${line#* }
  case $op in
    FROM) say "FROM $arg: the debootstrap root" ;;
    ENV)
      for kv in $arg; do  # KEY=VALUE pairs; $KEY of an earlier ENV expanded
        key=${kv%%=*} value=${kv#*=}
        for known in "${!ENV[@]}"; do value=${value//\$$known/${ENV[$known]}}; done
        ENV[$key]=$value
      done
      say "ENV $arg" ;;
    COPY)
      read -r -a parts <<<"$arg"; dest=${parts[-1]}; unset 'parts[-1]'
      if [ "${#parts[@]}" -gt 1 ] || [ "${dest: -1}" = / ]; then  # into the folder dest
        mkdir -p "$ROOT$dest"
        for src in "${parts[@]}"; do cp -a "$REPO/$src" "$ROOT$dest"; done
      else  # to the name dest
        mkdir -p "$(dirname "$ROOT$dest")"; cp -a "$REPO/${parts[0]}" "$ROOT$dest"
      fi
      say "COPY $arg" ;;
    RUN) say "RUN $arg"; in_root "$USER_" "$WORKDIR_" "$arg" ;;
    USER) USER_=$arg; say "USER $arg" ;;
    WORKDIR) WORKDIR_=$arg; mkdir -p "$ROOT$arg"; say "WORKDIR $arg" ;;
    VOLUME) say "VOLUME $arg (a folder of the root)" ;;
    ENTRYPOINT) ENTRYPOINT_=$(echo "$arg" | tr -d '[]",'); say "ENTRYPOINT $arg" ;;
    CMD) CMD_=$(echo "$arg" | tr -d '[]",'); say "CMD $arg" ;;
    *) say "unknown instruction: $line"; exit 1 ;;
  esac
done <<<"$steps"
rm -f "$ROOT/host-ca.crt"

say "the image's packages:"
chroot "$ROOT" dpkg-query -W -f '  ${Package} ${Version}\n' python3 python3-venv ca-certificates >&2
cat >"$ROOT/tmp/auction.json" <<'EOF'
{"method": "blind-auction", "submissions": {"a": "A 40, E 30, F 20, G 18, I 14, R 12, T 6", "b": "No Preference"}}
EOF
say "as $USER_ in $WORKDIR_: $ENTRYPOINT_ --help"
in_root "$USER_" "$WORKDIR_" "$ENTRYPOINT_ --help >/dev/null"
say "as $USER_: $ENTRYPOINT_ resolve /tmp/auction.json --seed 00ff --format text"
in_root "$USER_" "$WORKDIR_" "$ENTRYPOINT_ resolve /tmp/auction.json --seed 00ff --format text | head -3" >&2
say "as $USER_: $ENTRYPOINT_ $CMD_ --once"
in_root "$USER_" "$WORKDIR_" "$ENTRYPOINT_ $CMD_ --once" >&2
say "OK: every step of deploy/Containerfile ran in a fresh Debian bookworm root"
