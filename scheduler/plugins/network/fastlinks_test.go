package network

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"kns3.dev/kns3/scheduler/plugins/internal/simtest"
)

// linkBodies are bodies fastLinkReadings must read, or decline, without
// ever disagreeing with encoding/json; taken says which it must read.
var linkBodies = []struct {
	body  string
	taken bool
}{
	{`{"results":{"a":{"bandwidth_mbps":"7"},"b":{"bandwidth_mbps":[1,{"x":2}]},"c":{"bandwidth_mbps":true}}}`, true},
	{`{"results":{"a":{"bandwidth_mbps":5,"measured":null}}}`, true},
	{`{"results":{"a":{"bandwidth_mbps":5,"measured":{"bandwidth_mbps":null,"link_use_mbps":null,"latency_ms":{"low":1}}}}}`, true},
	{`{"results":{"a":{"bandwidth_mbps":5,"measured":{"bandwidth_mbps":{"low":1,"high":"x","at_least":null,"measured_at":null,"samples":3}}}}}`, true},
	{`{"results":{"a":{"bandwidth_mbps":5,"measured":{"link_use_mbps":{"value":-1,"measured_at":"x"}}}}}`, true},
	{`{"timestamp":null,"window_seconds":null,"results":{"a":{"bandwidth_mbps":-0.0}}}`, true},
	{`{"window_seconds":-3,"results":{"a":{"bandwidth_mbps":1E2}}}`, true},
	{`{"results":{}}`, true},
	{`{"results":{"a":{"bandwidth_mbps":1,"Measured":{}}}}`, false},
	{`{"results":{"a":{"bandwidth_mbps":1,"bandwidth_mbps":2}}}`, false},
	{`{"results":{"a":{"bandwidth_mbps":1e400}}}`, false},
	{`{"results":{"a":{"bandwidth_mbps":NaN}}}`, false},
	{`{"results":{"a":{"bandwidth_mbps":5,"measured":{"bandwidth_mbps":{"at_least":1}}}}}`, false},
	{`{"results":{"a":{"bandwidth_mbps":5,"measured":{"bandwidth_mbps":{"measured_at":"2026-12-03T12:00:03\u005a"}}}}}`, false},
	{`{"results":{"a":{"bandwidth_mbps":5,"measured":{"bandwidth_mbps":{"low":1},"bandwidth_mbps":{"high":9}}}}}`, false},
	{`{"results":{"a":{"bandwidth_mbps":5,"measured":{"BANDWIDTH_MBPS":{}}}}}`, false},
	{`{"results":{"a":{"bandwidth_mbps":5,"measured":{"bandwidth_mbpſ":{}}}}}`, false},
	{`{"results":{"a":{"bandwidth_mbps":5,"measured":{"bandwidth_mbps":7}}}}`, false},
	{`{"results":{"a":{"bandwidth_mbps":5,"measured":7}}}`, false},
	{`{"results":{"a":5}}`, false},
	{`{"results":{"a":{"bandwidth_mbps":5}},"results":{}}`, false},
	{`{"results":{"a":{"bandwidth_mbps":5}},"Results":{}}`, false},
	{`{"results":{"a":{"bandwidth_mbps":5},"a":{"bandwidth_mbps":6}}}`, false},
	{`{"results":{"\u0061":{"bandwidth_mbps":5}}}`, false},
	{`{"window_seconds":15.0,"results":{}}`, false},
	{`{"window_seconds":1e1,"results":{}}`, false},
	{`{"window_seconds":"5","results":{}}`, false},
	{`{"window_seconds":99999999999999999999,"results":{}}`, false},
	{`{"timestamp":5,"results":{}}`, false},
	{`{"results":[{"node":"a","bandwidth_mbps":5}]}`, false},
	{`{"results":null}`, false},
	{`{"results":{"a":{"bandwidth_mbps":5}}} trailing`, false},
	{`{"results":{"a":{"bandwidth_mbps":05}}}`, false},
}

func TestFastLinksAgreeWithEncodingJSON(t *testing.T) {
	for _, c := range linkBodies {
		if taken := checkLinksAgreement(t, []byte(c.body)); taken != c.taken {
			t.Errorf("%s: fastLinkReadings took it: %t, want %t", quoteBody([]byte(c.body)), taken, c.taken)
		}
	}
	for _, body := range decodeBodies {
		checkLinksAgreement(t, []byte(body))
	}
	// The common shapes, which the fast reading is for.
	for _, body := range [][]byte{linksBody, simtest.Body(50)} {
		if !checkLinksAgreement(t, body) {
			t.Errorf("%s: fastLinkReadings declined the common shape", quoteBody(body))
		}
	}
}

// checkLinksAgreement reports whether fastLinkReadings read body, and
// fails t where its reading differs from encoding/json's.
func checkLinksAgreement(t *testing.T, body []byte) (taken bool) {
	t.Helper()
	fast, ok := fastLinkReadings(body)
	if !ok {
		return false
	}
	if !json.Valid(body) {
		t.Errorf("fastLinkReadings read %s, which is no JSON", quoteBody(body))
		return true
	}
	slow := slowLinkReadings(body)
	if diff := cmp.Diff(slow, fast, cmp.AllowUnexported(linkReadings{}, linkReading{}, number{}), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: fast and encoding/json readings differ (-slow +fast):\n%s", quoteBody(body), diff)
	}
	return true
}

func FuzzFastLinks(f *testing.F) {
	for _, c := range linkBodies {
		f.Add([]byte(c.body))
	}
	f.Add(linksBody)
	f.Add(simtest.Body(3))
	f.Fuzz(func(t *testing.T, body []byte) {
		if strings.Contains(string(body), "\x00\x00\x00\x00") {
			t.Skip("uninteresting")
		}
		checkLinksAgreement(t, body)
	})
}
