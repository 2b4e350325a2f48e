package installation

import "github.com/dynamic-config-admission/dynamic-config/decider/doctree"

// scalar reads a setting's node as its literal text (spec 02 §5.3): ok is
// false for null (unset) and for lists and maps, for which problem is set.
func scalar(path string, n *doctree.Node) (text string, ok bool, problem string) {
	if doctree.IsNull(n) {
		return "", false, ""
	}
	if n.Kind != doctree.Scalar {
		return "", false, path + ": a setting is a word, a number or a boolean; this one is a " + doctree.KindWord(n)
	}
	return n.Value, true, ""
}
