package scenario

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/klog/v2"
)

func TestParseFault(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	tests := []struct {
		fault       string
		want        Fault
		failStatus  int
		description string
	}{
		{"{}", Fault{}, 0, "none"},
		{"{status: 500}", Fault{Status: 500}, 500, "status=500"},
		{"{delay_ms: 200}", Fault{DelayMs: 200}, 0, "delay_ms=200"},
		{"{delay_ms: 600000}", Fault{DelayMs: 600000}, 0, "delay_ms=600000"},
		{"{status: 503, delay_ms: 200}", Fault{Status: 503, DelayMs: 200}, 503, "delay_ms=200 status=503"},
		{"{hang: true}", Fault{Hang: true}, 0, "hang"},
		{"{hang: false, status: 502}", Fault{Status: 502}, 502, "status=502"},
		{"{error_rate: 0.5}", Fault{ErrorRate: f(0.5)}, 503, "error_rate=0.5 status=503"},
		{"{error_rate: 1, status: 500}", Fault{ErrorRate: f(1), Status: 500}, 500, "error_rate=1 status=500"},
		{"{error_rate: 0.25, delay_ms: 10}", Fault{ErrorRate: f(0.25), DelayMs: 10}, 503, "delay_ms=10 error_rate=0.25 status=503"},
		{"{exit_code: 1}", Fault{ExitCode: i(1)}, 0, "exit_code=1"},
		{"{exit_code: 125, hang: true}", Fault{ExitCode: i(125), Hang: true}, 0, "hang exit_code=125"},
		{"{exit_code: 3, status: 500, error_rate: 0.1}", Fault{ExitCode: i(3), Status: 500, ErrorRate: f(0.1)}, 500, "error_rate=0.1 status=500 exit_code=3"},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			s, err := Parse("s.yaml", []byte("nodes: {a: {score: 1}}\nfault: "+tt.fault))
			if err != nil {
				t.Fatal(err)
			}
			got := s.Fault
			if got == nil {
				t.Fatal("no fault")
			}
			if got.Status != tt.want.Status || got.DelayMs != tt.want.DelayMs || got.Hang != tt.want.Hang ||
				!equalPtr(got.ErrorRate, tt.want.ErrorRate) || !equalPtr(got.ExitCode, tt.want.ExitCode) {
				t.Errorf("parsed %s, want %s", got, &tt.want)
			}
			if st := got.FailureStatus(); st != tt.failStatus {
				t.Errorf("FailureStatus() = %d, want %d", st, tt.failStatus)
			}
			if d := got.String(); d != tt.description {
				t.Errorf("String() = %q, want %q", d, tt.description)
			}
		})
	}
	var none *Fault
	if none.String() != "none" || none.FailureStatus() != 0 {
		t.Errorf("a nil fault: %q %d", none.String(), none.FailureStatus())
	}
}

func equalPtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func TestParseFaultErrors(t *testing.T) {
	const hangWhy = "Forbidden: hang never answers: status, delay_ms and error_rate do not apply"
	tests := map[string]struct {
		fault   string
		want    []string
		notWant []string
	}{
		"error_rate 0":           {"{error_rate: 0}", []string{"fault.error_rate: Invalid value: 0", "greater than 0 and at most 1"}, nil},
		"negative error_rate":    {"{error_rate: -0.5}", []string{"fault.error_rate: Invalid value: -0.5"}, nil},
		"error_rate above 1":     {"{error_rate: 1.5}", []string{"fault.error_rate: Invalid value: 1.5"}, nil},
		"error_rate not number":  {"{error_rate: half}", []string{"fault.error_rate"}, nil},
		"exit_code 0":            {"{exit_code: 0}", []string{"fault.exit_code: Invalid value: 0", "between 1 and 125"}, nil},
		"exit_code 126":          {"{exit_code: 126}", []string{"fault.exit_code: Invalid value: 126"}, nil},
		"negative exit_code":     {"{exit_code: -1}", []string{"fault.exit_code: Invalid value: -1"}, nil},
		"fractional exit_code":   {"{exit_code: 2.5}", []string{"fault.exit_code"}, nil},
		"hang not a bool":        {"{hang: 1}", []string{"fault.hang"}, nil},
		"hang with status":       {"{hang: true, status: 503}", []string{"fault.status: " + hangWhy}, []string{"fault.delay_ms", "fault.error_rate"}},
		"hang with delay_ms":     {"{hang: true, delay_ms: 100}", []string{"fault.delay_ms: " + hangWhy}, []string{"fault.status", "fault.error_rate"}},
		"hang with error_rate":   {"{hang: true, error_rate: 0.5}", []string{"fault.error_rate: " + hangWhy}, []string{"fault.status", "fault.delay_ms"}},
		"hang with all three":    {"{hang: true, status: 500, delay_ms: 1, error_rate: 1}", []string{"fault.status: " + hangWhy, "fault.delay_ms: " + hangWhy, "fault.error_rate: " + hangWhy}, nil},
		"error_rate, bad status": {"{error_rate: 0.5, status: 404}", []string{"fault.status: Invalid value: 404", "5xx"}, []string{"fault.error_rate"}},
		"every field wrong":      {"{status: 200, delay_ms: -1, error_rate: 2, exit_code: 200}", []string{"fault.status", "fault.delay_ms", "fault.error_rate", "fault.exit_code"}, nil},
		"unknown fault field":    {"{crash: true}", []string{`unknown field "crash"`}, nil},
		"delay_ms above 10 min":  {"{delay_ms: 600001}", []string{"fault.delay_ms: Invalid value: 600001", "at most 600000"}, nil},
		"delay_ms overflowing":   {"{delay_ms: 9300000000000}", []string{"fault.delay_ms: Invalid value: 9300000000000", "at most 600000"}, nil},
		"delay_ms max int64":     {"{delay_ms: 9223372036854775807}", []string{"fault.delay_ms: Invalid value: 9223372036854775807"}, nil},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("/cfg/chaos.yaml", []byte("nodes: {a: {score: 1}}\nfault: "+tt.fault))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range append(tt.want, "/cfg/chaos.yaml") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error %q names %q, which is valid", err, w)
				}
			}
		})
	}
}

// loadRecorder records what ExitOnReload hands on and the codes it exits with.
type loadRecorder struct {
	mu     sync.Mutex
	loaded []*Scenario
	exits  []int
}

func (r *loadRecorder) onLoad(s *Scenario) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.loaded = append(r.loaded, s)
}

func (r *loadRecorder) exit(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exits = append(r.exits, code)
}

func (r *loadRecorder) counts() (loads int, exits []int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.loaded), append([]int(nil), r.exits...)
}

func TestExitOnReload(t *testing.T) {
	parse := func(doc string) *Scenario {
		t.Helper()
		s, err := Parse("s.yaml", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	withExit := parse("nodes: {a: {score: 1}}\nfault: {exit_code: 7, status: 500}")
	healthy := parse("nodes: {a: {score: 1}}")
	tests := []struct {
		name      string
		sequence  []*Scenario
		wantLoads int
		wantExits []int
	}{
		{"exit code at start-up is ignored", []*Scenario{withExit}, 1, nil},
		{"start-up without a scenario", []*Scenario{nil, healthy}, 2, nil},
		{"healthy reloads", []*Scenario{healthy, healthy}, 2, nil},
		{"exit code on reload exits", []*Scenario{healthy, withExit}, 1, []int{7}},
		{"ignored at start-up, exits on the next reload carrying it", []*Scenario{withExit, healthy, withExit}, 2, []int{7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec loadRecorder
			onLoad := ExitOnReload(klog.Background(), rec.exit, rec.onLoad)
			for _, s := range tt.sequence {
				onLoad(s)
			}
			loads, exits := rec.counts()
			if loads != tt.wantLoads || !slices.Equal(exits, tt.wantExits) {
				t.Errorf("loads %d exits %v, want loads %d exits %v", loads, exits, tt.wantLoads, tt.wantExits)
			}
			if loads > 0 && rec.loaded[0] != tt.sequence[0] {
				t.Error("the start-up scenario was not handed on as read")
			}
		})
	}
}

// TestWatchExitOnReload runs ExitOnReload under Watch: a file that carries an
// exit code when the stub starts is served, a reload carrying one exits.
func TestWatchExitOnReload(t *testing.T) {
	path, write := scenarioFile(t)
	write("nodes: {a: {score: 1}}\nfault: {exit_code: 3}")

	var rec loadRecorder
	w, err := newWatcher(klog.Background(), path, ExitOnReload(klog.Background(), rec.exit, rec.onLoad))
	if err != nil {
		t.Fatal(err)
	}
	if loads, exits := rec.counts(); loads != 1 || len(exits) != 0 {
		t.Fatalf("start-up: loads %d exits %v, want the scenario served and no exit", loads, exits)
	}
	// Polls of the unchanged file must not exit either.
	for range 3 {
		if got := w.poll(); got != unchanged {
			t.Fatalf("poll of the unchanged file: %v", got)
		}
	}
	if _, exits := rec.counts(); len(exits) != 0 {
		t.Fatalf("exits %v without a reload", exits)
	}

	write("nodes: {a: {score: 2}}\nfault: {exit_code: 42, hang: true}")
	if got := w.poll(); got != reloaded {
		t.Fatalf("poll after the change: %v, want a reload", got)
	}
	if loads, exits := rec.counts(); loads != 1 || !slices.Equal(exits, []int{42}) {
		t.Errorf("loads %d exits %v, want 1 load and exit(42)", loads, exits)
	}
}
