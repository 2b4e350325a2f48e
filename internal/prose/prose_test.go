package prose

import "testing"

func TestJoinNamesEveryWordWithOneConjunction(t *testing.T) {
	tests := []struct {
		name  string
		words []string
		want  string
	}{
		{"no word is nothing", nil, ""},
		{"one word stands alone", []string{"yaml"}, "yaml"},
		{"two words take the conjunction", []string{"yaml", "json"}, "yaml or json"},
		{"more words take commas, then the conjunction", []string{"yaml", "json", "patch", "review"}, "yaml, json, patch or review"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Join(tt.words, "or"); got != tt.want {
				t.Errorf("Join(%q) = %q, want %q", tt.words, got, tt.want)
			}
		})
	}
}
