package registry

// Values are one render's effective values, one slot per knob: what the
// resolver hands the plan builder (spec 03 §2–3). A knob that resolved to
// nothing is unset. Values are normalised: file-mode as "0<oct>", numbers in
// plain decimal, booleans "true"/"false", quantities and strings as written.
type Values struct {
	text [Count]string
	set  [Count]bool
}

// Set records knob id's value.
func (v *Values) Set(id ID, text string) { v.text[id], v.set[id] = text, true }

// Unset forgets knob id's value.
func (v *Values) Unset(id ID) { v.text[id], v.set[id] = "", false }

// Get returns knob id's value; ok is false when it resolved to nothing.
func (v *Values) Get(id ID) (text string, ok bool) { return v.text[id], v.set[id] }

// Has reports whether knob id resolved to a value.
func (v *Values) Has(id ID) bool { return v.set[id] }

// Text is knob id's value, "" when it resolved to nothing.
func (v *Values) Text(id ID) string { return v.text[id] }
