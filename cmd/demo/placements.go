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

	"kns3.dev/kns3/installclient"
	"kns3.dev/kns3/internal/conditions"
	"kns3.dev/kns3/scheduler/apis/config"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/scheduler/plugins/score"
)

type podPlacement struct {
	pod, qos, node, reason string
	score                  *float64
	nodeLabels             string
}

// statusTimeout bounds the wait for the scheduler's published status.
const statusTimeout = 30 * time.Second

// waitPlacements waits until want pods exist in ns and are bound (or the
// timeout passes), then pairs each with its node's simulator score.
func waitPlacements(ctx context.Context, client kubernetes.Interface, ns string, want int, timeout time.Duration) ([]podPlacement, error) {
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
	scores, err := simulatorScores(ctx, client)
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
		for _, k := range []string{placement.LabelScheduler, placement.LabelCapability, v1.LabelTopologyZone} {
			if v, ok := n.Labels[k]; ok {
				l = append(l, k+"="+v)
			}
		}
		labels[n.Name] = strings.Join(l, ",")
	}
	var out []podPlacement
	for i := range pods {
		p := &pods[i]
		pl := podPlacement{pod: p.Name, qos: p.Annotations[placement.AnnotationQoS], node: p.Spec.NodeName}
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

// simulatorScores are every node's score in the newest simulation of the
// kns-3-scheduler profile, as its scheduler publishes it (within a few
// seconds of the cycles that placed the sample).
func simulatorScores(ctx context.Context, client kubernetes.Interface) (map[string]float64, error) {
	scores := map[string]float64{}
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, statusTimeout, true, func(ctx context.Context) (bool, error) {
		in, err := installclient.Find(ctx, client)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		doc, ok := in.Profile(config.ProfileName)
		if !ok || doc.Simulator.Simulation == nil {
			last = "profile " + config.ProfileName + " has published no simulation yet"
			return false, nil
		}
		for node, milli := range doc.Simulator.Simulation.MilliScores {
			scores[node] = score.Float(milli)
		}
		return true, nil
	})
	if err != nil {
		// The table still shows where the pods went.
		fmt.Fprintf(os.Stderr, "demo: no simulator scores (%s)\n", last)
	}
	return scores, nil
}

func printPlacements(w io.Writer, ps []podPlacement) {
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
