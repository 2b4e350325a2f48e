// Package jsonpointer holds the RFC 6901 JSON Pointer helpers: escaping a
// reference token for a path the patch builder writes (frontdoor/patch) and
// splitting a path back into its tokens (doors/manifest, the patch tests). It
// imports only the standard library, so the patch builder reaches no JSON
// Patch engine through it.
package jsonpointer

import (
	"fmt"
	"strings"
)

// EscapeToken escapes one reference token for a JSON Pointer: "~" → "~0",
// then "/" → "~1".
func EscapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// Parse splits an RFC 6901 JSON Pointer into its unescaped reference tokens.
// "" is the whole document.
func Parse(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("path %q is not a JSON Pointer: it must start with \"/\"", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, part := range parts {
		if !strings.Contains(part, "~") {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(part); j++ {
			if part[j] != '~' {
				b.WriteByte(part[j])
				continue
			}
			if j+1 >= len(part) || (part[j+1] != '0' && part[j+1] != '1') {
				return nil, fmt.Errorf("path %q has an invalid escape: \"~\" must be followed by 0 or 1", p)
			}
			if part[j+1] == '0' {
				b.WriteByte('~')
			} else {
				b.WriteByte('/')
			}
			j++
		}
		parts[i] = b.String()
	}
	return parts, nil
}
