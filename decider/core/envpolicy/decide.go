package envpolicy

import (
	"strconv"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// The refusal of an enforce rule (spec 04 §2, 05 §5).
const (
	RefusalSlug     = "DynamicConfigEnvPolicy"
	RefusalHTTPCode = 403
	RefusalCheck    = "env-policy.rule"
)

// Warning codes and audit annotation keys of the validating path (06 §3.5).
const (
	WarningCodeRule                = "env-policy-warn"
	WarningCodeWorkloadAnnotations = "workload-annotations"
)

// kindInfo is what the policy needs to know about an admitted kind.
type kindInfo struct {
	name   string // {Kind} of the messages
	target string // pods or workloads
}

// kinds is indexed by decision.ResourceKind (spec 05 §1).
var kinds = [...]kindInfo{
	decision.KindPod:                   {"Pod", TargetPods},
	decision.KindDeployment:            {"Deployment", TargetWorkloads},
	decision.KindStatefulSet:           {"StatefulSet", TargetWorkloads},
	decision.KindDaemonSet:             {"DaemonSet", TargetWorkloads},
	decision.KindReplicaSet:            {"ReplicaSet", TargetWorkloads},
	decision.KindReplicationController: {"ReplicationController", TargetWorkloads},
	decision.KindJob:                   {"Job", TargetWorkloads},
	decision.KindCronJob:               {"CronJob", TargetWorkloads},
}

func kindOfResource(k decision.ResourceKind) (kindInfo, bool) {
	if k < 0 || int(k) >= len(kinds) || kinds[k].name == "" {
		return kindInfo{}, false
	}
	return kinds[k], true
}

// KindName is the {Kind} of the messages ("Pod", "Deployment", …); "" for
// a kind the policy does not know.
func KindName(k decision.ResourceKind) string {
	info, _ := kindOfResource(k)
	return info.name
}

// Target is the target ("pods" or "workloads") of an admitted kind; false
// for a kind the policy does not know.
func Target(k decision.ResourceKind) (string, bool) {
	info, ok := kindOfResource(k)
	return info.target, ok
}

// Decide is the whole validating-path decision (spec 01 §8.2 V4–V6, 05
// §3–5) for the facts of a Pod or a workload's pod template under policy p
// of the installation with this revision. It is pure: no I/O, no logging.
// Messages name variables, never values. DecisionID is left empty.
func Decide(p *Policy, revision string, f *decision.Facts) decision.Decision {
	d := decision.New(revision)
	if p == nil {
		d.Outcome, d.SkipReason = decision.OutcomeSkip, decision.SkipNoPolicy
		return d
	}
	if f == nil {
		f = &decision.Facts{}
	}
	kind, known := kindOfResource(f.ResourceKind)
	d.EnvPolicyResults = make([]decision.EnvPolicyRuleResult, len(p.Rules))
	for i := range p.Rules {
		d.EnvPolicyResults[i] = decision.EnvPolicyRuleResult{
			Index:     int32(i),
			Reject:    p.Rules[i].reject(),
			Mode:      p.Rules[i].mode(),
			Evaluated: true,
		}
	}
	if !known || !p.Includes(kind.target) {
		// decision: a kind the policy does not know (the service refuses an
		// unspecified kind before this) is not targeted either.
		d.Outcome, d.SkipReason = decision.OutcomeSkip, decision.SkipNotTargeted
		return d
	}

	// One backing array holds every rule's matched and missing names.
	total := 0
	for i := range p.Rules {
		total += len(p.Rules[i].Variables)
	}
	e := evaluation{d: d, f: f, kind: kind, names: make([]string, 0, total),
		containers: [3][]decision.Container{f.Containers, f.InitContainers, f.EphemeralContainers}}
	for i := range p.Rules {
		if e.refused {
			e.d.EnvPolicyResults[i].Evaluated = false
			continue
		}
		e.rule(i, &p.Rules[i])
	}
	d = e.d

	if kind.target == TargetWorkloads && hasPrefixedKey(f.WorkloadAnnotationKeys) {
		d.Warnings = append(d.Warnings, decision.Warning{
			Code: WarningCodeWorkloadAnnotations,
			Message: "dynamic-config.rs annotations on a " + kind.name +
				" do nothing: the injection reads the pod, so put them under spec.template.metadata.annotations",
		})
	}
	if e.refused {
		d.Outcome = decision.OutcomeRefuse
	} else {
		d.Outcome = decision.OutcomeAllow
	}
	return d
}

// setIn reports whether the listed entry l is matched by the union R of the
// env of every container (spec 05 §3–4): an entry of that name, and, for a
// valued listing, a literal value equal to it (a valueFrom entry has no
// literal and never matches a valued listing).
func setIn(containers *[3][]decision.Container, l *Variable) bool {
	valued := l.valued()
	for _, list := range containers {
		for c := range list {
			for _, e := range list[c].Env {
				if e.Name != l.Name {
					continue
				}
				if !valued || (!e.ValueFrom && e.Value == l.Value) {
					return true
				}
			}
		}
	}
	return false
}

// fails is the operator's truth table (spec 05 §4) with m of n listed
// entries matched. An unknown operator never fails.
func fails(op string, m, n int) bool {
	switch op {
	case RejectAnyIn:
		return m >= 1
	case RejectAllAreUsed:
		return m == n
	case RejectAnyNotIn:
		return m == 0
	case RejectNotAllAreUsed:
		return m > 0 && m < n
	}
	return false
}

// appendNames appends the names of the entries whose matched flag equals
// want, de-duplicated, in list order.
func appendNames(dst []string, listed []Variable, matched []bool, want bool) []string {
	start := len(dst)
next:
	for j := range listed {
		if matched[j] != want {
			continue
		}
		for _, n := range dst[start:] {
			if n == listed[j].Name {
				continue next
			}
		}
		dst = append(dst, listed[j].Name)
	}
	return dst
}

// detail is the {detail} of the messages of spec 05 §5.
func detail(op string, listed []Variable, matched []bool) string {
	var b strings.Builder
	switch op {
	case RejectAnyIn:
		b.WriteString("it sets ")
		writeNames(&b, listed, matched, selectMatched)
		b.WriteString(", which this rule forbids")
	case RejectAllAreUsed:
		b.WriteString("it sets all of ")
		writeNames(&b, listed, matched, selectAll)
		b.WriteString(" together, which this rule forbids")
	case RejectAnyNotIn:
		b.WriteString("it sets none of ")
		writeNames(&b, listed, matched, selectAll)
		b.WriteString("; at least one of them is required")
	case RejectNotAllAreUsed:
		b.WriteString("it sets ")
		writeNames(&b, listed, matched, selectMatched)
		b.WriteString(" but not ")
		writeNames(&b, listed, matched, selectMissing)
		b.WriteString("; set all of them or none")
	}
	return b.String()
}

type selection int

const (
	selectAll selection = iota
	selectMatched
	selectMissing
)

func (s selection) takes(matched bool) bool {
	return s == selectAll || (s == selectMatched) == matched
}

// writeNames writes {names}: the selected entries joined with ", ",
// de-duplicated, in the rule's list order; an entry listed with a value is
// shown as "NAME (with the listed value)" — never the value.
func writeNames(b *strings.Builder, listed []Variable, matched []bool, s selection) {
	first := true
next:
	for j := range listed {
		if !s.takes(matched[j]) {
			continue
		}
		for k := 0; k < j; k++ {
			if s.takes(matched[k]) && listed[k].Name == listed[j].Name && listed[k].valued() == listed[j].valued() {
				continue next
			}
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		b.WriteString(listed[j].Name)
		if listed[j].valued() {
			b.WriteString(" (with the listed value)")
		}
	}
}

// ruleRef is envPolicy.rules[i], the rule's path as messages and
// Refusal.key write it.
func ruleRef(i int) string { return "envPolicy.rules[" + strconv.Itoa(i) + "]" }

func hasPrefixedKey(keys []string) bool {
	for _, k := range keys {
		if annotation.Prefixed(k) {
			return true
		}
	}
	return false
}
