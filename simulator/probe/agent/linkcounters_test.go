package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"kns3.dev/kns3/simulator/probe/wire"
)

// fakeSysfs lays out a node's /sys for link in a temp dir; writing "" for
// a counter removes its file.
type fakeSysfs struct {
	root, dir string
}

func newFakeSysfs(t testing.TB, link string) fakeSysfs {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "class", "net", link, "statistics")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return fakeSysfs{root: root, dir: dir}
}

func (f fakeSysfs) set(t testing.TB, rx, tx string) {
	t.Helper()
	for name, v := range map[string]string{"rx_bytes": rx, "tx_bytes": tx} {
		path := filepath.Join(f.dir, name)
		if v == "" {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			continue
		}
		// Written whole and renamed: a reader never sees half a number.
		tmp := path + ".new"
		if err := os.WriteFile(tmp, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
}

func (f fakeSysfs) setCounts(t testing.TB, rx, tx uint64) {
	f.set(t, strconv.FormatUint(rx, 10)+"\n", strconv.FormatUint(tx, 10)+"\n")
}

// TestLinkCounters reads counters from a directory laid out as sysfs, and
// checks what an echo answer would carry after each step: the counters
// when they can be read, read again at most once a second, and none when
// they cannot, with one error naming the flags and the file however many
// echoes ask, and one line when they can be read again.
func TestLinkCounters(t *testing.T) {
	fs := newFakeSysfs(t, "eth0")
	c, err := newLinkCounters(fs.root, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	recovered := 0
	c.failed = func(err error) { errs = append(errs, err) }
	c.recovered = func() { recovered++ }
	clock := time.Unix(1000, 0)
	now := func() time.Time { return clock }
	const max64 = "18446744073709551615"
	for _, tc := range []struct {
		name      string
		rx, tx    string // "" removes the file; "-" leaves both as they are
		advance   time.Duration
		want      wire.LinkReading
		errs      int
		recovered int
	}{
		{"first reading", "100\n", "200\n", 0, wire.LinkReading{RxBytes: 100, TxBytes: 200, At: time.Unix(1000, 0), Flags: wire.LinkValid}, 0, 0},
		{"within a second: the last reading", "150\n", "250\n", 999 * time.Millisecond, wire.LinkReading{RxBytes: 100, TxBytes: 200, At: time.Unix(1000, 0), Flags: wire.LinkValid}, 0, 0},
		{"a second on: read again", "-", "-", time.Millisecond, wire.LinkReading{RxBytes: 150, TxBytes: 250, At: time.Unix(1001, 0), Flags: wire.LinkValid}, 0, 0},
		{"the largest counter", max64, "0", time.Second, wire.LinkReading{RxBytes: 1<<64 - 1, TxBytes: 0, At: time.Unix(1002, 0), Flags: wire.LinkValid}, 0, 0},
		{"rx_bytes missing: none, one error", "", "5", time.Second, wire.LinkReading{}, 1, 0},
		{"still missing, many echoes later: no new error", "-", "-", 10 * time.Second, wire.LinkReading{}, 1, 0},
		{"back: read, said once", "7", "8", time.Second, wire.LinkReading{RxBytes: 7, TxBytes: 8, At: time.Unix(1014, 0), Flags: wire.LinkValid}, 1, 1},
		{"not a number: none, an error", "seven", "8", time.Second, wire.LinkReading{}, 2, 1},
		{"tx_bytes missing", "7", "", time.Second, wire.LinkReading{}, 2, 1},
	} {
		if tc.rx != "-" {
			fs.set(t, tc.rx, tc.tx)
		}
		clock = clock.Add(tc.advance)
		var got wire.LinkReading
		// As many echoes as arrive in a second.
		for range 100 {
			got = c.latest(now)
		}
		if got != tc.want || len(errs) != tc.errs || recovered != tc.recovered {
			t.Errorf("%s: reading %+v, %d errors, %d recoveries; want %+v, %d, %d", tc.name, got, len(errs), recovered, tc.want, tc.errs, tc.recovered)
		}
	}
	for _, err := range errs {
		if msg := err.Error(); !strings.Contains(msg, "--node-sysfs="+fs.root) || !strings.Contains(msg, "--node-link=eth0") || !strings.Contains(msg, fs.dir) {
			t.Errorf("error %q does not name the flags and the file", msg)
		}
	}
}

// TestAgentEchoCarriesLinkCounters checks an echo answer carries the
// node link's last reading, or none when the agent reads no counters.
func TestAgentEchoCarriesLinkCounters(t *testing.T) {
	fs := newFakeSysfs(t, "ens5")
	fs.setCounts(t, 12_500_000, 3)
	at := time.Unix(2000, 0)
	echo := echoReq(9, at)
	buf := make([]byte, 2048)
	for _, tc := range []struct {
		name string
		link string // "" reads none
		want wire.LinkReading
	}{
		{"counters", "ens5", wire.LinkReading{RxBytes: 12_500_000, TxBytes: 3, At: at, Flags: wire.LinkValid}},
		{"another interface's, which this node lacks", "eth0", wire.LinkReading{}},
		{"no --node-sysfs", "", wire.LinkReading{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAgent("n", nil, testKey, WithClock(func() time.Time { return at }))
			if tc.link != "" {
				if err := a.ReadLinkCounters(fs.root, tc.link); err != nil {
					t.Fatal(err)
				}
				a.link.failed = func(error) {}
			}
			ans := a.answer(echo, buf, prober, at)
			if len(ans) > len(echo) {
				t.Errorf("answer of %d bytes to %d", len(ans), len(echo))
			}
			if _, _, s, err := wire.DecodeEcho(ans); err != nil || s.Link != tc.want {
				t.Errorf("answer's link reading %+v (%v), want %+v", s.Link, err, tc.want)
			}
		})
	}
}

func TestValidLinkName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"eth0", true},
		{"ens5", true},
		{"enp0s31f6", true},
		{"br-0123456789ab", true}, // 15 bytes
		{"br-0123456789abc", false},
		{"", false},
		{".", false},
		{"..", false},
		{"../../etc", false},
		{"eth0/..", false},
		{"eth0:1", false},
		{"eth 0", false},
	} {
		if err := ValidLinkName(tc.name); (err == nil) != tc.ok {
			t.Errorf("ValidLinkName(%q) = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	if _, err := newLinkCounters("/host/sys", "../x"); err == nil || !strings.Contains(err.Error(), "--node-link") {
		t.Errorf("a bad interface name: %v, want an error naming --node-link", err)
	}
}
