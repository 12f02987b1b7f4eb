package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestFaultAnswers(t *testing.T) {
	tests := []struct {
		name   string
		fault  string
		rand   []float64 // the draws the server must make, in order
		want   []int     // the status of each request
		minDur time.Duration
	}{
		{"no fault block", "", nil, []int{200, 200}, 0},
		{"empty fault", "fault: {}", nil, []int{200, 200}, 0},
		{"status fails every request", "fault: {status: 503}", nil, []int{503, 503, 503}, 0},
		{"error_rate fails with 503", "fault: {error_rate: 0.5}", []float64{0.1, 0.9, 0.4, 0.6}, []int{503, 200, 503, 200}, 0},
		{"error_rate fails with status", "fault: {error_rate: 0.5, status: 500}", []float64{0.1, 0.9, 0.4, 0.6}, []int{500, 200, 500, 200}, 0},
		{"error_rate boundary succeeds", "fault: {error_rate: 0.5}", []float64{0.5, 0.49}, []int{200, 503}, 0},
		{"error_rate 1 always fails", "fault: {error_rate: 1}", []float64{0.999, 0}, []int{503, 503}, 0},
		{"delay then success", "fault: {delay_ms: 60}", nil, []int{200, 200}, 60 * time.Millisecond},
		{"delay then failure", "fault: {delay_ms: 60, status: 502}", nil, []int{502}, 60 * time.Millisecond},
		{"delay then error_rate", "fault: {delay_ms: 60, error_rate: 0.3}", []float64{0.2, 0.3}, []int{503, 200}, 60 * time.Millisecond},
		{"exit_code leaves requests alone", "fault: {exit_code: 3}", nil, []int{200}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New()
			draws := 0
			s.rand = func() float64 {
				defer func() { draws++ }()
				if draws >= len(tt.rand) {
					t.Errorf("draw %d: the test gives only %d", draws+1, len(tt.rand))
					return 0
				}
				return tt.rand[draws]
			}
			s.SetScenario(mustScenario(t, "nodes: {a: {score: 1}}\n"+tt.fault))
			srv := httptest.NewServer(s.Handler())
			defer srv.Close()
			defer s.Close()
			for i, want := range tt.want {
				start := time.Now()
				resp, body := get(t, srv, http.MethodGet, "/simulate", nil)
				if resp.StatusCode != want {
					t.Errorf("request %d: %d %s, want %d", i+1, resp.StatusCode, body, want)
				}
				if d := time.Since(start); d < tt.minDur {
					t.Errorf("request %d answered after %v, want at least %v", i+1, d, tt.minDur)
				}
			}
			if draws != len(tt.rand) {
				t.Errorf("%d draws, want %d", draws, len(tt.rand))
			}
			if resp, _ := get(t, srv, http.MethodGet, "/healthz", nil); resp.StatusCode != 200 {
				t.Errorf("healthz %d, want 200 whatever the fault", resp.StatusCode)
			}
		})
	}
}

// hangServer serves s with a hang fault and reports when a handler starts
// and returns.
func hangServer(t *testing.T) (s *Server, srv *httptest.Server, entered, returned chan struct{}) {
	t.Helper()
	s = New()
	s.SetScenario(mustScenario(t, "nodes: {a: {score: 1}}\nfault: {hang: true}"))
	entered, returned = make(chan struct{}, 10), make(chan struct{}, 10)
	h := s.Handler()
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/simulate" {
			entered <- struct{}{}
			defer func() { returned <- struct{}{} }()
		}
		h.ServeHTTP(w, r)
	}))
	// Cleanups run last first: release the hung handlers, then close the
	// test server, which waits for them.
	t.Cleanup(srv.Close)
	t.Cleanup(s.Close)
	return s, srv, entered, returned
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func assertHeld(t *testing.T, returned <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-returned:
		t.Fatalf("the hung request returned %s", what)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestHangUntilClientTimesOut(t *testing.T) {
	_, srv, entered, returned := hangServer(t)
	client := &http.Client{Timeout: 300 * time.Millisecond, Transport: srv.Client().Transport}
	errCh := make(chan error, 1)
	go func() {
		resp, err := client.Get(srv.URL + "/simulate")
		if err == nil {
			resp.Body.Close()
		}
		errCh <- err
	}()
	waitFor(t, entered, "the request")
	assertHeld(t, returned, "before its client gave up")
	var err error
	select {
	case err = <-errCh:
	case <-time.After(5 * time.Second):
		t.Fatal("the client's timeout did not end the request")
	}
	var netErr net.Error
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Errorf("client error %v, want a timeout", err)
	}
	waitFor(t, returned, "the handler to return after the client gave up")
}

func TestHangSurvivesScenarioChangeUntilCancelled(t *testing.T) {
	s, srv, entered, returned := hangServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errCh := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/simulate", nil)
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errCh <- err
	}()
	waitFor(t, entered, "the request")
	if resp, _ := get(t, srv, http.MethodGet, "/healthz", nil); resp.StatusCode != 200 {
		t.Errorf("healthz %d while hanging, want 200", resp.StatusCode)
	}
	if resp, _ := get(t, srv, http.MethodGet, "/readyz", nil); resp.StatusCode != 503 {
		t.Errorf("readyz %d while hanging, want 503", resp.StatusCode)
	}

	s.SetScenario(mustScenario(t, "nodes: {a: {score: 1}}"))
	if resp, _ := get(t, srv, http.MethodGet, "/readyz", nil); resp.StatusCode != 200 {
		t.Errorf("readyz %d after the hang was lifted, want 200 though held requests stay hung", resp.StatusCode)
	}
	if resp, body := get(t, srv, http.MethodGet, "/simulate", nil); resp.StatusCode != 200 {
		t.Errorf("a request after the scenario changed: %d %s, want 200", resp.StatusCode, body)
	}
	<-entered // that request's
	<-returned
	assertHeld(t, returned, "when the scenario changed")

	cancel()
	waitFor(t, returned, "the handler to return after the client cancelled")
	if err := <-errCh; !errors.Is(err, context.Canceled) {
		t.Errorf("client error %v, want context.Canceled", err)
	}
}

func TestCloseReleasesHeldRequests(t *testing.T) {
	for _, fault := range []string{"{hang: true}", "{delay_ms: 600000}"} {
		t.Run(fault, func(t *testing.T) {
			s, srv, entered, returned := hangServer(t)
			s.SetScenario(mustScenario(t, "nodes: {a: {score: 1}}\nfault: "+fault))
			errCh := make(chan error, 1)
			go func() {
				resp, err := srv.Client().Get(srv.URL + "/simulate")
				if err == nil {
					resp.Body.Close()
				}
				errCh <- err
			}()
			waitFor(t, entered, "the request")
			assertHeld(t, returned, "before Close")

			s.Close()
			waitFor(t, returned, "the handler to return after Close")
			select {
			case err := <-errCh:
				if err == nil {
					t.Error("a released request got an answer; want its connection dropped")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the client is still waiting after Close")
			}

			// Requests after Close are dropped at once; Close is idempotent.
			s.Close()
			start := time.Now()
			if resp, err := srv.Client().Get(srv.URL + "/simulate"); err == nil {
				resp.Body.Close()
				t.Errorf("a request after Close got %s", resp.Status)
			}
			<-entered
			<-returned
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("a request after Close took %v", d)
			}
		})
	}
}
