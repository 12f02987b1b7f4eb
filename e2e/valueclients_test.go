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
	burst := v.burstClient()
	label := placementLabel(name)
	barrier := clientBarrier(label)
	var names []string
	for i := range clients {
		pod := netbenchClient(fmt.Sprintf("client-%s-%d", label, i), scheduler, server, barrier, clients)
		pod.Labels["placement"] = label
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
	p, pods := v.awaitClients(ctx, name, names)
	v.deleteAll(ctx, "placement="+label)
	p.Summarise()
	return p, pods
}

// burstClient is a client of the cluster without client-side throttling,
// for a burst of clients: a client created seconds after the first would
// be placed on a link the others' traffic already changed.
func (c *cluster) burstClient() kubernetes.Interface {
	c.t.Helper()
	cfg := rest.CopyConfig(c.cfg)
	cfg.QPS, cfg.Burst = 100, 100
	burst, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	return burst
}

// placementLabel is a placement's name as a label value.
func placementLabel(name string) string {
	return strings.NewReplacer(" ", "-", ",", "").Replace(strings.ToLower(name))
}

// clientBarrier names the barrier a placement's clients wait for each
// other at, at the server, so that the load level is the one they put on
// the links together: pods of one burst start seconds apart on a small
// host.
func clientBarrier(label string) string {
	return fmt.Sprintf("%s-%d", label, time.Now().UnixNano())
}

// netbenchClient is a netbench client of server (its flag naming it) for
// scheduler, one of clients waiting at barrier, declaring what it asks
// for in kubernetes.io/ingress-bandwidth.
func netbenchClient(name, scheduler, server, barrier string, clients int) *v1.Pod {
	pod := netbenchPod(name, scheduler, []string{"client", server,
		"--duration=" + valueDuration.String(), fmt.Sprintf("--object-bytes=%d", clientObjectBytes),
		fmt.Sprintf("--objects-per-second=%d", clientObjectsPerSecond), "--ping-interval=" + clientPingInterval.String(),
		"--barrier=" + barrier, fmt.Sprintf("--barrier-size=%d", clients)})
	pod.Annotations = map[string]string{"kubernetes.io/ingress-bandwidth": fmt.Sprintf("%gM", clientMbps)}
	return pod
}

// awaitClients waits until the clients named have finished, each
// successfully, and gathers what they measured as placement name, not yet
// summarised.
func (c *cluster) awaitClients(ctx context.Context, name string, names []string) (value.Placement, []clientPod) {
	c.t.Helper()
	p := value.Placement{Name: name, Nodes: map[string]int{}}
	var pods []clientPod
	for _, n := range names {
		var pod *v1.Pod
		if err := wait.PollUntilContextTimeout(ctx, time.Second, *valueDuration+2*waitTimeout, true, func(ctx context.Context) (bool, error) {
			got, err := c.client.CoreV1().Pods(c.ns).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			pod = got
			return got.Status.Phase == v1.PodSucceeded || got.Status.Phase == v1.PodFailed, nil
		}); err != nil || pod.Status.Phase != v1.PodSucceeded {
			c.t.Fatalf("client %s did not succeed (%v): %v", n, pod.Status.Phase, err)
		}
		raw, err := c.client.CoreV1().Pods(c.ns).GetLogs(n, &v1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			c.t.Fatal(err)
		}
		var r netbench.Result
		sc := bufio.NewScanner(strings.NewReader(string(raw)))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			_ = json.Unmarshal(sc.Bytes(), &r)
		}
		if r.Node == "" {
			c.t.Fatalf("client %s printed no result: %.200s", n, raw)
		}
		p.Nodes[pod.Spec.NodeName]++
		p.Results = append(p.Results, r)
		pods = append(pods, c.placedClient(pod))
	}
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
func (c *cluster) placedClient(pod *v1.Pod) clientPod {
	c.t.Helper()
	cp := clientPod{name: pod.Name, node: pod.Spec.NodeName, uid: pod.UID}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == v1.PodScheduled && cond.Status == v1.ConditionTrue {
			cp.scheduled = cond.LastTransitionTime.Time
		}
	}
	if cp.scheduled.IsZero() {
		c.t.Fatalf("client %s: no placement time in its status", pod.Name)
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
