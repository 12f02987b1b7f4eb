package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	kns3cmd "kns3.dev/kns3/kubectl-kns3/pkg/cmd"
	"kns3.dev/kns3/test/conditions"
	"kns3.dev/kns3/tools/kindenv"
)

// explainFirst prints `kubectl kns3 explain` for the first bound pod of
// the sample, once its placement event is recorded, so the demo ends with
// why the pods went where they did.
func explainFirst(ctx context.Context, cl *kindenv.Cluster, placements []placement, w io.Writer) error {
	pod := ""
	for _, p := range placements {
		if p.node != "" {
			pod = p.pod
			break
		}
	}
	if pod == "" {
		return nil
	}
	ns := kindenv.SampleNamespace
	// The recorder writes events after the binding, asynchronously.
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true,
		conditions.PlacementRecorded(cl.Client, ns, pod)); err != nil {
		fmt.Fprintf(os.Stderr, "demo: no placement event for %s/%s yet: %v\n", ns, pod, err)
	}
	fmt.Fprintf(w, "\nWhy %s went where it did (kubectl kns3 explain %s -n %s):\n\n", pod, pod, ns)
	cmd := kns3cmd.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: w, ErrOut: os.Stderr})
	cmd.SetArgs([]string{"explain", pod, "-n", ns, "--kubeconfig", cl.Kubeconfig})
	return cmd.ExecuteContext(ctx)
}
