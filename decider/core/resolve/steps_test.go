package resolve

import (
	"fmt"
	"strings"
	"testing"
)

// A row placed at a step the default render lacks is a table bug found at
// start-up, naming the row; the real list places every row.
func TestARowPlacedAtAMissingStepPanicsNamingIt(t *testing.T) {
	without := func(id string) (list []step) {
		for _, s := range steps {
			if s.id != id {
				list = append(list, step{id: s.id})
			}
		}
		return list
	}
	cases := []struct {
		name, drop, want string
	}{
		{"without B13 watch-seconds has no step", "B13", "watch-seconds is placed at B13"},
		{"without B25 a run-as row has no step", "B25", "agent-run-as-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if got := fmt.Sprint(recover()); !strings.Contains(got, c.want) {
					t.Errorf("panic %q; want one naming %q", got, c.want)
				}
			}()
			placeRows(without(c.drop))
		})
	}
	t.Run("the real list places every row", func(t *testing.T) {
		for _, s := range steps {
			if s.run == nil && s.skip == nil && s.do == nil {
				t.Errorf("step %s has nothing to run", s.id)
			}
		}
	})
}
