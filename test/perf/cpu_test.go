package perf

import (
	"os/exec"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// A command may hold spaces and parentheses; the fields after it are
	// counted from its last ')'.
	const stat = "4242 (etcd (x) y) S 17 4242 17 0 -1 4194560 9000 0 0 0 250 130 0 0 20 0 12 0 3321 0 0\n"
	got, err := parseStat(stat)
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{comm: "etcd (x) y", ppid: 17, cpu: 3800 * time.Millisecond}
	if got != want {
		t.Errorf("parseStat = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "4242 etcd S 17", "4242 (etcd) S 17 1 2"} {
		if _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q) took a line without the fields", bad)
		}
	}
}

// TestReadCPU: the process's CPU time grows with work done, and a child's
// is read by its pid.
func TestReadCPU(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep to run as a child: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid, err := ChildPID("sleep")
	if err != nil || pid != cmd.Process.Pid {
		t.Fatalf("ChildPID(sleep) = %d, %v; want %d", pid, err, cmd.Process.Pid)
	}
	from, err := ReadCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	to := from
	sum := 0
	for i := 0; to.Process == from.Process && i < 1<<32; i++ {
		sum += i % 7
		if i%(1<<20) == 0 {
			if to, err = ReadCPU(pid); err != nil {
				t.Fatal(err)
			}
		}
	}
	if to.Process <= from.Process || to.Etcd < from.Etcd {
		t.Errorf("CPU time from %+v to %+v (sum %d): the process's did not grow", from, to, sum)
	}
	process, child, _ := CPUPerPod(from, to, 2)
	if want := float64(to.Process-from.Process) / 2e6; process != want || child < 0 {
		t.Errorf("CPUPerPod = %v ms, %v ms; want %v ms, and the child's not negative", process, child, want)
	}
}
