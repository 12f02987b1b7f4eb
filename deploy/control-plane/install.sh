#!/bin/sh
# Makes kns-3-scheduler the control plane's scheduler on a kubeadm (or kind)
# control-plane node, or puts kubeadm's kube-scheduler back. Run as root on
# every control-plane node; the kubelet swaps the static pods by itself.
#
#   install.sh MANIFEST CONFIG SCENARIO   install (MANIFEST: the rendered
#                                         kube-scheduler.yaml of
#                                         `kubectl kustomize deploy/control-plane`)
#   install.sh --uninstall                restore kubeadm's kube-scheduler
set -eu

manifests=${KNS3_MANIFESTS_DIR:-/etc/kubernetes/manifests}
etc=${KNS3_ETC_DIR:-/etc/kubernetes}
current="$manifests/kube-scheduler.yaml"
# Outside the manifests directory: the kubelet runs every file in it.
saved="$etc/kube-scheduler.yaml.kubeadm"
config_dir="$etc/kns-3"

die() { echo "install.sh: $*" >&2; exit 1; }

if [ "${1:-}" = --uninstall ]; then
  [ -f "$saved" ] || die "$saved not found: kubeadm's kube-scheduler was not saved here"
  cp "$saved" "$current.tmp" && mv "$current.tmp" "$current"
  rm -f "$saved"
  rm -rf "$config_dir"
  echo "install.sh: kubeadm's kube-scheduler restored ($current)"
  exit 0
fi

[ $# -eq 3 ] || die "usage: install.sh MANIFEST CONFIG SCENARIO | --uninstall"
manifest=$1 config=$2 scenario=$3
for f in "$manifest" "$config" "$scenario"; do
  [ -f "$f" ] || die "$f: no such file"
done
[ -f "$current" ] || die "$current not found: is this a control-plane node?"

# Keep kubeadm's manifest once: a second install must not save ours over it.
if [ ! -f "$saved" ]; then
  cp "$current" "$saved"
fi
mkdir -p "$config_dir"
install -m 0644 "$config" "$config_dir/scheduler-config.yaml"
install -m 0644 "$scenario" "$config_dir/scenario.yaml"
# Written beside, then renamed: the kubelet never reads half a manifest.
install -m 0600 "$manifest" "$current.tmp"
mv "$current.tmp" "$current"
echo "install.sh: kns-3-scheduler is the control plane's scheduler ($current; kubeadm's saved as $saved)"
