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
