package customscore

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/kubernetes/test/utils/ktesting"

	"kns3.dev/kns3/scheduler/apis/status"
	"kns3.dev/kns3/scheduler/plugins/capacity"
	"kns3.dev/kns3/scheduler/plugins/customscore/breaker"
	"kns3.dev/kns3/scheduler/plugins/customscore/simclient"
	"kns3.dev/kns3/scheduler/plugins/placement"
	"kns3.dev/kns3/scheduler/plugins/profile"
)

const plainProfile = "kns-3-scheduler"

// The status says what the plugin saw: its counts, its breaker, its
// simulator's last answers and the simulation's own metadata.
func TestStatusSource(t *testing.T) {
	body := `{"results":{"n1":{"score":0.9},"n2":{"score":NaN}},"timestamp":"2026-11-30T10:15:00Z","window_seconds":30,"source":"lab"}`
	srv, _ := countingServer(t, func(i int32, w http.ResponseWriter, _ *http.Request) {
		if i == 2 {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(body))
	})
	pl := newTestPlugin(t, "http://user:pw@"+strings.TrimPrefix(srv.URL, "http://"), "retries: 0\nbreakerFailureThreshold: 10")
	snapshot := pl.statusSource(plainProfile)
	nodes := nodeInfos("n1", "n2")
	scoreCycle(t, pl, nodes) // answered
	scoreCycle(t, pl, nodes) // 503
	doc := snapshot()
	want := status.ProfileStatus{
		Profile:       plainProfile,
		RefreshMode:   "PerCycle",
		Normalization: "MinMax",
		Breaker:       status.BreakerClosed,
		ScoredCycles:  1,
		Fallbacks:     map[string]int64{placement.FallbackSimulatorFailed: 1},
	}
	if diff := cmp.Diff(want, doc, cmpIgnoreTimes()); diff != "" {
		t.Errorf("status (-want,+got):\n%s", diff)
	}
	sim := doc.Simulator
	if sim.URL != "http://user:xxxxx@"+strings.TrimPrefix(srv.URL, "http://")+"/simulate" {
		t.Errorf("URL %q: want it without the password", sim.URL)
	}
	if !sim.Down() || !strings.Contains(sim.LastError, "503") {
		t.Errorf("last request failed (%q), Down() = %t", sim.LastError, sim.Down())
	}
	s := sim.Simulation
	if s == nil || s.Source != "lab" || s.WindowSeconds != 30 || !s.Timestamp.Equal(time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC)) ||
		s.Unscored != 1 || !cmp.Equal(s.MilliScores, map[string]int64{"n1": 900}) {
		t.Errorf("simulation %+v", s)
	}
}

func cmpIgnoreTimes() cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool {
		switch p.Last().String() {
		case ".Started", ".Instance", ".Simulator":
			return true
		}
		return false
	}, cmp.Ignore())
}

// With no cycle asking (PerCycle, one feasible node at a time), the status
// is brought up to date by one request; not when the simulator was asked
// recently, nor while the breaker is open.
func TestKeepFresh(t *testing.T) {
	srv, calls := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(goodBody))
	})
	// The source alone, its goroutine not started: nothing else asks.
	logger, ctx := ktesting.NewTestContext(t)
	m := newProfileMetrics(testProfile)
	client := simclient.New(simclient.Options{URL: srv.URL + "/simulate", ShownURL: srv.URL, Timeout: time.Second, MaxBodyBytes: 1 << 20}, m)
	src := newSource(testArgs(t, "simulatorURL: "+srv.URL), client, m, logger, time.Hour).(*perCycle)
	src.keepFresh(ctx)
	if calls.Load() != 1 {
		t.Fatalf("never asked: %d requests, want 1", calls.Load())
	}
	if newest := client.Observed().Newest; newest == nil || newest.Scores["n1"] != 900 {
		t.Fatalf("newest simulation %+v", newest)
	}
	src.keepFresh(ctx)
	if calls.Load() != 1 {
		t.Errorf("asked again within idle: %d requests", calls.Load())
	}
	// Asked more than half an idle ago: asked again, so that the answer a
	// publication reads is never two idles old (drift's limit), whatever
	// the phase of its ticks.
	src.idle = 100 * time.Millisecond
	time.Sleep(60 * time.Millisecond)
	src.keepFresh(ctx)
	if calls.Load() != 2 {
		t.Errorf("asked more than half an idle ago: %d requests, want 2", calls.Load())
	}
	src.cb.Record(breaker.TimedOut) // opens it
	src.keepFresh(ctx)
	if calls.Load() != 2 {
		t.Errorf("asked with the breaker open (the prober's job): %d requests", calls.Load())
	}
}

// The PerCycle source's own goroutine keeps an idle simulator fresh; the
// status the publisher reads never asks the simulator.
func TestIdleRefreshIsTheSourcesOwn(t *testing.T) {
	srv, calls := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(goodBody))
	})
	pl := newTestPlugin(t, srv.URL, "")
	snapshot := pl.statusSource(plainProfile)
	for range 3 {
		snapshot()
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("reading the status made %d requests, want none", n)
	}

	// The source as a publishing plugin makes it.
	logger, ctx := ktesting.NewTestContext(t)
	m := newProfileMetrics(testProfile)
	client := simclient.New(simclient.Options{URL: srv.URL + "/simulate", ShownURL: srv.URL, Timeout: time.Second, MaxBodyBytes: 1 << 20}, m)
	src := newSource(testArgs(t, "simulatorURL: "+srv.URL), client, m, logger, 20*time.Millisecond).(*perCycle)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { src.run(ctx); close(done) }()
	eventually(t, "the source asks an idle simulator by itself", func() bool { return calls.Load() >= 2 })
	cancel()
	<-done
}

// informerHandle is a framework handle with informers over the given
// nodes (never started: the listers read what the test added).
type informerHandle struct {
	fwk.Handle
	informers informers.SharedInformerFactory
}

func (h informerHandle) ProfileName() string { return plainProfile }
func (h informerHandle) SharedInformerFactory() informers.SharedInformerFactory {
	return h.informers
}

func handleWithNodes(t *testing.T, names ...string) informerHandle {
	t.Helper()
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	for _, n := range names {
		if err := f.Core().V1().Nodes().Informer().GetIndexer().Add(st.MakeNode().Name(n).Obj()); err != nil {
			t.Fatal(err)
		}
	}
	return informerHandle{informers: f}
}

// The status names only the cluster's nodes: the simulator may send any
// name (live measurements carry what agents say), and a name that is no
// node is no use to a reader, and may be long or need escaping.
func TestStatusNamesOnlyKnownNodes(t *testing.T) {
	body := `{"results":{"n1":{"score":0.9,"latency_ms":1},"<script>\u0007":{"score":0.5,"latency_ms":2},"gone":{"score":0.1}}}`
	srv, _ := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) })
	pl := newProfilePlugin(t, srv.URL, "", handleWithNodes(t, "n1", "n2"))
	scoreCycle(t, pl, nodeInfos("n1", "n2"))
	sim := pl.statusSource(plainProfile)().Simulator.Simulation
	if sim == nil {
		t.Fatal("no simulation in the status")
	}
	if !cmp.Equal(sim.MilliScores, map[string]int64{"n1": 900}) {
		t.Errorf("scores %v, want only n1's", sim.MilliScores)
	}
	if _, ok := sim.Metrics["<script>\a"]; ok || len(sim.Metrics) != 1 {
		t.Errorf("metrics %v, want only n1's", sim.Metrics)
	}
}

// scoringHandle is informerHandle in a profile that scores with
// CustomScorePlugin at weight 10 and NetworkCapacity at 20.
type scoringHandle struct {
	informerHandle
}

func (h scoringHandle) ListPlugins() *config.Plugins {
	return &config.Plugins{Score: config.PluginSet{Enabled: []config.Plugin{
		{Name: "NodeResourcesFit", Weight: 1}, {Name: Name, Weight: 10}, {Name: status.NetworkCapacity, Weight: 20}}}}
}

// The status says how the profile scores (its KNS-3 plugins, weights and
// NetworkCapacity's args) and, of each node's link, its measured use and
// what NetworkCapacity counts against it now: the pods placed since the
// measurement's window began, less the time a pod takes to start.
func TestStatusCountsLinks(t *testing.T) {
	measured := time.Now().Add(-2 * time.Second).UTC().Truncate(time.Second)
	at := measured.Format(time.RFC3339Nano)
	body := fmt.Sprintf(`{"results":{
		"n1":{"score":0.9,"bandwidth_mbps":100,"measured":{"bandwidth_mbps":{"value":100,"low":95,"high":105,"samples":3,"measured_at":%q},"link_use_mbps":{"value":10,"samples":5,"measured_at":%q}}},
		"n2":{"score":0.5,"bandwidth_mbps":98,"measured":{"bandwidth_mbps":{"value":98,"low":93,"high":103,"samples":3,"measured_at":%q}}},
		"n3":{"score":0.1,"latency_ms":1}},
		"timestamp":%q,"window_seconds":5}`, at, at, at, at)
	srv, _ := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) })
	h := scoringHandle{handleWithNodes(t, "n1", "n2", "n3")}
	bound := func(name, node string, placed time.Time, need string) *v1.Pod {
		p := st.MakePod().Namespace("ns").Name(name).Node(node).Obj()
		if need != "" {
			p.Annotations = map[string]string{capacity.IngressBandwidthAnnotation: need}
		}
		// Started as soon as placed: its containers ready at once.
		p.Status.Conditions = []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(placed)},
			{Type: v1.ContainersReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(placed)},
		}
		return p
	}
	for _, p := range []*v1.Pod{
		bound("since", "n1", measured.Add(-time.Second), "20M"),  // in the window: counted
		bound("undeclared", "n1", measured, ""),                  // counted at defaultPodMbps
		bound("long-ago", "n1", measured.Add(-time.Hour), "30M"), // held by the measurement
		bound("elsewhere", "n3", measured, "40M"),                // a node without a link
	} {
		if err := h.informers.Core().V1().Pods().Informer().GetIndexer().Add(p); err != nil {
			t.Fatal(err)
		}
	}
	profile.DeclareScoring(h, status.ScorePlugin{Name: status.NetworkCapacity, Capacity: &status.CapacityArgs{DefaultPodMbps: 7, TargetUtilizationPercent: 80}})
	pl := newProfilePlugin(t, srv.URL, "", h)
	scoreCycle(t, pl, nodeInfos("n1", "n2", "n3"))
	doc := pl.statusSource(plainProfile)()
	wantScoring := []status.ScorePlugin{{Name: Name, Weight: 10},
		{Name: status.NetworkCapacity, Weight: 20, Capacity: &status.CapacityArgs{DefaultPodMbps: 7, TargetUtilizationPercent: 80}}}
	if diff := cmp.Diff(wantScoring, doc.Scoring); diff != "" {
		t.Errorf("scoring (-want,+got):\n%s", diff)
	}
	m := doc.Simulator.Simulation.Metrics
	if u := m["n1"].LinkUseMbps; u == nil || *u != 10 {
		t.Errorf("n1's link use %v, want 10", u)
	}
	since := measured.Add(-5*time.Second - 6*time.Second)
	want := map[string]*status.LinkCapacity{
		"n1": {RankedBandwidthMbps: 100, CountedMbps: 27, CountedPods: 2, CountedSince: since, FreeMbps: 63},
		// Within n1's noise: ranked as n1.
		"n2": {RankedBandwidthMbps: 100, CountedSince: since, FreeMbps: 98},
		"n3": nil,
	}
	for node, w := range want {
		if diff := cmp.Diff(w, m[node].Capacity); diff != "" {
			t.Errorf("%s's link (-want,+got):\n%s", node, diff)
		}
	}
	// A profile that does not score with NetworkCapacity counts no link.
	plain := newProfilePlugin(t, srv.URL, "", handleWithNodes(t, "n1"))
	scoreCycle(t, plain, nodeInfos("n1"))
	if c := plain.statusSource(plainProfile)().Simulator.Simulation.Metrics["n1"].Capacity; c != nil {
		t.Errorf("n1's link counted without NetworkCapacity: %+v", c)
	}
}

// peersHandle is informerHandle in a profile that scores with
// CustomScorePlugin at weight 10 and NetworkPeers at 20.
type peersHandle struct {
	informerHandle
}

func (h peersHandle) ListPlugins() *config.Plugins {
	return &config.Plugins{Score: config.PluginSet{Enabled: []config.Plugin{{Name: Name, Weight: 10}, {Name: status.NetworkPeers, Weight: 20}}}}
}

// A profile that scores with NetworkPeers publishes the answer's pairs,
// between the cluster's nodes only, as the plugin reads them; a profile
// without it publishes none.
func TestStatusPublishesPairs(t *testing.T) {
	body := `{"results":{"n1":{"score":0.9},"n2":{"score":0.5}},"timestamp":"2026-12-03T12:00:00Z","window_seconds":15,
		"pairs":{"window_seconds":15,"coordinates":{
			"n1":{"vec":[0.001,0],"error":0.1,"adjustment":0,"height":0.00001,"samples":9},
			"n2":{"vec":[0.002,0],"error":0.2,"adjustment":0,"height":0.00001,"samples":9},
			"agent-x":{"vec":[0.003,0],"error":0.2,"adjustment":0,"height":0.00001,"samples":9}},
		"measured":[
			{"from":"n1","to":"n2","latency_ms":{"value":1.5,"low":1.4,"high":1.6,"samples":9,"age_seconds":1}},
			{"from":"n1","to":"agent-x","latency_ms":{"value":9,"low":8,"high":10,"samples":9,"age_seconds":1}}]}}`
	srv, _ := countingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) })
	h := peersHandle{handleWithNodes(t, "n1", "n2")}
	profile.DeclareScoring(h, status.ScorePlugin{Name: status.NetworkPeers})
	pl := newProfilePlugin(t, srv.URL, "", h)
	scoreCycle(t, pl, nodeInfos("n1", "n2"))
	source := pl.statusSource(plainProfile)
	sim := source().Simulator.Simulation
	want := &status.Pairs{
		Coordinates: map[string]status.Coordinate{
			"n1": {Vec: []float64{0.001, 0}, Error: 0.1, Height: 0.00001},
			"n2": {Vec: []float64{0.002, 0}, Error: 0.2, Height: 0.00001},
		},
		Measured: []status.MeasuredPair{{From: "n1", To: "n2", LatencyMs: &status.PairEstimate{Value: 1.5, Low: 1.4, High: 1.6}}},
	}
	if diff := cmp.Diff(want, sim.Pairs); diff != "" || sim.PairsOmitted {
		t.Errorf("pairs (omitted %t) (-want,+got):\n%s", sim.PairsOmitted, diff)
	}
	// The next publication of the same answer publishes the same pairs:
	// filtering the first left the answer's own untouched.
	if diff := cmp.Diff(want, source().Simulator.Simulation.Pairs); diff != "" {
		t.Errorf("pairs published again (-want,+got):\n%s", diff)
	}
	plain := newProfilePlugin(t, srv.URL, "", handleWithNodes(t, "n1", "n2"))
	scoreCycle(t, plain, nodeInfos("n1", "n2"))
	if p := plain.statusSource(plainProfile)().Simulator.Simulation.Pairs; p != nil {
		t.Errorf("pairs published without NetworkPeers: %+v", p)
	}
}
