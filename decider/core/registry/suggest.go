package registry

import (
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/internal/suggest"
)

// Suggest is the key an unknown prefixed key was probably meant to be (issue
// 40): the registry key (or, for a key with a render suffix, the per-render
// key or also / also-section with the same suffix) at most
// suggest.MaxDistance edits from it, in registry order on a tie. ok is false
// for a key that is not prefixed, not unknown, or near no key.
func Suggest(key string) (string, bool) {
	bare, prefixed := strings.CutPrefix(key, Prefix)
	if !prefixed || Classify(key).Kind != KindUnknown {
		return "", false
	}
	base, suffix, dotted := strings.Cut(bare, ".")
	if !dotted {
		if name, ok := suggest.Closest(bare, unsuffixedNames); ok {
			return Prefix + name, true
		}
		return "", false
	}
	if !ValidSuffix(suffix) {
		return "", false // the suffix, not the base, is what is wrong
	}
	if name, ok := suggest.Closest(base, suffixedNames); ok {
		return Prefix + name + "." + suffix, true
	}
	return "", false
}

// MisspelledInject reports whether key is an unknown prefixed key whose
// nearest key is dynamic-config.rs/inject: a pod that carries it and not
// inject itself is admitted untouched, and told why.
func MisspelledInject(key string) bool {
	s, ok := Suggest(key)
	return ok && s == Prefix+rows[Inject].Name
}

// unsuffixedNames are the keys a bare name may mean (the registry keys; the
// status mark is the webhook's to write, never a suggestion); suffixedNames
// the bases a suffixed key may mean.
var unsuffixedNames, suffixedNames = func() ([]string, []string) {
	var bare, suffixed []string
	for i := range rows {
		bare = append(bare, rows[i].Name)
		if rows[i].PerRender {
			suffixed = append(suffixed, rows[i].Name)
		}
	}
	return bare, append(suffixed, alsoName, alsoSectionName)
}()
