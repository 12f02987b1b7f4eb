package probe

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"
)

// TestAgentNeverAmplifies checks every answer is at most as long as what
// it answers, whatever arrives: an agent must not multiply traffic toward
// a forged source address.
func TestAgentNeverAmplifies(t *testing.T) {
	a := NewAgent("worker-with-a-long-name.example", nil)
	buf := make([]byte, 2048)
	hello := encodeHello(make([]byte, HelloSize), 7, "")
	echo := encodeEcho(make([]byte, EchoSize), 9)
	report := encodeReport(make([]byte, ReportSize), 3, nil)
	train := encodeTrain(make([]byte, TrainPacketSize), 3, 0)
	for _, tc := range []struct {
		name      string
		in        []byte
		answered  bool
		wantBytes []byte
	}{
		{"hello", hello, true, nil},
		{"hello cut short", hello[:HelloSize-1], false, nil},
		{"echo", echo, true, echo},
		{"echo cut short", echo[:EchoSize-1], false, nil},
		{"echo padded", append(append([]byte{}, echo...), make([]byte, 500)...), true, echo},
		{"train packet", train, false, nil},
		{"report", report, true, nil},
		{"report cut short", report[:ReportSize-1], false, nil},
		{"not a probe", bytes.Repeat([]byte{'x'}, 100), false, nil},
		{"empty", nil, false, nil},
		{"other version", append([]byte("KNS3\x02\x09"), make([]byte, 100)...), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := a.answer(tc.in, buf, time.Now())
			if (out != nil) != tc.answered {
				t.Fatalf("answered %v, want %v", out != nil, tc.answered)
			}
			if len(out) > len(tc.in) {
				t.Errorf("answer of %d bytes to %d", len(out), len(tc.in))
			}
			if tc.wantBytes != nil && !bytes.Equal(out, tc.wantBytes) {
				t.Errorf("answer %x, want %x", out, tc.wantBytes)
			}
		})
	}
	id, node, err := decodeHello(a.answer(hello, buf, time.Now()))
	if err != nil || id != 7 || node != "worker-with-a-long-name.example" {
		t.Errorf("hello answer: id %d node %q err %v, want 7 and the agent's node", id, node, err)
	}
}

// TestAgentCountsTrains checks a report says what arrived of its train
// only, and that the agent forgets the oldest trains past maxTrains.
func TestAgentCountsTrains(t *testing.T) {
	a := NewAgent("n", nil)
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	buf := make([]byte, 2048)
	pkt := make([]byte, TrainPacketSize)
	for i := range 5 {
		a.answer(encodeTrain(pkt, 1, uint32(i)), buf, at(i))
		a.answer(encodeTrain(pkt, 2, uint32(i)), buf, at(i))
	}
	a.answer(encodeTrain(pkt, 2, 5), buf, at(9))
	for _, tc := range []struct {
		id      uint64
		packets uint32
	}{{1, 5}, {2, 6}, {3, 0}} {
		id, c, err := decodeReport(a.answer(encodeReport(make([]byte, ReportSize), tc.id, nil), buf, time.Now()))
		if err != nil || id != tc.id || c.Packets != tc.packets || c.Bytes != uint64(tc.packets)*TrainPacketSize {
			t.Errorf("report of train %d: id %d, %d packets, %d bytes, err %v; want %d packets", tc.id, id, c.Packets, c.Bytes, err, tc.packets)
		}
		if tc.id == 2 && (!c.First.Equal(at(0)) || !c.Last.Equal(at(9))) {
			t.Errorf("train 2 from %s to %s, want its first and last arrivals, %s and %s", c.First, c.Last, at(0), at(9))
		}
	}
	for id := uint64(10); id < 10+maxTrains; id++ {
		a.answer(encodeTrain(pkt, id, 0), buf, time.Now())
	}
	if len(a.trains) != maxTrains || a.trains[1] != nil || a.trains[2] != nil {
		t.Errorf("after %d more trains the agent holds %d, train 1 %v, train 2 %v; want %d and neither", maxTrains, len(a.trains), a.trains[1], a.trains[2], maxTrains)
	}
}

func TestTrainRate(t *testing.T) {
	at := time.Unix(0, 0)
	for _, tc := range []struct {
		name string
		c    trainCount
		want float64
		ok   bool
	}{
		// 10 packets of 1250 bytes; the 9 after the first (90,000 bits)
		// took 9 ms: 10 Mbit/s.
		{"10 Mbit/s", trainCount{Packets: 10, Bytes: 12500, First: at, Last: at.Add(9 * time.Millisecond)}, 10, true},
		{"too few", trainCount{Packets: minTrainPackets - 1, Bytes: 1000, First: at, Last: at.Add(time.Second)}, 0, false},
		{"no span", trainCount{Packets: 50, Bytes: 50000, First: at, Last: at}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.c.Mbps()
			if ok != tc.ok || (ok && (got < tc.want*0.999 || got > tc.want*1.001)) {
				t.Errorf("Mbps() = %g, %v; want %g, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestAgentKernelTimestamps checks the listening agent stamps a train's
// packets with the kernel's receive times: the report spans the train.
func TestAgentKernelTimestamps(t *testing.T) {
	a, err := Listen("127.0.0.1:0", "n")
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case kernelTimestamps && a.stamped == nil:
		t.Fatal("the agent does not read the kernel's receive times")
	case !kernelTimestamps:
		t.Log("no kernel receive timestamps on this platform: the agent's clock is used")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Serve(ctx)
	conn, err := net.Dial("udp", a.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	before := time.Now()
	pkt := make([]byte, TrainPacketSize)
	for i := range 10 {
		if _, err := conn.Write(encodeTrain(pkt, 7, uint32(i))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	buf := make([]byte, ReportSize)
	var c trainCount
	for range 50 {
		if _, err := conn.Write(encodeReport(make([]byte, ReportSize), 7, nil)); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if n, err := conn.Read(buf); err == nil {
			if _, got, err := decodeReport(buf[:n]); err == nil && got.Packets == 10 {
				c = got
				break
			}
		}
	}
	if c.Packets != 10 {
		t.Fatalf("report: %d packets, want 10", c.Packets)
	}
	// Ten packets 2 ms apart: the first and last arrivals 18 ms or more apart,
	// both after the first was sent.
	if span := c.Last.Sub(c.First); span < 18*time.Millisecond || span > time.Second || c.First.Before(before.Add(-time.Second)) {
		t.Errorf("arrivals from %s to %s (span %s), sent from %s", c.First, c.Last, span, before)
	}
}
