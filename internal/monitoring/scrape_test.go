package monitoring

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseScrape(t *testing.T) {
	scrape := `# HELP kns3_simulator_breaker_state State.
# TYPE kns3_simulator_breaker_state gauge
kns3_simulator_breaker_state{profile="kns-3-scheduler"} 0
go_goroutines 42
odd{path="a \"quoted\" \\ value\nnext",pod="theirs",le="+Inf"} +Inf
`
	got, err := ParseScrape([]byte(scrape), map[string]string{"job": "kns-3-scheduler", "pod": "p-1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Sample{
		{`kns3_simulator_breaker_state{job="kns-3-scheduler",pod="p-1",profile="kns-3-scheduler"}`, "0"},
		{`go_goroutines{job="kns-3-scheduler",pod="p-1"}`, "42"},
		{`odd{exported_pod="theirs",job="kns-3-scheduler",le="+Inf",path="a \"quoted\" \\ value\nnext",pod="p-1"}`, "+Inf"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`x{a=b} 1`, `x{a="b"} 1 1700000000000`, `{a="b"} 1`, `x{a="b} 1`} {
		if _, err := ParseScrape([]byte(bad), nil); err == nil {
			t.Errorf("ParseScrape(%q) took it", bad)
		}
	}
}

func TestEvaluationTest(t *testing.T) {
	data, err := EvaluationTest("rules.yaml", []Sample{{`a{x="1"}`, "+Inf"}}, []string{"a > 1\n"})
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"rule_files":          []any{"rules.yaml"},
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"interval":     "1m",
			"input_series": []any{map[string]any{"series": `a{x="1"}`, "values": "Inf Inf"}},
			"promql_expr_test": []any{map[string]any{
				"expr": "(count((a > 1\n)) * 0 + 1) or vector(1)", "eval_time": "1m",
				"exp_samples": []any{map[string]any{"labels": "{}", "value": 1.0}},
			}},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("test file (-want +got):\n%s", diff)
	}
}

func TestEvaluable(t *testing.T) {
	got := Evaluable(`sum(rate(x{profile=~"$profile",pod=~"${pod}"}[$__rate_interval]))`)
	if want := `sum(rate(x{profile=~".*",pod=~".*"}[2m]))`; got != want {
		t.Errorf("Evaluable = %q, want %q", got, want)
	}
	if strings.Contains(Evaluable("a[${__range}]"), "$") {
		t.Error("a braced interval variable left in")
	}
}
