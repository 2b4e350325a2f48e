// Command archdoc writes the package picture of ARCHITECTURE.md — every
// package of the module with the module's packages it imports directly
// (test files left out), and the arrows between the drawing's groups
// (groups.go) — from `go list -json ./...`, between the file's archdoc
// markers; with -check it writes nothing and fails when the committed
// picture differs. make lint runs the check.
//
//	go run ./cmd/archdoc          # regenerate (make archdoc)
//	go run ./cmd/archdoc -check   # exit 1 when ARCHITECTURE.md is stale
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/internal/golist"
)

// modulePattern is every package of the module (go list ./... from the
// module root, whatever the working directory).
const modulePattern = "github.com/dynamic-config-admission/dynamic-config/..."

// The markers the generated sections stand between: the package table and
// the arrows between groups.
const (
	beginMarker       = "<!-- archdoc:begin — generated from `go list -json ./...` by `make archdoc` (go run ./cmd/archdoc); do not edit by hand -->"
	endMarker         = "<!-- archdoc:end -->"
	groupsBeginMarker = "<!-- archdoc:groups:begin — generated from `go list -json ./...` by `make archdoc`; do not edit by hand -->"
	groupsEndMarker   = "<!-- archdoc:groups:end -->"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

func run(args []string, stderr io.Writer) int {
	flags := flag.NewFlagSet("archdoc", flag.ContinueOnError)
	flags.SetOutput(stderr)
	file := flags.String("file", "ARCHITECTURE.md", "the document holding the archdoc markers")
	check := flags.Bool("check", false, "write nothing; fail when the picture differs from go list")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	pkgs, err := golist.Run(modulePattern)
	if err != nil {
		fmt.Fprintf(stderr, "archdoc: %v\n", err)
		return 2
	}
	old, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintf(stderr, "archdoc: %v\n", err)
		return 2
	}
	updated, err := splice(old, beginMarker, endMarker, picture(pkgs))
	if err == nil {
		updated, err = splice(updated, groupsBeginMarker, groupsEndMarker, groupArrows(pkgs))
	}
	if err != nil {
		fmt.Fprintf(stderr, "archdoc: %s: %v\n", *file, err)
		return 2
	}
	if *check {
		if !bytes.Equal(old, updated) {
			fmt.Fprintf(stderr, "archdoc: %s: the package picture is stale (it differs from go list -json ./...): run make archdoc (go run ./cmd/archdoc) and commit the result\n", *file)
			return 1
		}
		return 0
	}
	if bytes.Equal(old, updated) {
		return 0
	}
	if err := os.WriteFile(*file, updated, 0o644); err != nil {
		fmt.Fprintf(stderr, "archdoc: %v\n", err)
		return 2
	}
	return 0
}

// picture is the generated section: one row per package, in import-path
// order, with its direct imports from this module and its doc synopsis.
func picture(pkgs []golist.Package) string {
	var b strings.Builder
	b.WriteString("| Package | Imports (this module, direct, tests left out) | Doc |\n|---|---|---|\n")
	for _, p := range sorted(pkgs) {
		module := p.Module.Path
		var internal []string
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"/") {
				internal = append(internal, "`"+strings.TrimPrefix(imp, module+"/")+"`")
			}
		}
		imports := strings.Join(internal, ", ")
		if imports == "" {
			imports = "—"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", strings.TrimPrefix(p.ImportPath, module+"/"), imports, strings.ReplaceAll(p.Doc, "|", `\|`))
	}
	return b.String()
}

// sorted is the module's packages (those with a module) by import path.
func sorted(pkgs []golist.Package) []golist.Package {
	var out []golist.Package
	for _, p := range pkgs {
		if p.Module != nil && !p.Standard {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b golist.Package) int { return strings.Compare(a.ImportPath, b.ImportPath) })
	return out
}

// splice puts section between the markers begin and end of doc.
func splice(doc []byte, beginMarker, endMarker, section string) ([]byte, error) {
	begin := bytes.Index(doc, []byte(beginMarker))
	end := bytes.Index(doc, []byte(endMarker))
	if begin < 0 || end < begin {
		return nil, errors.New("no archdoc markers (" + beginMarker + " … " + endMarker + ")")
	}
	var out bytes.Buffer
	out.Write(doc[:begin+len(beginMarker)])
	out.WriteString("\n" + section)
	out.Write(doc[end:])
	return out.Bytes(), nil
}
