package chart

import (
	"errors"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
)

// Load loads the installation a chart-values file would produce
// (`check-installation`/`inject`/`explain --values`, spec 07 §1.6): the file
// is laid over the chart's default values, mapped exactly as the chart maps
// it (below), and validated like any installation. environ (nil = --no-env)
// is applied on top of the variables the chart would set, and wins over them
// (decision: the process environment is always the outermost layer).
//
// The mapping (the chart's templates render the same; spec 07 §6.2):
//
// Into the installation document (ConfigMap key installation.yaml), keys in
// this order (FleetKeys, the installation table's, then storeDefaults), each only when "non-empty" (not null, not a blank string, not
// an empty map or list), values copied as their literal text (a YAML number
// stays its digits, a boolean "true"/"false"), maps and lists copied as they are:
//
//	agent.defaults.cpuRequest    → cpuRequest     only when its text (marker included) is not "10m"
//	agent.defaults.memoryRequest → memoryRequest  only when not "32Mi"
//	agent.defaults.cpuLimit      → cpuLimit
//	agent.defaults.memoryLimit   → memoryLimit    only when not "64Mi"
//	                                              (BuiltIns: the keys whose chart default is the built-in)
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
//	agent.defaults.matchGuaranteed → matchGuaranteed
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
func Load(valuesPath string, environ []string) (*installation.Installation, error) {
	values, over, err := readValues(valuesPath)
	if err != nil {
		return nil, err
	}
	root, chartEnv := mapChartValues(values)
	// The process environment wins over what the chart would set: the first
	// occurrence of a name is the one read.
	doc := installation.Document{Path: valuesPath, Present: true, Root: root, Problems: append(unknownValues(over), numberProblems(values)...)}
	return installation.Build(doc, append(append([]string{}, environ...), chartEnv...), docparse.Text)
}

// readValues reads a values file and lays it over the chart's defaults, as
// Helm does (values; over: the file's own, nil when blank); a file that
// cannot be read or is not a map of YAML is an *installation.Problems naming
// it.
func readValues(valuesPath string) (values, over *doctree.Node, err error) {
	problem := func(line string) error {
		return &installation.Problems{DocumentPath: valuesPath, Lines: []string{line}}
	}
	data, err := os.ReadFile(valuesPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, problem(valuesPath + ": the chart values file does not exist")
		}
		return nil, nil, problem(valuesPath + ": the chart values file cannot be read: " + installationloader.PathErrorText(err))
	}
	if !docparse.Blank(data) {
		var user yaml.Node
		if err := yaml.Unmarshal(data, &user); err != nil {
			return nil, nil, problem(valuesPath + ": the chart values are not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: "))
		}
		over = docparse.FromYAML(&user)
		if over != nil && over.Kind != doctree.Mapping && !doctree.IsNull(over) {
			return nil, nil, problem(valuesPath + ": the chart values are a map")
		}
		if doctree.IsNull(over) {
			over = nil
		}
	}
	return coalesce(chartDefaults(), over), over, nil
}

// chartDefaults are the chart's own default values (charts/dynamic-config/values.yaml).
func chartDefaults() *doctree.Node {
	n, err := parseValues(Values)
	if err != nil {
		panic("chart values.yaml: " + err.Error()) // embedded at build time; chart-lint keeps it YAML
	}
	return n
}

// parseValues reads a values file as a document tree.
func parseValues(data []byte) (*doctree.Node, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return nil, err
	}
	return docparse.FromYAML(&n), nil
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
func numberProblems(values *doctree.Node) []string {
	isNumber := func(n *doctree.Node, integerOK bool) bool {
		// "0o640" is a YAML 1.2 integer but a YAML 1.1 (Helm) string.
		return n != nil && n.Kind == doctree.Scalar && (n.Tag == "!!int" || n.Tag == "!!float") &&
			!strings.HasPrefix(strings.TrimLeft(n.Value, "+-"), "0o") &&
			!(integerOK && n.Tag == "!!int" && plainInteger.MatchString(n.Value))
	}
	var out []string
	defaults := lookupPath(values, "agent", "defaults")
	for _, q := range quotedValues {
		if isNumber(lookupPath(defaults, q.fleet), q.integerOK) {
			out = append(out, "agent.defaults."+q.fleet+": quote it ("+strconv.Quote(q.example)+"), or YAML reads it as a number")
		}
	}
	for _, sp := range doctree.Pairs(sortedMap(lookupPath(defaults, "perStore"), 1)) {
		for _, q := range quotedValues {
			if isNumber(lookupPath(sp.Value, q.knob), q.integerOK) {
				out = append(out, "agent.defaults.perStore."+sp.Key+"."+q.knob+": quote it ("+strconv.Quote(q.example)+"), or YAML reads it as a number")
			}
		}
	}
	return out
}

// mapChartValues renders the document and the decider's variables from
// coalesced chart values (the mapping documented on Load).
func mapChartValues(values *doctree.Node) (*doctree.Node, []string) {
	doc := &doctree.Node{Kind: doctree.Mapping, Tag: "!!map"}
	written := map[string]bool{}
	put := func(key string, v *doctree.Node) {
		doc.Content = append(doc.Content, keyNode(key), v)
		written[key] = true
	}
	defaults := lookupPath(values, "agent", "defaults")
	builtIns := BuiltIns()
	keys := FleetKeys()
	for _, m := range keys {
		v := lookupPath(defaults, m.Value)
		if !nonEmpty(v) {
			continue
		}
		if b, ok := builtIns[m.Key]; ok && v.Kind == doctree.Scalar && installation.Trim(v.Value) == b {
			continue
		}
		put(m.Key, v)
	}
	if v := lookupPath(defaults, perStoreValue); nonEmpty(v) {
		put("storeDefaults", sortedMap(v, 2))
	}
	for _, p := range doctree.Pairs(defaults) {
		known := p.Key == perStoreValue
		for _, m := range keys {
			known = known || m.Value == p.Key
		}
		if !known && !written[p.Key] && nonEmpty(p.Value) {
			put(p.Key, p.Value)
		}
	}
	for _, g := range []string{"agentEnvAllow", "sourceAllow", "sourceDeny"} {
		if v := lookupPath(values, "webhook", g); nonEmpty(v) {
			put(g, sortedMap(v, 1))
		}
	}
	if rules := lookupPath(values, "envPolicy", "rules"); nonEmpty(rules) {
		policy := &doctree.Node{Kind: doctree.Mapping, Tag: "!!map"}
		if targets := lookupPath(values, "envPolicy", "targets"); nonEmpty(targets) {
			policy.Content = append(policy.Content, keyNode("targets"), targets)
		}
		policy.Content = append(policy.Content, keyNode("rules"), rules)
		put("envPolicy", policy)
	}

	var env []string
	image, tag, digest := scalarOf(lookupPath(values, "agent", "image")), scalarOf(lookupPath(values, "agent", "tag")), scalarOf(lookupPath(values, "agent", "digest"))
	if digest != "" {
		env = append(env, installation.VarAgentImage+"="+image+"@"+digest)
	} else {
		env = append(env, installation.VarAgentImage+"="+image+":"+tag)
	}
	if ps := scalarOf(lookupPath(values, "agent", "pullSecret")); ps != "" {
		env = append(env, installation.VarPullSecret+"="+ps)
	}
	env = append(env, installation.VarImageAllow+"="+scalarOf(lookupPath(values, "webhook", "agentImageAllow")))
	env = append(env, installation.VarAllowTLSSkipVerify+"="+switchText(lookupPath(values, "webhook", "allowTlsSkipVerify")))
	events := either(switchText(lookupPath(values, "webhook", "allowEvents")), switchText(lookupPath(values, "agent", "events", "enabled")))
	env = append(env, installation.VarAllowEvents+"="+events)
	if c := scalarOf(lookupPath(values, "webhook", "classes", "enabled")); c != "false" && c != "" {
		env = append(env, installation.VarClasses+"="+c)
	}
	return doc, env
}
