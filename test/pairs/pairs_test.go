package pairs

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestStub(t *testing.T) {
	calls := 0
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"w1"`)
		if r.Header.Get("If-None-Match") == `"w1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"results": {"n2": {"score": 1}, "n1": {"score": 0.5}}, "window_seconds": 15}`))
	})
	stub := Wrap(next, func(nodes []string) *Answer {
		calls++
		a := Spread(nodes)
		a.Measured = []Pair{Measured(nodes[0], nodes[1], 5, 0.04)}
		return &a
	})
	srv := httptest.NewServer(stub)
	defer srv.Close()

	for range 2 {
		resp, err := http.Get(srv.URL + "/simulate")
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Results map[string]any
			Pairs   Answer
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.Header.Get("ETag") != `"w1"` {
			t.Fatalf("answer: %v, ETag %q", err, resp.Header.Get("ETag"))
		}
		if len(body.Results) != 2 || len(body.Pairs.Coordinates) != 2 || len(body.Pairs.Measured) != 1 || body.Pairs.Measured[0].From != "n1" {
			t.Errorf("answer %+v, want both nodes' results and coordinates and the n1–n2 pair", body)
		}
	}
	if calls != 1 {
		t.Errorf("the pairs of one answer were made %d times, want once", calls)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/simulate", nil)
	req.Header.Set("If-None-Match", `"w1"`)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNotModified {
		t.Errorf("a conditional request: %v %v, want 304", resp, err)
	}

	for _, body := range []string{`{"nodes": ["n1", "n2"]}`, `{"nodes": []}`, `{"names": ["n1"]}`} {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/pairs/interest", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := http.StatusNoContent
		if strings.Contains(body, "names") {
			want = http.StatusUnprocessableEntity
		}
		if resp.StatusCode != want {
			t.Errorf("PUT %s: %s, want %d", body, resp.Status, want)
		}
	}
	if got := stub.Interests(); len(got) != 2 || strings.Join(got[0], ",") != "n1,n2" || len(got[1]) != 0 {
		t.Errorf("interests %q, want [n1 n2] then []", got)
	}
}
