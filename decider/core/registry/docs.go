package registry

import "strings"

// TierText is the registry table's tiers column for a row, as spec 01 §2
// writes it: "S", "S, F", "F (default render only)", "—", with the row's
// TierNote added to the parenthesis.
func (r *Row) TierText() string {
	text := tierWords(r.Tiers)
	var qualifiers []string
	if r.PerRender && !sameTiers(r.Tiers, r.NamedTiers) {
		if len(r.NamedTiers) == 0 {
			qualifiers = append(qualifiers, "default render only")
		} else {
			qualifiers = append(qualifiers, "named renders: "+tierWords(r.NamedTiers))
		}
	}
	if r.TierNote != "" {
		qualifiers = append(qualifiers, r.TierNote)
	}
	if len(qualifiers) > 0 {
		text += " (" + strings.Join(qualifiers, "; ") + ")"
	}
	return text
}

// ScopeText is the registry table's scope column for a row: the scope word,
// with the row's ScopeNote in parentheses.
func (r *Row) ScopeText() string {
	if r.ScopeNote == "" {
		return r.Scope.String()
	}
	return r.Scope.String() + " (" + r.ScopeNote + ")"
}

// tierWords writes a ladder as the table does: "S, F", or "—" when empty.
func tierWords(tiers []Tier) string {
	if len(tiers) == 0 {
		return "—"
	}
	parts := make([]string, 0, len(tiers))
	for _, t := range tiers {
		if t == TierStore {
			parts = append(parts, "S")
		} else {
			parts = append(parts, "F")
		}
	}
	return strings.Join(parts, ", ")
}

func sameTiers(a, b []Tier) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
