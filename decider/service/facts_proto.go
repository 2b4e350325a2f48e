package service

import (
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// The plain enums mirror the protobuf enums number for number (spec 06 §2.5,
// §3); the conversions below rely on it and a test pins it.

// FactsFromProto converts a request's PodFacts into the plain facts (the
// decider's first step; exported for the load tool's DecidePlan cell).
func FactsFromProto(purpose deciderv1.Purpose, p *deciderv1.PodFacts) *decision.Facts {
	return &decision.Facts{
		Purpose:                       decision.Purpose(purpose),
		Namespace:                     p.GetNamespace(),
		Name:                          p.GetName(),
		GenerateName:                  p.GetGenerateName(),
		Operation:                     decision.Operation(p.GetOperation()),
		DryRun:                        p.GetDryRun(),
		Annotations:                   p.GetAnnotations(),
		Labels:                        p.GetLabels(),
		Containers:                    containersFromProto(p.GetContainers()),
		InitContainers:                containersFromProto(p.GetInitContainers()),
		EphemeralContainers:           containersFromProto(p.GetEphemeralContainers()),
		RunAsUser:                     p.RunAsUser,
		RunAsGroup:                    p.RunAsGroup,
		FSGroup:                       p.FsGroup,
		SupplementalGroups:            p.GetSupplementalGroups(),
		TerminationGracePeriodSeconds: p.TerminationGracePeriodSeconds,
		VolumeNames:                   p.GetVolumeNames(),
		ImagePullSecretNames:          p.GetImagePullSecretNames(),
		ResourceKind:                  decision.ResourceKind(p.GetResourceKind()),
		RequestUID:                    p.GetRequestUid(),
		UserName:                      p.GetUserName(),
		WorkloadAnnotationKeys:        p.GetWorkloadAnnotationKeys(),
		RestartPolicy:                 p.GetRestartPolicy(),
		AutomountServiceAccountToken:  p.AutomountServiceAccountToken,
		QoSGuaranteed:                 p.GetQosGuaranteed(),
		ControllerKind:                p.GetController().GetKind(),
		ControllerName:                p.GetController().GetName(),
	}
}

func containersFromProto(cs []*deciderv1.Container) []decision.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]decision.Container, len(cs))
	for i, c := range cs {
		out[i] = decision.Container{
			Name:             c.GetName(),
			HasCommand:       c.GetHasCommand(),
			Command:          c.GetCommand(),
			HasArgs:          c.GetHasArgs(),
			Args:             c.GetArgs(),
			HasLivenessProbe: c.GetHasLivenessProbe(),
			RunAsUser:        c.RunAsUser,
			RunAsGroup:       c.RunAsGroup,
			Env:              envFromProto(c.GetEnv()),
			VolumeMountPaths: c.GetVolumeMountPaths(),
		}
	}
	return out
}

func envFromProto(env []*deciderv1.EnvVar) []decision.EnvVar {
	if len(env) == 0 {
		return nil
	}
	out := make([]decision.EnvVar, len(env))
	for i, e := range env {
		out[i] = decision.EnvVar{Name: e.GetName(), Value: e.GetValue(), ValueFrom: e.GetValueFrom()}
	}
	return out
}

// FactsToProto converts plain facts into a request's PodFacts (the inverse of
// the decider's conversion; used by tests and in-process callers).
func FactsToProto(f *decision.Facts) *deciderv1.PodFacts {
	return &deciderv1.PodFacts{
		Namespace:                     f.Namespace,
		Name:                          f.Name,
		GenerateName:                  f.GenerateName,
		Operation:                     deciderv1.Operation(f.Operation),
		DryRun:                        f.DryRun,
		Annotations:                   f.Annotations,
		Labels:                        f.Labels,
		Containers:                    containersToProto(f.Containers),
		InitContainers:                containersToProto(f.InitContainers),
		EphemeralContainers:           containersToProto(f.EphemeralContainers),
		RunAsUser:                     f.RunAsUser,
		RunAsGroup:                    f.RunAsGroup,
		FsGroup:                       f.FSGroup,
		SupplementalGroups:            f.SupplementalGroups,
		TerminationGracePeriodSeconds: f.TerminationGracePeriodSeconds,
		VolumeNames:                   f.VolumeNames,
		ImagePullSecretNames:          f.ImagePullSecretNames,
		ResourceKind:                  deciderv1.ResourceKind(f.ResourceKind),
		RequestUid:                    f.RequestUID,
		UserName:                      f.UserName,
		WorkloadAnnotationKeys:        f.WorkloadAnnotationKeys,
		RestartPolicy:                 f.RestartPolicy,
		AutomountServiceAccountToken:  f.AutomountServiceAccountToken,
		QosGuaranteed:                 f.QoSGuaranteed,
		Controller:                    controllerToProto(f.ControllerKind, f.ControllerName),
	}
}

func controllerToProto(kind, name string) *deciderv1.ControllerRef {
	if kind == "" && name == "" {
		return nil
	}
	return &deciderv1.ControllerRef{Kind: kind, Name: name}
}

func containersToProto(cs []decision.Container) []*deciderv1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]*deciderv1.Container, len(cs))
	for i := range cs {
		c := &cs[i]
		out[i] = &deciderv1.Container{
			Name:             c.Name,
			HasCommand:       c.HasCommand,
			Command:          c.Command,
			HasArgs:          c.HasArgs,
			Args:             c.Args,
			HasLivenessProbe: c.HasLivenessProbe,
			RunAsUser:        c.RunAsUser,
			RunAsGroup:       c.RunAsGroup,
			Env:              envToProto(c.Env),
			VolumeMountPaths: c.VolumeMountPaths,
		}
	}
	return out
}

func envToProto(env []decision.EnvVar) []*deciderv1.EnvVar {
	if len(env) == 0 {
		return nil
	}
	out := make([]*deciderv1.EnvVar, len(env))
	for i, e := range env {
		v := &deciderv1.EnvVar{Name: e.Name, ValueFrom: e.ValueFrom}
		if !e.ValueFrom {
			value := e.Value
			v.Value = &value
		}
		out[i] = v
	}
	return out
}
