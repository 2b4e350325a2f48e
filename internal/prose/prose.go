// Package prose writes lists of words the way the messages of every command
// name them: "a", "a or b", "a, b or c".
package prose

import "strings"

// Join joins words as "a", "a <conjunction> b", "a, b <conjunction> c".
func Join(words []string, conjunction string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conjunction + " " + words[len(words)-1]
}
