#!/usr/bin/env bash
# Runs the Gazelle built by go_repository_tools in the workspace. The stock
# gazelle() rule cannot be used: it needs a golang.org/x/tools package that
# the version Kubernetes pins no longer has.
set -euo pipefail
gazelle="$PWD/$1"
shift
cd "${BUILD_WORKSPACE_DIRECTORY:?run me with bazel run //:gazelle}"
exec "$gazelle" "$@"
