package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"
)

// Between nodes. Agents also measure each other, and the prober collects
// what they measured with two more requests, each as long as the room the
// prober wants for its answer: an answer fills the request's bytes and
// no more, so it is never larger. Their MAC is the datagram's last
// MACSize bytes, and covers all the rest.
//
//   - samples: the round trips an agent measured to random other agents
//     (one a second, for network coordinates), after a cursor. Each
//     record names the peer by the hash of its node's name that the
//     peer's own signed answer carried (PeerHash).
//   - pairs: the peers the agent is to measure directly now, each with a
//     stream of echoes and, when the request carries a train id for it,
//     one train; the answer holds what the agent measured of them since
//     the last such request. An agent measures only the peers its own
//     lookup of the agents found, and stops when the requests stop.
const (
	TypeSamples byte = 5
	TypePairs   byte = 6

	// MaxDatagram is the longest samples or pairs request: one Ethernet
	// frame's payload, so that no datagram is fragmented.
	MaxDatagram = 1400
)

// Offsets of a samples message's fields.
const (
	samplesStampAt   = 14
	samplesEpochAt   = 22
	samplesCursorAt  = 30
	samplesCountAt   = 38
	samplesRecordsAt = 40

	// SampleRecordSize is one sample's size: the peer's hash (4), the
	// round trip in microseconds (3; all ones for a loss) and the
	// sample's age in seconds (1, at most 255).
	SampleRecordSize = 8
	// SamplesMinSize is the shortest samples message: room for none.
	SamplesMinSize = samplesRecordsAt + MACSize
)

// Lost is the round trip of an echo never answered.
const Lost time.Duration = -1

// PeerTimeout is how long an agent waits for a peer's answer to an echo:
// one that has not come by then is lost.
const PeerTimeout = 2 * time.Second

// lostMicros is a lost echo's round trip on the wire, maxMicros the
// longest one that is not.
const (
	lostMicros = 1<<24 - 1
	maxMicros  = lostMicros - 1
)

// PeerSample is one round trip an agent measured to another, or a loss.
type PeerSample struct {
	// Peer is PeerHash of the node whose agent answered, or would have.
	Peer uint32
	// RTT is the round trip less the time the echo waited in the peer,
	// or Lost.
	RTT time.Duration
	// Age is how long before the answer it was measured, in whole
	// seconds.
	Age time.Duration
}

// PeerHash is the hash by which samples name a peer: the top half of its
// node's NodeHash.
func PeerHash(nodeHash uint64) uint32 { return uint32(nodeHash >> 32) }

// SamplesRoom is how many samples a samples message of size bytes holds.
func SamplesRoom(size int) int {
	return max(0, (size-SamplesMinSize)/SampleRecordSize)
}

// variableSize says size is a samples or pairs message's length.
func variableSize(size, least int) bool { return size >= least && size <= MaxDatagram }

// EncodeSamplesRequest builds a request of size bytes for the samples
// after cursor, of the agent's run epoch (0 when the prober has none),
// sent at sent.
func EncodeSamplesRequest(b []byte, size int, id, epoch, cursor uint64, sent time.Time) []byte {
	return encodeSamples(b, size, TypeSamples, id, epoch, cursor, sent, nil)
}

// EncodeSamples builds the answer to a samples request of size bytes:
// the agent's epoch, the cursor of its last sample in it, and samples, at
// most SamplesRoom(size) of them.
func EncodeSamples(b []byte, size int, id, epoch, cursor uint64, sent time.Time, samples []PeerSample) []byte {
	return encodeSamples(b, size, TypeSamples|AnswerBit, id, epoch, cursor, sent, samples)
}

func encodeSamples(b []byte, size int, t byte, id, epoch, cursor uint64, sent time.Time, samples []PeerSample) []byte {
	if !variableSize(size, SamplesMinSize) || len(samples) > SamplesRoom(size) {
		panic(fmt.Sprintf("wire: a samples message of %d bytes holding %d samples", size, len(samples)))
	}
	b = b[:size]
	clear(b)
	putHeader(b, t)
	binary.BigEndian.PutUint64(b[IDAt:], id)
	putTime(b[samplesStampAt:], sent)
	binary.BigEndian.PutUint64(b[samplesEpochAt:], epoch)
	binary.BigEndian.PutUint64(b[samplesCursorAt:], cursor)
	binary.BigEndian.PutUint16(b[samplesCountAt:], uint16(len(samples)))
	for i, s := range samples {
		r := b[samplesRecordsAt+i*SampleRecordSize:]
		binary.BigEndian.PutUint32(r, s.Peer)
		putMicros(r[4:7], s.RTT)
		r[7] = byte(min(max(s.Age/time.Second, 0), 255))
	}
	return b
}

// DecodeSamples returns a samples message's id, epoch, cursor, time and
// samples (none in a request).
func DecodeSamples(b []byte) (id, epoch, cursor uint64, sent time.Time, samples []PeerSample, err error) {
	if !variableSize(len(b), SamplesMinSize) {
		return 0, 0, 0, time.Time{}, nil, fmt.Errorf("a samples message of %d bytes", len(b))
	}
	n := int(binary.BigEndian.Uint16(b[samplesCountAt:]))
	if n > SamplesRoom(len(b)) {
		return 0, 0, 0, time.Time{}, nil, fmt.Errorf("%d samples in %d bytes", n, len(b))
	}
	for i := range n {
		r := b[samplesRecordsAt+i*SampleRecordSize:]
		samples = append(samples, PeerSample{Peer: binary.BigEndian.Uint32(r), RTT: getMicros(r[4:7]), Age: time.Duration(r[7]) * time.Second})
	}
	return binary.BigEndian.Uint64(b[IDAt:]), binary.BigEndian.Uint64(b[samplesEpochAt:]), binary.BigEndian.Uint64(b[samplesCursorAt:]),
		getTime(b[samplesStampAt:]), samples, nil
}

func putMicros(b []byte, d time.Duration) {
	v := uint32(lostMicros)
	if d != Lost {
		v = uint32(min(max(d/time.Microsecond, 0), maxMicros))
	}
	b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v)
}

func getMicros(b []byte) time.Duration {
	v := uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
	if v == lostMicros {
		return Lost
	}
	return time.Duration(v) * time.Microsecond
}

// Offsets of a pairs message's fields.
const (
	pairsStampAt = 14
	pairsRateAt  = 22
	pairsCountAt = 24
	pairsFlagsAt = 25
	pairsListAt  = 26

	// PairPeerSize is one peer's size in a request: its address (16, an
	// IPv4 address mapped), its port (2) and a train id (8, 0 for none).
	PairPeerSize = 26
	// MaxPairPeers is the most peers one request names.
	MaxPairPeers = 16
	// PairsMinSize is the shortest pairs message: no peer.
	PairsMinSize = pairsListAt + MACSize

	// pairBlockSize is a result's head: the peer's place in the request
	// (1), flags (1), the peer's hash (4), how many echoes follow (2),
	// and the newest one's age in milliseconds (4). A train's result adds
	// pairTrainSize: its id (8) and its rate in Mbit/s (a float32, 4).
	pairBlockSize = 12
	pairTrainSize = 12
	// PairEchoSize is one echo's round trip in microseconds, all ones for
	// a loss.
	PairEchoSize = 3
)

// Flags of a pair's result.
const (
	pairTrained byte = 1 << iota
	pairAtLeast
	pairRefused
)

// PairPeer is a peer a pairs request names.
type PairPeer struct {
	Addr netip.AddrPort
	// TrainID, when not 0, asks for one train to the peer, once: an agent
	// sends a train for an id once.
	TrainID uint64
}

// PairResult is what an agent measured of one peer since the last pairs
// request.
type PairResult struct {
	// Index is the peer's place in the request.
	Index int
	// Peer is PeerHash of the node whose agent answered; 0 before any did.
	Peer uint32
	// Refused says the agent does not measure this peer: its own lookup
	// did not find it.
	Refused bool
	// Echoes are the round trips of the echoes decided since, oldest
	// first, each less the time it waited in the peer, or Lost.
	Echoes []time.Duration
	// NewestAge is how long before the answer the newest was sent.
	NewestAge time.Duration
	// Train, when not nil, is a train's result.
	Train *PairTrain
}

// PairTrain is what one train between two agents said of their path.
type PairTrain struct {
	ID uint64
	// Mbps is the rate it arrived at, at most the rate it was sent at;
	// AtLeast says it arrived as fast as it was sent (TrainRate).
	Mbps    float64
	AtLeast bool
}

// PairBlockSize is the size of a result holding echoes echoes, and a
// train's when train.
func PairBlockSize(echoes int, train bool) int {
	n := pairBlockSize + echoes*PairEchoSize
	if train {
		n += pairTrainSize
	}
	return n
}

// PairsRoom is how many bytes of results a pairs message of size bytes
// holds.
func PairsRoom(size int) int { return max(0, size-PairsMinSize) }

// PairsRequestSize is the shortest pairs request naming peers peers.
func PairsRequestSize(peers int) int { return PairsMinSize + peers*PairPeerSize }

// EncodePairsRequest builds a request of size bytes naming peers, each to
// be echoed rate times a second, sent at sent.
func EncodePairsRequest(b []byte, size int, id uint64, rate int, peers []PairPeer, sent time.Time) []byte {
	if len(peers) > MaxPairPeers || !variableSize(size, PairsRequestSize(len(peers))) || rate < 0 || rate > math.MaxUint16 {
		panic(fmt.Sprintf("wire: a pairs request of %d bytes naming %d peers at %d a second", size, len(peers), rate))
	}
	b = pairsHead(b, size, TypePairs, id, rate, len(peers), sent)
	for i, p := range peers {
		r := b[pairsListAt+i*PairPeerSize:]
		a := p.Addr.Addr().As16()
		copy(r[:16], a[:])
		binary.BigEndian.PutUint16(r[16:], p.Addr.Port())
		binary.BigEndian.PutUint64(r[18:], p.TrainID)
	}
	return b
}

func pairsHead(b []byte, size int, t byte, id uint64, rate, count int, sent time.Time) []byte {
	b = b[:size]
	clear(b)
	putHeader(b, t)
	binary.BigEndian.PutUint64(b[IDAt:], id)
	putTime(b[pairsStampAt:], sent)
	binary.BigEndian.PutUint16(b[pairsRateAt:], uint16(rate))
	b[pairsCountAt] = byte(count)
	return b
}

// DecodePairsRequest returns a pairs request's id, rate, peers and time.
func DecodePairsRequest(b []byte) (id uint64, rate int, peers []PairPeer, sent time.Time, err error) {
	if !variableSize(len(b), PairsMinSize) {
		return 0, 0, nil, time.Time{}, fmt.Errorf("a pairs request of %d bytes", len(b))
	}
	n := int(b[pairsCountAt])
	if n > MaxPairPeers || len(b) < PairsRequestSize(n) || b[pairsFlagsAt] != 0 {
		return 0, 0, nil, time.Time{}, fmt.Errorf("a pairs request of %d bytes naming %d peers", len(b), n)
	}
	for i := range n {
		r := b[pairsListAt+i*PairPeerSize:]
		addr := netip.AddrFrom16([16]byte(r[:16])).Unmap()
		peers = append(peers, PairPeer{Addr: netip.AddrPortFrom(addr, binary.BigEndian.Uint16(r[16:])), TrainID: binary.BigEndian.Uint64(r[18:])})
	}
	return binary.BigEndian.Uint64(b[IDAt:]), int(binary.BigEndian.Uint16(b[pairsRateAt:])), peers, getTime(b[pairsStampAt:]), nil
}

// EncodePairs builds the answer of size bytes to a pairs request: results
// must fit in PairsRoom(size) (PairBlockSize each).
func EncodePairs(b []byte, size int, id uint64, rate int, sent time.Time, results []PairResult) []byte {
	need := 0
	for _, r := range results {
		need += PairBlockSize(len(r.Echoes), r.Train != nil)
	}
	if !variableSize(size, PairsMinSize) || need > PairsRoom(size) || len(results) > MaxPairPeers || rate < 0 || rate > math.MaxUint16 {
		panic(fmt.Sprintf("wire: pairs results of %d bytes in an answer of %d", need, size))
	}
	b = pairsHead(b, size, TypePairs|AnswerBit, id, rate, len(results), sent)
	at := pairsListAt
	for _, r := range results {
		at += putPairResult(b[at:], r)
	}
	return b
}

func putPairResult(b []byte, r PairResult) int {
	flags := byte(0)
	if r.Refused {
		flags |= pairRefused
	}
	b[0] = byte(r.Index)
	binary.BigEndian.PutUint32(b[2:], r.Peer)
	binary.BigEndian.PutUint16(b[6:], uint16(len(r.Echoes)))
	binary.BigEndian.PutUint32(b[8:], uint32(min(max(r.NewestAge/time.Millisecond, 0), math.MaxUint32)))
	at := pairBlockSize
	if t := r.Train; t != nil {
		flags |= pairTrained
		if t.AtLeast {
			flags |= pairAtLeast
		}
		binary.BigEndian.PutUint64(b[at:], t.ID)
		binary.BigEndian.PutUint32(b[at+8:], math.Float32bits(float32(t.Mbps)))
		at += pairTrainSize
	}
	b[1] = flags
	for _, e := range r.Echoes {
		putMicros(b[at:at+PairEchoSize], e)
		at += PairEchoSize
	}
	return at
}

var errPairs = errors.New("pairs results overrun the answer")

// DecodePairs returns a pairs answer's id, time and results.
func DecodePairs(b []byte) (id uint64, sent time.Time, results []PairResult, err error) {
	if !variableSize(len(b), PairsMinSize) {
		return 0, time.Time{}, nil, fmt.Errorf("a pairs answer of %d bytes", len(b))
	}
	end := len(b) - MACSize
	at := pairsListAt
	for range int(b[pairsCountAt]) {
		if at+pairBlockSize > end {
			return 0, time.Time{}, nil, errPairs
		}
		h := b[at:]
		r := PairResult{Index: int(h[0]), Refused: h[1]&pairRefused != 0, Peer: binary.BigEndian.Uint32(h[2:]),
			NewestAge: time.Duration(binary.BigEndian.Uint32(h[8:])) * time.Millisecond}
		n := int(binary.BigEndian.Uint16(h[6:]))
		trained := h[1]&pairTrained != 0
		if at+PairBlockSize(n, trained) > end {
			return 0, time.Time{}, nil, errPairs
		}
		at += pairBlockSize
		if trained {
			mbps := float64(math.Float32frombits(binary.BigEndian.Uint32(b[at+8:])))
			if !finite(mbps) || mbps < 0 {
				return 0, time.Time{}, nil, fmt.Errorf("a train of %g Mbit/s", mbps)
			}
			r.Train = &PairTrain{ID: binary.BigEndian.Uint64(b[at:]), Mbps: mbps, AtLeast: h[1]&pairAtLeast != 0}
			at += pairTrainSize
		}
		for range n {
			r.Echoes = append(r.Echoes, getMicros(b[at:at+PairEchoSize]))
			at += PairEchoSize
		}
		results = append(results, r)
	}
	return binary.BigEndian.Uint64(b[IDAt:]), getTime(b[pairsStampAt:]), results, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
