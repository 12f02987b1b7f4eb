package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"kns3.dev/kns3/internal/conditions"
	"kns3.dev/kns3/internal/kindenv"
	kns3cmd "kns3.dev/kns3/kubectl-kns3/pkg/cmd"
	"kns3.dev/kns3/scheduler/plugins/placement"
)

// explainOne prints `kubectl kns3 explain` for one bound pod of the
// sample, so the demo ends with why the pods went where they did: the
// first whose placement the simulator's scores decided (the cache pods
// after the first follow it by pod affinity, with no choice to score), or
// else the first bound one.
func explainOne(ctx context.Context, cl *kindenv.Cluster, placements []podPlacement, w io.Writer) error {
	ns := kindenv.SampleNamespace
	pod := ""
	for _, p := range placements {
		if p.node == "" {
			continue
		}
		// The recorder writes events after the binding, asynchronously.
		if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true,
			conditions.PlacementRecorded(cl.Client, ns, p.pod)); err != nil {
			fmt.Fprintf(os.Stderr, "demo: no placement event for %s/%s: %v\n", ns, p.pod, err)
			continue
		}
		if pod == "" {
			pod = p.pod
		}
		events, err := conditions.PlacementEvents(ctx, cl.Client, ns, p.pod)
		if err == nil && len(events) > 0 && strings.HasPrefix(events[0].Message, placement.NetworkAwarePrefix) {
			pod = p.pod
			break
		}
	}
	if pod == "" {
		return nil
	}
	return explain(ctx, cl, pod, w)
}

// explainPod prints `kubectl kns3 explain` for pod of the sample's
// namespace once its placement event is recorded.
func explainPod(ctx context.Context, cl *kindenv.Cluster, pod string, w io.Writer) error {
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true,
		conditions.PlacementRecorded(cl.Client, kindenv.SampleNamespace, pod)); err != nil {
		fmt.Fprintf(os.Stderr, "demo: no placement event for %s/%s: %v\n", kindenv.SampleNamespace, pod, err)
	}
	return explain(ctx, cl, pod, w)
}

func explain(ctx context.Context, cl *kindenv.Cluster, pod string, w io.Writer) error {
	ns := kindenv.SampleNamespace
	fmt.Fprintf(w, "\nWhy %s went where it did (kubectl kns3 explain %s -n %s):\n\n", pod, pod, ns)
	cmd := kns3cmd.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: w, ErrOut: os.Stderr})
	cmd.SetArgs([]string{"explain", pod, "-n", ns, "--kubeconfig", cl.Kubeconfig})
	return cmd.ExecuteContext(ctx)
}
