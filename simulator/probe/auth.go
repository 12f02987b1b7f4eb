package probe

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"os"
	"sync"
	"time"
)

// Every datagram, request or answer, ends in a MAC: HMAC-SHA256 over the
// message, keyed by a secret every prober and agent of one install share
// (a Secret mounted in the agents and in the simulator), cut to macSize
// bytes. An agent checks it before anything else costs it: a datagram it
// cannot authenticate is dropped unanswered, uncounted, and takes nothing
// from the budget it keeps for each source. A request also carries the
// time it was sent; an agent refuses one that is not fresh, or that it has
// taken already, so that a request seen on the wire cannot be sent again
// to spend the prober's budget or to count twice in a train.

// macSize is the length of a datagram's MAC.
const macSize = 16

// MinKeyBytes is the shortest probe key taken: 128 bits.
const MinKeyBytes = 16

// Key is the secret the probers and agents of one install share.
type Key struct {
	macs sync.Pool
}

// NewKey returns the key of secret, which must be at least MinKeyBytes.
func NewKey(secret []byte) (*Key, error) {
	if len(secret) < MinKeyBytes {
		return nil, fmt.Errorf("probe key of %d bytes, want at least %d", len(secret), MinKeyBytes)
	}
	secret = bytes.Clone(secret)
	k := &Key{}
	k.macs.New = func() any { return hmac.New(sha256.New, secret) }
	return k, nil
}

// ReadKey reads the key from path: a mounted Secret's file, its trailing
// white space (a newline an editor or `echo` added) left out.
func ReadKey(path string) (*Key, error) {
	if path == "" {
		return nil, errors.New("no probe key: name the file holding it (--probe-key-file, a mounted Secret)")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the probe key: %w", err)
	}
	k, err := NewKey(bytes.TrimRight(b, " \t\r\n"))
	if err != nil {
		return nil, fmt.Errorf("probe key in %s: %w", path, err)
	}
	return k, nil
}

// signedSize is how much of a message of type t (answerBit ignored) its
// MAC covers; the MAC follows. 0 for no known type.
func signedSize(t byte) int {
	switch t &^ answerBit {
	case typeHello:
		return HelloSize - macSize
	case typeEcho:
		return EchoSize - macSize
	case typeReport:
		return ReportSize - macSize
	case typeTrain:
		return trainSignedSize
	}
	return 0
}

func (k *Key) mac(dst, msg []byte) []byte {
	h := k.macs.Get().(hash.Hash)
	h.Reset()
	h.Write(msg)
	dst = h.Sum(dst)
	k.macs.Put(h)
	return dst
}

// sign writes b's MAC into it and returns b. b is a whole message, its
// type in its header.
func (k *Key) sign(b []byte) []byte {
	n := signedSize(b[4])
	var sum [sha256.Size]byte
	copy(b[n:n+macSize], k.mac(sum[:0], b[:n]))
	return b
}

// verify says b is a message whose MAC is right. Bytes past the MAC, a
// train's padding or a longer datagram's tail, are not covered.
func (k *Key) verify(b []byte) bool {
	if len(b) < headerSize {
		return false
	}
	n := signedSize(b[4])
	if n == 0 || len(b) < n+macSize {
		return false
	}
	var sum [sha256.Size]byte
	return hmac.Equal(k.mac(sum[:0], b[:n])[:macSize], b[n:n+macSize])
}

// Freshness: an agent takes a request sent within maxRequestSkew of its
// own clock, either way, and each request once. Nodes' clocks are kept
// within milliseconds of each other by NTP; seconds of skew are a broken
// node, and its agent's refusals are counted (Agent.Refused).
const (
	maxRequestSkew = 10 * time.Second
	// maxRemembered bounds the requests an agent remembers: the probers'
	// rates over twice maxRequestSkew, with room. Only authenticated
	// requests are remembered, so only a prober can fill it.
	maxRemembered = 1 << 18
)

// replayGuard remembers the requests an agent took while they could still
// be fresh.
type replayGuard struct {
	seen  map[uint64]struct{}
	order []remembered
	head  int
}

type remembered struct {
	id uint64
	at time.Time
}

// fresh says the request whose identity is id, sent at sent, may be taken
// at now: sent within maxRequestSkew of now, and not taken before. It
// remembers it when so.
func (g *replayGuard) fresh(id uint64, sent, now time.Time) bool {
	if sent.IsZero() || sent.Sub(now).Abs() > maxRequestSkew {
		return false
	}
	g.forget(now)
	if _, ok := g.seen[id]; ok {
		return false
	}
	if len(g.seen) >= maxRemembered {
		return false
	}
	if g.seen == nil {
		g.seen = map[uint64]struct{}{}
	}
	g.seen[id] = struct{}{}
	g.order = append(g.order, remembered{id, now})
	return true
}

// forget drops what was taken longer ago than a request can be fresh.
func (g *replayGuard) forget(now time.Time) {
	for g.head < len(g.order) && now.Sub(g.order[g.head].at) > 2*maxRequestSkew {
		delete(g.seen, g.order[g.head].id)
		g.head++
	}
	if g.head > len(g.order)/2 && g.head > 1024 {
		g.order = append(g.order[:0], g.order[g.head:]...)
		g.head = 0
	}
}

// requestID is the identity a request is remembered by: its type, id, for
// a train packet its index, and the time it was sent (a prober asks for a
// train's report more than once, each time anew), mixed so that two
// requests never collide in practice.
func requestID(t byte, id uint64, index uint32, sent time.Time) uint64 {
	x := id ^ uint64(t)<<56 ^ uint64(index)*0x9e3779b97f4a7c15 ^ uint64(sent.UnixNano())*0xd1b54a32d192ed03
	// splitmix64's finaliser.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
