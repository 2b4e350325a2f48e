package installation

import "github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"

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

// nullProblem is the problem of a map- or list-valued key written with no
// value (`storeDefaults:` left by a truncation): a load error naming the
// path, never an unset setting. empty is the empty form to write instead
// ("{}" or "[]"). It is "" when n is absent or not a null.
func nullProblem(path string, n *doctree.Node, empty string) string {
	if n == nil || !doctree.IsNull(n) {
		return ""
	}
	return path + ": is empty (null); write " + empty + " or remove the key"
}
