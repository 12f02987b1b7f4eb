package network

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"kns3.dev/kns3/scheduler/plugins/internal/simtest"
)

// decodeBodies are bodies fastDecode must take, or decline, without ever
// disagreeing with encoding/json.
var decodeBodies = append([]string{
	`{"results":{"a":{"score":0.91,"latency_ms":0.8},"b":{"score":-0.5e1}},"source":"s","window_seconds":30}`,
	`  {"timestamp":"2026-11-29T10:15:00Z","results":{},"extra":[1,{"x":null},true,false,"\u00e9\n"]}  `,
	`{"results":{"a":{"score":1E+2,"nested":{"deep":[[[]]]}}}}`,
	`{"results":{"a":{"score":0}},"results":{"b":{"score":1}}}`,
	`{"Results":{"a":{"score":1}}}`,
	`{"results":{"a":{"Score":1}}}`,
	`{"results":{"a":{"score":1,"score":2}}}`,
	`{"results":{"a":{"score":1},"a":{"score":2}}}`,
	`{"results":{"a\u0041":{"score":1}}}`,
	`{"res\u0075lts":{"a":{"score":1}}}`,
	`{"results":{"a":{"score":null}}}`,
	`{"results":{"a":{"score":"NaN"}}}`,
	`{"results":{"a":{"score":NaN}}}`,
	`{"results":{"a":{}}}`,
	`{"results":{"a":{"score":1e400}}}`,
	`{"results":[{"node":"a","score":1}]}`,
	`{"results":null}`,
	`{"results":{"a":{"score":01}}}`,
	`{"results":{"a":{"score":1.}}}`,
	`{"results":{"a":{"score":-}}}`,
	`{"results":{"a":{"score":1}},"x":01}`,
	`{"results":{"a":{"score":1}},"x":"\x"}`,
	`{"results":{"a":{"score":1}},"x":tru}`,
	`{"results":{"a":{"score":1}}} trailing`,
	`{"results":{"a":{"score":1}},}`,
	`{"results":{"a":{"score":1}}`,
	`{"results":{"a":{"score":1}},"x":"` + "\x01" + `"}`,
	`{"results":{"reſults":{"score":1}}}`,
	`{"reſults":{"a":{"score":1}}}`,
	`{"results":{"a":{"ſcore":1,"score":2}}}`,
	`{"results":{"a":{"score":2,"ſcore":1}}}`,
	`{"results":{"a":{"score":2}},"reſults":{"b":{"score":1}}}`,
	`{"results":{"é":{"score":1}},"ü":"ß"}`,
	// Invalid UTF-8, which encoding/json turns into U+FFFD.
	"{\"results\":{\"a\xff\":{\"score\":1}}}",
	"{\"results\":{\"a\xff\":{\"score\":1},\"a\xfe\":{\"score\":2}}}",
	"{\"results\":{\"\xc3\":{\"score\":1},\"\xed\xa0\x80\":{\"score\":2},\"\xc0\xaf\":{\"score\":3}}}",
	"{\"results\":{\"a\":{\"score\":1,\"x\xff\":\"\xff\"}},\"\xff\":[\"\xe2\x82\"]}",
	"{\"results\xff\":{\"a\":{\"score\":1}},\"results\":{\"b\":{\"score\":2}}}",
	`[]`,
	``,
	`{}`,
	// A warming-up simulator's answer, and odd warm-ups.
	`{"warm_up":{"measured_in_full":3,"nodes":100,"quorum":0.9},"results":{"a":{"score":0},"b":{"score":0}}}`,
	`{"results":{"a":{"score":0}},"warm_up":{"measured_in_full":3,"nodes":100,"quorum":0.9,"extra":[1]}}`,
	`{"results":{"a":{"score":0.5}},"warm_up":null}`,
	`{"results":{"a":{"score":0.5}},"warm_up":{}}`,
	`{"results":{"a":{"score":0.5}},"warm_up":"soon"}`,
	`{"results":{"a":{"score":0.5}},"warm_up":[1,2]}`,
	`{"results":{"a":{"score":0.5}},"warm_up":{"measured_in_full":"3","nodes":-1,"quorum":2}}`,
	`{"results":{"a":{"score":0.5}},"warm_up":{"measured_in_full":1e300,"nodes":1.5,"quorum":0.5}}`,
	`{"results":{"a":{"score":0}},"warm_up":{"nodes":1},"warm_up":{"nodes":2}}`,
	`{"results":{"a":{"score":0}},"Warm_Up":{"nodes":1}}`,
	`{"results":{"a":{"score":0}},"warm_up":{"nodes":1},"WARM_UP":null}`,
	`{"results":{"a":{"score":0}},"warm_up":{"nodes":1}}`,
	`{"results":{"a":{"score":0}},"warm_up":{"nodes":1}`,
	`{"results":{"a":{"score":0}},"warm_up":{"nodes":01}}`,
}, deepBodies()...)

// jsonMaxDepth is encoding/json's maxNestingDepth: at most this many arrays
// and objects may be open at once, the body's own object included.
const jsonMaxDepth = 10000

// deepBodies nest arrays and objects around encoding/json's depth limit: in
// an unknown field (one level open around it) and in a node's result
// (three).
func deepBodies() []string {
	var out []string
	for depth := jsonMaxDepth - 1; depth <= jsonMaxDepth+2; depth++ {
		out = append(out,
			`{"x":`+nestedArrays(depth-1)+`,"results":{"a":{"score":1}}}`,
			`{"results":{"a":{"score":1,"x":`+nestedArrays(depth-3)+`}}}`,
			`{"results":{"a":{"x":`+nestedObjects(depth-3)+`,"score":1}},"y":1}`,
		)
	}
	return out
}

// nestedArrays is n arrays, each inside the last.
func nestedArrays(n int) string {
	return strings.Repeat("[", n) + strings.Repeat("]", n)
}

// nestedObjects is n objects, each the "x" of the last.
func nestedObjects(n int) string {
	return strings.Repeat(`{"x":`, n-1) + "{}" + strings.Repeat("}", n-1)
}

// TestFastDecodeAgreesWithEncodingJSON: where the fast path answers, it
// answers what encoding/json does.
func TestFastDecodeAgreesWithEncodingJSON(t *testing.T) {
	taken := 0
	for _, body := range decodeBodies {
		if checkAgreement(t, []byte(body)) {
			taken++
		}
	}
	// The common shapes must actually take the fast path.
	if taken < 3 {
		t.Errorf("fastDecode took %d bodies, want at least the 3 common ones", taken)
	}
	if _, ok := fastDecode(simtest.Body(5000)); !ok {
		t.Error("fastDecode declined the simulator's own answer for 5000 nodes")
	}
}

// The fast path counts depth as encoding/json does: it takes a body nested
// exactly to the limit and declines one level more, which encoding/json
// rejects.
func TestFastDecodeDepthLimit(t *testing.T) {
	for _, tt := range []struct {
		name string
		body func(depth int) string
	}{
		{"unknown field", func(depth int) string { return `{"x":` + nestedArrays(depth-1) + `,"results":{"a":{"score":1}}}` }},
		{"in a result", func(depth int) string { return `{"results":{"a":{"score":1,"x":` + nestedArrays(depth-3) + `}}}` }},
		{"objects in a result", func(depth int) string { return `{"results":{"a":{"x":` + nestedObjects(depth-3) + `,"score":1}}}` }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			deepest := []byte(tt.body(jsonMaxDepth))
			if _, err := decodeWithEncodingJSON(deepest); err != nil {
				t.Fatalf("encoding/json rejects depth %d: %v", jsonMaxDepth, err)
			}
			if _, ok := fastDecode(deepest); !ok {
				t.Errorf("fastDecode declined depth %d, which encoding/json takes", jsonMaxDepth)
			}
			tooDeep := []byte(tt.body(jsonMaxDepth + 1))
			if _, err := decodeWithEncodingJSON(tooDeep); err == nil || !strings.Contains(err.Error(), "exceeded max depth") {
				t.Fatalf("encoding/json on depth %d: err = %v, want exceeded max depth", jsonMaxDepth+1, err)
			}
			if _, ok := fastDecode(tooDeep); ok {
				t.Errorf("fastDecode took depth %d, which encoding/json rejects", jsonMaxDepth+1)
			}
		})
	}
}

func checkAgreement(t *testing.T, body []byte) (taken bool) {
	t.Helper()
	fast, ok := fastDecode(body)
	if !ok {
		return false
	}
	slow, err := decodeWithEncodingJSON(body)
	if err != nil {
		t.Errorf("fastDecode accepted %s, encoding/json rejects it: %v", quoteBody(body), err)
		return true
	}
	if diff := cmp.Diff(slow.Scores, fast.Scores, cmpopts.EquateEmpty()); diff != "" || len(slow.Invalid) > 0 {
		t.Errorf("%s: fast and slow decodes differ (-slow +fast):\n%s invalid=%v", quoteBody(body), diff, slow.Invalid)
	}
	if diff := cmp.Diff(slow.WarmUp, fast.WarmUp); diff != "" {
		t.Errorf("%s: fast and slow decodes read the warm-up apart (-slow +fast):\n%s", quoteBody(body), diff)
	}
	return true
}

// quoteBody quotes a body for a message, shortening a long one.
func quoteBody(body []byte) string {
	const keep = 100
	if len(body) <= 2*keep {
		return fmt.Sprintf("%q", body)
	}
	return fmt.Sprintf("%q…%q (%d bytes)", body[:keep], body[len(body)-keep:], len(body))
}

func FuzzFastDecode(f *testing.F) {
	for _, body := range decodeBodies {
		f.Add([]byte(body))
	}
	f.Add(simtest.Body(3))
	f.Fuzz(func(t *testing.T, body []byte) {
		if strings.Contains(string(body), "\x00\x00\x00\x00") {
			t.Skip("uninteresting")
		}
		checkAgreement(t, body)
	})
}
