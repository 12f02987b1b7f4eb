package monitoring_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	"sigs.k8s.io/yaml"

	"kns3.dev/kns3/internal/monitoring"
	"kns3.dev/kns3/scheduler/plugins/customscore"
)

// The files under test, relative to the package directory: go test runs
// here, and Bazel runs go_test in the package's runfiles directory.
const (
	rulesFile     = "prometheusrule.yaml"
	rulesTestFile = "prometheusrule_test.yaml"
	dashboardFile = "dashboard.json"
	runbooksFile  = "../../docs/monitoring.md"
)

// jobName is the job the ServiceMonitor and the scrape job give the
// scheduler's series, which KNS3SchedulerDown names.
const jobName = "kns-3-scheduler"

func ruleGroups(t *testing.T) []monitoring.RuleGroup {
	t.Helper()
	groups, err := monitoring.RuleGroups(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) == 0 {
		t.Fatalf("%s has no rule group", rulesFile)
	}
	return groups
}

func alerts(t *testing.T) []monitoring.Rule {
	t.Helper()
	var out []monitoring.Rule
	for _, g := range ruleGroups(t) {
		out = append(out, g.Rules...)
	}
	return out
}

// Each alert says how bad it is, waits out a blip, names its profile and
// links its runbook, a section of docs/monitoring.md.
func TestAlertsAreComplete(t *testing.T) {
	runbooks, err := os.ReadFile(runbooksFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alerts(t) {
		if !strings.HasPrefix(a.Alert, "KNS3") {
			t.Errorf("rule %q: want an alert named KNS3...", a.Alert)
			continue
		}
		if s := a.Labels["severity"]; !slices.Contains([]string{"critical", "warning", "info"}, s) {
			t.Errorf("%s: severity %q, want critical, warning or info", a.Alert, s)
		}
		if d, err := time.ParseDuration(a.For); err != nil || d < 5*time.Minute {
			t.Errorf("%s: for %q, want at least 5m: one blip must not alert", a.Alert, a.For)
		}
		// Every KNS-3 series carries profile; up, the down alert's, does not.
		if summary := a.Annotations["summary"]; a.Alert != "KNS3SchedulerDown" && !strings.Contains(summary, "{{ $labels.profile }}") {
			t.Errorf("%s: summary %q does not name the profile", a.Alert, summary)
		}
		if a.Annotations["description"] == "" {
			t.Errorf("%s: no description", a.Alert)
		}
		anchor := strings.ToLower(a.Alert)
		if got, want := a.Annotations["runbook_url"], "docs/monitoring.md#"+anchor; got != want {
			t.Errorf("%s: runbook_url %q, want %q", a.Alert, got, want)
		}
		if !regexp.MustCompile(`(?m)^#+ ` + a.Alert + `$`).Match(runbooks) {
			t.Errorf("%s: %s has no section %q, its runbook", a.Alert, runbooksFile, a.Alert)
		}
	}
}

// Every alert has a promtool test that fires it and one that must leave it
// silent.
func TestEveryAlertFiresAndHolds(t *testing.T) {
	data, err := os.ReadFile(rulesTestFile)
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(data, &tests); err != nil {
		t.Fatal(err)
	}
	fires, holds := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, at := range tc.AlertRuleTest {
			if len(at.ExpAlerts) > 0 {
				fires[at.Alertname] = true
			} else {
				holds[at.Alertname] = true
			}
		}
	}
	for _, a := range alerts(t) {
		if !fires[a.Alert] {
			t.Errorf("%s: no test in %s fires it", a.Alert, rulesTestFile)
		}
		if !holds[a.Alert] {
			t.Errorf("%s: no test in %s expects it silent", a.Alert, rulesTestFile)
		}
	}
}

// The rule file promtool tests (hack/monitoring/check.sh cuts it out of
// the manifest with sed) holds the manifest's groups, all of them.
func TestRuleFileIsTheSpec(t *testing.T) {
	data, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []monitoring.RuleGroup `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(monitoring.RuleFile(data), &file); err != nil {
		t.Fatalf("the rule file cut out of %s: %v", rulesFile, err)
	}
	if diff := cmp.Diff(ruleGroups(t), file.Groups); diff != "" {
		t.Errorf("rule file (-manifest +rule file):\n%s", diff)
	}
}

// Every metric the alerts and the dashboard name is one the scheduler
// registers: KNS-3's, as the plugin registers them, and upstream's
// scheduler metrics. A renamed metric fails here, not in a silent alert.
func TestMetricNamesAreRegistered(t *testing.T) {
	pl, err := customscore.New(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pl.(interface{ Close() error }).Close() })
	schedmetrics.Register()

	exprs := map[string]string{} // expression: where
	for _, a := range alerts(t) {
		exprs[a.Expr] = a.Alert
	}
	dash, err := monitoring.DashboardExprs(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range dash {
		exprs[e] = dashboardFile
	}
	checked := 0
	for expr, where := range exprs {
		for _, name := range monitoring.MetricNames(expr) {
			checked++
			if !registered(name) {
				t.Errorf("%s: %s is no metric the scheduler registers, in %q", where, name, expr)
			}
		}
	}
	if checked < len(exprs) {
		t.Errorf("read %d names from %d expressions: the name reader misses some", checked, len(exprs))
	}
}

// up is the scrape's own series, not the scheduler's.
var scrapeSeries = []string{"up"}

// registered says whether the scheduler's registry holds a family that
// serves name: a histogram's _bucket, _sum and _count series are its
// family's.
func registered(name string) bool {
	if slices.Contains(scrapeSeries, name) || holds(name) {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && holds(base) {
			return true
		}
	}
	return false
}

// holds says whether the legacy registry, the one /metrics serves, has a
// family named name: it refuses a collector describing that name with
// another help text (families without a sample yet, such as vectors no
// label set was recorded for, are not gathered, but are described).
func holds(name string) bool {
	probe := metrics.NewGauge(&metrics.GaugeOpts{Name: name, Help: "kns-3 monitoring test probe"})
	err := legacyregistry.Register(probe)
	if err == nil {
		legacyregistry.Registerer().Unregister(probe)
		return false
	}
	return strings.Contains(err.Error(), "with the same fully-qualified name")
}
