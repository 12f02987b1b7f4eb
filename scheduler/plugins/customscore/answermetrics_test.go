package customscore

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"

	"kns3.dev/kns3/scheduler/plugins/customscore/simclient"
	"kns3.dev/kns3/scheduler/plugins/network"
)

// liveAnswer is a live answer sampled at 10:15:00: n1 measured (latency
// and loss with intervals, a bandwidth known only as a lower bound, link
// use), n2 from a scenario, and a name that is no node.
const liveAnswer = `{"timestamp":"2026-11-30T10:15:00Z","window_seconds":15,"source":"live+sample","results":{
	"n1":{"score":0.5,"latency_ms":2,"bandwidth_mbps":400,"packet_loss":0.02,"measured":{
		"latency_ms":{"value":2,"low":1,"high":3,"samples":1500,"measured_at":"2026-11-30T10:15:00Z"},
		"bandwidth_mbps":{"value":400,"low":400,"at_least":true,"samples":3,"measured_at":"2026-11-30T10:14:50Z"},
		"packet_loss":{"value":0.02,"low":0.01,"high":0.04,"samples":1500,"measured_at":"2026-11-30T10:15:00Z"},
		"link_use_mbps":{"value":8,"low":8,"high":8,"samples":15,"measured_at":"2026-11-30T10:14:59Z"}}},
	"n2":{"score":0.25,"latency_ms":4,"bandwidth_mbps":null,"packet_loss":null},
	"elsewhere":{"score":1,"latency_ms":1,"measured":{"latency_ms":{"value":1,"low":1,"high":1,"samples":1}}}}}`

// scrapedAt is when the tests scrape: 5 s after liveAnswer's timestamp.
var scrapedAt = time.Date(2026, 11, 30, 10, 15, 5, 0, time.UTC)

func nodeLister(t *testing.T, names ...string) corelisters.NodeLister {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, name := range names {
		if err := indexer.Add(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	return corelisters.NewNodeLister(indexer)
}

// answeringClient is a client of a simulator that answers body; fetch
// asks it once, making that answer the newest.
func answeringClient(t *testing.T, body *atomic.Value) (client *simclient.Client, fetch func()) {
	t.Helper()
	var status atomic.Int32
	srv, _ := simulator(t, body, &status)
	args := defaults()
	args.SimulatorURL = srv.URL
	client = newClient(args, newProfileMetrics("test-answers"), nil)
	t.Cleanup(client.Close)
	return client, func() {
		t.Helper()
		if _, _, err := client.Fetch(context.Background(), 1, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
}

// scraper registers c with a fresh registry, as the scheduler's /metrics
// serves it; each scrape returns every series as name{label="value",...}
// with its value.
func scraper(c *answerCollector) func(t *testing.T) map[string]float64 {
	reg := metrics.NewKubeRegistry()
	reg.CustomMustRegister(c)
	return func(t *testing.T) map[string]float64 {
		t.Helper()
		return gathered(t, reg)
	}
}

func gathered(t *testing.T, reg metrics.KubeRegistry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			slices.Sort(labels)
			got[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetGauge().GetValue()
		}
	}
	return got
}

// A scrape shows each known node's numbers from the newest answer, in
// seconds, bytes and ratios, with a measured metric's interval and age; a
// name the cluster does not know is left out, and a known node the answer
// does not measure is said to be unmeasured.
func TestAnswerMetricsPerNode(t *testing.T) {
	var body atomic.Value
	body.Store(liveAnswer)
	client, fetch := answeringClient(t, &body)
	c := newAnswerCollector()
	c.now = func() time.Time { return scrapedAt }
	scrape := scraper(c)
	c.add(&answerMetrics{profile: "p", client: client, nodes: nodeLister(t, "n1", "n2", "n3")})
	if got := scrape(t); len(got) != 0 {
		t.Errorf("before any answer: %v, want no series", got)
	}
	fetch()
	want := map[string]float64{
		`kns3_simulator_node_measured{node="n1",profile="p"}`: 1,
		`kns3_simulator_node_measured{node="n2",profile="p"}`: 0,
		`kns3_simulator_node_measured{node="n3",profile="p"}`: 0,
		`kns3_simulator_node_score{node="n1",profile="p"}`:    0.5,
		`kns3_simulator_node_score{node="n2",profile="p"}`:    0.25,

		`kns3_simulator_node_latency_seconds{estimate="value",node="n1",profile="p"}`: 0.002,
		`kns3_simulator_node_latency_seconds{estimate="low",node="n1",profile="p"}`:   0.001,
		`kns3_simulator_node_latency_seconds{estimate="high",node="n1",profile="p"}`:  0.003,
		`kns3_simulator_node_latency_seconds{estimate="value",node="n2",profile="p"}`: 0.004,
		// A lower bound has no high end.
		`kns3_simulator_node_bandwidth_bytes_per_second{estimate="value",node="n1",profile="p"}`: 50e6,
		`kns3_simulator_node_bandwidth_bytes_per_second{estimate="low",node="n1",profile="p"}`:   50e6,
		`kns3_simulator_node_packet_loss_ratio{estimate="value",node="n1",profile="p"}`:          0.02,
		`kns3_simulator_node_packet_loss_ratio{estimate="low",node="n1",profile="p"}`:            0.01,
		`kns3_simulator_node_packet_loss_ratio{estimate="high",node="n1",profile="p"}`:           0.04,
		`kns3_simulator_node_link_use_bytes_per_second{estimate="value",node="n1",profile="p"}`:  1e6,
		`kns3_simulator_node_link_use_bytes_per_second{estimate="low",node="n1",profile="p"}`:    1e6,
		`kns3_simulator_node_link_use_bytes_per_second{estimate="high",node="n1",profile="p"}`:   1e6,

		`kns3_simulator_node_measurement_age_seconds{metric="latency",node="n1",profile="p"}`:     5,
		`kns3_simulator_node_measurement_age_seconds{metric="bandwidth",node="n1",profile="p"}`:   15,
		`kns3_simulator_node_measurement_age_seconds{metric="packet_loss",node="n1",profile="p"}`: 5,
		`kns3_simulator_node_measurement_age_seconds{metric="link_use",node="n1",profile="p"}`:    6,
	}
	if diff := cmp.Diff(want, scrape(t)); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

// Until the simulator measures a node, nothing is said of nodes being
// measured (an install without probe agents); once it has, every known
// node is, even when the next answer measures none: agents gone from every
// node show as such.
func TestAnswerMetricsMeasuredOnceMeasuring(t *testing.T) {
	const scenarioOnly = `{"results":{"n1":{"score":0.5,"latency_ms":2},"n2":{"score":0.25}}}`
	var body atomic.Value
	body.Store(scenarioOnly)
	client, fetch := answeringClient(t, &body)
	c := newAnswerCollector()
	c.now = func() time.Time { return scrapedAt }
	scrape := scraper(c)
	c.add(&answerMetrics{profile: "p", client: client, nodes: nodeLister(t, "n1", "n2")})
	measured := func() map[string]float64 {
		out := map[string]float64{}
		for k, v := range scrape(t) {
			if strings.HasPrefix(k, "kns3_simulator_node_measured{") {
				out[k] = v
			}
		}
		return out
	}
	fetch()
	if got := measured(); len(got) != 0 {
		t.Errorf("scenario only: %v, want no node_measured series", got)
	}
	body.Store(liveAnswer)
	fetch()
	if got := measured(); got[`kns3_simulator_node_measured{node="n1",profile="p"}`] != 1 || len(got) != 2 {
		t.Errorf("live: %v, want n1 measured and n2 not", got)
	}
	body.Store(scenarioOnly)
	fetch()
	want := map[string]float64{`kns3_simulator_node_measured{node="n1",profile="p"}`: 0, `kns3_simulator_node_measured{node="n2",profile="p"}`: 0}
	if diff := cmp.Diff(want, measured()); diff != "" {
		t.Errorf("measurements gone (-want +got):\n%s", diff)
	}
}

// In Background mode the simulation's age is its age when scraped, -1
// before the first; a PerCycle profile has none.
func TestAnswerMetricsSimulationAge(t *testing.T) {
	now := scrapedAt
	bg := &background{maxAge: time.Second, now: func() time.Time { return now }}
	c := newAnswerCollector()
	c.now = func() time.Time { return now }
	scrape := scraper(c)
	var body atomic.Value
	body.Store(`{"results":{}}`)
	client, _ := answeringClient(t, &body)
	c.add(&answerMetrics{profile: "background", client: client, ager: bg})
	c.add(&answerMetrics{profile: "per-cycle", client: client})
	want := map[string]float64{`kns3_simulator_simulation_age_seconds{profile="background"}`: -1}
	if diff := cmp.Diff(want, scrape(t)); diff != "" {
		t.Errorf("before any answer (-want +got):\n%s", diff)
	}
	bg.take(simclient.Result{Seq: 1, Sim: &network.Simulation{}})
	now = now.Add(90 * time.Second)
	want = map[string]float64{`kns3_simulator_simulation_age_seconds{profile="background"}`: 90}
	if diff := cmp.Diff(want, scrape(t)); diff != "" {
		t.Errorf("90 s after the answer (-want +got):\n%s", diff)
	}
}

// A profile's new plugin instance takes its series over; closing the old
// one afterwards (a profile reload) leaves them.
func TestAnswerMetricsProfileReload(t *testing.T) {
	now := scrapedAt
	c := newAnswerCollector()
	c.now = func() time.Time { return now }
	scrape := scraper(c)
	var body atomic.Value
	body.Store(`{"results":{}}`)
	client, _ := answeringClient(t, &body)
	older := &answerMetrics{profile: "p", client: client, ager: &background{now: time.Now}}
	newer := &answerMetrics{profile: "p", client: client, ager: &background{now: time.Now}}
	c.add(older)
	c.add(newer)
	c.remove(older)
	if got := scrape(t); len(got) != 1 {
		t.Errorf("after the old instance closed: %v, want the new instance's one series", got)
	}
	c.remove(newer)
	if got := scrape(t); len(got) != 0 {
		t.Errorf("after both closed: %v, want none", got)
	}
}

// The answer metrics follow Prometheus's naming conventions (base units,
// no abbreviations), as Kubernetes' own metrics are linted.
func TestAnswerMetricsLint(t *testing.T) {
	var body atomic.Value
	body.Store(liveAnswer)
	client, fetch := answeringClient(t, &body)
	fetch()
	c := newAnswerCollector()
	c.add(&answerMetrics{profile: "p", client: client, ager: &background{now: time.Now}})
	reg := metrics.NewKubeRegistry()
	reg.CustomMustRegister(c)
	rec := httptest.NewRecorder()
	metrics.HandlerFor(reg, metrics.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	problems, err := testutil.NewPromLinter(rec.Body).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}
