package simclient

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
	// link's, when the two cannot be told apart (tieBandwidths), else
	// BandwidthMbps. Noise must not rank nodes.
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
	s.linksOnce.Do(func() { s.links = linksOf(s.Body) })
	return s.links
}

// linksOf reads the links an answer describes.
func linksOf(body []byte) map[string]Link {
	w := decodeWireMeta(body)
	var stamp time.Time
	if t, ok := parseTime(w.Timestamp); ok {
		stamp = t
	}
	window := time.Duration(max(w.WindowSeconds, 0)) * time.Second
	var links map[string]Link
	for node, r := range w.Results {
		bw := finite(r.BandwidthMbps)
		if bw == nil || *bw < 0 {
			continue
		}
		l := Link{BandwidthMbps: *bw, BandwidthLowMbps: *bw, BandwidthHighMbps: *bw, WindowStart: stamp}
		newest := time.Time{}
		if m := r.Measured.BandwidthMbps; m != nil {
			l.BandwidthAtLeast = m.AtLeast
			// An end on the wrong side of the value is no interval.
			if low := finite(m.Low); low != nil && *low >= 0 && *low <= *bw {
				l.BandwidthLowMbps = *low
			}
			if high := finite(m.High); high != nil && *high >= *bw && !m.AtLeast {
				l.BandwidthHighMbps = *high
			}
			if t, ok := parseTime(m.MeasuredAt); ok {
				newest = t
			}
		}
		if u := r.Measured.LinkUseMbps; u != nil {
			if v := finite(u.Value); v != nil && *v >= 0 {
				l.UseMbps, l.UseMeasured = *v, true
				if t, ok := parseTime(u.MeasuredAt); ok {
					newest = t
				}
			}
		}
		if !newest.IsZero() {
			l.WindowStart = newest.Add(-window)
		}
		if links == nil {
			links = map[string]Link{}
		}
		links[node] = l
	}
	tieBandwidths(links)
	return links
}

func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}
