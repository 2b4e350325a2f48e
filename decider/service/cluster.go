package service

import (
	"context"
	"log/slog"

	"google.golang.org/grpc/codes"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// errNotForThisCluster answers a known caller that names a cluster it may
// not speak for. It names neither the other callers nor their clusters —
// nor even the cluster asked for: the text reaches the pod's creator.
var errNotForThisCluster = &Error{Code: codes.PermissionDenied, Message: callers.NotForThisCluster}

// WithCluster sets the decider's own cluster name: the cluster of a request
// that names none. It returns s.
func (s *Service) WithCluster(name string) *Service {
	s.cluster = name
	return s
}

// callerAndCluster checks the request's cluster and, with a callers file,
// that the authenticated caller may speak for it. It returns the caller's
// name ("" without a callers file) and the cluster decided for ("" when the
// request names none and the decider has no name).
func (s *Service) callerAndCluster(ctx context.Context, req *deciderv1.DecisionRequest) (caller, cluster string, err error) {
	return s.callerFor(ctx, "decision request", req.GetCluster())
}

// callerFor is callerAndCluster for the cluster a request of what names.
func (s *Service) callerFor(ctx context.Context, what, cluster string) (string, string, error) {
	if problem := callers.CheckClusterName(cluster); problem != "" {
		return "", "", invalidArgument(what + ": cluster " + problem)
	}
	if cluster == "" {
		cluster = s.cluster
	}
	c, known := callers.FromContext(ctx)
	if !known {
		return "", cluster, nil
	}
	if !c.MaySpeakFor(cluster) {
		s.metrics.CallerDenied(c.Name)
		s.logger.LogAttrs(ctx, slog.LevelWarn, "caller denied",
			slog.String("caller", c.Name), slog.String("cluster", cluster))
		return "", "", errNotForThisCluster
	}
	return c.Name, cluster, nil
}
