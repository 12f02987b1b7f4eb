package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kns3.dev/kns3/scheduler/plugins/customfilter"
	"kns3.dev/kns3/test/conditions"
	"kns3.dev/kns3/tools/kindenv"
)

type placement struct {
	pod, qos, node, reason string
	score                  *float64
	nodeLabels             string
}

// simulateTimeout bounds the demo's one request to the simulator.
const simulateTimeout = 10 * time.Second

// waitPlacements waits until want pods exist in ns and are bound (or the
// timeout passes), then pairs each with its node's simulator score.
func waitPlacements(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, ns string, want int, timeout time.Duration) ([]placement, error) {
	waitErr := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, conditions.PodsBound(client, ns, want))
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pods := list.Items
	// A pod still pending at the deadline is shown with the scheduler's reason.
	if waitErr != nil && len(pods) < want {
		return nil, fmt.Errorf("waiting for %d pods in %s: %d exist: %w", want, ns, len(pods), waitErr)
	}
	scores, err := simulatorScores(ctx, cfg, client)
	if err != nil {
		return nil, err
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	for _, n := range nodes.Items {
		var l []string
		for _, k := range []string{customfilter.LabelScheduler, customfilter.LabelCapability, v1.LabelTopologyZone} {
			if v, ok := n.Labels[k]; ok {
				l = append(l, k+"="+v)
			}
		}
		labels[n.Name] = strings.Join(l, ",")
	}
	var out []placement
	for i := range pods {
		p := &pods[i]
		pl := placement{pod: p.Name, qos: p.Annotations[customfilter.AnnotationQoS], node: p.Spec.NodeName}
		if pl.node == "" {
			pl.reason = conditions.UnschedulableMessage(p)
		} else {
			if s, ok := scores[pl.node]; ok {
				pl.score = &s
			}
			pl.nodeLabels = labels[pl.node]
		}
		out = append(out, pl)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pod < out[j].pod })
	return out, nil
}

// simulatorScores asks the simulator in the KNS-3 pod for every node's score.
func simulatorScores(ctx context.Context, cfg *rest.Config, client kubernetes.Interface) (map[string]float64, error) {
	status, resp, err := kindenv.Simulate(ctx, cfg, client, simulateTimeout)
	if err != nil {
		return nil, err
	}
	scores := map[string]float64{}
	if resp == nil {
		// The table still shows where the pods went.
		fmt.Fprintf(os.Stderr, "demo: the simulator answered GET /simulate with status %d: no scores\n", status)
		return scores, nil
	}
	for node, r := range resp.Results {
		scores[node] = r.Score
	}
	return scores, nil
}

func printPlacements(w io.Writer, ps []placement) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tQOS\tNODE\tNODE LABELS\tSIMULATOR SCORE")
	for _, p := range ps {
		qos := p.qos
		if qos == "" {
			qos = "-"
		}
		if p.node == "" {
			fmt.Fprintf(tw, "%s\t%s\t(pending)\t\t%s\n", p.pod, qos, p.reason)
			continue
		}
		score := "-"
		if p.score != nil {
			score = fmt.Sprintf("%.3f", *p.score)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.pod, qos, p.node, p.nodeLabels, score)
	}
	tw.Flush()
}
