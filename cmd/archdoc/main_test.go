package main

import (
	"os"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/internal/golist"
)

func TestThePictureListsEveryPackageWithItsDirectImportsFromTheModule(t *testing.T) {
	m := &struct{ Path string }{Path: "example.com/m"}
	pkgs := []golist.Package{
		{ImportPath: "example.com/m/b", Doc: "Package b has a | in it.", Imports: []string{"fmt", "example.com/m/a", "example.org/lib"}, Module: m},
		{ImportPath: "example.com/m/a", Doc: "Package a.", Module: m},
		{ImportPath: "fmt", Standard: true},
	}
	want := "| Package | Imports (this module, direct, tests left out) | Doc |\n|---|---|---|\n" +
		"| `a` | — | Package a. |\n" +
		"| `b` | `a` | Package b has a \\| in it. |\n"
	if got := picture(pkgs); got != want {
		t.Errorf("picture:\n%s\nwant:\n%s", got, want)
	}
}

func TestTheArrowsBetweenGroupsAreTheImportsThatCrossAGroup(t *testing.T) {
	m := &struct{ Path string }{Path: "example.com/m"}
	pkgs := []golist.Package{
		{ImportPath: "example.com/m/decider/daemon", Imports: []string{"example.com/m/decider/server", "example.com/m/decider/follower", "example.com/m/internal/certs", "fmt"}, Module: m},
		{ImportPath: "example.com/m/decider/server", Imports: []string{"example.com/m/decider/service", "example.com/m/gen/v1"}, Module: m},
		{ImportPath: "example.com/m/decider/service", Imports: []string{"example.com/m/decider/core/resolve"}, Module: m},
		{ImportPath: "example.com/m/decider/follower", Imports: []string{"example.com/m/gen/v1"}, Module: m},
		{ImportPath: "example.com/m/podaudit", Imports: []string{"example.com/m/internal/annotation"}, Module: m},
	}
	want := "- `decider/daemon` → `decider/leader, follower`, `decider/server, service`, `internal/*`\n" +
		"- `decider/leader, follower` → `gen/`\n" +
		"- `decider/server, service` → `decider/core/*`, `gen/`\n" +
		"- `podaudit` → `internal/*`\n"
	if got := groupArrows(pkgs); got != want {
		t.Errorf("arrows:\n%s\nwant:\n%s", got, want)
	}
}

func TestSpliceReplacesOnlyWhatStandsBetweenTheMarkers(t *testing.T) {
	doc := "# A\n\nbefore\n" + beginMarker + "\nold\n" + endMarker + "\nafter\n"
	got, err := splice([]byte(doc), beginMarker, endMarker, "new\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# A\n\nbefore\n" + beginMarker + "\nnew\n" + endMarker + "\nafter\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := splice([]byte("no markers"), beginMarker, endMarker, "x"); err == nil {
		t.Error("a document without markers was accepted")
	}
}

func TestTheCommittedArchitectureIsCurrentAndAStaleOneFails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	var stderr strings.Builder
	if code := run([]string{"-check", "-file", "../../ARCHITECTURE.md"}, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	stale := t.TempDir() + "/ARCHITECTURE.md"
	if err := writeFile(stale, "x\n"+beginMarker+"\n| `gone` | — | |\n"+endMarker+"\n"+groupsBeginMarker+"\n"+groupsEndMarker+"\n"); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if code := run([]string{"-check", "-file", stale}, &stderr); code != 1 || !strings.Contains(stderr.String(), "run make archdoc") {
		t.Fatalf("a stale picture: exit %d, %q", code, stderr.String())
	}
}

func writeFile(name, text string) error { return os.WriteFile(name, []byte(text), 0o644) }
