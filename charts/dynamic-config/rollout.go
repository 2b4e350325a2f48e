package chart

import (
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
)

// The rollout values (spec 10 §2, issue 41 item 8): rollout.candidate holds
// installation values — agent.image, tag, digest, pullSecret and defaults,
// the webhook's gates, agentImageAllow, allowTlsSkipVerify and allowEvents,
// envPolicy's targets and rules — laid over the release's own, and
// rollout.stage, canary and guard are the rollout document's. The chart
// renders them (templates/_rollout.tpl) into the installation ConfigMap as
// rollout.yaml, only while rollout.candidate is non-empty:
//
//	candidate:    the installation document of the values with the candidate laid over
//	              (mapped as Load maps it), plus
//	  environment: DYNAMIC_CONFIG_AGENT_IMAGE, DYNAMIC_CONFIG_AGENT_PULL_SECRET ("" = none),
//	              DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW, DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY
//	              and DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS of those values
//	stage, canary (percent, namespaces when non-empty, clusters when set), guard: as given
//
// "Laid over" is one key at a time, at fixed depths (CandidateKeys): a key
// the candidate names replaces the release's value whole (a gate map, a
// perStore map, the envPolicy rules), null unsets it, and every other key
// stays the release's. `dynamic-config rollout promote --values` moves the
// candidate by the same rule, so the promoted values make the candidate's
// installation.

// CandidateKeys are the maps of the chart values whose keys a candidate
// replaces one at a time (the rollout's overlay), deepest last: agent's
// own keys but defaults, agent.defaults', webhook's and envPolicy's.
var CandidateKeys = [][]string{{"agent"}, {"agent", "defaults"}, {"webhook"}, {"envPolicy"}}

// LoadRollout loads the rollout a chart-values file would render (nil when
// rollout.candidate is empty), validated as the decider validates its
// rollout document: the candidate over environ (nil = --no-env) and the
// chart's variables of the release's own values, as the decider's process
// would have them.
func LoadRollout(valuesPath string, environ []string) (*rollout.Rollout, error) {
	values, _, err := readValues(valuesPath)
	if err != nil {
		return nil, err
	}
	doc := mapRolloutValues(values)
	if doc == nil {
		return nil, nil
	}
	_, chartEnv := mapChartValues(values)
	return rollout.Build(installation.Document{Path: valuesPath, Present: true, Root: doc},
		append(append([]string{}, environ...), chartEnv...), docparse.Text)
}

// Environ is the environment of the decider a chart-values file deploys:
// environ (the process's; nil = --no-env) and then the chart's variables.
func Environ(valuesPath string, environ []string) ([]string, error) {
	values, _, err := readValues(valuesPath)
	if err != nil {
		return nil, err
	}
	_, chartEnv := mapChartValues(values)
	return append(append([]string{}, environ...), chartEnv...), nil
}

// candidateVariables are the installation variables a candidate's
// environment carries: the chart's env-only settings a candidate may
// change (a pull secret written empty, so that none hides the release's).
var candidateVariables = []string{installation.VarAgentImage, installation.VarPullSecret, installation.VarImageAllow,
	installation.VarAllowTLSSkipVerify, installation.VarAllowEvents}

// mapRolloutValues renders rollout.* into the rollout document (nil when
// rollout.candidate is empty).
func mapRolloutValues(values *doctree.Node) *doctree.Node {
	r := lookupPath(values, "rollout")
	candidate := lookupPath(r, "candidate")
	if !nonEmpty(candidate) {
		return nil
	}
	doc, env := mapChartValues(CandidateValues(values, candidate))
	environment := &doctree.Node{Kind: doctree.Mapping, Tag: "!!map"}
	for _, name := range candidateVariables {
		value := ""
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				value = v
			}
		}
		environment.Content = append(environment.Content, keyNode(name), &doctree.Node{Kind: doctree.Scalar, Tag: "!!str", Value: value})
	}
	doc.Content = append(doc.Content, keyNode("environment"), environment)
	out := &doctree.Node{Kind: doctree.Mapping, Tag: "!!map", Content: []*doctree.Node{keyNode("candidate"), doc}}
	if v := lookupPath(r, "stage"); nonEmpty(v) {
		out.Content = append(out.Content, keyNode("stage"), v)
	}
	if c := lookupPath(r, "canary"); c != nil && c.Kind == doctree.Mapping {
		canary := &doctree.Node{Kind: doctree.Mapping, Tag: "!!map"}
		percent := lookupPath(c, "percent")
		if doctree.IsNull(percent) {
			percent = &doctree.Node{Kind: doctree.Scalar, Tag: "!!int", Value: "0"}
		}
		canary.Content = append(canary.Content, keyNode("percent"), percent)
		for _, key := range []string{"namespaces", "clusters"} {
			if v := lookupPath(c, key); nonEmpty(v) {
				canary.Content = append(canary.Content, keyNode(key), v)
			}
		}
		out.Content = append(out.Content, keyNode("canary"), canary)
	}
	if v := lookupPath(r, "guard"); nonEmpty(v) {
		out.Content = append(out.Content, keyNode("guard"), v)
	}
	return out
}

// CandidateValues are values with the candidate's installation values laid
// over them, one key at a time at each of CandidateKeys.
func CandidateValues(values, candidate *doctree.Node) *doctree.Node {
	out := values
	for _, at := range CandidateKeys {
		over := lookupPath(candidate, at...)
		if over == nil || over.Kind != doctree.Mapping {
			continue
		}
		merged := copyMap(lookupPath(out, at...))
		for _, p := range doctree.Pairs(over) {
			if len(at) == 1 && at[0] == "agent" && p.Key == "defaults" {
				continue // its own depth
			}
			setKey(merged, p.Key, p.Value)
		}
		out = withValue(out, at, merged)
	}
	return out
}

// copyMap is a shallow copy of a mapping node (an empty one for nil).
func copyMap(n *doctree.Node) *doctree.Node {
	out := &doctree.Node{Kind: doctree.Mapping, Tag: "!!map"}
	if n != nil && n.Kind == doctree.Mapping {
		out.Content = append(out.Content, n.Content...)
	}
	return out
}

// setKey sets key in the mapping m to v, in place of its value or last.
func setKey(m *doctree.Node, key string, v *doctree.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, keyNode(key), v)
}

// withValue is a copy of root with the value at path set to v, the maps on
// the way copied (root itself is left as it is).
func withValue(root *doctree.Node, path []string, v *doctree.Node) *doctree.Node {
	if len(path) == 0 {
		return v
	}
	out := copyMap(root)
	setKey(out, path[0], withValue(lookupPath(root, path[0]), path[1:], v))
	return out
}
