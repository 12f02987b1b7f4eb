package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"kns3.dev/kns3/simulator/probe/wire"
)

// linkReadEvery is how often at most an agent reads its node link's
// counters: echoes arrive a hundred times a second or more, and a rate
// over a window needs no finer readings.
const linkReadEvery = time.Second

// maxLinkName is the longest interface name Linux takes (IFNAMSIZ less
// the terminating NUL).
const maxLinkName = 15

// ValidLinkName says what is wrong with name as a network interface's
// name, as Linux names them: it becomes a path element under sysfs, so
// it must be one plain element.
func ValidLinkName(name string) error {
	switch {
	case name == "":
		return errors.New("empty")
	case len(name) > maxLinkName:
		return fmt.Errorf("%q is %d bytes, an interface name is at most %d", name, len(name), maxLinkName)
	case name == "." || name == "..":
		return fmt.Errorf("%q is not an interface name", name)
	case strings.ContainsAny(name, "/: \t\n\x00"):
		return fmt.Errorf("%q holds a character no interface name does ('/', ':', a space or a NUL)", name)
	}
	return nil
}

// linkCounters reads one interface's byte counters from sysfs, at most
// once every linkReadEvery, and keeps the last reading for the echoes in
// between.
type linkCounters struct {
	rxPath, txPath string
	// source names the flags that chose the paths, for the error.
	source string
	// failed is called when reading starts failing, and recovered when it
	// works again: each once per change, never once per echo.
	failed    func(error)
	recovered func()

	mu      sync.Mutex
	last    wire.LinkReading
	tried   time.Time
	failing bool
}

// newLinkCounters reads link's counters under sysfs (the node's /sys).
func newLinkCounters(sysfs, link string) (*linkCounters, error) {
	if err := ValidLinkName(link); err != nil {
		return nil, fmt.Errorf("--node-link: %w", err)
	}
	dir := filepath.Join(sysfs, "class", "net", link, "statistics")
	return &linkCounters{
		rxPath: filepath.Join(dir, "rx_bytes"),
		txPath: filepath.Join(dir, "tx_bytes"),
		source: fmt.Sprintf("--node-sysfs=%s --node-link=%s", sysfs, link),
		failed: func(err error) {
			klog.Background().Error(err, "Reading the node link's byte counters failed; echo answers carry none until they can be read")
		},
		recovered: func() {
			klog.Background().Info("Reading the node link's byte counters again")
		},
	}, nil
}

// latest returns the last reading, reading the counters again first when
// the last try is linkReadEvery old; now is the agent's clock. A reading
// that failed is none: its Flags say so.
func (c *linkCounters) latest(now func() time.Time) wire.LinkReading {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := now(); !c.tried.IsZero() && t.Sub(c.tried) < linkReadEvery && t.Sub(c.tried) >= 0 {
		return c.last
	}
	rx, tx, err := c.read()
	// Stamped after the read: the counters are at least that recent.
	c.tried = now()
	if err != nil {
		c.last = wire.LinkReading{}
		if !c.failing {
			c.failing = true
			c.failed(fmt.Errorf("%s: %w", c.source, err))
		}
		return c.last
	}
	if c.failing {
		c.failing = false
		c.recovered()
	}
	c.last = wire.LinkReading{RxBytes: rx, TxBytes: tx, At: c.tried, Flags: wire.LinkValid}
	return c.last
}

// read reads both counters.
func (c *linkCounters) read() (rx, tx uint64, err error) {
	if rx, err = readCounter(c.rxPath); err != nil {
		return 0, 0, err
	}
	if tx, err = readCounter(c.txPath); err != nil {
		return 0, 0, err
	}
	return rx, tx, nil
}

// readCounter reads one sysfs counter: a decimal number and a newline.
func readCounter(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
