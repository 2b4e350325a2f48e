package installation

import (
	"errors"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// chartDefaults are the chart's default values that matter to the
// installation (spec 07 §6.1): the user's values file is laid over them as
// `helm install -f FILE` would.
const chartDefaults = `
agent:
  image: ghcr.io/dynamic-config-rs/dynamic-config-agent
  tag: v0.3.0
  digest: ""
  pullSecret: ""
  events: {enabled: false, namespaces: [], serviceAccounts: []}
  defaults:
    cpuRequest: 10m
    memoryRequest: 32Mi
    memoryLimit: 64Mi
    cpuLimit: ""
    fileMode: ""
    watchSeconds: ""
    mode: ""
    volumeMedium: ""
    nativeSidecar: ""
    runAsUser: ""
    runAsGroup: ""
    metricsPort: 9110
    env: ""
    source: ""
    path: ""
    overridable: ""
    perStore: ""
webhook:
  agentEnvAllow: ""
  sourceAllow: ""
  sourceDeny: ""
  agentImageAllow: ""
  allowTlsSkipVerify: false
  allowEvents: false
  classes: {enabled: false}
  selfRotate: {enabled: false}
envPolicy:
  targets: []
  rules: []
`

// chartDefaultsKeys maps agent.defaults.<name> to its document key, in the
// order the document is written.
var chartDefaultsKeys = []struct{ value, key string }{
	{"cpuRequest", "cpuRequest"}, {"memoryRequest", "memoryRequest"}, {"cpuLimit", "cpuLimit"},
	{"memoryLimit", "memoryLimit"}, {"fileMode", "fileMode"}, {"watchSeconds", "watchSeconds"},
	{"mode", "mode"}, {"nativeSidecar", "nativeSidecar"}, {"volumeMedium", "volumeMedium"},
	{"runAsUser", "runAsUser"}, {"runAsGroup", "runAsGroup"}, {"metricsPort", "metricsPort"},
	{"source", "source"}, {"path", "path"}, {"env", "agentEnv"}, {"overridable", "overridable"},
	{"perStore", "storeDefaults"},
}

// LoadValues loads the installation a chart-values file would produce
// (`check-installation`/`inject`/`explain --values`, spec 07 §1.6): the file
// is laid over the chart's default values, mapped exactly as the chart maps
// it (below), and validated like any installation. environ (nil = --no-env)
// is applied on top of the variables the chart would set, and wins over them
// (decision: the process environment is always the outermost layer).
//
// The mapping (the chart's templates render the same; spec 07 §6.2):
//
// Into the installation document (ConfigMap key installation.yaml), keys in
// this order, each only when "non-empty" (not null, not a blank string, not
// an empty map or list), values copied as their literal text (a YAML number
// stays its digits, a boolean "true"/"false"), maps and lists copied as they are:
//
//	agent.defaults.cpuRequest    → cpuRequest     only when its text (marker included) is not "10m"
//	agent.defaults.memoryRequest → memoryRequest  only when not "32Mi"
//	agent.defaults.cpuLimit      → cpuLimit
//	agent.defaults.memoryLimit   → memoryLimit    only when not "64Mi"
//	agent.defaults.fileMode      → fileMode
//	agent.defaults.watchSeconds  → watchSeconds
//	agent.defaults.mode          → mode
//	agent.defaults.nativeSidecar → nativeSidecar
//	agent.defaults.volumeMedium  → volumeMedium
//	agent.defaults.runAsUser     → runAsUser
//	agent.defaults.runAsGroup    → runAsGroup
//	agent.defaults.metricsPort   → metricsPort    (chart default 9110, so written unless set to "")
//	agent.defaults.source        → source
//	agent.defaults.path          → path
//	agent.defaults.env           → agentEnv
//	agent.defaults.overridable   → overridable
//	agent.defaults.perStore      → storeDefaults  (string as given; a map with its stores and
//	                                               knobs in sorted key order, as Helm ranges over maps)
//	agent.defaults.<other>       → <other>        (refused by the document as an unknown key)
//	webhook.agentEnvAllow        → agentEnvAllow  (string as given; a map with its namespaces in
//	                                               sorted key order, so its groups' declaration order
//	                                               is the sorted one — Helm keeps no map order)
//	webhook.sourceAllow          → sourceAllow
//	webhook.sourceDeny           → sourceDeny
//	envPolicy.rules              → envPolicy.rules, only when non-empty; then
//	envPolicy.targets            → envPolicy.targets, only when non-empty
//
// Into the decider's environment:
//
//	DYNAMIC_CONFIG_AGENT_IMAGE                   = agent.image "@" agent.digest when the digest is
//	                                               non-empty, else agent.image ":" agent.tag (always set)
//	DYNAMIC_CONFIG_AGENT_PULL_SECRET             = agent.pullSecret, only when non-empty
//	DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW     = webhook.agentImageAllow (always; "" = unset)
//	DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY = webhook.allowTlsSkipVerify, "true"/"false" (always)
//	DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS          = webhook.allowEvents OR agent.events.enabled, "true"/"false"
//	                                               (always; a non-boolean is passed on as written
//	                                               and refused, where the chart's schema refuses it)
//	DYNAMIC_CONFIG_WEBHOOK_CLASSES               = webhook.classes.enabled, only when not false
//
// (The last one exists so that values the chart's schema refuses are refused
// here with the installation's own messages.) Every other value is the
// chart's own and is ignored. A YAML number where the chart takes a string
// (fileMode and the memory quantities; watchSeconds and the CPU quantities
// unless a plain whole number; at the fleet and in a map-form perStore) is
// refused with the chart's own message first.
func LoadValues(valuesPath string, environ []string) (*Installation, error) {
	rep := newReport()
	data, err := os.ReadFile(valuesPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			rep.shape = append(rep.shape, valuesPath+": the chart values file does not exist")
		} else {
			rep.shape = append(rep.shape, valuesPath+": the chart values file cannot be read: "+unwrapPathError(err))
		}
		return nil, &Problems{DocumentPath: valuesPath, Lines: rep.lines()}
	}
	var user yaml.Node
	if !blankDocument(data) {
		if err := yaml.Unmarshal(data, &user); err != nil {
			rep.shape = append(rep.shape, valuesPath+": the chart values are not valid YAML: "+strings.TrimPrefix(err.Error(), "yaml: "))
			return nil, &Problems{DocumentPath: valuesPath, Lines: rep.lines()}
		}
		if u := resolve(&user); u != nil && u.Kind != yaml.MappingNode && !isNull(u) {
			rep.shape = append(rep.shape, valuesPath+": the chart values are a map")
			return nil, &Problems{DocumentPath: valuesPath, Lines: rep.lines()}
		}
	}
	var defaults yaml.Node
	if err := yaml.Unmarshal([]byte(chartDefaults), &defaults); err != nil {
		panic("installation: chart defaults: " + err.Error())
	}
	over := resolve(&user)
	if over == nil || over.Kind == 0 || isNull(over) {
		over = nil
	}
	values := coalesce(resolve(&defaults), over)
	rep.shape = append(rep.shape, numberProblems(values)...)
	root, chartEnv := mapChartValues(values)
	// The process environment wins over what the chart would set: the first
	// occurrence of a name is the one read.
	e := newEnvironment(append(append([]string{}, environ...), chartEnv...))
	return build(document{path: valuesPath, present: true, root: root}, e, rep)
}

// quotedValues are the string-typed installation values the chart refuses
// as YAML numbers (spec 07 §6.4), with the example its message suggests.
// Helm reads YAML 1.1, so an unquoted fileMode: 0640 would reach the
// document as 416; the installation document keeps the literal text, so
// without this check --values would accept what `helm install` refuses.
// A whole number is accepted where it is unambiguous (integerOK: watch
// seconds, CPUs): `--set agent.defaults.watchSeconds=30` works. It must be
// plain decimal digits without a leading zero, so YAML 1.1 (Helm, 030 = 24)
// and YAML 1.2 read the same number.
var quotedValues = []struct {
	fleet, knob, example string
	integerOK            bool
}{
	{"cpuRequest", "agent-cpu-request", "64Mi", true},
	{"memoryRequest", "agent-memory-request", "64Mi", false},
	{"cpuLimit", "agent-cpu-limit", "64Mi", true},
	{"memoryLimit", "agent-memory-limit", "64Mi", false},
	{"fileMode", "file-mode", "0640", false},
	{"watchSeconds", "watch-seconds", "30", true},
}

// plainInteger matches a YAML integer both YAML versions read alike.
var plainInteger = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

// numberProblems are the chart's `<path>: quote it ("<example>"), or YAML
// reads it as a number` problems: for the fleet values, then for each store
// of a map-form perStore in sorted order (as Helm ranges over it).
func numberProblems(values *yaml.Node) []string {
	isNumber := func(n *yaml.Node, integerOK bool) bool {
		n = resolve(n)
		// "0o640" is a YAML 1.2 integer but a YAML 1.1 (Helm) string.
		return n != nil && n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") &&
			!strings.HasPrefix(strings.TrimLeft(n.Value, "+-"), "0o") &&
			!(integerOK && n.ShortTag() == "!!int" && plainInteger.MatchString(n.Value))
	}
	var out []string
	defaults := lookupPath(values, "agent", "defaults")
	for _, q := range quotedValues {
		if isNumber(lookupPath(defaults, q.fleet), q.integerOK) {
			out = append(out, "agent.defaults."+q.fleet+": quote it ("+strconv.Quote(q.example)+"), or YAML reads it as a number")
		}
	}
	for _, sp := range pairs(sortedMap(lookupPath(defaults, "perStore"), 1)) {
		for _, q := range quotedValues {
			if isNumber(lookupPath(resolve(sp.Value), q.knob), q.integerOK) {
				out = append(out, "agent.defaults.perStore."+sp.Key+"."+q.knob+": quote it ("+strconv.Quote(q.example)+"), or YAML reads it as a number")
			}
		}
	}
	return out
}

// coalesce lays over on top of base as Helm does: maps merge key by key, a
// null in over deletes the key, anything else in over replaces.
func coalesce(base, over *yaml.Node) *yaml.Node {
	if over == nil {
		return base
	}
	if base == nil || base.Kind != yaml.MappingNode || over.Kind != yaml.MappingNode {
		return over
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	overPairs := pairs(over)
	find := func(k string) (*yaml.Node, bool) {
		for _, p := range overPairs {
			if p.Key == k {
				return p.Value, true
			}
		}
		return nil, false
	}
	seen := map[string]bool{}
	for _, p := range pairs(base) {
		seen[p.Key] = true
		v := p.Value
		if o, ok := find(p.Key); ok {
			if isNull(o) {
				continue
			}
			v = coalesce(resolve(p.Value), resolve(o))
		}
		out.Content = append(out.Content, keyNode(p.Key), v)
	}
	for _, p := range overPairs {
		if !seen[p.Key] && !isNull(p.Value) {
			out.Content = append(out.Content, keyNode(p.Key), p.Value)
		}
	}
	return out
}

func keyNode(k string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k} }

// lookupPath returns the value under the dotted path in a mapping node, nil when absent.
func lookupPath(n *yaml.Node, path ...string) *yaml.Node {
	for _, k := range path {
		var next *yaml.Node
		for _, p := range pairs(n) {
			if p.Key == k {
				next = resolve(p.Value)
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// sortedMap returns a copy of a mapping node with its keys sorted, down to
// depth levels: Helm reads values into Go maps and its templates range over
// them in key order, so a map-form gate's groups (and a perStore map) reach
// the rendered document sorted, whatever order the values file wrote.
func sortedMap(n *yaml.Node, depth int) *yaml.Node {
	n = resolve(n)
	if depth == 0 || n == nil || n.Kind != yaml.MappingNode {
		return n
	}
	ps := pairs(n)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key })
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, p := range ps {
		out.Content = append(out.Content, keyNode(p.Key), sortedMap(p.Value, depth-1))
	}
	return out
}

// switchText is a chart boolean as the decider's variable carries it:
// absent or null is "false"; anything else is its literal text, so a value
// that is not a boolean is refused by the installation rather than coerced
// (decision: the chart's schema takes booleans only; a switch never opens by
// accident).
func switchText(n *yaml.Node) string {
	n = resolve(n)
	switch {
	case isNull(n):
		return "false"
	case n.Kind != yaml.ScalarNode:
		return "a " + kindWord(n)
	}
	return n.Value
}

// either is the chart's `or` of two booleans.
func either(a, b string) string {
	switch {
	case a == "true" || b == "true":
		return "true"
	case a != "false":
		return a
	}
	return b
}

// nonEmpty is the chart's "non-empty" test for a value it renders.
func nonEmpty(n *yaml.Node) bool {
	n = resolve(n)
	switch {
	case isNull(n):
		return false
	case n.Kind == yaml.ScalarNode:
		return trim(n.Value) != ""
	default:
		return len(n.Content) > 0
	}
}

// scalarOf is a scalar's literal text ("" when absent or not a scalar).
func scalarOf(n *yaml.Node) string {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
		return ""
	}
	return n.Value
}

// mapChartValues renders the document and the decider's variables from
// coalesced chart values (the mapping documented on LoadValues).
func mapChartValues(values *yaml.Node) (*yaml.Node, []string) {
	doc := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	written := map[string]bool{}
	put := func(key string, v *yaml.Node) {
		doc.Content = append(doc.Content, keyNode(key), v)
		written[key] = true
	}
	defaults := lookupPath(values, "agent", "defaults")
	builtIns := map[string]string{"cpuRequest": "10m", "memoryRequest": "32Mi", "memoryLimit": "64Mi"}
	for _, m := range chartDefaultsKeys {
		v := lookupPath(defaults, m.value)
		if !nonEmpty(v) {
			continue
		}
		if b, ok := builtIns[m.value]; ok && v.Kind == yaml.ScalarNode && trim(v.Value) == b {
			continue
		}
		if m.key == "storeDefaults" {
			v = sortedMap(v, 2)
		}
		put(m.key, v)
	}
	for _, p := range pairs(defaults) {
		known := false
		for _, m := range chartDefaultsKeys {
			known = known || m.value == p.Key
		}
		if !known && !written[p.Key] && nonEmpty(p.Value) {
			put(p.Key, resolve(p.Value))
		}
	}
	for _, g := range []string{"agentEnvAllow", "sourceAllow", "sourceDeny"} {
		if v := lookupPath(values, "webhook", g); nonEmpty(v) {
			put(g, sortedMap(v, 1))
		}
	}
	if rules := lookupPath(values, "envPolicy", "rules"); nonEmpty(rules) {
		policy := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if targets := lookupPath(values, "envPolicy", "targets"); nonEmpty(targets) {
			policy.Content = append(policy.Content, keyNode("targets"), targets)
		}
		policy.Content = append(policy.Content, keyNode("rules"), rules)
		put("envPolicy", policy)
	}

	var env []string
	image, tag, digest := scalarOf(lookupPath(values, "agent", "image")), scalarOf(lookupPath(values, "agent", "tag")), scalarOf(lookupPath(values, "agent", "digest"))
	if digest != "" {
		env = append(env, varImage+"="+image+"@"+digest)
	} else {
		env = append(env, varImage+"="+image+":"+tag)
	}
	if ps := scalarOf(lookupPath(values, "agent", "pullSecret")); ps != "" {
		env = append(env, varPullSecret+"="+ps)
	}
	env = append(env, varImageAllow+"="+scalarOf(lookupPath(values, "webhook", "agentImageAllow")))
	env = append(env, varTLSSkip+"="+switchText(lookupPath(values, "webhook", "allowTlsSkipVerify")))
	events := either(switchText(lookupPath(values, "webhook", "allowEvents")), switchText(lookupPath(values, "agent", "events", "enabled")))
	env = append(env, varAllowEvents+"="+events)
	if c := scalarOf(lookupPath(values, "webhook", "classes", "enabled")); c != "false" && c != "" {
		env = append(env, varClasses+"="+c)
	}
	return doc, env
}
