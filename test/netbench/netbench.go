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
	// PingInterval is how often a small call is made; PingTimeout counts
	// a call as failed.
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
	if c.Barrier == "" {
		return nil
	}
	if err := c.Service.Await(ctx, c.Barrier, c.BarrierSize); err != nil {
		return fmt.Errorf("waiting for %d clients at barrier %q: %w", c.BarrierSize, c.Barrier, err)
	}
	return nil
}

// ping makes a small call every PingInterval from start until ctx's
// deadline, into res. A call's latency counts from when it was due, not
// from when it went out: the calls a slow one held up waited all that
// time too, and go out as soon as it is answered. Timed from their own
// start they would count a stall once, however many calls it held up
// (coordinated omission). A call that could not be answered within
// PingTimeout of when it was due fails.
func (c Client) ping(ctx context.Context, start time.Time, res *Result) {
	end, _ := ctx.Deadline()
	for due := start.Add(c.PingInterval); due.Before(end); due = due.Add(c.PingInterval) {
		if wait := time.Until(due); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		deadline := due.Add(c.PingTimeout)
		if !time.Now().Before(deadline) {
			// Held up past its timeout before it could go out.
			res.PingFailed++
			continue
		}
		pingCtx, cancelPing := context.WithDeadline(ctx, deadline)
		err := c.Service.Ping(pingCtx)
		cancelPing()
		if err != nil {
			if ctx.Err() != nil || !time.Now().Before(end) {
				// Cut off by the run's end, not failed: a Redis call
				// can time out at the deadline before the context
				// says it is done.
				return
			}
			res.PingFailed++
			continue
		}
		res.PingMs = append(res.PingMs, float64(time.Since(due).Microseconds())/1000)
	}
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
	ctx, cancel := context.WithTimeout(ctx, c.Duration)
	defer cancel()
	res := Result{Node: node, PingLimit: float64(c.PingTimeout) / float64(time.Millisecond)}
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.ping(ctx, start, &res)
	}()
	every := time.Duration(float64(time.Second) / c.ObjectsPerSecond)
	for next := start; ctx.Err() == nil; {
		if err := c.Service.Fetch(ctx, c.ObjectBytes); err == nil {
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

// Print writes r as one JSON line.
func (r Result) Print(w io.Writer) error {
	return json.NewEncoder(w).Encode(r)
}
