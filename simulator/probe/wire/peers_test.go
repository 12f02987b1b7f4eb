package wire

import (
	"net/netip"
	"reflect"
	"testing"
	"time"
)

var testKey = func() *Key {
	k, err := NewKey([]byte("kns-3 tests' probe key, 32 bytes"))
	if err != nil {
		panic(err)
	}
	return k
}()

// TestSamplesRoundTrip encodes a samples request and its answer and
// decodes them: the answer is as long as the request, holds what fits,
// and a round trip too long for its three bytes, or lost, reads as such.
func TestSamplesRoundTrip(t *testing.T) {
	sent := time.Unix(1000, 0)
	req := EncodeSamplesRequest(make([]byte, MaxDatagram), 200, 7, 11, 41, sent)
	id, epoch, cursor, at, samples, err := DecodeSamples(req)
	if err != nil || id != 7 || epoch != 11 || cursor != 41 || !at.Equal(sent) || len(samples) != 0 {
		t.Fatalf("request decodes as %d %d %d %s %v %v", id, epoch, cursor, at, samples, err)
	}
	room := SamplesRoom(len(req))
	if room != (200-SamplesMinSize)/SampleRecordSize {
		t.Fatalf("room for %d samples in %d bytes", room, len(req))
	}
	in := []PeerSample{
		{Peer: 1, RTT: 250 * time.Microsecond, Age: 3 * time.Second},
		{Peer: 2, RTT: Lost, Age: 0},
		{Peer: 3, RTT: 30 * time.Second, Age: time.Hour},
	}
	ans := EncodeSamples(make([]byte, MaxDatagram), len(req), 7, 12, 44, sent, in)
	if len(ans) != len(req) {
		t.Fatalf("answer of %d bytes to a request of %d", len(ans), len(req))
	}
	if typ, _ := Header(ans); typ != TypeSamples|AnswerBit {
		t.Fatalf("answer type %x", typ)
	}
	_, epoch, cursor, _, got, err := DecodeSamples(ans)
	want := []PeerSample{
		{Peer: 1, RTT: 250 * time.Microsecond, Age: 3 * time.Second},
		{Peer: 2, RTT: Lost},
		{Peer: 3, RTT: maxMicros * time.Microsecond, Age: 255 * time.Second},
	}
	if err != nil || epoch != 12 || cursor != 44 || !reflect.DeepEqual(got, want) {
		t.Errorf("answer decodes as epoch %d cursor %d %+v (%v), want 12 44 %+v", epoch, cursor, got, err, want)
	}
	for _, size := range []int{SamplesMinSize - 1, MaxDatagram + 1} {
		if _, _, _, _, _, err := DecodeSamples(make([]byte, size)); err == nil {
			t.Errorf("a samples message of %d bytes decoded", size)
		}
	}
}

// TestPairsRoundTrip encodes a pairs request naming an IPv4 and an IPv6
// peer, and an answer with a train's result, echoes and a refusal.
func TestPairsRoundTrip(t *testing.T) {
	sent := time.Unix(2000, 0)
	peers := []PairPeer{
		{Addr: netip.MustParseAddrPort("10.244.1.7:10271"), TrainID: 99},
		{Addr: netip.MustParseAddrPort("[fd00::7]:10271")},
	}
	size := PairsRequestSize(len(peers)) + 300
	req := EncodePairsRequest(make([]byte, MaxDatagram), size, 5, 50, peers, sent)
	id, rate, got, at, err := DecodePairsRequest(req)
	if err != nil || id != 5 || rate != 50 || !reflect.DeepEqual(got, peers) || !at.Equal(sent) {
		t.Fatalf("request decodes as %d %d %+v %s %v", id, rate, got, at, err)
	}
	results := []PairResult{
		{Index: 0, Peer: 0xabcdef01, Echoes: []time.Duration{90 * time.Microsecond, Lost, 120 * time.Microsecond}, NewestAge: 40 * time.Millisecond,
			Train: &PairTrain{ID: 99, Mbps: 512.5, AtLeast: true}},
		{Index: 1, Refused: true},
	}
	ans := EncodePairs(make([]byte, MaxDatagram), len(req), 5, 50, sent, results)
	if len(ans) != len(req) {
		t.Fatalf("answer of %d bytes to a request of %d", len(ans), len(req))
	}
	id, at, back, err := DecodePairs(ans)
	if err != nil || id != 5 || !at.Equal(sent) || !reflect.DeepEqual(back, results) {
		t.Errorf("answer decodes as %d %s %+v (%v), want %+v", id, at, back, err, results)
	}
	// A count of results that runs past the datagram is refused.
	ans[pairsCountAt] = 40
	if _, _, _, err := DecodePairs(ans); err == nil {
		t.Error("an answer claiming more results than it holds decoded")
	}
	// A request naming more peers than its length holds is refused.
	short := EncodePairsRequest(make([]byte, MaxDatagram), PairsRequestSize(1), 5, 50, peers[:1], sent)
	short[pairsCountAt] = 2
	if _, _, _, _, err := DecodePairsRequest(short); err == nil {
		t.Error("a request naming more peers than it holds decoded")
	}
}

// TestVariableMessagesSignedWhole checks a samples or pairs message's MAC
// covers every byte before it, its padding included, so that the room a
// request asks for cannot be changed on the way.
func TestVariableMessagesSignedWhole(t *testing.T) {
	sent := time.Unix(3000, 0)
	for name, msg := range map[string][]byte{
		"samples": EncodeSamplesRequest(make([]byte, MaxDatagram), 120, 1, 0, 0, sent),
		"pairs":   EncodePairsRequest(make([]byte, MaxDatagram), 200, 1, 10, []PairPeer{{Addr: netip.MustParseAddrPort("10.0.0.1:1")}}, sent),
	} {
		testKey.Sign(msg)
		if !testKey.Verify(msg) {
			t.Fatalf("%s: signed, and not verified", name)
		}
		for i := HeaderSize; i < len(msg); i++ {
			flipped := append([]byte{}, msg...)
			flipped[i] ^= 1
			if testKey.Verify(flipped) {
				t.Errorf("%s: byte %d of %d flipped, still verified", name, i, len(msg))
			}
		}
		if testKey.Verify(msg[:len(msg)-1]) || testKey.Verify(append(append([]byte{}, msg...), 0)) {
			t.Errorf("%s: cut short or lengthened by a byte, still verified", name)
		}
	}
}

// TestTrainRateIsCappedAtTheSendingRate: a train cannot have arrived
// faster than it was sent, and one that arrived about as fast is a lower
// bound.
func TestTrainRateIsCappedAtTheSendingRate(t *testing.T) {
	at := time.Unix(0, 0)
	// 10 packets; the 9 after the first took 9 ms to arrive: 9.6 Mbit/s.
	got := TrainCount{Packets: 10, Bytes: 10 * TrainPacketSize, First: at, Last: at.Add(9 * time.Millisecond)}
	for _, tc := range []struct {
		name    string
		sentIn  time.Duration
		want    float64
		atLeast bool
	}{
		{"sent in 0.9 ms: the path paced it", 900 * time.Microsecond, 9.6, false},
		{"sent in 9 ms: as fast as it went", 9 * time.Millisecond, 9.6, true},
		{"sent in 18 ms: the sending rate", 18 * time.Millisecond, 4.8, true},
	} {
		mbps, atLeast, ok := TrainRate(got, at, at.Add(tc.sentIn), 10)
		if !ok || atLeast != tc.atLeast || mbps < tc.want*0.999 || mbps > tc.want*1.001 {
			t.Errorf("%s: %g Mbit/s, at least %v, %v; want %g, %v", tc.name, mbps, atLeast, ok, tc.want, tc.atLeast)
		}
	}
	if TrainHeld(TrainCount{Packets: 11, Bytes: 11 * TrainPacketSize}, 10) || !TrainHeld(got, 10) {
		t.Error("TrainHeld: a count of more than was sent taken, or the true one refused")
	}
}
