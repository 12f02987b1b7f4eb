package nodeimage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"golang.org/x/sync/errgroup"

	"kns3.dev/kns3/build/image/reproducible"
)

type builder struct {
	opts  Options
	goBin string
	start time.Time
	mu    sync.Mutex // progress lines come from two stages at once
}

func (b *builder) progress(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintf(b.opts.Progress, "kindnode [%5.1fs] %s\n", time.Since(b.start).Seconds(), fmt.Sprintf(format, args...))
}

// Name returns the image name the current inputs give, without building.
func Name(opts Options) (string, error) {
	b, err := newBuilder(opts)
	if err != nil {
		return "", err
	}
	return b.name()
}

// Build makes the node image unless Docker already has one built from the
// same inputs, and returns its name.
func Build(ctx context.Context, opts Options) (string, error) {
	b, err := newBuilder(opts)
	if err != nil {
		return "", err
	}
	if err := checkPrerequisites(); err != nil {
		return "", err
	}
	tag, err := b.name()
	if err != nil {
		return "", err
	}
	if !b.opts.Rebuild && exec.CommandContext(ctx, "docker", "image", "inspect", tag).Run() == nil {
		b.progress("%s is up to date", tag)
		return tag, nil
	}
	b.progress("building %s", tag)
	if err := b.build(tag); err != nil {
		return "", fmt.Errorf("building node image %s: %w", tag, err)
	}
	b.progress("loaded %s into Docker", tag)
	return tag, nil
}

func newBuilder(opts Options) (*builder, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	goBin, err := goTool()
	if err != nil {
		return nil, err
	}
	return &builder{opts: opts, goBin: goBin, start: time.Now()}, nil
}

func (b *builder) name() (string, error) {
	env, err := goEnv(b.goBin)
	if err != nil {
		return "", err
	}
	goVersion, err := output("", env, b.goBin, "env", "GOVERSION")
	if err != nil {
		return "", err
	}
	sum, err := inputsHash(&b.opts, strings.TrimSpace(goVersion))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s:%s-%s", Repository, KubernetesVersion, sum[:12]), nil
}

func (b *builder) build(tag string) error {
	if err := os.MkdirAll(b.opts.CacheDir, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp(b.opts.CacheDir, "work-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	// debootstrap waits mostly on the apt mirror and the disk, the compiler
	// on the CPU: side by side, a cold build takes the longer of the two.
	var rootfs, bin string
	var g errgroup.Group
	g.Go(func() (err error) {
		rootfs, err = b.baseRootFS()
		return err
	})
	g.Go(func() (err error) {
		bin, err = b.buildPrograms(work)
		return err
	})
	if err := g.Wait(); err != nil {
		return err
	}
	imagesTar, sandbox, err := b.componentImages(work, bin, rootfs)
	if err != nil {
		return err
	}
	store := filepath.Join(work, "store")
	if err := b.preload(imagesTar, filepath.Join(store, "var", "lib", "containerd")); err != nil {
		return err
	}
	storeTar := filepath.Join(work, "store.tar")
	if err := tarDir(store, storeTar); err != nil {
		return err
	}
	entries, err := b.overlay(bin, sandbox)
	if err != nil {
		return err
	}
	overlayTar := filepath.Join(work, "overlay.tar")
	if err := writeLayer(overlayTar, entries); err != nil {
		return err
	}
	b.progress("node image: assembling root file system, node files and image store")
	img, err := nodeImage(rootfs, overlayTar, storeTar)
	if err != nil {
		return err
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return err
	}
	nodeTar := filepath.Join(work, "node.tar")
	if err := tarball.WriteToFile(nodeTar, ref, img); err != nil {
		return fmt.Errorf("writing %s: %w", nodeTar, err)
	}
	b.progress("node image: docker load")
	return run("", nil, "docker", "load", "-i", nodeTar)
}

// nodeImage is kind's node image layout: systemd as PID 1 behind kind's
// entrypoint, stopped with the signal systemd shuts down on.
func nodeImage(layerPaths ...string) (v1.Image, error) {
	var layers []v1.Layer
	for _, p := range layerPaths {
		l, err := layerFromFile(p)
		if err != nil {
			return nil, err
		}
		layers = append(layers, l)
	}
	return reproducible.Image(layers, func(c *v1.Config) {
		c.Entrypoint = []string{"/usr/local/bin/entrypoint", "/sbin/init"}
		c.StopSignal = "SIGRTMIN+3"
		c.Env = []string{"container=docker", systemPath}
		c.Labels = map[string]string{"org.opencontainers.image.version": KubernetesVersion}
	})
}
