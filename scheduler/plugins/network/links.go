package network

import "time"

// Link is what an answer says of one node's link: what it carries, what
// it already carries, and up to when the numbers describe the node, so
// that a reader can count what was placed on the node since.
type Link struct {
	// BandwidthMbps is the link's bandwidth; BandwidthAtLeast says it is
	// only a lower bound.
	BandwidthMbps    float64
	BandwidthAtLeast bool
	// BandwidthLowMbps and BandwidthHighMbps are the ends of the
	// bandwidth's served 95 % interval: how sure the simulator is of it.
	// Both are BandwidthMbps where it serves none (a scenario's number),
	// and the high end is for a lower bound too.
	BandwidthLowMbps, BandwidthHighMbps float64
	// RankedBandwidthMbps is the bandwidth to rank the link at: a faster
	// link's, when the two cannot be told apart or differ too little to
	// count (tieBandwidths), else BandwidthMbps. Noise and trivia must not
	// rank nodes.
	RankedBandwidthMbps float64
	// UseMbps is the traffic already on the link when UseMeasured.
	UseMbps     float64
	UseMeasured bool
	// WindowStart is when the window these numbers average over began:
	// the newest reading's time (the link use's, else the bandwidth's)
	// less the answer's window; the answer's timestamp for numbers not
	// measured. A pod placed on the node after it is not wholly in them.
	WindowStart time.Time
}

// FreeMbps is the bandwidth less the link's use: what a new pod would
// find free before counting pods placed since.
func (l Link) FreeMbps() float64 {
	if l.UseMeasured {
		return max(l.BandwidthMbps-l.UseMbps, 0)
	}
	return l.BandwidthMbps
}

// Links is what the answer says of each node's link, for the nodes with
// a finite bandwidth; nil when none has one. It reads Body on the first
// call, then returns the same map, which readers must not change: a
// Background simulation is shared by many cycles.
func (s *Simulation) Links() map[string]Link {
	s.linksOnce.Do(func() { s.links, s.window = linksOf(s.Body) })
	return s.links
}

// Window is the window the answer's numbers average over, its
// window_seconds; 0 when it names none. It is read with the links, once.
func (s *Simulation) Window() time.Duration {
	s.Links()
	return s.window
}

// linksOf reads the links an answer describes, and its window: in one pass
// without reflection when the answer has the common shape
// (fastLinkReadings), else with encoding/json. Both give the same links.
func linksOf(body []byte) (map[string]Link, time.Duration) {
	r, ok := fastLinkReadings(body)
	if !ok {
		r = slowLinkReadings(body)
	}
	stamp, _ := parseTime(r.timestamp) // zero when unreadable
	window := time.Duration(max(r.windowSeconds, 0)) * time.Second
	var links map[string]Link
	for node, nr := range r.nodes {
		l, ok := nr.link(stamp, window)
		if !ok {
			continue
		}
		if links == nil {
			links = make(map[string]Link, len(r.nodes))
		}
		links[node] = l
	}
	tieBandwidths(links)
	return links, window
}

// linkReadings are what an answer says of links, as read off the wire and
// not yet judged: the fast and the slow reader both fill them.
type linkReadings struct {
	timestamp     string
	windowSeconds int
	nodes         map[string]linkReading
}

// linkReading is one node's entry: its bandwidth, the ends and time of the
// bandwidth's estimate, and its link use.
type linkReading struct {
	bandwidth, low, high number
	atLeast              bool
	bandwidthAt          string
	use                  number
	useAt                string
}

// number is a finite JSON number; ok is false for none, null, a string or
// any other value.
type number struct {
	v  float64
	ok bool
}

func numberOf(v any) number {
	if f := finite(v); f != nil {
		return number{*f, true}
	}
	return number{}
}

// MaxMbps is the most a link's bandwidth or use can read, 1 Pbit/s: a
// thousand times the fastest NIC. A larger number is no measurement but a
// corrupt or hostile answer, and read as one it would overflow what the
// plugins rank by (a score in kbit/s is an int64).
const MaxMbps = 1e9

// link judges r: false when it gives no finite bandwidth from 0 to
// MaxMbps. A use above MaxMbps is none, and an interval's end above it no
// end.
func (r linkReading) link(stamp time.Time, window time.Duration) (Link, bool) {
	if !r.bandwidth.ok || r.bandwidth.v < 0 || r.bandwidth.v > MaxMbps {
		return Link{}, false
	}
	bw := r.bandwidth.v
	l := Link{BandwidthMbps: bw, BandwidthLowMbps: bw, BandwidthHighMbps: bw, BandwidthAtLeast: r.atLeast, WindowStart: stamp}
	// An end on the wrong side of the value is no interval.
	if r.low.ok && r.low.v >= 0 && r.low.v <= bw {
		l.BandwidthLowMbps = r.low.v
	}
	if r.high.ok && r.high.v >= bw && r.high.v <= MaxMbps && !r.atLeast {
		l.BandwidthHighMbps = r.high.v
	}
	newest, _ := parseTime(r.bandwidthAt)
	if r.use.ok && r.use.v >= 0 && r.use.v <= MaxMbps {
		l.UseMbps, l.UseMeasured = r.use.v, true
		if t, ok := parseTime(r.useAt); ok {
			newest = t
		}
	}
	if !newest.IsZero() {
		l.WindowStart = newest.Add(-window)
	}
	return l, true
}

// slowLinkReadings reads body with encoding/json, as MetaOf does: every
// shape and oddity the contract allows.
func slowLinkReadings(body []byte) linkReadings {
	w := decodeWireMeta(body)
	r := linkReadings{timestamp: w.Timestamp, windowSeconds: w.WindowSeconds, nodes: make(map[string]linkReading, len(w.Results))}
	for node, m := range w.Results {
		nr := linkReading{bandwidth: numberOf(m.BandwidthMbps)}
		if e := m.Measured.BandwidthMbps; e != nil {
			nr.low, nr.high, nr.atLeast, nr.bandwidthAt = numberOf(e.Low), numberOf(e.High), e.AtLeast, e.MeasuredAt
		}
		if u := m.Measured.LinkUseMbps; u != nil {
			nr.use, nr.useAt = numberOf(u.Value), u.MeasuredAt
		}
		r.nodes[node] = nr
	}
	return r
}

func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}
