package customscore

import (
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/component-base/metrics"

	"kns3.dev/kns3/scheduler/plugins/customscore/simclient"
	"kns3.dev/kns3/scheduler/plugins/network"
)

// The metrics read from each profile's newest simulator answer when
// /metrics is scraped, not when a cycle runs: nothing is added to a
// scheduling cycle, and nothing is computed between scrapes. The simulator
// listens on its pod's loopback only, so the scheduler's secure port, with
// its authentication and authorization, is where its numbers are seen.
// Node series are bounded by the nodes the scheduler knows.
var (
	simulationAgeDesc = answerDesc("simulation_age_seconds",
		"In Background refresh mode, the age of the newest simulation when scraped: since it arrived, or since the end of the window it describes when that is longer ago (-1: none yet).")
	nodeMeasuredDesc = answerDesc("node_measured",
		"1 when the newest simulation carries measurements of the node, 0 when it does not; for every node the scheduler knows, once the profile's simulator has measured any node.", "node")
	nodeScoreDesc = answerDesc("node_score",
		"The node's score in the newest simulation.", "node")
	nodeLatencyDesc = answerDesc("node_latency_seconds",
		"The node's latency in the newest simulation: the served value, and the ends of its 95 % interval where the simulator measured it.", "node", "estimate")
	nodeBandwidthDesc = answerDesc("node_bandwidth_bytes_per_second",
		"The node's bandwidth in the newest simulation: the served value, and the ends of its 95 % interval where the simulator measured it (no high end for a lower bound).", "node", "estimate")
	nodeLossDesc = answerDesc("node_packet_loss_ratio",
		"The node's packet loss in the newest simulation: the served value, and the ends of its 95 % interval where the simulator measured it.", "node", "estimate")
	nodeLinkUseDesc = answerDesc("node_link_use_bytes_per_second",
		"The traffic already on the node's link in the newest simulation, where the simulator measured it.", "node", "estimate")
	nodeMeasurementAgeDesc = answerDesc("node_measurement_age_seconds",
		"Age, when scraped, of the newest sample behind each of the node's measured metrics.", "node", "metric")
)

func answerDesc(name, help string, labels ...string) *metrics.Desc {
	return metrics.NewDesc(metrics.BuildFQName("", metricsSubsystem, name), help,
		append([]string{profileLabel}, labels...), nil, metrics.ALPHA, "")
}

const (
	// Units: the answer's milliseconds and Mbit/s, in seconds and bytes.
	secondsPerMs     = 1e-3
	bytesPerSecPerMb = 1e6 / 8
)

// answerCollector collects the answer metrics of every plugin instance, one
// per profile.
type answerCollector struct {
	metrics.BaseStableCollector
	now func() time.Time

	mu      sync.Mutex
	answers map[string]*answerMetrics
}

func newAnswerCollector() *answerCollector {
	return &answerCollector{now: time.Now, answers: map[string]*answerMetrics{}}
}

// answers is the collector the scheduler's registry serves.
var answers = newAnswerCollector()

// add makes a's series the profile's, replacing an earlier instance's:
// one profile's series must not be collected twice, and the newest
// instance is the one that schedules.
func (c *answerCollector) add(a *answerMetrics) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answers[a.profile] = a
}

// remove drops a's series, unless another instance has taken its profile.
func (c *answerCollector) remove(a *answerMetrics) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answers[a.profile] == a {
		delete(c.answers, a.profile)
	}
}

func (c *answerCollector) DescribeWithStability(ch chan<- *metrics.Desc) {
	for _, d := range []*metrics.Desc{simulationAgeDesc, nodeMeasuredDesc, nodeScoreDesc, nodeLatencyDesc,
		nodeBandwidthDesc, nodeLossDesc, nodeLinkUseDesc, nodeMeasurementAgeDesc} {
		ch <- d
	}
}

func (c *answerCollector) CollectWithStability(ch chan<- metrics.Metric) {
	c.mu.Lock()
	all := slices.Collect(maps.Values(c.answers))
	c.mu.Unlock()
	now := c.now()
	for _, a := range all {
		a.collect(ch, now)
	}
}

// simulationAger is a source that ages its simulation (Background mode):
// the age, and false when it has none yet.
type simulationAger interface {
	simulationAge(now time.Time) (time.Duration, bool)
}

// answerMetrics are one plugin instance's answer metrics.
type answerMetrics struct {
	profile string
	client  *simclient.Client
	// ager is the source, when it ages its simulation.
	ager simulationAger
	// nodes are the cluster's; nil without informers, when every node the
	// answer names is shown and none other.
	nodes corelisters.NodeLister

	mu sync.Mutex
	// described is the answer meta was read from (once per answer).
	described *network.Simulation
	meta      network.Meta
	// measuring is set once an answer measured a node: from then on,
	// every known node is said to be measured or not, so that agents
	// gone from every node show.
	measuring bool
}

func (a *answerMetrics) collect(ch chan<- metrics.Metric, now time.Time) {
	if a.ager != nil {
		v := -1.0
		if age, ok := a.ager.simulationAge(now); ok {
			v = age.Seconds()
		}
		ch <- metrics.NewLazyConstMetric(simulationAgeDesc, metrics.GaugeValue, v, a.profile)
	}
	newest := a.client.Observed().Newest
	if newest == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if newest != a.described {
		a.described, a.meta = newest, network.MetaOf(newest.Body)
		for _, m := range a.meta.Metrics {
			a.measuring = a.measuring || m.Measured != nil
		}
	}
	for _, node := range a.shownNodes(newest) {
		m := a.meta.Metrics[node]
		if a.measuring {
			ch <- constGauge(nodeMeasuredDesc, boolValue(m.Measured != nil), a.profile, node)
		}
		if s, ok := newest.Scores[node]; ok {
			ch <- constGauge(nodeScoreDesc, float64(s)/1000, a.profile, node)
		}
		a.collectNode(ch, now, node, m)
	}
}

// collectNode sends a node's metrics: each served value, and the interval
// and age of each measured one.
func (a *answerMetrics) collectNode(ch chan<- metrics.Metric, now time.Time, node string, m network.Metrics) {
	var measured network.Measured
	if m.Measured != nil {
		measured = *m.Measured
	}
	for _, metric := range []struct {
		desc   *metrics.Desc
		name   string
		served *float64
		est    *network.Estimate
		unit   float64
	}{
		{nodeLatencyDesc, "latency", m.LatencyMs, measured.LatencyMs, secondsPerMs},
		{nodeBandwidthDesc, "bandwidth", m.BandwidthMbps, measured.BandwidthMbps, bytesPerSecPerMb},
		{nodeLossDesc, "packet_loss", m.PacketLoss, measured.PacketLoss, 1},
		{nodeLinkUseDesc, "link_use", nil, measured.LinkUseMbps, bytesPerSecPerMb},
	} {
		served := metric.served
		if e := metric.est; e != nil && served == nil {
			served = &e.Value // served in "measured" only: link use
		}
		if served != nil {
			ch <- constGauge(metric.desc, *served*metric.unit, a.profile, node, "value")
		}
		e := metric.est
		if e == nil {
			continue
		}
		if e.Low != nil {
			ch <- constGauge(metric.desc, *e.Low*metric.unit, a.profile, node, "low")
		}
		if e.High != nil {
			ch <- constGauge(metric.desc, *e.High*metric.unit, a.profile, node, "high")
		}
		if !e.MeasuredAt.IsZero() {
			ch <- constGauge(nodeMeasurementAgeDesc, max(now.Sub(e.MeasuredAt).Seconds(), 0), a.profile, node, metric.name)
		}
	}
}

// shownNodes are the nodes the series name: the cluster's, as the status
// names them (an answer may name anything), or without a node lister
// every node the answer names.
func (a *answerMetrics) shownNodes(sim *network.Simulation) []string {
	if a.nodes != nil {
		if nodes, err := a.nodes.List(labels.Everything()); err == nil {
			names := make([]string, len(nodes))
			for i, n := range nodes {
				names[i] = n.Name
			}
			return names
		}
	}
	names := slices.Collect(maps.Keys(sim.Scores))
	for node := range a.meta.Metrics {
		if _, ok := sim.Scores[node]; !ok {
			names = append(names, node)
		}
	}
	return names
}

func constGauge(d *metrics.Desc, v float64, labelValues ...string) metrics.Metric {
	return metrics.NewLazyConstMetric(d, metrics.GaugeValue, v, labelValues...)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
