package probe

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"kns3.dev/kns3/simulator/probe/agent"
	"kns3.dev/kns3/simulator/probe/wire"
)

// answerOf is one echo answer's link reading for the link-use tests:
// read at agentSec by the agent's clock, answered at once, and received at
// proberSec by the prober's, which runs 500 s behind the agent's.
type answerOf struct {
	agentSec, proberSec float64
	rx, tx              uint64
	flags               byte
}

func secs(base time.Time, s float64) time.Time {
	return base.Add(time.Duration(s * float64(time.Second)))
}

// steady is n readings a second apart of a link carrying rxRate and
// txRate bytes a second, from agent second from.
func steady(from float64, n int, rxRate, txRate uint64) []answerOf {
	var out []answerOf
	for i := range n {
		s := from + float64(i)
		out = append(out, answerOf{s, s, uint64(s) * rxRate, uint64(s) * txRate, wire.LinkValid})
	}
	return out
}

// TestLinkUse feeds a target the link readings of its echo answers and
// checks the link use summarised from them: the larger of the received
// and sent rate between the window's first and last reading.
func TestLinkUse(t *testing.T) {
	agent0, prober0 := time.Unix(10_500, 0), time.Unix(10_000, 0)
	const window, maxAge = 30 * time.Second, 60 * time.Second
	const mb = 1_000_000 / 8 // bytes a second in 1 Mbit/s
	// 10 s at 100 Mbit/s in, then a counter back at 0: the node restarted.
	restarted := append(steady(0, 11, 100*mb, mb), steady(11, 11, 40*mb, mb)...)
	for i := 11; i < len(restarted); i++ {
		restarted[i].rx -= 11 * 40 * mb
		restarted[i].tx -= 11 * mb
	}
	withBackwards := append(steady(0, 6, 100*mb, 0), answerOf{3, 6.5, 200 * mb, 0, wire.LinkValid})
	withJump := append(steady(0, 6, 100*mb, 0), answerOf{5 + 120, 6, 1e12, 0, wire.LinkValid})
	for _, tc := range []struct {
		name    string
		answers []answerOf
		now     float64 // prober's clock
		want    float64 // -1: none
		samples int
		// refusedLast says the last answer's reading is refused: the
		// estimate is as of the one before.
		refusedLast bool
	}{
		{"100 Mbit/s received", steady(0, 11, 100*mb, 3*mb), 10, 100, 11, false},
		{"sent more than received", steady(0, 11, 3*mb, 250*mb), 10, 250, 11, false},
		{"every echo carries the same reading till the next", append(steady(0, 3, 8*mb, 0), steady(0, 3, 8*mb, 0)[2], steady(0, 3, 8*mb, 0)[2]), 2, 8, 3, false},
		{"one reading", steady(0, 1, 100*mb, 0), 0, -1, 0, false},
		{"two readings under a second apart", []answerOf{{0, 0, 0, 0, wire.LinkValid}, {0.5, 0.5, 50 * mb, 0, wire.LinkValid}}, 1, -1, 0, false},
		{"no counters", []answerOf{{0, 0, 0, 0, 0}, {1, 1, 100 * mb, 0, 0}, {2, 2, 200 * mb, 0, 0}}, 2, -1, 0, false},
		{"a counter went back: only the readings since", restarted, 21, 40, 11, false},
		{"a reading back in time is refused", withBackwards, 6.5, 100, 6, true},
		{"a reading a minute ahead of the prober's clock is refused", withJump, 6, 100, 6, true},
		{"the last window only: 10 Mbit/s, then 20", append(steady(0, 31, 10*mb, 0), func() []answerOf {
			out := steady(31, 30, 20*mb, 0)
			for i := range out {
				out[i].rx = 300*mb + (uint64(out[i].agentSec)-30)*20*mb
			}
			return out
		}()...), 60, 20, 0, false},
		{"the last reading older than the max age", steady(0, 11, 100*mb, 0), 10 + 61, -1, 0, false},
		{"the last reading as old as the max age", steady(0, 11, 100*mb, 0), 10 + 60, 100, 11, false},
		{"a window's silence starts afresh", append(steady(0, 3, 100*mb, 0), answerOf{40, 40, 2*100*mb + 10*mb, 0, wire.LinkValid}, answerOf{41, 41, 2*100*mb + 20*mb, 0, wire.LinkValid}), 41, 10, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tg target
			for _, a := range tc.answers {
				r := wire.LinkReading{RxBytes: a.rx, TxBytes: a.tx, At: secs(agent0, a.agentSec), Flags: a.flags}
				tg.addLink(r, r.At, secs(prober0, a.proberSec), window)
			}
			got, ok := linkUse(tg.link, secs(prober0, tc.now), maxAge)
			if tc.want < 0 {
				if ok {
					t.Errorf("link use %+v, want none", got)
				}
				return
			}
			if !ok || math.Abs(got.Value-tc.want) > 1e-6*tc.want || got.Low != got.Value || got.High != got.Value {
				t.Fatalf("link use %+v (%v), want %g Mbit/s, exactly", got, ok, tc.want)
			}
			if tc.samples > 0 && got.Samples != tc.samples {
				t.Errorf("%d samples, want %d", got.Samples, tc.samples)
			}
			last := tc.answers[len(tc.answers)-1]
			if tc.refusedLast {
				last = tc.answers[len(tc.answers)-2]
			}
			if !got.At.Equal(secs(prober0, last.proberSec)) {
				t.Errorf("measured at %s, want the last reading's time by the prober's clock, %s", got.At, secs(prober0, last.proberSec))
			}
		})
	}
}

// TestLinkReadingsBounded checks a node's readings stay few however long
// the window and however often echoes come, and that the reading's time
// by the prober's clock leaves out how long it waited in the agent.
func TestLinkReadingsBounded(t *testing.T) {
	agent0, prober0 := time.Unix(10_500, 0), time.Unix(10_000, 0)
	const window = 30 * time.Second
	var tg target
	for i := range 600 {
		at := secs(agent0, float64(i))
		r := wire.LinkReading{RxBytes: uint64(i) * 1000, At: at, Flags: wire.LinkValid}
		// Sent 400 ms after it was read, received 1 ms later.
		tg.addLink(r, at.Add(400*time.Millisecond), secs(prober0, float64(i)+0.401), window)
	}
	if n := len(tg.link); n > linkSpacing+2 {
		t.Errorf("%d readings kept, want at most %d", n, linkSpacing+2)
	}
	last := tg.link[len(tg.link)-1]
	if want := secs(prober0, 599.001); !last.at.Equal(want) {
		t.Errorf("last reading at %s by the prober's clock, want %s: received less the time it waited", last.at, want)
	}
	if span := last.agentAt.Sub(tg.link[0].agentAt); span > window || span < window-window/linkSpacing-time.Second {
		t.Errorf("readings span %s, want about the window %s", span, window)
	}
	e, ok := linkUse(tg.link, secs(prober0, 600), time.Minute)
	if want := 1000 * 8 / 1e6; !ok || math.Abs(e.Value-want) > 1e-9 {
		t.Errorf("link use %+v, want %g Mbit/s", e, want)
	}
}

// TestProberServesLinkUse runs an agent on loopback that reads counters
// from a directory laid out as sysfs, advancing as a link receiving
// 12.5 MB/s (100 Mbit/s) and sending 1 MB/s would, and checks the prober
// serves the node's link use as 100 Mbit/s.
func TestProberServesLinkUse(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "class", "net", "eth0", "statistics")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	advance := func() {
		s := time.Since(start).Seconds()
		for name, v := range map[string]uint64{"rx_bytes": 1<<40 + uint64(s*12.5e6), "tx_bytes": uint64(s * 1e6)} {
			// Written whole and renamed: the agent never reads half a number.
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path+".new", []byte(strconv.FormatUint(v, 10)+"\n"), 0o644); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(path+".new", path); err != nil {
				t.Error(err)
				return
			}
		}
	}
	advance()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
				advance()
			}
		}
	}()
	// Before the temp dir goes.
	t.Cleanup(func() { close(stop); <-stopped })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := startAgent(t, ctx, "n1", nil, func(a *agent.Agent) {
		if err := a.ReadLinkCounters(root, "eth0"); err != nil {
			t.Fatal(err)
		}
	})
	p, err := NewProber(Config{Key: testKey, Agents: StaticAgents([]string{addr}), Window: 3 * time.Second, Timeout: 200 * time.Millisecond, EchoesPerNodePerSecond: 100})
	if err != nil {
		t.Fatal(err)
	}
	go p.Run(ctx)
	var got *Estimate
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 15*time.Second, false, func(context.Context) (bool, error) {
		got = p.Snapshot().Nodes["n1"].LinkUseMbps
		return got != nil && got.Samples >= 3, nil
	}); err != nil {
		t.Fatalf("no link use served: %+v", got)
	}
	snap := p.Snapshot()
	got = snap.Nodes["n1"].LinkUseMbps
	t.Logf("link use %.2f Mbit/s from %d readings", got.Value, got.Samples)
	// The counters move every 2 ms, and the agent reads them at most once
	// a second: a few per cent.
	if math.Abs(got.Value-100) > 5 || got.Low != got.Value || got.High != got.Value {
		t.Errorf("link use %+v, want 100 Mbit/s ± 5, exactly as read", *got)
	}
	if age := snap.At.Sub(got.At); age < 0 || age > 2*time.Second {
		t.Errorf("link use measured %s before the snapshot, want within the agent's read interval", age)
	}
}
