#!/bin/sh
# Creates the probe key that deploy/live's simulator and its agents share:
# one random 256-bit key, as the Secret kns-3-probe-key in kns-3-system
# (the simulator's) and in kns-3-agents (the agents'). Both ends sign and
# check every probe with it; the agents answer nothing else.
#
#   probe-key.sh              create the key where it is missing, keeping one
#                             that exists (run it again any time)
#   probe-key.sh --rotate     replace the key in both namespaces, then restart
#                             the agents and the scheduler to take it
#   probe-key.sh --out FILE   also write the key to FILE (mode 0600): the
#                             one-scheduler install's install.sh takes it
#
# Needs kubectl, with rights to create namespaces and Secrets there.
set -eu

die() { echo "probe-key.sh: $*" >&2; exit 1; }
usage="usage: probe-key.sh [--rotate] [--out FILE]"
kubectl=${KUBECTL:-kubectl}
secret=kns-3-probe-key
namespaces="kns-3-system kns-3-agents"

rotate=false out=
while [ $# -gt 0 ]; do
  case $1 in
  --rotate) rotate=true ;;
  --out) [ $# -ge 2 ] || die "$usage"; out=$2; shift ;;
  *) die "$usage" ;;
  esac
  shift
done

# key_in NS prints the key the namespace's Secret holds, nothing if none.
key_in() {
  "$kubectl" -n "$1" get secret "$secret" -o 'jsonpath={.data.key}' 2>/dev/null | base64 -d 2>/dev/null || true
}

key=
if ! $rotate; then
  for ns in $namespaces; do
    k=$(key_in "$ns")
    if [ -n "$k" ] && [ -n "$key" ] && [ "$k" != "$key" ]; then
      die "the Secrets $secret in $namespaces hold different keys: the agents refuse the simulator's probes. Run with --rotate to make one new key"
    fi
    [ -n "$k" ] && key=$k
  done
fi
if [ -z "$key" ]; then
  key=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
  [ ${#key} -ge 40 ] || die "could not read 32 random bytes from /dev/urandom"
fi

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf '%s' "$key" >"$tmp"
for ns in $namespaces; do
  "$kubectl" get namespace "$ns" >/dev/null 2>&1 || "$kubectl" create namespace "$ns" >/dev/null
  if [ "$(key_in "$ns")" = "$key" ]; then
    echo "probe-key.sh: $ns/$secret holds the key"
    continue
  fi
  "$kubectl" -n "$ns" create secret generic "$secret" --from-file=key="$tmp" \
    --dry-run=client -o yaml | "$kubectl" apply -f - >/dev/null
  echo "probe-key.sh: $ns/$secret written"
done
if [ -n "$out" ]; then
  (umask 077 && cp "$tmp" "$out")
  echo "probe-key.sh: the key is in $out"
fi
if $rotate; then
  echo "probe-key.sh: restart the agents and the scheduler to take the new key:"
  echo "  $kubectl -n kns-3-agents rollout restart daemonset/kns-3-agent"
  echo "  $kubectl -n kns-3-system rollout restart deployment/kns-3-scheduler"
fi
