// Package pairs gives the simulator stub of the integration and perf
// suites what the simulator says of the network between nodes: it wraps
// the stub's handler, adds a pairs key to each /simulate answer (each
// node's Vivaldi coordinate and the pairs measured directly, in the shape
// NetworkPeers reads), and takes PUT /pairs/interest, keeping what it was
// told.
package pairs

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
)

// Answer is an answer's pairs key.
type Answer struct {
	WindowSeconds int                   `json:"window_seconds"`
	Coordinates   map[string]Coordinate `json:"coordinates"`
	Measured      []Pair                `json:"measured"`
}

// Coordinate is one node's coordinate, in seconds, as serf's coordinate
// package has it.
type Coordinate struct {
	Vec        []float64 `json:"vec"`
	Error      float64   `json:"error"`
	Adjustment float64   `json:"adjustment"`
	Height     float64   `json:"height"`
	Samples    int       `json:"samples"`
	AgeSeconds float64   `json:"age_seconds"`
}

// Pair is one pair measured directly; nil where a metric was not.
type Pair struct {
	From          string    `json:"from"`
	To            string    `json:"to"`
	LatencyMs     *Estimate `json:"latency_ms,omitempty"`
	PacketLoss    *Estimate `json:"packet_loss,omitempty"`
	BandwidthMbps *Estimate `json:"bandwidth_mbps,omitempty"`
}

// Estimate is one measured metric of a pair.
type Estimate struct {
	Value      float64 `json:"value"`
	Low        float64 `json:"low"`
	High       float64 `json:"high"`
	Samples    int     `json:"samples"`
	AgeSeconds float64 `json:"age_seconds"`
}

// Measured is a pair measured just now: rttMs round trip and loss, each
// give or take a tenth.
func Measured(from, to string, rttMs, loss float64) Pair {
	return Pair{From: from, To: to,
		LatencyMs:  &Estimate{Value: rttMs, Low: rttMs * 0.9, High: rttMs * 1.1, Samples: 30, AgeSeconds: 1},
		PacketLoss: &Estimate{Value: loss, Low: loss * 0.9, High: loss * 1.1, Samples: 30, AgeSeconds: 1}}
}

// At is a coordinate xMs milliseconds along the first of eight axes, sure
// to a twentieth.
func At(xMs float64) Coordinate {
	vec := make([]float64, 8)
	vec[0] = xMs / 1000
	return Coordinate{Vec: vec, Error: 0.05, Height: 1e-5, Samples: 50, AgeSeconds: 1}
}

// Spread gives every node a coordinate of its own, from its name: up to a
// millisecond along each of eight axes, as a cluster of a few racks.
func Spread(nodes []string) Answer {
	a := Answer{WindowSeconds: 15, Coordinates: make(map[string]Coordinate, len(nodes))}
	for _, n := range nodes {
		h := fnv.New64a()
		_, _ = h.Write([]byte(n))
		sum := h.Sum64()
		vec := make([]float64, 8)
		for i := range vec {
			vec[i] = float64((sum>>(8*i))&0xff) / 255 / 1000
		}
		a.Coordinates[n] = Coordinate{Vec: vec, Error: 0.1, Height: 1e-5, Samples: 50, AgeSeconds: 1}
	}
	return a
}

// Stub serves its next handler, with the pairs key added to each /simulate
// answer, and takes PUT /pairs/interest.
type Stub struct {
	next http.Handler
	// pairs is the pairs key of an answer that names nodes; nil adds none.
	pairs func(nodes []string) *Answer

	mu sync.Mutex
	// etag and body are the last answer with its pairs: one window's
	// answers are the same, and made once.
	etag      string
	body      []byte
	interests [][]string
}

// Wrap serves next with pairs' key added to each /simulate answer. The
// answer's ETag stays next's: pairs must give the same key for the same
// nodes.
func Wrap(next http.Handler, pairs func(nodes []string) *Answer) *Stub {
	return &Stub{next: next, pairs: pairs}
}

// Interests are the lists of nodes PUT to /pairs/interest, oldest first.
func (s *Stub) Interests() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.interests...)
}

func (s *Stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/pairs/interest" && r.Method == http.MethodPut:
		var body struct {
			Nodes []string `json:"nodes"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil || body.Nodes == nil {
			http.Error(w, `{"detail": "want {\"nodes\": [...]}"}`, http.StatusUnprocessableEntity)
			return
		}
		s.mu.Lock()
		s.interests = append(s.interests, body.Nodes)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case r.URL.Path == "/simulate" && r.Method == http.MethodGet:
		s.simulate(w, r)
	default:
		s.next.ServeHTTP(w, r)
	}
}

// simulate answers as next does, with the pairs key added to a 200.
func (s *Stub) simulate(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	s.next.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	body := rec.Body.Bytes()
	if rec.Code == http.StatusOK {
		body = s.withPairs(rec.Header().Get("ETag"), body)
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

func (s *Stub) withPairs(etag string, body []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if etag != "" && etag == s.etag {
		return s.body
	}
	var answer map[string]json.RawMessage
	var results map[string]json.RawMessage
	if json.Unmarshal(body, &answer) != nil || json.Unmarshal(answer["results"], &results) != nil {
		return body
	}
	nodes := make([]string, 0, len(results))
	for n := range results {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	p := s.pairs(nodes)
	if p == nil {
		return body
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return body
	}
	answer["pairs"] = raw
	out, err := json.Marshal(answer)
	if err != nil {
		return body
	}
	s.etag, s.body = etag, out
	return out
}
