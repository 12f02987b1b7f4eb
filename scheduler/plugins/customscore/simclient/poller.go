package simclient

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"kns3.dev/kns3/scheduler/plugins/network"
)

// Pauses between requests after a failure: 50ms, then doubling (100ms,
// 200ms, ...) up to the Poller's cap, each with up to 20% jitter added.
// This is the one place the backoff is said: the args' comments and the
// plugin's README point here. The first are short because an open
// breaker's cycles skip the simulator: while a flapping simulator (half its
// requests failing) is probed, pods are scheduled without it.
const (
	firstRetryPause = 50 * time.Millisecond
	retryFactor     = 2.0
	retryJitter     = 0.2
)

// Poller asks the simulator outside the scheduling cycle: the prober of an
// open breaker, and the loop of the background-refresh mode.
//
// A request starts when the schedule says, not when the previous one ends:
// a request stuck on a hung simulator never holds up the next, so the first
// answer after an outage is seen within one pause however long a request
// may wait. At most maxInFlight requests are out at once; past that the
// oldest is abandoned.
type Poller struct {
	client  *Client
	timeout time.Duration
	// okPause is the pause after a good answer (background mode's refresh
	// interval); 0, for the prober, which stops at the first answer it
	// takes, means maxPause after one it does not take (too slow).
	okPause time.Duration
	// maxPause caps the pauses after failures.
	maxPause    time.Duration
	maxInFlight int
}

// NewPoller returns a Poller asking through client, each request limited
// to timeout. After a good answer it pauses okPause (0 for the prober,
// which stops at the first answer it takes and pauses maxPause after one
// it does not); after failures it backs off (firstRetryPause) up to
// maxPause.
func NewPoller(client *Client, timeout, okPause, maxPause time.Duration) *Poller {
	// Enough requests to cover one timeout at the shortest steady pause, so
	// the limit only bites on a simulator that hangs every request.
	steady := maxPause
	if okPause > 0 {
		steady = min(steady, okPause)
	}
	n := int(timeout/max(steady, time.Millisecond)) + 3
	return &Poller{client: client, timeout: timeout, okPause: okPause, maxPause: maxPause, maxInFlight: min(n, 16)}
}

// Result is one request's outcome; Seq orders requests by their start,
// Took is how long it waited for the answer.
type Result struct {
	Seq  uint64
	Sim  *network.Simulation
	Err  error
	Took time.Duration
}

// Run polls until ctx ends or handle returns true. handle sees every
// result, in the order they arrive (a late answer may come after a newer
// one: compare Seq). inFlight, when set, is told each change in the number
// of requests out. Requests still out when run returns are cancelled and
// waited for.
func (p *Poller) Run(ctx context.Context, handle func(Result) (stop bool), inFlight func(n int)) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	results := make(chan Result)
	backoff := p.newBackoff()
	var seq uint64
	var out []request // oldest first
	lastOK := false
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			if len(out) >= p.maxInFlight {
				// Full of requests that may never answer: abandon the oldest
				// rather than wait for its timeout.
				out[0].cancel()
				out = out[1:]
			}
			seq++
			reqCtx, cancelReq := context.WithCancel(ctx)
			out = append(out, request{seq: seq, cancel: cancelReq})
			if inFlight != nil {
				inFlight(len(out))
			}
			wg.Add(1)
			go func(seq uint64) {
				defer wg.Done()
				defer cancelReq()
				start := time.Now()
				sim, _, err := p.client.Fetch(reqCtx, 1, p.timeout)
				select {
				case results <- Result{Seq: seq, Sim: sim, Err: err, Took: time.Since(start)}:
				case <-ctx.Done(): // run has returned: nobody reads results
				}
			}(seq)
			// Until an answer comes, the next request starts after this
			// pause: the one just started may never answer.
			if lastOK {
				timer.Reset(p.pauseAfterOK())
			} else {
				timer.Reset(backoff.Step())
			}
		case r := <-results:
			if i := slices.IndexFunc(out, func(q request) bool { return q.seq == r.Seq }); i >= 0 {
				out = slices.Delete(out, i, i+1)
			} else {
				continue // abandoned: its answer, if any, is too old to matter
			}
			if inFlight != nil {
				inFlight(len(out))
			}
			if handle(r) {
				return
			}
			if r.Err == nil {
				lastOK = true
				backoff = p.newBackoff()
				timer.Reset(p.pauseAfterOK())
			} else {
				lastOK = false
			}
		}
	}
}

type request struct {
	seq    uint64
	cancel context.CancelFunc
}

func (p *Poller) pauseAfterOK() time.Duration {
	if p.okPause > 0 {
		return p.okPause
	}
	return p.maxPause
}

func (p *Poller) newBackoff() wait.Backoff {
	return wait.Backoff{Duration: min(firstRetryPause, p.maxPause), Factor: retryFactor, Jitter: retryJitter, Steps: 64, Cap: p.maxPause}
}
