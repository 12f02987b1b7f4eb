package kns3

import (
	_ "embed"
	"fmt"

	"golang.org/x/mod/modfile"
)

// goMod is the repository's go.mod: the one place the Kubernetes and kind
// releases KNS-3 builds on are written down.
//
//go:embed go.mod
var goMod []byte

var (
	// KubernetesVersion is the k8s.io/kubernetes release go.mod requires:
	// the kube-scheduler KNS-3 extends and the Kubernetes the kind node
	// image runs.
	KubernetesVersion = requiredVersion("k8s.io/kubernetes")
	// KindVersion is the sigs.k8s.io/kind release go.mod requires: the kind
	// command and the base files of the kind node image.
	KindVersion = requiredVersion("sigs.k8s.io/kind")
)

// ModuleVersion returns the version of module path that the go.mod file
// data selects: its replacement's version when a replace directive names
// one, else the required version.
func ModuleVersion(data []byte, path string) (string, error) {
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return "", err
	}
	version := ""
	for _, r := range f.Require {
		if r.Mod.Path == path {
			version = r.Mod.Version
		}
	}
	if version == "" {
		return "", fmt.Errorf("go.mod requires no %s", path)
	}
	for _, r := range f.Replace {
		if r.Old.Path == path && (r.Old.Version == "" || r.Old.Version == version) && r.New.Version != "" {
			version = r.New.Version
		}
	}
	return version, nil
}

// requiredVersion is path's version in go.mod, "" if go.mod names none
// (which the package's tests reject rather than every binary failing at
// start).
func requiredVersion(path string) string {
	v, _ := ModuleVersion(goMod, path)
	return v
}
