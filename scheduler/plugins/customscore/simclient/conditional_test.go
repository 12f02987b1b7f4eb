package simclient

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"kns3.dev/kns3/scheduler/plugins/internal/simtest"
	"kns3.dev/kns3/scheduler/plugins/network"
)

// etagServer serves body tagged etag (no tag when etag is ""), answering 304
// to a matching If-None-Match when honor is set. It records what it saw.
type etagServer struct {
	mu          sync.Mutex
	body, etag  string
	honor       bool
	conditional []string // If-None-Match of each request
	notModified int
}

func (s *etagServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inm := r.Header.Get("If-None-Match")
	s.conditional = append(s.conditional, inm)
	if s.etag != "" {
		w.Header().Set("ETag", s.etag)
	}
	if s.honor && s.etag != "" && inm == s.etag {
		s.notModified++
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write([]byte(s.body))
}

// seen returns a copy of what the server recorded: the handler writes it
// on the server's goroutines.
func (s *etagServer) seen() (conditional []string, notModified int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.conditional...), s.notModified
}

func (s *etagServer) set(body, etag string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.body, s.etag = body, etag
}

func TestConditionalRequests(t *testing.T) {
	srv := &etagServer{body: simtest.GoodBody, etag: `"v1"`, honor: true}
	ts, _ := simtest.CountingServer(t, func(_ int32, w http.ResponseWriter, r *http.Request) { srv.ServeHTTP(w, r) })
	c := testClient(ts.URL, nil)
	ctx := context.Background()

	first, _, err := c.Fetch(ctx, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	second, out, err := c.Fetch(ctx, 1, time.Second)
	result := out.Result
	if err != nil {
		t.Fatal(err)
	}
	if result != ResultSuccess {
		t.Errorf("result of a 304 = %q, want %q", result, ResultSuccess)
	}
	if second != first {
		t.Error("a 304 answer did not reuse the previous cycle's decoded results")
	}
	if conditional, notModified := srv.seen(); conditional[0] != "" || conditional[1] != `"v1"` || notModified != 1 {
		t.Errorf("If-None-Match sent %q, 304s %d; want [\"\" \"v1\"], 1", conditional, notModified)
	}

	// A new scenario: new tag, new body, decoded afresh.
	srv.set(`{"results":{"n1":{"score":0.2},"n2":{"score":0.7}}}`, `"v2"`)
	third, _, err := c.Fetch(ctx, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if third == first || third.Scores["n2"] != 700 || third.Scores["n1"] != 200 {
		t.Errorf("after a change got %v, want n1=200 n2=700", third.Scores)
	}

	// The simulator stops tagging: no conditional request after that.
	srv.set(simtest.GoodBody, "")
	if _, _, err := c.Fetch(ctx, 1, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Fetch(ctx, 1, time.Second); err != nil {
		t.Fatal(err)
	}
	if conditional, _ := srv.seen(); conditional[len(conditional)-1] != "" {
		got := conditional[len(conditional)-1]
		t.Errorf("If-None-Match %q sent after the simulator stopped sending ETags", got)
	}
}

// A simulator that ignores If-None-Match answers 200 every time: each cycle
// decodes its body, and the results are still right.
func TestConditionalRequestsIgnored(t *testing.T) {
	srv := &etagServer{body: simtest.GoodBody, etag: `"v1"`, honor: false}
	ts, _ := simtest.CountingServer(t, func(_ int32, w http.ResponseWriter, r *http.Request) { srv.ServeHTTP(w, r) })
	c := testClient(ts.URL, nil)
	var prev *network.Simulation
	for i := 0; i < 3; i++ {
		sim, _, err := c.Fetch(context.Background(), 1, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if sim == prev || sim.Scores["n1"] != 900 {
			t.Errorf("fetch %d: %v (reused: %v), want a fresh decode with n1=900", i, sim.Scores, sim == prev)
		}
		prev = sim
	}
	if _, notModified := srv.seen(); notModified != 0 {
		t.Errorf("%d 304s from a server that ignores conditional requests", notModified)
	}
}

func TestNotModifiedToUnconditionalRequest(t *testing.T) {
	ts, _ := simtest.CountingServer(t, func(_ int32, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotModified)
	})
	if _, out, err := testClient(ts.URL, nil).Fetch(context.Background(), 1, time.Second); err == nil || out.Result != ResultHTTPError {
		t.Errorf("fetch = %q, %v; want an http_error", out.Result, err)
	}
}

// OnNewAnswer hears each new answer once: not a 304's reuse of the last.
func TestOnNewAnswer(t *testing.T) {
	srv := &etagServer{body: simtest.GoodBody, etag: `"v1"`, honor: true}
	ts, _ := simtest.CountingServer(t, func(_ int32, w http.ResponseWriter, r *http.Request) { srv.ServeHTTP(w, r) })
	var heard []*network.Simulation
	c := testClient(ts.URL, func(o *testOptions) { o.OnNewAnswer = func(s *network.Simulation) { heard = append(heard, s) } })
	ctx := context.Background()
	first, _, err := c.Fetch(ctx, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Fetch(ctx, 1, time.Second); err != nil { // 304
		t.Fatal(err)
	}
	srv.set(`{"results":{"n1":{"score":0.2},"n2":{"score":0.7}}}`, `"v2"`)
	second, _, err := c.Fetch(ctx, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(heard) != 2 || heard[0] != first || heard[1] != second {
		t.Errorf("heard %d answer(s), want the first and the new one once each", len(heard))
	}
}
