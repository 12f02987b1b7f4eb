#!/usr/bin/env bash
# Prepares this host to run kind clusters: Docker installed and running, and,
# only where the host cannot grant CAP_SYS_RESOURCE, a runc wrapper that
# lets privileged containers (kind's nodes) start. Safe to run repeatedly.
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
prefix="${KNS3_LIBEXEC:-/usr/local/libexec/kns-3}"
daemon_json=/etc/docker/daemon.json
log=/var/log/kns-3-dockerd.log

say() { echo "dockerhost: $*"; }

need_root() {
  if [[ $(id -u) -ne 0 ]]; then
    say "must run as root to install and configure Docker ($*)" >&2
    exit 1
  fi
}

# A new machine's package lists may be empty or old: read them once, before
# the first install.
apt_install() {
  if [[ -z ${apt_updated:-} ]]; then
    apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null
}

if ! command -v dockerd >/dev/null; then
  need_root "dockerd is missing"
  say "installing docker.io"
  apt_install docker.io
fi
# tool:package; tc, ip and nft shape a kind node's link (internal/netshape).
for pair in debootstrap:debootstrap tar:tar tc:iproute2 nft:nftables nsenter:util-linux; do
  tool=${pair%%:*} pkg=${pair#*:}
  if ! PATH="$PATH:/usr/sbin:/sbin" command -v "$tool" >/dev/null; then
    need_root "$tool is missing"
    say "installing $pkg"
    apt_install "$pkg"
  fi
done

# CAP_SYS_RESOURCE is capability 24: is it in this process's bounding set?
capbnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
if (( (16#$capbnd >> 24) & 1 )); then
  wrap=false
  say "host grants CAP_SYS_RESOURCE: Docker's own runc is used"
else
  wrap=true
  say "host lacks CAP_SYS_RESOURCE (CapBnd=$capbnd): privileged containers need the runc wrapper"
fi

restart=false
if $wrap; then
  need_root "installing the runc wrapper"
  mkdir -p "$prefix"
  (cd "$repo" && CGO_ENABLED=0 go build -trimpath -o "$prefix/runc.new" ./hack/dockerhost/runcwrap)
  if ! cmp -s "$prefix/runc.new" "$prefix/runc" 2>/dev/null; then
    mv "$prefix/runc.new" "$prefix/runc"
    restart=true
  else
    rm -f "$prefix/runc.new"
  fi
  want="{\"runtimes\":{\"kns3-runc\":{\"path\":\"$prefix/runc\"}},\"default-runtime\":\"kns3-runc\"}"
  if [[ ! -s $daemon_json ]]; then
    mkdir -p "$(dirname "$daemon_json")"
    echo "$want" >"$daemon_json"
    say "wrote $daemon_json: default runtime kns3-runc ($prefix/runc)"
    restart=true
  elif ! grep -q '"default-runtime": *"kns3-runc"' "$daemon_json"; then
    say "$daemon_json exists and does not select the kns3-runc runtime; merge this into it and rerun:" >&2
    say "  $want" >&2
    exit 1
  fi
fi

# Every kind node runs systemd, kubelet and kube-proxy, each holding inotify
# instances; with the default 128 per user a second cluster (the demo beside
# the test suite) fails with "too many open files". kind's own advice.
raise_sysctl() {
  local key=$1 want=$2 have
  have=$(sysctl -n "$key")
  if (( have < want )); then
    need_root "raising $key"
    sysctl -q -w "$key=$want"
    say "raised $key from $have to $want"
  fi
}
raise_sysctl fs.inotify.max_user_instances 512
raise_sysctl fs.inotify.max_user_watches 524288

running() { docker info >/dev/null 2>&1; }

if running && ! $restart; then
  say "dockerd is running"
  exit 0
fi
need_root "starting dockerd"
if [[ -d /run/systemd/system ]]; then
  say "restarting docker.service"
  systemctl restart docker.service
else
  if pid=$(pidof dockerd); then
    say "stopping dockerd ($pid) to apply the new runtime"
    kill "$pid"
    for _ in $(seq 50); do pidof dockerd >/dev/null || break; sleep 0.2; done
  fi
  say "starting dockerd (log: $log)"
  nohup dockerd >>"$log" 2>&1 &
fi
for _ in $(seq 60); do
  if running; then
    say "dockerd is running (runtime: $(docker info --format '{{.DefaultRuntime}}'))"
    exit 0
  fi
  sleep 1
done
say "dockerd did not answer within 60 s; see $log" >&2
exit 1
