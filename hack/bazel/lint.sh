#!/usr/bin/env bash
# Checks the Bazel files: buildifier on every BUILD, .bzl, WORKSPACE and
# MODULE.bazel file, and BUILD files and deps.bzl in step with the Go sources
# and go.mod (Gazelle regenerates them; any difference fails).
set -euo pipefail
cd "$(dirname "$0")/../.."

BUILDTOOLS_VERSION=v0.0.0-20260904073137-eaa4d125b423
cache_root="${KNS3_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kns-3}"
buildifier="$cache_root/bin/buildifier-$BUILDTOOLS_VERSION"
if [ ! -x "$buildifier" ]; then
  echo "lint: building buildifier $BUILDTOOLS_VERSION"
  mkdir -p "$cache_root/bin"
  tmp=$(mktemp -d)
  GOBIN="$tmp" CGO_ENABLED=0 GOTOOLCHAIN=local go install "github.com/bazelbuild/buildtools/buildifier@$BUILDTOOLS_VERSION"
  mv "$tmp/buildifier" "$buildifier"
  rmdir "$tmp"
fi

mapfile -t files < <(git ls-files 'WORKSPACE' 'MODULE.bazel' 'BUILD.bazel' '*/BUILD.bazel' '*.bzl')
echo "lint: buildifier on ${#files[@]} files"
# sh_binary stays native: rules_shell does not support Bazel 4.2.3.
"$buildifier" -mode=check -lint=warn -warnings=-native-sh-binary "${files[@]}"

echo "lint: BUILD files and deps.bzl against the Go sources and go.mod"
bazel run //:gazelle -- update-repos -from_file=go.mod -to_macro=deps.bzl%go_dependencies \
  -build_file_proto_mode=disable_global -prune >/dev/null 2>&1
bazel run //:gazelle >/dev/null 2>&1
if ! git diff --exit-code -- deps.bzl WORKSPACE '*BUILD.bazel'; then
  echo "lint: BUILD files are stale: run 'bazel run //:gazelle' (and update-repos, see WORKSPACE) and commit the result" >&2
  exit 1
fi
