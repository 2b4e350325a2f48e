package server

import (
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// healthServices are the health service names the decider reports: the
// server as a whole and the DeciderService.
var healthServices = []string{"", deciderv1.DeciderService_ServiceDesc.ServiceName}

// RefreshHealth sets the health status from the store: SERVING while an
// installation is held, NOT_SERVING before. After Shutdown began it stays
// NOT_SERVING.
func (s *Server) RefreshHealth() {
	status := healthpb.HealthCheckResponse_NOT_SERVING
	if s.Ready() {
		status = healthpb.HealthCheckResponse_SERVING
	}
	for _, name := range healthServices {
		s.health.SetServingStatus(name, status)
	}
}
