package engine

import (
	"context"
	"fmt"

	"google.golang.org/grpc"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// Remote is an engine whose front door handler asks the decider conn
// reaches — a cluster's own decider over the network — instead of one in
// process: the cluster's answer itself, its rollout's canary included. It
// holds no installation (Installation is nil, and AdmitPod runs /mutate
// only); Close leaves conn to its owner.
func Remote(conn grpc.ClientConnInterface) *Engine {
	e := &Engine{client: deciderv1.NewDeciderServiceClient(conn)}
	return e.ForCluster("")
}

// Revision is the revision of the installation the engine's decider holds:
// the given one's, or the remote decider's active revision (GetInstallation).
func (e *Engine) Revision(ctx context.Context) (string, error) {
	if e.inst != nil {
		return e.inst.Revision, nil
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	resp, err := e.client.GetInstallation(ctx, &deciderv1.GetInstallationRequest{})
	if err != nil {
		return "", fmt.Errorf("ask the decider for its installation: %w", err)
	}
	return resp.GetRevision(), nil
}
