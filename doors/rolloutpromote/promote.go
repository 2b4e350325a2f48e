// Package rolloutpromote is `dynamic-config rollout promote` (spec 10 §5):
// the candidate becomes the active installation, as a change of the files
// a GitOps repository holds — the decider never writes its own
// installation. In chart values, rollout.candidate's keys move to where
// the chart reads the installation (the overlay rule of the chart's
// rollout: chart.CandidateKeys) and rollout is emptied; a rollout document's
// candidate becomes a plain installation document, its environment named
// in a header. Comments of a YAML file are kept where yaml.v3 keeps them.
// The rollout is validated first, exactly as the decider would validate it:
// a broken candidate is never promoted.
package rolloutpromote

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	chart "github.com/dynamic-config-admission/dynamic-config/charts/dynamic-config"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
	"github.com/dynamic-config-admission/dynamic-config/doors/installationsource"
	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// Outputs are promote's -o values: "" writes the values file in place,
// yaml writes the result to stdout.
var Outputs = []string{"", "yaml"}

// ErrNoCandidate is a rollout with nothing to promote.
var ErrNoCandidate = errors.New("there is no candidate to promote: rollout.candidate is empty (or the rollout document is blank)")

// Request is what to promote.
type Request struct {
	// Values is a chart values file whose rollout.candidate is promoted.
	Values string
	// Rollout is a rollout document whose candidate is promoted (instead of Values).
	Rollout string
	// Environ is the environment the rollout is validated over (nil = --no-env).
	Environ []string
	// Output is -o: "" rewrites Values in place, yaml writes the result to
	// the caller (a rollout document's promotion always is).
	Output string
}

// Check reports a combination that is a usage error.
func (r Request) Check() error {
	if (r.Values == "") == (r.Rollout == "") {
		return errors.New("give the chart values with --values FILE or a rollout document with --rollout FILE (one of them)")
	}
	if !slices.Contains(Outputs, r.Output) {
		return fmt.Errorf("-o is %q: yaml (or none: rewrite --values in place)", r.Output)
	}
	return nil
}

// Promote validates the rollout and promotes its candidate. It returns the
// text for stdout (nil when the values file was written in place) and a
// line saying what was done.
func Promote(r Request) (out []byte, done string, err error) {
	if err := r.Check(); err != nil {
		return nil, "", err
	}
	src := installationsource.Source{Values: r.Values, Rollout: r.Rollout, Environ: r.Environ}
	ro, err := src.LoadRollout()
	if err != nil {
		return nil, "", err
	}
	if ro == nil {
		return nil, "", ErrNoCandidate
	}
	revision := ro.Candidate.Revision
	if r.Rollout != "" {
		out, err := promoteDocument(r.Rollout)
		return out, "the candidate of " + r.Rollout + " (revision " + revision + ") as an installation document", err
	}
	data, err := os.ReadFile(r.Values)
	if err != nil {
		return nil, "", fmt.Errorf("read the chart values: %w", err)
	}
	out, err = Values(data)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", r.Values, err)
	}
	if r.Output != "" {
		return out, "the values of " + r.Values + " with the candidate (revision " + revision + ") promoted", nil
	}
	if err := stablefile.WriteAtomic(r.Values, out); err != nil {
		return nil, "", fmt.Errorf("write the promoted values: %w", err)
	}
	return nil, r.Values + ": the candidate (revision " + revision + ") is the installation; rollout emptied", nil
}

// Values is a values file (YAML) with rollout.candidate moved over the
// installation values, one key at a time at each of chart.CandidateKeys
// (the chart's overlay rule: a key the candidate names replaces the value
// whole, a null stays a null), and rollout removed, so that the chart's
// defaults (no candidate, shadow) apply.
func Values(data []byte) ([]byte, error) {
	var file yaml.Node
	if err := yaml.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("the chart values are not valid YAML: %w", err)
	}
	if len(file.Content) == 0 || file.Content[0].Kind != yaml.MappingNode {
		return nil, ErrNoCandidate
	}
	root := file.Content[0]
	candidate := lookup(root, "rollout", "candidate")
	if candidate == nil || candidate.Kind != yaml.MappingNode || len(candidate.Content) == 0 {
		return nil, ErrNoCandidate
	}
	for _, at := range chart.CandidateKeys {
		over := lookup(candidate, at...)
		if over == nil || over.Kind != yaml.MappingNode {
			continue
		}
		into := ensureMap(root, at)
		for i := 0; i+1 < len(over.Content); i += 2 {
			if len(at) == 1 && at[0] == "agent" && over.Content[i].Value == "defaults" {
				continue // its own depth
			}
			set(into, over.Content[i], over.Content[i+1])
		}
	}
	remove(root, "rollout")
	return encode(&file)
}

// promoteDocument is the candidate of a rollout document as an installation
// document: candidate.environment leaves the document for a header naming
// the variables the decider's environment must then carry.
func promoteDocument(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the rollout document: %w", err)
	}
	root, problem := docparse.YAML("rollout document", path, data)
	if problem != "" {
		return nil, errors.New(problem)
	}
	candidate := lookup(root, "candidate")
	if candidate == nil || candidate.Kind != yaml.MappingNode {
		return nil, ErrNoCandidate
	}
	var header strings.Builder
	if env := lookup(candidate, "environment"); env != nil && env.Kind == yaml.MappingNode && len(env.Content) > 0 {
		header.WriteString("# Promoted from " + path + ". The candidate's environment, which this document cannot carry:\n" +
			"# set it in the decider's environment (in the chart: agent.image/tag/digest, agent.pullSecret, webhook.*).\n")
		for i := 0; i+1 < len(env.Content); i += 2 {
			header.WriteString("#   " + env.Content[i].Value + "=" + env.Content[i+1].Value + "\n")
		}
	}
	remove(candidate, "environment")
	body, err := encode(candidate)
	if err != nil {
		return nil, err
	}
	return append([]byte(header.String()), body...), nil
}

// encode writes a node as YAML, indented by two.
func encode(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("write YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("write YAML: %w", err)
	}
	return b.Bytes(), nil
}

// lookup is the value at path under the mapping n (nil when absent).
func lookup(n *yaml.Node, path ...string) *yaml.Node {
	for _, key := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

// ensureMap is the mapping at path under root, made (or made a mapping in
// place of a null) on the way.
func ensureMap(root *yaml.Node, path []string) *yaml.Node {
	n := root
	for _, key := range path {
		next := lookup(n, key)
		if next == nil || next.Kind != yaml.MappingNode {
			next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			set(n, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, next)
		}
		n = next
	}
	return n
}

// set sets key in the mapping m to v: in place of its value, keeping the
// key's comments, or last.
func set(m, key, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key.Value {
			if v.LineComment == "" {
				v.LineComment = m.Content[i+1].LineComment
			}
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, key, v)
}

// remove deletes key from the mapping m.
func remove(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
