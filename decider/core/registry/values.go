package registry

import "github.com/dynamic-config-admission/dynamic-config/decider/core/knob"

// Values are one render's effective values, one slot per knob: what the
// resolver hands the plan builder (spec 03 §2–3). A knob that resolved to
// nothing is unset. Values are normalised — file-mode as "0<oct>", numbers in
// plain decimal, booleans "true"/"false", quantities and strings as written —
// and a number knob's value carries its number: each value was parsed once,
// by its grammar, and is never parsed again.
type Values struct {
	val [Count]knob.Value
	set [Count]bool
}

// Set records knob id's value from text, as the knob's grammar parses it (a
// value the grammar refuses is kept as written, with no number). It serves
// callers that hold raw text; the resolver, whose values are parsed already,
// hands them over with SetParsed.
func (v *Values) Set(id ID, text string) {
	p, f := rows[id].Grammar.Parse(text)
	if f != nil {
		p = knob.Value{Text: text}
	}
	v.SetParsed(id, p)
}

// SetParsed records knob id's value as its grammar parsed it.
func (v *Values) SetParsed(id ID, p knob.Value) { v.val[id], v.set[id] = p, true }

// Unset forgets knob id's value.
func (v *Values) Unset(id ID) { v.val[id], v.set[id] = knob.Value{}, false }

// Get returns knob id's value; ok is false when it resolved to nothing.
func (v *Values) Get(id ID) (text string, ok bool) { return v.val[id].Text, v.set[id] }

// Has reports whether knob id resolved to a value.
func (v *Values) Has(id ID) bool { return v.set[id] }

// Text is knob id's value, "" when it resolved to nothing.
func (v *Values) Text(id ID) string { return v.val[id].Text }

// Number is the number of knob id's value (a number knob's value, file-mode's
// bits), 0 when it resolved to nothing or is not a number.
func (v *Values) Number(id ID) uint64 { return v.val[id].Number }
