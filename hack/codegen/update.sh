#!/usr/bin/env bash
# Regenerates the deepcopy, conversion and defaulting code of the plugins'
# args types (scheduler/apis/config and scheduler/apis/config/v1), and the
# deepcopy code of kubectl kns3's output types
# (kubectl-kns3/pkg/apis/output/v1alpha1), with k8s.io/code-generator at
# the version go.mod pins.
#
#   hack/codegen/update.sh           rewrites the zz_generated.*.go files
#   hack/codegen/update.sh --verify  regenerates them in a scratch copy and
#                                     fails when the checked-in files differ
set -euo pipefail
cd "$(dirname "$0")/../.."

verify=false
case "${1:-}" in
  "") ;;
  --verify) verify=true ;;
  *) echo "usage: $0 [--verify]" >&2; exit 2 ;;
esac

api_dir=scheduler/apis/config
output_dir=kubectl-kns3/pkg/apis/output/v1alpha1
module=$(go list -m)
internal_pkg="$module/$api_dir"
v1_pkg="$module/$api_dir/v1"
output_pkg="$module/$output_dir"

# The version go.mod pins (its replace directive, else its requirement), so
# every checkout generates the same code.
version=$(awk '$1 == "k8s.io/code-generator" && $2 == "=>" { print $4; exit }' go.mod)
version=${version:-$(awk '$1 == "k8s.io/code-generator" && $2 ~ /^v/ { print $2; exit }' go.mod)}
if [ -z "$version" ]; then
  echo "codegen: go.mod does not pin k8s.io/code-generator" >&2
  exit 1
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
GOBIN="$scratch/bin" go install \
  "k8s.io/code-generator/cmd/deepcopy-gen@$version" \
  "k8s.io/code-generator/cmd/conversion-gen@$version" \
  "k8s.io/code-generator/cmd/defaulter-gen@$version"

# Verification generates into a copy of the module's API packages, so the
# working tree is never touched.
work=.
if $verify; then
  work="$scratch/module"
  mkdir -p "$work/$(dirname "$api_dir")" "$work/$(dirname "$output_dir")"
  cp go.mod go.sum "$work/"
  cp -R "$api_dir" "$work/$api_dir"
  cp -R "$output_dir" "$work/$output_dir"
fi

(
  cd "$work"
  # Generate from the hand-written sources only, as a fresh checkout would.
  find "$api_dir" "$output_dir" -name 'zz_generated.*.go' -delete
  header=/dev/null
  "$scratch/bin/deepcopy-gen" --go-header-file "$header" \
    --output-file zz_generated.deepcopy.go "$internal_pkg" "$v1_pkg" "$output_pkg"
  "$scratch/bin/conversion-gen" --go-header-file "$header" \
    --output-file zz_generated.conversion.go "$v1_pkg"
  "$scratch/bin/defaulter-gen" --go-header-file "$header" \
    --output-file zz_generated.defaults.go "$v1_pkg"
)

if $verify; then
  if ! diff -ru "$api_dir" "$work/$api_dir" || ! diff -ru "$output_dir" "$work/$output_dir"; then
    echo "codegen: generated files are stale: run hack/codegen/update.sh" >&2
    exit 1
  fi
  echo "codegen: generated files are up to date"
fi
