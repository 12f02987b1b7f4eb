package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"kns3.dev/kns3/simulator/api"
)

// put sends body to path with PUT.
func put(t *testing.T, srv *httptest.Server, path, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestPairsInterest checks PUT /pairs/interest: the names reach the
// simulator's measurements, 204; a body it cannot take is 422 with
// FastAPI's validation errors, naming where, and reaches nothing.
func TestPairsInterest(t *testing.T) {
	s := New()
	var mu sync.Mutex
	var got [][]string
	given := func() [][]string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
	s.SetPairInterest(func(nodes []string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, nodes)
	})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	resp, body := put(t, srv, "/pairs/interest", `{"nodes": ["worker-1", "worker-2.zone-a"]}`)
	if resp.StatusCode != http.StatusNoContent || body != "" {
		t.Fatalf("a good body: %d %q, want 204 and no body", resp.StatusCode, body)
	}
	if g := given(); len(g) != 1 || !slices.Equal(g[0], []string{"worker-1", "worker-2.zone-a"}) {
		t.Errorf("the simulator was given %v", g)
	}
	if resp, _ := put(t, srv, "/pairs/interest", `{"nodes": []}`); resp.StatusCode != http.StatusNoContent {
		t.Errorf("no nodes of interest: %d, want 204", resp.StatusCode)
	}

	many := make([]string, maxInterestNodes+1)
	for i := range many {
		many[i] = fmt.Sprintf("node-%d", i)
	}
	manyBody, _ := json.Marshal(api.PairsInterest{Nodes: many})
	huge := `{"nodes": ["` + strings.Repeat("a", maxInterestBody) + `"]}`
	for _, tc := range []struct {
		name, body string
		loc        string
		typ        string
	}{
		{"not JSON", `{"nodes": [`, "body", "json_invalid"},
		{"no nodes", `{"names": ["a"]}`, "body.nodes", "missing"},
		{"nodes not a list", `{"nodes": "worker-1"}`, "body.nodes", "type_error"},
		{"a name that is no node's", `{"nodes": ["worker-1", "Worker_2"]}`, "body.nodes.1", "value_error"},
		{"more than 5,000 names", string(manyBody), "body.nodes", "too_long"},
		{"over 1 MiB", huge, "body", "too_long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(given())
			resp, body := put(t, srv, "/pairs/interest", tc.body)
			if resp.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("%d %s, want 422", resp.StatusCode, body)
			}
			var e api.HTTPError
			if err := json.Unmarshal([]byte(body), &e); err != nil || len(e.Detail.Errors) != 1 {
				t.Fatalf("body %s (%v): want FastAPI's list of one validation error", body, err)
			}
			v := e.Detail.Errors[0]
			loc := make([]string, len(v.Loc))
			for i, l := range v.Loc {
				loc[i] = fmt.Sprint(l)
			}
			if strings.Join(loc, ".") != tc.loc || v.Type != tc.typ || v.Msg == "" {
				t.Errorf("validation error %+v, want at %s of type %s", v, tc.loc, tc.typ)
			}
			if len(given()) != before {
				t.Error("a refused body reached the simulator")
			}
		})
	}
}

// TestPairsInterestWithoutMeasurements: a simulator that measures nothing
// takes the interest, and drops it.
func TestPairsInterestWithoutMeasurements(t *testing.T) {
	srv := httptest.NewServer(New().Handler())
	defer srv.Close()
	if resp, body := put(t, srv, "/pairs/interest", `{"nodes": ["worker-1"]}`); resp.StatusCode != http.StatusNoContent {
		t.Errorf("%d %s, want 204", resp.StatusCode, body)
	}
}
