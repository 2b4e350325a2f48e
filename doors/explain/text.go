package explain

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/prose"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// This file is explain's text layout (spec 07 §1.5).

// explainTiers spells the tiers in the KNOB table.
var explainTiers = map[deciderv1.Tier]string{
	deciderv1.Tier_TIER_ANNOTATION:    "annotation",
	deciderv1.Tier_TIER_STORE_DEFAULT: "store default",
	deciderv1.Tier_TIER_FLEET_DEFAULT: "fleet default",
	deciderv1.Tier_TIER_BUILT_IN:      "built-in",
	deciderv1.Tier_TIER_POD_SPEC:      "pod spec",
	deciderv1.Tier_TIER_NONE:          "none",
	deciderv1.Tier_TIER_CLASS:         "class",
}

// explainSkipText is a skip reason as inject and explain print it (07 §1.4);
// NOT_TARGETED names the target of the document's kind.
func explainSkipText(reason deciderv1.SkipReason, kind string) string {
	target := envpolicy.TargetWorkloads
	if kind == "Pod" {
		target = envpolicy.TargetPods
	}
	if text, ok := engine.SkipReasonText(reason, target); ok {
		return text
	}
	return strings.ToLower(strings.TrimPrefix(reason.String(), "SKIP_REASON_"))
}

var explainOutcomes = map[deciderv1.Outcome]string{
	deciderv1.Outcome_OUTCOME_SKIP:   "skip",
	deciderv1.Outcome_OUTCOME_INJECT: "inject",
	deciderv1.Outcome_OUTCOME_REFUSE: "refuse",
	deciderv1.Outcome_OUTCOME_ALLOW:  "allow",
}

// explainShortRevision shows a revision as sha256: + its first 12 hex digits + "…".
func explainShortRevision(r string) string {
	const prefix = "sha256:"
	if strings.HasPrefix(r, prefix) && len(r) > len(prefix)+12 {
		return r[:len(prefix)+12] + "…"
	}
	return r
}

// WriteText prints one document's explanation.
func WriteText(w io.Writer, x *Explanation, docFile string) {
	if x.PassedOver != "" {
		fmt.Fprintln(w, x.PassedOver)
		return
	}
	// a workload whose pods /mutate never sees claims no plan (issue 40)
	unseen := x.TemplateReach != nil && !x.TemplateReach.Reached
	primary := x.Mutate.GetDecision()
	if primary == nil {
		primary = x.Validate.GetDecision()
	}
	name := x.Facts.GetName()
	if name == "" && x.Facts.GetGenerateName() != "" {
		name = x.Facts.GetGenerateName() + "…"
	}
	outcome := explainOutcomes[primary.GetOutcome()]
	if x.Refused() {
		outcome = "refuse"
	} else if primary.GetOutcome() == deciderv1.Outcome_OUTCOME_SKIP {
		outcome += " (" + explainSkipText(primary.GetSkipReason(), x.Kind) + ")"
	} else if unseen && primary.GetOutcome() == deciderv1.Outcome_OUTCOME_INJECT {
		outcome = "none (/mutate never sees the pods it creates)"
	}
	fmt.Fprintf(w, "%s %s/%s   outcome: %s   revision: %s%s",
		strings.ToLower(x.Kind), x.Namespace, name, outcome, explainShortRevision(primary.GetInstallationRevision()), explainWho(primary))
	if cr := x.Mutate.GetDecision().GetClassesRevision(); cr != "" {
		fmt.Fprintf(w, "   classes: %s", explainShortRevision(cr))
	}
	fmt.Fprintln(w)
	if x.Reach != nil {
		fmt.Fprintln(w, x.Reach.Text())
	}
	if x.Injected != nil {
		writeInjected(w, x.Injected)
	}
	template := strings.ReplaceAll(strings.TrimPrefix(x.Template, "/"), "/", ".")
	switch {
	case unseen:
		fmt.Fprintf(w, "pod template %s: webhook /mutate: never called for the pods the %s creates: %s (the renders and gates below are what it would answer; no pod gets a plan)\n",
			template, x.Kind, strings.Join(x.TemplateReach.Blocked, "; "))
	case x.Template != "":
		fmt.Fprintf(w, "pod template %s: the renders, gates and plan below are /mutate's on every pod the %s creates; the env policy is /validate's on the %s\n",
			template, x.Kind, x.Kind)
	}

	if d := x.Mutate.GetDecision(); d != nil {
		for _, r := range d.GetRenders() {
			explainWriteRender(w, r, docFile, x.All, nativeBy(d.GetPlan(), x.Facts.GetRestartPolicy()))
		}
		explainWriteGates(w, d.GetGates(), x.Namespace)
	}
	explainWriteEnvPolicy(w, x)
	switch d := x.Mutate.GetDecision(); {
	case unseen:
		fmt.Fprintf(w, "plan: none: /mutate never sees the pods the %s creates\n", x.Kind)
	case d != nil:
		explainWritePlan(w, d.GetPlan())
	}

	var warnings []*deciderv1.Warning
	warnings = append(warnings, x.Mutate.GetDecision().GetWarnings()...)
	warnings = append(warnings, x.Validate.GetDecision().GetWarnings()...)
	if len(warnings) == 0 {
		fmt.Fprintln(w, "warnings: none")
	} else {
		fmt.Fprintln(w, "warnings:")
		for _, warning := range warnings {
			fmt.Fprintf(w, "  %s\n", redact.URL(warning.GetMessage()))
		}
	}

	for _, d := range []*deciderv1.Decision{x.Mutate.GetDecision(), x.Validate.GetDecision()} {
		if d.GetOutcome() == deciderv1.Outcome_OUTCOME_REFUSE && len(d.GetRefusals()) > 0 {
			r := d.GetRefusals()[0]
			fmt.Fprintf(w, "refused (%s %d) at %s: %s\n", r.GetReasonSlug(), r.GetHttpCode(), r.GetCheck(), redact.URL(r.GetMessage()))
		}
	}
	if x.Denial != nil {
		fmt.Fprintf(w, "refused (%s %d) by the front door: %s\n", x.Denial.Reason, x.Denial.Code, redact.URL(x.Denial.Message))
	}
}

// nativeBy is why the plan places watching agents as native sidecars when
// the native-sidecar knob says "false" (a pod that must finish, issue 20),
// "" when it does not: the KNOB table shows what the plan does (issue 40).
func nativeBy(p *deciderv1.MutationPlan, restartPolicy string) string {
	for _, a := range p.GetAgents() {
		if a.GetContainer().GetRestartPolicy() == "Always" {
			if restartPolicy == "" {
				return "the plan"
			}
			return "restartPolicy " + restartPolicy
		}
	}
	return ""
}

// explainWriteRender prints one render's header and its KNOB table: the
// knobs with a value, and the unset ones too with all (--all). native is
// nativeBy's answer: a native-sidecar "false" the plan overrides is shown as
// what the plan does.
func explainWriteRender(w io.Writer, r *deciderv1.Render, docFile string, all bool, native string) {
	title := "render (default)"
	if r.GetName() != "" {
		title = "render " + strconv.Quote(r.GetName())
	}
	source := r.GetSource()
	if source == "" {
		source = "—"
	} else {
		source = explainCell(source)
	}
	agents := "none"
	if len(r.GetAgentContainers()) > 0 {
		agents = strings.Join(r.GetAgentContainers(), ", ")
	}
	fmt.Fprintf(w, "%s  source %s   agents: %s", title, source, agents)
	if !r.GetValidated() {
		fmt.Fprint(w, "   (not validated: the values are the raw tier lookups)")
	}
	fmt.Fprintln(w)

	rows := make([][5]string, 0, len(r.GetValues())+1)
	rows = append(rows, [5]string{"KNOB", "VALUE", "TIER", "PIN", "FROM"})
	hidden := 0
	for _, v := range r.GetValues() {
		if !v.GetSet() && !all {
			hidden++
			continue
		}
		value := "—"
		if v.GetSet() {
			value = explainCell(v.GetValue())
		}
		pin := ""
		if v.GetPinned() {
			pin = "pin"
		}
		row := [5]string{v.GetKnob(), value, explainTiers[v.GetTier()], pin, explainOrigin(v, docFile)}
		if v.GetKnob() == "native-sidecar" && v.GetValue() == "false" && native != "" {
			row = [5]string{v.GetKnob(), "true", explainTiers[deciderv1.Tier_TIER_POD_SPEC], pin,
				native + ` (resolved "false" from ` + row[2] + "; the plan places watching agents as native sidecars)"}
		}
		rows = append(rows, row)
	}
	// column widths: at least the sample's, wider when a cell needs it
	widths := [4]int{20, 24, 16, 5}
	for _, row := range rows {
		for c := range widths {
			if n := utf8.RuneCountInString(row[c]) + 2; n > widths[c] {
				widths[c] = n
			}
		}
	}
	for _, row := range rows {
		var b strings.Builder
		b.WriteString("  ")
		for c, cell := range row {
			b.WriteString(cell)
			if c < len(widths) {
				b.WriteString(strings.Repeat(" ", widths[c]-utf8.RuneCountInString(cell)))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	switch hidden {
	case 0:
	case 1:
		fmt.Fprintln(w, "  (1 unset knob hidden; --all shows it)")
	default:
		fmt.Fprintf(w, "  (%d unset knobs hidden; --all shows them)\n", hidden)
	}
}

// explainCell redacts URL userinfo and quotes a value that would not read
// as one table cell (empty, or holding spaces or control characters).
func explainCell(s string) string {
	s = redact.URL(s)
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return strconv.Quote(s)
	}
	return s
}

// explainOrigin is the FROM cell: the annotation key, the installation
// document path or variable, or the note.
func explainOrigin(v *deciderv1.ResolvedValue, docFile string) string {
	var from string
	switch v.GetTier() {
	case deciderv1.Tier_TIER_ANNOTATION:
		from = v.GetAnnotationKey()
	case deciderv1.Tier_TIER_CLASS:
		from = explainClass(v.GetClass())
	case deciderv1.Tier_TIER_STORE_DEFAULT, deciderv1.Tier_TIER_FLEET_DEFAULT:
		switch {
		case v.GetDocumentPath() != "":
			from = docFile + ": " + v.GetDocumentPath()
		case v.GetVariable() != "":
			from = v.GetVariable()
			if v.GetStore() != "" {
				from += " (" + v.GetStore() + ")"
			}
		}
	}
	note := redact.URL(v.GetNote())
	switch {
	case note == "":
		return from
	case from == "":
		return note
	}
	return from + " (" + note + ")"
}

// explainClass is the FROM cell of a class-filled value (spec 08 §3 step 7):
// "class billing/team-vault", "cluster class infra-consul".
func explainClass(ref string) string {
	kind, name, _ := strings.Cut(ref, " ")
	if kind == classes.KindCluster {
		return "cluster class " + name
	}
	return "class " + name
}

// explainWriteGates prints the gates consulted, in evaluation order.
func explainWriteGates(w io.Writer, gates []*deciderv1.GateRuling, namespace string) {
	if len(gates) == 0 {
		fmt.Fprintln(w, "gates: none consulted")
		return
	}
	if ns := gates[0].GetNamespace(); ns != "" {
		namespace = ns
	}
	parts := make([]string, 0, len(gates))
	for _, g := range gates {
		var b strings.Builder
		b.WriteString(g.GetGate())
		if g.GetGate() == "agentEnvAllow" {
			b.WriteString(" " + g.GetSubject())
		} else if g.GetRender() != "" {
			b.WriteString(" (render " + strconv.Quote(g.GetRender()) + ")")
		}
		if g.GetPassed() {
			b.WriteString(" passed")
		} else {
			b.WriteString(" refused")
		}
		if len(g.GetListing()) > 0 {
			word := "allowed"
			if g.GetGate() == "sourceDeny" {
				word = "denied"
			}
			b.WriteString(" (" + word + " here: " + strings.Join(g.GetListing(), ", ") + ")")
		}
		parts = append(parts, b.String())
	}
	fmt.Fprintf(w, "gates (namespace %s): %s\n", strconv.Quote(namespace), strings.Join(parts, "; "))
}

// explainWriteEnvPolicy prints the validating path's rule results.
func explainWriteEnvPolicy(w io.Writer, x *Explanation) {
	d := x.Validate.GetDecision()
	switch {
	case d == nil && x.Policy == nil:
		fmt.Fprintln(w, "env policy: none")
		return
	case d == nil && !x.Policy.Includes(envpolicy.TargetPods):
		fmt.Fprintln(w, "env policy: "+explainSkipText(deciderv1.SkipReason_SKIP_REASON_NOT_TARGETED, "Pod"))
		return
	case d == nil:
		fmt.Fprintln(w, "env policy: not evaluated (the pod was refused)")
		return
	case d.GetOutcome() == deciderv1.Outcome_OUTCOME_SKIP:
		fmt.Fprintln(w, "env policy: "+explainSkipText(d.GetSkipReason(), x.Kind))
		return
	}
	object := strings.ToLower(x.Kind)
	parts := make([]string, 0, len(d.GetEnvPolicyResults()))
	for _, r := range d.GetEnvPolicyResults() {
		var status string
		switch {
		case !r.GetEvaluated():
			status = "not evaluated (an earlier enforce rule refused)"
		case !r.GetApplies():
			status = "does not apply here"
		case r.GetFailed():
			status = "rejects this " + object
			var names []string
			if len(r.GetMatchedNames()) > 0 {
				names = append(names, "matched: "+strings.Join(r.GetMatchedNames(), ", "))
			}
			if len(r.GetMissingNames()) > 0 {
				names = append(names, "missing: "+strings.Join(r.GetMissingNames(), ", "))
			}
			if len(names) > 0 {
				status += " (" + strings.Join(names, "; ") + ")"
			}
		default:
			status = "passes"
		}
		parts = append(parts, fmt.Sprintf("rule %d (%s, %s) %s", r.GetIndex(), r.GetReject(), r.GetMode(), status))
	}
	if len(parts) == 0 {
		parts = append(parts, "no rules")
	}
	fmt.Fprintln(w, "env policy: "+strings.Join(parts, "; "))
}

var explainLists = map[deciderv1.ContainerList]string{
	deciderv1.ContainerList_CONTAINER_LIST_CONTAINERS:      "containers",
	deciderv1.ContainerList_CONTAINER_LIST_INIT_CONTAINERS: "initContainers",
}

// explainWritePlan summarises the mutation plan on one line.
func explainWritePlan(w io.Writer, p *deciderv1.MutationPlan) {
	if p == nil {
		fmt.Fprintln(w, "plan: none")
		return
	}
	var parts []string
	n := len(p.GetVolumes())
	if n == 1 {
		parts = append(parts, "1 volume")
	} else {
		parts = append(parts, fmt.Sprintf("%d volumes", n))
	}
	if len(p.GetAppMounts()) > 0 {
		names := make([]string, 0, len(p.GetAppMounts()))
		for _, m := range p.GetAppMounts() {
			names = append(names, m.GetContainerName())
		}
		parts = append(parts, "mount into "+prose.Join(names, "and"))
	}
	if s := p.GetImagePullSecret(); s != "" {
		parts = append(parts, "pull secret "+s)
	}
	if rw := p.GetCommandRewrite(); rw != nil {
		s := "env-inject into " + rw.GetContainerName()
		if rw.GetLivenessProbe() != nil {
			s += " with a restart probe"
		}
		parts = append(parts, s)
	}
	for _, a := range p.GetAgents() {
		s := a.GetContainer().GetName() + " → " + explainLists[a.GetList()]
		if a.GetPosition() == deciderv1.Position_POSITION_FIRST {
			s += " (first)"
		}
		if a.GetContainer().GetRestartPolicy() == "Always" {
			s += " (native sidecar)"
		}
		parts = append(parts, s)
	}
	fmt.Fprintln(w, "plan: "+strings.Join(parts, ", "))
}

// explainWho is the header's cluster and caller, each only when the
// decision carries it (docs/multi-cluster.md).
func explainWho(d *deciderv1.Decision) string {
	var out string
	if c := d.GetCluster(); c != "" {
		out += "   cluster: " + c
	}
	if c := d.GetCaller(); c != "" {
		out += "   caller: " + c
	}
	// spec 09 §3: a follower's decision names the follower that made it
	if a := d.GetAuditAnnotations(); a["decider-role"] != "" {
		out += "   decider: " + a["decider-role"] + " " + a["follower-id"]
	}
	return out
}
