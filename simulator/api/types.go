// Package api holds the types of the simulator's HTTP API (GET /simulate)
// and its OpenAPI document.
package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// SimulationResponse is the body of a 200 answer to GET /simulate. Only
// Results is required: a simulator may leave out the other fields, which
// then decode as zero values.
type SimulationResponse struct {
	// Results maps a node name to its result; a node with no metrics is absent.
	Results map[string]NodeResult `json:"results"`
	// Timestamp is when the metrics were sampled.
	Timestamp time.Time `json:"timestamp,omitzero"`
	// WindowSeconds is the sampling window the metrics summarise.
	WindowSeconds int `json:"window_seconds,omitzero"`
	// Source says where the numbers came from (static, a file name, ...).
	Source string `json:"source,omitzero"`
	// WarmUp is present while the simulator has measured too few nodes in
	// full to rank them: every measured node's score is then 0, as the
	// specification's fallback scores every node, and KNS-3's plugins fall
	// back to the scheduler's other plugins and say why.
	WarmUp *WarmUp `json:"warm_up,omitempty"`
	// Pairs is what the simulator knows of the network between nodes,
	// when it measures: every node's network coordinate and the pairs it
	// measured directly. Optional: a reader that ignores it reads the
	// answer as the contract has it.
	Pairs *Pairs `json:"pairs,omitempty"`
}

// Pairs is what the simulator knows of the network between nodes.
type Pairs struct {
	// WindowSeconds is the window the measured pairs summarise.
	WindowSeconds int `json:"window_seconds"`
	// Coordinates maps a node to its Vivaldi network coordinate, in the
	// units and semantics of serf's coordinate package: the distance
	// between two nodes' coordinates estimates their round trip.
	Coordinates map[string]Coordinate `json:"coordinates"`
	// Measured are the pairs measured directly, From before To by name,
	// each once, sorted.
	Measured []PairMeasurement `json:"measured"`
}

// Coordinate is one node's network coordinate: serf's Coordinate (Vec,
// Error, Adjustment and Height, distances in seconds), with how many pair
// round trips updated it and when the newest was measured.
type Coordinate struct {
	Vec        []float64 `json:"vec"`
	Error      float64   `json:"error"`
	Adjustment float64   `json:"adjustment"`
	Height     float64   `json:"height"`
	Samples    int       `json:"samples"`
	MeasuredAt time.Time `json:"measured_at"`
	AgeSeconds float64   `json:"age_seconds"`
}

// PairMeasurement is one pair of nodes measured directly, between their
// agents, pod network to pod network; a metric not measured is absent.
type PairMeasurement struct {
	From string `json:"from"`
	To   string `json:"to"`
	// LatencyMs is the round trip, PacketLoss the share of echoes lost,
	// BandwidthMbps the rate of the pair's trains: Estimates as a node's.
	LatencyMs     *Estimate `json:"latency_ms,omitempty"`
	PacketLoss    *Estimate `json:"packet_loss,omitempty"`
	BandwidthMbps *Estimate `json:"bandwidth_mbps,omitempty"`
}

// PairsInterest is the body of PUT /pairs/interest: the nodes that host
// pods other pods declared as peers.
type PairsInterest struct {
	Nodes []string `json:"nodes"`
}

// WarmUp says how far the measurements are from ranking nodes.
type WarmUp struct {
	// MeasuredInFull is how many nodes have every metric measured, of
	// Nodes the simulator knows; Quorum is the share it needs.
	MeasuredInFull int     `json:"measured_in_full"`
	Nodes          int     `json:"nodes"`
	Quorum         float64 `json:"quorum"`
}

// NodeResult is one node's network position.
type NodeResult struct {
	// Score is higher for a better network position.
	Score float64 `json:"score"`
	// LatencyMs, BandwidthMbps and PacketLoss are the metrics behind the
	// score, null when unknown. A measured bandwidth that is only a lower
	// bound (Measured.BandwidthMbps.AtLeast) is served as that bound.
	LatencyMs     *float64 `json:"latency_ms"`
	BandwidthMbps *float64 `json:"bandwidth_mbps"`
	PacketLoss    *float64 `json:"packet_loss"`
	// Measured, for a node the simulator measured itself, says how sure
	// each measured metric is and how old it is. A metric a scenario file
	// sets is not measured, and not in it. Readers that ignore it read the
	// answer as the contract has it.
	Measured *Measurements `json:"measured,omitempty"`
}

// Measurements are a measured node's metrics with their confidence; a
// metric not measured is absent.
type Measurements struct {
	LatencyMs     *Estimate `json:"latency_ms,omitempty"`
	BandwidthMbps *Estimate `json:"bandwidth_mbps,omitempty"`
	PacketLoss    *Estimate `json:"packet_loss,omitempty"`
	// LinkUseMbps is the traffic already on the node's link: the larger of
	// what the node received and sent over its uplink, in Mbit/s, from the
	// node's own byte counters, over the last window. Bandwidth less link
	// use is what a new pod would find free. Low and High are its Value:
	// counters are exact; Samples is the counter readings behind it.
	LinkUseMbps *Estimate `json:"link_use_mbps,omitempty"`
}

// Estimate is one measured metric: its value, a 95 % interval, how many
// samples are behind it and when the newest was taken.
type Estimate struct {
	// Value is the metric as served in the node's flat field.
	Value float64 `json:"value"`
	// Low and High bound the interval. High is absent when Value is only a
	// lower bound (AtLeast).
	Low  float64  `json:"low"`
	High *float64 `json:"high,omitempty"`
	// AtLeast says the metric is at least Value and could not be resolved
	// above it: a bandwidth whose probe trains arrived as fast as the
	// simulator's host sent them.
	AtLeast bool `json:"at_least,omitempty"`
	// Samples is how many samples the estimate comes from: echoes for
	// latency and loss, trains for bandwidth.
	Samples int `json:"samples"`
	// MeasuredAt is when the newest sample was taken; AgeSeconds how long
	// before the answer's timestamp that was.
	MeasuredAt time.Time `json:"measured_at"`
	AgeSeconds float64   `json:"age_seconds"`
}

// HTTPError is FastAPI's error body.
type HTTPError struct {
	Detail Detail `json:"detail"`
}

// Detail is an error body's detail: a message, or the list of validation
// errors with which FastAPI answers 422 to a request it rejects. It encodes
// as the list when Errors is non-nil, as the message otherwise.
type Detail struct {
	Message string
	Errors  []ValidationError
}

// ValidationError is one entry of a 422 answer's detail.
type ValidationError struct {
	// Loc is where the rejected input is, as ["query", "window"] or
	// ["body", 0, "name"]: strings and, decoded as float64, list indices.
	Loc []any `json:"loc"`
	// Msg says what is wrong with it.
	Msg string `json:"msg"`
	// Type names the error, as "missing" or "int_parsing".
	Type string `json:"type"`
}

// MarshalJSON encodes the list or the message.
func (d Detail) MarshalJSON() ([]byte, error) {
	if d.Errors != nil {
		return json.Marshal(d.Errors)
	}
	return json.Marshal(d.Message)
}

// UnmarshalJSON decodes a string into Message and a list into Errors.
func (d *Detail) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case len(data) > 0 && data[0] == '"':
		var msg string
		if err := json.Unmarshal(data, &msg); err != nil {
			return err
		}
		*d = Detail{Message: msg}
	case len(data) > 0 && data[0] == '[':
		errs := []ValidationError{}
		if err := json.Unmarshal(data, &errs); err != nil {
			return err
		}
		*d = Detail{Errors: errs}
	default:
		return fmt.Errorf("detail must be a string or a list, got %.40s", data)
	}
	return nil
}

// String is the message, or each validation error as "loc: msg", joined by
// "; ".
func (d Detail) String() string {
	if d.Errors == nil {
		return d.Message
	}
	parts := make([]string, len(d.Errors))
	for i, e := range d.Errors {
		loc := make([]string, len(e.Loc))
		for j, l := range e.Loc {
			loc[j] = fmt.Sprint(l)
		}
		parts[i] = strings.Join(loc, ".") + ": " + e.Msg
	}
	return strings.Join(parts, "; ")
}
