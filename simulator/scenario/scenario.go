// Package scenario reads the simulator stub's scenario file: per node either
// a score, or network metrics from which the score is derived.
//
// The score derived from metrics is
//
//	score = (1 − packet_loss) × min(bandwidth_mbps / 1000, 1) × 10 / (10 + latency_ms)
//
// where a missing metric leaves its factor at 1. A perfect node (no loss,
// 1 Gbit/s or more, no latency) scores 1; 10 ms of latency halves the score.
package scenario

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"kns3.dev/kns3/simulator/api"
)

// DefaultWindowSeconds is the sampling window reported when a scenario names none.
const DefaultWindowSeconds = 30

// Scenario is the content of a scenario file, YAML or JSON.
type Scenario struct {
	// Source is reported in every response; the file's base name by default.
	Source string `json:"source,omitempty"`
	// WindowSeconds is reported in every response, DefaultWindowSeconds when
	// unset; the stub stamps its answers at each multiple of it.
	WindowSeconds *int `json:"window_seconds,omitempty"`
	// Nodes maps a Kubernetes node name (a DNS-1123 subdomain) to its score
	// or metrics.
	Nodes map[string]Node `json:"nodes"`
	// Fault, when set, makes the stub misbehave: for chaos tests of the scheduler.
	Fault *Fault `json:"fault,omitempty"`
}

// Node is one node's entry. With Score set the metrics are only reported;
// without it, the score is derived from them.
type Node struct {
	Score         *float64 `json:"score,omitempty"`
	LatencyMs     *float64 `json:"latency_ms,omitempty"`
	BandwidthMbps *float64 `json:"bandwidth_mbps,omitempty"`
	PacketLoss    *float64 `json:"packet_loss,omitempty"`
}

// Parse decodes and validates a scenario. Unknown fields are errors; every
// error names the file and the field.
func Parse(name string, data []byte) (*Scenario, error) {
	var s Scenario
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("scenario %s: file is empty", name)
	}
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	if errs := s.validate(); len(errs) > 0 {
		return nil, fmt.Errorf("scenario %s: %w", name, errs.ToAggregate())
	}
	if s.Source == "" {
		s.Source = filepath.Base(name)
	}
	return &s, nil
}

func (s *Scenario) validate() field.ErrorList {
	var errs field.ErrorList
	if s.Nodes == nil {
		errs = append(errs, field.Required(field.NewPath("nodes"), "a map of node name to score or metrics"))
	}
	if s.WindowSeconds != nil && *s.WindowSeconds < 1 {
		errs = append(errs, field.Invalid(field.NewPath("window_seconds"), *s.WindowSeconds, "must be at least 1"))
	}
	for _, name := range sortedNames(s.Nodes) {
		p := field.NewPath("nodes").Key(name)
		// What the API server enforces for a Node's name.
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			// Quoted, so the error shows an empty name or control characters.
			p = field.NewPath("nodes").Key(strconv.Quote(name))
			errs = append(errs, field.Invalid(p, name, strings.Join(msgs, "; ")))
		}
		errs = append(errs, s.Nodes[name].validate(p)...)
	}
	if s.Fault != nil {
		errs = append(errs, s.Fault.validate(field.NewPath("fault"))...)
	}
	return errs
}

func (n Node) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	finite := func(name string, v *float64) bool {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0)) {
			errs = append(errs, field.Invalid(p.Child(name), *v, "must be a finite number"))
			return false
		}
		return v != nil
	}
	finite("score", n.Score)
	if finite("latency_ms", n.LatencyMs) && *n.LatencyMs < 0 {
		errs = append(errs, field.Invalid(p.Child("latency_ms"), *n.LatencyMs, "must not be negative"))
	}
	if finite("bandwidth_mbps", n.BandwidthMbps) && *n.BandwidthMbps < 0 {
		errs = append(errs, field.Invalid(p.Child("bandwidth_mbps"), *n.BandwidthMbps, "must not be negative"))
	}
	if finite("packet_loss", n.PacketLoss) && (*n.PacketLoss < 0 || *n.PacketLoss > 1) {
		errs = append(errs, field.Invalid(p.Child("packet_loss"), *n.PacketLoss, "must be between 0 and 1"))
	}
	if n.Score == nil && n.LatencyMs == nil && n.BandwidthMbps == nil && n.PacketLoss == nil {
		errs = append(errs, field.Required(p, "a score or at least one of latency_ms, bandwidth_mbps, packet_loss"))
	}
	return errs
}

// DerivedScore applies the package's formula to the node's metrics.
func DerivedScore(n Node) float64 {
	score := 1.0
	if n.PacketLoss != nil {
		score *= 1 - *n.PacketLoss
	}
	if n.BandwidthMbps != nil {
		score *= math.Min(*n.BandwidthMbps/1000, 1)
	}
	if n.LatencyMs != nil {
		score *= 10 / (10 + *n.LatencyMs)
	}
	return score
}

// Window is the sampling window the scenario reports, in seconds:
// DefaultWindowSeconds for a nil scenario or one that names none.
func (s *Scenario) Window() int {
	if s == nil || s.WindowSeconds == nil {
		return DefaultWindowSeconds
	}
	return *s.WindowSeconds
}

// Response builds the /simulate answer for a scenario sampled at sampledAt.
// A nil scenario gives empty results.
func Response(s *Scenario, sampledAt time.Time) api.SimulationResponse {
	resp := api.SimulationResponse{
		Results:       map[string]api.NodeResult{},
		Timestamp:     sampledAt.UTC().Truncate(time.Second),
		WindowSeconds: s.Window(),
		Source:        "none",
	}
	if s == nil {
		return resp
	}
	resp.Source = s.Source
	for name, n := range s.Nodes {
		resp.Results[name] = n.result()
	}
	return resp
}

// result is the node's /simulate entry: its score, or the score derived
// from its metrics, and the metrics.
func (n Node) result() api.NodeResult {
	r := api.NodeResult{LatencyMs: n.LatencyMs, BandwidthMbps: n.BandwidthMbps, PacketLoss: n.PacketLoss}
	if n.Score != nil {
		r.Score = *n.Score
	} else {
		r.Score = DerivedScore(n)
	}
	return r
}

func sortedNames(m map[string]Node) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
