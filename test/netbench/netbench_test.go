package netbench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestClientAgainstServer(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	c := Client{Server: srv.URL, ObjectBytes: 100 << 10, ObjectsPerSecond: 20,
		PingInterval: 20 * time.Millisecond, PingTimeout: time.Second, Duration: time.Second}
	r := c.Run(context.Background(), "n1")
	// 20 objects a second for a second, paced: about 20, never many more.
	if r.Objects < 10 || r.Objects > 22 || r.Bytes != int64(r.Objects)*100<<10 {
		t.Errorf("%d objects, %d bytes; want about 20 of 100 KiB", r.Objects, r.Bytes)
	}
	if len(r.PingMs) < 20 || r.PingFailed != 0 || r.Node != "n1" {
		t.Errorf("%d pings, %d failed, node %q; want about 50, none, n1", len(r.PingMs), r.PingFailed, r.Node)
	}
}

func TestObjectBounds(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	for q, want := range map[string]int{"bytes=10": 200, "bytes=-1": 400, "bytes=99999999999": 400, "": 400} {
		resp, err := http.Get(srv.URL + "/object?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("/object?%s: %d, want %d", q, resp.StatusCode, want)
		}
	}
}

// TestBarrier checks that the clients at a barrier start only once all of
// them are there, together, and that a bad barrier is refused.
func TestBarrier(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	const size = 3
	released := make(chan error, size)
	for range size - 1 {
		go func() {
			released <- Client{Server: srv.URL, Barrier: "run-1", BarrierSize: size}.Await(context.Background())
		}()
	}
	select {
	case err := <-released:
		t.Fatalf("a client passed the barrier with %d of %d there: %v", size-1, size, err)
	case <-time.After(200 * time.Millisecond):
	}
	// Another barrier's clients count for nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	if err := (Client{Server: srv.URL, Barrier: "run-2", BarrierSize: size}).Await(ctx); err == nil {
		t.Error("a client passed barrier run-2 alone")
	}
	cancel()
	if err := (Client{Server: srv.URL, Barrier: "run-1", BarrierSize: size}).Await(context.Background()); err != nil {
		t.Fatalf("the last client: %v", err)
	}
	for range size - 1 {
		select {
		case err := <-released:
			if err != nil {
				t.Errorf("a waiting client: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the waiting clients were not released when the last came")
		}
	}
	for q, want := range map[string]int{"name=a&size=0": 400, "size=2": 400, "name=a&size=1001": 400, "name=a&size=1": 200} {
		resp, err := http.Get(srv.URL + "/barrier?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("/barrier?%s: %d, want %d", q, resp.StatusCode, want)
		}
	}
}
