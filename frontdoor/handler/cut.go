package handler

import (
	"github.com/dynamic-config-admission/dynamic-config/internal/textcut"
)

// cut shortens s to at most n characters (runes).
func cut(s string, n int) string { return textcut.Runes(s, n) }

// cutBytes returns the longest prefix of s of at most n bytes that ends on a
// character boundary.
func cutBytes(s string, n int) string { return textcut.Bytes(s, n) }
