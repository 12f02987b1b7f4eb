package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
	"kns3.dev/kns3/tools/kindenv"
)

type placement struct {
	pod, qos, node, reason string
	score                  *float64
	nodeLabels             string
}

// waitPlacements waits until want pods exist in ns and are bound (or the
// timeout passes), then pairs each with its node's simulator score.
func waitPlacements(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, ns string, want int, timeout time.Duration) ([]placement, error) {
	var pods []v1.Pod
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		pods = list.Items
		if len(pods) < want {
			return false, nil
		}
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				return false, nil
			}
		}
		return true, nil
	})
	// A pod still pending at the deadline is shown with the scheduler's reason.
	if err != nil && len(pods) < want {
		return nil, fmt.Errorf("waiting for %d pods in %s: %d exist: %w", want, ns, len(pods), err)
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
			pl.reason = unschedulableReason(p)
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

func unschedulableReason(p *v1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
			return c.Message
		}
	}
	return ""
}

// simulatorScores asks the simulator in the KNS-3 pod, through a
// port-forward to its loopback address, for every node's score.
func simulatorScores(ctx context.Context, cfg *rest.Config, client kubernetes.Interface) (map[string]float64, error) {
	pod, err := kindenv.SchedulerPod(ctx, client)
	if err != nil {
		return nil, err
	}
	port, stop, err := kindenv.Forward(cfg, client, kindenv.Namespace, pod.Name, 80)
	if err != nil {
		return nil, err
	}
	defer close(stop)
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/simulate", port))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Results map[string]struct {
			Score *float64 `json:"score"`
		} `json:"results"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&body); err != nil {
		return nil, fmt.Errorf("decoding /simulate: %w", err)
	}
	scores := map[string]float64{}
	for node, r := range body.Results {
		if r.Score != nil {
			scores[node] = *r.Score
		}
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
