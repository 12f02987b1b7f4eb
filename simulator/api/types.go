// Package api holds the types of the simulator's HTTP API (GET /simulate)
// and its OpenAPI document.
package api

import (
	_ "embed"
	"time"
)

// SimulationResponse is the body of a 200 answer to GET /simulate.
type SimulationResponse struct {
	// Results maps a node name to its result; a node with no metrics is absent.
	Results map[string]NodeResult `json:"results"`
	// Timestamp is when the metrics were sampled.
	Timestamp time.Time `json:"timestamp"`
	// WindowSeconds is the sampling window the metrics summarise.
	WindowSeconds int `json:"window_seconds"`
	// Source says where the numbers came from (static, a file name, ...).
	Source string `json:"source"`
}

// NodeResult is one node's network position.
type NodeResult struct {
	// Score is higher for a better network position.
	Score float64 `json:"score"`
	// LatencyMs, BandwidthMbps and PacketLoss are the metrics behind the
	// score, null when unknown.
	LatencyMs     *float64 `json:"latency_ms"`
	BandwidthMbps *float64 `json:"bandwidth_mbps"`
	PacketLoss    *float64 `json:"packet_loss"`
}

// HTTPError is FastAPI's error body.
type HTTPError struct {
	Detail string `json:"detail"`
}

// OpenAPIDocument is the OpenAPI 3 document served at /openapi.json. A test
// holds it to the Go types above.
//
//go:embed openapi.json
var OpenAPIDocument []byte
