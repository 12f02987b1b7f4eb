// Package server serves the simulator API: GET /simulate, GET /healthz and
// GET /openapi.json, with FastAPI's conventions for errors so the stub and
// the production simulator are interchangeable behind one URL.
package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

	mu    sync.RWMutex
	body  []byte
	etag  string
	fault *scenario.Fault
}

// New returns a server with no scenario: /simulate answers empty results.
func New() *Server {
	s := &Server{now: time.Now}
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
		if fault.DelayMs > 0 {
			select {
			case <-time.After(time.Duration(fault.DelayMs) * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		if fault.Status != 0 {
			writeError(w, fault.Status, "Simulation failed (fault injected by the scenario)")
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
