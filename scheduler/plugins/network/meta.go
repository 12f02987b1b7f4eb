package network

import (
	"encoding/json"
	"errors"
	"math"
	"time"

	"kns3.dev/kns3/scheduler/apis/status"
)

// Meta is what an answer says besides its scores: where its numbers come
// from, when, over what window, and the metrics behind each node's score.
// The published status reports it; scoring never reads it.
type Meta struct {
	// Source is where its numbers come from; untrusted text.
	Source string
	// Timestamp is when they were sampled (zero when unreadable), over a
	// window of WindowSeconds.
	Timestamp     time.Time
	WindowSeconds int
	// Metrics are by node, for nodes with any finite metric; nil when the
	// answer gives none (or gives its results as an array).
	Metrics map[string]Metrics
}

// Metrics are what an answer says of one node besides its score: nil
// where it says nothing, or nothing finite.
type Metrics struct {
	LatencyMs, BandwidthMbps, PacketLoss *float64
	// BandwidthAtLeast says the simulator serves the bandwidth as a lower
	// bound (its "measured" estimate's at_least).
	BandwidthAtLeast bool
	// LinkUseMbps is the traffic measured on the node's link (its
	// "measured" link_use_mbps), nil when not measured.
	LinkUseMbps *float64
	// Measured are the estimates of the metrics the simulator measured
	// itself (the answer's "measured"); nil for a node it did not measure.
	Measured *Measured
}

// Measured are a measured node's estimates; nil where a metric was not
// measured (a scenario's number, or none).
type Measured struct {
	LatencyMs, BandwidthMbps, PacketLoss, LinkUseMbps *Estimate
}

// Estimate is one measured metric: its value, the ends of its 95 %
// interval (High nil for a lower bound, or where the answer gives none)
// and when its newest sample was taken (zero when unreadable).
type Estimate struct {
	Value      float64
	Low, High  *float64
	MeasuredAt time.Time
}

// MetaOf reads an answer's metadata and metrics in one decoding of the
// body, as the contract allows them to be sent; a field it cannot read
// stays empty, and one node's odd entry costs only that node's metrics.
// It is for off the scheduling cycle, once per answer.
func MetaOf(body []byte) Meta {
	w := decodeWireMeta(body)
	m := Meta{Source: w.Source, WindowSeconds: w.WindowSeconds}
	if t, err := time.Parse(time.RFC3339Nano, w.Timestamp); err == nil {
		m.Timestamp = t
	}
	for node, r := range w.Results {
		nm := Metrics{LatencyMs: finite(r.LatencyMs), BandwidthMbps: finite(r.BandwidthMbps), PacketLoss: finite(r.PacketLoss)}
		if bw := r.Measured.BandwidthMbps; nm.BandwidthMbps != nil && bw != nil {
			nm.BandwidthAtLeast = bw.AtLeast
		}
		if u := r.Measured.LinkUseMbps; u != nil {
			if use := finite(u.Value); use != nil && *use >= 0 {
				nm.LinkUseMbps = use
			}
		}
		nm.Measured = r.Measured.estimates()
		if nm.LatencyMs != nil || nm.BandwidthMbps != nil || nm.PacketLoss != nil || nm.Measured != nil {
			if m.Metrics == nil {
				m.Metrics = map[string]Metrics{}
			}
			m.Metrics[node] = nm
		}
	}
	return m
}

// DescribedUntil is the latest time an answer's numbers can describe:
// its timestamp plus its window (status.Window); zero when it has no
// readable timestamp. It reads only those two fields, for off the cycle.
func DescribedUntil(body []byte) time.Time {
	var w struct {
		Timestamp     string `json:"timestamp"`
		WindowSeconds int    `json:"window_seconds"`
	}
	err := json.Unmarshal(body, &w)
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		if fixed, changed := quoteNonFiniteTokens(body); changed {
			_ = json.Unmarshal(fixed, &w)
		}
	}
	t, err := time.Parse(time.RFC3339Nano, w.Timestamp)
	if err != nil {
		return time.Time{}
	}
	return t.Add(status.Window(w.WindowSeconds))
}

// wireMeta is the part of an answer MetaOf reads.
type wireMeta struct {
	Source        string            `json:"source"`
	Timestamp     string            `json:"timestamp"`
	WindowSeconds int               `json:"window_seconds"`
	Results       wireMetricsByNode `json:"results"`
}

// wireMetricsByNode is "results" as an object keyed by node name; the
// array shape carries no metrics MetaOf reads, and leaves it empty.
type wireMetricsByNode map[string]wireNodeMetrics

type wireNodeMetrics struct {
	LatencyMs     any `json:"latency_ms"`
	BandwidthMbps any `json:"bandwidth_mbps"`
	PacketLoss    any `json:"packet_loss"`
	// Measured is the optional confidence of a measured node's metrics.
	Measured wireMeasured `json:"measured"`
}

type wireMeasured struct {
	LatencyMs     *wireEstimate `json:"latency_ms"`
	BandwidthMbps *wireEstimate `json:"bandwidth_mbps"`
	PacketLoss    *wireEstimate `json:"packet_loss"`
	LinkUseMbps   *wireEstimate `json:"link_use_mbps"`
}

type wireEstimate struct {
	Value      any    `json:"value"`
	Low        any    `json:"low"`
	High       any    `json:"high"`
	AtLeast    bool   `json:"at_least"`
	MeasuredAt string `json:"measured_at"`
}

// estimates are the measured estimates with a finite value; nil when none
// has one.
func (w wireMeasured) estimates() *Measured {
	var m Measured
	for _, e := range []struct {
		in  *wireEstimate
		out **Estimate
	}{
		{w.LatencyMs, &m.LatencyMs}, {w.BandwidthMbps, &m.BandwidthMbps},
		{w.PacketLoss, &m.PacketLoss}, {w.LinkUseMbps, &m.LinkUseMbps},
	} {
		if e.in == nil {
			continue
		}
		v := finite(e.in.Value)
		if v == nil {
			continue
		}
		at, _ := parseTime(e.in.MeasuredAt)
		*e.out = &Estimate{Value: *v, Low: finite(e.in.Low), High: finite(e.in.High), MeasuredAt: at}
	}
	if m == (Measured{}) {
		return nil
	}
	return &m
}

func (r *wireMetricsByNode) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	// A node whose entry is not an object gets no metrics; encoding/json
	// goes on with the others.
	_ = json.Unmarshal(b, (*map[string]wireNodeMetrics)(r))
	return nil
}

// finite is v as a finite number, nil when it is none.
func finite(v any) *float64 {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// decodeWireMeta decodes what it can of body; a field it cannot read stays
// empty.
func decodeWireMeta(body []byte) wireMeta {
	w, _ := unmarshalLenient[wireMeta](body)
	return w
}
