package resolve

import (
	"path"
	"slices"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// conflicts is B61 (spec 04 §4.3), against the names and paths the plan
// actually adds: agent containers, then volumes, then mount paths.
func conflicts(s *state, p *decision.Plan) *decision.Refusal {
	for i := range p.Agents {
		c := &p.Agents[i].Container
		if s.podHasContainer(c.Name) {
			return refuseAs(registry.RefuseConflict, "conflict.container", "", c.Render, "the pod already has a container named "+q(c.Name)+
				`, and the injection needs that name for its agent: rename that container, or set dynamic-config.rs/inject to "false"`)
		}
	}
	for i := range p.Volumes {
		if slices.Contains(s.f.VolumeNames, p.Volumes[i].Name) {
			return refuseAs(registry.RefuseConflict, "conflict.volume", "", "", "the pod already has a volume named "+q(p.Volumes[i].Name)+
				`, and the injection needs that name: rename that volume, or set dynamic-config.rs/inject to "false"`)
		}
	}
	dir := path.Dir(s.def.vals[registry.Path].text)
	for _, m := range p.AppMounts {
		if int(m.ContainerIndex) >= len(s.f.Containers) || m.ContainerIndex < 0 {
			continue
		}
		for _, mp := range s.f.Containers[m.ContainerIndex].VolumeMountPaths {
			if path.Clean(mp) == dir {
				return refuseAs(registry.RefuseConflict, "conflict.mount-path", key(&s.def, registry.Path), "", "container "+q(m.ContainerName)+
					" already mounts something at "+q(dir)+", where the injection mounts the rendered document: move that mount, choose another directory for dynamic-config.rs/path, or leave the container out with dynamic-config.rs/inject-containers")
			}
		}
	}
	return nil
}

// podHasContainer looks through spec.containers, initContainers and ephemeralContainers.
func (s *state) podHasContainer(name string) bool {
	for _, list := range [3][]decision.Container{s.f.Containers, s.f.InitContainers, s.f.EphemeralContainers} {
		for i := range list {
			if list[i].Name == name {
				return true
			}
		}
	}
	return false
}
