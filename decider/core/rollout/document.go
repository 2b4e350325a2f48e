package rollout

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/internal/dnsname"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
	"github.com/dynamic-config-admission/dynamic-config/internal/workload"
)

// The rollout document's keys (spec 10 §2), in the order a report names them.
var (
	documentKeys = []string{"candidate", "stage", "canary", "guard"}
	canaryKeys   = []string{"percent", "namespaces", "clusters"}
	guardKeys    = []string{"newRefusals"}
)

// environmentKey is the candidate's own key that is not an installation
// setting: the installation variables laid over the active's environment.
const environmentKey = "environment"

// now is the clock of LoadedAt (tests replace it).
var now = time.Now

// Build reads a rollout document (spec 10 §2) — read by the caller into an
// installation.Document, as the installation's document is — and validates
// it whole: the candidate is the active's environment (activeEnviron,
// KEY=value) with candidate.environment laid over it, plus the candidate
// document, validated by installation.Build, the code that validates the
// active installation. It returns every problem at once as a *Problems, in
// the order: the document's shape, stage, canary, guard, the candidate's
// environment, the candidate installation.
//
// A document that is absent, blank, or a map without keys is no rollout:
// Build returns nil and no error.
func Build(doc installation.Document, activeEnviron []string, decode envpolicy.DecodeText) (*Rollout, error) {
	b := builder{path: doc.Path}
	for _, p := range doc.Problems {
		b.text(p)
	}
	if len(b.items) > 0 {
		return nil, b.problems("")
	}
	if !doc.Present || doc.Root == nil || len(doc.Root.Content) == 0 {
		return nil, nil
	}
	r := &Rollout{DocumentPath: doc.Path}
	var candidate *doctree.Node
	seen := map[string]bool{}
	for _, p := range doctree.Pairs(doc.Root) {
		if seen[p.Key] {
			b.at(p.Key, p.Key+": "+strconv.Quote(p.Key)+" appears twice")
			continue
		}
		seen[p.Key] = true
		switch p.Key {
		case "candidate":
			candidate = p.Value
		case "stage":
			r.Stage = b.stage(p.Value)
		case "canary":
			r.Slice = b.slice(p.Value)
		case "guard":
			r.Guard = b.guard(p.Value)
		default:
			b.at(p.Key, p.Key+": "+strconv.Quote(p.Key)+" is not a rollout setting; the ones there are: "+strings.Join(documentKeys, ", "))
		}
	}
	if r.Stage == StageCanary && r.Slice.Buckets == 0 && len(r.Slice.Namespaces) == 0 {
		b.at("canary", "stage is canary and the slice is empty: set canary.percent above 0 or list canary.namespaces (or set stage: shadow)")
	}
	if !seen["candidate"] || doctree.IsNull(candidate) {
		b.at("candidate", "candidate is required: an installation document (the format of spec 02), with its environment under candidate.environment")
		return nil, b.problems("")
	}
	if candidate.Kind != doctree.Mapping {
		b.at("candidate", "candidate is a "+doctree.KindWord(candidate)+": an installation document (a map of settings) is required")
		return nil, b.problems("")
	}
	document, environment := splitEnvironment(candidate)
	environ := b.environment(environment)
	cand, err := installation.Build(installation.Document{Path: doc.Path, Present: true, Root: document, Blank: len(document.Content) == 0}, append(environ, activeEnviron...), decode)
	if err != nil {
		var p *installation.Problems
		if !errors.As(err, &p) {
			return nil, err
		}
		b.candidate(p)
		return nil, b.problems(p.AttemptedRevision)
	}
	if len(b.items) > 0 {
		return nil, b.problems(cand.Revision)
	}
	r.Candidate = cand
	r.LoadedAt = now()
	r.identify()
	return r, nil
}

// splitEnvironment parts the candidate map into the installation document
// and its environment node (nil when absent).
func splitEnvironment(candidate *doctree.Node) (document, environment *doctree.Node) {
	document = &doctree.Node{Kind: doctree.Mapping}
	for i := 0; i+1 < len(candidate.Content); i += 2 {
		k, v := candidate.Content[i], candidate.Content[i+1]
		if k != nil && k.Value == environmentKey {
			environment = v
			continue
		}
		document.Content = append(document.Content, k, v)
	}
	return document, environment
}

// builder collects the problems of one rollout document.
type builder struct {
	path  string
	items []installation.Problem
}

func (b *builder) text(msg string) { b.items = append(b.items, installation.Problem{Text: msg}) }

func (b *builder) at(path, msg string) {
	b.items = append(b.items, installation.Problem{Path: path, Text: msg})
}

func (b *builder) value(path, value, expected string) {
	b.items = append(b.items, installation.Problem{Path: path, Value: value, Expected: expected,
		Text: path + " is " + redact.Quote(value) + ": " + expected})
}

// scalar is n's text when n is a scalar; a list or a map is a problem at path.
func (b *builder) scalar(path string, n *doctree.Node, expected string) (string, bool) {
	if n == nil || n.Kind != doctree.Scalar {
		b.at(path, path+" is a "+doctree.KindWord(n)+": "+expected)
		return "", false
	}
	return installation.Trim(n.Value), true
}

func (b *builder) stage(n *doctree.Node) Stage {
	const want = "shadow or canary"
	v, ok := b.scalar("stage", n, want)
	switch {
	case !ok:
	case v == "shadow" || doctree.IsNull(n):
		return StageShadow
	case v == "canary":
		return StageCanary
	default:
		b.value("stage", v, want)
	}
	return StageShadow
}

func (b *builder) guard(n *doctree.Node) Guard {
	if doctree.IsNull(n) {
		return GuardFallback
	}
	if n.Kind != doctree.Mapping {
		b.at("guard", "guard is a "+doctree.KindWord(n)+": a map with newRefusals: fallback or serve")
		return GuardFallback
	}
	g := GuardFallback
	b.pairs("guard", n, guardKeys, func(key string, v *doctree.Node) {
		const want = "fallback (answer with the active installation and halt) or serve (answer with the candidate's refusal)"
		text, ok := b.scalar("guard.newRefusals", v, want)
		switch {
		case !ok:
		case text == "fallback" || doctree.IsNull(v):
		case text == "serve":
			g = GuardServe
		default:
			b.value("guard.newRefusals", text, want)
		}
	})
	return g
}

func (b *builder) slice(n *doctree.Node) Slice {
	var s Slice
	if doctree.IsNull(n) {
		return s
	}
	if n.Kind != doctree.Mapping {
		b.at("canary", "canary is a "+doctree.KindWord(n)+": a map of percent, namespaces and clusters")
		return s
	}
	b.pairs("canary", n, canaryKeys, func(key string, v *doctree.Node) {
		switch key {
		case "percent":
			s.Buckets = b.percent(v)
		case "namespaces":
			s.Namespaces = b.names("canary.namespaces", v, dnsname.IsLabel, "a namespace name (a lower-case DNS label)")
		case "clusters":
			s.Clusters = b.names("canary.clusters", v, dnsname.IsSubdomain, "a cluster name (a lower-case DNS name)")
			if v != nil && v.Kind == doctree.Sequence && len(v.Content) == 0 {
				b.at("canary.clusters", "canary.clusters is empty: leave it out for every cluster, or name the clusters that canary")
			}
		}
	})
	return s
}

// pairs walks a map's entries, reporting unknown and repeated keys.
func (b *builder) pairs(path string, n *doctree.Node, known []string, each func(key string, v *doctree.Node)) {
	seen := map[string]bool{}
	for _, p := range doctree.Pairs(n) {
		at := path + "." + p.Key
		switch {
		case !slices.Contains(known, p.Key):
			b.at(at, at+": "+strconv.Quote(p.Key)+" is not a "+path+" setting; the ones there are: "+strings.Join(known, ", "))
		case seen[p.Key]:
			b.at(at, at+": "+strconv.Quote(p.Key)+" appears twice")
		default:
			seen[p.Key] = true
			each(p.Key, p.Value)
		}
	}
}

// percent reads canary.percent: a number from 0 to 100 with at most two
// decimals, as a count of workload.Buckets.
func (b *builder) percent(n *doctree.Node) int {
	const want = "a number from 0 to 100 with at most two decimals (5, 0.5, 12.25)"
	if doctree.IsNull(n) {
		return 0
	}
	text, ok := b.scalar("canary.percent", n, want)
	if !ok {
		return 0
	}
	buckets, ok := ParsePercent(text)
	if !ok {
		b.value("canary.percent", text, want)
		return 0
	}
	return buckets
}

// ParsePercent reads a percentage from 0 to 100 with at most two decimals
// as a count of workload.Buckets (percent × 100).
func ParsePercent(text string) (int, bool) {
	whole, frac, dotted := strings.Cut(text, ".")
	if whole == "" || len(whole) > 3 || len(frac) > 2 || (dotted && frac == "") {
		return 0, false
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	w, _ := strconv.Atoi(whole)
	f := 0
	if frac != "" {
		f, _ = strconv.Atoi(frac)
		if len(frac) == 1 {
			f *= 10
		}
	}
	buckets := w*100 + f
	if buckets > workload.Buckets {
		return 0, false
	}
	return buckets, true
}

// names reads a list of names, each checked by valid; the list comes back
// sorted, without duplicates (a duplicate is reported).
func (b *builder) names(path string, n *doctree.Node, valid func(string) bool, what string) []string {
	if doctree.IsNull(n) {
		return nil
	}
	if n.Kind != doctree.Sequence {
		b.at(path, path+" is a "+doctree.KindWord(n)+": a list, each "+what)
		return nil
	}
	var out []string
	for i, item := range n.Content {
		at := path + "[" + strconv.Itoa(i) + "]"
		v, ok := b.scalar(at, item, what)
		if !ok {
			continue
		}
		if !valid(v) {
			b.value(at, v, what)
			continue
		}
		if slices.Contains(out, v) {
			b.at(at, at+": "+strconv.Quote(v)+" is listed twice")
			continue
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// environment reads candidate.environment: installation variables (02 §2)
// and their text, as KEY=value lines laid over the active's environment.
// A null or empty value is a set, empty variable: unset for the candidate,
// and it hides the candidate document's setting (02 §3).
func (b *builder) environment(n *doctree.Node) []string {
	const path = "candidate.environment"
	if doctree.IsNull(n) {
		return nil
	}
	if n.Kind != doctree.Mapping {
		b.at(path, path+" is a "+doctree.KindWord(n)+": a map of installation variables (DYNAMIC_CONFIG_AGENT_…, DYNAMIC_CONFIG_WEBHOOK_…) to their values")
		return nil
	}
	known := installationVariables()
	var out []string
	seen := map[string]bool{}
	for _, p := range doctree.Pairs(n) {
		at := path + "." + p.Key
		switch {
		case p.Key == installation.DefaultsFileVariable:
			b.at(at, at+": the candidate's document is candidate itself; "+p.Key+" cannot name another")
			continue
		case !slices.Contains(known, p.Key):
			b.at(at, at+": "+strconv.Quote(p.Key)+" is not an installation variable; the ones there are: "+strings.Join(known, ", "))
			continue
		case seen[p.Key]:
			b.at(at, at+": "+strconv.Quote(p.Key)+" appears twice")
			continue
		}
		seen[p.Key] = true
		if doctree.IsNull(p.Value) {
			out = append(out, p.Key+"=")
			continue
		}
		if p.Value.Kind != doctree.Scalar {
			b.at(at, at+" is a "+doctree.KindWord(p.Value)+": a variable's value is text")
			continue
		}
		out = append(out, p.Key+"="+p.Value.Value)
	}
	return out
}

// installationVariables are the variables of the installation's settings
// (without the document's own variable).
func installationVariables() []string {
	var out []string
	for _, v := range installation.Variables() {
		if v != installation.DefaultsFileVariable {
			out = append(out, v)
		}
	}
	return out
}

// candidate adds the candidate installation's problems, each under
// "candidate".
func (b *builder) candidate(p *installation.Problems) {
	items := p.Items
	if len(items) == 0 {
		items = make([]installation.Problem, len(p.Lines))
		for i, l := range p.Lines {
			items[i] = installation.Problem{Text: l}
		}
	}
	for _, it := range items {
		if it.Path == "" {
			it.Path = "candidate"
		} else {
			it.Path = "candidate." + it.Path
		}
		b.items = append(b.items, installation.Problem{Setting: it.Setting, Path: it.Path, Value: it.Value, Expected: it.Expected,
			Text: "candidate: " + it.String()})
	}
}

func (b *builder) problems(attempted string) *Problems {
	lines := make([]string, len(b.items))
	for i, p := range b.items {
		lines[i] = p.String()
	}
	return &Problems{DocumentPath: b.path, Items: b.items, Lines: lines, AttemptedRevision: attempted}
}
