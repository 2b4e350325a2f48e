package resolve

import (
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/knob"
	"github.com/dynamic-config-admission/dynamic-config/decider/redact"
)

// Reason slugs (spec 04 §2).
const (
	SlugMalformed = "DynamicConfigMalformed"
	SlugPinned    = "DynamicConfigPinned"
	SlugPolicy    = "DynamicConfigPolicy"
	SlugConflict  = "DynamicConfigConflict"
)

// refuse builds the refusal of check: its reason, slug and HTTP code follow
// from the check id (spec 04 §2).
func refuse(check, key, render, message string) *decision.Refusal {
	r := &decision.Refusal{Reason: decision.ReasonMalformed, Slug: SlugMalformed, HTTPCode: 400,
		Message: message, Check: check, Key: key, Render: render}
	switch {
	case strings.HasPrefix(check, "pin.") || strings.HasPrefix(check, "pair-pin."):
		r.Reason, r.Slug = decision.ReasonPinned, SlugPinned
	case strings.HasPrefix(check, "gate."):
		r.Reason, r.Slug = decision.ReasonPolicy, SlugPolicy
	case strings.HasPrefix(check, "class."):
		r.Reason, r.Slug, r.HTTPCode = decision.ReasonPolicy, SlugPolicy, 403
	case strings.HasPrefix(check, "conflict."):
		r.Reason, r.Slug = decision.ReasonConflict, SlugConflict
	}
	return r
}

// q is the spec's {V}: URL-redacted, then strconv-quoted.
func q(s string) string { return redact.Quote(s) }

// failed turns a knob failure on render r's knob i into its refusal.
func failed(r *render, i int, f *knob.Failure) *decision.Refusal {
	k := key(r, i)
	return refuse(f.Check, k, r.name, f.Message(k))
}

// checkValue validates the pod's annotation of knob i on render r with the
// key's grammar (spec 01 §3); an absent annotation passes.
func (s *state) checkValue(r *render, i int) *decision.Refusal {
	a := &r.ann[i]
	if !a.set {
		return nil
	}
	if _, f := rows[i].Check(a.value); f != nil {
		return failed(r, i, f)
	}
	return nil
}

// Pin advice (spec 04 §4.1): the default render's messages end with how to reopen.
const pinAdvice = `; the installer can reopen it with a trailing "?" or overridable "true"`

// checkPin refuses a pod annotation of knob i that differs from the pinned
// installation value the ladder would supply to a silent pod (spec 02 §6).
func (s *state) checkPin(r *render, i int) *decision.Refusal {
	a := &r.ann[i]
	if !a.set {
		return nil
	}
	iv, _, _, ok := s.silent(r, i)
	if !ok || !iv.Pinned || knob.Equal(rows[i].Name, a.value, iv.Text) {
		return nil
	}
	msg := a.key + " is " + q(a.value) + ", but the installation pins it to " + pinnedText(i, iv.Text) +
		" — match it or drop the annotation"
	if r.name == "" {
		msg += pinAdvice
	}
	return refuse("pin."+rows[i].Name, a.key, r.name, msg)
}

// pinnedText is the spec's {T}: the pinned value normalised, quoted.
func pinnedText(i int, text string) string {
	if n, f := rows[i].Check(text); f == nil {
		text = n
	}
	return q(text)
}

// checkPairPin refuses a pod that answers one half of a pair while the
// installation pins the other (pair-pin.*): the pair answers as one.
func (s *state) checkPairPin(r *render, a, b int, check string) *decision.Refusal {
	for _, h := range [2][2]int{{a, b}, {b, a}} {
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
			pinnedText(pinnedHalf, iv.Text) + " — the pair answers as one: drop " + kb
		return refuse(check, kb, r.name, msg)
	}
	return nil
}
