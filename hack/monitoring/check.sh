#!/usr/bin/env bash
# make monitoring-check: deploy/monitoring's alert rules, checked and unit
# tested with promtool (prometheusrule_test.yaml). promtool comes with
# Debian's prometheus package, installed here when missing; the kind
# suite's monitoring check runs it too. `install` only installs it.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v promtool >/dev/null; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "monitoring-check: promtool is missing; install Debian's prometheus package (as root)" >&2
    exit 1
  fi
  echo "monitoring-check: installing prometheus (for promtool)"
  apt-get update -qq
  # Only promtool is wanted: keep the package's server from starting
  # (Debian's policy-rc.d convention), and stop it should it run anyway.
  policy=/usr/sbin/policy-rc.d
  had_policy=false
  [[ -e $policy ]] && had_policy=true
  $had_policy || { printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus >/dev/null
  $had_policy || rm -f "$policy"
  if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
    systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
fi
[[ ${1:-} == install ]] && exit 0

dir=deploy/monitoring
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The rule file is the PrometheusRule's spec, the last key of the file (a
# Go test in deploy/monitoring checks that this reads the same groups).
sed -n '/^spec:$/,$p' "$dir/prometheusrule.yaml" | sed '1d; s/^  //' >"$tmp/kns-3-rules.yaml"
cp "$dir/prometheusrule_test.yaml" "$tmp/"
promtool check rules "$tmp/kns-3-rules.yaml"
promtool test rules "$tmp/prometheusrule_test.yaml"
