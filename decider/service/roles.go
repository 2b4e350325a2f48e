package service

import (
	"google.golang.org/grpc/codes"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// RoleFollower is the decider-role audit annotation and log value of a follower.
const RoleFollower = "follower"

// Leader is what the service reads of a leader's follower registry
// (decider/leader.Leader).
type Leader interface {
	Followers() []*deciderv1.FollowerState
}

// Follower is what the service reads of a follower (decider/follower.Follower).
type Follower interface {
	// ID is the follower id.
	ID() string
	// Stale reports whether the follower is past --max-stale.
	Stale() bool
	// State is the follower's own state.
	State() *deciderv1.FollowerState
}

// errStale: a follower past --max-stale refuses to decide, so that front
// doors fail closed exactly as for a dead decider (spec 09 §3).
var errStale = &Error{Code: codes.Unavailable, Message: "this follower decider has heard neither a snapshot nor a heartbeat from its leader for longer than --max-stale"}

// WithLeader reports l's followers in GetInstallation. It returns s.
func (s *Service) WithLeader(l Leader) *Service {
	s.leader = l
	return s
}

// WithFollower makes s a follower's service: Decide refuses while f is
// stale, decisions carry the decider-role and follower-id audit annotations
// and log fields, and GetInstallation reports f's state. It returns s.
func (s *Service) WithFollower(f Follower) *Service {
	s.follower = f
	return s
}

// roleToProto fills the role fields of a GetInstallation answer.
func (s *Service) roleToProto(out *deciderv1.GetInstallationResponse) {
	if s.follower != nil {
		out.Role = deciderv1.DeciderRole_DECIDER_ROLE_FOLLOWER
		out.Follower = s.follower.State()
		return
	}
	out.Role = deciderv1.DeciderRole_DECIDER_ROLE_LEADER
	if s.leader != nil {
		out.Followers = s.leader.Followers()
	}
}
