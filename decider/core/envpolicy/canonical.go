package envpolicy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// The canonical form's members are declared in byte order of their JSON
// keys, so encoding/json writes the keys sorted.
type (
	canonicalPolicy struct {
		Rules   []canonicalRule `json:"rules"`
		Targets []string        `json:"targets"`
	}
	canonicalRule struct {
		EnvironmentVariables []canonicalVariable `json:"environmentVariables"`
		Mode                 string              `json:"mode"`
		Namespaces           []string            `json:"namespaces,omitempty"`
		Reject               string              `json:"reject"`
	}
	canonicalVariable struct {
		Name  string `json:"name"`
		Value string `json:"value,omitempty"`
	}
)

// Canonical is the compact JSON of the normalised policy that enters the
// installation's revision (spec 02 §10): defaults filled (targets, reject,
// mode), keys sorted, no HTML escaping, and every listed value replaced by
// the lowercase hex SHA-256 of its text, so a listed value never enters the
// revision. Targets are written in the fixed order pods, workloads
// (decision: they are a set); namespaces and variables keep their order. A
// nil policy has no canonical form (nil).
func Canonical(p *Policy) []byte { return encode(p, true) }

// Transport is Canonical with every listed value in clear instead of its
// hash: the form a leader hands a follower (spec 09 §2, issue 24), which
// reads it back as the envPolicy document key. Its Canonical is the
// policy's: the values hash to what the leader hashed. It is never logged.
func Transport(p *Policy) []byte { return encode(p, false) }

// HasListedValues reports whether a rule of p lists a value (then Transport
// and Canonical differ).
func HasListedValues(p *Policy) bool {
	if p == nil {
		return false
	}
	for i := range p.Rules {
		for j := range p.Rules[i].Variables {
			if p.Rules[i].Variables[j].valued() {
				return true
			}
		}
	}
	return false
}

// encode writes the canonical form, each listed value hashed or in clear.
func encode(p *Policy, hash bool) []byte {
	if p == nil {
		return nil
	}
	c := canonicalPolicy{Rules: make([]canonicalRule, len(p.Rules)), Targets: make([]string, 0, 2)}
	for _, t := range []string{TargetPods, TargetWorkloads} {
		if p.Includes(t) {
			c.Targets = append(c.Targets, t)
		}
	}
	for i := range p.Rules {
		r := &p.Rules[i]
		cr := canonicalRule{
			EnvironmentVariables: make([]canonicalVariable, len(r.Variables)),
			Mode:                 r.mode(),
			Namespaces:           r.Namespaces,
			Reject:               r.reject(),
		}
		for j := range r.Variables {
			v := &r.Variables[j]
			cv := canonicalVariable{Name: v.Name}
			if v.valued() {
				cv.Value = v.Value
				if hash {
					sum := sha256.Sum256([]byte(v.Value))
					cv.Value = hex.EncodeToString(sum[:])
				}
			}
			cr.EnvironmentVariables[j] = cv
		}
		c.Rules[i] = cr
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		// Strings and slices always encode; reaching this is a bug.
		panic("envpolicy: canonical form: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
