// Package suggest finds the word a misspelling was probably meant to be: the
// "did you mean" of an unknown annotation key (spec 01 key.unknown, issue 40)
// and of an unknown chart value (check-installation --values). It is pure:
// the core uses it.
package suggest

// MaxDistance is the largest edit distance a suggestion may be away.
const MaxDistance = 2

// Distance is the optimal string alignment distance between a and b: the
// fewest single-byte insertions, deletions, substitutions and swaps of two
// neighbours ("injcet" is one swap from "inject") that turn a into b. The
// words it compares are ASCII keys.
func Distance(a, b string) int {
	// three rows of the dynamic programme: two back (for the swap), one
	// back and the current one
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Closest is the candidate nearest to word, at most MaxDistance away and not
// word itself; on a tie the earlier candidate wins. ok is false when none is
// near enough.
func Closest(word string, candidates []string) (closest string, ok bool) {
	best := MaxDistance + 1
	for _, c := range candidates {
		if c == word || abs(len(c)-len(word)) >= best {
			continue
		}
		if d := Distance(word, c); d < best {
			closest, best = c, d
		}
	}
	return closest, best <= MaxDistance
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
