package monitoring

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Sample is one sample of a scrape: its series as PromQL writes it,
// name{label="value",...}, and its value as served.
type Sample struct {
	Series, Value string
}

// ParseScrape reads a scrape in Prometheus's text format, as /metrics
// serves it without an Accept header, and gives each series the target's
// labels, as a scrape does (a label the series has already is kept as
// exported_<label>). It reads what the scheduler serves: samples without
// timestamps, one to a line.
func ParseScrape(text []byte, target map[string]string) ([]Sample, error) {
	var out []Sample
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, labels, value, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w: %q", n, err, line)
		}
		for k, v := range target {
			if old, ok := labels[k]; ok {
				labels["exported_"+k] = old
			}
			labels[k] = v
		}
		out = append(out, Sample{Series: series(name, labels), Value: value})
	}
	return out, sc.Err()
}

// parseSample reads name{label="value",...} value.
func parseSample(line string) (name string, labels map[string]string, value string, err error) {
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return "", nil, "", fmt.Errorf("no metric name")
	}
	name, rest := line[:i], line[i:]
	labels = map[string]string{}
	if rest[0] == '{' {
		rest = rest[1:]
		for {
			rest = strings.TrimLeft(rest, " ,")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			key, after, ok := strings.Cut(rest, "=")
			if !ok || !strings.HasPrefix(after, `"`) {
				return "", nil, "", fmt.Errorf("a label without a quoted value")
			}
			quoted, err := strconv.QuotedPrefix(after)
			if err != nil {
				return "", nil, "", err
			}
			// The format escapes \, " and newlines as Go does.
			if labels[strings.TrimSpace(key)], err = strconv.Unquote(quoted); err != nil {
				return "", nil, "", err
			}
			rest = after[len(quoted):]
		}
	}
	fields := strings.Fields(rest)
	if len(fields) != 1 {
		return "", nil, "", fmt.Errorf("want one value and no timestamp")
	}
	return name, labels, fields[0], nil
}

func series(name string, labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+"="+strconv.Quote(labels[k]))
	}
	return name + "{" + strings.Join(pairs, ",") + "}"
}

// EvaluationTest is a promtool test file (JSON, which YAML reads) that
// loads the rule file ruleFile, holds each sample twice, a minute apart,
// and evaluates every expression at the second: as
// (count((expr)) * 0 + 1) or vector(1), which is {} 1 whatever expr
// yields, so the test fails only where an expression cannot be evaluated
// on these series (a parse error, or a vector match the series make
// ambiguous).
func EvaluationTest(ruleFile string, samples []Sample, exprs []string) ([]byte, error) {
	type inputSeries struct {
		Series string `json:"series"`
		Values string `json:"values"`
	}
	type expSample struct {
		Labels string  `json:"labels"`
		Value  float64 `json:"value"`
	}
	type exprTest struct {
		Expr       string      `json:"expr"`
		EvalTime   string      `json:"eval_time"`
		ExpSamples []expSample `json:"exp_samples"`
	}
	input := make([]inputSeries, 0, len(samples))
	for _, s := range samples {
		v := s.Value
		if v == "+Inf" {
			v = "Inf" // promtool's series notation
		}
		input = append(input, inputSeries{Series: s.Series, Values: v + " " + v})
	}
	tests := make([]exprTest, 0, len(exprs))
	for _, e := range exprs {
		tests = append(tests, exprTest{
			Expr:       "(count((" + e + ")) * 0 + 1) or vector(1)",
			EvalTime:   "1m",
			ExpSamples: []expSample{{Labels: "{}", Value: 1}},
		})
	}
	return json.MarshalIndent(map[string]any{
		"rule_files":          []string{ruleFile},
		"evaluation_interval": "1m",
		"tests": []map[string]any{{
			"interval":         "1m",
			"input_series":     input,
			"promql_expr_test": tests,
		}},
	}, "", "  ")
}

var (
	grafanaInterval = regexp.MustCompile(`\$__\w+|\$\{__\w+\}`)
	grafanaVariable = regexp.MustCompile(`\$\{\w+\}|\$\w+`)
)

// Evaluable is a dashboard query with Grafana's variables filled in as
// promtool can evaluate it: intervals 2m, every other variable ".*" (all
// its values, in a regular expression matcher).
func Evaluable(query string) string {
	return grafanaVariable.ReplaceAllString(grafanaInterval.ReplaceAllString(query, "2m"), ".*")
}
