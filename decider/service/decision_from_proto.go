package service

import (
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// DecisionFromProto converts a protobuf Decision back into the plain type:
// the inverse of DecisionToProto, which the round-trip test holds it to
// (the offline diff compares the decisions the in-process deciders answered).
func DecisionFromProto(d *deciderv1.Decision) *decision.Decision {
	out := &decision.Decision{
		DecisionID:           d.GetDecisionId(),
		Outcome:              decision.Outcome(d.GetOutcome()),
		SkipReason:           decision.SkipReason(d.GetSkipReason()),
		AuditAnnotations:     d.GetAuditAnnotations(),
		Plan:                 planFromProto(d.GetPlan()),
		InstallationRevision: d.GetInstallationRevision(),
		ClassesRevision:      d.GetClassesRevision(),
		Cluster:              d.GetCluster(),
		Caller:               d.GetCaller(),
	}
	for _, r := range d.GetRefusals() {
		out.Refusals = append(out.Refusals, decision.Refusal{
			Reason:   decision.Reason(r.GetReason()),
			Slug:     r.GetReasonSlug(),
			HTTPCode: r.GetHttpCode(),
			Message:  r.GetMessage(),
			Check:    r.GetCheck(),
			Key:      r.GetKey(),
			Render:   r.GetRender(),
		})
	}
	for _, w := range d.GetWarnings() {
		out.Warnings = append(out.Warnings, decision.Warning{Code: w.GetCode(), Message: w.GetMessage(), Render: w.GetRender()})
	}
	for _, r := range d.GetRenders() {
		render := decision.Render{
			Name:            r.GetName(),
			Source:          r.GetSource(),
			AgentContainers: r.GetAgentContainers(),
			Validated:       r.GetValidated(),
		}
		for _, v := range r.GetValues() {
			render.Values = append(render.Values, decision.ResolvedValue{
				Knob:          v.GetKnob(),
				Value:         v.GetValue(),
				Set:           v.GetSet(),
				Tier:          decision.Tier(v.GetTier()),
				Pinned:        v.GetPinned(),
				OverrideRule:  decision.OverrideRule(v.GetOverrideRule()),
				AnnotationKey: v.GetAnnotationKey(),
				Variable:      v.GetVariable(),
				DocumentPath:  v.GetDocumentPath(),
				Store:         v.GetStore(),
				Note:          v.GetNote(),
				Class:         v.GetClass(),
			})
		}
		out.Renders = append(out.Renders, render)
	}
	for _, g := range d.GetGates() {
		out.Gates = append(out.Gates, decision.GateRuling{
			Gate:      g.GetGate(),
			Subject:   g.GetSubject(),
			Render:    g.GetRender(),
			Passed:    g.GetPassed(),
			Namespace: g.GetNamespace(),
			Listing:   g.GetListing(),
		})
	}
	for _, r := range d.GetEnvPolicyResults() {
		out.EnvPolicyResults = append(out.EnvPolicyResults, decision.EnvPolicyRuleResult{
			Index:        r.GetIndex(),
			Reject:       r.GetReject(),
			Mode:         r.GetMode(),
			Applies:      r.GetApplies(),
			Failed:       r.GetFailed(),
			MatchedNames: r.GetMatchedNames(),
			MissingNames: r.GetMissingNames(),
			Evaluated:    r.GetEvaluated(),
		})
	}
	return out
}

func planFromProto(p *deciderv1.MutationPlan) *decision.Plan {
	if p == nil {
		return nil
	}
	out := &decision.Plan{
		StatusAnnotation: decision.Annotation{Key: p.GetStatusAnnotation().GetKey(), Value: p.GetStatusAnnotation().GetValue()},
		ImagePullSecret:  p.GetImagePullSecret(),
	}
	for _, v := range p.GetVolumes() {
		vol := decision.Volume{Name: v.GetName()}
		switch {
		case v.GetEmptyDir() != nil:
			vol.EmptyDir = &decision.EmptyDirVolume{Medium: v.GetEmptyDir().GetMedium(), SizeLimit: v.GetEmptyDir().GetSizeLimit()}
		case v.GetConfigMap() != nil:
			vol.ConfigMap = &decision.ConfigMapVolume{Name: v.GetConfigMap().GetName()}
		case v.GetSecret() != nil:
			vol.Secret = &decision.SecretVolume{SecretName: v.GetSecret().GetSecretName(), DefaultMode: v.GetSecret().GetDefaultMode()}
		}
		out.Volumes = append(out.Volumes, vol)
	}
	for _, m := range p.GetAppMounts() {
		out.AppMounts = append(out.AppMounts, decision.AppMount{
			ContainerIndex: m.GetContainerIndex(),
			ContainerName:  m.GetContainerName(),
			Mount:          mountFromProto(m.GetMount()),
		})
	}
	if rw := p.GetCommandRewrite(); rw != nil {
		out.CommandRewrite = &decision.CommandRewrite{
			ContainerIndex: rw.GetContainerIndex(),
			ContainerName:  rw.GetContainerName(),
			Command:        rw.GetCommand(),
			RemoveArgs:     rw.GetRemoveArgs(),
			LivenessProbe:  probeFromProto(rw.GetLivenessProbe()),
		}
	}
	for _, a := range p.GetAgents() {
		out.Agents = append(out.Agents, decision.AgentPlacement{
			List:      decision.ContainerList(a.GetList()),
			Position:  decision.Position(a.GetPosition()),
			Container: agentFromProto(a.GetContainer()),
		})
	}
	return out
}

func mountFromProto(m *deciderv1.VolumeMount) decision.VolumeMount {
	return decision.VolumeMount{Name: m.GetName(), MountPath: m.GetMountPath(), ReadOnly: m.GetReadOnly()}
}

func probeFromProto(p *deciderv1.Probe) *decision.Probe {
	if p == nil {
		return nil
	}
	out := &decision.Probe{PeriodSeconds: p.GetPeriodSeconds(), FailureThreshold: p.GetFailureThreshold()}
	switch {
	case p.GetHttpGet() != nil:
		g := p.GetHttpGet()
		out.HTTPGet = &decision.HTTPGetAction{Path: g.GetPath(), PortNumber: g.GetPortNumber(), PortName: g.GetPortName()}
	case p.GetExec() != nil:
		out.Exec = &decision.ExecAction{Command: p.GetExec().GetCommand()}
	}
	return out
}

func agentFromProto(c *deciderv1.AgentContainer) decision.AgentContainer {
	sc := c.GetSecurityContext()
	out := decision.AgentContainer{
		Name:     c.GetName(),
		Image:    c.GetImage(),
		Args:     c.GetArgs(),
		Requests: c.GetResources().GetRequests(),
		Limits:   c.GetResources().GetLimits(),
		SecurityContext: decision.SecurityContext{
			RunAsNonRoot:             sc.GetRunAsNonRoot(),
			RunAsUser:                sc.GetRunAsUser(),
			RunAsGroup:               sc.GetRunAsGroup(),
			AllowPrivilegeEscalation: sc.GetAllowPrivilegeEscalation(),
			CapabilitiesDrop:         sc.GetCapabilitiesDrop(),
			ReadOnlyRootFilesystem:   sc.GetReadOnlyRootFilesystem(),
			SeccompProfileType:       sc.GetSeccompProfileType(),
		},
		ReadinessProbe: probeFromProto(c.GetReadinessProbe()),
		StartupProbe:   probeFromProto(c.GetStartupProbe()),
		RestartPolicy:  c.GetRestartPolicy(),
		Render:         c.GetRender(),
	}
	for _, e := range c.GetEnv() {
		env := decision.AgentEnvVar{Name: e.GetName()}
		switch s := e.GetSource().(type) {
		case *deciderv1.AgentEnvVar_Value:
			value := s.Value
			env.Value = &value
		case *deciderv1.AgentEnvVar_SecretKeyRef:
			env.SecretKeyRef = &decision.SecretKeyRef{Name: s.SecretKeyRef.GetName(), Key: s.SecretKeyRef.GetKey()}
		case *deciderv1.AgentEnvVar_FieldRef:
			env.FieldRef = &decision.FieldRef{FieldPath: s.FieldRef.GetFieldPath()}
		}
		out.Env = append(out.Env, env)
	}
	for _, m := range c.GetVolumeMounts() {
		out.VolumeMounts = append(out.VolumeMounts, mountFromProto(m))
	}
	for _, p := range c.GetPorts() {
		out.Ports = append(out.Ports, decision.ContainerPort{ContainerPort: p.GetContainerPort(), Name: p.GetName()})
	}
	return out
}
