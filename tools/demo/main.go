// Command demo runs KNS-3 on a local kind cluster: it builds what is
// missing, creates the cluster (deploy/kind/cluster.yaml), deploys deploy/
// with its sample scenario, schedules deploy/sample and prints where each
// pod went with the simulator's score for its node.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"kns3.dev/kns3/tools/kindenv"
)

func main() {
	var in kindenv.Inputs
	name := flag.String("name", "kns-3", "kind cluster name (an existing cluster of this name is replaced)")
	flag.StringVar(&in.Root, "root", ".", "repository root")
	flag.StringVar(&in.NodeImage, "node-image", os.Getenv("KNS3_NODE_IMAGE"), "kind node image (default: built by tools/kindnode; a stock kindest/node works where a registry is reachable)")
	flag.Parse()
	if err := run(context.Background(), &in, *name); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, in *kindenv.Inputs, name string) error {
	start := time.Now()
	step := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "demo [%5.0fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	if err := in.Resolve(ctx, os.Stderr); err != nil {
		return err
	}
	kubeconfig := filepath.Join(os.TempDir(), "kns-3-"+name+".kubeconfig")
	kind := func(args ...string) error {
		cmd := exec.CommandContext(ctx, in.Kind, args...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("kind %v: %w", args, err)
		}
		return nil
	}
	step("creating kind cluster %q from %s", name, in.NodeImage)
	if err := kindenv.DeleteCluster(ctx, in.Kind, name); err != nil {
		return fmt.Errorf("removing the previous %q cluster: %w", name, err)
	}
	if err := kind("create", "cluster", "--name", name, "--image", in.NodeImage,
		"--config", filepath.Join(in.Root, "deploy", "kind", "cluster.yaml"),
		"--kubeconfig", kubeconfig, "--wait", "3m"); err != nil {
		return err
	}
	for _, archive := range []string{in.SchedulerArchive, in.SimulatorArchive} {
		if err := kind("load", "image-archive", archive, "--name", name); err != nil {
			return err
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := kindenv.WaitForNodesReady(ctx, client, 3*time.Minute); err != nil {
		return err
	}
	step("deploying KNS-3 (deploy/)")
	if err := kindenv.Apply(ctx, cfg, filepath.Join(in.Root, "deploy")); err != nil {
		return err
	}
	if _, err := kindenv.WaitForScheduler(ctx, client, 3*time.Minute); err != nil {
		return err
	}
	step("scheduling the sample workload (deploy/sample)")
	if err := kindenv.Apply(ctx, cfg, filepath.Join(in.Root, "deploy", "sample")); err != nil {
		return err
	}
	placements, err := waitPlacements(ctx, cfg, client, kindenv.SampleNamespace, kindenv.SamplePods, 2*time.Minute)
	if err != nil {
		return err
	}
	printPlacements(os.Stdout, placements)
	fmt.Printf("\nkubectl --kubeconfig %s get pods -n %s -o wide\n", kubeconfig, kindenv.SampleNamespace)
	fmt.Printf("%s delete cluster --name %s    # when done\n", in.Kind, name)
	step("done")
	return nil
}
