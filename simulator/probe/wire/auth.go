package wire

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"os"
	"sync"
)

// Every datagram, request or answer, ends in a MAC: HMAC-SHA256 over the
// message, keyed by a secret every prober and agent of one install share
// (a Secret mounted in the agents and in the simulator), cut to MACSize
// bytes. An agent checks it before anything else costs it: a datagram it
// cannot authenticate is dropped unanswered, uncounted, and takes nothing
// from the budget it keeps for each source. A request also carries the
// time it was sent; an agent refuses one that is not fresh, or that it has
// taken already (package agent), so that a request seen on the wire
// cannot be sent again to spend the prober's budget or to count twice in
// a train.

// MACSize is the length of a datagram's MAC.
const MACSize = 16

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

// macAt is where b's MAC starts, all before it signed: at a fixed place
// in the fixed-size messages, whatever follows (a train's padding, a
// longer datagram's tail) not covered; at the end of a samples or pairs
// message, which covers it whole. 0 when b is no message.
func macAt(b []byte) int {
	if len(b) < HeaderSize {
		return 0
	}
	switch b[TypeAt] &^ AnswerBit {
	case TypeHello:
		return HelloSize - MACSize
	case TypeEcho:
		return EchoSize - MACSize
	case TypeReport:
		return ReportSize - MACSize
	case TypeTrain:
		return trainSignedSize
	case TypeSamples:
		if variableSize(len(b), SamplesMinSize) {
			return len(b) - MACSize
		}
	case TypePairs:
		if variableSize(len(b), PairsMinSize) {
			return len(b) - MACSize
		}
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

// Sign writes b's MAC into it and returns b. b is a whole message, its
// type in its header.
func (k *Key) Sign(b []byte) []byte {
	n := macAt(b)
	if n == 0 {
		panic(fmt.Sprintf("wire: signing %d bytes that are no message", len(b)))
	}
	var sum [sha256.Size]byte
	copy(b[n:n+MACSize], k.mac(sum[:0], b[:n]))
	return b
}

// Verify says b is a message whose MAC is right. Bytes past the MAC, a
// train's padding or a longer datagram's tail, are not covered.
func (k *Key) Verify(b []byte) bool {
	n := macAt(b)
	if n == 0 || len(b) < n+MACSize {
		return false
	}
	var sum [sha256.Size]byte
	return hmac.Equal(k.mac(sum[:0], b[:n])[:MACSize], b[n:n+MACSize])
}
