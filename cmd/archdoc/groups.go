package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/internal/golist"
)

// groups are the boxes of ARCHITECTURE.md's drawing, by import-path prefix
// (relative to the module; the first that matches wins). A package no prefix
// matches is a group of its own.
var groups = []struct{ prefix, name string }{
	{"cmd/dynamic-config", "cmd/dynamic-config"},
	{"cmd/", "cmd/* (build tools)"},
	{"doors/", "doors/*"},
	{"test/", "test/*"},
	{"frontdoor/daemon", "frontdoor/daemon"},
	{"frontdoor/", "frontdoor/*"},
	{"decider/daemon", "decider/daemon"},
	{"decider/leader", "decider/leader, follower"},
	{"decider/follower", "decider/leader, follower"},
	{"decider/server", "decider/server, service"},
	{"decider/service", "decider/server, service"},
	{"decider/core/", "decider/core/*"},
	{"decider/", "decider/* (loaders, callers, metrics)"},
	{"gen/", "gen/"},
	{"internal/", "internal/*"},
}

// groupOf is the drawing's group of a package (path relative to the module).
func groupOf(path string) string {
	for _, g := range groups {
		if path == strings.TrimSuffix(g.prefix, "/") || strings.HasPrefix(path, g.prefix) {
			return g.name
		}
	}
	return path
}

// groupArrows is the generated list of the arrows between groups: one line
// per group that imports another, naming every group it imports (direct
// imports, tests left out), both in order.
func groupArrows(pkgs []golist.Package) string {
	arrows := map[string][]string{}
	for _, p := range sorted(pkgs) {
		module := p.Module.Path
		from := groupOf(strings.TrimPrefix(p.ImportPath, module+"/"))
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := groupOf(strings.TrimPrefix(imp, module+"/"))
			if to != from && !slices.Contains(arrows[from], to) {
				arrows[from] = append(arrows[from], to)
			}
		}
	}
	froms := make([]string, 0, len(arrows))
	for from := range arrows {
		froms = append(froms, from)
	}
	slices.Sort(froms)
	var b strings.Builder
	for _, from := range froms {
		tos := arrows[from]
		slices.Sort(tos)
		fmt.Fprintf(&b, "- `%s` → `%s`\n", from, strings.Join(tos, "`, `"))
	}
	return b.String()
}
