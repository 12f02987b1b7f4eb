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
