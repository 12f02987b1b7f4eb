#!/bin/sh
# Makes kns-3-scheduler the control plane's scheduler on a kubeadm (or kind)
# control-plane node, or puts kubeadm's kube-scheduler back. Run as root on
# every control-plane node; the kubelet swaps the static pods by itself.
#
#   install.sh MANIFEST CONFIG SCENARIO [PROBEKEY]
#                              install (MANIFEST: the rendered
#                              kube-scheduler.yaml of `kubectl kustomize
#                              deploy/control-plane`, or of
#                              deploy/live/control-plane, whose simulator
#                              signs its probes: PROBEKEY is then the key's
#                              file, from deploy/live/probe-key.sh --out)
#   install.sh --uninstall     restore kubeadm's kube-scheduler
#
# A manifest whose simulator probes (--probers=) is one of as many probers
# as the cluster has control-plane nodes, each with its share of the probing
# budget: install.sh counts them with kubectl, when it can.
#
# An install changes nothing unless the node holds the manifest's images,
# then waits until the new scheduler is ready; if it is not within
# KNS3_READY_TIMEOUT seconds (120), the previous scheduler is put back.
# Then it names the holder of the schedulers' lease: with several
# control-plane nodes, a kubeadm kube-scheduler that still leads knows no
# kns-3-scheduler profile, and KNS-3 pods wait, with no event, until every
# node runs KNS-3 (install on each before creating KNS-3 pods).
set -eu
# The word lists split below are images and pod ids, never patterns.
set -f

manifests=${KNS3_MANIFESTS_DIR:-/etc/kubernetes/manifests}
etc=${KNS3_ETC_DIR:-/etc/kubernetes}
ready_timeout=${KNS3_READY_TIMEOUT:-120}
ready_interval=${KNS3_READY_INTERVAL:-2}
current="$manifests/kube-scheduler.yaml"
# The kubelet runs every file of the manifests directory but dot-files;
# in the same directory, mv is an atomic rename.
tmp="$manifests/.kube-scheduler.yaml.kns3-tmp"
# Outside the manifests directory: the kubelet runs every file in it.
saved="$etc/kube-scheduler.yaml.kubeadm"
config_dir="$etc/kns-3"
# The node's files before an install, put back if it fails.
previous="$etc/kns-3.previous"
# kube-scheduler's secure port; both schedulers bind it on the node's
# loopback (hostNetwork).
ready_url=https://127.0.0.1:10259/readyz
label=app.kubernetes.io/name=kns-3-scheduler
# The lease kubeadm's kube-scheduler and KNS-3's share, read with the
# schedulers' own kubeconfig.
lease=kube-system/kube-scheduler
kubeconfig="$etc/scheduler.conf"
# The manifest's annotation placeholder, quoted or not (sigs.k8s.io/yaml
# drops the quotes when it re-renders).
placeholder_re="^([[:space:]]*kns3\\.dev/config-hash:)[[:space:]]*(unset|\"unset\"|'unset')[[:space:]]*\$"
kns3_label_re="^[[:space:]]*app\\.kubernetes\\.io/name:[[:space:]]*[\"']?kns-3-scheduler[\"']?[[:space:]]*\$"

die() { echo "install.sh: $*" >&2; exit 1; }
usage="usage: install.sh MANIFEST CONFIG SCENARIO [PROBEKEY] | --uninstall"
# The simulator's user in the static pod, which reads the probe key.
simulator_uid=${KNS3_SIMULATOR_UID:-65532}

# put FILE: FILE's content becomes the kubelet's kube-scheduler manifest at
# once.
put() { cp "$1" "$tmp" && chmod 0600 "$tmp" && mv "$tmp" "$current"; }

is_kns3() { grep -Eq "$kns3_label_re" "$1"; }

if [ "${1:-}" = --uninstall ]; then
  [ $# -eq 1 ] || die "$usage"
  [ -f "$saved" ] || die "$saved not found: kubeadm's kube-scheduler was not saved here"
  trap 'rm -f "$tmp"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  put "$saved"
  rm -f "$saved"
  rm -rf "$config_dir" "$previous"
  echo "install.sh: kubeadm's kube-scheduler restored ($current); the kubelet restarts it within seconds"
  exit 0
fi

[ $# -eq 3 ] || [ $# -eq 4 ] || die "$usage"
manifest=$1 config=$2 scenario=$3 key=${4:-}
for f in "$manifest" "$config" "$scenario" $key; do
  [ -f "$f" ] || die "$f: no such file"
done
if grep -q -- '--probe-key-file=' "$manifest"; then
  [ -n "$key" ] || die "$manifest's simulator signs its probes: give the probe key's file as the fourth argument (deploy/live/probe-key.sh --out FILE writes the key the agents hold)"
  [ "$(wc -c <"$key")" -ge 16 ] || die "$key: a probe key of fewer than 16 bytes"
elif [ -n "$key" ]; then
  die "$manifest's simulator does not probe: it takes no probe key"
fi

# Everything is checked before the first change: a refused install leaves
# the node as it was.
render_hint="render it with \`kubectl kustomize deploy/control-plane > kube-scheduler.yaml\`"
images=$(sed -n 's/^[[:space:]]*\(-[[:space:]]\{1,\}\)\{0,1\}image:[[:space:]]*//p' "$manifest" |
  sed 's/[[:space:]]*#.*$//' | tr -d "\"'")
[ -n "$images" ] || die "$manifest names no image: not a rendered kube-scheduler.yaml; $render_hint"
for image in $images; do
  case ${image##*/} in
  *:* | *@*) ;;
  *) die "$manifest is not rendered: image $image has no tag; $render_hint" ;;
  esac
done
is_kns3 "$manifest" || die "$manifest is not kns-3-scheduler's static pod (no label $label)"
n=$(grep -Ec "$placeholder_re" "$manifest" || true)
[ "$n" = 1 ] || die "$manifest has $n annotations kns3.dev/config-hash: \"unset\", want 1: $render_hint from this install.sh's kube-scheduler.yaml"

case $ready_timeout in
'' | *[!0-9]*) die "KNS3_READY_TIMEOUT=$ready_timeout: want whole seconds" ;;
esac
case $ready_interval in
'' | *[!0-9.]*) die "KNS3_READY_INTERVAL=$ready_interval: want seconds" ;;
esac

command -v sha256sum >/dev/null 2>&1 || die "sha256sum not found"
command -v crictl >/dev/null 2>&1 ||
  die "crictl not found: it checks the node holds the images and finds the new pod (kubeadm nodes have it, from cri-tools)"
if command -v curl >/dev/null 2>&1; then
  probe() { curl -fsSk --max-time 2 "$ready_url"; }
elif command -v wget >/dev/null 2>&1; then
  probe() { wget --no-check-certificate -q -T 2 -O - "$ready_url"; }
else
  die "neither curl nor wget found: one is needed to wait for the new scheduler's $ready_url"
fi

for image in $images; do
  if ! err=$(crictl inspecti "$image" 2>&1 >/dev/null); then
    die "image $image is not in the node's container runtime (crictl inspecti $image: ${err:-not found}). Load it first: on kind, \`kind load docker-image $image\` or \`kind load image-archive ARCHIVE\`; on a kubeadm node, \`ctr -n k8s.io images import ARCHIVE\`, or \`crictl pull $image\` from a registry the node reaches"
  fi
done

[ -f "$current" ] || die "$current not found: is this a control-plane node?"
if is_kns3 "$current"; then
  # A re-install: kubeadm's manifest must have been saved by the first.
  [ -f "$saved" ] || die "$current is already kns-3-scheduler's and $saved is missing: kubeadm's kube-scheduler manifest is gone. Regenerate it with \`kubeadm init phase control-plane scheduler\` (with the cluster's kubeadm configuration, --config), which writes $current, then run install.sh again"
  back="the previous kns-3-scheduler"
else
  back="kubeadm's kube-scheduler"
fi

# The pod's annotation: the kubelet restarts a static pod only when its
# manifest changes, so a new configuration or scenario must change it; and
# it tells the new pod from the one it replaces.
hash=$(for f in "$manifest" "$config" "$scenario" $key; do sha256sum <"$f"; done | sha256sum | cut -d' ' -f1)
case $hash in
'' | *[!0-9a-f]*) die "sha256sum gave $hash" ;;
esac

# rollback puts back the files saved in $previous: the configuration first,
# the manifest last, so that the kubelet restarts the previous pod on its
# own configuration.
had_config_dir=
[ ! -d "$config_dir" ] || had_config_dir=1
rollback() {
  failed=0
  for f in scheduler-config.yaml scenario.yaml; do
    if [ -f "$previous/$f" ]; then
      install -m 0644 "$previous/$f" "$config_dir/$f" || failed=1
    else
      rm -f "$config_dir/$f" || failed=1
    fi
  done
  if [ -f "$previous/probe-key" ]; then
    cp -p "$previous/probe-key" "$config_dir/probe-key" || failed=1
  else
    rm -f "$config_dir/probe-key" || failed=1
  fi
  if [ -z "$had_config_dir" ]; then
    rm -rf "$config_dir" || failed=1
  fi
  if [ -f "$previous/saved" ]; then
    cp "$previous/saved" "$saved" || failed=1
  else
    rm -f "$saved" || failed=1
  fi
  put "$previous/kube-scheduler.yaml" || failed=1
  return "$failed"
}

# Once the node's files change, any failure or interruption before the new
# scheduler is ready puts the previous one back.
changing=
on_exit() {
  rc=$?
  if [ -n "$changing" ]; then
    if rollback; then
      rm -rf "$previous"
      echo "install.sh: $back is back ($current)" >&2
    else
      echo "install.sh: putting $back back failed: the previous files are in $previous" >&2
    fi
    [ "$rc" -ne 0 ] || rc=1
  else
    rm -rf "$previous"
  fi
  rm -f "$tmp"
  exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

rm -rf "$previous"
mkdir -m 0700 "$previous"
cp "$current" "$previous/kube-scheduler.yaml"
if [ -f "$saved" ]; then
  cp "$saved" "$previous/saved"
fi
for f in scheduler-config.yaml scenario.yaml probe-key; do
  if [ -f "$config_dir/$f" ]; then
    cp -p "$config_dir/$f" "$previous/$f"
  fi
done
changing=1

if ! is_kns3 "$current"; then
  # Not KNS-3's, so kubeadm's (possibly rewritten since an earlier install,
  # by kubeadm upgrade): the one --uninstall puts back.
  cp "$current" "$saved"
fi
mkdir -p "$config_dir"
install -m 0644 "$config" "$config_dir/scheduler-config.yaml"
install -m 0644 "$scenario" "$config_dir/scenario.yaml"
if [ -n "$key" ]; then
  install -m 0400 "$key" "$config_dir/probe-key"
  chown "$simulator_uid" "$config_dir/probe-key"
else
  rm -f "$config_dir/probe-key"
fi
# Each control-plane node runs a prober: each takes its share of the budget.
probers=
if grep -Eq -- '--probers=[0-9]+' "$manifest"; then
  if command -v kubectl >/dev/null 2>&1 &&
    out=$(kubectl --kubeconfig "$kubeconfig" get nodes -l node-role.kubernetes.io/control-plane -o name 2>&1); then
    probers=$(printf '%s\n' "$out" | grep -c '^node/' || true)
  else
    echo "install.sh: could not count the control-plane nodes (${out:-kubectl not found}): the simulator keeps the manifest's --probers" >&2
  fi
  case $probers in
  '' | 0) probers= ;;
  *) echo "install.sh: $probers control-plane nodes probe the agents, each with 1/$probers of the probing budget" ;;
  esac
fi
(
  umask 077
  if [ -n "$probers" ]; then
    sed -E -e "s#$placeholder_re#\\1 \"$hash\"#" -e "s#--probers=[0-9]+#--probers=$probers#" "$manifest" >"$tmp"
  else
    sed -E "s#$placeholder_re#\\1 \"$hash\"#" "$manifest" >"$tmp"
  fi
)
grep -q "kns3.dev/config-hash: \"$hash\"" "$tmp" || die "stamping the hash into $manifest failed"
mv "$tmp" "$current"

# ready: a ready sandbox of a kns-3-scheduler pod with this install's hash,
# and readyz answering. readyz alone is no proof: the old scheduler answers
# on the same port until the kubelet stops it; the kubelet starts the new
# static pod only once the old one, of the same name, is gone.
readyz_err="not probed"
pod_err="not looked up"
ready() {
  ok=1
  out=$(probe 2>&1) && rc=0 || rc=$?
  if [ "$rc" = 0 ]; then
    readyz_err=
  else
    readyz_err="${out:-exit status $rc}"
    ok=0
  fi
  if ! pods=$(crictl pods --namespace kube-system --label "$label" --state ready -q 2>&1); then
    pod_err="crictl pods: $pods"
    return 1
  fi
  pod_err="no ready $label pod with kns3.dev/config-hash $hash"
  for pod in $pods; do
    if crictl inspectp "$pod" 2>/dev/null | grep -q "$hash"; then
      pod_err=
      break
    fi
  done
  [ "$ok" = 1 ] && [ -z "$pod_err" ]
}

echo "install.sh: waiting up to ${ready_timeout}s for kns-3-scheduler ($ready_url)"
deadline=$(($(date +%s) + ready_timeout))
until ready; do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "install.sh: kns-3-scheduler did not become ready in ${ready_timeout}s" >&2
    echo "  readyz: ${readyz_err:-200 OK}" >&2
    echo "  pod: ${pod_err:-ready}" >&2
    echo "  see \`crictl ps -a\` (containers kns-3-scheduler and simulator) and \`crictl logs CONTAINER\`" >&2
    exit 1
  fi
  sleep "$ready_interval"
done

changing=
rm -rf "$previous"
echo "install.sh: kns-3-scheduler is the control plane's scheduler ($current; kubeadm's saved as $saved)"

# Who leads: the holder is "<hostname>_<id>", and a node's scheduler is
# the mirror pod kube-scheduler-<node>, KNS-3's when it wears KNS-3's label.
every_node="run install.sh on every control-plane node before creating KNS-3 pods: while a kubeadm kube-scheduler leads, they stay Pending with no event"
if ! command -v kubectl >/dev/null 2>&1; then
  echo "install.sh: kubectl not found: cannot tell who holds the lease $lease; $every_node" >&2
elif ! holder=$(kubectl --kubeconfig "$kubeconfig" -n kube-system get lease kube-scheduler -o 'jsonpath={.spec.holderIdentity}' 2>&1); then
  echo "install.sh: could not read the lease $lease ($holder); $every_node" >&2
else
  node=${holder%%_*}
  app=$(kubectl --kubeconfig "$kubeconfig" -n kube-system get pod "kube-scheduler-$node" -o 'jsonpath={.metadata.labels.app\.kubernetes\.io/name}' 2>/dev/null || true)
  if [ "$app" = kns-3-scheduler ]; then
    echo "install.sh: the lease $lease is held by $holder (node $node's kns-3-scheduler)"
  else
    echo "install.sh: warning: the lease $lease is held by ${holder:-nobody}, not a KNS-3 scheduler; $every_node" >&2
  fi
fi
