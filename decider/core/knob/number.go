package knob

import (
	"strings"
)

const maxUint64 = ^uint64(0)

// MaxUint64 is the largest number a Number grammar can hold.
const MaxUint64 = maxUint64

// Number is a strict decimal grammar with a per-key range (spec 01 §1.2).
type Number struct {
	Check, Expect           string
	Max                     uint64
	ZeroCheck, ZeroExpect   string // when 0 is refused with its own check
	ZeroBare                bool   // the zero message shows the value as a bare 0
	AboveCheck, AboveExpect string // when a value above Max has its own check
	SuffixS                 bool   // an optional trailing "s" (revoke-grace)
}

// Grammar is the number's grammar; two values compare parsed.
func (n Number) Grammar() Grammar {
	return Grammar{parse: n.validate, compare: ByParsed}
}

func (n Number) validate(v string) (Value, *Failure) {
	digits := v
	if n.SuffixS && strings.HasSuffix(digits, "s") {
		digits = digits[:len(digits)-1]
	}
	if !IsDigits(digits) {
		return Value{Text: v}, fail(n.Check, n.Expect, v)
	}
	value, fits := parseDecimal(digits)
	if !fits || value > n.Max {
		if n.AboveCheck != "" {
			return Value{Text: v}, fail(n.AboveCheck, n.AboveExpect, v)
		}
		return Value{Text: v}, fail(n.Check, n.Expect, v)
	}
	if value == 0 && n.ZeroCheck != "" {
		f := fail(n.ZeroCheck, n.ZeroExpect, v)
		if n.ZeroBare {
			f.Shown = "0"
		}
		return Value{Text: v}, f
	}
	return Value{Text: canonicalDecimal(digits), Number: value}, nil
}

// IsDigits reports whether s is one or more ASCII decimal digits (0-9) —
// no sign, no space, no other Unicode digit.
func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseDecimal parses a strict decimal; fits is false when it is not one or
// does not fit in 64 bits.
func parseDecimal(s string) (value uint64, fits bool) {
	if !IsDigits(s) {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if value > (maxUint64-d)/10 {
			return 0, false
		}
		value = value*10 + d
	}
	return value, true
}

// canonicalDecimal drops leading zeros without allocating ("015" → "15", "0" stays).
func canonicalDecimal(digits string) string {
	i := 0
	for i < len(digits)-1 && digits[i] == '0' {
		i++
	}
	return digits[i:]
}

// ParseUint parses a strict decimal (leading zeros allowed); ok is false for
// anything else or a value above 64 bits. Callers use it on values Check accepted.
func ParseUint(s string) (uint64, bool) { return parseDecimal(s) }
