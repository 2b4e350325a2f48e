package service

import (
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// DecisionToProto converts a plain decision into its protobuf message
// (spec 06 §3–4), every field.
func DecisionToProto(d *decision.Decision) *deciderv1.Decision {
	return DecisionToProtoView(d, deciderv1.DecisionView_DECISION_VIEW_FULL)
}

// DecisionToProtoView converts a plain decision into the fields view asks
// for: DECISION_VIEW_PLAN leaves out the renders with provenance, the gate
// rulings and the env-policy results (what an admission answer is not built
// from); FULL and UNSPECIFIED convert every field.
func DecisionToProtoView(d *decision.Decision, view deciderv1.DecisionView) *deciderv1.Decision {
	out := &deciderv1.Decision{
		DecisionId:           d.DecisionID,
		Outcome:              deciderv1.Outcome(d.Outcome),
		SkipReason:           deciderv1.SkipReason(d.SkipReason),
		AuditAnnotations:     d.AuditAnnotations,
		Plan:                 planToProto(d.Plan),
		InstallationRevision: d.InstallationRevision,
		ClassesRevision:      d.ClassesRevision,
		Cluster:              d.Cluster,
		Caller:               d.Caller,
	}
	if n := len(d.Refusals); n > 0 {
		out.Refusals = make([]*deciderv1.Refusal, n)
		for i, r := range d.Refusals {
			out.Refusals[i] = &deciderv1.Refusal{
				Reason:     deciderv1.RefusalReason(r.Reason),
				ReasonSlug: r.Slug,
				HttpCode:   r.HTTPCode,
				Message:    r.Message,
				Check:      r.Check,
				Key:        r.Key,
				Render:     r.Render,
			}
		}
	}
	if n := len(d.Warnings); n > 0 {
		out.Warnings = make([]*deciderv1.Warning, n)
		for i, w := range d.Warnings {
			out.Warnings[i] = &deciderv1.Warning{Code: w.Code, Message: w.Message, Render: w.Render}
		}
	}
	if view == deciderv1.DecisionView_DECISION_VIEW_PLAN {
		return out
	}
	if n := len(d.Renders); n > 0 {
		out.Renders = make([]*deciderv1.Render, n)
		for i := range d.Renders {
			out.Renders[i] = renderToProto(&d.Renders[i])
		}
	}
	if n := len(d.Gates); n > 0 {
		out.Gates = make([]*deciderv1.GateRuling, n)
		for i, g := range d.Gates {
			out.Gates[i] = &deciderv1.GateRuling{
				Gate:      g.Gate,
				Subject:   g.Subject,
				Render:    g.Render,
				Passed:    g.Passed,
				Namespace: g.Namespace,
				Listing:   g.Listing,
			}
		}
	}
	if n := len(d.EnvPolicyResults); n > 0 {
		out.EnvPolicyResults = make([]*deciderv1.EnvPolicyRuleResult, n)
		for i, r := range d.EnvPolicyResults {
			out.EnvPolicyResults[i] = &deciderv1.EnvPolicyRuleResult{
				Index:        r.Index,
				Reject:       r.Reject,
				Mode:         r.Mode,
				Applies:      r.Applies,
				Failed:       r.Failed,
				MatchedNames: r.MatchedNames,
				MissingNames: r.MissingNames,
				Evaluated:    r.Evaluated,
			}
		}
	}
	return out
}

func renderToProto(r *decision.Render) *deciderv1.Render {
	out := &deciderv1.Render{
		Name:            r.Name,
		Source:          r.Source,
		AgentContainers: r.AgentContainers,
		Validated:       r.Validated,
	}
	if n := len(r.Values); n > 0 {
		values := make([]deciderv1.ResolvedValue, n) // one allocation for the knobs
		out.Values = make([]*deciderv1.ResolvedValue, n)
		for i := range r.Values {
			v := &r.Values[i]
			pv := &values[i]
			pv.Knob = v.Knob
			pv.Value = v.Value
			pv.Set = v.Set
			pv.Tier = deciderv1.Tier(v.Tier)
			pv.Pinned = v.Pinned
			pv.OverrideRule = deciderv1.OverrideRule(v.OverrideRule)
			pv.AnnotationKey = v.AnnotationKey
			pv.Variable = v.Variable
			pv.DocumentPath = v.DocumentPath
			pv.Store = v.Store
			pv.Note = v.Note
			pv.Class = v.Class
			out.Values[i] = pv
		}
	}
	return out
}

func planToProto(p *decision.Plan) *deciderv1.MutationPlan {
	if p == nil {
		return nil
	}
	out := &deciderv1.MutationPlan{
		StatusAnnotation: &deciderv1.Annotation{Key: p.StatusAnnotation.Key, Value: p.StatusAnnotation.Value},
		ImagePullSecret:  p.ImagePullSecret,
	}
	if p.RevisionAnnotation.Key != "" {
		out.RevisionAnnotation = &deciderv1.Annotation{Key: p.RevisionAnnotation.Key, Value: p.RevisionAnnotation.Value}
	}
	if n := len(p.Volumes); n > 0 {
		out.Volumes = make([]*deciderv1.Volume, n)
		for i := range p.Volumes {
			out.Volumes[i] = volumeToProto(&p.Volumes[i])
		}
	}
	if n := len(p.AppMounts); n > 0 {
		out.AppMounts = make([]*deciderv1.AppMount, n)
		for i, m := range p.AppMounts {
			out.AppMounts[i] = &deciderv1.AppMount{
				ContainerIndex: m.ContainerIndex,
				ContainerName:  m.ContainerName,
				Mount:          mountToProto(m.Mount),
			}
		}
	}
	if rw := p.CommandRewrite; rw != nil {
		out.CommandRewrite = &deciderv1.CommandRewrite{
			ContainerIndex: rw.ContainerIndex,
			ContainerName:  rw.ContainerName,
			Command:        rw.Command,
			RemoveArgs:     rw.RemoveArgs,
			LivenessProbe:  probeToProto(rw.LivenessProbe),
		}
	}
	if n := len(p.Agents); n > 0 {
		out.Agents = make([]*deciderv1.AgentPlacement, n)
		for i := range p.Agents {
			a := &p.Agents[i]
			out.Agents[i] = &deciderv1.AgentPlacement{
				List:      deciderv1.ContainerList(a.List),
				Position:  deciderv1.Position(a.Position),
				Container: agentToProto(&a.Container),
			}
		}
	}
	return out
}

func volumeToProto(v *decision.Volume) *deciderv1.Volume {
	out := &deciderv1.Volume{Name: v.Name}
	switch {
	case v.EmptyDir != nil:
		out.Source = &deciderv1.Volume_EmptyDir{EmptyDir: &deciderv1.EmptyDirVolume{
			Medium: v.EmptyDir.Medium, SizeLimit: v.EmptyDir.SizeLimit}}
	case v.ConfigMap != nil:
		out.Source = &deciderv1.Volume_ConfigMap{ConfigMap: &deciderv1.ConfigMapVolume{Name: v.ConfigMap.Name}}
	case v.Secret != nil:
		out.Source = &deciderv1.Volume_Secret{Secret: &deciderv1.SecretVolume{
			SecretName: v.Secret.SecretName, DefaultMode: v.Secret.DefaultMode}}
	}
	return out
}

func mountToProto(m decision.VolumeMount) *deciderv1.VolumeMount {
	return &deciderv1.VolumeMount{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
}

func probeToProto(p *decision.Probe) *deciderv1.Probe {
	if p == nil {
		return nil
	}
	out := &deciderv1.Probe{PeriodSeconds: p.PeriodSeconds, FailureThreshold: p.FailureThreshold}
	switch {
	case p.HTTPGet != nil:
		get := &deciderv1.HttpGetAction{Path: p.HTTPGet.Path}
		if p.HTTPGet.PortName != "" {
			get.Port = &deciderv1.HttpGetAction_PortName{PortName: p.HTTPGet.PortName}
		} else {
			get.Port = &deciderv1.HttpGetAction_PortNumber{PortNumber: p.HTTPGet.PortNumber}
		}
		out.Handler = &deciderv1.Probe_HttpGet{HttpGet: get}
	case p.Exec != nil:
		out.Handler = &deciderv1.Probe_Exec{Exec: &deciderv1.ExecAction{Command: p.Exec.Command}}
	}
	return out
}

func agentToProto(c *decision.AgentContainer) *deciderv1.AgentContainer {
	sc := &c.SecurityContext
	out := &deciderv1.AgentContainer{
		Name:      c.Name,
		Image:     c.Image,
		Args:      c.Args,
		Resources: &deciderv1.Resources{Requests: c.Requests, Limits: c.Limits},
		SecurityContext: &deciderv1.SecurityContext{
			RunAsNonRoot:             sc.RunAsNonRoot,
			RunAsUser:                sc.RunAsUser,
			RunAsGroup:               sc.RunAsGroup,
			AllowPrivilegeEscalation: sc.AllowPrivilegeEscalation,
			CapabilitiesDrop:         sc.CapabilitiesDrop,
			ReadOnlyRootFilesystem:   sc.ReadOnlyRootFilesystem,
			SeccompProfileType:       sc.SeccompProfileType,
		},
		ReadinessProbe: probeToProto(c.ReadinessProbe),
		StartupProbe:   probeToProto(c.StartupProbe),
		RestartPolicy:  c.RestartPolicy,
		Render:         c.Render,
	}
	if n := len(c.Env); n > 0 {
		out.Env = make([]*deciderv1.AgentEnvVar, n)
		for i := range c.Env {
			out.Env[i] = agentEnvToProto(&c.Env[i])
		}
	}
	if n := len(c.VolumeMounts); n > 0 {
		out.VolumeMounts = make([]*deciderv1.VolumeMount, n)
		for i, m := range c.VolumeMounts {
			out.VolumeMounts[i] = mountToProto(m)
		}
	}
	if n := len(c.Ports); n > 0 {
		out.Ports = make([]*deciderv1.ContainerPort, n)
		for i, p := range c.Ports {
			out.Ports[i] = &deciderv1.ContainerPort{ContainerPort: p.ContainerPort, Name: p.Name}
		}
	}
	return out
}

func agentEnvToProto(e *decision.AgentEnvVar) *deciderv1.AgentEnvVar {
	out := &deciderv1.AgentEnvVar{Name: e.Name}
	switch {
	case e.Value != nil:
		out.Source = &deciderv1.AgentEnvVar_Value{Value: *e.Value}
	case e.SecretKeyRef != nil:
		out.Source = &deciderv1.AgentEnvVar_SecretKeyRef{SecretKeyRef: &deciderv1.SecretKeyRef{
			Name: e.SecretKeyRef.Name, Key: e.SecretKeyRef.Key}}
	case e.FieldRef != nil:
		out.Source = &deciderv1.AgentEnvVar_FieldRef{FieldRef: &deciderv1.FieldRef{FieldPath: e.FieldRef.FieldPath}}
	}
	return out
}
