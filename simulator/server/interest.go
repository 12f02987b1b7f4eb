package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"kns3.dev/kns3/simulator/api"
)

const (
	// maxInterestBody is the largest PUT /pairs/interest body taken.
	maxInterestBody = 1 << 20
	// maxInterestNodes is the most nodes one PUT /pairs/interest names.
	maxInterestNodes = 5000
	// interestReadTimeout bounds reading the body: the simulator listens
	// on loopback, and its one client sends a few kilobytes.
	interestReadTimeout = 5 * time.Second
)

// pairsInterest takes PUT /pairs/interest: {"nodes": [...]}, the nodes
// that host pods other pods talk to. It answers 204, or 422 with the
// validation errors FastAPI would give: a body over maxInterestBody or
// not JSON, no nodes list, more than maxInterestNodes, or a name that is
// not a DNS-1123 subdomain.
func (s *Server) pairsInterest(w http.ResponseWriter, r *http.Request) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(interestReadTimeout))
	body, err := io.ReadAll(io.LimitReader(r.Body, maxInterestBody+1))
	if err != nil {
		writeInvalid(w, api.ValidationError{Loc: []any{"body"}, Msg: "Reading the body failed: " + err.Error(), Type: "body_read"})
		return
	}
	nodes, errs := parseInterest(body)
	if len(errs) > 0 {
		writeInvalid(w, errs...)
		return
	}
	s.mu.RLock()
	interest := s.interest
	s.mu.RUnlock()
	if interest != nil {
		interest(nodes)
	}
	klog.FromContext(r.Context()).V(4).Info("Pairs of interest", "nodes", len(nodes))
	w.WriteHeader(http.StatusNoContent)
}

// parseInterest reads a PUT /pairs/interest body, or says what is wrong
// with it, as FastAPI's validation errors.
func parseInterest(body []byte) ([]string, []api.ValidationError) {
	if len(body) > maxInterestBody {
		return nil, []api.ValidationError{{Loc: []any{"body"}, Msg: fmt.Sprintf("Body should be at most %d bytes", maxInterestBody), Type: "too_long"}}
	}
	var req struct {
		Nodes *[]string `json:"nodes"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			loc := []any{"body"}
			for _, f := range strings.Split(typeErr.Field, ".") {
				loc = append(loc, f)
			}
			return nil, []api.ValidationError{{Loc: loc, Msg: "Input should be a valid " + typeErr.Type.String(), Type: "type_error"}}
		}
		return nil, []api.ValidationError{{Loc: []any{"body"}, Msg: "JSON decode error: " + err.Error(), Type: "json_invalid"}}
	}
	if req.Nodes == nil {
		return nil, []api.ValidationError{{Loc: []any{"body", "nodes"}, Msg: "Field required", Type: "missing"}}
	}
	nodes := *req.Nodes
	if len(nodes) > maxInterestNodes {
		return nil, []api.ValidationError{{Loc: []any{"body", "nodes"}, Msg: fmt.Sprintf("List should have at most %d items after validation, not %d", maxInterestNodes, len(nodes)), Type: "too_long"}}
	}
	var errs []api.ValidationError
	for i, n := range nodes {
		if msgs := validation.IsDNS1123Subdomain(n); len(msgs) > 0 {
			errs = append(errs, api.ValidationError{Loc: []any{"body", "nodes", i}, Msg: strings.Join(msgs, "; "), Type: "value_error"})
		}
	}
	return nodes, errs
}

// writeInvalid answers 422 with errs, as FastAPI does.
func writeInvalid(w http.ResponseWriter, errs ...api.ValidationError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnprocessableEntity)
	_ = json.NewEncoder(w).Encode(api.HTTPError{Detail: api.Detail{Errors: errs}})
}
