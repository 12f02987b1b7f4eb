// Package probe measures each node's network from the simulator: a small
// agent on every node (the simulator's own image, `--agent`) answers UDP
// probes, and the simulator's Prober sends them, within a byte budget, and
// turns the answers into latency, packet loss and bandwidth per node, each
// with how many samples are behind it, an interval and its age.
//
// Four messages, each a UDP datagram starting with a 4-byte magic, a type
// byte and a version byte. The type byte's high bit marks an answer:
//
//   - hello: the agent answers with its node's name, so the prober needs no
//     API credentials to map an address to a node;
//   - echo: answered with the same key, the time the agent's kernel
//     received the echo, the time the agent sent the answer, and a hash of
//     its node's name: the prober takes the time the echo waited for a CPU
//     out of the round trip, and asks for the name again when the hash is
//     not its node's; the round trip is the node's latency, the share
//     left unanswered its loss. The answer also carries the node link's
//     byte counters as the agent last read them (at most once a second)
//     and when, or a flag saying it has none: their rate over a window is
//     the traffic already on the node's link. They fill bytes the request
//     already had, so the answer is no larger;
//   - train: a burst of same-sized packets the agent only counts; how fast
//     they arrive, past the link's queue, is the node's bandwidth;
//   - report: the agent answers with what it counted of one train.
//
// What an agent refuses, so that no one on the pod network can steer it:
//   - answers: an agent never answers an answer, so a datagram forged with
//     another agent's address as its source is answered once, and no two
//     agents can be set echoing each other;
//   - datagrams from the agents' port or from a port below 1024: the
//     prober sends from an ephemeral port;
//   - hello requests that carry a name, report requests that carry counts,
//     echo requests that carry times or link counters;
//   - more than a bounded rate of answers to any one source;
//   - a report on a train asked for by another address than the one that
//     sent it: each source has its own few trains, which no other source
//     can evict.
//
// An agent never answers with more bytes than it was sent, so it cannot
// amplify traffic toward a forged source address. The prober counts only
// answers from the address it asked that carry the random key, hello id
// or train id it sent, refuses a report that claims more than the train
// held, and caps a train's rate at the rate it was sent at.
package probe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"time"
)

// Message types. An answer's type byte is its request's with answerBit set.
const (
	typeHello  byte = 1
	typeEcho   byte = 2
	typeTrain  byte = 3
	typeReport byte = 4

	answerBit byte = 0x80
)

const (
	magic = "KNS3"
	// version 2 added the answer bit and the echo's times; version 1
	// agents and probers ignore each other. The echo answer's link
	// counters took bytes every version 2 echo sends as zeros: an older
	// agent's answer reads as one without counters, and an older prober
	// does not read them.
	version = 2
	// headerSize is magic, type and version.
	headerSize = 6

	// HelloSize is the size of a hello and of its answer: room for a node
	// name of 253 bytes (a DNS-1123 subdomain's longest).
	HelloSize = headerSize + 8 + 2 + 253
	// EchoSize is the size of an echo request and of its answer: the
	// answer's fields end at byte 63.
	EchoSize = 64
	// TrainPacketSize is the payload of each packet of a train.
	TrainPacketSize = 1200
	// ReportSize is the size of a report request and of its answer.
	ReportSize = headerSize + 8 + 4 + 8 + 8 + 8

	// wireOverhead is what Ethernet, IPv4 and UDP add to each datagram.
	wireOverhead = 14 + 20 + 8
)

var errShort = errors.New("datagram too short")

// header checks a datagram's magic and version and returns its type byte,
// answerBit included.
func header(b []byte) (byte, error) {
	if len(b) < headerSize {
		return 0, errShort
	}
	if string(b[:4]) != magic {
		return 0, errors.New("not a KNS-3 probe")
	}
	if b[5] != version {
		return 0, fmt.Errorf("probe version %d, want %d", b[5], version)
	}
	return b[4], nil
}

func putHeader(b []byte, t byte) {
	copy(b, magic)
	b[4], b[5] = t, version
}

// encodeHello builds a hello carrying id and node: a request when node is
// empty, else the answer. It is padded to HelloSize.
func encodeHello(b []byte, id uint64, node string) []byte {
	b = b[:HelloSize]
	clear(b)
	t := typeHello
	if node != "" {
		t |= answerBit
	}
	putHeader(b, t)
	binary.BigEndian.PutUint64(b[6:], id)
	n := copy(b[16:], node)
	binary.BigEndian.PutUint16(b[14:], uint16(n))
	return b
}

// decodeHello returns a hello's id and the node name it carries (empty in a
// request).
func decodeHello(b []byte) (id uint64, node string, err error) {
	if len(b) < HelloSize {
		return 0, "", errShort
	}
	n := int(binary.BigEndian.Uint16(b[14:]))
	if n > HelloSize-16 {
		return 0, "", fmt.Errorf("node name of %d bytes", n)
	}
	return binary.BigEndian.Uint64(b[6:]), string(b[16 : 16+n]), nil
}

// echoStamps are what an echo answer adds to the request: the agent's
// times, by its clock, when its kernel received the echo and when it sent
// the answer (only their difference, the time the echo waited in the
// agent, means anything to the prober), the hash of its node's name, and
// the node link's counters.
type echoStamps struct {
	Received, Sent time.Time
	NodeHash       uint64
	Link           linkReading
}

// linkReading is one reading of a node link's byte counters: bytes
// received and sent since the node's interface came up, and when the
// agent read them, by its clock. Flags holds linkValid when the agent
// has counters; without it the other fields mean nothing.
type linkReading struct {
	RxBytes, TxBytes uint64
	At               time.Time
	Flags            byte
}

// linkValid is the flag of a reading that holds counters.
const linkValid byte = 1

// valid says the reading holds counters.
func (r linkReading) valid() bool { return r.Flags&linkValid != 0 }

// residence is how long the echo waited in the agent: never negative.
func (s echoStamps) residence() time.Duration {
	if s.Received.IsZero() || s.Sent.IsZero() {
		return 0
	}
	return max(s.Sent.Sub(s.Received), 0)
}

// Offsets of an echo answer's fields.
const (
	echoReceivedAt = 14
	echoSentAt     = 22
	echoNodeHashAt = 30
	echoRxBytesAt  = 38
	echoTxBytesAt  = 46
	echoLinkAtAt   = 54
	echoLinkFlags  = 62
)

// nodeHash is the hash of a node's name an echo answer carries.
func nodeHash(node string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(node))
	return h.Sum64()
}

// encodeEcho builds an echo request carrying key.
func encodeEcho(b []byte, key uint64) []byte {
	b = b[:EchoSize]
	clear(b)
	putHeader(b, typeEcho)
	binary.BigEndian.PutUint64(b[6:], key)
	return b
}

// encodeEchoAnswer builds the answer to the echo of key, received at, for
// the node whose name hashes to node, with the node link's last reading;
// its sent time is filled in by stampEchoSent just before it leaves.
func encodeEchoAnswer(b []byte, key uint64, received time.Time, node uint64, link linkReading) []byte {
	b = encodeEcho(b, key)
	b[4] |= answerBit
	binary.BigEndian.PutUint64(b[echoReceivedAt:], uint64(received.UnixNano()))
	binary.BigEndian.PutUint64(b[echoNodeHashAt:], node)
	if link.valid() {
		binary.BigEndian.PutUint64(b[echoRxBytesAt:], link.RxBytes)
		binary.BigEndian.PutUint64(b[echoTxBytesAt:], link.TxBytes)
		binary.BigEndian.PutUint64(b[echoLinkAtAt:], uint64(link.At.UnixNano()))
		b[echoLinkFlags] = link.Flags
	}
	return b
}

// stampEchoSent writes the time an echo answer leaves.
func stampEchoSent(b []byte, sent time.Time) {
	binary.BigEndian.PutUint64(b[echoSentAt:], uint64(sent.UnixNano()))
}

// decodeEcho returns an echo's key and, in an answer, its times.
func decodeEcho(b []byte) (uint64, echoStamps, error) {
	if len(b) < EchoSize {
		return 0, echoStamps{}, errShort
	}
	var s echoStamps
	if r := int64(binary.BigEndian.Uint64(b[echoReceivedAt:])); r != 0 {
		s.Received = time.Unix(0, r)
	}
	if t := int64(binary.BigEndian.Uint64(b[echoSentAt:])); t != 0 {
		s.Sent = time.Unix(0, t)
	}
	s.NodeHash = binary.BigEndian.Uint64(b[echoNodeHashAt:])
	s.Link.RxBytes = binary.BigEndian.Uint64(b[echoRxBytesAt:])
	s.Link.TxBytes = binary.BigEndian.Uint64(b[echoTxBytesAt:])
	if t := int64(binary.BigEndian.Uint64(b[echoLinkAtAt:])); t != 0 {
		s.Link.At = time.Unix(0, t)
	}
	s.Link.Flags = b[echoLinkFlags]
	return binary.BigEndian.Uint64(b[6:]), s, nil
}

// encodeTrain builds packet i of train id.
func encodeTrain(b []byte, id uint64, i uint32) []byte {
	b = b[:TrainPacketSize]
	putHeader(b, typeTrain)
	binary.BigEndian.PutUint64(b[6:], id)
	binary.BigEndian.PutUint32(b[14:], i)
	return b
}

func decodeTrain(b []byte) (id uint64, err error) {
	if len(b) < headerSize+12 {
		return 0, errShort
	}
	return binary.BigEndian.Uint64(b[6:]), nil
}

// trainCount is what an agent counted of one train: packets and bytes
// received, and when the first and the last arrived (the agent's clock;
// only their difference means anything to the prober).
type trainCount struct {
	Packets     uint32
	Bytes       uint64
	First, Last time.Time
}

// encodeReport builds a report: a request when c is nil, else the answer.
func encodeReport(b []byte, id uint64, c *trainCount) []byte {
	b = b[:ReportSize]
	clear(b)
	t := typeReport
	if c != nil {
		t |= answerBit
	}
	putHeader(b, t)
	binary.BigEndian.PutUint64(b[6:], id)
	if c != nil {
		binary.BigEndian.PutUint32(b[14:], c.Packets)
		binary.BigEndian.PutUint64(b[18:], c.Bytes)
		binary.BigEndian.PutUint64(b[26:], uint64(c.First.UnixNano()))
		binary.BigEndian.PutUint64(b[34:], uint64(c.Last.UnixNano()))
	}
	return b
}

func decodeReport(b []byte) (uint64, trainCount, error) {
	if len(b) < ReportSize {
		return 0, trainCount{}, errShort
	}
	c := trainCount{
		Packets: binary.BigEndian.Uint32(b[14:]),
		Bytes:   binary.BigEndian.Uint64(b[18:]),
		First:   time.Unix(0, int64(binary.BigEndian.Uint64(b[26:]))),
		Last:    time.Unix(0, int64(binary.BigEndian.Uint64(b[34:]))),
	}
	return binary.BigEndian.Uint64(b[6:]), c, nil
}

// empty says a report request carries no counts, as a request must.
func (c trainCount) empty() bool {
	return c.Packets == 0 && c.Bytes == 0 && c.First.UnixNano() == 0 && c.Last.UnixNano() == 0
}

// Mbps is the rate at which the train's packets arrived after the first,
// in Mbit/s; ok is false when too few arrived to tell.
func (c trainCount) Mbps() (float64, bool) {
	span := c.Last.Sub(c.First)
	if c.Packets < minTrainPackets || span <= 0 {
		return 0, false
	}
	perPacket := float64(c.Bytes) / float64(c.Packets)
	bits := (float64(c.Bytes) - perPacket) * 8
	return bits / span.Seconds() / 1e6, true
}

// EchoRequest returns the bytes of an echo request carrying key: for tools
// that probe an agent by hand.
func EchoRequest(key uint64) []byte {
	return encodeEcho(make([]byte, EchoSize), key)
}
