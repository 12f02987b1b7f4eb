// Package monitoring reads deploy/monitoring's alert rules and dashboard
// for the tests that check them against the scheduler's metrics: the unit
// test beside the manifests, and the kind suite's check on a real scrape.
package monitoring

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"

	"sigs.k8s.io/yaml"
)

// Rule is one rule of a rule group.
type Rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// RuleGroup is a group of a PrometheusRule's spec or of a rule file.
type RuleGroup struct {
	Name  string `json:"name"`
	Rules []Rule `json:"rules"`
}

// RuleGroups reads the groups of the PrometheusRule manifest at path.
func RuleGroups(path string) ([]RuleGroup, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var manifest struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   any    `json:"metadata"`
		Spec       struct {
			Groups []RuleGroup `json:"groups"`
		} `json:"spec"`
	}
	// Strict: a misspelt field would leave a rule without it.
	if err := yaml.UnmarshalStrict(data, &manifest); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if manifest.Kind != "PrometheusRule" {
		return nil, fmt.Errorf("%s: kind %q, want PrometheusRule", path, manifest.Kind)
	}
	return manifest.Spec.Groups, nil
}

// RuleFile is the Prometheus rule file a PrometheusRule manifest holds:
// the lines after its top-level "spec:", each without its two spaces of
// indentation. hack/monitoring/check.sh makes it so with sed, for
// promtool; the manifest keeps spec last for that.
func RuleFile(manifest []byte) []byte {
	_, spec, ok := bytes.Cut(manifest, []byte("\nspec:\n"))
	if !ok {
		return nil
	}
	lines := bytes.SplitAfter(spec, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimPrefix(l, []byte("  "))
	}
	return bytes.Join(lines, nil)
}

// DashboardExprs reads every query of the Grafana dashboard at path: its
// panels' targets, rows' panels included, and its template variables'.
func DashboardExprs(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var dash struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var exprs []string
	var walk func([]panel)
	walk = func(panels []panel) {
		for _, p := range panels {
			for _, t := range p.Targets {
				exprs = append(exprs, t.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		if m, ok := v.Query.(map[string]any); ok {
			q, _ = m["query"].(string)
		}
		if e := variableExpr(q); e != "" {
			exprs = append(exprs, e)
		}
	}
	return exprs, nil
}

// Grafana's variable queries: label_values(expr, label), label_values(label)
// and query_result(expr).
var (
	labelValuesOf = regexp.MustCompile(`^\s*label_values\((.*),\s*\w+\s*\)\s*$`)
	queryResultOf = regexp.MustCompile(`^\s*query_result\((.*)\)\s*$`)
)

// variableExpr is the PromQL expression of a variable's query, "" when it
// has none.
func variableExpr(q string) string {
	for _, re := range []*regexp.Regexp{labelValuesOf, queryResultOf} {
		if m := re.FindStringSubmatch(q); m != nil {
			return m[1]
		}
	}
	return ""
}

type panel struct {
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

var (
	// Removed before names are read: string literals (label values,
	// label_replace's arguments), Grafana's variables, label matchers,
	// ranges and subqueries, and the label lists of grouping and
	// vector matching.
	stringLiteral = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	variable      = regexp.MustCompile(`\$\{[^}]*\}|\$\w+`)
	braces        = regexp.MustCompile(`\{[^{}]*\}`)
	brackets      = regexp.MustCompile(`\[[^\[\]]*\]`)
	labelList     = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	// A token: a number or duration (skipped), or an identifier; one
	// followed by "(" is a function or an aggregation.
	token = regexp.MustCompile(`[0-9.][0-9A-Za-z_.]*|[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
)

// keywords are PromQL's words that are no metric: operators, modifiers and
// the special numbers. Grouping words left after their label lists are
// removed are among them.
var keywords = []string{"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
	"offset", "bool", "atan2", "inf", "nan", "Inf", "NaN"}

// MetricNames are the metric names expr selects, sorted and without
// repeats. It reads them with regular expressions, not PromQL's parser
// (the Prometheus module would be the build's largest dependency): string
// literals, label matchers, ranges and label lists are removed, and what
// is left that is no function, keyword or number is a name.
func MetricNames(expr string) []string {
	s := stringLiteral.ReplaceAllString(expr, `""`)
	s = variable.ReplaceAllString(s, "")
	s = braces.ReplaceAllString(s, " ")
	s = brackets.ReplaceAllString(s, " ")
	s = labelList.ReplaceAllString(s, " ")
	var names []string
	for _, m := range token.FindAllStringSubmatch(s, -1) {
		word := m[0]
		if m[1] != "" || (word[0] >= '0' && word[0] <= '9') || word[0] == '.' || slices.Contains(keywords, word) {
			continue
		}
		names = append(names, word)
	}
	slices.Sort(names)
	return slices.Compact(names)
}
