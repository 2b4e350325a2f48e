package chart

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Every alert of the PrometheusRule links its runbook section, and every
// section the links name exists in docs/runbooks.md.
func TestEveryAlertLinksItsRunbookSection(t *testing.T) {
	rule, err := os.ReadFile("templates/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	runbooks, err := os.ReadFile("../../docs/runbooks.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^## (\w+)$`).FindAllStringSubmatch(string(runbooks), -1) {
		sections[strings.ToLower(m[1])] = true
	}
	alerts := regexp.MustCompile(`(?m)^\s*- alert: (\w+)$`).FindAllStringSubmatchIndex(string(rule), -1)
	if len(alerts) == 0 {
		t.Fatal("no alert in templates/prometheusrule.yaml")
	}
	for i, a := range alerts {
		name := string(rule[a[2]:a[3]])
		end := len(rule)
		if i+1 < len(alerts) {
			end = alerts[i+1][0]
		}
		body := string(rule[a[1]:end])
		want := "runbook_url: {{ $r.runbookURL }}#" + strings.ToLower(name)
		if !strings.Contains(body, want) {
			t.Errorf("alert %s has no %q", name, want)
		}
		if !sections[strings.ToLower(name)] {
			t.Errorf("alert %s has no section \"## %s\" in docs/runbooks.md", name, name)
		}
	}
}
