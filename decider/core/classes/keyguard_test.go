package classes

import "testing"

func TestAKeyIsPlainOnlyWithoutDotEmptyOrEscapedSegments(t *testing.T) {
	tests := []struct{ name, key, why string }{
		{"a relative key of plain segments is plain", "apps/billing/app.json", ""},
		{"an absolute key, as etcd writes them, is plain", "/apps/billing/app", ""},
		{"a segment of three dots is a name, not a step up", "apps/billing/.../app", ""},
		{"a dot-dot segment is not plain", "apps/billing/../payments/app", `a ".." segment`},
		{"a dot segment is not plain", "apps/billing/./app", `a "." segment`},
		{"a percent-escaped dot-dot is not plain", "apps/billing/%2e%2e/payments/app", "a %-escape"},
		{"any percent sign is refused, escaped or not", "apps/billing/100%", "a %-escape"},
		{"a double slash is an empty segment", "apps/billing//app", "an empty segment"},
		{"a trailing slash is an empty segment", "apps/billing/", "an empty segment"},
		{"two leading slashes are an empty segment", "//apps/billing/app", "an empty segment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KeyNotPlain(tt.key); got != tt.why {
				t.Errorf("KeyNotPlain(%q) = %q, want %q", tt.key, got, tt.why)
			}
		})
	}
}

func TestAKeyIsUnderAPrefixOnlyOnSegmentBoundaries(t *testing.T) {
	tests := []struct {
		name, key, prefix string
		under             bool
	}{
		{"a key below the prefix is under it", "apps/billing/app", "apps/billing/", true},
		{"a prefix without its trailing slash means the same segments", "apps/billing/app", "apps/billing", true},
		{"the prefix's own key is under it", "apps/billing", "apps/billing/", true},
		{"namespace bill does not reach apps/billing", "apps/billing/app", "apps/bill", false},
		{"namespace bill does not reach apps/billing with a trailing slash either", "apps/billing/app", "apps/bill/", false},
		{"a prefix ending mid-segment matches no longer segment", "shared/public/x", "shared/pub", false},
		{"an absolute key is not under a relative prefix", "/apps/billing/app", "apps/billing/", false},
		{"a relative key is not under an absolute prefix", "apps/billing/app", "/apps/billing/", false},
		{"an absolute key is under an absolute prefix", "/apps/billing/app", "/apps/billing/", true},
		{"a shorter key is not under a longer prefix", "apps", "apps/billing/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KeyUnder(tt.key, tt.prefix); got != tt.under {
				t.Errorf("KeyUnder(%q, %q) = %v, want %v", tt.key, tt.prefix, got, tt.under)
			}
		})
	}
}
