package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	dmetrics "github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	fmetrics "github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs"
	"github.com/dynamic-config-admission/dynamic-config/podaudit"
)

// registeredNames is every metric name the components register, read from
// the descriptors of what they register (a vector with no series yet
// counts too). The Go runtime and process collectors are left out: they are
// the client library's, documented as a group.
func registeredNames(t *testing.T) []string {
	t.Helper()
	rec := &recordingRegisterer{Registerer: prometheus.NewRegistry()}
	fmetrics.NewFrontdoor(rec)
	dmetrics.NewDecider(rec)
	dmetrics.NewClasses(rec)
	dmetrics.NewLeader(rec)
	dmetrics.NewFollower(rec)
	if _, err := certs.NewMetrics(rec); err != nil {
		t.Fatal(err)
	}
	// the audit reporter registers at construction; its clients are used only by Run
	if _, err := podaudit.NewReporter(podaudit.ReporterConfig{Interval: time.Second, MaxNamespaces: 1, Registry: rec}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(rec.names)
	return slices.Compact(rec.names)
}

type recordingRegisterer struct {
	prometheus.Registerer
	names []string
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *recordingRegisterer) Register(c prometheus.Collector) error {
	descs := make(chan *prometheus.Desc)
	go func() { c.Describe(descs); close(descs) }()
	for d := range descs {
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			continue
		}
		if name := m[1]; !regexp.MustCompile(`^(go|process)_`).MatchString(name) {
			r.names = append(r.names, name)
		}
	}
	return r.Registerer.Register(c)
}

func (r *recordingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

func TestEveryRegisteredMetricHasARowInDocsMetrics(t *testing.T) {
	doc, err := os.ReadFile("metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	names := registeredNames(t)
	if len(names) < 10 {
		t.Fatalf("only %d metric names found; the descriptor reading is broken: %v", len(names), names)
	}
	for _, name := range names {
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(name) + "`")
		if !row.Match(doc) {
			t.Errorf("%s is registered but docs/metrics.md has no table row starting with it", name)
		}
	}
	// and the other way round: a documented name that nothing registers is stale
	documented := regexp.MustCompile("(?m)^\\| `((?:dynamic_config|grpc)_[a-z_]+)`").FindAllSubmatch(doc, -1)
	for _, m := range documented {
		if !slices.Contains(names, string(m[1])) {
			t.Errorf("docs/metrics.md documents %s, which no component registers", m[1])
		}
	}
}

// namedInSource is every metric name written as a Name field in the
// product's Go source: a metric registered by a constructor the test above
// does not call is still caught.
func namedInSource(t *testing.T) []string {
	t.Helper()
	nameField := regexp.MustCompile(`Name:\s*"((?:dynamic_config)_[a-z0-9_]+)"`)
	var names []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "gen" || d.Name() == "test" || d.Name() == "tools" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range nameField.FindAllSubmatch(b, -1) {
			names = append(names, string(m[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestEveryMetricNamedInTheSourceHasARowInDocsMetrics(t *testing.T) {
	doc, err := os.ReadFile("metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	names := namedInSource(t)
	if len(names) < 10 {
		t.Fatalf("only %d metric names found in the source: %v", len(names), names)
	}
	for _, name := range names {
		if !regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(name) + "`").Match(doc) {
			t.Errorf("%s is named in the source but docs/metrics.md has no row for it", name)
		}
	}
}
