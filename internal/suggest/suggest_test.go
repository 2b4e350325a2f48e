package suggest

import "testing"

func TestDistanceCountsEveryEditOnce(t *testing.T) {
	cases := []struct {
		name, a, b string
		want       int
	}{
		{"equal words are zero apart", "inject", "inject", 0},
		{"a swap of two neighbours is one edit", "injcet", "inject", 1},
		{"a missing letter is one edit", "injet", "inject", 1},
		{"an extra letter is one edit", "innject", "inject", 1},
		{"a wrong letter is one edit", "imject", "inject", 1},
		{"a capital is a wrong letter", "Inject", "inject", 1},
		{"two edits are two", "injcte", "inject", 2},
		{"the empty word is as far as the other is long", "", "key", 3},
		{"unrelated words are far apart", "foo", "ref", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Distance(c.a, c.b); got != c.want {
				t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
			}
			if got := Distance(c.b, c.a); got != c.want {
				t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
			}
		})
	}
}

func TestClosestSuggestsOnlyWithinTwoEdits(t *testing.T) {
	words := []string{"inject", "source", "endpoint", "watch-seconds", "mode", "meta"}
	cases := []struct {
		name, word string
		want       string
		ok         bool
	}{
		{"a swap finds its word", "injcet", "inject", true},
		{"two edits still find it", "wacth-second", "watch-seconds", true},
		{"three edits are too many", "wcath-secnd", "", false},
		{"the word itself is no suggestion", "inject", "", false},
		{"the nearest wins", "mota", "meta", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Closest(c.word, words)
			if got != c.want || ok != c.ok {
				t.Errorf("Closest(%q) = %q, %v; want %q, %v", c.word, got, ok, c.want, c.ok)
			}
		})
	}
	t.Run("on a tie the earlier candidate wins", func(t *testing.T) {
		if got, _ := Closest("mde", []string{"meta", "mode", "made"}); got != "mode" {
			t.Errorf("Closest(mde) = %q, want mode (one edit, before made)", got)
		}
	})
}
