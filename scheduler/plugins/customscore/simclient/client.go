// Package simclient is CustomScorePlugin's client of the simulator: GET
// /simulate with retries and conditional requests (Client), and the loop
// that asks off the scheduling cycle (Poller). What an answer says is
// network's to read.
package simclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"kns3.dev/kns3/scheduler/plugins/network"
)

// Client calls GET /simulate with a per-attempt timeout, a bounded
// body and a fixed pause between attempts. It is safe for concurrent use:
// the prober and the background loop overlap requests.
//
// Every cycle asks the simulator. When it tagged its last answer with an
// ETag, the request carries If-None-Match, and a 304 answer reuses that
// answer's decoded results instead of sending and decoding the same body
// again. A simulator that ignores conditional requests always answers 200.
type Client struct {
	url string
	// shownURL is url without credentials, for logs and errors.
	shownURL     string
	retryDelay   time.Duration
	maxBodyBytes int64
	http         *http.Client
	rec          Recorder
	now          func() time.Time
	onNewAnswer  func(*network.Simulation)

	mu       sync.Mutex
	lastETag string
	last     *network.Simulation // decoded body of the answer tagged lastETag; read-only

	seen observed
}

// observed is what the client saw last, whichever caller asked (a cycle,
// the prober, the background loop): the published status reports it.
type observed struct {
	mu          sync.Mutex
	lastSuccess time.Time
	lastFailure time.Time
	lastErr     string
	newest      *network.Simulation
}

// Observed is what a Client saw last.
type Observed struct {
	LastSuccess, LastFailure time.Time
	// LastError is the last failure's.
	LastError string
	// Newest is the newest good simulation.
	Newest *network.Simulation
}

// Options configure a Client.
type Options struct {
	// URL is the /simulate URL; ShownURL the same without credentials,
	// for logs and errors.
	URL, ShownURL string
	// Timeout bounds dialing; each attempt is bounded by Fetch's timeout.
	Timeout time.Duration
	// RetryDelay is the pause between attempts.
	RetryDelay time.Duration
	// MaxBodyBytes bounds a body.
	MaxBodyBytes int64
	// OnNewAnswer, when set, hears each good answer that is not the one
	// before it (a 304 reuses that one), whichever caller asked. It runs on
	// the caller's goroutine and must not block.
	OnNewAnswer func(*network.Simulation)
}

// Recorder counts attempts by result (the Result* labels): the plugin's
// metrics.
type Recorder interface {
	Attempt(result string)
}

// New returns a client of the simulator o names.
func New(o Options, rec Recorder) *Client {
	return &Client{
		rec:          rec,
		now:          time.Now,
		onNewAnswer:  o.OnNewAnswer,
		url:          o.URL,
		shownURL:     o.ShownURL,
		retryDelay:   o.RetryDelay,
		maxBodyBytes: o.MaxBodyBytes,
		http: &http.Client{Transport: &http.Transport{
			// The simulator is co-located: never route it through an HTTP proxy
			// taken from the environment.
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     90 * time.Second,
		}},
	}
}

// Attempt results, the labels a Recorder counts attempts under.
const (
	ResultSuccess   = "success"
	ResultTimeout   = "timeout"
	ResultConnError = "connection_error"
	ResultHTTPError = "http_error"
	ResultTooLarge  = "body_too_large"
	ResultBadBody   = "invalid_body"
	// ResultCanceled: the caller's context ended first (a cycle that
	// ended, a probe abandoned); it says nothing about the simulator.
	ResultCanceled = "canceled"
)

// attemptError is a failed attempt with the result label it is counted under.
type attemptError struct {
	result string
	err    error
}

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

// Outcome is how a Fetch ended: how many attempts it made, and the result
// label (Result*) of its last attempt, which a Recorder counted it under;
// ResultCanceled when the caller's context ended, in an attempt or in the
// pause after one.
type Outcome struct {
	Attempts int
	Result   string
}

// Fetch makes up to attempts attempts, each limited to timeout, and returns
// the first good simulation, or the last attempt's error.
func (c *Client) Fetch(ctx context.Context, attempts int, timeout time.Duration) (*network.Simulation, Outcome, error) {
	logger := klog.FromContext(ctx)
	var lastErr error
	for i := 1; i <= attempts; i++ {
		if i > 1 {
			select {
			case <-ctx.Done():
				return nil, Outcome{Attempts: i - 1, Result: ResultCanceled}, fmt.Errorf("%w (after %d attempts: %w)", ctx.Err(), i-1, lastErr)
			case <-time.After(c.retryDelay):
			}
		}
		sim, err := c.attempt(ctx, timeout)
		c.observe(sim, err)
		if err == nil {
			c.rec.Attempt(ResultSuccess)
			return sim, Outcome{Attempts: i, Result: ResultSuccess}, nil
		}
		result := ResultConnError
		var ae *attemptError
		switch {
		case ctx.Err() != nil:
			result = ResultCanceled
		case errors.As(err, &ae):
			result = ae.result
		}
		c.rec.Attempt(result)
		logger.V(3).Info("Simulator attempt failed", "attempt", i, "of", attempts, "result", result, "err", err)
		lastErr = err
		if i == attempts {
			return nil, Outcome{Attempts: i, Result: result}, fmt.Errorf("GET %s failed after %d attempt(s): %w", c.shownURL, i, err)
		}
	}
	return nil, Outcome{Result: ResultConnError}, errors.New("no attempt made")
}

func (c *Client) attempt(ctx context.Context, timeout time.Duration) (*network.Simulation, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, &attemptError{ResultConnError, err}
	}
	req.Header.Set("Accept", "application/json")
	c.mu.Lock()
	etag, cached := c.lastETag, c.last
	c.mu.Unlock()
	if cached != nil {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &attemptError{classify(ctx, err), err}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		if cached == nil {
			return nil, &attemptError{ResultHTTPError, errors.New("304 Not Modified to an unconditional request")}
		}
		return cached, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Drain a little so the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, &attemptError{ResultHTTPError, fmt.Errorf("unexpected status %s", resp.Status)}
	}
	if resp.ContentLength > c.maxBodyBytes {
		return nil, &attemptError{ResultTooLarge, fmt.Errorf("body of %d bytes is over the %d-byte limit", resp.ContentLength, c.maxBodyBytes)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBodyBytes+1))
	if err != nil {
		return nil, &attemptError{classify(ctx, err), fmt.Errorf("reading body: %w", err)}
	}
	if int64(len(body)) > c.maxBodyBytes {
		return nil, &attemptError{ResultTooLarge, fmt.Errorf("body is over the %d-byte limit", c.maxBodyBytes)}
	}
	sim, err := network.Decode(body)
	if err != nil {
		return nil, &attemptError{ResultBadBody, err}
	}
	sim.Body = body
	c.remember(resp.Header.Get("ETag"), sim)
	return sim, nil
}

// observe records an attempt's outcome. A request cancelled by its caller
// (a cycle or loop that ended) says nothing about the simulator.
func (c *Client) observe(sim *network.Simulation, err error) {
	if err != nil && errors.Is(err, context.Canceled) {
		return
	}
	now := c.now()
	c.seen.mu.Lock()
	if err != nil {
		c.seen.lastFailure, c.seen.lastErr = now, err.Error()
		c.seen.mu.Unlock()
		return
	}
	isNew := sim != c.seen.newest
	c.seen.lastSuccess, c.seen.newest = now, sim
	c.seen.mu.Unlock()
	if isNew && c.onNewAnswer != nil {
		c.onNewAnswer(sim)
	}
}

// Observed returns what the client saw last.
func (c *Client) Observed() Observed {
	c.seen.mu.Lock()
	defer c.seen.mu.Unlock()
	return Observed{LastSuccess: c.seen.lastSuccess, LastFailure: c.seen.lastFailure, LastError: c.seen.lastErr, Newest: c.seen.newest}
}

// ShownURL is the /simulate URL without credentials, for logs and the
// published status.
func (c *Client) ShownURL() string { return c.shownURL }

// Close drops the idle keep-alive connections to the simulator.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
}

// remember keeps a tagged answer for the next conditional request; an
// untagged one clears it, so a simulator that stops sending ETags is never
// asked with a stale one.
func (c *Client) remember(etag string, sim *network.Simulation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if etag == "" {
		c.lastETag, c.last = "", nil
		return
	}
	c.lastETag, c.last = etag, sim
}

func classify(ctx context.Context, err error) string {
	var netErr net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return ResultTimeout
	}
	return ResultConnError
}
