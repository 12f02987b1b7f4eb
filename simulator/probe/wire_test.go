package probe

import (
	"testing"
	"time"
)

// TestEchoAnswerRoundTrip encodes echo answers and decodes them: what the
// agent put in, the prober reads out, in no more bytes than the request.
func TestEchoAnswerRoundTrip(t *testing.T) {
	received, sent := time.Unix(1000, 5), time.Unix(1000, 90)
	for _, tc := range []struct {
		name string
		link linkReading
		want linkReading
	}{
		{"with counters", linkReading{RxBytes: 1 << 40, TxBytes: 12_345, At: time.Unix(999, 7), Flags: linkValid},
			linkReading{RxBytes: 1 << 40, TxBytes: 12_345, At: time.Unix(999, 7), Flags: linkValid}},
		{"the largest counters", linkReading{RxBytes: 1<<64 - 1, TxBytes: 1<<64 - 1, At: time.Unix(1, 0), Flags: linkValid},
			linkReading{RxBytes: 1<<64 - 1, TxBytes: 1<<64 - 1, At: time.Unix(1, 0), Flags: linkValid}},
		{"zero counters are counters", linkReading{At: time.Unix(999, 0), Flags: linkValid},
			linkReading{At: time.Unix(999, 0), Flags: linkValid}},
		{"none", linkReading{}, linkReading{}},
		// What an agent that failed to read would never send, but the
		// encoding drops: no flag, no counters.
		{"counters without the flag are none", linkReading{RxBytes: 5, TxBytes: 6, At: time.Unix(999, 0)}, linkReading{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requested := time.Unix(1000, 1)
			b := encodeEchoAnswer(make([]byte, 2048), 77, requested, received, nodeHash("n"), tc.link)
			stampEchoSent(b, sent)
			if len(b) != EchoSize {
				t.Fatalf("answer of %d bytes, want the request's %d", len(b), EchoSize)
			}
			typ, err := header(b)
			if err != nil || typ != typeEcho|answerBit {
				t.Fatalf("header %x, %v; want an echo answer", typ, err)
			}
			key, req, s, err := decodeEcho(b)
			if !req.Equal(requested) {
				t.Errorf("the answer carries the request's time %s, want %s", req, requested)
			}
			want := echoStamps{Received: received, Sent: sent, NodeHash: nodeHash("n"), Link: tc.want}
			if err != nil || key != 77 || !s.Received.Equal(want.Received) || !s.Sent.Equal(want.Sent) || s.NodeHash != want.NodeHash ||
				s.Link.RxBytes != want.Link.RxBytes || s.Link.TxBytes != want.Link.TxBytes || !s.Link.At.Equal(want.Link.At) || s.Link.Flags != want.Link.Flags {
				t.Errorf("decoded key %d %+v (%v), want 77 %+v", key, s, err, want)
			}
		})
	}
	// A request carries nothing of an answer: the agent refuses one that
	// does.
	if _, _, s, err := decodeEcho(encodeEcho(make([]byte, EchoSize), 1, time.Unix(5, 0))); err != nil || s != (echoStamps{}) {
		t.Errorf("a request decodes with %+v, %v; want nothing", s, err)
	}
}
