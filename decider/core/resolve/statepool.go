package resolve

import (
	"sync"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// states keeps the decisions' states for reuse: a state is about 10 KiB
// (every registry row's annotation and value, inline), which was 43 % of the
// bytes a decider allocated per decision and so most of its GC work.
var states = sync.Pool{New: func() any { return new(state) }}

// newState is an empty state for one decision.
func newState(inst *installation.Installation, f *decision.Facts, cls *classes.Set, withValues bool) *state {
	s := states.Get().(*state)
	s.inst, s.f, s.classes, s.withValues = inst, f, cls, withValues
	return s
}

// release returns s for reuse once its decision is built. What a decision
// keeps of its state it holds by value or in memory the state no longer
// refers to (slices and strings it made), never a pointer into the state, so
// s is emptied whole (no pod data stays in the pool) and handed back.
func (s *state) release() {
	*s = state{}
	states.Put(s)
}
