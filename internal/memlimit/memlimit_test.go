package memlimit

import "testing"

func TestTheSoftMemoryLimitIsNinetyPercentOfTheContainersLimit(t *testing.T) {
	cases := []struct {
		name   string
		env    map[string]string
		want   int64
		wantOK bool
	}{
		{"a 128 MiB container limit holds the heap to 90 % of it", map[string]string{Variable: "134217728"}, 120795955, true},
		{"GOMEMLIMIT set by hand wins", map[string]string{"GOMEMLIMIT": "100MiB", Variable: "134217728"}, 0, false},
		{"no container limit sets none", map[string]string{}, 0, false},
		{"a limit that is not a byte count sets none", map[string]string{Variable: "128Mi"}, 0, false},
		{"a zero limit sets none", map[string]string{Variable: "0"}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Soft(func(k string) string { return c.env[k] })
			if got != c.want || ok != c.wantOK {
				t.Errorf("Soft = %d, %v; want %d, %v", got, ok, c.want, c.wantOK)
			}
		})
	}
}
