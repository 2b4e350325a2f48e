package plan

import (
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// agentKinds says which agents an argument row applies to.
type agentKinds uint8

const (
	initAgent agentKinds = 1 << iota
	watchingAgent
	bothAgents = initAgent | watchingAgent
)

// scope says which renders an argument row applies to.
type scope uint8

const (
	everyRender scope = iota // default and named renders
	defaultOnly              // the default render's agents only
)

// argRow is one row of the argument table (spec 03 §3.2). A row applies to
// an agent when the agent kind and the render scope match and when answers
// true; tokens then appends the row's tokens, in the order shown.
type argRow struct {
	row    int
	agents agentKinds
	scope  scope
	when   func(v *view) bool
	tokens func(v *view, args []string) []string
}

// argRows is the argument table of spec 03 §3.2, walked top to bottom.
var argRows = []argRow{
	{1, bothAgents, everyRender, always, flagValue("--source", registry.Source)},
	{2, bothAgents, everyRender, hasOwn(registry.Endpoint), flagValue("--endpoint", registry.Endpoint)},
	{3, bothAgents, everyRender, always, flagValue("--key", registry.Key)},
	{4, bothAgents, everyRender, always, flagValue("--out", registry.Path)},
	{5, bothAgents, everyRender, hasOwn(registry.Section), flagValue("--section", registry.Section)},
	{6, bothAgents, everyRender, hasOwn(registry.Auth), flagValue("--auth", registry.Auth)},
	{7, bothAgents, everyRender, hasOwn(registry.AuthMount), flagValue("--auth-mount", registry.AuthMount)},
	{8, bothAgents, everyRender, hasOwn(registry.AuthRole), flagValue("--auth-role", registry.AuthRole)},
	{9, bothAgents, everyRender, hasOwn(registry.AuthUsername), flagValue("--auth-username", registry.AuthUsername)},
	{10, bothAgents, everyRender, hasOwn(registry.AuthTokenPath), flagValue("--auth-token-path", registry.AuthTokenPath)},
	{11, bothAgents, everyRender, hasOwn(registry.Namespace), flagValue("--namespace", registry.Namespace)},
	{12, bothAgents, everyRender, hasOwn(registry.Ref), flagValue("--ref", registry.Ref)},
	{13, bothAgents, everyRender, hasOwn(registry.APIURL), flagValue("--api-url", registry.APIURL)},
	{14, bothAgents, defaultOnly, hasOwn(registry.StartupPolicy), flagValue("--startup-policy", registry.StartupPolicy)},
	{15, bothAgents, defaultOnly, hasOwn(registry.OnDelete), flagValue("--on-delete", registry.OnDelete)},
	{16, bothAgents, defaultOnly, hasOwn(registry.MaxDocumentBytes), flagValue("--max-document-bytes", registry.MaxDocumentBytes)},
	{17, bothAgents, defaultOnly, hasOwn(registry.MaxStaleness), flagValue("--max-staleness", registry.MaxStaleness)},
	{18, bothAgents, everyRender, sshKeyWithoutAuth, fixed("--auth", "ssh-key")},
	{19, bothAgents, everyRender, hasOwn(registry.SSHSecret), refFile("--ssh-key", registry.SSHSecret, auxSSH, defaultSSHKey)},
	{20, bothAgents, everyRender, hasOwn(registry.CAConfigMap), refFile("--ca", registry.CAConfigMap, auxCA, defaultCAKey)},
	{21, bothAgents, everyRender, hasOwn(registry.TLSServerName), flagValue("--tls-server-name", registry.TLSServerName)},
	{22, bothAgents, everyRender, isTrue(registry.TLSSkipVerify), fixed("--tls-skip-verify")},
	{23, bothAgents, everyRender, hasOwn(registry.FileMode), flagValue("--file-mode", registry.FileMode)},
	{24, bothAgents, everyRender, hasTemplate, template},
	{25, bothAgents, defaultOnly, hasOwn(registry.SchemaConfigMap), refFile("--schema", registry.SchemaConfigMap, auxSchema, defaultSchemaKey)},
	{26, bothAgents, everyRender, hasOwn(registry.TLSSecret), clientTLS},
	{27, watchingAgent, everyRender, always, flagValue("--watch", registry.WatchSeconds)},
	{28, bothAgents, defaultOnly, isTrue(registry.Dynamic), fixed("--dynamic")},
	{29, bothAgents, defaultOnly, hasAlso, also},
	{30, watchingAgent, defaultOnly, isTrue(registry.Meta), fixed("--meta")},
	{31, watchingAgent, defaultOnly, dynamicWithoutRevoke, fixed("--no-revoke-on-shutdown")},
	{32, watchingAgent, defaultOnly, hasOwn(registry.NotifyHTTP), flagValue("--notify-http", registry.NotifyHTTP)},
	{33, watchingAgent, defaultOnly, hasOwn(registry.OnDrift), flagValue("--on-drift", registry.OnDrift)},
	{34, watchingAgent, everyRender, isFalse(registry.TLSReload), fixed("--no-tls-reload")},
	{35, watchingAgent, defaultOnly, hasOwn(registry.History), flagValue("--history", registry.History)},
	{36, watchingAgent, defaultOnly, isTrue(registry.RequireAck), fixed("--require-ack")},
	{37, watchingAgent, defaultOnly, isTrue(registry.Events), fixed("--events")},
	{38, watchingAgent, everyRender, hasOwn(registry.Timeout), flagValue("--timeout", registry.Timeout)},
	{39, watchingAgent, defaultOnly, hasOwn(registry.CanaryConfigMap), refFile("--canary", registry.CanaryConfigMap, auxCanary, defaultCanaryKey)},
	{40, watchingAgent, defaultOnly, revokeGraceApplies, revokeGrace},
	{41, watchingAgent, everyRender, hasMetricsPort, metricsAddr},
}

// agentArgs walks the argument table for one agent of a render.
func agentArgs(v *view, kind agentKinds) []string {
	args := make([]string, 0, 16)
	for i := range argRows {
		r := &argRows[i]
		if r.agents&kind == 0 || (r.scope == defaultOnly && !v.isDefault()) || !r.when(v) {
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

func template(v *view, args []string) []string {
	if s, ok := v.render.Values.Get(registry.Template); ok {
		return append(args, "--template-inline", s)
	}
	_, key := splitRef(v.render.Values.Text(registry.TemplateConfigMap), defaultTemplateKey)
	return append(args, "--template", auxTemplate.mountDir(v.name)+"/"+key)
}

func clientTLS(v *view, args []string) []string {
	dir := auxClientTLS.mountDir(v.name)
	return append(args, "--tls-cert", dir+"/tls.crt", "--tls-key", dir+"/tls.key")
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

func revokeGrace(v *view, args []string) []string {
	s, _ := v.get(registry.RevokeGrace)
	return append(args, "--revoke-grace", s)
}

func metricsAddr(v *view, args []string) []string {
	return append(args, "--metrics-addr", "0.0.0.0:"+strconv.Itoa(int(metricsPort(v))))
}
