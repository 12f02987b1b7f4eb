// Package network is the simulator's answer as every plugin of a profile
// reads it: one /simulate answer decoded (Simulation, Decode: the scores),
// its links (Links), the network between nodes (Pairs) and what else it
// says (MetaOf, DescribedUntil); the answer CustomScorePlugin holds for the
// cycle's filters (WriteHeld, Held); and the announcement of each new
// answer to the plugins that listen (OnNewSimulation). CustomScorePlugin's
// client (its simclient) asks the simulator; the profile's other plugins
// never do, and read the answer through this package. It imports no plugin.
package network

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"kns3.dev/kns3/scheduler/plugins/score"
)

// Simulation is the part of a SimulationResponse that scoring needs: each
// node's raw score (score.MilliScore: × 1000, clamped to int64).
type Simulation struct {
	Scores map[string]int64
	// Invalid lists nodes whose score was missing, NaN, infinite or not a
	// number; they count as absent.
	Invalid []string
	// Body is the answer's body, read again off the cycle for what scoring
	// does not need (MetaOf, meta.go).
	Body []byte
	// WarmUp is not nil while the simulator warms up: it has measured too
	// few nodes in full to rank them, and scores every measured node 0.
	// Nothing should be ranked or filtered by such an answer.
	WarmUp *WarmUp

	// links and window are what Links read off Body, once.
	linksOnce sync.Once
	links     map[string]Link
	window    time.Duration
	// pairs is what Pairs read off Body, once (pairs.go).
	pairsOnce sync.Once
	pairs     *Pairs
}

// WarmUp is how far a warming-up simulator's measurements are from
// ranking nodes: MeasuredInFull of Nodes have every metric measured, and
// it ranks once Quorum (a share) of them have.
type WarmUp struct {
	MeasuredInFull, Nodes int
	Quorum                float64
}

// wireResponse is the consumer's view of a SimulationResponse. encoding/json
// matches field names case-insensitively and ignores unknown fields, which is
// what the API contract asks of the consumer.
type wireResponse struct {
	Results *wireResults `json:"results"`
	// WarmUp is read by warmUpOf: an odd one must not cost the scores.
	WarmUp json.RawMessage `json:"warm_up"`
}

// warmUpOf reads a "warm_up" value: an object is a warm-up, whatever of it
// is readable (a field missing or not a number reads 0); null, or any
// other value, is none. Both decoders read it so, from the value's bytes.
func warmUpOf(raw []byte) *WarmUp {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var w struct {
		MeasuredInFull any `json:"measured_in_full"`
		Nodes          any `json:"nodes"`
		Quorum         any `json:"quorum"`
	}
	_ = json.Unmarshal(raw, &w) // an object: every field is an any
	count := func(v any) int {
		if f := finite(v); f != nil && *f >= 0 {
			return int(min(*f, math.MaxInt32))
		}
		return 0
	}
	out := &WarmUp{MeasuredInFull: count(w.MeasuredInFull), Nodes: count(w.Nodes)}
	if q := finite(w.Quorum); q != nil && *q >= 0 && *q <= 1 {
		out.Quorum = *q
	}
	return out
}

// wireResults accepts both shapes of "results": an object keyed by node
// name, or an array of objects naming the node in "node" (or "name").
type wireResults struct {
	byNode map[string]wireScore
	order  []string
}

type wireNode struct {
	Score wireScore `json:"score"`
}

type wireNamedNode struct {
	Node  string    `json:"node"`
	Name  string    `json:"name"`
	Score wireScore `json:"score"`
}

// wireScore is a score that may be missing, null, a number, or one of the
// strings some encoders use for non-finite numbers ("NaN", "Infinity").
type wireScore struct {
	value float64
	set   bool
}

func (s *wireScore) UnmarshalJSON(b []byte) error {
	switch {
	case bytes.Equal(b, []byte("null")):
		return nil
	case len(b) > 0 && b[0] == '"':
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		switch strings.ToLower(str) {
		case "nan":
			s.value, s.set = math.NaN(), true
		case "infinity", "+infinity", "inf", "+inf":
			s.value, s.set = math.Inf(1), true
		case "-infinity", "-inf":
			s.value, s.set = math.Inf(-1), true
		}
		// Any other string ("0.9"): no score, like a missing one. One node's
		// odd entry must not fail every node's.
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		var numErr *strconv.NumError
		if errors.As(err, &numErr) && errors.Is(numErr.Err, strconv.ErrRange) {
			// A finite literal beyond float64: keep its sign so that it clamps.
			s.value, s.set = math.Copysign(math.MaxFloat64, v), true
			if v == 0 {
				s.value = 0
			}
		}
		// true, an object, an array: no score.
		return nil
	}
	s.value, s.set = v, true
	return nil
}

func (r *wireResults) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		r.byNode = make(map[string]wireScore, len(m))
		for name, raw := range m {
			// A node whose entry is not an object ("n1": 0.9) has no score:
			// only that node is absent.
			var n wireNode
			_ = json.Unmarshal(raw, &n)
			r.byNode[name] = n.Score
		}
	case len(b) > 0 && b[0] == '[':
		var list []json.RawMessage
		if err := json.Unmarshal(b, &list); err != nil {
			return err
		}
		r.byNode = make(map[string]wireScore, len(list))
		for i, raw := range list {
			var n wireNamedNode
			_ = json.Unmarshal(raw, &n)
			name := n.Node
			if name == "" {
				name = n.Name
			}
			if name == "" {
				return fmt.Errorf("results[%d] names no node (want \"node\" or \"name\")", i)
			}
			r.byNode[name] = n.Score
		}
	case bytes.Equal(b, []byte("null")):
		// Leaves r empty; Decode reports results as missing.
	default:
		return fmt.Errorf("results must be an object or an array")
	}
	return nil
}

// Decode decodes a /simulate body following the consumer rules of
// the API contract.
func Decode(body []byte) (*Simulation, error) {
	if sim, ok := fastDecode(body); ok {
		return sim, nil
	}
	return decodeWithEncodingJSON(body)
}

// decodeWithEncodingJSON handles every shape and oddity the contract
// allows; fastDecode defers to it for anything but the common shape.
func decodeWithEncodingJSON(body []byte) (*Simulation, error) {
	resp, err := unmarshalLenient[wireResponse](body)
	if err != nil {
		return nil, fmt.Errorf("decoding simulation response: %w", err)
	}
	if resp.Results == nil || resp.Results.byNode == nil {
		return nil, errors.New("simulation response has no results")
	}
	sim := &Simulation{Scores: make(map[string]int64, len(resp.Results.byNode)), WarmUp: warmUpOf(resp.WarmUp)}
	for name, s := range resp.Results.byNode {
		v, ok := milliScore(s)
		if !ok {
			sim.Invalid = append(sim.Invalid, name)
			continue
		}
		sim.Scores[name] = v
	}
	sort.Strings(sim.Invalid)
	return sim, nil
}

// milliScore is s as a raw score, false for a missing, NaN or infinite
// score.
func milliScore(s wireScore) (int64, bool) {
	if !s.set {
		return 0, false
	}
	return score.MilliScore(s.value)
}

// quoteNonFiniteTokens rewrites the bare tokens NaN, Infinity and -Infinity
// found outside strings into quoted strings.
func quoteNonFiniteTokens(b []byte) ([]byte, bool) {
	var out bytes.Buffer
	changed, inString, escaped := false, false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			out.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			out.WriteByte(c)
			continue
		}
		matched := false
		for _, tok := range []string{"NaN", "-Infinity", "Infinity"} {
			if bytes.HasPrefix(b[i:], []byte(tok)) {
				out.WriteString(`"` + tok + `"`)
				i += len(tok) - 1
				changed, matched = true, true
				break
			}
		}
		if !matched {
			out.WriteByte(c)
		}
	}
	return out.Bytes(), changed
}

// unmarshalLenient decodes body into a new T. Python's json module writes
// bare NaN and Infinity tokens: a body that fails to parse is read once
// more with them quoted, so only such a body pays for it.
func unmarshalLenient[T any](body []byte) (T, error) {
	var v T
	err := json.Unmarshal(body, &v)
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		if fixed, changed := quoteNonFiniteTokens(body); changed {
			v = *new(T)
			err = json.Unmarshal(fixed, &v)
		}
	}
	return v, err
}
