// Package netbench is the value benchmark's workload: a server of
// fixed-size objects and small calls, and a client that fetches objects at
// a steady rate and times small calls, as a user's service and its
// clients would. The client prints one Result line of JSON when done.
package netbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// MaxObjectBytes bounds what one /object request may ask for.
const MaxObjectBytes = 16 << 20

// MaxBarrierSize bounds how many clients one barrier waits for.
const MaxBarrierSize = 1000

// Handler serves GET /object?bytes=N (N bytes), GET /ping (a few bytes),
// and GET /barrier?name=B&size=N, which answers once N requests for B
// have come, so that the clients of one run start together however far
// apart their pods started.
func Handler() http.Handler {
	zeros := make([]byte, 64<<10)
	mux := http.NewServeMux()
	barriers := newBarriers()
	mux.HandleFunc("GET /barrier", func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("name")
		size, err := strconv.Atoi(r.URL.Query().Get("size"))
		if name == "" || err != nil || size < 1 || size > MaxBarrierSize {
			http.Error(w, fmt.Sprintf("want name and size, 1 to %d", MaxBarrierSize), http.StatusBadRequest)
			return
		}
		select {
		case <-barriers.arrive(name, size):
			_, _ = w.Write([]byte("go"))
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("GET /object", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("bytes"))
		if err != nil || n < 0 || n > MaxObjectBytes {
			http.Error(w, fmt.Sprintf("bytes: want 0 to %d", MaxObjectBytes), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(n))
		for n > 0 {
			k := min(n, len(zeros))
			if _, err := w.Write(zeros[:k]); err != nil {
				return
			}
			n -= k
		}
	})
	mux.HandleFunc("GET /ping", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("pong"))
	})
	return mux
}

// barriers are the named barriers: each releases its waiters once size
// of them have arrived, and every later arrival at once.
type barriers struct {
	mu     sync.Mutex
	byName map[string]*barrier
}

type barrier struct {
	arrived int
	open    chan struct{}
}

func newBarriers() *barriers { return &barriers{byName: map[string]*barrier{}} }

// arrive counts one arrival at name and returns what closes once size
// have arrived.
func (b *barriers) arrive(name string, size int) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	br := b.byName[name]
	if br == nil {
		br = &barrier{open: make(chan struct{})}
		b.byName[name] = br
	}
	br.arrived++
	if br.arrived == size {
		close(br.open)
	}
	return br.open
}

// Client is one client's workload.
type Client struct {
	// Server is the server's base URL.
	Server string
	// ObjectBytes and ObjectsPerSecond: the client fetches an object of
	// ObjectBytes every 1/ObjectsPerSecond, or as soon as the last one is
	// in when it took longer.
	ObjectBytes      int
	ObjectsPerSecond float64
	// PingInterval is how often a small call is made, on a connection of
	// its own; PingTimeout counts a call as failed.
	PingInterval, PingTimeout time.Duration
	Duration                  time.Duration
	// Barrier, when set, is the server's barrier the client waits at
	// before it starts, with BarrierSize clients.
	Barrier     string
	BarrierSize int
}

// Await waits at c's barrier, if it has one, until the server says all
// its clients are there.
func (c Client) Await(ctx context.Context) error {
	if c.Barrier == "" {
		return nil
	}
	q := url.Values{"name": {c.Barrier}, "size": {strconv.Itoa(c.BarrierSize)}}
	if err := get(ctx, http.DefaultClient, c.Server+"/barrier?"+q.Encode()); err != nil {
		return fmt.Errorf("waiting for %d clients at barrier %q: %w", c.BarrierSize, c.Barrier, err)
	}
	return nil
}

// Result is what a client measured.
type Result struct {
	Node string `json:"node"`
	// Bytes of whole objects fetched, in Seconds.
	Bytes   int64   `json:"bytes"`
	Objects int     `json:"objects"`
	Seconds float64 `json:"seconds"`
	// Start and End bound the run, so that a placement's throughput can
	// be taken over the span its clients ran in together.
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
	// PingMs are the small calls' latencies; PingFailed how many failed
	// or timed out (counted at PingTimeout in the percentiles).
	PingMs     []float64 `json:"ping_ms"`
	PingFailed int       `json:"ping_failed"`
	PingLimit  float64   `json:"ping_limit_ms"`
}

// Run runs the workload for c.Duration.
func (c Client) Run(ctx context.Context, node string) Result {
	ctx, cancel := context.WithTimeout(ctx, c.Duration)
	defer cancel()
	res := Result{Node: node, PingLimit: float64(c.PingTimeout) / float64(time.Millisecond)}
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pings := &http.Client{Timeout: c.PingTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
		tick := time.NewTicker(c.PingInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			t0 := time.Now()
			if err := get(ctx, pings, c.Server+"/ping"); err != nil {
				if ctx.Err() != nil {
					return
				}
				res.PingFailed++
				continue
			}
			res.PingMs = append(res.PingMs, float64(time.Since(t0).Microseconds())/1000)
		}
	}()
	objects := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	object := fmt.Sprintf("%s/object?bytes=%d", c.Server, c.ObjectBytes)
	every := time.Duration(float64(time.Second) / c.ObjectsPerSecond)
	for next := start; ctx.Err() == nil; {
		if err := get(ctx, objects, object); err == nil {
			res.Bytes += int64(c.ObjectBytes)
			res.Objects++
		}
		next = next.Add(every)
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(next)):
		}
		if now := time.Now(); next.Before(now) {
			next = now
		}
	}
	wg.Wait()
	res.Start, res.End = start, time.Now()
	res.Seconds = res.End.Sub(start).Seconds()
	return res
}

func get(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// Print writes r as one JSON line.
func (r Result) Print(w io.Writer) error {
	return json.NewEncoder(w).Encode(r)
}
