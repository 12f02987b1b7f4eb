package probe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// syntheticCluster is a cluster's true round trips with zone-like
// structure: regions tens of milliseconds apart, each of zones a
// millisecond or two apart, each of nodes a few tenths of a millisecond
// apart. A node sits at a point in a plane (milliseconds) and has an
// access delay of its own (its height): the round trip between two nodes
// is the distance between their points plus both access delays.
type syntheticCluster struct {
	names  []string
	pos    [][2]float64
	height []float64
	zone   []int // region*zonesPerRegion + zone
	// lossy nodes lose lossyShare of the samples that involve them.
	lossy []bool
}

const (
	regions        = 3
	zonesPerRegion = 3
	lossyShare     = 0.1
)

// newSyntheticCluster lays out n nodes: three regions 10 to 40 ms apart,
// three zones in each 0.7 to 1.6 ms apart, nodes within 0.1 ms of their
// zone's point, each with an access delay of 0.1 to 0.2 ms (so a round
// trip is 0.2 to 0.5 ms within a zone, 1 to 2 ms across zones, 10 to
// 40 ms across regions), and one node in a hundred lossy.
func newSyntheticCluster(n int, rng *rand.Rand) *syntheticCluster {
	var centres [regions][2]float64
	for {
		for r := range centres {
			centres[r] = [2]float64{rng.Float64() * 40, rng.Float64() * 40}
		}
		ok := true
		for a := range regions {
			for b := a + 1; b < regions; b++ {
				if d := dist(centres[a], centres[b]); d < 10 || d > 39 {
					ok = false
				}
			}
		}
		if ok {
			break
		}
	}
	var zones [regions * zonesPerRegion][2]float64
	for r := range regions {
		// Three zones on a triangle about the region's centre, each side
		// 0.7 to 1.6 ms.
		side := 0.7 + 0.9*rng.Float64()
		turn := rng.Float64() * 2 * math.Pi
		for z := range zonesPerRegion {
			a := turn + float64(z)*2*math.Pi/zonesPerRegion
			radius := side / math.Sqrt(3)
			zones[r*zonesPerRegion+z] = [2]float64{centres[r][0] + radius*math.Cos(a), centres[r][1] + radius*math.Sin(a)}
		}
	}
	c := &syntheticCluster{}
	for i := range n {
		z := i % len(zones)
		a, d := rng.Float64()*2*math.Pi, 0.05*math.Sqrt(rng.Float64())
		c.names = append(c.names, fmt.Sprintf("node-%05d", i))
		c.pos = append(c.pos, [2]float64{zones[z][0] + d*math.Cos(a), zones[z][1] + d*math.Sin(a)})
		c.height = append(c.height, 0.1+0.1*rng.Float64())
		c.zone = append(c.zone, z)
		c.lossy = append(c.lossy, rng.IntN(100) == 0)
	}
	return c
}

func dist(a, b [2]float64) float64 { return math.Hypot(a[0]-b[0], a[1]-b[1]) }

// rtt is the true round trip between nodes i and j.
func (c *syntheticCluster) rtt(i, j int) time.Duration {
	ms := dist(c.pos[i], c.pos[j]) + c.height[i] + c.height[j]
	return time.Duration(ms * float64(time.Millisecond))
}

// measure is one sample of the round trip between i and j as an agent
// reads it: a little longer than the true one most times, now and then
// much longer (a queue), or lost on a lossy node's link.
func (c *syntheticCluster) measure(i, j int, rng *rand.Rand) (time.Duration, bool) {
	if (c.lossy[i] || c.lossy[j]) && rng.Float64() < lossyShare {
		return 0, false
	}
	f := 1 + math.Abs(rng.NormFloat64())*0.05
	if rng.IntN(50) == 0 {
		f *= 1.5 + 1.5*rng.Float64()
	}
	return time.Duration(float64(c.rtt(i, j)) * f), true
}

// pairClass names what separates two nodes.
func (c *syntheticCluster) pairClass(i, j int) string {
	switch {
	case c.zone[i] == c.zone[j]:
		return "zone"
	case c.zone[i]/zonesPerRegion == c.zone[j]/zonesPerRegion:
		return "region"
	}
	return "world"
}

// coordinateRun is what a simulated run of the coordinates gave.
type coordinateRun struct {
	// median and p90 are the relative errors, |predicted - true| / true,
	// over random pairs; byClass the median within a zone, across zones of
	// a region, across regions.
	median, p90 float64
	byClass     map[string]float64
	pairs       int
	updates     int
	// nearestInZone of nearest nodes by coordinates share their node's
	// zone.
	nearest, nearestInZone int
}

// runCoordinates drives the prober's coordinates as a cluster of n nodes
// would for seconds: each node's agent measures one random peer a second,
// and the prober takes each agent's samples every collectEvery, in turns
// (as it collects them), updating the node's coordinate with each. No
// socket, no clock: the same seed gives the same run.
func runCoordinates(n, seconds, collectEvery int, seed uint64) coordinateRun {
	rng := rand.New(rand.NewPCG(seed, 1))
	cluster := newSyntheticCluster(n, rng)
	coords := newCoordinates()
	type sample struct {
		peer int
		rtt  time.Duration
	}
	pending := make([][]sample, n)
	start := time.Unix(100_000, 0)
	updates := 0
	for s := range seconds {
		at := start.Add(time.Duration(s) * time.Second)
		for i := range n {
			j := rng.IntN(n - 1)
			if j >= i {
				j++
			}
			if rtt, ok := cluster.measure(i, j, rng); ok {
				pending[i] = append(pending[i], sample{j, rtt})
			}
		}
		// The agents whose turn it is this second.
		for i := s % collectEvery; i < n; i += collectEvery {
			for _, p := range pending[i] {
				if coords.update(cluster.names[i], cluster.names[p.peer], p.rtt, at) {
					updates++
				}
			}
			pending[i] = pending[i][:0]
		}
	}
	var all []float64
	byClass := map[string][]float64{}
	for range 20_000 {
		i, j := rng.IntN(n), rng.IntN(n)
		if i == j {
			continue
		}
		est, ok := coords.estimate(cluster.names[i], cluster.names[j])
		if !ok {
			continue
		}
		truth := cluster.rtt(i, j)
		e := math.Abs(float64(est-truth)) / float64(truth)
		all = append(all, e)
		class := cluster.pairClass(i, j)
		byClass[class] = append(byClass[class], e)
	}
	run := coordinateRun{byClass: map[string]float64{}, pairs: len(all), updates: updates}
	// How many of a node's nearest by coordinates share its zone.
	for i := 0; i < n; i += 50 {
		for _, near := range coords.nearest(cluster.names[i], cluster.names, 8) {
			var j int
			fmt.Sscanf(near, "node-%05d", &j)
			run.nearest++
			if cluster.zone[j] == cluster.zone[i] {
				run.nearestInZone++
			}
		}
	}
	run.median, run.p90 = quantile(all, 0.5), quantile(all, 0.9)
	for class, errs := range byClass {
		run.byClass[class] = quantile(errs, 0.5)
	}
	return run
}

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func (r coordinateRun) String() string {
	return fmt.Sprintf("median relative error %.1f %%, 90th percentile %.1f %% over %d random pairs (%d updates); median within a zone %.1f %%, across zones %.1f %%, across regions %.1f %%; %d of %d nearest by coordinates in their node's zone",
		100*r.median, 100*r.p90, r.pairs, r.updates, 100*r.byClass["zone"], 100*r.byClass["region"], 100*r.byClass["world"], r.nearestInZone, r.nearest)
}

// TestCoordinateAccuracy runs the coordinates of a 5,000-node cluster of
// three regions of three zones, every node measuring one random peer a
// second for three minutes and its samples taken every 15 s: the round
// trips their coordinates predict between random pairs must be within
// 15 % of the true ones at the median.
func TestCoordinateAccuracy(t *testing.T) {
	run := runCoordinates(5000, 180, 15, 1)
	t.Log(run)
	if run.pairs < 19_000 {
		t.Fatalf("only %d pairs had coordinates", run.pairs)
	}
	if run.median > 0.15 {
		t.Errorf("median relative error %.3f, want at most 0.15", run.median)
	}
}

// TestCoordinatesAreDeterministic checks a run is the same every time:
// coordinates start apart, not in serf's random directions.
func TestCoordinatesAreDeterministic(t *testing.T) {
	a, b := runCoordinates(300, 60, 15, 7), runCoordinates(300, 60, 15, 7)
	if a.median != b.median || a.p90 != b.p90 {
		t.Errorf("two runs of one seed: %v and %v", a, b)
	}
}

// BenchmarkCoordinateAccuracy reports the coordinates' accuracy on the
// synthetic 5,000-node cluster after one, three and five minutes, samples
// taken every 15 s, as metrics: the median and 90th percentile relative
// error over random pairs, the median within a zone, across zones and
// across regions, and the share of a node's eight nearest by coordinates
// that are in its zone.
func BenchmarkCoordinateAccuracy(b *testing.B) {
	for _, minutes := range []int{1, 3, 5} {
		b.Run(fmt.Sprintf("5000-nodes-%dmin", minutes), func(b *testing.B) {
			var run coordinateRun
			for range b.N {
				run = runCoordinates(5000, 60*minutes, 15, 1)
			}
			b.ReportMetric(100*run.median, "median-%")
			b.ReportMetric(100*run.p90, "p90-%")
			b.ReportMetric(100*run.byClass["zone"], "zone-median-%")
			b.ReportMetric(100*run.byClass["region"], "cross-zone-median-%")
			b.ReportMetric(100*run.byClass["world"], "cross-region-median-%")
			b.ReportMetric(100*float64(run.nearestInZone)/float64(run.nearest), "nearest-in-zone-%")
			b.Log(run)
		})
	}
}
