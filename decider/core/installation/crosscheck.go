package installation

import (
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
	"k8s.io/apimachinery/pkg/api/resource"
)

// valueCtx is the {ctx} of a fleet value.
func valueCtx(v Value) ctx {
	if v.Source == SourceDocument {
		return docCtx(v.DocumentPath, v.Variable)
	}
	return envCtx(v.Variable)
}

// groupCtx is the {ctx} of a store group.
func groupCtx(g *StoreGroup) ctx {
	if g.Source == SourceDocument {
		return docCtx(g.DocumentPath, varStoreDefaults).store(g.Store)
	}
	return envCtx(varStoreDefaults).store(g.Store)
}

// crossChecks are the installation-level checks of spec 02 §6.2, in order:
// per store group (nine-store order) the two pairs and aws-secret; then
// request ≤ limit for the fleet, then for each store group.
func crossChecks(inst *Installation) []string {
	var out []string
	for _, s := range Stores {
		g, ok := inst.Stores[s]
		if !ok {
			continue
		}
		c := groupCtx(g).String()
		if _, a := g.Knobs["endpoint"]; a {
			if _, b := g.Knobs["endpoint-secret"]; b {
				out = append(out, c+": endpoint and endpoint-secret are both set: one address, one place")
			}
		}
		if _, a := g.Knobs["template"]; a {
			if _, b := g.Knobs["template-configmap"]; b {
				out = append(out, c+": template and template-configmap are both set: one template, one place")
			}
		}
		if _, a := g.Knobs["aws-secret"]; a && s != "s3" {
			out = append(out, c+": aws-secret is the s3 source's flag; this group is "+s+"'s")
		}
	}
	for _, res := range []string{"cpu", "memory"} {
		out = append(out, fleetRequestLimit(inst, res)...)
	}
	for _, s := range Stores {
		if g, ok := inst.Stores[s]; ok {
			for _, res := range []string{"cpu", "memory"} {
				out = append(out, storeRequestLimit(inst, g, res)...)
			}
		}
	}
	return out
}

// tiered is a value with the tier it came from.
type tiered struct {
	text string
	tier string // "the fleet default", "the built-in default", `the store default for "<s>"`
	from string // "store", "fleet", "built-in"
	ctx  ctx
	ok   bool
}

func fleetOrBuiltIn(inst *Installation, knobName string) tiered {
	if v, ok := inst.Fleet[knobName]; ok {
		return tiered{text: v.Text, tier: "the fleet default", from: "fleet", ctx: valueCtx(v), ok: true}
	}
	if b := BuiltIn(knobName); b != "" {
		return tiered{text: b, tier: "the built-in default", from: "built-in", ctx: envCtx(variableOf(knobName)), ok: true}
	}
	return tiered{}
}

func variableOf(knobName string) string {
	for _, s := range settings {
		if s.Knob == knobName {
			return s.Variable
		}
	}
	return ""
}

func fleetRequestLimit(inst *Installation, res string) []string {
	reqKnob, limKnob := "agent-"+res+"-request", "agent-"+res+"-limit"
	req, lim := fleetOrBuiltIn(inst, reqKnob), fleetOrBuiltIn(inst, limKnob)
	if !req.ok || !lim.ok || (req.from != "fleet" && lim.from != "fleet") {
		return nil
	}
	// {ctx} is the request's variable (spec 02 §6.2), also when the request
	// is the built-in one and the fleet limit is what the installer wrote.
	return requestAboveLimit(req.ctx.String(), reqKnob, limKnob, req, lim)
}

func storeRequestLimit(inst *Installation, g *StoreGroup, res string) []string {
	reqKnob, limKnob := "agent-"+res+"-request", "agent-"+res+"-limit"
	pick := func(k string) tiered {
		if v, ok := g.Knobs[k]; ok {
			return tiered{text: v.Text, tier: "the store default for " + strconv.Quote(g.Store), from: "store", ok: true}
		}
		return fleetOrBuiltIn(inst, k)
	}
	req, lim := pick(reqKnob), pick(limKnob)
	if !req.ok || !lim.ok || (req.from != "store" && lim.from != "store") {
		return nil
	}
	return requestAboveLimit(groupCtx(g).String(), reqKnob, limKnob, req, lim)
}

func requestAboveLimit(c, reqKnob, limKnob string, req, lim tiered) []string {
	rq, err1 := resource.ParseQuantity(req.text)
	lq, err2 := resource.ParseQuantity(lim.text)
	if err1 != nil || err2 != nil || rq.Cmp(lq) <= 0 {
		return nil
	}
	return []string{c + ": " + reqKnob + " " + redact.Quote(req.text) + " is above " + limKnob + " " + redact.Quote(lim.text) +
		" (from " + lim.tier + "): a request cannot exceed its limit"}
}
