package kindenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/e2e-framework/support/kind"
)

// Bring-up timeouts: kind returns once the control plane answers, the
// workers and the KNS-3 pod come after.
const (
	nodesReadyTimeout = 3 * time.Minute
	schedulerTimeout  = 3 * time.Minute
)

// Cluster is a KNS-3 kind cluster and the state of its bring-up. The demo
// and the kind suite fill in the first fields and run Steps; each step
// fills in what later ones use.
type Cluster struct {
	// Name is the kind cluster's name.
	Name string
	// Inputs are what the cluster is made from; the first step resolves
	// (builds) what is missing.
	Inputs Inputs
	// Install is how KNS-3 runs on the cluster; empty: SecondScheduler.
	Install InstallMode
	// Overlay is the kustomization under deploy/ the second-scheduler
	// install applies ("live": deploy/live); empty: deploy/ itself.
	Overlay string
	// Kubeconfig is the file the cluster's kubeconfig is written to; empty:
	// kns-3-<name>.kubeconfig in the temp directory. The user's default
	// kubeconfig is left alone.
	Kubeconfig string
	// Log receives a line as each step starts and ends (nil: os.Stderr),
	// prefixed with LogPrefix.
	Log       io.Writer
	LogPrefix string

	// Provider is e2e-framework's kind provider for the cluster, once
	// created: it loads images and exports logs.
	Provider *kind.Cluster
	// Config and Client reach the cluster's API server, once created.
	Config *rest.Config
	Client kubernetes.Interface

	start time.Time
}

// Step is one named action of the bring-up.
type Step struct {
	Name string
	Run  func(ctx context.Context, c *Cluster) error
}

// Steps is the bring-up for an install mode, in order: each step needs the
// ones before it.
func Steps(mode InstallMode) []Step {
	steps := []Step{
		{"resolve inputs", resolveInputs},
		{"delete stale cluster", deleteStale},
		{"create cluster", createCluster},
		{"load images", loadImages},
		{"wait for nodes ready", waitNodesReady},
	}
	if mode == ReplaceScheduler {
		return append(steps,
			Step{"replace the control plane's kube-scheduler", replaceScheduler},
			Step{"wait for the scheduler pod", waitReplacedScheduler})
	}
	return append(steps,
		Step{"deploy KNS-3", deployKNS3},
		Step{"wait for the scheduler pod", waitScheduler})
}

// Up runs Steps in order and stops at the first that fails.
func (c *Cluster) Up(ctx context.Context) error {
	for _, s := range Steps(c.Install) {
		if err := c.Run(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// Run runs one step, logging its start and how long it took.
func (c *Cluster) Run(ctx context.Context, s Step) error {
	if c.start.IsZero() {
		c.start = time.Now()
	}
	start := time.Now()
	c.logf("%s", s.Name)
	if err := s.Run(ctx, c); err != nil {
		c.logf("%s: failed after %.1fs", s.Name, time.Since(start).Seconds())
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	c.logf("%s: done in %.1fs", s.Name, time.Since(start).Seconds())
	return nil
}

// Delete deletes the cluster (see DeleteCluster) and its kubeconfig file.
func (c *Cluster) Delete(ctx context.Context) error {
	if err := DeleteCluster(ctx, c.Inputs.Kind, c.Name); err != nil {
		return err
	}
	if err := os.Remove(c.kubeconfig()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (c *Cluster) logf(format string, args ...any) {
	w := c.Log
	if w == nil {
		w = os.Stderr
	}
	prefix := c.LogPrefix
	if prefix == "" {
		prefix = "kindenv"
	}
	fmt.Fprintf(w, "%s [%5.0fs] %s\n", prefix, time.Since(c.start).Seconds(), fmt.Sprintf(format, args...))
}

func (c *Cluster) kubeconfig() string {
	if c.Kubeconfig == "" {
		c.Kubeconfig = filepath.Join(os.TempDir(), "kns-3-"+c.Name+".kubeconfig")
	}
	return c.Kubeconfig
}

func resolveInputs(ctx context.Context, c *Cluster) error {
	log := c.Log
	if log == nil {
		log = os.Stderr
	}
	if err := c.Inputs.Resolve(ctx, log); err != nil {
		return err
	}
	c.logf("node image %s", c.Inputs.NodeImage)
	return nil
}

// deleteStale deletes a cluster of the same name: one left by an
// interrupted run would otherwise be reused as it is.
func deleteStale(ctx context.Context, c *Cluster) error {
	return c.Delete(ctx)
}

// createCluster creates the cluster from deploy/kind/cluster.yaml with the
// node image, through e2e-framework's kind provider.
func createCluster(ctx context.Context, c *Cluster) error {
	p := kind.NewCluster(c.Name)
	p.WithPath(c.Inputs.Kind)
	p.WithOpts(kind.WithImage(c.Inputs.NodeImage))
	// The provider also writes the kubeconfig to a temp file of its own, for
	// its clients; c.Kubeconfig is the one kept.
	own, err := p.Create(ctx,
		"--config", filepath.Join(c.Inputs.Root, "deploy", "kind", "cluster.yaml"),
		"--kubeconfig", c.kubeconfig())
	if own != "" {
		_ = os.Remove(own)
	}
	if err != nil {
		return err
	}
	c.Provider = p
	if c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		return err
	}
	c.Client, err = kubernetes.NewForConfig(c.Config)
	return err
}

// loadImages loads the KNS-3 image archives onto every node, and the value
// benchmark's workload.
func loadImages(ctx context.Context, c *Cluster) error {
	for _, archive := range []string{c.Inputs.SchedulerArchive, c.Inputs.SimulatorArchive, c.Inputs.NetbenchArchive} {
		if err := c.Provider.LoadImageArchive(ctx, archive); err != nil {
			return err
		}
	}
	return nil
}

func waitNodesReady(ctx context.Context, c *Cluster) error {
	return WaitForNodesReady(ctx, c.Client, nodesReadyTimeout)
}

func deployKNS3(ctx context.Context, c *Cluster) error {
	return Apply(ctx, c.Config, filepath.Join(c.Inputs.Root, "deploy", c.Overlay))
}

func waitScheduler(ctx context.Context, c *Cluster) error {
	start := time.Now()
	_, err := waitForScheduler(ctx, c.Client, schedulerTimeout, func(why string) {
		c.logf("  waiting %.0fs: %s", time.Since(start).Seconds(), why)
	})
	return err
}
