// Package wire is the probe protocol both ends speak: the datagrams an
// agent (package agent, on every node) and the prober (package probe, in
// the simulator) exchange, how each is signed, and the kernel's receive
// times both read.
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
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"
)

// Message types. An answer's type byte is its request's with AnswerBit set.
const (
	TypeHello  byte = 1
	TypeEcho   byte = 2
	TypeTrain  byte = 3
	TypeReport byte = 4

	AnswerBit byte = 0x80
)

const (
	magic = "KNS3"
	// version 3 signs every datagram (auth.go) and stamps every request
	// with the time it was sent; version 2 added the answer bit and the
	// echo's times. Agents and probers of other versions ignore each
	// other.
	version = 3
	// HeaderSize is magic, type and version.
	HeaderSize = 6

	// HelloSize is the size of a hello and of its answer: room for a node
	// name of 253 bytes (a DNS-1123 subdomain's longest), the request's
	// time and the MAC.
	HelloSize = helloStampAt + 8 + MACSize
	// EchoSize is the size of an echo request and of its answer: the
	// answer's fields end at byte 71, the MAC follows.
	EchoSize = 72 + MACSize
	// TrainPacketSize is the size of each packet of a train: a signed
	// header, padded.
	TrainPacketSize = 1200
	// ReportSize is the size of a report request and of its answer.
	ReportSize = reportStampAt + 8 + MACSize

	// Overhead is what Ethernet, IPv4 and UDP add to each datagram.
	Overhead = 14 + 20 + 8

	// TypeAt is the offset of a message's type byte, IDAt that of its id
	// (a hello's, an echo's key, a train's).
	TypeAt = 4
	IDAt   = 6
)

// MinTrainPackets is the fewest arrivals from which a train gives a rate.
const MinTrainPackets = 8

// SocketBuffer is what agents and probers ask for their sockets' receive
// buffers: the kernel grants up to twice net.core.rmem_max. The more a
// socket holds, the longer its reader may wait for a CPU before a
// datagram is dropped and read as loss.
const SocketBuffer = 4 << 20

// TrainPort is the port an agent counts trains on: the one after its
// probe port. Trains have a socket of their own, so a train's burst
// never fills the buffer echoes wait in.
func TrainPort(probePort uint16) uint16 { return probePort + 1 }

// NewID is a new hello's or train's id: random, and never 0, the id of
// none.
func NewID() uint64 {
	for {
		if id := rand.Uint64(); id != 0 {
			return id
		}
	}
}

// Offsets of the fields after the header. Every message carries its id (a
// hello's, an echo's key, a train's) at 6; every request the time it was
// sent, by the sender's clock, so that an agent can refuse a replay.
const (
	helloNameLenAt = 14
	helloNameAt    = 16
	helloStampAt   = helloNameAt + 253

	echoStampAt    = 14
	echoReceivedAt = 22
	echoSentAt     = 30
	echoNodeHashAt = 38
	echoRxBytesAt  = 46
	echoTxBytesAt  = 54
	echoLinkAtAt   = 62
	echoLinkFlags  = 70

	trainIndexAt = 14
	trainStampAt = 18
	// trainSignedSize is the part of a train packet its MAC covers; the
	// MAC follows it, and padding the MAC.
	trainSignedSize = trainStampAt + 8

	reportPacketsAt = 14
	reportBytesAt   = 18
	reportFirstAt   = 26
	reportLastAt    = 34
	reportStampAt   = 42
)

var ErrShort = errors.New("datagram too short")

// Header checks a datagram's magic and version and returns its type byte,
// AnswerBit included.
func Header(b []byte) (byte, error) {
	if len(b) < HeaderSize {
		return 0, ErrShort
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

func putTime(b []byte, t time.Time) {
	if !t.IsZero() {
		binary.BigEndian.PutUint64(b, uint64(t.UnixNano()))
	}
}

func getTime(b []byte) time.Time {
	if n := int64(binary.BigEndian.Uint64(b)); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// EncodeHello builds a hello carrying id and node: a request when node is
// empty, else the answer; sent is the request's time (zero in an answer
// built from scratch: the agent copies the request's).
func EncodeHello(b []byte, id uint64, node string, sent time.Time) []byte {
	b = b[:HelloSize]
	clear(b)
	t := TypeHello
	if node != "" {
		t |= AnswerBit
	}
	putHeader(b, t)
	binary.BigEndian.PutUint64(b[6:], id)
	n := copy(b[helloNameAt:helloStampAt], node)
	binary.BigEndian.PutUint16(b[helloNameLenAt:], uint16(n))
	putTime(b[helloStampAt:], sent)
	return b
}

// DecodeHello returns a hello's id, the node name it carries (empty in a
// request) and its time.
func DecodeHello(b []byte) (id uint64, node string, sent time.Time, err error) {
	if len(b) < HelloSize {
		return 0, "", time.Time{}, ErrShort
	}
	n := int(binary.BigEndian.Uint16(b[helloNameLenAt:]))
	if n > helloStampAt-helloNameAt {
		return 0, "", time.Time{}, fmt.Errorf("node name of %d bytes", n)
	}
	return binary.BigEndian.Uint64(b[6:]), string(b[helloNameAt : helloNameAt+n]), getTime(b[helloStampAt:]), nil
}

// EchoStamps are what an echo answer adds to the request: the agent's
// times, by its clock, when its kernel received the echo and when it sent
// the answer (only their difference, the time the echo waited in the
// agent, means anything to the prober), the hash of its node's name, and
// the node link's counters.
type EchoStamps struct {
	Received, Sent time.Time
	NodeHash       uint64
	Link           LinkReading
}

// LinkReading is one reading of a node link's byte counters: bytes
// received and sent since the node's interface came up, and when the
// agent read them, by its clock. Flags holds LinkValid when the agent
// has counters; without it the other fields mean nothing.
type LinkReading struct {
	RxBytes, TxBytes uint64
	At               time.Time
	Flags            byte
}

// LinkValid is the flag of a reading that holds counters.
const LinkValid byte = 1

// valid says the reading holds counters.
func (r LinkReading) Valid() bool { return r.Flags&LinkValid != 0 }

// residence is how long the echo waited in the agent: never negative.
func (s EchoStamps) Residence() time.Duration {
	if s.Received.IsZero() || s.Sent.IsZero() {
		return 0
	}
	return max(s.Sent.Sub(s.Received), 0)
}

// nodeHash is the hash of a node's name an echo answer carries.
func NodeHash(node string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(node))
	return h.Sum64()
}

// EncodeEcho builds an echo request carrying key, sent at sent.
func EncodeEcho(b []byte, key uint64, sent time.Time) []byte {
	b = b[:EchoSize]
	clear(b)
	putHeader(b, TypeEcho)
	binary.BigEndian.PutUint64(b[6:], key)
	putTime(b[echoStampAt:], sent)
	return b
}

// EncodeEchoAnswer builds the answer to the echo of key, whose request
// was sent at requested and received at received, for the node whose
// name hashes to node, with the node link's last reading; its sent time is
// filled in by StampEchoSent just before it leaves, and then its MAC.
func EncodeEchoAnswer(b []byte, key uint64, requested, received time.Time, node uint64, link LinkReading) []byte {
	b = EncodeEcho(b, key, requested)
	b[4] |= AnswerBit
	putTime(b[echoReceivedAt:], received)
	binary.BigEndian.PutUint64(b[echoNodeHashAt:], node)
	if link.Valid() {
		binary.BigEndian.PutUint64(b[echoRxBytesAt:], link.RxBytes)
		binary.BigEndian.PutUint64(b[echoTxBytesAt:], link.TxBytes)
		putTime(b[echoLinkAtAt:], link.At)
		b[echoLinkFlags] = link.Flags
	}
	return b
}

// StampEchoSent writes the time an echo answer leaves.
func StampEchoSent(b []byte, sent time.Time) {
	putTime(b[echoSentAt:], sent)
}

// DecodeEcho returns an echo's key, the time its request was sent and, in
// an answer, the agent's times.
func DecodeEcho(b []byte) (uint64, time.Time, EchoStamps, error) {
	if len(b) < EchoSize {
		return 0, time.Time{}, EchoStamps{}, ErrShort
	}
	s := EchoStamps{Received: getTime(b[echoReceivedAt:]), Sent: getTime(b[echoSentAt:])}
	s.NodeHash = binary.BigEndian.Uint64(b[echoNodeHashAt:])
	s.Link.RxBytes = binary.BigEndian.Uint64(b[echoRxBytesAt:])
	s.Link.TxBytes = binary.BigEndian.Uint64(b[echoTxBytesAt:])
	s.Link.At = getTime(b[echoLinkAtAt:])
	s.Link.Flags = b[echoLinkFlags]
	return binary.BigEndian.Uint64(b[6:]), getTime(b[echoStampAt:]), s, nil
}

// EncodeTrain builds packet i of train id, sent at sent.
func EncodeTrain(b []byte, id uint64, i uint32, sent time.Time) []byte {
	b = b[:TrainPacketSize]
	clear(b[:trainSignedSize+MACSize])
	putHeader(b, TypeTrain)
	binary.BigEndian.PutUint64(b[6:], id)
	binary.BigEndian.PutUint32(b[trainIndexAt:], i)
	putTime(b[trainStampAt:], sent)
	return b
}

// DecodeTrain returns a train packet's train, index and time.
func DecodeTrain(b []byte) (id uint64, i uint32, sent time.Time, err error) {
	if len(b) < trainSignedSize+MACSize {
		return 0, 0, time.Time{}, ErrShort
	}
	return binary.BigEndian.Uint64(b[6:]), binary.BigEndian.Uint32(b[trainIndexAt:]), getTime(b[trainStampAt:]), nil
}

// TrainCount is what an agent counted of one train: packets and bytes
// received, and when the first and the last arrived (the agent's clock;
// only their difference means anything to the prober).
type TrainCount struct {
	Packets     uint32
	Bytes       uint64
	First, Last time.Time
}

// EncodeReport builds a report: a request, sent at sent, when c is nil,
// else the answer.
func EncodeReport(b []byte, id uint64, c *TrainCount, sent time.Time) []byte {
	b = b[:ReportSize]
	clear(b)
	t := TypeReport
	if c != nil {
		t |= AnswerBit
	}
	putHeader(b, t)
	binary.BigEndian.PutUint64(b[6:], id)
	putTime(b[reportStampAt:], sent)
	if c != nil {
		binary.BigEndian.PutUint32(b[reportPacketsAt:], c.Packets)
		binary.BigEndian.PutUint64(b[reportBytesAt:], c.Bytes)
		binary.BigEndian.PutUint64(b[reportFirstAt:], uint64(c.First.UnixNano()))
		binary.BigEndian.PutUint64(b[reportLastAt:], uint64(c.Last.UnixNano()))
	}
	return b
}

// DecodeReport returns a report's train, its counts (empty in a request)
// and its time.
func DecodeReport(b []byte) (uint64, TrainCount, time.Time, error) {
	if len(b) < ReportSize {
		return 0, TrainCount{}, time.Time{}, ErrShort
	}
	c := TrainCount{
		Packets: binary.BigEndian.Uint32(b[reportPacketsAt:]),
		Bytes:   binary.BigEndian.Uint64(b[reportBytesAt:]),
		First:   time.Unix(0, int64(binary.BigEndian.Uint64(b[reportFirstAt:]))),
		Last:    time.Unix(0, int64(binary.BigEndian.Uint64(b[reportLastAt:]))),
	}
	return binary.BigEndian.Uint64(b[6:]), c, getTime(b[reportStampAt:]), nil
}

// empty says a report request carries no counts, as a request must.
func (c TrainCount) Empty() bool {
	return c.Packets == 0 && c.Bytes == 0 && c.First.UnixNano() == 0 && c.Last.UnixNano() == 0
}

// Mbps is the rate at which the train's packets arrived after the first,
// in Mbit/s; ok is false when too few arrived to tell.
func (c TrainCount) Mbps() (float64, bool) {
	span := c.Last.Sub(c.First)
	if c.Packets < MinTrainPackets || span <= 0 {
		return 0, false
	}
	perPacket := float64(c.Bytes) / float64(c.Packets)
	bits := (float64(c.Bytes) - perPacket) * 8
	return bits / span.Seconds() / 1e6, true
}

// EchoRequest returns the bytes of an unsigned echo request carrying key:
// for tools that check that an agent refuses what it cannot authenticate.
func EchoRequest(key uint64) []byte {
	return EncodeEcho(make([]byte, EchoSize), key, time.Now())
}
