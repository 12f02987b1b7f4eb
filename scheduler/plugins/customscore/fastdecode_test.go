package customscore

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// decodeBodies are bodies fastDecode must take, or decline, without ever
// disagreeing with encoding/json.
var decodeBodies = []string{
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
	`[]`,
	``,
	`{}`,
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
	if _, ok := fastDecode(simulateBody(5000)); !ok {
		t.Error("fastDecode declined the simulator's own answer for 5000 nodes")
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
		t.Errorf("fastDecode accepted %q, encoding/json rejects it: %v", body, err)
		return true
	}
	if diff := cmp.Diff(slow.scores, fast.scores, cmpopts.EquateEmpty()); diff != "" || len(slow.invalid) > 0 {
		t.Errorf("%q: fast and slow decodes differ (-slow +fast):\n%s invalid=%v", body, diff, slow.invalid)
	}
	return true
}

func FuzzFastDecode(f *testing.F) {
	for _, body := range decodeBodies {
		f.Add([]byte(body))
	}
	f.Add(simulateBody(3))
	f.Fuzz(func(t *testing.T, body []byte) {
		if strings.Contains(string(body), "\x00\x00\x00\x00") {
			t.Skip("uninteresting")
		}
		checkAgreement(t, body)
	})
}
