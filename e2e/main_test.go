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
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/e2e-framework/pkg/env"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/envfuncs"
	"sigs.k8s.io/e2e-framework/support"

	"kns3.dev/kns3/internal/kindenv"
)

// clusterName differs from the demo's cluster, so the suite never reuses
// (nor deletes) a cluster a user brought up.
const clusterName = "kns-3-e2e"

var (
	kindCluster = &kindenv.Cluster{Name: clusterName, Log: os.Stderr, LogPrefix: "e2e"}
	testenv     env.Environment
)

func init() {
	in := &kindCluster.Inputs
	flag.StringVar(&in.Root, "kns3.root", "..", "repository root (deploy/, internal/kindnode/modules)")
	flag.StringVar(&in.Kind, "kns3.kind", "", "kind command (default: built from go.mod's version)")
	flag.StringVar(&in.NodeImage, "kns3.node-image", os.Getenv("KNS3_NODE_IMAGE"), "kind node image (default: built by internal/kindnode; $KNS3_NODE_IMAGE)")
	flag.StringVar(&in.SchedulerArchive, "kns3.scheduler-archive", "", "kns-3-scheduler image tarball (default: built)")
	flag.StringVar(&in.SimulatorArchive, "kns3.simulator-archive", "", "kns-3-simulator image tarball (default: built)")
	flag.StringVar(&in.NetbenchArchive, "kns3.netbench-archive", "", "kns-3-netbench image tarball, the value benchmark's workload (default: built)")
}

func TestMain(m *testing.M) {
	cfg, err := envconf.NewFromFlags()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	testenv = env.NewWithConfig(cfg)
	// The bring-up the demo runs, step by step.
	var setup []env.Func
	for _, step := range kindenv.Steps(kindenv.SecondScheduler) {
		setup = append(setup, setupStep(step))
	}
	testenv.Setup(setup...)
	// The live install stays from one live test to the next.
	testenv.BeforeEachTest(leaveLive)
	testenv.AfterEachTest(func(ctx context.Context, cfg *envconf.Config, t *testing.T) (context.Context, error) {
		if t.Failed() {
			exportLogs(ctx, cfg, t.Name())
		}
		return ctx, nil
	})
	// Finish runs after a failed Setup too. The cluster is deleted by
	// kindenv, not by the provider's Destroy: a node that will not die is
	// thawed and deleted again (see kindenv.DeleteCluster).
	testenv.Finish(func(ctx context.Context, _ *envconf.Config) (context.Context, error) {
		err := kindCluster.Run(ctx, kindenv.Step{Name: "delete cluster", Run: func(ctx context.Context, c *kindenv.Cluster) error {
			return c.Delete(ctx)
		}})
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		}
		return ctx, err
	})
	os.Exit(testenv.Run(m))
}

// setupStep runs one bring-up step as an environment Setup function. Once
// the cluster exists, the environment's client uses its kubeconfig and the
// context carries its provider, for envfuncs.ExportClusterLogs.
func setupStep(step kindenv.Step) env.Func {
	return func(ctx context.Context, cfg *envconf.Config) (context.Context, error) {
		err := kindCluster.Run(ctx, step)
		if kindCluster.Provider != nil && ctx.Value(support.ClusterNameContextKey(clusterName)) == nil {
			cfg.WithKubeconfigFile(kindCluster.Kubeconfig)
			ctx = context.WithValue(ctx, support.ClusterNameContextKey(clusterName), kindCluster.Provider)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			exportLogs(ctx, cfg, "setup")
		}
		return ctx, err
	}
}

// exportLogs exports the cluster's logs where the test runner keeps outputs
// (Bazel: the test's undeclared outputs), else under the temp directory.
func exportLogs(ctx context.Context, cfg *envconf.Config, label string) {
	if kindCluster.Provider == nil {
		return // no cluster yet
	}
	base := os.Getenv("TEST_UNDECLARED_OUTPUTS_DIR")
	if base == "" {
		base = filepath.Join(os.TempDir(), "kns-3-e2e-logs")
	}
	dest := filepath.Join(base, filepath.Base(label)+"-"+time.Now().Format("150405"))
	if _, err := envfuncs.ExportClusterLogs(clusterName, dest)(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: exporting cluster logs failed: %v\n", err)
		return
	}
	fmt.Fprintf(os.Stderr, "e2e: cluster logs exported to %s\n", dest)
}
