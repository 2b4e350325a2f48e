// Command purecheck fails when a package of the pure core (every package
// under decider/core/) depends, directly or through any package of the
// module or a third party, on I/O, logging, gRPC, file watching or a
// YAML/TOML library, or imports a package of the module outside
// decider/core/ and internal/. depguard (.golangci.yml) sees a file's own imports;
// this sees the whole closure `go list -deps` reports. make lint runs it.
//
//	go run ./cmd/purecheck            # check decider/core/...
//
// The walk stops at the standard library: a standard package the core may
// import (fmt, encoding/json, net/netip) reaches os internally, and that is
// the standard library's own business; the standard packages that are ways
// to I/O (os, net, net/http, io/fs, log, …) are denied by name wherever they
// appear in the closure.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/internal/golist"
)

// corePattern is the pure core.
const corePattern = "github.com/dynamic-config-admission/dynamic-config/decider/core/..."

// deniedStd are the standard packages through which code does I/O, logs or
// talks to the network: named exactly (net/netip and net/url are values).
var deniedStd = []string{
	"crypto/tls", "io/fs", "io/ioutil", "log", "log/slog", "log/syslog",
	"net", "net/http", "net/http/httptest", "net/http/httptrace", "net/http/httputil", "net/rpc", "net/rpc/jsonrpc", "net/smtp",
	"os", "os/exec", "os/signal", "os/user", "path/filepath", "syscall",
}

// deniedModules are third-party and module prefixes the core never reaches.
var deniedModules = []string{
	"google.golang.org/grpc",
	"github.com/fsnotify/fsnotify",
	// tracing is decider/service's, around the core's two stages (issue 21)
	"go.opentelemetry.io",
}

// deniedInModule are the module's own packages that parse or carry the wire
// (relative to the module path).
var deniedInModule = []string{"decider/docparse", "gen", "internal/tracing"}

func main() { os.Exit(run(os.Stdout, os.Stderr)) }

func run(stdout, stderr io.Writer) int {
	pkgs, err := golist.Run("-deps", corePattern)
	if err != nil {
		fmt.Fprintf(stderr, "purecheck: %v\n", err)
		return 2
	}
	bad := check(pkgs)
	for _, b := range bad {
		fmt.Fprintln(stderr, b)
	}
	if len(bad) > 0 {
		fmt.Fprintf(stderr, "purecheck: %d dependencies of the pure core (%s) do I/O, log, speak gRPC or parse: move that code to a loader beside the core (see ARCHITECTURE.md)\n", len(bad), corePattern)
		return 1
	}
	fmt.Fprintf(stdout, "purecheck: %s depends on no I/O, logging, gRPC, watching or parser package\n", corePattern)
	return 0
}

// denied says why path may not be in the core's closure ("" when it may).
func denied(path, module string) string {
	if slices.Contains(deniedStd, path) {
		return "I/O, logging or network"
	}
	for _, m := range deniedModules {
		if path == m || strings.HasPrefix(path, m+"/") {
			return "gRPC or watching"
		}
	}
	if module != "" {
		for _, m := range deniedInModule {
			if p := module + "/" + m; path == p || strings.HasPrefix(path, p+"/") {
				return "a parser or the wire types"
			}
		}
	}
	if module != "" && strings.HasPrefix(path, module+"/") {
		rel := path[len(module)+1:]
		if !strings.HasPrefix(rel, "decider/core/") && !strings.HasPrefix(rel, "internal/") {
			return "outside decider/core/ and internal/"
		}
	}
	lower := strings.ToLower(path)
	if strings.Contains(lower, "yaml") || strings.Contains(lower, "toml") {
		return "a YAML/TOML library"
	}
	return ""
}

// check walks from each root (a listed package that is not only a
// dependency) through every non-standard package and returns one line per
// denied package reached: the root, the chain and why.
func check(pkgs []golist.Package) []string {
	byPath := map[string]golist.Package{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	var out []string
	for _, root := range pkgs {
		if root.DepOnly || root.Standard {
			continue
		}
		module := ""
		if root.Module != nil {
			module = root.Module.Path
		}
		// Breadth first, so the chain shown is a shortest one.
		via := map[string]string{root.ImportPath: ""}
		queue := []string{root.ImportPath}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, imp := range byPath[cur].Imports {
				if _, seen := via[imp]; seen {
					continue
				}
				via[imp] = cur
				if why := denied(imp, module); why != "" {
					out = append(out, fmt.Sprintf("%s depends on %s (%s): %s", short(root.ImportPath, module), imp, why, chain(via, imp, module)))
					continue
				}
				if p, ok := byPath[imp]; ok && !p.Standard {
					queue = append(queue, imp)
				}
			}
		}
	}
	return out
}

// chain is the import path from the root to imp, "a → b → imp".
func chain(via map[string]string, imp, module string) string {
	var steps []string
	for p := imp; p != ""; p = via[p] {
		steps = append(steps, short(p, module))
	}
	slices.Reverse(steps)
	return strings.Join(steps, " → ")
}

// short is path without the module prefix.
func short(path, module string) string {
	if module != "" && strings.HasPrefix(path, module+"/") {
		return path[len(module)+1:]
	}
	return path
}
