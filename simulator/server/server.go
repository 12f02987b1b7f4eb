// Package server serves the simulator API: GET /simulate, GET /healthz and
// GET /openapi.json, with FastAPI's conventions for errors so the stub and
// the production simulator are interchangeable behind one URL.
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
// once per scenario, so a request costs a copy, not an encode.
type Server struct {
	now func() time.Time
	// rand draws in [0, 1) whether a request fails under fault.error_rate.
	rand func() float64

	// stop is closed by Close, releasing the requests a fault holds.
	stop      chan struct{}
	closeOnce sync.Once

	mu    sync.RWMutex
	body  []byte
	etag  string
	fault *scenario.Fault
}

// New returns a server with no scenario: /simulate answers empty results.
func New() *Server {
	s := &Server{now: time.Now, rand: rand.Float64, stop: make(chan struct{})}
	s.SetScenario(nil)
	return s
}

// SetScenario replaces the scenario being served; nil serves empty results.
func (s *Server) SetScenario(sc *scenario.Scenario) {
	body, err := json.Marshal(scenario.Response(sc, s.now()))
	if err != nil {
		// Parse rejects non-finite numbers, the only values json cannot encode.
		panic(err)
	}
	sum := sha256.Sum256(body)
	var fault *scenario.Fault
	if sc != nil {
		fault = sc.Fault
	}
	s.mu.Lock()
	s.body, s.etag, s.fault = body, `"`+hex.EncodeToString(sum[:12])+`"`, fault
	s.mu.Unlock()
}

// Close releases the /simulate requests the server holds, hung by
// fault.hang or waiting out fault.delay_ms, by dropping their connections
// unanswered, as a stopped process would; from then on such requests are
// dropped at once. Call it before http.Server.Shutdown, which waits for every
// handler to return. Closing twice is harmless.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.stop) })
}

// Handler routes the API.
func (s *Server) Handler() http.Handler {
	routes := map[string]http.HandlerFunc{
		"/simulate":     s.simulate,
		"/healthz":      healthz,
		"/openapi.json": openapi,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := routes[r.URL.Path]
		if !ok {
			writeError(w, http.StatusNotFound, "Not Found")
			return
		}
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			writeError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
			return
		}
		h(w, r)
	})
}

func (s *Server) simulate(w http.ResponseWriter, r *http.Request) {
	s.mu.RLock()
	body, etag, fault := s.body, s.etag, s.fault
	s.mu.RUnlock()
	if fault != nil {
		// The fault is the one in force when the request arrived: a hung
		// request stays hung whatever the scenario becomes, as the stuck
		// requests of a hung process do.
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

func healthz(w http.ResponseWriter, _ *http.Request) {
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
	_ = json.NewEncoder(w).Encode(api.HTTPError{Detail: detail})
}
