package scenario

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
)

// Fault describes how the stub misbehaves. Status, DelayMs and ErrorRate
// shape each /simulate answer: the delay comes first, then the request fails
// (always with Status alone, with probability ErrorRate when that is set) or
// succeeds. Hang replaces all three. ExitCode acts on the process, not on
// requests. /healthz, the liveness check, is never affected; /readyz, which
// says whether /simulate can answer, fails under Hang.
type Fault struct {
	// Status is the HTTP status a failing /simulate request answers with
	// (500–599). Without ErrorRate every request fails.
	Status int `json:"status,omitempty"`
	// DelayMs, at most MaxDelayMs, delays every /simulate answer.
	DelayMs int `json:"delay_ms,omitempty"`
	// Hang makes /simulate accept requests and never answer: each one is held
	// until its client gives up or the server stops. A later scenario without
	// Hang does not release the requests already held. While Hang is in
	// force, /readyz answers 503.
	Hang bool `json:"hang,omitempty"`
	// ErrorRate, in (0, 1], is the probability that a /simulate request fails,
	// each independently, with Status, or 503 when Status is unset.
	ErrorRate *float64 `json:"error_rate,omitempty"`
	// ExitCode, in 1..125, makes the process exit with it when it reloads a
	// scenario carrying it. The scenario read at start-up never makes the
	// process exit, so a restarted container serves the other settings.
	ExitCode *int `json:"exit_code,omitempty"`
}

// MaxDelayMs bounds fault.delay_ms to 10 minutes, far below the delays that
// overflow a time.Duration.
const MaxDelayMs = 600000

func (f *Fault) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if f.Status != 0 && (f.Status < 500 || f.Status > 599) {
		errs = append(errs, field.Invalid(p.Child("status"), f.Status, "must be a 5xx status"))
	}
	if f.DelayMs < 0 {
		errs = append(errs, field.Invalid(p.Child("delay_ms"), f.DelayMs, "must not be negative"))
	}
	if f.DelayMs > MaxDelayMs {
		errs = append(errs, field.Invalid(p.Child("delay_ms"), f.DelayMs, fmt.Sprintf("must be at most %d (10 minutes)", MaxDelayMs)))
	}
	// The negated form also rejects NaN.
	if r := f.ErrorRate; r != nil && !(*r > 0 && *r <= 1) {
		errs = append(errs, field.Invalid(p.Child("error_rate"), *r, "must be greater than 0 and at most 1"))
	}
	if c := f.ExitCode; c != nil && (*c < 1 || *c > 125) {
		errs = append(errs, field.Invalid(p.Child("exit_code"), *c, "must be between 1 and 125"))
	}
	if f.Hang {
		const why = "hang never answers: status, delay_ms and error_rate do not apply"
		if f.Status != 0 {
			errs = append(errs, field.Forbidden(p.Child("status"), why))
		}
		if f.DelayMs != 0 {
			errs = append(errs, field.Forbidden(p.Child("delay_ms"), why))
		}
		if f.ErrorRate != nil {
			errs = append(errs, field.Forbidden(p.Child("error_rate"), why))
		}
	}
	return errs
}

// FailureStatus is the status a failing /simulate request answers with, or 0
// when the fault never fails a request.
func (f *Fault) FailureStatus() int {
	switch {
	case f == nil || f.Hang:
		return 0
	case f.Status != 0:
		return f.Status
	case f.ErrorRate != nil:
		return http.StatusServiceUnavailable
	}
	return 0
}

// String describes the fault for the log: "none", "hang",
// "delay_ms=200 error_rate=0.5 status=503", "exit_code=3" and so on, with the
// status a failing request gets even when the file leaves it to the default.
func (f *Fault) String() string {
	if f == nil {
		return "none"
	}
	var parts []string
	if f.Hang {
		parts = append(parts, "hang")
	}
	if f.DelayMs > 0 {
		parts = append(parts, "delay_ms="+strconv.Itoa(f.DelayMs))
	}
	if f.ErrorRate != nil {
		parts = append(parts, "error_rate="+strconv.FormatFloat(*f.ErrorRate, 'g', -1, 64))
	}
	if st := f.FailureStatus(); st != 0 {
		parts = append(parts, "status="+strconv.Itoa(st))
	}
	if f.ExitCode != nil {
		parts = append(parts, "exit_code="+strconv.Itoa(*f.ExitCode))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// ExitOnReload wraps onLoad, the callback given to Watch, to act on
// fault.exit_code. The first scenario it receives is the one Watch reads at
// start-up: its exit code is logged as ignored and the scenario is handed to
// onLoad. A later scenario with an exit code is not handed on: the reason is
// logged, the log flushed and exit called with the code, as a crash would
// end the process (the kubelet then restarts the container, which comes back
// with the same file and ignores the code). exit is os.Exit outside tests.
func ExitOnReload(logger klog.Logger, exit func(code int), onLoad func(*Scenario)) func(*Scenario) {
	started := false
	return func(s *Scenario) {
		// Watch hands on the start-up scenario before it starts polling and
		// the later ones from one goroutine, so started needs no lock.
		if s != nil && s.Fault != nil && s.Fault.ExitCode != nil {
			code := *s.Fault.ExitCode
			if started {
				logger.Info("Exiting: the reloaded scenario carries an exit fault", "source", s.Source, "exit_code", code)
				klog.Flush()
				exit(code)
				return
			}
			logger.Info("Exit fault ignored at start-up; serving the scenario's other settings", "source", s.Source, "exit_code", code)
		}
		started = true
		onLoad(s)
	}
}
