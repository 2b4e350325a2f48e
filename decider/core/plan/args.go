package plan

import (
	"slices"
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// agentKinds says which agents an argument row applies to (the registry's).
type agentKinds = registry.AgentKinds

const (
	initAgent     = registry.AgentInit
	watchingAgent = registry.AgentWatching
	bothAgents    = registry.AgentBoth
)

// argRow is one row of the argument table (spec 03 §3.2). A row applies to
// an agent when the agent kind matches, when the render is the default one
// or the row is not defaultOnly, and when answers true; tokens then appends
// the row's tokens, in the order shown.
type argRow struct {
	at          int // the row of spec 03 §3.2
	agents      agentKinds
	defaultOnly bool
	when        func(v *view) bool
	tokens      func(v *view, args []string) []string
}

// unowned are the rows of spec 03 §3.2 that no knob's value becomes: the
// ssh-key auth a key without auth implies, and the also renderings.
var unowned = []argRow{
	{18, bothAgents, false, sshKeyWithoutAuth, fixed("--auth", "ssh-key")},
	{29, bothAgents, true, hasAlso, also},
}

// mounted are the references of FormatFile: the auxiliary volume the knob's
// value mounts and the key when the reference names none.
var mounted = map[registry.ID]struct {
	aux        auxiliary
	defaultKey string
}{
	registry.SSHSecret:       {auxSSH, defaultSSHKey},
	registry.CAConfigMap:     {auxCA, defaultCAKey},
	registry.SchemaConfigMap: {auxSchema, defaultSchemaKey},
	registry.CanaryConfigMap: {auxCanary, defaultCanaryKey},
}

// planFormats are the FormatPlan arguments: a condition and tokens that
// read other knobs than the row's own; flag is the row's.
var planFormats = map[registry.ID]struct {
	when   func(v *view) bool
	tokens func(flag string) func(v *view, args []string) []string
}{
	registry.Template:         {hasTemplate, template},
	registry.TLSSecret:        {hasOwn(registry.TLSSecret), clientTLS},
	registry.RevokeOnShutdown: {dynamicWithoutRevoke, func(flag string) func(*view, []string) []string { return fixed(flag) }},
	registry.RevokeGrace:      {revokeGraceApplies, func(flag string) func(*view, []string) []string { return flagValue(flag, registry.RevokeGrace) }},
	registry.MetricsPort:      {hasMetricsPort, metricsAddr},
}

// argRows is the argument table of spec 03 §3.2, walked top to bottom:
// every registry row's agent side (Row.Agent) and the unowned rows, in At
// order. Scope each is every render's agents, default the default render's.
var argRows = func() []argRow {
	out := append([]argRow(nil), unowned...)
	for _, id := range registry.All {
		r := id.Row()
		if r.Agent == nil {
			continue
		}
		out = append(out, agentArg(id, r))
	}
	slices.SortFunc(out, func(a, b argRow) int { return a.at - b.at })
	return out
}()

// agentArg is knob id's argument row, from its registry row.
func agentArg(id registry.ID, r *registry.Row) argRow {
	a := r.Agent
	row := argRow{at: a.At, agents: a.Kinds, defaultOnly: r.Scope == registry.ScopeDefault}
	switch a.Format {
	case registry.FormatValue:
		row.when, row.tokens = hasOwn(id), flagValue(a.Flag, id)
	case registry.FormatAlways:
		row.when, row.tokens = always, flagValue(a.Flag, id)
	case registry.FormatTrue:
		row.when, row.tokens = isTrue(id), fixed(a.Flag)
	case registry.FormatFalse:
		row.when, row.tokens = isFalse(id), fixed(a.Flag)
	case registry.FormatFile:
		m, ok := mounted[id]
		if !ok {
			panic("plan: " + r.Name + " is FormatFile but mounts no auxiliary volume")
		}
		row.when, row.tokens = hasOwn(id), refFile(a.Flag, id, m.aux, m.defaultKey)
	case registry.FormatPlan:
		f, ok := planFormats[id]
		if !ok {
			panic("plan: " + r.Name + " is FormatPlan but the plan has no formatter for it")
		}
		row.when, row.tokens = f.when, f.tokens(a.Flag)
	default:
		panic("plan: " + r.Name + " has an agent side without a format")
	}
	return row
}

// agentArgs walks the argument table for one agent of a render.
func agentArgs(v *view, kind agentKinds) []string {
	args := make([]string, 0, 16)
	for i := range argRows {
		r := &argRows[i]
		if r.agents&kind == 0 || (r.defaultOnly && !v.isDefault()) || !r.when(v) {
			continue
		}
		args = r.tokens(v, args)
	}
	return args
}

// Conditions.

func always(*view) bool { return true }

// hasOwn: the render resolved a value for the knob (any tier), built-ins excluded.
func hasOwn(knob registry.ID) func(*view) bool {
	return func(v *view) bool {
		ok := v.render.Values.Has(knob)
		return ok
	}
}

func isTrue(knob registry.ID) func(*view) bool {
	return func(v *view) bool { return v.is(knob) }
}

func isFalse(knob registry.ID) func(*view) bool {
	return func(v *view) bool {
		s, _ := v.get(knob)
		return s == "false"
	}
}

func sshKeyWithoutAuth(v *view) bool {
	_, ssh := v.render.Values.Get(registry.SSHSecret)
	_, auth := v.render.Values.Get(registry.Auth)
	return ssh && !auth
}

func hasTemplate(v *view) bool {
	_, inline := v.render.Values.Get(registry.Template)
	_, configMap := v.render.Values.Get(registry.TemplateConfigMap)
	return inline || configMap
}

func hasAlso(v *view) bool { return len(v.in.Also) > 0 }

func dynamicWithoutRevoke(v *view) bool {
	s, _ := v.get(registry.RevokeOnShutdown)
	return v.is(registry.Dynamic) && s == "false"
}

func revokeGraceApplies(v *view) bool {
	_, grace := v.render.Values.Get(registry.RevokeGrace)
	return grace && v.is(registry.Dynamic) && v.is(registry.RevokeOnShutdown)
}

func hasMetricsPort(v *view) bool { return metricsPort(v) != 0 }

// Token functions.

func fixed(tokens ...string) func(*view, []string) []string {
	return func(_ *view, args []string) []string { return append(args, tokens...) }
}

func flagValue(flag string, knob registry.ID) func(*view, []string) []string {
	return func(v *view, args []string) []string {
		s, _ := v.get(knob)
		return append(args, flag, s)
	}
}

// refFile passes the file of a mounted reference: <mount dir>/<key>.
func refFile(flag string, knob registry.ID, aux auxiliary, defaultKey string) func(*view, []string) []string {
	return func(v *view, args []string) []string {
		s, _ := v.get(knob)
		_, key := splitRef(s, defaultKey)
		return append(args, flag, aux.mountDir(v.name)+"/"+key)
	}
}

// template passes the inline template (flag), else the ConfigMap's file.
func template(flag string) func(*view, []string) []string {
	return func(v *view, args []string) []string {
		if s, ok := v.render.Values.Get(registry.Template); ok {
			return append(args, flag, s)
		}
		_, key := splitRef(v.render.Values.Text(registry.TemplateConfigMap), defaultTemplateKey)
		return append(args, "--template", auxTemplate.mountDir(v.name)+"/"+key)
	}
}

// clientTLS passes the client certificate (flag) and key of the mounted Secret.
func clientTLS(flag string) func(*view, []string) []string {
	return func(v *view, args []string) []string {
		dir := auxClientTLS.mountDir(v.name)
		return append(args, flag, dir+"/tls.crt", "--tls-key", dir+"/tls.key")
	}
}

// also passes one --also pair per also-name, in the (sorted) input order.
func also(v *view, args []string) []string {
	for _, a := range v.in.Also {
		spec := "out=" + a.Path
		if a.Section != "" {
			spec += ",section=" + a.Section
		}
		args = append(args, "--also", spec)
	}
	return args
}

// metricsAddr passes the metrics address on every interface at the port.
func metricsAddr(flag string) func(*view, []string) []string {
	return func(v *view, args []string) []string {
		return append(args, flag, "0.0.0.0:"+strconv.Itoa(int(metricsPort(v))))
	}
}
