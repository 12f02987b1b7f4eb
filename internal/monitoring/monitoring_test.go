package monitoring

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`kns3_simulator_breaker_state == 1`, []string{"kns3_simulator_breaker_state"}},
		{`absent(up{job="kns-3-scheduler"} == 1)`, []string{"up"}},
		// Label values, label names in matchers and lists, ranges and
		// durations are no names; functions and aggregations neither.
		{`sum without (reason) (increase(kns3_simulator_fallbacks_total{reason!="stale",profile=~"a|b"}[15m] offset 1h)) > 0.5
		  and ignoring (result) group_left () kns3_simulator_breaker_state`,
			[]string{"kns3_simulator_breaker_state", "kns3_simulator_fallbacks_total"}},
		{`histogram_quantile(0.99, sum by (le) (rate(kns3_simulator_call_duration_seconds_bucket[5m])))`,
			[]string{"kns3_simulator_call_duration_seconds_bucket"}},
		{`label_replace(x, "dst", "$1 and up", "src", "(.*)") * on (node) 1e3`, []string{"x"}},
		{`max_over_time(deriv(a[1h:1m])[5m:]) bool > 2`, []string{"a"}},
		// Grafana's variables, in matchers and ranges.
		{`sum by (profile) (rate(b{profile=~"$profile", pod=~"${pod}"}[$__rate_interval]))`, []string{"b"}},
		{`(count(c or d) * 0 + 1) or vector(1)`, []string{"c", "d"}},
		{`time() - e unless f`, []string{"e", "f"}},
	} {
		if got := MetricNames(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("MetricNames(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

func TestRuleFile(t *testing.T) {
	manifest := "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: x\nspec:\n  groups:\n  - name: g\n    rules:\n    - alert: A\n      expr: |\n        a\n        or b\n"
	want := "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: |\n      a\n      or b\n"
	if got := string(RuleFile([]byte(manifest))); got != want {
		t.Errorf("RuleFile = %q, want %q", got, want)
	}
	if got := RuleFile([]byte("kind: PrometheusRule\n")); got != nil {
		t.Errorf("RuleFile without spec = %q, want nil", got)
	}
}

func TestDashboardExprs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.json")
	dash := `{"panels":[{"type":"row","panels":[{"targets":[{"expr":"a"}]}]},{"targets":[{"expr":"b"},{"expr":"c"}]}],
		"templating":{"list":[{"type":"datasource","query":"prometheus"},
			{"type":"query","query":{"query":"label_values(d{x=\"1\"}, profile)"}},
			{"type":"query","query":"label_values(pod)"},
			{"type":"query","query":"query_result(sum(e))"}]}}`
	if err := os.WriteFile(path, []byte(dash), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := DashboardExprs(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c", `d{x="1"}`, "sum(e)"}; !slices.Equal(got, want) {
		t.Errorf("DashboardExprs = %q, want %q", got, want)
	}
}
