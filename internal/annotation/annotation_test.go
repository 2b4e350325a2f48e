package annotation

import "testing"

func TestOnlyKeysUnderThePrefixArePrefixed(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"dynamic-config.rs/inject", true},
		{"dynamic-config.rs/", true},
		{"dynamic-config.rs", false},
		{"x.dynamic-config.rs/inject", false},
		{"Dynamic-Config.rs/inject", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := Prefixed(tt.key); got != tt.want {
				t.Errorf("Prefixed(%q) = %v", tt.key, got)
			}
		})
	}
}

func TestAStampIsTheFirstTwelveHexDigitsOfTheRevisionsDigest(t *testing.T) {
	tests := []struct {
		name, revision, want string
	}{
		{"a sha256 revision loses its prefix", "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", "44136fa355b3"},
		{"a digest without a prefix is cut alone", "0123456789abcdef", "0123456789ab"},
		{"a short digest is kept whole", "sha256:abc", "abc"},
		{"no revision is no stamp", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Stamp(tt.revision); got != tt.want {
				t.Errorf("Stamp(%q) = %q, want %q", tt.revision, got, tt.want)
			}
		})
	}
}
