package registry

import "strings"

// Kind is what a key under the prefix is (spec 01 §1.1).
type Kind int

// Key kinds.
const (
	// KindUnknown is not part of the contract (check key.unknown).
	KindUnknown Kind = iota
	// KindRegistry is an unsuffixed registry key.
	KindRegistry
	// KindRendered is a per-render key with a render suffix: <key>.<name>.
	KindRendered
	// KindAlso is also.<name>.
	KindAlso
	// KindAlsoSection is also-section.<name>.
	KindAlsoSection
	// KindStatus is the status mark.
	KindStatus
	// KindRevisionStamp is the revision stamp the injection writes beside
	// the status mark (spec 10 §8): recognised, never judged.
	KindRevisionStamp
)

// Classified is a classified annotation key.
type Classified struct {
	Kind Kind
	// Row is the registry position for KindRegistry and KindRendered, else -1.
	Row ID
	// Name is the suffix: the render name (KindRendered) or the also-name.
	Name string
}

// StatusKey is the status mark's full key.
const StatusKey = Prefix + statusName

// Classify classifies a full annotation key (prefix included).
func Classify(key string) Classified {
	unknown := Classified{Kind: KindUnknown, Row: -1}
	bare, ok := strings.CutPrefix(key, Prefix)
	if !ok {
		return unknown
	}
	base, suffix, dotted := strings.Cut(bare, ".")
	if !dotted {
		switch bare {
		case statusName:
			return Classified{Kind: KindStatus, Row: -1}
		case revisionName:
			return Classified{Kind: KindRevisionStamp, Row: -1}
		}
		if i, ok := byName[bare]; ok {
			return Classified{Kind: KindRegistry, Row: i}
		}
		return unknown
	}
	if !ValidSuffix(suffix) {
		return unknown
	}
	switch base {
	case alsoName:
		return Classified{Kind: KindAlso, Row: -1, Name: suffix}
	case alsoSectionName:
		return Classified{Kind: KindAlsoSection, Row: -1, Name: suffix}
	}
	if i, ok := byName[base]; ok && rows[i].PerRender {
		return Classified{Kind: KindRendered, Row: i, Name: suffix}
	}
	return unknown
}

// ValidSuffix is the suffix grammar: 1–32 characters from [a-z0-9-].
func ValidSuffix(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ValidRenderName is the render-name shape (check render.name): a valid suffix
// that also starts and ends with [a-z0-9].
func ValidRenderName(s string) bool {
	if !ValidSuffix(s) {
		return false
	}
	return s[0] != '-' && s[len(s)-1] != '-'
}

// Full is the full key of a knob for a render ("" = the default render).
func Full(knob, render string) string {
	if render == "" {
		return Prefix + knob
	}
	return Prefix + knob + "." + render
}
