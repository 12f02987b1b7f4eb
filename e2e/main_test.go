//go:build e2e

// Package e2e runs KNS-3 on a kind cluster: a control plane and three
// labeled workers (deploy/kind/cluster.yaml), the KNS-3 images loaded from
// archives, deploy/ applied, and pods for the kns-3-scheduler profile.
//
//	go test -tags e2e ./e2e/...        # or: bazel test //e2e:kind_test
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/e2e-framework/pkg/env"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/envfuncs"
	"sigs.k8s.io/e2e-framework/support/kind"

	"kns3.dev/kns3/tools/kindenv"
)

// clusterName differs from the demo's cluster, so the suite never reuses
// (nor deletes) a cluster a user brought up.
const clusterName = "kns-3-e2e"

var (
	inputs  kindenv.Inputs
	testenv env.Environment
)

func init() {
	flag.StringVar(&inputs.Root, "kns3.root", "..", "repository root (deploy/, tools/kindnode/modules)")
	flag.StringVar(&inputs.Kind, "kns3.kind", "", "kind command (default: built from go.mod's version)")
	flag.StringVar(&inputs.NodeImage, "kns3.node-image", os.Getenv("KNS3_NODE_IMAGE"), "kind node image (default: built by tools/kindnode; $KNS3_NODE_IMAGE)")
	flag.StringVar(&inputs.SchedulerArchive, "kns3.scheduler-archive", "", "kns-3-scheduler image tarball (default: built)")
	flag.StringVar(&inputs.SimulatorArchive, "kns3.simulator-archive", "", "kns-3-simulator image tarball (default: built)")
}

func TestMain(m *testing.M) {
	cfg, err := envconf.NewFromFlags()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	start := time.Now()
	if err := inputs.Resolve(ctx, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: preparing the cluster's inputs: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "e2e: inputs ready in %.0fs: node image %s\n", time.Since(start).Seconds(), inputs.NodeImage)

	// A cluster left by an interrupted run would be reused silently by the
	// framework: start clean.
	deleteCluster()
	testenv = env.NewWithConfig(cfg)
	testenv.Setup(
		timed("create cluster", envfuncs.CreateClusterWithConfig(kind.NewProvider(), clusterName,
			filepath.Join(inputs.Root, "deploy", "kind", "cluster.yaml"),
			kind.WithImage(inputs.NodeImage), kind.WithPath(inputs.Kind))),
		timed("load images", envfuncs.LoadImageArchiveToCluster(clusterName, inputs.SchedulerArchive)),
		envfuncs.LoadImageArchiveToCluster(clusterName, inputs.SimulatorArchive),
		timed("deploy KNS-3", deploy),
	)
	testenv.AfterEachTest(func(ctx context.Context, cfg *envconf.Config, t *testing.T) (context.Context, error) {
		if t.Failed() {
			exportLogs(ctx, t.Name())
		}
		return ctx, nil
	})
	code := testenv.Run(m)
	// Not in Finish, which is skipped when Setup fails, and whose kind
	// delete gives up on a node that will not die (see DeleteCluster).
	deleteCluster()
	os.Exit(code)
}

// deploy applies deploy/ and waits for the scheduler pod to be ready.
func deploy(ctx context.Context, cfg *envconf.Config) (context.Context, error) {
	if err := kindenv.Apply(ctx, cfg.Client().RESTConfig(), filepath.Join(inputs.Root, "deploy")); err != nil {
		exportLogs(ctx, "setup")
		return ctx, err
	}
	client, err := kubernetes.NewForConfig(cfg.Client().RESTConfig())
	if err != nil {
		return ctx, err
	}
	if err := kindenv.WaitForNodesReady(ctx, client, 3*time.Minute); err != nil {
		exportLogs(ctx, "setup")
		return ctx, err
	}
	if _, err := kindenv.WaitForScheduler(ctx, client, 3*time.Minute); err != nil {
		exportLogs(ctx, "setup")
		return ctx, err
	}
	return ctx, nil
}

func timed(what string, f env.Func) env.Func {
	return func(ctx context.Context, cfg *envconf.Config) (context.Context, error) {
		start := time.Now()
		ctx, err := f(ctx, cfg)
		fmt.Fprintf(os.Stderr, "e2e: %s: %.1fs\n", what, time.Since(start).Seconds())
		return ctx, err
	}
}

// exportLogs writes `kind export logs` where the test runner keeps outputs
// (Bazel: the test's undeclared outputs), else under the temp directory.
func exportLogs(ctx context.Context, label string) {
	base := os.Getenv("TEST_UNDECLARED_OUTPUTS_DIR")
	if base == "" {
		base = filepath.Join(os.TempDir(), "kns-3-e2e-logs")
	}
	dest := filepath.Join(base, filepath.Base(label)+"-"+time.Now().Format("150405"))
	out, err := exec.CommandContext(ctx, inputs.Kind, "export", "logs", dest, "--name", clusterName).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: exporting cluster logs failed: %v\n%s", err, out)
		return
	}
	fmt.Fprintf(os.Stderr, "e2e: cluster logs exported to %s\n", dest)
}

func deleteCluster() {
	if err := kindenv.DeleteCluster(context.Background(), inputs.Kind, clusterName); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
	}
}
