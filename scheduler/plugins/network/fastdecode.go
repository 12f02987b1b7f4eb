package network

import (
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// fastDecode decodes the common shape of a /simulate body in one pass
// without reflection: an object whose "results" (any case) is an object of
// node name → object with a numeric or null "score" (any case). It checks
// the whole body's JSON grammar as it goes, and notes where a "warm_up"
// is, to read that small value alone once the body is checked (warmUpOf,
// as encoding/json's path does). Anything else (the array shape,
// string scores, bare NaN, escaped names or names that are not UTF-8,
// duplicate or differently cased keys, out-of-range numbers, nesting deeper
// than encoding/json allows, malformed input) returns ok=false, and the
// caller decodes with encoding/json, which handles every case the contract
// allows and reports the errors.
func fastDecode(body []byte) (sim *Simulation, ok bool) {
	p := parser{b: body}
	p.space()
	if !p.consume('{') {
		return nil, false
	}
	var scores map[string]int64
	var warmUp []byte
	seenResults, seenWarmUp := false, false
	p.space()
	if p.consume('}') {
		return nil, false // no results: the slow path words the error
	}
	for {
		key, plain, ok := p.key()
		switch {
		case !ok || !plain:
			// An escaped key may spell "results": leave it to encoding/json.
			return nil, false
		case key == "results":
			if seenResults {
				return nil, false
			}
			seenResults = true
			if scores, ok = p.results(); !ok {
				return nil, false
			}
		case key == "warm_up":
			if seenWarmUp {
				return nil, false
			}
			seenWarmUp = true
			start := p.i
			if !p.skipValue(1) {
				return nil, false
			}
			warmUp = p.b[start:p.i]
		case strings.EqualFold(key, "results"), strings.EqualFold(key, "warm_up"):
			// Case variants have encoding/json's precedence rules.
			return nil, false
		default:
			if !p.skipValue(1) {
				return nil, false
			}
		}
		p.space()
		if p.consume('}') {
			break
		}
		if !p.consume(',') {
			return nil, false
		}
	}
	p.space()
	if p.i != len(p.b) || scores == nil {
		return nil, false
	}
	return &Simulation{Scores: scores, WarmUp: warmUpOf(warmUp)}, true
}

type parser struct {
	b []byte
	i int
}

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) consume(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// key reads `"name" :` and returns the name, aliasing the body, and whether
// it is plain (see str).
func (p *parser) key() (string, bool, bool) {
	p.space()
	s, plain, ok := p.str()
	if !ok {
		return "", false, false
	}
	p.space()
	if !p.consume(':') {
		return "", false, false
	}
	p.space()
	return s, plain, true
}

// str reads a string; plain reports one whose bytes are its value, returned
// as they are: no escapes, and valid UTF-8 (encoding/json turns each invalid
// byte into U+FFFD). Other strings are checked and skipped.
func (p *parser) str() (s string, plain bool, ok bool) {
	if !p.consume('"') {
		return "", false, false
	}
	start := p.i
	plain = true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s = p.since(start)
			p.i++
			return s, plain && utf8.ValidString(s), true
		case c == '\\':
			plain = false
			p.i++
			if p.i >= len(p.b) {
				return "", false, false
			}
			switch p.b[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i++
			case 'u':
				if p.i+5 > len(p.b) {
					return "", false, false
				}
				for _, h := range p.b[p.i+1 : p.i+5] {
					if !isHex(h) {
						return "", false, false
					}
				}
				p.i += 5
			default:
				return "", false, false
			}
		case c < 0x20:
			return "", false, false
		default:
			p.i++
		}
	}
	return "", false, false
}

// results reads the results object, node name → result object.
func (p *parser) results() (map[string]int64, bool) {
	if !p.consume('{') {
		return nil, false
	}
	scores := make(map[string]int64, len(p.b)/64)
	p.space()
	if p.consume('}') {
		return scores, true
	}
	for {
		name, plain, ok := p.key()
		if !ok || !plain {
			return nil, false
		}
		score, ok := p.result()
		if !ok {
			return nil, false
		}
		if _, dup := scores[name]; dup {
			return nil, false
		}
		// The map outlives the body: copy the name out of it.
		scores[strings.Clone(name)] = score
		p.space()
		if p.consume('}') {
			return scores, true
		}
		if !p.consume(',') {
			return nil, false
		}
	}
}

// result reads one node's object and returns its score × 1000; a null or
// missing score is left to the slow path, which records the node as invalid.
func (p *parser) result() (int64, bool) {
	if !p.consume('{') {
		return 0, false
	}
	var score int64
	found := false
	p.space()
	if p.consume('}') {
		return 0, false
	}
	for {
		key, plain, ok := p.key()
		if !ok || !plain {
			return 0, false
		}
		if key == "score" {
			if found {
				return 0, false
			}
			start := p.i
			if !p.number() {
				return 0, false
			}
			v, err := strconv.ParseFloat(p.since(start), 64)
			if err != nil {
				return 0, false
			}
			if score, ok = milliScore(wireScore{value: v, set: true}); !ok {
				return 0, false
			}
			found = true
		} else if strings.EqualFold(key, "score") {
			return 0, false
		} else if !p.skipValue(3) {
			return 0, false
		}
		p.space()
		if p.consume('}') {
			return score, found
		}
		if !p.consume(',') {
			return 0, false
		}
	}
}

// number reads a JSON number, checking its grammar.
func (p *parser) number() bool {
	p.consume('-')
	switch {
	case p.consume('0'):
	case p.i < len(p.b) && p.b[p.i] >= '1' && p.b[p.i] <= '9':
		p.digits()
	default:
		return false
	}
	if p.consume('.') {
		if !p.digits() {
			return false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if !p.consume('+') {
			p.consume('-')
		}
		if !p.digits() {
			return false
		}
	}
	return true
}

func (p *parser) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// maxNestingDepth is encoding/json's limit (its scanner's
// maxNestingDepth): at most this many arrays and objects open at once, the
// body's own object included. A deeper body is left to encoding/json,
// which rejects it.
const maxNestingDepth = 10000

// skipValue checks and skips any JSON value; depth is the number of arrays
// and objects open around it.
func (p *parser) skipValue(depth int) bool {
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		_, _, ok := p.str()
		return ok
	case c == '{':
		if depth >= maxNestingDepth {
			return false
		}
		p.i++
		p.space()
		if p.consume('}') {
			return true
		}
		for {
			if _, _, ok := p.key(); !ok || !p.skipValue(depth+1) {
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
	case c == '[':
		if depth >= maxNestingDepth {
			return false
		}
		p.i++
		p.space()
		if p.consume(']') {
			return true
		}
		for {
			p.space()
			if !p.skipValue(depth + 1) {
				return false
			}
			p.space()
			if p.consume(']') {
				return true
			}
			if !p.consume(',') {
				return false
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		return p.literal("true") || p.literal("false") || p.literal("null")
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// literal consumes lit if the body goes on with it.
func (p *parser) literal(lit string) bool {
	if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
		p.i += len(lit)
		return true
	}
	return false
}

// since is the body from start to the parser's position, aliasing it.
func (p *parser) since(start int) string {
	return unsafe.String(unsafe.SliceData(p.b[start:p.i]), p.i-start)
}
