package network

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDecodeSimulation(t *testing.T) {
	tests := []struct {
		name        string
		body        string
		wantScores  map[string]int64
		wantInvalid []string
		wantErr     string
	}{
		{
			name:       "contract example",
			body:       `{"results":{"worker-node-1":{"score":0.91,"latency_ms":0.8,"bandwidth_mbps":940.0,"packet_loss":0.0},"worker-node-2":{"score":0.42,"latency_ms":4.1,"bandwidth_mbps":310.5,"packet_loss":0.01}},"timestamp":"2026-11-29T10:15:00Z","window_seconds":30,"source":"static"}`,
			wantScores: map[string]int64{"worker-node-1": 910, "worker-node-2": 420},
		},
		{
			name:       "field names in other case, unknown fields ignored",
			body:       `{"Results":{"a":{"Score":1.5,"extra":true}},"Timestamp":"x","future":{"nested":[1,2]}}`,
			wantScores: map[string]int64{"a": 1500},
		},
		{
			name:       "array shape with node and name",
			body:       `{"results":[{"node":"a","score":0.25},{"name":"b","score":0.5},{"NODE":"c","score":-0.1}]}`,
			wantScores: map[string]int64{"a": 250, "b": 500, "c": -100},
		},
		{
			name:       "array shape prefers node over name",
			body:       `{"results":[{"node":"a","name":"b","score":1}]}`,
			wantScores: map[string]int64{"a": 1000},
		},
		{
			name:    "array entry without a name",
			body:    `{"results":[{"score":1}]}`,
			wantErr: "results[0] names no node",
		},
		{
			name:        "missing, null, NaN and infinite scores are absent",
			body:        `{"results":{"ok":{"score":2},"missing":{},"null":{"score":null},"nan":{"score":"NaN"},"inf":{"score":"Infinity"},"ninf":{"score":"-Infinity"}}}`,
			wantScores:  map[string]int64{"ok": 2000},
			wantInvalid: []string{"inf", "missing", "nan", "ninf", "null"},
		},
		{
			name:        "bare NaN and Infinity tokens as Python writes them",
			body:        `{"results":{"a":{"score":NaN},"b":{"score":Infinity},"c":{"score":-Infinity},"d":{"score":0.5},"e NaN":{"score":1}},"source":"NaN Infinity"}`,
			wantScores:  map[string]int64{"d": 500, "e NaN": 1000},
			wantInvalid: []string{"a", "b", "c"},
		},
		{
			name:       "overflow is clamped",
			body:       `{"results":{"big":{"score":1e300},"small":{"score":-1e300},"edge":{"score":9.3e15},"beyond":{"score":1e400}}}`,
			wantScores: map[string]int64{"big": math.MaxInt64, "small": math.MinInt64, "edge": math.MaxInt64, "beyond": math.MaxInt64},
		},
		{
			name:       "truncation toward zero",
			body:       `{"results":{"a":{"score":0.0019},"b":{"score":-0.0019}}}`,
			wantScores: map[string]int64{"a": 1, "b": -1},
		},
		{
			name:       "empty results",
			body:       `{"results":{}}`,
			wantScores: map[string]int64{},
		},
		{name: "missing results", body: `{"timestamp":"2026-11-29T10:15:00Z"}`, wantErr: "no results"},
		{name: "null results", body: `{"results":null}`, wantErr: "no results"},
		{name: "results not an object", body: `{"results":"none"}`, wantErr: "object or an array"},
		{
			// One odd entry makes its node absent, not every node's.
			name:        "scores of the wrong type, entries not objects",
			body:        `{"results":{"ok":{"score":0.5},"str":{"score":"0.9"},"word":{"score":"high"},"bool":{"score":true},"obj":{"score":{}},"bare":0.9,"list":[1]}}`,
			wantScores:  map[string]int64{"ok": 500},
			wantInvalid: []string{"bare", "bool", "list", "obj", "str", "word"},
		},
		{
			name:        "array entries of the wrong type",
			body:        `{"results":[{"node":"ok","score":1},{"node":"str","score":"1"}]}`,
			wantScores:  map[string]int64{"ok": 1000},
			wantInvalid: []string{"str"},
		},
		{name: "not JSON", body: `<html>Bad Gateway</html>`, wantErr: "decoding"},
		{name: "truncated JSON", body: `{"results":{"a":{"score":1`, wantErr: "decoding"},
		{name: "empty body", body: ``, wantErr: "decoding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, err := Decode([]byte(tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantScores, sim.Scores); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantInvalid, sim.Invalid, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("invalid (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestQuoteNonFiniteTokensLeavesStringsAlone(t *testing.T) {
	in := `{"a":"NaN \"Infinity\"","b":NaN,"c":[-Infinity]}`
	got, changed := quoteNonFiniteTokens([]byte(in))
	want := `{"a":"NaN \"Infinity\"","b":"NaN","c":["-Infinity"]}`
	if !changed || string(got) != want {
		t.Errorf("got %s (changed=%v), want %s", got, changed, want)
	}
	if _, changed := quoteNonFiniteTokens([]byte(`{"a":"NaN"}`)); changed {
		t.Error("a body without bare tokens must be reported unchanged")
	}
}
