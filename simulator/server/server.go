// Package server serves the simulator API: GET /simulate, GET /healthz,
// GET /readyz, GET /openapi.json and PUT /pairs/interest, with FastAPI's
// conventions for errors so the stub and the production simulator are
// interchangeable behind one URL.
//
// /healthz is the liveness check: it answers 200 whenever the process serves
// HTTP, whatever the scenario's fault. /readyz says whether /simulate can
// answer: 503 while the fault in force is hang or after Close, 200 otherwise,
// since a delayed or failed answer is still an answer.
//
// The scenario's numbers are static, so the timestamp /simulate reports is
// the end of the last complete sampling window they describe: the latest
// multiple of window_seconds (scenario.DefaultWindowSeconds when the scenario
// names none), in Unix time, at or before now. The body and its ETag change
// with the scenario and once per window, so a client asking more often gets
// 304 Not Modified within a window.
//
// With a live source (SetLive), the answer is the simulator's own
// measurements merged with the scenario (scenario.LiveResponse), stamped
// with when they were summarised; body and ETag change with them.
package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"kns3.dev/kns3/simulator/api"
	"kns3.dev/kns3/simulator/scenario"
)

// Server answers from the current scenario. The /simulate body is encoded
// once per scenario and window, by SetScenario or the window's first
// request, so a request costs a copy, not an encode.
type Server struct {
	// now is the clock that places the window boundaries.
	now func() time.Time
	// rand draws in [0, 1) whether a request fails under fault.error_rate.
	rand func() float64

	// stop is closed by Close, releasing the requests a fault holds and
	// making /readyz answer 503.
	stop      chan struct{}
	closeOnce sync.Once

	mu       sync.RWMutex
	scenario *scenario.Scenario
	fault    *scenario.Fault
	// stamp is the window boundary body reports as its timestamp.
	stamp time.Time
	body  []byte
	etag  string

	// live, when set, is the simulator's own measurements, and liveSeq
	// the sequence number of those body holds.
	live    func() (uint64, scenario.Measured)
	liveSeq uint64
	// interest, when set, takes the nodes PUT /pairs/interest names.
	interest func(nodes []string)
}

// New returns a server with no scenario: /simulate answers empty results.
func New() *Server {
	s := &Server{now: time.Now, rand: rand.Float64, stop: make(chan struct{})}
	s.SetScenario(nil)
	return s
}

// SetScenario replaces the scenario being served; nil serves empty results.
func (s *Server) SetScenario(sc *scenario.Scenario) {
	stamp := lastBoundary(s.now(), sc.Window())
	body, etag := encode(sc, stamp)
	var fault *scenario.Fault
	if sc != nil {
		fault = sc.Fault
	}
	s.mu.Lock()
	s.scenario, s.fault, s.stamp, s.body, s.etag = sc, fault, stamp, body, etag
	if s.live != nil {
		seq, m := s.live()
		s.body, s.etag = encodeLive(sc, m, s.now())
		s.liveSeq = seq
	}
	s.mu.Unlock()
}

// SetLive serves measurements from then on, merged with the scenario (see
// scenario.LiveResponse); measured returns them with a sequence number that
// changes when they do. Call it before serving.
func (s *Server) SetLive(measured func() (uint64, scenario.Measured)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live = measured
	seq, m := measured()
	s.body, s.etag = encodeLive(s.scenario, m, s.now())
	s.liveSeq = seq
}

// liveResponse is response for a server serving measurements: the body is
// encoded again when they or the scenario change.
func (s *Server) liveResponse() (body []byte, etag string) {
	seq, m := s.live()
	s.mu.RLock()
	body, etag, current := s.body, s.etag, seq == s.liveSeq
	s.mu.RUnlock()
	if current {
		return body, etag
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.body, s.etag = encodeLive(s.scenario, m, s.now())
	s.liveSeq = seq
	return s.body, s.etag
}

func encodeLive(sc *scenario.Scenario, m scenario.Measured, now time.Time) ([]byte, string) {
	if m.At.IsZero() {
		// Nothing summarised yet.
		m.At = now
	}
	if m.WindowSeconds == 0 {
		m.WindowSeconds = sc.Window()
	}
	return encodeBody(scenario.LiveResponse(sc, m))
}

// response returns the /simulate body and its ETag for the window now is in,
// encoding them on the window's first request. Until the next SetScenario
// the stamp never goes back, so a request that read the clock just before a
// boundary does not undo the encoding done for one that read it just after.
func (s *Server) response() (body []byte, etag string) {
	s.mu.RLock()
	live := s.live != nil
	s.mu.RUnlock()
	if live {
		return s.liveResponse()
	}
	now := s.now()
	s.mu.RLock()
	body, etag = s.body, s.etag
	stale := lastBoundary(now, s.scenario.Window()).After(s.stamp)
	s.mu.RUnlock()
	if !stale {
		return body, etag
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Another request, or SetScenario, may have encoded it meanwhile.
	if stamp := lastBoundary(now, s.scenario.Window()); stamp.After(s.stamp) {
		s.stamp = stamp
		s.body, s.etag = encode(s.scenario, stamp)
	}
	return s.body, s.etag
}

// encode returns the /simulate body for sc stamped at stamp, and its ETag.
func encode(sc *scenario.Scenario, stamp time.Time) (body []byte, etag string) {
	return encodeBody(scenario.Response(sc, stamp))
}

func encodeBody(resp api.SimulationResponse) (body []byte, etag string) {
	body, err := json.Marshal(resp)
	if err != nil {
		// Parse rejects non-finite numbers, the only values json cannot encode.
		panic(err)
	}
	sum := sha256.Sum256(body)
	return body, `"` + hex.EncodeToString(sum[:12]) + `"`
}

// lastBoundary is the latest multiple of windowSeconds, in Unix time, at or
// before now.
func lastBoundary(now time.Time, windowSeconds int) time.Time {
	w := max(int64(windowSeconds), 1)
	sec := now.Unix()
	r := sec % w
	if r < 0 {
		r += w
	}
	return time.Unix(sec-r, 0).UTC()
}

// Close releases the /simulate requests the server holds, hung by
// fault.hang or waiting out fault.delay_ms, by dropping their connections
// unanswered, as a stopped process would; from then on such requests are
// dropped at once and /readyz answers 503. Call it before
// http.Server.Shutdown, which waits for every handler to return. Closing
// twice is harmless.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.stop) })
}

// SetPairInterest hands the nodes each PUT /pairs/interest names to
// interest, which the simulator measures between; without it, the names
// are checked and dropped: there is nothing to measure with. Call it
// before serving.
func (s *Server) SetPairInterest(interest func(nodes []string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.interest = interest
}

// route is a path's one method and its handler.
type route struct {
	method string
	h      http.HandlerFunc
}

// Handler routes the API.
func (s *Server) Handler() http.Handler {
	routes := map[string]route{
		"/simulate":       {http.MethodGet, s.simulate},
		"/healthz":        {http.MethodGet, healthz},
		"/readyz":         {http.MethodGet, s.readyz},
		"/openapi.json":   {http.MethodGet, openapi},
		"/pairs/interest": {http.MethodPut, s.pairsInterest},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, ok := routes[r.URL.Path]
		if !ok {
			writeError(w, http.StatusNotFound, "Not Found")
			return
		}
		if r.Method != rt.method {
			w.Header().Set("Allow", rt.method)
			writeError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
			return
		}
		rt.h(w, r)
	})
}

func (s *Server) simulate(w http.ResponseWriter, r *http.Request) {
	s.mu.RLock()
	fault := s.fault
	s.mu.RUnlock()
	if fault != nil {
		// The fault is the one in force when the request arrived: a hung
		// request stays hung whatever the scenario becomes, as the stuck
		// requests of a hung process do. The body is the one in force when
		// the request is answered.
		var delay <-chan time.Time // nil, never ready, for hang
		if !fault.Hang && fault.DelayMs > 0 {
			timer := time.NewTimer(time.Duration(fault.DelayMs) * time.Millisecond)
			defer timer.Stop()
			delay = timer.C
		}
		if fault.Hang || delay != nil {
			select {
			case <-delay:
			case <-r.Context().Done():
				return
			case <-s.stop:
				// Drop the connection without an answer; net/http does not log this.
				panic(http.ErrAbortHandler)
			}
		}
		if status := fault.FailureStatus(); status != 0 && (fault.ErrorRate == nil || s.rand() < *fault.ErrorRate) {
			writeError(w, status, "Simulation failed (fault injected by the scenario)")
			return
		}
	}
	body, etag := s.response()
	w.Header().Set("ETag", etag)
	if matchesETag(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(body); err != nil {
		klog.FromContext(r.Context()).V(4).Info("Writing /simulate response failed", "err", err)
	}
}

func matchesETag(header, etag string) bool {
	for _, candidate := range strings.Split(header, ",") {
		if c := strings.TrimSpace(candidate); c == etag || c == "*" {
			return true
		}
	}
	return false
}

// healthz is the liveness check: the process serves HTTP.
func healthz(w http.ResponseWriter, _ *http.Request) {
	writeOK(w)
}

// readyz says whether /simulate can answer: not while the fault in force is
// hang, nor after Close.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	select {
	case <-s.stop:
		writeError(w, http.StatusServiceUnavailable, "Not ready: shutting down")
		return
	default:
	}
	s.mu.RLock()
	fault := s.fault
	s.mu.RUnlock()
	if fault != nil && fault.Hang {
		writeError(w, http.StatusServiceUnavailable, "Not ready: the scenario's fault is hang, /simulate does not answer")
		return
	}
	writeOK(w)
}

func writeOK(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok"))
}

func openapi(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(api.OpenAPIDocument)
}

func writeError(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(api.HTTPError{Detail: api.Detail{Message: detail}})
}
