package service

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// InstallationToProto is installationToProto for the offline commands
// (check-installation -o json).
func InstallationToProto(inst *installation.Installation, last *installationloader.ReloadStatus) *deciderv1.GetInstallationResponse {
	return installationToProto(inst, last)
}

// installationToProto renders the installation in force and the latest
// reload attempt as GetInstallationResponse (spec 06 §5). Values are
// URL-redacted; Secret-shaped values are the references the installer wrote
// (names, never contents); env-policy values are never shown, only has_value.
func installationToProto(inst *installation.Installation, last *installationloader.ReloadStatus) *deciderv1.GetInstallationResponse {
	out := &deciderv1.GetInstallationResponse{
		Revision:          inst.Revision,
		DocumentPath:      inst.DocumentPath,
		DocumentPresent:   inst.DocumentPresent,
		BuiltInAgentImage: installation.BuiltInAgentImage,
		Stores:            append([]string(nil), installation.Stores...),
		Warnings:          append([]string(nil), inst.Warnings...),
	}
	if !inst.LoadedAt.IsZero() {
		out.LoadedAt = timestamppb.New(inst.LoadedAt)
	}
	for _, s := range inst.Settings {
		out.Settings = append(out.Settings, &deciderv1.Setting{
			Name:       s.Name,
			Variable:   s.Variable,
			ChartValue: s.ChartValue,
			Value:      s.Value,
			Set:        s.Set,
			Marker:     markerToProto(s.Marker),
			Pinned:     s.Pinned,
			Source:     sourceToProto(s.Source),
			Origin:     s.Origin,
			BuiltIn:    s.BuiltIn,
		})
	}
	for _, store := range installation.Stores {
		g, ok := inst.Stores[store]
		if !ok {
			continue
		}
		out.StoreDefaults = append(out.StoreDefaults, storeDefaultsToProto(inst, g))
	}
	for _, g := range []installation.Gate{inst.AgentEnvAllow, inst.SourceAllow, inst.SourceDeny} {
		pg := &deciderv1.Gate{Name: g.Name, Variable: g.Variable, Source: sourceToProto(g.Source), Origin: g.Origin}
		for _, grp := range g.Groups {
			pg.Groups = append(pg.Groups, &deciderv1.GateGroup{Namespace: grp.Namespace, Names: append([]string(nil), grp.Names...)})
		}
		out.Gates = append(out.Gates, pg)
	}
	if p := inst.EnvPolicy; p != nil {
		out.EnvPolicy = envPolicyToProto(p)
	}
	out.LastReload = reloadToProto(last)
	return out
}

// reloadToProto is a load attempt as GetInstallation shows it (nil: none):
// the installation's last_reload, and the rollout document's.
func reloadToProto(last *installationloader.ReloadStatus) *deciderv1.ReloadStatus {
	if last == nil {
		return nil
	}
	rs := &deciderv1.ReloadStatus{Ok: last.OK, Problems: append([]string(nil), last.Problems...), AttemptedRevision: last.AttemptedRevision,
		ProblemFields: problemFieldsToProto(last)}
	if !last.At.IsZero() {
		rs.At = timestamppb.New(last.At)
	}
	return rs
}

// problemFieldsToProto types each problem line of a failed reload: where it
// is, the value (URL userinfo redacted, as in the line) and the expectation.
// A line without its typed problem (the file could not be loaded at all)
// carries its text only.
func problemFieldsToProto(last *installationloader.ReloadStatus) []*deciderv1.InstallationProblem {
	if len(last.Problems) == 0 {
		return nil
	}
	out := make([]*deciderv1.InstallationProblem, len(last.Problems))
	for i, line := range last.Problems {
		p := installation.Problem{Text: line}
		if i < len(last.Items) && last.Items[i].String() == line {
			p = last.Items[i]
		}
		out[i] = &deciderv1.InstallationProblem{Setting: p.Setting, Path: p.Path, HiddenBy: p.HiddenBy,
			Value: redact.URL(p.Value), Expected: p.Expected, Text: line}
	}
	return out
}

func storeDefaultsToProto(inst *installation.Installation, g *installation.StoreGroup) *deciderv1.StoreDefaults {
	origin := installation.StoreGroupOrigin(inst, g)
	sd := &deciderv1.StoreDefaults{
		Store:       g.Store,
		Overridable: g.Overridable,
		Source:      sourceToProto(g.Source),
		Origin:      origin,
	}
	for _, k := range g.Order {
		v := g.Knobs[k]
		knobOrigin := origin
		if v.Source == installation.SourceDocument && v.DocumentPath != "" {
			knobOrigin = installation.DocumentOrigin(inst.DocumentPath, v.DocumentPath)
		}
		sd.Knobs = append(sd.Knobs, &deciderv1.Setting{
			Name:       k,
			Variable:   v.Variable,
			ChartValue: "agent.defaults.perStore." + g.Store,
			Value:      redact.URL(v.Text),
			Set:        true,
			Marker:     markerToProto(v.Marker),
			Pinned:     v.Pinned,
			Source:     sourceToProto(v.Source),
			Origin:     knobOrigin,
			BuiltIn:    installation.BuiltIn(k),
		})
	}
	return sd
}

func envPolicyToProto(p *envpolicy.Policy) *deciderv1.EnvPolicy {
	targets := p.Targets
	if len(targets) == 0 {
		targets = []string{envpolicy.TargetPods, envpolicy.TargetWorkloads}
	}
	out := &deciderv1.EnvPolicy{Targets: append([]string(nil), targets...), Origin: p.Origin}
	switch p.Source {
	case envpolicy.SourceEnvironment:
		out.Source = deciderv1.SettingSource_SETTING_SOURCE_ENVIRONMENT
	case envpolicy.SourceDocument:
		out.Source = deciderv1.SettingSource_SETTING_SOURCE_DOCUMENT
	}
	for i, r := range p.Rules {
		pr := &deciderv1.EnvPolicyRule{
			Index:      int32(i),
			Reject:     r.Reject,
			Namespaces: append([]string(nil), r.Namespaces...),
			Mode:       r.Mode,
		}
		if pr.Reject == "" {
			pr.Reject = envpolicy.RejectAnyIn
		}
		if pr.Mode == "" {
			pr.Mode = envpolicy.ModeEnforce
		}
		for _, v := range r.Variables {
			// A listed "" means any value, like an absent one (spec 05 §2.1).
			hasValue := v.HasValue && v.Value != ""
			pr.EnvironmentVariables = append(pr.EnvironmentVariables, &deciderv1.EnvPolicyVariable{Name: v.Name, HasValue: hasValue})
		}
		out.Rules = append(out.Rules, pr)
	}
	return out
}

func markerToProto(m installation.Marker) deciderv1.Marker {
	switch m {
	case installation.MarkerPinned:
		return deciderv1.Marker_MARKER_PINNED
	case installation.MarkerOverridable:
		return deciderv1.Marker_MARKER_OVERRIDABLE
	}
	return deciderv1.Marker_MARKER_NONE
}

func sourceToProto(s installation.Source) deciderv1.SettingSource {
	switch s {
	case installation.SourceEnvironment:
		return deciderv1.SettingSource_SETTING_SOURCE_ENVIRONMENT
	case installation.SourceDocument:
		return deciderv1.SettingSource_SETTING_SOURCE_DOCUMENT
	case installation.SourceBuiltIn:
		return deciderv1.SettingSource_SETTING_SOURCE_BUILT_IN
	}
	return deciderv1.SettingSource_SETTING_SOURCE_UNSET
}
