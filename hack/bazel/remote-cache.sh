#!/usr/bin/env bash
# Starts (or stops) a Bazel remote cache on loopback for `--config=cache`:
# bazel-remote, built from the Go module proxy, keeping its data on local disk
# outside the clone so later runs reuse it.
#   hack/bazel/remote-cache.sh start|stop|status
set -euo pipefail

BAZEL_REMOTE_VERSION=v2.6.1
cache_root="${KNS3_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kns-3}"
bin="$cache_root/bin/bazel-remote-$BAZEL_REMOTE_VERSION"
dir="$cache_root/bazel-remote"
pidfile="$cache_root/bazel-remote.pid"
grpc_address=127.0.0.1:9092
http_address=127.0.0.1:9090

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

case "${1:-start}" in
start)
  if running; then
    echo "remote cache: already running (pid $(cat "$pidfile")), grpc://$grpc_address"
    exit 0
  fi
  mkdir -p "$cache_root/bin" "$dir"
  if [ ! -x "$bin" ]; then
    echo "remote cache: building bazel-remote $BAZEL_REMOTE_VERSION"
    # Built inside its own module: `go install m@v` would ask the proxy for the
    # module's version list, which it refuses for this module.
    src=$(GOTOOLCHAIN=local go mod download -json "github.com/buchgr/bazel-remote/v2@$BAZEL_REMOTE_VERSION" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    (cd "$src" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -o "$bin.tmp" .)
    mv "$bin.tmp" "$bin"
  fi
  nohup "$bin" --dir "$dir" --max_size 10 --grpc_address "$grpc_address" --http_address "$http_address" \
    >"$cache_root/bazel-remote.log" 2>&1 &
  echo $! >"$pidfile"
  for _ in $(seq 50); do
    if (exec 3<>"/dev/tcp/${grpc_address%:*}/${grpc_address#*:}") 2>/dev/null; then
      echo "remote cache: serving grpc://$grpc_address from $dir (log $cache_root/bazel-remote.log)"
      exit 0
    fi
    running || break
    sleep 0.2
  done
  echo "remote cache: failed to start; see $cache_root/bazel-remote.log" >&2
  tail -5 "$cache_root/bazel-remote.log" >&2 || true
  exit 1
  ;;
stop)
  if running; then kill "$(cat "$pidfile")"; fi
  rm -f "$pidfile"
  ;;
status)
  if running; then echo "running (pid $(cat "$pidfile")), grpc://$grpc_address"; else echo "not running"; exit 1; fi
  ;;
*)
  echo "usage: $0 start|stop|status" >&2
  exit 2
  ;;
esac
