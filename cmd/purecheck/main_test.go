package main

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/internal/golist"
)

const mod = "example.com/m"

// graph builds a go list -deps answer: root is the listed package, every
// other entry a dependency; a name without a dot is standard.
func graph(root string, imports map[string][]string) []golist.Package {
	m := &struct{ Path string }{Path: mod}
	pkgs := []golist.Package{{ImportPath: root, Imports: imports[root], Module: m}}
	for path, imps := range imports {
		if path == root {
			continue
		}
		std := !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
		pkgs = append(pkgs, golist.Package{ImportPath: path, Imports: imps, Standard: std, DepOnly: true})
	}
	return pkgs
}

func TestTheGuardFindsEveryWayOutOfThePureCoreAndOnlyThose(t *testing.T) {
	root := mod + "/decider/core/x"
	tests := []struct {
		name    string
		imports map[string][]string
		want    string // "" = clean; else a fragment of the only line
	}{
		{"values of the standard library are fine though fmt reaches os",
			map[string][]string{root: {"fmt", "net/netip", "net/url"}, "fmt": {"os"}, "net/netip": {}, "net/url": {}}, ""},
		{"a direct os import is caught", map[string][]string{root: {"os"}}, "decider/core/x depends on os (I/O, logging or network): decider/core/x → os"},
		{"net is caught exactly", map[string][]string{root: {"net"}}, "depends on net (I/O"},
		{"an os import two packages down is caught with its chain",
			map[string][]string{root: {mod + "/internal/a"}, mod + "/internal/a": {"example.org/lib"}, "example.org/lib": {"os"}},
			"decider/core/x → internal/a → example.org/lib → os"},
		{"a YAML library reached through a third party is caught",
			map[string][]string{root: {"example.org/lib"}, "example.org/lib": {"sigs.k8s.io/yaml"}, "sigs.k8s.io/yaml": {}}, "(a YAML/TOML library)"},
		{"a TOML library is caught", map[string][]string{root: {"github.com/pelletier/go-toml/v2"}}, "(a YAML/TOML library)"},
		{"a gRPC subpackage is caught", map[string][]string{root: {"google.golang.org/grpc/status"}}, "(gRPC or watching)"},
		{"fsnotify is caught", map[string][]string{root: {"github.com/fsnotify/fsnotify"}}, "(gRPC or watching)"},
		{"slog is caught", map[string][]string{root: {"log/slog"}}, "depends on log/slog"},
		{"the module's parser is caught", map[string][]string{root: {mod + "/decider/docparse"}}, "(a parser or the wire types)"},
		{"the wire types are caught", map[string][]string{root: {mod + "/gen/x/v1"}}, "(a parser or the wire types)"},
		{"a package of the module outside the core and internal is caught", map[string][]string{root: {mod + "/decider/docparsex"}}, "(outside decider/core/ and internal/)"},
		{"the core and internal are fine", map[string][]string{root: {mod + "/decider/core/y", mod + "/internal/z"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(graph(root, tt.imports))
			switch {
			case tt.want == "" && len(got) != 0:
				t.Fatalf("flagged %q", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Fatalf("got %q, want one line containing %q", got, tt.want)
			}
		})
	}
}

func TestThePureCoreOfThisModuleIsClean(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	var stdout, stderr strings.Builder
	if code := run(&stdout, &stderr); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
}
