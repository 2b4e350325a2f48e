package chart

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

type dashboard struct {
	UID    string `json:"uid"`
	Panels []struct {
		ID          int    `json:"id"`
		Type        string `json:"type"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Targets     []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile("dashboards/dynamic-config.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("dashboards/dynamic-config.json: %v", err)
	}
	return d
}

// Every series the dashboard plots is one docs/metrics.md documents, or the API server's own
// admission-webhook series; a renamed metric breaks this test, not the dashboard in production.
func TestDashboardPlotsOnlyDocumentedMetrics(t *testing.T) {
	d := readDashboard(t)
	metricsDoc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(dynamic_config_[a-z_]+)`").FindAllStringSubmatch(string(metricsDoc), -1) {
		documented[m[1]] = true
	}
	apiServer := map[string]bool{
		"apiserver_admission_webhook_admission_duration_seconds": true,
		"apiserver_admission_webhook_rejection_count":            true,
		"apiserver_admission_webhook_fail_open_count":            true,
	}
	series := regexp.MustCompile(`\b((?:dynamic_config|apiserver)_[a-z_]+)\b`)
	exprs := 0
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			exprs++
			for _, m := range series.FindAllString(target.Expr, -1) {
				known := func(name string) bool { return documented[name] || apiServer[name] }
				if !known(m) && !known(histogramBase(m)) {
					t.Errorf("panel %q plots %s, which docs/metrics.md does not document", p.Title, m)
				}
			}
		}
	}
	if exprs == 0 {
		t.Fatal("the dashboard has no query")
	}
}

// histogramBase is a histogram's name without the suffix of one of its series.
func histogramBase(series string) string {
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		if base, ok := strings.CutSuffix(series, suffix); ok {
			return base
		}
	}
	return series
}

// The dashboard selects the API server's series by the webhook names the chart registers.
func TestDashboardSelectsTheChartsWebhookNames(t *testing.T) {
	d := readDashboard(t)
	var names []string
	for _, file := range []string{"templates/mutatingwebhookconfiguration.yaml", "templates/validatingwebhookconfiguration.yaml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^  - name: (\S+)$`).FindStringSubmatch(string(data))
		if m == nil {
			t.Fatalf("%s names no webhook", file)
		}
		names = append(names, m[1])
	}
	want := `name=~"` + strings.Join(names, "|") + `"`
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			if strings.Contains(target.Expr, "apiserver_") && !strings.Contains(target.Expr, want) {
				t.Errorf("panel %q: %q does not select %s", p.Title, target.Expr, want)
			}
		}
	}
	rule, err := os.ReadFile("templates/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rule), `"`+strings.Join(names, "|")+`"`) {
		t.Errorf("templates/prometheusrule.yaml does not select the webhooks %s", strings.Join(names, "|"))
	}
}

// Every panel explains itself and has its own id; rows aside, every panel queries something.
func TestDashboardPanelsAreDescribedAndDistinct(t *testing.T) {
	d := readDashboard(t)
	if d.UID == "" {
		t.Error("the dashboard has no uid (Grafana would make a new one on every load)")
	}
	ids := map[int]string{}
	for _, p := range d.Panels {
		if prev, ok := ids[p.ID]; ok {
			t.Errorf("panels %q and %q share id %d", prev, p.Title, p.ID)
		}
		ids[p.ID] = p.Title
		if p.Type == "row" {
			continue
		}
		if p.Description == "" {
			t.Errorf("panel %q has no description", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
	}
}
