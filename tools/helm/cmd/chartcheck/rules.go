package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// runRules writes the PrometheusRule of a render as Prometheus rule files and checks that the
// promtool fixtures cover every alert both ways:
//
//	chartcheck rules -f RENDER -o RULES -unit UNIT_RULES -tests TESTS
//
// RULES holds the groups as rendered (for `promtool check rules`); UNIT_RULES the same groups
// with each alert's annotations cut to its summary, so that the fixtures state the labels and
// the summary (templated with $labels) without repeating every description. TESTS is the
// `promtool test rules` file: every alert needs a case where it fires (exp_alerts not empty)
// and one where it does not (exp_alerts empty), or this fails naming the alert.
func runRules(args []string) error {
	fs := flag.NewFlagSet("rules", flag.ContinueOnError)
	in := fs.String("f", "", "rendered manifests holding one PrometheusRule")
	out := fs.String("o", "", "rule file to write (as rendered)")
	unit := fs.String("unit", "", "rule file to write for the unit tests (annotations: summary only)")
	tests := fs.String("tests", "", "the promtool test file whose coverage to check")
	if err := fs.Parse(args); err != nil {
		return err
	}
	objs, err := readObjects(*in)
	if err != nil {
		return err
	}
	rule, err := find(objs, "PrometheusRule", "")
	if err != nil {
		return err
	}
	groups, _ := get(rule, "spec", "groups").([]any)
	if len(groups) == 0 {
		return fmt.Errorf("%s: the PrometheusRule has no groups", *in)
	}
	if err := writeYAML(*out, object{"groups": groups}); err != nil {
		return err
	}
	alerts := map[string]bool{}
	for _, g := range groups {
		rules, _ := get(g, "rules").([]any)
		for _, r := range rules {
			r, _ := r.(object)
			name := str(r, "alert")
			if name == "" {
				continue
			}
			alerts[name] = true
			if a, ok := get(r, "annotations").(object); ok {
				r["annotations"] = object{"summary": a["summary"]}
			}
		}
	}
	if err := writeYAML(*unit, object{"groups": groups}); err != nil {
		return err
	}
	return checkCoverage(*tests, alerts)
}

func writeYAML(path string, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// checkCoverage fails unless every alert has a firing and a non-firing case in the test file,
// and the file tests no alert the rules do not hold.
func checkCoverage(path string, alerts map[string]bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var file struct {
		Tests []struct {
			Name  string `json:"name"`
			Cases []struct {
				Alert  string `json:"alertname"`
				Alerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	var problems []string
	for _, t := range file.Tests {
		for _, c := range t.Cases {
			if !alerts[c.Alert] {
				problems = append(problems, fmt.Sprintf("test %q checks alert %s, which the chart does not render", t.Name, c.Alert))
			}
			if len(c.Alerts) > 0 {
				fires[c.Alert] = true
			} else {
				quiet[c.Alert] = true
			}
		}
	}
	names := make([]string, 0, len(alerts))
	for n := range alerts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !fires[n] {
			problems = append(problems, fmt.Sprintf("alert %s has no case where it fires", n))
		}
		if !quiet[n] {
			problems = append(problems, fmt.Sprintf("alert %s has no case where it stays quiet", n))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s:\n  %s", path, strings.Join(problems, "\n  "))
	}
	fmt.Printf("chartcheck rules: %d alerts, each with a firing and a quiet case in %s\n", len(names), path)
	return nil
}

// runDashboardRules writes every query of a Grafana dashboard as a recording rule, so that
// `promtool check rules` parses each with Prometheus's own PromQL parser:
//
//	chartcheck dashboard-rules -f DASHBOARD.json -o RULES
//
// Grafana's variables become what they stand for: $__rate_interval a 5m range, $namespace a
// namespace name.
func runDashboardRules(args []string) error {
	fs := flag.NewFlagSet("dashboard-rules", flag.ContinueOnError)
	in := fs.String("f", "", "the dashboard JSON")
	out := fs.String("o", "", "rule file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	data, err := os.ReadFile(*in)
	if err != nil {
		return err
	}
	var d struct {
		Panels []struct {
			ID      int `json:"id"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := yaml.Unmarshal(data, &d); err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	vars := strings.NewReplacer("$__rate_interval", "5m", "$namespace", "dynamic-config")
	var rules []any
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			rules = append(rules, object{
				"record": fmt.Sprintf("dashboard:panel_%d_%s", p.ID, strings.ToLower(t.RefID)),
				"expr":   vars.Replace(t.Expr),
			})
		}
	}
	if len(rules) == 0 {
		return fmt.Errorf("%s: no query", *in)
	}
	fmt.Printf("chartcheck dashboard-rules: %d queries of %s\n", len(rules), *in)
	return writeYAML(*out, object{"groups": []any{object{"name": "dashboard", "rules": rules}}})
}
