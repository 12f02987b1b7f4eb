// Package netbench is the value benchmark's workload: a client that
// fetches objects at a steady rate and times small calls, as a user's
// clients of a service would, against netbench's own HTTP server or a
// Redis server. The client prints one Result line of JSON when done.
package netbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Service is what a client measures: the netbench HTTP server (NewHTTP)
// or a Redis server (NewRedis).
type Service interface {
	// Prepare makes the object of bytes ready to fetch.
	Prepare(ctx context.Context, bytes int) error
	// Await waits at the barrier name until size clients have come.
	Await(ctx context.Context, name string, size int) error
	// Fetch fetches the object of bytes, whole.
	Fetch(ctx context.Context, bytes int) error
	// Ping makes one small call.
	Ping(ctx context.Context) error
	Close() error
}

// Client is one client's workload.
type Client struct {
	Service Service
	// ObjectBytes and ObjectsPerSecond: the client fetches an object of
	// ObjectBytes every 1/ObjectsPerSecond, or as soon as the last one is
	// in when it took longer.
	ObjectBytes      int
	ObjectsPerSecond float64
	// PingInterval is how often a small call falls due; PingTimeout after
	// it is due, it has failed.
	PingInterval, PingTimeout time.Duration
	Duration                  time.Duration
	// Barrier, when set, is the server's barrier the client waits at
	// before it starts, with BarrierSize clients.
	Barrier     string
	BarrierSize int
}

// Ready prepares the client's object and waits at its barrier, if it has
// one, until all its clients are there.
func (c Client) Ready(ctx context.Context) error {
	if err := c.Service.Prepare(ctx, c.ObjectBytes); err != nil {
		return err
	}
	if err := c.openPingConnections(ctx); err != nil {
		return err
	}
	if c.Barrier == "" {
		return nil
	}
	if err := c.Service.Await(ctx, c.Barrier, c.BarrierSize); err != nil {
		return fmt.Errorf("waiting for %d clients at barrier %q: %w", c.BarrierSize, c.Barrier, err)
	}
	return nil
}

// PingConnections is how many connections a client keeps open for its
// small calls: enough for a call every 20 ms to be answered within 640 ms
// without one call waiting for a connection another holds. Past that a
// call waits for one, or opens one, and the wait counts in its latency.
const PingConnections = 32

// ping makes a small call every PingInterval from start until end, each
// as it falls due, whether or not the calls before it are answered, as a
// service's users make them, on a connection no other call holds. A
// call's latency counts from when it was due. Made one after the other,
// a slow call would hold up the calls due behind it, and would count
// once, however many it held up (coordinated omission). The calls in
// flight at end are waited for, up to PingTimeout: dropping them would
// drop the slowest.
func (c Client) ping(ctx context.Context, start, end time.Time, res *Result) {
	var (
		mu       sync.Mutex
		inFlight sync.WaitGroup
	)
	defer inFlight.Wait()
	for due := start.Add(c.PingInterval); due.Before(end); due = due.Add(c.PingInterval) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(due)):
		}
		inFlight.Go(func() {
			callCtx, cancel := context.WithDeadline(ctx, due.Add(c.PingTimeout))
			err := c.Service.Ping(callCtx)
			cancel()
			took := float64(time.Since(due).Microseconds()) / 1000
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if ctx.Err() == nil {
					res.PingFailed++
				}
				return
			}
			res.PingMs = append(res.PingMs, took)
		})
	}
}

// openPingConnections opens the small calls' connections before the run,
// where opening one would count in a call's latency: PingConnections calls
// at once, each on a connection of its own.
func (c Client) openPingConnections(ctx context.Context) error {
	errs := make(chan error, PingConnections)
	for range PingConnections {
		go func() { errs <- c.Service.Ping(ctx) }()
	}
	var first error
	for range PingConnections {
		if err := <-errs; err != nil && first == nil {
			first = fmt.Errorf("opening the small calls' connections: %w", err)
		}
	}
	return first
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
	// PingMs are the small calls' latencies, each from when the call was
	// due; PingFailed how many failed or timed out (counted at
	// PingTimeout in the percentiles).
	PingMs     []float64 `json:"ping_ms"`
	PingFailed int       `json:"ping_failed"`
	PingLimit  float64   `json:"ping_limit_ms"`
}

// Run runs the workload for c.Duration.
func (c Client) Run(ctx context.Context, node string) Result {
	res := Result{Node: node, PingLimit: float64(c.PingTimeout) / float64(time.Millisecond)}
	start := time.Now()
	pingsDone := make(chan struct{})
	go func() {
		defer close(pingsDone)
		c.ping(ctx, start, start.Add(c.Duration), &res)
	}()
	// The calls in flight at the run's end go on (ping); the fetches stop.
	run, cancel := context.WithDeadline(ctx, start.Add(c.Duration))
	defer cancel()
	every := time.Duration(float64(time.Second) / c.ObjectsPerSecond)
	for next := start; run.Err() == nil; {
		if err := c.Service.Fetch(run, c.ObjectBytes); err == nil {
			res.Bytes += int64(c.ObjectBytes)
			res.Objects++
		}
		next = next.Add(every)
		select {
		case <-run.Done():
		case <-time.After(time.Until(next)):
		}
		if now := time.Now(); next.Before(now) {
			next = now
		}
	}
	res.Start, res.End = start, time.Now()
	<-pingsDone
	res.Seconds = res.End.Sub(start).Seconds()
	return res
}

// Print writes r as one JSON line.
func (r Result) Print(w io.Writer) error {
	return json.NewEncoder(w).Encode(r)
}
