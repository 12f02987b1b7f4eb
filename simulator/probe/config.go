package probe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
)

// Config says how the prober finds agents and what it may spend.
type Config struct {
	// Agents returns the agents' addresses (host:port) now; it is called
	// once per window, and soon after an agent falls silent, so agents
	// come and go with their DaemonSet.
	Agents func(context.Context) ([]string, error)
	// Window is how far back latency and loss are summarised, and how
	// often at least every node's latency and loss are refreshed.
	Window time.Duration
	// BudgetBytesPerSecond bounds what probing sends and receives
	// together, on the wire.
	BudgetBytesPerSecond float64
	// EchoesPerNodePerSecond is the echo rate per node while the budget
	// allows it: more echoes resolve smaller losses.
	EchoesPerNodePerSecond float64
	// Timeout is how long an echo or a report may take before it counts
	// as lost; it covers a shaped link's queue.
	Timeout time.Duration
	// TrainPackets is how many packets a bandwidth train has.
	TrainPackets int
	// BandwidthMaxAge is how long a node's bandwidth sample stays its
	// bandwidth; older, the bandwidth is unknown. It is stretched at run
	// time to twice the time the budget needs to send every node a train,
	// so that a large cluster's nodes are not unknown by construction.
	BandwidthMaxAge time.Duration
	// Key authenticates every datagram the prober sends and takes: the
	// secret its agents hold too.
	Key *wire.Key
	// PairsPerNode is how many of its nearest nodes each node of interest
	// has measured directly (pairs.go); 0 measures no pair.
	PairsPerNode int
	// PairEchoesPerSecond is the echo rate of each pair measured directly.
	PairEchoesPerSecond int
}

// Defaults fills the zero fields of c.
func (c *Config) Defaults() {
	if c.Window == 0 {
		c.Window = 30 * time.Second
	}
	if c.BudgetBytesPerSecond == 0 {
		c.BudgetBytesPerSecond = DefaultBudgetBytesPerSecond
	}
	if c.EchoesPerNodePerSecond == 0 {
		c.EchoesPerNodePerSecond = 10
	}
	if c.Timeout == 0 {
		c.Timeout = time.Second
	}
	if c.TrainPackets == 0 {
		c.TrainPackets = 80
	}
	if c.BandwidthMaxAge == 0 {
		c.BandwidthMaxAge = DefaultBandwidthMaxAgeWindows * c.Window
	}
	if c.PairEchoesPerSecond == 0 {
		c.PairEchoesPerSecond = DefaultPairEchoesPerSecond
	}
}

// DefaultPairsPerNode is how many nearest nodes a node of interest has
// measured directly by default.
const DefaultPairsPerNode = 8

// DefaultPairEchoesPerSecond is a pair's echo rate by default: 750 echoes
// in a 15 s window, which tell 2 % loss from none.
const DefaultPairEchoesPerSecond = 50

// DefaultBudgetBytesPerSecond is 1 % of a 1 Gbit/s link.
const DefaultBudgetBytesPerSecond = 1e9 / 8 / 100

// DefaultBandwidthMaxAgeWindows is how many windows a bandwidth sample
// stays fresh by default.
const DefaultBandwidthMaxAgeWindows = 4

// MaxPairEchoesPerSecond is the most echoes a second a pair is measured
// with: what an agent sends one peer at most.
const MaxPairEchoesPerSecond = 100

// finite says v is a number, not NaN or an infinity.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Validate says what is wrong with c, naming the field.
func (c Config) Validate() error {
	switch {
	case c.Agents == nil:
		return errors.New("agents: no way to find the agents")
	case c.Key == nil:
		return errors.New("key: no probe key (the agents answer only what it signs)")
	case c.Window < time.Second:
		return fmt.Errorf("window: %s, want at least 1s", c.Window)
	case c.Timeout <= 0 || c.Timeout >= c.Window:
		return fmt.Errorf("timeout: %s, want more than 0 and less than the window (%s)", c.Timeout, c.Window)
	case !finite(c.BudgetBytesPerSecond) || c.BudgetBytesPerSecond < 1000:
		return fmt.Errorf("budget: %g bytes/s, want a number of at least 1000", c.BudgetBytesPerSecond)
	case !finite(c.EchoesPerNodePerSecond) || c.EchoesPerNodePerSecond <= 0 || c.EchoesPerNodePerSecond > 1000:
		return fmt.Errorf("echoes per node per second: %g, want more than 0 and at most 1000", c.EchoesPerNodePerSecond)
	case c.TrainPackets < wire.MinTrainPackets || c.TrainPackets > 1000:
		return fmt.Errorf("train packets: %d, want %d to 1000", c.TrainPackets, wire.MinTrainPackets)
	case c.BandwidthMaxAge < c.Window:
		return fmt.Errorf("bandwidth max age: %s, want at least the window (%s)", c.BandwidthMaxAge, c.Window)
	case c.PairsPerNode < 0 || c.PairsPerNode > wire.MaxPairPeers:
		return fmt.Errorf("pairs per node: %d, want 0 to %d", c.PairsPerNode, wire.MaxPairPeers)
	case c.PairEchoesPerSecond < 1 || c.PairEchoesPerSecond > MaxPairEchoesPerSecond:
		return fmt.Errorf("pair echoes per second: %d, want 1 to %d", c.PairEchoesPerSecond, MaxPairEchoesPerSecond)
	}
	return nil
}
