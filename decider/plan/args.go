package plan

import "strconv"

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
	{1, bothAgents, everyRender, always, flagValue("--source", "source")},
	{2, bothAgents, everyRender, hasOwn("endpoint"), flagValue("--endpoint", "endpoint")},
	{3, bothAgents, everyRender, always, flagValue("--key", "key")},
	{4, bothAgents, everyRender, always, flagValue("--out", "path")},
	{5, bothAgents, everyRender, hasOwn("section"), flagValue("--section", "section")},
	{6, bothAgents, everyRender, hasOwn("auth"), flagValue("--auth", "auth")},
	{7, bothAgents, everyRender, hasOwn("auth-mount"), flagValue("--auth-mount", "auth-mount")},
	{8, bothAgents, everyRender, hasOwn("auth-role"), flagValue("--auth-role", "auth-role")},
	{9, bothAgents, everyRender, hasOwn("auth-username"), flagValue("--auth-username", "auth-username")},
	{10, bothAgents, everyRender, hasOwn("auth-token-path"), flagValue("--auth-token-path", "auth-token-path")},
	{11, bothAgents, everyRender, hasOwn("namespace"), flagValue("--namespace", "namespace")},
	{12, bothAgents, everyRender, hasOwn("ref"), flagValue("--ref", "ref")},
	{13, bothAgents, everyRender, hasOwn("api-url"), flagValue("--api-url", "api-url")},
	{14, bothAgents, defaultOnly, hasOwn("startup-policy"), flagValue("--startup-policy", "startup-policy")},
	{15, bothAgents, defaultOnly, hasOwn("on-delete"), flagValue("--on-delete", "on-delete")},
	{16, bothAgents, defaultOnly, hasOwn("max-document-bytes"), flagNumber("--max-document-bytes", "max-document-bytes")},
	{17, bothAgents, defaultOnly, hasOwn("max-staleness"), flagValue("--max-staleness", "max-staleness")},
	{18, bothAgents, everyRender, sshKeyWithoutAuth, fixed("--auth", "ssh-key")},
	{19, bothAgents, everyRender, hasOwn("ssh-secret"), refFile("--ssh-key", "ssh-secret", auxSSH, defaultSSHKey)},
	{20, bothAgents, everyRender, hasOwn("ca-configmap"), refFile("--ca", "ca-configmap", auxCA, defaultCAKey)},
	{21, bothAgents, everyRender, hasOwn("tls-server-name"), flagValue("--tls-server-name", "tls-server-name")},
	{22, bothAgents, everyRender, isTrue("tls-skip-verify"), fixed("--tls-skip-verify")},
	{23, bothAgents, everyRender, hasOwn("file-mode"), fileMode},
	{24, bothAgents, everyRender, hasTemplate, template},
	{25, bothAgents, defaultOnly, hasOwn("schema-configmap"), refFile("--schema", "schema-configmap", auxSchema, defaultSchemaKey)},
	{26, bothAgents, everyRender, hasOwn("tls-secret"), clientTLS},
	{27, watchingAgent, everyRender, always, flagNumber("--watch", "watch-seconds")},
	{28, bothAgents, defaultOnly, isTrue("dynamic"), fixed("--dynamic")},
	{29, bothAgents, defaultOnly, hasAlso, also},
	{30, watchingAgent, defaultOnly, isTrue("meta"), fixed("--meta")},
	{31, watchingAgent, defaultOnly, dynamicWithoutRevoke, fixed("--no-revoke-on-shutdown")},
	{32, watchingAgent, defaultOnly, hasOwn("notify-http"), flagValue("--notify-http", "notify-http")},
	{33, watchingAgent, defaultOnly, hasOwn("on-drift"), flagValue("--on-drift", "on-drift")},
	{34, watchingAgent, everyRender, isFalse("tls-reload"), fixed("--no-tls-reload")},
	{35, watchingAgent, defaultOnly, hasOwn("history"), flagNumber("--history", "history")},
	{36, watchingAgent, defaultOnly, isTrue("require-ack"), fixed("--require-ack")},
	{37, watchingAgent, defaultOnly, isTrue("events"), fixed("--events")},
	{38, watchingAgent, everyRender, hasOwn("timeout"), flagNumber("--timeout", "timeout")},
	{39, watchingAgent, defaultOnly, hasOwn("canary-configmap"), refFile("--canary", "canary-configmap", auxCanary, defaultCanaryKey)},
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
func hasOwn(knob string) func(*view) bool {
	return func(v *view) bool {
		_, ok := v.render.Values[knob]
		return ok
	}
}

func isTrue(knob string) func(*view) bool {
	return func(v *view) bool { return v.is(knob) }
}

func isFalse(knob string) func(*view) bool {
	return func(v *view) bool {
		s, _ := v.get(knob)
		return s == "false"
	}
}

func sshKeyWithoutAuth(v *view) bool {
	_, ssh := v.render.Values["ssh-secret"]
	_, auth := v.render.Values["auth"]
	return ssh && !auth
}

func hasTemplate(v *view) bool {
	_, inline := v.render.Values["template"]
	_, configMap := v.render.Values["template-configmap"]
	return inline || configMap
}

func hasAlso(v *view) bool { return len(v.in.Also) > 0 }

func dynamicWithoutRevoke(v *view) bool {
	s, _ := v.get("revoke-on-shutdown")
	return v.is("dynamic") && s == "false"
}

func revokeGraceApplies(v *view) bool {
	_, grace := v.render.Values["revoke-grace"]
	return grace && v.is("dynamic") && v.is("revoke-on-shutdown")
}

func hasMetricsPort(v *view) bool { return metricsPort(v) != 0 }

// Token functions.

func fixed(tokens ...string) func(*view, []string) []string {
	return func(_ *view, args []string) []string { return append(args, tokens...) }
}

func flagValue(flag, knob string) func(*view, []string) []string {
	return func(v *view, args []string) []string {
		s, _ := v.get(knob)
		return append(args, flag, s)
	}
}

func flagNumber(flag, knob string) func(*view, []string) []string {
	return func(v *view, args []string) []string {
		s, _ := v.get(knob)
		return append(args, flag, decimal(s))
	}
}

// refFile passes the file of a mounted reference: <mount dir>/<key>.
func refFile(flag, knob string, aux auxiliary, defaultKey string) func(*view, []string) []string {
	return func(v *view, args []string) []string {
		s, _ := v.get(knob)
		_, key := splitRef(s, defaultKey)
		return append(args, flag, aux.mountDir(v.name)+"/"+key)
	}
}

func fileMode(v *view, args []string) []string {
	s, _ := v.get("file-mode")
	_, normalised, _ := octalMode(s)
	return append(args, "--file-mode", normalised)
}

func template(v *view, args []string) []string {
	if s, ok := v.render.Values["template"]; ok {
		return append(args, "--template-inline", s)
	}
	_, key := splitRef(v.render.Values["template-configmap"], defaultTemplateKey)
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
	s, _ := v.get("revoke-grace")
	return append(args, "--revoke-grace", seconds(s))
}

func metricsAddr(v *view, args []string) []string {
	return append(args, "--metrics-addr", "0.0.0.0:"+strconv.Itoa(int(metricsPort(v))))
}
