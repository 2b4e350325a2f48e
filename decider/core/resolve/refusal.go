package resolve

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/knob"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// Reason slugs (spec 04 §2).
const (
	SlugMalformed = "DynamicConfigMalformed"
	SlugPinned    = "DynamicConfigPinned"
	SlugPolicy    = "DynamicConfigPolicy"
	SlugConflict  = "DynamicConfigConflict"
)

// refuse builds a DynamicConfigMalformed refusal of check (spec 04 §2), the
// class of every check that is not a pin, a gate, a conflict or a knob row's
// own class.
func refuse(check, key, render, message string) *decision.Refusal {
	return refuseAs(registry.RefuseMalformed, check, key, render, message)
}

// refuseAs builds the refusal of check in class: its reason, slug and HTTP
// code follow from the class, never from the check id.
func refuseAs(class registry.RefusalClass, check, key, render, message string) *decision.Refusal {
	c := refusalClasses[class]
	return &decision.Refusal{Reason: c.reason, Slug: c.slug, HTTPCode: c.httpCode,
		Message: message, Check: check, Key: key, Render: render}
}

// refusalClasses are the answers of each refusal class (spec 04 §2).
var refusalClasses = map[registry.RefusalClass]struct {
	reason   decision.Reason
	slug     string
	httpCode int32
}{
	registry.RefuseMalformed: {decision.ReasonMalformed, SlugMalformed, 400},
	registry.RefusePinned:    {decision.ReasonPinned, SlugPinned, 400},
	registry.RefusePolicy:    {decision.ReasonPolicy, SlugPolicy, 400},
	registry.RefuseForbidden: {decision.ReasonPolicy, SlugPolicy, 403},
	registry.RefuseConflict:  {decision.ReasonConflict, SlugConflict, 400},
}

// q is the spec's {V}: URL-redacted, then strconv-quoted.
func q(s string) string { return redact.Quote(s) }

// failed turns a knob failure on render r's knob i into its refusal.
func failed(r *render, i registry.ID, f *knob.Failure) *decision.Refusal {
	k := key(r, i)
	return refuseAs(rows[i].Refusal, f.Check, k, r.name, f.Message(k))
}

// checkValue validates the pod's annotation of knob i on render r with the
// key's grammar (spec 01 §3); an absent annotation passes.
func (s *state) checkValue(r *render, i registry.ID) *decision.Refusal {
	a := &r.ann[i]
	if !a.set {
		return nil
	}
	if _, f := r.parse(i); f != nil {
		return failed(r, i, f)
	}
	return nil
}

// Pin advice (spec 04 §4.1): the default render's messages end with how to reopen.
const pinAdvice = `; the installer can reopen it with a trailing "?" or overridable "true"`

// checkPin refuses a pod annotation of knob i that differs from the pinned
// installation value the ladder would supply to a silent pod (spec 02 §6).
func (s *state) checkPin(r *render, i registry.ID) *decision.Refusal {
	a := &r.ann[i]
	if !a.set {
		return nil
	}
	iv, _, _, ok := s.silent(r, i)
	if !ok || !iv.Pinned || samePin(r, i, iv) {
		return nil
	}
	msg := a.key + " is " + q(a.value) + ", but the installation pins it to " + pinnedText(iv) +
		" — match it or drop the annotation"
	if r.name == "" {
		msg += pinAdvice
	}
	return refuseAs(registry.RefusePinned, "pin."+rows[i].Name, a.key, r.name, msg)
}

// samePin compares the pod's annotation of knob i with the pinned value the
// way a pin does (spec 02 §4, knob.Grammar.Equal): as written, or — for a
// grammar that compares parsed values — by the two parses already made.
func samePin(r *render, i registry.ID, iv installation.Value) bool {
	if r.ann[i].value == iv.Text {
		return true
	}
	if !rows[i].Grammar.Checked() || rows[i].Grammar.Compare() != knob.ByParsed {
		return false
	}
	p, f := r.parse(i)
	return f == nil && p.Text == installed(iv).Text
}

// pinnedText is the spec's {T}: the pinned value normalised, quoted.
func pinnedText(iv installation.Value) string { return q(installed(iv).Text) }

// checkPairPin refuses a pod that answers one half of a pair while the
// installation pins the other (pair-pin.*): the pair answers as one.
func (s *state) checkPairPin(r *render, a, b registry.ID, check string) *decision.Refusal {
	for _, h := range [2][2]registry.ID{{a, b}, {b, a}} {
		pinnedHalf, podHalf := h[0], h[1]
		if !r.ann[podHalf].set {
			continue
		}
		iv, _, _, ok := s.silent(r, pinnedHalf)
		if !ok || !iv.Pinned {
			continue
		}
		kb := r.ann[podHalf].key
		msg := kb + " is set, but the installation pins " + key(r, pinnedHalf) + " to " +
			pinnedText(iv) + " — the pair answers as one: drop " + kb
		return refuseAs(registry.RefusePinned, check, kb, r.name, msg)
	}
	return nil
}
