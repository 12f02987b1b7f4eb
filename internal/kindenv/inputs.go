// Package kindenv brings KNS-3 up on a kind cluster and talks to the running
// scheduler pod. The bring-up is one ordered list of named steps (Steps):
// find or build what the cluster needs (the kind command, the node image,
// the KNS-3 images), replace a stale cluster, create the cluster, load the
// images, wait for the nodes, deploy deploy/ and wait for the scheduler pod.
// The demo runs the list (Cluster.Up); the kind suite runs the same list as
// its e2e-framework Setup.
package kindenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"kns3.dev/kns3/internal/kindnode/nodeimage"
)

// Inputs are the files and images a cluster is made from. Empty fields are
// built by Resolve; Bazel passes its own outputs instead.
type Inputs struct {
	// Root is the repository root (or Bazel's runfiles tree of it).
	Root string
	// Kind is the kind command, built from the version go.mod pins.
	Kind string
	// NodeImage is the kind node image's name.
	NodeImage string
	// SchedulerArchive and SimulatorArchive are the KNS-3 image tarballs.
	SchedulerArchive, SimulatorArchive string
	// NetbenchArchive is the value benchmark's workload image tarball.
	NetbenchArchive string
}

// Resolve fills every empty field, building what is missing. Progress lines
// go to w.
func (in *Inputs) Resolve(ctx context.Context, w io.Writer) error {
	root, err := filepath.Abs(in.Root)
	if err != nil {
		return err
	}
	in.Root = root
	// Given paths are relative to the root, as Bazel's $(rootpath) are.
	for _, p := range []*string{&in.Kind, &in.SchedulerArchive, &in.SimulatorArchive, &in.NetbenchArchive} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(root, *p)
		}
	}
	if err := ensurePath(); err != nil {
		return err
	}
	cache, err := nodeimage.DefaultCacheDir()
	if err != nil {
		return err
	}
	out := filepath.Join(cache, "kindenv")
	if err := in.resolveKind(ctx, out, w); err != nil {
		return err
	}
	for _, img := range []struct {
		archive *string
		name    string
		pkg     string
	}{
		{&in.SchedulerArchive, "kns-3-scheduler", "./scheduler/cmd/kns-3-scheduler"},
		{&in.SimulatorArchive, "kns-3-simulator", "./simulator/cmd/simulator"},
		{&in.NetbenchArchive, "kns-3-netbench", "./test/netbench/cmd/netbench"},
	} {
		if *img.archive != "" {
			continue
		}
		fmt.Fprintf(w, "kindenv: building the %s image\n", img.name)
		bin := filepath.Join(out, img.name)
		if err := goBuild(ctx, root, bin, img.pkg); err != nil {
			return err
		}
		*img.archive = filepath.Join(out, img.name+".tar")
		if err := goRun(ctx, root, "./build/image", "--binary", bin, "--name", img.name,
			"--version-file", filepath.Join(root, "VERSION"), "--output", *img.archive); err != nil {
			return err
		}
	}
	if in.NodeImage == "" {
		kindDir, err := nodeimage.KindModuleDir()
		if err != nil {
			return err
		}
		in.NodeImage, err = nodeimage.Build(ctx, nodeimage.Options{
			ModulesDir: filepath.Join(root, "internal", "kindnode", "modules"),
			KindDir:    kindDir,
			Progress:   w,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ResolveKind fills Kind alone, building the kind command at the version
// go.mod pins when it is empty: all that deleting a cluster needs.
func (in *Inputs) ResolveKind(ctx context.Context, w io.Writer) error {
	root, err := filepath.Abs(in.Root)
	if err != nil {
		return err
	}
	in.Root = root
	if in.Kind != "" && !filepath.IsAbs(in.Kind) {
		in.Kind = filepath.Join(root, in.Kind)
	}
	if err := ensurePath(); err != nil {
		return err
	}
	cache, err := nodeimage.DefaultCacheDir()
	if err != nil {
		return err
	}
	return in.resolveKind(ctx, filepath.Join(cache, "kindenv"), w)
}

func (in *Inputs) resolveKind(ctx context.Context, out string, w io.Writer) error {
	if in.Kind != "" {
		return nil
	}
	fmt.Fprintln(w, "kindenv: building the kind command from go.mod's version")
	in.Kind = filepath.Join(out, "kind")
	return goBuild(ctx, in.Root, in.Kind, "sigs.k8s.io/kind")
}

// ensurePath adds the system directories kind, docker and the node image
// build need to this process's PATH: test runners start with a minimal one.
func ensurePath() error {
	path := os.Getenv("PATH")
	have := map[string]bool{}
	for _, d := range filepath.SplitList(path) {
		have[d] = true
	}
	for _, d := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/go/bin"} {
		if !have[d] {
			path += string(filepath.ListSeparator) + d
		}
	}
	if err := os.Setenv("PATH", path); err != nil {
		return fmt.Errorf("adding the system directories to PATH: %w", err)
	}
	return nil
}

// goBuild builds a static program with the Makefile's flags (cgo off, no
// -trimpath), so that go vet and the benchmarks reuse what it compiled.
func goBuild(ctx context.Context, root, out, pkg string) error {
	return goCmd(ctx, root, []string{"CGO_ENABLED=0"}, "build", "-o", out, pkg)
}

func goRun(ctx context.Context, root string, args ...string) error {
	return goCmd(ctx, root, nil, append([]string{"run"}, args...)...)
}

func goCmd(ctx context.Context, dir string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}
