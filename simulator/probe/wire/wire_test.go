package wire

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
		link LinkReading
		want LinkReading
	}{
		{"with counters", LinkReading{RxBytes: 1 << 40, TxBytes: 12_345, At: time.Unix(999, 7), Flags: LinkValid},
			LinkReading{RxBytes: 1 << 40, TxBytes: 12_345, At: time.Unix(999, 7), Flags: LinkValid}},
		{"the largest counters", LinkReading{RxBytes: 1<<64 - 1, TxBytes: 1<<64 - 1, At: time.Unix(1, 0), Flags: LinkValid},
			LinkReading{RxBytes: 1<<64 - 1, TxBytes: 1<<64 - 1, At: time.Unix(1, 0), Flags: LinkValid}},
		{"zero counters are counters", LinkReading{At: time.Unix(999, 0), Flags: LinkValid},
			LinkReading{At: time.Unix(999, 0), Flags: LinkValid}},
		{"none", LinkReading{}, LinkReading{}},
		// What an agent that failed to read would never send, but the
		// encoding drops: no flag, no counters.
		{"counters without the flag are none", LinkReading{RxBytes: 5, TxBytes: 6, At: time.Unix(999, 0)}, LinkReading{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requested := time.Unix(1000, 1)
			b := EncodeEchoAnswer(make([]byte, 2048), 77, requested, received, NodeHash("n"), tc.link)
			StampEchoSent(b, sent)
			if len(b) != EchoSize {
				t.Fatalf("answer of %d bytes, want the request's %d", len(b), EchoSize)
			}
			typ, err := Header(b)
			if err != nil || typ != TypeEcho|AnswerBit {
				t.Fatalf("header %x, %v; want an echo answer", typ, err)
			}
			key, req, s, err := DecodeEcho(b)
			if !req.Equal(requested) {
				t.Errorf("the answer carries the request's time %s, want %s", req, requested)
			}
			want := EchoStamps{Received: received, Sent: sent, NodeHash: NodeHash("n"), Link: tc.want}
			if err != nil || key != 77 || !s.Received.Equal(want.Received) || !s.Sent.Equal(want.Sent) || s.NodeHash != want.NodeHash ||
				s.Link.RxBytes != want.Link.RxBytes || s.Link.TxBytes != want.Link.TxBytes || !s.Link.At.Equal(want.Link.At) || s.Link.Flags != want.Link.Flags {
				t.Errorf("decoded key %d %+v (%v), want 77 %+v", key, s, err, want)
			}
		})
	}
	// A request carries nothing of an answer: the agent refuses one that
	// does.
	if _, _, s, err := DecodeEcho(EncodeEcho(make([]byte, EchoSize), 1, time.Unix(5, 0))); err != nil || s != (EchoStamps{}) {
		t.Errorf("a request decodes with %+v, %v; want nothing", s, err)
	}
}

func TestTrainRate(t *testing.T) {
	at := time.Unix(0, 0)
	for _, tc := range []struct {
		name string
		c    TrainCount
		want float64
		ok   bool
	}{
		// 10 packets of 1250 bytes; the 9 after the first (90,000 bits)
		// took 9 ms: 10 Mbit/s.
		{"10 Mbit/s", TrainCount{Packets: 10, Bytes: 12500, First: at, Last: at.Add(9 * time.Millisecond)}, 10, true},
		{"too few", TrainCount{Packets: MinTrainPackets - 1, Bytes: 1000, First: at, Last: at.Add(time.Second)}, 0, false},
		{"no span", TrainCount{Packets: 50, Bytes: 50000, First: at, Last: at}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.c.Mbps()
			if ok != tc.ok || (ok && (got < tc.want*0.999 || got > tc.want*1.001)) {
				t.Errorf("Mbps() = %g, %v; want %g, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestSignedMessages checks every message verifies once signed, and not
// after any one bit of what the MAC covers flips, nor under another key.
func TestSignedMessages(t *testing.T) {
	key, err := NewKey([]byte("kns-3 tests' probe key, 32 bytes"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewKey([]byte("another install's key, 32 bytes!"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	for name, msg := range map[string][]byte{
		"hello":  EncodeHello(make([]byte, HelloSize), 7, "", now),
		"echo":   EncodeEcho(make([]byte, EchoSize), 9, now),
		"train":  EncodeTrain(make([]byte, TrainPacketSize), 3, 1, now),
		"report": EncodeReport(make([]byte, ReportSize), 3, nil, now),
	} {
		key.Sign(msg)
		if !key.Verify(msg) {
			t.Errorf("%s: signed, and not verified", name)
		}
		if other.Verify(msg) {
			t.Errorf("%s: verified under another key", name)
		}
		for i := HeaderSize; i < len(msg) && i < 64; i++ {
			flipped := append([]byte{}, msg...)
			flipped[i] ^= 1
			if key.Verify(flipped) && !paddingAt(msg, i) {
				t.Errorf("%s: byte %d flipped, still verified", name, i)
			}
		}
	}
	if _, err := NewKey(make([]byte, MinKeyBytes-1)); err == nil {
		t.Error("a key shorter than MinKeyBytes was taken")
	}
}

// paddingAt says byte i of msg is past what its MAC covers.
func paddingAt(msg []byte, i int) bool {
	return i >= macAt(msg)+MACSize
}
