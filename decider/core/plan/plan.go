package plan

import (
	"slices"
	"strconv"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// Build returns the mutation plan of spec 03 §2–3 for values the resolver has
// already resolved and validated. Its elements are in op order.
func Build(in *Input) *decision.Plan {
	return &decision.Plan{
		StatusAnnotation:   decision.Annotation{Key: StatusAnnotationKey, Value: StatusAnnotationValue},
		RevisionAnnotation: revisionStamp(in),
		Volumes:            volumes(in),
		AppMounts:          appMounts(in),
		ImagePullSecret:    pullSecret(in),
		CommandRewrite:     commandRewrite(in),
		Agents:             agents(in),
	}
}

// revisionStamp is the stamp of the installation deciding (spec 10 §8): under
// a rollout's canary that is the candidate, whose installation builds the plan.
func revisionStamp(in *Input) decision.Annotation {
	return decision.Annotation{Key: RevisionAnnotationKey, Value: annotation.Stamp(installationOf(in).Revision)}
}

// RenderAgents returns the names of the agent containers the plan gives one
// render ("" = the default render), in plan order.
func RenderAgents(p *decision.Plan, render string) []string {
	if p == nil {
		return nil
	}
	var names []string
	for i := range p.Agents {
		if c := &p.Agents[i].Container; c.Render == render {
			names = append(names, c.Name)
		}
	}
	return names
}

// agents places every agent (spec 03 §2.1): the init agents first (the
// default one first or appended, then the named ones appended), then the
// watching agents (native sidecars appended to initContainers with
// restartPolicy Always, else appended to containers; a pod that must finish
// gets native sidecars unless it chose the placement, issue 20).
func agents(in *Input) []decision.AgentPlacement {
	mode, _ := lookup(&in.Default, registry.Mode)
	withInit := mode == "init" || mode == "both"
	withWatch := watches(in)
	native := nativeWatchers(in)
	initFirst, _ := lookup(&in.Default, registry.InitFirst)

	inst := installationOf(in)
	fleetImage := agentImage(inst)
	defaultImage := fleetImage
	if s, ok := in.Default.Values.Get(registry.AgentImage); ok {
		defaultImage = s
	}
	dir := sharedDir(in)

	views := make([]view, 0, 1+len(in.Named))
	views = append(views, view{in: in, render: &in.Default, dir: dir})
	for i := range in.Named {
		views = append(views, view{in: in, render: &in.Named[i], name: in.Named[i].Name, dir: dir})
	}

	placements := make([]decision.AgentPlacement, 0, 2*len(views))
	if withInit {
		for i := range views {
			v := &views[i]
			p := decision.AgentPlacement{List: decision.ListInitContainers, Position: decision.PositionAppend}
			if v.isDefault() && initFirst == "true" {
				p.Position = decision.PositionFirst
			}
			p.Container = agentContainer(v, initAgent, imageFor(v, defaultImage, fleetImage), false)
			placements = append(placements, p)
		}
	}
	if withWatch {
		list := decision.ListContainers
		if native {
			list = decision.ListInitContainers
		}
		for i := range views {
			v := &views[i]
			placements = append(placements, decision.AgentPlacement{
				List:      list,
				Position:  decision.PositionAppend,
				Container: agentContainer(v, watchingAgent, imageFor(v, defaultImage, fleetImage), native),
			})
		}
	}
	return placements
}

// imageFor: the pod's agent-image serves the default render only (spec 03 §3.1).
func imageFor(v *view, defaultImage, fleetImage string) string {
	if v.isDefault() {
		return defaultImage
	}
	return fleetImage
}

// appMounts mounts the shared volume into every spec.containers entry, or
// only those inject-containers names, in ascending index order (spec 03 §2.2).
func appMounts(in *Input) []decision.AppMount {
	dir := sharedDir(in)
	selected, only := in.Default.Values.Get(registry.InjectContainers)
	var names []string
	if only {
		names = listItems(selected)
	}
	mounts := make([]decision.AppMount, 0, len(in.pod().Containers))
	for i, c := range in.pod().Containers {
		if only && !slices.Contains(names, c.Name) {
			continue
		}
		mounts = append(mounts, decision.AppMount{
			ContainerIndex: int32(i),
			ContainerName:  c.Name,
			Mount:          decision.VolumeMount{Name: SharedVolumeName, MountPath: dir},
		})
	}
	return mounts
}

// listItems splits a comma-separated list, trimming items and dropping empty ones.
func listItems(s string) []string {
	var items []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

// pullSecret is the installation's pull secret unless the pod already lists it.
func pullSecret(in *Input) string {
	secret := installationOf(in).PullSecret
	if secret == "" || slices.Contains(in.pod().ImagePullSecretNames, secret) {
		return ""
	}
	return secret
}

// commandRewrite wraps the env-inject container's command so the rendered
// file is sourced first (spec 03 §4.3); env-restart adds the liveness probe.
func commandRewrite(in *Input) *decision.CommandRewrite {
	target, ok := in.Default.Values.Get(registry.EnvInject)
	if !ok {
		return nil
	}
	index := -1
	for i := range in.pod().Containers {
		if in.pod().Containers[i].Name == target {
			index = i
			break
		}
	}
	if index < 0 {
		return nil // env-inject.missing refused before the plan
	}
	c := &in.pod().Containers[index]
	file := in.Default.Values.Text(registry.Path)
	restart := in.Default.Values.Text(registry.EnvRestart) == "true"

	script := "set -a; . " + file + "; set +a; exec \"$@\""
	if restart {
		script = "set -a; . " + file + "; set +a; export " + EnvFingerprintVariable +
			"=\"$(cksum < " + file + ")\"; exec \"$@\""
	}
	command := make([]string, 0, 4+len(c.Command)+len(c.Args))
	command = append(command, "/bin/sh", "-c", script, EnvInjectWrapperName)
	command = append(command, c.Command...)
	command = append(command, c.Args...)

	rw := &decision.CommandRewrite{
		ContainerIndex: int32(index),
		ContainerName:  c.Name,
		Command:        command,
		RemoveArgs:     c.HasArgs,
	}
	if restart {
		watch, _ := lookupNumber(&in.Default, registry.WatchSeconds)
		rw.LivenessProbe = &decision.Probe{
			Exec: &decision.ExecAction{Command: []string{
				"/bin/sh", "-c",
				"test \"$(cksum < " + file + ")\" = \"$" + EnvFingerprintVariable + "\"",
			}},
			PeriodSeconds:    livenessPeriod(watch),
			FailureThreshold: 1,
		}
	}
	return rw
}

// livenessPeriod is clamp(watch-seconds, 10, 120).
func livenessPeriod(n uint64) int32 {
	switch {
	case n < 10:
		return 10
	case n > 120:
		return 120
	}
	return int32(n)
}

// itoa prints a small count.
func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
