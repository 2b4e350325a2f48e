package installationreport

import (
	"fmt"
	"io"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutstate"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// Outputs are check-installation's -o values.
var Outputs = []string{"text", "json"}

// New is check-installation's answer (spec 07 §1.6): the installation as
// GetInstallation answers it, with the rollout r beside it (nil: none) as
// GetInstallation.rollout has it before any comparison.
func New(inst *installation.Installation, r *rollout.Rollout) *deciderv1.GetInstallationResponse {
	resp := service.InstallationToProto(inst, nil)
	if r != nil {
		resp.Rollout = rolloutstate.RolloutToProto(r, r.Inert(inst.Revision))
	}
	return resp
}

// Write writes the answer: its warnings to warnings, one line each, then
// as output says — "json", GetInstallationResponse protojson; "text", the
// revision, the tables (WriteText) and the rollout.
func Write(w, warnings io.Writer, resp *deciderv1.GetInstallationResponse, output string) error {
	for _, line := range resp.GetWarnings() {
		fmt.Fprintln(warnings, "warning: "+line)
	}
	if output == "json" {
		b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(resp)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	fmt.Fprintln(w, "installation is valid: "+resp.GetRevision())
	WriteText(w, resp)
	writeRollout(w, resp.GetRollout())
	return nil
}

// writeRollout prints the rollout beside the installation (spec 10 §2).
func writeRollout(w io.Writer, r *deciderv1.RolloutState) {
	if r == nil {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "rollout is valid: candidate "+r.GetCandidateRevision())
	if r.GetInert() {
		fmt.Fprintln(w, "  inert: the candidate is the installation (the same revision); it changes nothing")
	}
	sl := r.GetSlice()
	clusters := "every cluster"
	if !sl.GetEveryCluster() {
		clusters = strings.Join(sl.GetClusters(), ", ")
	}
	namespaces := "none"
	if len(sl.GetNamespaces()) > 0 {
		namespaces = strings.Join(sl.GetNamespaces(), ", ")
	}
	fmt.Fprintf(w, "  document: %s\n  stage: %s\n  canary: %v %% of workloads, namespaces %s, clusters %s\n  guard: newRefusals %s\n",
		r.GetDocumentPath(), rolloutstate.StageName(r.GetStage()), sl.GetPercent(), namespaces, clusters, rolloutstate.GuardName(r.GetGuard()))
}
