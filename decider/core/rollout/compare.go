package rollout

import (
	"maps"
	"slices"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// Result is the comparison of the candidate's decision with the active's
// (spec 10 §3).
type Result int

// Results, in the order of spec 10 §3.
const (
	Same Result = iota
	Changed
	NewlyRefused
	NoLongerRefused
	NewlyInjected
	NoLongerInjected
)

// Results lists every result, in order.
var Results = []Result{Same, Changed, NewlyRefused, NoLongerRefused, NewlyInjected, NoLongerInjected}

var resultNames = [...]string{
	Same: "same", Changed: "changed", NewlyRefused: "newly-refused",
	NoLongerRefused: "no-longer-refused", NewlyInjected: "newly-injected", NoLongerInjected: "no-longer-injected",
}

// String is the result's name in spec 10 §3: same, changed, newly-refused, …
func (r Result) String() string {
	if r < 0 || int(r) >= len(resultNames) {
		return ""
	}
	return resultNames[r]
}

// Differs reports whether the result is anything but same.
func (r Result) Differs() bool { return r != Same }

// Comparison is what differs between two decisions: the result and the
// paths of what differs, named as a pod spec names them —
// containers[dynamic-config-agent].args[--watch],
// containers[app].volumeMounts[dynamic-config], volumes[dynamic-config],
// refusals[source.deny], warnings[<code>] — never a value. Paths is nil when
// the result is same.
type Comparison struct {
	Result Result
	Paths  []string
}

// Compare compares the candidate's decision with the active's (spec 10 §3)
// on what the answer carries: the outcome (inject, skip or allow, refuse),
// the refusals (class, reason, check, key and render; not the message,
// which quotes values), the plan — containers, arguments, environment,
// volumes, mounts, the status mark, the pull secret, the command rewrite:
// what the patch would write — and the warnings. The installation revision,
// the audit annotations that name it and the revision stamp the plan writes
// (spec 10 §8) are not compared: they differ whenever the revisions do. Two
// equal decisions allocate nothing.
func Compare(active, candidate *decision.Decision) Comparison {
	a, c := class(active.Outcome), class(candidate.Outcome)
	var d differ
	switch {
	case a == refuses && c != refuses:
		d.refusals(active.Refusals, nil)
		return d.result(NoLongerRefused)
	case a != refuses && c == refuses:
		d.refusals(nil, candidate.Refusals)
		return d.result(NewlyRefused)
	case a == injects && c != injects:
		d.plan(active.Plan, nil)
		return d.result(NoLongerInjected)
	case a != injects && c == injects:
		d.plan(nil, candidate.Plan)
		return d.result(NewlyInjected)
	}
	if active.Outcome != candidate.Outcome {
		d.add("outcome") // skip against allow: the validating path's answers
	} else if active.SkipReason != candidate.SkipReason {
		d.add("skipReason")
	}
	d.refusals(active.Refusals, candidate.Refusals)
	d.plan(active.Plan, candidate.Plan)
	d.warnings(active.Warnings, candidate.Warnings)
	if len(d.paths) == 0 {
		return Comparison{Result: Same}
	}
	return d.result(Changed)
}

type outcomeClass int

const (
	passes outcomeClass = iota // skip or allow
	injects
	refuses
)

func class(o decision.Outcome) outcomeClass {
	switch o {
	case decision.OutcomeInject:
		return injects
	case decision.OutcomeRefuse:
		return refuses
	}
	return passes
}

// differ collects the differing paths.
type differ struct{ paths []string }

func (d *differ) add(path string) { d.paths = append(d.paths, path) }

func (d *differ) result(r Result) Comparison {
	return Comparison{Result: r, Paths: d.paths}
}

// refusals compares refusals by their check id.
func (d *differ) refusals(a, c []decision.Refusal) {
	if slices.EqualFunc(a, c, sameRefusal) {
		return
	}
	byCheck := func(list []decision.Refusal, check string) *decision.Refusal {
		for i := range list {
			if list[i].Check == check {
				return &list[i]
			}
		}
		return nil
	}
	for i := range a {
		at := "refusals[" + a[i].Check + "]"
		o := byCheck(c, a[i].Check)
		switch {
		case o == nil:
			d.add(at)
		case o.Reason != a[i].Reason:
			d.add(at + ".class")
		case o.Slug != a[i].Slug || o.HTTPCode != a[i].HTTPCode:
			d.add(at + ".reason")
		case o.Key != a[i].Key || o.Render != a[i].Render:
			d.add(at + ".key")
		}
	}
	for i := range c {
		if byCheck(a, c[i].Check) == nil {
			d.add("refusals[" + c[i].Check + "]")
		}
	}
}

func sameRefusal(a, c decision.Refusal) bool {
	return a.Reason == c.Reason && a.Slug == c.Slug && a.HTTPCode == c.HTTPCode &&
		a.Check == c.Check && a.Key == c.Key && a.Render == c.Render
}

// warnings compares warnings by code (the message is compared, never
// named: it may quote a value).
func (d *differ) warnings(a, c []decision.Warning) {
	if slices.Equal(a, c) {
		return
	}
	codes := map[string]bool{}
	for _, w := range a {
		codes[w.Code] = true
	}
	for _, w := range c {
		codes[w.Code] = true
	}
	pick := func(list []decision.Warning, code string) []decision.Warning {
		var out []decision.Warning
		for _, w := range list {
			if w.Code == code {
				out = append(out, w)
			}
		}
		return out
	}
	for _, code := range slices.Sorted(maps.Keys(codes)) {
		if !slices.Equal(pick(a, code), pick(c, code)) {
			d.add("warnings[" + code + "]")
		}
	}
}

// plan compares two plans (nil: the decision writes nothing).
func (d *differ) plan(a, c *decision.Plan) {
	if a == nil {
		a = &decision.Plan{}
	}
	if c == nil {
		c = &decision.Plan{}
	}
	if a.StatusAnnotation != c.StatusAnnotation {
		key := a.StatusAnnotation.Key
		if key == "" {
			key = c.StatusAnnotation.Key
		}
		d.add("metadata.annotations[" + key + "]")
	}
	d.agents(a.Agents, c.Agents)
	d.appMounts(a.AppMounts, c.AppMounts)
	d.commandRewrite(a.CommandRewrite, c.CommandRewrite)
	d.volumes(a.Volumes, c.Volumes)
	if a.ImagePullSecret != c.ImagePullSecret {
		d.add("imagePullSecrets")
	}
}

// listName is the pod spec's name of an agent's container list.
func listName(l decision.ContainerList) string {
	if l == decision.ListInitContainers {
		return "initContainers"
	}
	return "containers"
}

func (d *differ) agents(a, c []decision.AgentPlacement) {
	if slices.EqualFunc(a, c, samePlacement) {
		return
	}
	find := func(list []decision.AgentPlacement, p *decision.AgentPlacement) *decision.AgentPlacement {
		for i := range list {
			if list[i].Container.Name == p.Container.Name && list[i].List == p.List {
				return &list[i]
			}
		}
		return nil
	}
	for i := range a {
		at := listName(a[i].List) + "[" + a[i].Container.Name + "]"
		o := find(c, &a[i])
		if o == nil {
			d.add(at)
			continue
		}
		if o.Position != a[i].Position {
			d.add(at + ".position")
		}
		d.container(at, &a[i].Container, &o.Container)
	}
	for i := range c {
		if find(a, &c[i]) == nil {
			d.add(listName(c[i].List) + "[" + c[i].Container.Name + "]")
		}
	}
}

func samePlacement(a, c decision.AgentPlacement) bool {
	return a.List == c.List && a.Position == c.Position && sameContainer(&a.Container, &c.Container)
}

func sameContainer(a, c *decision.AgentContainer) bool {
	return a.Name == c.Name && a.Image == c.Image && a.RestartPolicy == c.RestartPolicy && a.Render == c.Render &&
		slices.Equal(a.Args, c.Args) &&
		slices.EqualFunc(a.Env, c.Env, sameEnv) &&
		slices.Equal(a.VolumeMounts, c.VolumeMounts) &&
		maps.Equal(a.Requests, c.Requests) && maps.Equal(a.Limits, c.Limits) &&
		sameSecurityContext(&a.SecurityContext, &c.SecurityContext) &&
		slices.Equal(a.Ports, c.Ports) &&
		sameProbe(a.ReadinessProbe, c.ReadinessProbe) &&
		sameProbe(a.StartupProbe, c.StartupProbe)
}

// container names what differs inside one agent container found in both.
func (d *differ) container(at string, a, c *decision.AgentContainer) {
	if sameContainer(a, c) {
		return
	}
	if a.Image != c.Image {
		d.add(at + ".image")
	}
	d.args(at, a.Args, c.Args)
	d.env(at, a.Env, c.Env)
	d.mounts(at, a.VolumeMounts, c.VolumeMounts)
	d.resources(at+".resources.requests", a.Requests, c.Requests)
	d.resources(at+".resources.limits", a.Limits, c.Limits)
	if !sameSecurityContext(&a.SecurityContext, &c.SecurityContext) {
		d.add(at + ".securityContext")
	}
	if !slices.Equal(a.Ports, c.Ports) {
		d.add(at + ".ports")
	}
	if !sameProbe(a.ReadinessProbe, c.ReadinessProbe) {
		d.add(at + ".readinessProbe")
	}
	if !sameProbe(a.StartupProbe, c.StartupProbe) {
		d.add(at + ".startupProbe")
	}
	if a.RestartPolicy != c.RestartPolicy {
		d.add(at + ".restartPolicy")
	}
}

// argGroup is one flag of an agent's arguments and the tokens after it.
type argGroup struct {
	flag   string
	tokens []string
}

// argGroups parts arguments at each token that starts with "--" (a
// "--flag=value" token is the flag --flag); tokens before the first flag
// are the group of flag "".
func argGroups(args []string) []argGroup {
	var out []argGroup
	for _, t := range args {
		if strings.HasPrefix(t, "--") {
			flag, _, _ := strings.Cut(t, "=")
			out = append(out, argGroup{flag: flag, tokens: []string{t}})
			continue
		}
		if len(out) == 0 {
			out = append(out, argGroup{})
		}
		out[len(out)-1].tokens = append(out[len(out)-1].tokens, t)
	}
	return out
}

// args names each flag whose tokens differ (args[--watch]), and args alone
// when only the order differs.
func (d *differ) args(at string, a, c []string) {
	if slices.Equal(a, c) {
		return
	}
	ga, gc := argGroups(a), argGroups(c)
	of := func(groups []argGroup, flag string) [][]string {
		var out [][]string
		for _, g := range groups {
			if g.flag == flag {
				out = append(out, g.tokens)
			}
		}
		return out
	}
	var flags []string
	for _, g := range append(ga, gc...) {
		if !slices.Contains(flags, g.flag) {
			flags = append(flags, g.flag)
		}
	}
	named := false
	for _, f := range flags {
		if !slices.EqualFunc(of(ga, f), of(gc, f), slices.Equal) {
			named = true
			if f == "" {
				d.add(at + ".args")
			} else {
				d.add(at + ".args[" + f + "]")
			}
		}
	}
	if !named {
		d.add(at + ".args") // the same flags, in another order
	}
}

func sameEnv(a, c decision.AgentEnvVar) bool {
	if a.Name != c.Name {
		return false
	}
	switch {
	case (a.Value == nil) != (c.Value == nil), a.Value != nil && *a.Value != *c.Value:
		return false
	case (a.SecretKeyRef == nil) != (c.SecretKeyRef == nil), a.SecretKeyRef != nil && *a.SecretKeyRef != *c.SecretKeyRef:
		return false
	case (a.FieldRef == nil) != (c.FieldRef == nil), a.FieldRef != nil && *a.FieldRef != *c.FieldRef:
		return false
	}
	return true
}

func (d *differ) env(at string, a, c []decision.AgentEnvVar) {
	byName(d, at+".env", a, c, func(v *decision.AgentEnvVar) string { return v.Name }, sameEnv)
}

func (d *differ) mounts(at string, a, c []decision.VolumeMount) {
	byName(d, at+".volumeMounts", a, c, func(m *decision.VolumeMount) string { return m.Name },
		func(x, y decision.VolumeMount) bool { return x == y })
}

// byName compares two lists of named elements: each name present in one
// list only, or whose elements differ, is at[name]; at alone when the same
// elements stand in another order.
func byName[T any](d *differ, at string, a, c []T, name func(*T) string, same func(T, T) bool) {
	if slices.EqualFunc(a, c, same) {
		return
	}
	find := func(list []T, n string) *T {
		for i := range list {
			if name(&list[i]) == n {
				return &list[i]
			}
		}
		return nil
	}
	named := false
	for i := range a {
		if o := find(c, name(&a[i])); o == nil || !same(a[i], *o) {
			d.add(at + "[" + name(&a[i]) + "]")
			named = true
		}
	}
	for i := range c {
		if find(a, name(&c[i])) == nil {
			d.add(at + "[" + name(&c[i]) + "]")
			named = true
		}
	}
	if !named {
		d.add(at)
	}
}

func (d *differ) resources(at string, a, c map[string]string) {
	if maps.Equal(a, c) {
		return
	}
	names := map[string]bool{}
	for k := range a {
		names[k] = true
	}
	for k := range c {
		names[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(names)) {
		va, oka := a[k]
		vc, okc := c[k]
		if oka != okc || va != vc {
			d.add(at + "." + k)
		}
	}
}

func sameSecurityContext(a, c *decision.SecurityContext) bool {
	return a.RunAsNonRoot == c.RunAsNonRoot && a.RunAsUser == c.RunAsUser && a.RunAsGroup == c.RunAsGroup &&
		a.AllowPrivilegeEscalation == c.AllowPrivilegeEscalation && slices.Equal(a.CapabilitiesDrop, c.CapabilitiesDrop) &&
		a.ReadOnlyRootFilesystem == c.ReadOnlyRootFilesystem && a.SeccompProfileType == c.SeccompProfileType
}

func sameProbe(a, c *decision.Probe) bool {
	if a == nil || c == nil {
		return a == c
	}
	if a.PeriodSeconds != c.PeriodSeconds || a.FailureThreshold != c.FailureThreshold {
		return false
	}
	switch {
	case (a.HTTPGet == nil) != (c.HTTPGet == nil), a.HTTPGet != nil && *a.HTTPGet != *c.HTTPGet:
		return false
	case (a.Exec == nil) != (c.Exec == nil), a.Exec != nil && !slices.Equal(a.Exec.Command, c.Exec.Command):
		return false
	}
	return true
}

// appMounts compares the shared volume's mounts into the app containers,
// by container and volume.
func (d *differ) appMounts(a, c []decision.AppMount) {
	if slices.Equal(a, c) {
		return
	}
	find := func(list []decision.AppMount, m *decision.AppMount) *decision.AppMount {
		for i := range list {
			if list[i].ContainerName == m.ContainerName && list[i].Mount.Name == m.Mount.Name {
				return &list[i]
			}
		}
		return nil
	}
	at := func(m *decision.AppMount) string {
		return "containers[" + m.ContainerName + "].volumeMounts[" + m.Mount.Name + "]"
	}
	for i := range a {
		if o := find(c, &a[i]); o == nil || *o != a[i] {
			d.add(at(&a[i]))
		}
	}
	for i := range c {
		if find(a, &c[i]) == nil {
			d.add(at(&c[i]))
		}
	}
}

// commandRewrite compares the env-inject rewrite of an app container.
func (d *differ) commandRewrite(a, c *decision.CommandRewrite) {
	if a == nil && c == nil {
		return
	}
	if a == nil || c == nil || a.ContainerName != c.ContainerName || a.ContainerIndex != c.ContainerIndex {
		for _, r := range []*decision.CommandRewrite{a, c} {
			if r != nil {
				d.add("containers[" + r.ContainerName + "].command")
			}
		}
		return
	}
	at := "containers[" + a.ContainerName + "]"
	if !slices.Equal(a.Command, c.Command) {
		d.add(at + ".command")
	}
	if a.RemoveArgs != c.RemoveArgs {
		d.add(at + ".args")
	}
	if !sameProbe(a.LivenessProbe, c.LivenessProbe) {
		d.add(at + ".livenessProbe")
	}
}

func sameVolume(a, c decision.Volume) bool {
	if a.Name != c.Name {
		return false
	}
	switch {
	case (a.EmptyDir == nil) != (c.EmptyDir == nil), a.EmptyDir != nil && *a.EmptyDir != *c.EmptyDir:
		return false
	case (a.ConfigMap == nil) != (c.ConfigMap == nil), a.ConfigMap != nil && *a.ConfigMap != *c.ConfigMap:
		return false
	case (a.Secret == nil) != (c.Secret == nil), a.Secret != nil && *a.Secret != *c.Secret:
		return false
	}
	return true
}

func (d *differ) volumes(a, c []decision.Volume) {
	byName(d, "volumes", a, c, func(v *decision.Volume) string { return v.Name }, sameVolume)
}
