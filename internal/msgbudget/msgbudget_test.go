package msgbudget

import "testing"

func TestBytes(t *testing.T) {
	cases := []struct {
		name string
		in   int64
		want int
	}{
		{"the default body limit gives a 14 MiB budget", DefaultMaxRequestBytes, 14 << 20},
		{"an unset limit is the default", 0, 14 << 20},
		{"the largest limit still fits gRPC's int32 sizes", MaxMaxRequestBytes, 1<<31 - 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Bytes(c.in); got != c.want {
				t.Errorf("Bytes(%d) = %d, want %d", c.in, got, c.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	for _, ok := range []int64{1, DefaultMaxRequestBytes, MaxMaxRequestBytes} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%d): %v", ok, err)
		}
	}
	for _, bad := range []int64{0, -1, MaxMaxRequestBytes + 1} {
		if err := Check(bad); err == nil {
			t.Errorf("Check(%d) accepted it", bad)
		}
	}
}
