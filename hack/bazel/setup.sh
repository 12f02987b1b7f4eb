#!/usr/bin/env bash
# Installs what `bazel` needs here: Debian's Bazel 4.2.3 and the rule sets the
# WORKSPACE takes from Debian's packages. Nothing is downloaded from elsewhere.
set -euo pipefail

packages=(bazel-bootstrap bazel-skylib bazel-platforms bazel-rules-cc bazel-rules-java bazel-rules-proto)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: missing ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "setup: installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
