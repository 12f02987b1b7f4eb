// Package nodeimage builds a kind node image for the Kubernetes release
// go.mod requires, on a machine without a container registry: a Debian root
// file system from the host's apt mirror, Kubernetes and its companions
// compiled from the Go module proxy, and every image kubeadm needs preloaded
// into the node's containerd.
//
// The image is tagged with a hash of everything it is built from, so an
// unchanged recipe is found in Docker and never rebuilt.
package nodeimage

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"kns3.dev/kns3"
)

// KubernetesVersion is the release the node runs: the k8s.io/kubernetes
// version go.mod requires, which the node's programs module
// (internal/kindnode/modules/kubernetes) must require too.
var KubernetesVersion = kns3.KubernetesVersion

const (
	// Repository is the Docker repository node images are tagged in.
	Repository = "kns-3-node"
	// debianSuite is the Debian release of the node's root file system.
	debianSuite = "bookworm"
	// recipeVersion changes whenever this package changes what it builds
	// in a way the hashed inputs do not show.
	recipeVersion = "1"
)

// Options says where the build reads and keeps things.
type Options struct {
	// ModulesDir holds the Go modules the node's programs are built from
	// (internal/kindnode/modules in this repository).
	ModulesDir string
	// KindDir is the sigs.k8s.io/kind module, whose images/base/files are
	// the node's systemd units, entrypoint and configuration.
	KindDir string
	// CacheDir keeps the Debian root file system and build outputs between
	// runs. Default: $KNS3_CACHE_DIR or ~/.cache/kns-3, under "kindnode".
	CacheDir string
	// Progress receives one line per stage. Default: os.Stderr.
	Progress io.Writer
	// Rebuild builds even when an image with the same inputs exists.
	Rebuild bool
}

func (o *Options) complete() error {
	if o.ModulesDir == "" {
		return fmt.Errorf("nodeimage: ModulesDir is required")
	}
	if o.KindDir == "" {
		return fmt.Errorf("nodeimage: KindDir is required")
	}
	if o.CacheDir == "" {
		dir, err := DefaultCacheDir()
		if err != nil {
			return err
		}
		o.CacheDir = filepath.Join(dir, "kindnode")
	}
	if o.Progress == nil {
		o.Progress = os.Stderr
	}
	return nil
}

// DefaultCacheDir is $KNS3_CACHE_DIR, else ~/.cache/kns-3, where the home
// directory comes from the user database: test runners often point $HOME at
// a scratch directory, and the cache must outlive them.
func DefaultCacheDir() (string, error) {
	if dir := os.Getenv("KNS3_CACHE_DIR"); dir != "" {
		return dir, nil
	}
	home, err := homeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".cache", "kns-3"), nil
}

// KindVersion is the sigs.k8s.io/kind release whose base files the node
// uses: the one go.mod requires, which the kind command is built from.
var KindVersion = kns3.KindVersion

// KindModuleDir downloads (or finds in the module cache) the kind module.
func KindModuleDir() (string, error) {
	goBin, err := goTool()
	if err != nil {
		return "", err
	}
	env, err := goEnv(goBin, "GOFLAGS=-mod=mod")
	if err != nil {
		return "", err
	}
	out, err := output(os.TempDir(), env, goBin, "mod", "download", "-json", "sigs.k8s.io/kind@"+KindVersion)
	if err != nil {
		return "", err
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal([]byte(out), &mod); err != nil {
		return "", fmt.Errorf("go mod download: %w", err)
	}
	if mod.Dir == "" {
		return "", fmt.Errorf("go mod download sigs.k8s.io/kind@%s: %s", KindVersion, mod.Error)
	}
	return mod.Dir, nil
}
