package perf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MeasuredNamespace is the namespace of the pods whose scheduling a test
// case measures (its createPods op with collectMetrics), as
// performance-config.yaml names it: the CPU meter counts the CPU time the
// process and etcd spend while those pods are created and scheduled.
const MeasuredNamespace = "measured"

// userHZ is the unit of a process's CPU times in /proc/<pid>/stat: the
// kernel's USER_HZ, 100 on every Linux architecture Kubernetes builds for.
const userHZ = 100

// CPUReading is what the process and etcd had used by a moment: CPU time
// (user and system), and the wall clock.
type CPUReading struct {
	Wall    time.Time
	Process time.Duration
	Etcd    time.Duration
}

// ReadCPU reads this process's CPU time (getrusage: every thread, so the
// scheduler, the API server and the simulator stub, which the harness runs
// in the test process) and etcd's, from /proc/<etcdPID>/stat (the
// harness runs etcd as a child process); 0 for etcd when etcdPID is 0.
func ReadCPU(etcdPID int) (CPUReading, error) {
	r := CPUReading{Wall: time.Now()}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return r, fmt.Errorf("getrusage: %w", err)
	}
	r.Process = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if etcdPID == 0 {
		return r, nil
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(etcdPID), "stat"))
	if err != nil {
		return r, err
	}
	s, err := parseStat(string(stat))
	if err != nil {
		return r, fmt.Errorf("/proc/%d/stat: %w", etcdPID, err)
	}
	r.Etcd = s.cpu
	return r, nil
}

// procStat is what the meter reads of /proc/<pid>/stat.
type procStat struct {
	comm string
	ppid int
	cpu  time.Duration
}

// parseStat reads /proc/<pid>/stat: "pid (comm) state ppid ... utime
// stime ...", utime and stime being fields 14 and 15, in USER_HZ ticks.
// The command may hold spaces and parentheses, so the fields are counted
// from its last ')'.
func parseStat(stat string) (procStat, error) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return procStat{}, errors.New("no command in parentheses")
	}
	fields := strings.Fields(stat[end+1:])
	// fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
	if len(fields) < 13 {
		return procStat{}, fmt.Errorf("%d fields after the command, want at least 13", len(fields))
	}
	ppid, err1 := strconv.Atoi(fields[1])
	utime, err2 := strconv.ParseInt(fields[11], 10, 64)
	stime, err3 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procStat{}, err
	}
	return procStat{comm: stat[open+1 : end], ppid: ppid, cpu: time.Duration(utime+stime) * time.Second / userHZ}, nil
}

// ChildPID is the newest (highest-numbered) child process of this one
// whose command is comm; 0 when there is none.
func ChildPID(comm string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	self, found := os.Getpid(), 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		if s, err := parseStat(string(stat)); err == nil && s.ppid == self && s.comm == comm {
			found = max(found, pid)
		}
	}
	return found, nil
}

// CPUPerPod is what scheduling pods pods cost between two readings: CPU
// milliseconds per pod of the process and of etcd, and the seconds it
// took.
func CPUPerPod(from, to CPUReading, pods int) (process, etcd, seconds float64) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(pods) }
	return ms(to.Process - from.Process), ms(to.Etcd - from.Etcd), to.Wall.Sub(from.Wall).Seconds()
}
