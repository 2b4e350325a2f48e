package textcut

import "testing"

func TestCuttingKeepsWholeCharacters(t *testing.T) {
	tests := []struct {
		name      string
		s         string
		n         int
		runes     string
		bytesKept string
	}{
		{"a short string is unchanged", "abc", 5, "abc", "abc"},
		{"an ASCII string is cut at n", "abcdef", 3, "abc", "abc"},
		{"a multi-byte character is never split", "aé€b", 2, "aé", "a"},
		{"zero keeps nothing", "abc", 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Runes(tt.s, tt.n); got != tt.runes {
				t.Errorf("Runes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.runes)
			}
			if got := Bytes(tt.s, tt.n); got != tt.bytesKept {
				t.Errorf("Bytes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.bytesKept)
			}
		})
	}
}
