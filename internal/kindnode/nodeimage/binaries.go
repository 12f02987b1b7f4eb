package nodeimage

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// programs are built from the module in ModulesDir/<module>; the output is
// named after the last path element.
var programs = map[string][]string{
	"kubernetes": {
		"k8s.io/kubernetes/cmd/kube-apiserver",
		"k8s.io/kubernetes/cmd/kube-controller-manager",
		"k8s.io/kubernetes/cmd/kube-scheduler",
		"k8s.io/kubernetes/cmd/kube-proxy",
		"k8s.io/kubernetes/cmd/kubeadm",
		"k8s.io/kubernetes/cmd/kubelet",
		"k8s.io/kubernetes/cmd/kubectl",
		"sigs.k8s.io/cri-tools/cmd/crictl",
		"./cmd/etcd",
		"./cmd/pause",
		"./cmd/kns3-cni",
	},
	"coredns": {"."},
}

// versionFlags stamp the release version into both version packages: kubeadm
// compares them and refuses a development version.
func versionFlags(version string) string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	var flags []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags = append(flags,
			"-X", pkg+".gitVersion="+version,
			"-X", pkg+".gitMajor="+major,
			"-X", pkg+".gitMinor="+minor,
			"-X", pkg+".gitTreeState=clean",
			"-X", pkg+".buildDate=1970-01-01T00:00:00Z")
	}
	return "-s -w " + strings.Join(flags, " ")
}

// coldBuild is how long each module's programs took to compile here with an
// empty Go build cache (Kubernetes 197-252 s, CoreDNS 51-69 s).
var coldBuild = map[string]string{"kubernetes": "about 4 minutes", "coredns": "about a minute"}

// buildPrograms compiles every program statically into dir/bin. The Go build
// cache makes an unchanged rebuild take seconds. There is no -trimpath: with
// the same flags as the repository's own go commands (cgo off, paths kept),
// the packages compiled here serve KNS-3's builds, go vet and the benchmarks
// too.
func (b *builder) buildPrograms(dir string) (string, error) {
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", err
	}
	env, err := goEnv(b.goBin, "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	if err != nil {
		return "", err
	}
	for _, module := range []string{"kubernetes", "coredns"} {
		src := filepath.Join(dir, "src", module)
		if err := copyTree(filepath.Join(b.opts.ModulesDir, module), src); err != nil {
			return "", err
		}
		out := bin + string(filepath.Separator)
		if module == "coredns" {
			out = filepath.Join(bin, "coredns")
		}
		b.progress("programs: go build %d from %s (cold: %s on 2 cores; cached: under a minute)", len(programs[module]), module, coldBuild[module])
		args := append([]string{"build", "-ldflags", versionFlags(KubernetesVersion), "-o", out}, programs[module]...)
		if err := run(src, env, b.goBin, args...); err != nil {
			return "", fmt.Errorf("building the node's programs: %w", err)
		}
	}
	b.progress("programs: built")
	return bin, nil
}

// copyTree copies the regular files under src to dst, following symlinks
// (Bazel's runfiles are symlinks).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if filepath.Base(p) == "BUILD.bazel" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
