package network

import (
	"bytes"
	"strconv"
	"strings"
)

// fastLinkReadings reads what linksOf needs from the common shape of an
// answer in one pass without reflection, as fastDecode reads its scores:
// every key the reader wants spelled plainly and once, and every value of
// the type the contract gives it. Anything else (a key spelled in another
// case or escaped, a duplicate, a timestamp that is not a plain string, a
// node entry that is not an object, the array shape, malformed input)
// returns ok=false, and linksOf reads the body with encoding/json. At 5000
// nodes encoding/json takes tens of milliseconds, and the first cycle on a
// new answer pays them.
func fastLinkReadings(body []byte) (r linkReadings, ok bool) {
	p := parser{b: body}
	p.space()
	read := p.fields(1, topLinkFields, func(key string) (ok bool) {
		switch key {
		case "timestamp":
			r.timestamp, ok = p.plainString()
		case "window_seconds":
			r.windowSeconds, ok = p.integer()
		default: // "results"
			r.nodes, ok = p.linkNodes()
		}
		return ok
	})
	p.space()
	return r, read && p.i == len(p.b) && r.nodes != nil
}

// The keys each object's reader wants, by object.
var (
	topLinkFields      = []string{"timestamp", "window_seconds", "results"}
	nodeLinkFields     = []string{"bandwidth_mbps", "measured"}
	measuredLinkFields = []string{"bandwidth_mbps", "link_use_mbps"}
	estimateFields     = []string{"low", "high", "at_least", "measured_at"}
	useFields          = []string{"value", "measured_at"}
)

// linkNodes reads the results object: node name → the node's entry.
func (p *parser) linkNodes() (map[string]linkReading, bool) {
	nodes := make(map[string]linkReading, len(p.b)/256)
	ok := p.members(func(name string, plain bool) bool {
		if _, dup := nodes[name]; dup || !plain {
			return false
		}
		var r linkReading
		if !p.fields(3, nodeLinkFields, func(key string) bool { return p.nodeLinkField(key, &r) }) {
			return false
		}
		// The map outlives the body: copy the name out of it.
		nodes[strings.Clone(name)] = r
		return true
	})
	return nodes, ok
}

// nodeLinkField reads the value of key in a node's entry; a null
// "measured", or a null estimate in it, is none, as for encoding/json.
func (p *parser) nodeLinkField(key string, r *linkReading) (ok bool) {
	if key == "bandwidth_mbps" {
		r.bandwidth, ok = p.anyNumber(3)
		return ok
	}
	return p.null() || p.fields(4, measuredLinkFields, func(key string) bool { return p.measuredField(key, r) })
}

func (p *parser) measuredField(key string, r *linkReading) bool {
	switch {
	case p.null():
		return true
	case key == "bandwidth_mbps":
		return p.fields(5, estimateFields, func(key string) bool { return p.estimateField(key, r) })
	default: // "link_use_mbps"
		return p.fields(5, useFields, func(key string) bool { return p.useField(key, r) })
	}
}

func (p *parser) useField(key string, r *linkReading) (ok bool) {
	if key == "value" {
		r.use, ok = p.anyNumber(5)
	} else {
		r.useAt, ok = p.plainString()
	}
	return ok
}

func (p *parser) estimateField(key string, r *linkReading) bool {
	var ok bool
	switch key {
	case "low":
		r.low, ok = p.anyNumber(5)
	case "high":
		r.high, ok = p.anyNumber(5)
	case "at_least":
		r.atLeast, ok = p.boolean()
	default: // "measured_at"
		r.bandwidthAt, ok = p.plainString()
	}
	return ok
}

// fields reads an object whose values sit open arrays and objects deep
// (the object included), handing each key of want to field, which reads
// its value, and skipping the rest. It declines what encoding/json would
// read differently: a key it cannot compare as written (escaped, not
// UTF-8), a key of want twice, or a key that matches one only in another
// case (encoding/json matches field names without regard to case).
func (p *parser) fields(open int, want []string, field func(key string) bool) bool {
	var seen uint8
	return p.members(func(key string, plain bool) bool {
		if !plain {
			return false
		}
		for i, w := range want {
			switch {
			case key == w:
				if seen&(1<<i) != 0 {
					return false
				}
				seen |= 1 << i
				return field(key)
			case strings.EqualFold(key, w):
				return false
			}
		}
		return p.skipValue(open)
	})
}

// members reads an object, handing each key (aliasing the body, and
// whether it is plain: see str) to member, which reads its value.
// fastDecode and skipValue loop over members inline: through a callback
// the score decode, which runs in every cycle on a new answer, took a
// third longer.
func (p *parser) members(member func(key string, plain bool) bool) bool {
	if !p.consume('{') {
		return false
	}
	p.space()
	if p.consume('}') {
		return true
	}
	for {
		key, plain, ok := p.key()
		if !ok || !member(key, plain) {
			return false
		}
		p.space()
		if p.consume('}') {
			return true
		}
		if !p.consume(',') {
			return false
		}
	}
}

// anyNumber reads any value, as encoding/json reads it into an any that
// finite then judges: a number is its value, and every other value none.
func (p *parser) anyNumber(open int) (number, bool) {
	start := p.i
	if p.i < len(p.b) && (p.b[p.i] == '-' || p.b[p.i] >= '0' && p.b[p.i] <= '9') {
		if !p.number() {
			return number{}, false
		}
		v, err := strconv.ParseFloat(p.since(start), 64)
		// Out of range: encoding/json reports an error for it.
		return number{v, true}, err == nil
	}
	return number{}, p.skipValue(open)
}

// integer reads an int as encoding/json does: an integer, or null for 0;
// a fraction or an exponent is an error there.
func (p *parser) integer() (int, bool) {
	if p.null() {
		return 0, true
	}
	start := p.i
	if !p.number() || bytes.ContainsAny(p.b[start:p.i], ".eE") {
		return 0, false
	}
	v, err := strconv.ParseInt(p.since(start), 10, 0)
	return int(v), err == nil
}

// plainString reads a string whose bytes are its value (see str), aliasing
// the body, or null for "".
func (p *parser) plainString() (string, bool) {
	if p.null() {
		return "", true
	}
	s, plain, ok := p.str()
	return s, ok && plain
}

// boolean reads true or false, or null for false.
func (p *parser) boolean() (bool, bool) {
	switch {
	case p.literal("true"):
		return true, true
	case p.literal("false"), p.literal("null"):
		return false, true
	}
	return false, false
}

func (p *parser) null() bool { return p.literal("null") }
