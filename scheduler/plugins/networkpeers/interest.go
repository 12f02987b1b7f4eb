package networkpeers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	"kns3.dev/kns3/scheduler/plugins/network"
	"kns3.dev/kns3/scheduler/plugins/peers"
)

// interestPath is the simulator's endpoint for the nodes whose pairs
// matter.
const interestPath = "/pairs/interest"

// maxInterestNodes is the most nodes the simulator takes in one interest.
const maxInterestNodes = 5000

// interestTimeout bounds one PUT: the simulator is on loopback.
const interestTimeout = 5 * time.Second

// interest tells the simulator, once a window, which nodes host pods that
// other pods declare as peers: pods waiting for the profile, or placed
// within the last FreshWindows windows (their peers may still come). The
// simulator then measures the pairs between those nodes and their nearest
// candidates directly, and keeps them measured while the interest lasts
// (three windows unless renewed). It runs off the scheduling cycle, in a
// loop of its own, and reads the pods from the scheduler's informer.
type interest struct {
	url, shownURL string
	client        *http.Client
	pods          corelisters.PodLister
	// profile is the scheduler name whose pending pods count.
	profile string
	// read is the plugin's reading of a pod's declaration, without events.
	read func(*v1.Pod) (*peers.Declaration, error)
	now  func() time.Time
	// newest is the newest simulation the profile took: its pairs' window
	// paces the loop. wake says a new one came.
	newest atomic.Pointer[network.Simulation]
	wake   chan struct{}

	// sent is what the last successful PUT named; failing says the last
	// PUT failed, so that a failure is logged once, not every window.
	sent    []string
	failing bool
}

func newInterest(simulatorURL, profile string, pods corelisters.PodLister, read func(*v1.Pod) (*peers.Declaration, error)) (*interest, error) {
	u, err := url.Parse(strings.TrimSuffix(simulatorURL, "/") + interestPath)
	if err != nil {
		return nil, fmt.Errorf("simulatorURL %q: %w", simulatorURL, err)
	}
	return &interest{
		url: u.String(), shownURL: u.Redacted(), profile: profile, pods: pods, read: read, now: time.Now,
		wake: make(chan struct{}, 1),
		client: &http.Client{Timeout: interestTimeout, Transport: &http.Transport{
			// The simulator is co-located: never route it through an HTTP
			// proxy taken from the environment.
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: interestTimeout}).DialContext,
			MaxIdleConnsPerHost: 1,
		}},
	}, nil
}

// heard keeps sim, the newest simulation, and wakes run; it never blocks
// the goroutine that asked, and leaves reading sim's pairs to run.
func (in *interest) heard(sim *network.Simulation) {
	in.newest.Store(sim)
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// window is the newest answer's pairs window, DefaultPairsWindow before
// one has pairs.
func (in *interest) window() time.Duration {
	if sim := in.newest.Load(); sim != nil {
		if p := sim.Pairs(); p != nil {
			return p.Window
		}
	}
	return network.DefaultPairsWindow
}

// run tells the simulator once a window until ctx ends. Until an answer
// has pairs the window is DefaultPairsWindow; an answer whose window
// differs restarts the wait at its own.
func (in *interest) run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("plugin", Name)
	period := in.window()
	timer := time.NewTimer(period)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-in.wake:
			if w := in.window(); w != period {
				period = w
				timer.Reset(period)
			}
			continue
		case <-timer.C:
		}
		in.tell(ctx, logger)
		period = in.window()
		timer.Reset(period)
	}
}

// tell sends the nodes of interest, unless there are none now and none
// were sent last: a cluster whose pods declare no peers sends nothing.
func (in *interest) tell(ctx context.Context, logger klog.Logger) {
	nodes := in.nodes()
	if len(nodes) == 0 && len(in.sent) == 0 && !in.failing {
		return
	}
	err := in.put(ctx, nodes)
	switch {
	case err != nil && !in.failing:
		logger.Info("Could not tell the simulator which pairs of nodes to measure; trying again every window, logged again when it works",
			"url", in.shownURL, "err", err)
		in.failing = true
	case err == nil && in.failing:
		logger.Info("Told the simulator which pairs of nodes to measure again", "url", in.shownURL, "nodes", len(nodes))
		in.failing = false
	}
	if err == nil {
		logger.V(4).Info("Told the simulator which pairs of nodes to measure", "nodes", len(nodes))
		in.sent = nodes
	}
}

// nodes are the nodes that host peers of a pod waiting for the profile or
// placed within the last FreshWindows windows, sorted, at most
// maxInterestNodes.
func (in *interest) nodes() []string {
	pods, err := in.pods.List(labels.Everything())
	if err != nil {
		return nil
	}
	since := in.now().Add(-network.FreshWindows * in.window())
	byNamespace := map[string][]*v1.Pod{}
	for _, p := range pods {
		byNamespace[p.Namespace] = append(byNamespace[p.Namespace], p)
	}
	set := map[string]bool{}
	for _, p := range pods {
		if !peers.Declares(p) || !in.placing(p, since) {
			continue
		}
		d, err := in.read(p)
		if err != nil || d == nil {
			continue
		}
		for _, peer := range byNamespace[p.Namespace] {
			if peer.Spec.NodeName != "" && peer.UID != p.UID && d.Matches(peer) {
				set[peer.Spec.NodeName] = true
			}
		}
	}
	nodes := make([]string, 0, len(set))
	for n := range set {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	return nodes[:min(len(nodes), maxInterestNodes)]
}

// placing reports whether p waits for the profile, or was placed since.
func (in *interest) placing(p *v1.Pod, since time.Time) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	if p.Spec.NodeName == "" {
		return p.Spec.SchedulerName == in.profile
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionTrue {
			return c.LastTransitionTime.After(since)
		}
	}
	return false
}

// put PUTs nodes to the simulator; an answer other than 2xx is an error
// with the start of its body.
func (in *interest) put(ctx context.Context, nodes []string) error {
	body, err := json.Marshal(struct {
		Nodes []string `json:"nodes"`
	}{Nodes: nodes})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, in.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := in.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	detail, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(detail))
	}
	return nil
}

// close releases the client's connections.
func (in *interest) close() { in.client.CloseIdleConnections() }
