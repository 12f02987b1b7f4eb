// Command demo runs KNS-3 on a local kind cluster: it brings the cluster up
// as the kind suite does (kindenv.Steps: build what is missing, create the
// cluster from deploy/kind/cluster.yaml, deploy deploy/live, deploy/ with a
// probe agent on every node, with its sample scenario, or with
// -install=replace make kns-3-scheduler the control plane's scheduler from
// deploy/control-plane), schedules deploy/sample, prints where each pod
// went with the simulator's score for its node, and `kubectl kns3 explain`
// of one of them. On deploy/live it then shapes one worker's link for real,
// prints every node's measured latency, bandwidth and loss, schedules new
// pods, which avoid the worker, and explains one of them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"kns3.dev/kns3/internal/kindenv"
)

// defaultName is the demo's cluster.
const defaultName = "kns-3"

// liveOverlay is the kustomization the second-scheduler demo deploys:
// deploy/ with a probe agent on every node.
const liveOverlay = "live"

func main() {
	cl := &kindenv.Cluster{Log: os.Stderr, LogPrefix: "demo"}
	flag.StringVar(&cl.Name, "name", defaultName, "kind cluster name (an existing cluster of this name is replaced)")
	flag.StringVar(&cl.Inputs.Root, "root", ".", "repository root")
	flag.StringVar(&cl.Inputs.NodeImage, "node-image", os.Getenv("KNS3_NODE_IMAGE"), "kind node image (default: built by internal/kindnode; a stock kindest/node works where a registry is reachable)")
	install := flag.String("install", string(kindenv.SecondScheduler),
		"how KNS-3 runs: second-scheduler (deploy/, beside the cluster's kube-scheduler) or replace (deploy/control-plane, the control plane's only scheduler)")
	remove := flag.Bool("delete", false, "delete the demo's cluster, thawing what a stuck pod froze, and exit")
	flag.Parse()
	if *remove {
		if err := deleteCluster(context.Background(), cl); err != nil {
			fmt.Fprintf(os.Stderr, "demo: %v\n", err)
			os.Exit(1)
		}
		return
	}
	var err error
	if cl.Install, err = kindenv.ParseInstallMode(*install); err != nil {
		fmt.Fprintf(os.Stderr, "demo: -install: %v\n", err)
		os.Exit(2)
	}
	// The second-scheduler install with the probe agents: the sample
	// scenario's pins first, then the live measurements.
	if cl.Install != kindenv.ReplaceScheduler {
		cl.Overlay = liveOverlay
	}
	if err := run(context.Background(), cl); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cl *kindenv.Cluster) error {
	if err := cl.Up(ctx); err != nil {
		return err
	}
	if err := cl.Run(ctx, kindenv.Step{Name: "schedule the sample workload (deploy/sample)", Run: applySample}); err != nil {
		return err
	}
	placements, err := waitPlacements(ctx, cl.Client, kindenv.SampleNamespace, kindenv.SamplePods, 2*time.Minute)
	if err != nil {
		return err
	}
	printPlacements(os.Stdout, placements)
	if err := explainOne(ctx, cl, placements, os.Stdout); err != nil {
		return fmt.Errorf("kubectl kns3 explain: %w", err)
	}
	if cl.Overlay == liveOverlay {
		if err := cl.Run(ctx, kindenv.Step{Name: "show the live network picture", Run: func(ctx context.Context, cl *kindenv.Cluster) error {
			return showLive(ctx, cl, os.Stdout)
		}}); err != nil {
			return err
		}
	}
	fmt.Printf("\nkubectl --kubeconfig %s get pods -n %s -o wide\n", cl.Kubeconfig, kindenv.SampleNamespace)
	fmt.Printf("make build && PATH=$PWD/_output/bin:$PATH kubectl kns3 status --kubeconfig %s\n", cl.Kubeconfig)
	deleteCmd := "make demo-delete"
	if cl.Name != defaultName {
		deleteCmd = "go run ./cmd/demo -delete -name " + cl.Name
	}
	fmt.Printf("%s    # when done: deletes the cluster, thawing what a stuck pod froze\n", deleteCmd)
	return nil
}

// deleteCluster deletes the demo's cluster as the kind suite deletes its
// own (kindenv.DeleteCluster): on hosts where a pod's cgroup stays frozen,
// `kind delete cluster` fails on that node's container; the frozen
// cgroups are thawed, and the deletion tried again.
func deleteCluster(ctx context.Context, cl *kindenv.Cluster) error {
	if err := cl.Inputs.ResolveKind(ctx, os.Stderr); err != nil {
		return err
	}
	return cl.Run(ctx, kindenv.Step{Name: "delete cluster " + cl.Name, Run: func(ctx context.Context, c *kindenv.Cluster) error {
		return c.Delete(ctx)
	}})
}

func applySample(ctx context.Context, cl *kindenv.Cluster) error {
	return kindenv.Apply(ctx, cl.Config, filepath.Join(cl.Inputs.Root, "deploy", "sample"))
}
