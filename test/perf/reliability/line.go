// Package reliability is the reliability benchmark's result line: the
// benchmark (BenchmarkReliability in test/integration) writes one JSON line
// per run, and test/perf/report reads them into docs/reliability.md.
package reliability

// Line is one run of one refresh mode under one simulator condition.
type Line struct {
	Mode      string `json:"mode"`
	Condition string `json:"condition"`
	Nodes     int    `json:"nodes"`
	QPS       int    `json:"scheduler_qps"`
	Pods      int    `json:"pods"`
	// Bound is how many of the pods were bound; nil on a line that does
	// not say.
	Bound   *int    `json:"bound"`
	Seconds float64 `json:"seconds"`
	// CreateS runs from the first create's start to the last create's return.
	CreateS    float64            `json:"create_s"`
	PodsPerS   float64            `json:"pods_per_s"`
	P50S       float64            `json:"p50_s"`
	P99S       float64            `json:"p99_s"`
	AwareShare float64            `json:"aware_share"`
	Scored     float64            `json:"scored_cycles"`
	Fallbacks  map[string]float64 `json:"fallbacks"`
	// RecoveryS runs from the simulator answering again after the burst to
	// the binding of the first pod ranked from a simulation (fault cases).
	RecoveryS *float64 `json:"recovery_s,omitempty"`
	Note      string   `json:"note,omitempty"`
}
