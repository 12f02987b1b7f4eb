//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kns3.dev/kns3/internal/conditions"
	"kns3.dev/kns3/test/netbench"
	"kns3.dev/kns3/test/perf/value"
)

// runClients runs clients netbench clients of server (their flag naming
// it) placed by scheduler, held to the two shaped workers, and sums up what
// they measured.
func (v *valueRun) runClients(ctx context.Context, name, scheduler, server string, clients int, pin []string) (value.Placement, []clientPod) {
	v.t.Helper()
	// The burst is created without client-side throttling: a client
	// created seconds after the first would be placed on a link the
	// others' traffic already changed.
	cfg := rest.CopyConfig(v.cfg)
	cfg.QPS, cfg.Burst = 100, 100
	burst, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		v.t.Fatal(err)
	}
	label := strings.NewReplacer(" ", "-", ",", "").Replace(strings.ToLower(name))
	// The clients wait for each other at the server, so that the load
	// level is the one they put on the links together: pods of one burst
	// start seconds apart on a small host.
	barrier := fmt.Sprintf("%s-%d", label, time.Now().UnixNano())
	var names []string
	for i := range clients {
		pod := netbenchPod(fmt.Sprintf("client-%s-%d", label, i), scheduler, []string{"client", server,
			"--duration=" + valueDuration.String(), fmt.Sprintf("--object-bytes=%d", clientObjectBytes),
			fmt.Sprintf("--objects-per-second=%d", clientObjectsPerSecond), "--ping-interval=" + clientPingInterval.String(),
			"--barrier=" + barrier, fmt.Sprintf("--barrier-size=%d", clients)})
		pod.Labels["placement"] = label
		pod.Annotations = map[string]string{"kubernetes.io/ingress-bandwidth": fmt.Sprintf("%gM", clientMbps)}
		pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{
				Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{v.rigorous, v.plain}}}}}}}}
		if pin != nil {
			pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values = []string{pin[i]}
		}
		if _, err := burst.CoreV1().Pods(v.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			v.t.Fatal(err)
		}
		names = append(names, pod.Name)
	}
	p := value.Placement{Name: name, Nodes: map[string]int{}}
	var pods []clientPod
	for _, n := range names {
		var pod *v1.Pod
		if err := wait.PollUntilContextTimeout(ctx, time.Second, *valueDuration+2*waitTimeout, true, func(ctx context.Context) (bool, error) {
			got, err := v.client.CoreV1().Pods(v.ns).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			pod = got
			return got.Status.Phase == v1.PodSucceeded || got.Status.Phase == v1.PodFailed, nil
		}); err != nil || pod.Status.Phase != v1.PodSucceeded {
			v.t.Fatalf("client %s did not succeed (%v): %v", n, pod.Status.Phase, err)
		}
		raw, err := v.client.CoreV1().Pods(v.ns).GetLogs(n, &v1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			v.t.Fatal(err)
		}
		var r netbench.Result
		sc := bufio.NewScanner(strings.NewReader(string(raw)))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			_ = json.Unmarshal(sc.Bytes(), &r)
		}
		if r.Node == "" {
			v.t.Fatalf("client %s printed no result: %.200s", n, raw)
		}
		p.Nodes[pod.Spec.NodeName]++
		p.Results = append(p.Results, r)
		pods = append(pods, v.placedClient(pod))
	}
	v.deleteAll(ctx, "placement="+label)
	p.Summarise()
	return p, pods
}

// clientPod is a finished client: where and when it was placed.
type clientPod struct {
	name, node string
	uid        types.UID
	scheduled  time.Time
}

// clientPlacement is the client's placement event. Each trial's clients
// reuse the names of the trial before, so the event is the one for this
// pod's UID.
func (v *valueRun) clientPlacement(pod clientPod) string {
	v.t.Helper()
	var note string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		events, err := conditions.PlacementEvents(ctx, v.client, v.ns, pod.name)
		if err != nil {
			return false, nil
		}
		for _, e := range events {
			if e.InvolvedObject.UID == pod.uid {
				note = e.Message
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		v.t.Fatalf("client %s (uid %s) has no placement event: %v", pod.name, pod.uid, err)
	}
	return note
}

// placedClient reads a succeeded client's node and placement time (to the
// second) from its status.
func (v *valueRun) placedClient(pod *v1.Pod) clientPod {
	v.t.Helper()
	cp := clientPod{name: pod.Name, node: pod.Spec.NodeName, uid: pod.UID}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == v1.PodScheduled && cond.Status == v1.ConditionTrue {
			cp.scheduled = cond.LastTransitionTime.Time
		}
	}
	if cp.scheduled.IsZero() {
		v.t.Fatalf("client %s: no placement time in its status", pod.Name)
	}
	return cp
}

// deleteAll deletes the namespace's pods that selector selects and waits
// until they are gone.
func (c *cluster) deleteAll(ctx context.Context, selector string) {
	c.t.Helper()
	zero := int64(0)
	if err := c.client.CoreV1().Pods(c.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero},
		metav1.ListOptions{LabelSelector: selector}); err != nil {
		c.t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := c.client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		return err == nil && len(list.Items) == 0, nil
	}); err != nil {
		c.t.Fatalf("pods %q of %s still there: %v", selector, c.ns, err)
	}
}
