package plan

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// volumeRow is one auxiliary volume: the knob whose value makes it exist and
// how that value becomes the volume source.
type volumeRow struct {
	aux  auxiliary
	knob registry.ID
	// secretMode is the Secret's defaultMode; 0 means a ConfigMap volume.
	secretMode int32
}

// The volume order of spec 03 §3.8: the default render's volumes before the
// named renders' (rows 2–6), the named renders' (row 7), then the default
// render's template and schema (rows 8–9).
var (
	defaultVolumesBefore = []volumeRow{
		{auxCA, registry.CAConfigMap, 0},
		{auxSSH, registry.SSHSecret, modeOwnerRead},
		{auxExtra, registry.ExtraSecret, modeAllRead},
		{auxCanary, registry.CanaryConfigMap, 0},
		{auxClientTLS, registry.TLSSecret, modeAllRead},
	}
	namedVolumes = []volumeRow{
		{auxCA, registry.CAConfigMap, 0},
		{auxSSH, registry.SSHSecret, modeOwnerRead},
		{auxClientTLS, registry.TLSSecret, modeAllRead},
		{auxTemplate, registry.TemplateConfigMap, 0},
	}
	defaultVolumesAfter = []volumeRow{
		{auxTemplate, registry.TemplateConfigMap, 0},
		{auxSchema, registry.SchemaConfigMap, 0},
	}
)

// volumes lists the volumes to add to the pod, in op order.
func volumes(in *Input) []decision.Volume {
	vols := make([]decision.Volume, 0, 4)
	vols = append(vols, sharedVolume(in))
	vols = appendVolumes(vols, defaultVolumesBefore, &in.Default)
	for i := range in.Named {
		vols = appendVolumes(vols, namedVolumes, &in.Named[i])
	}
	return appendVolumes(vols, defaultVolumesAfter, &in.Default)
}

// sharedVolume is the emptyDir every render writes into.
func sharedVolume(in *Input) decision.Volume {
	medium := "Memory"
	if s, _ := lookup(&in.Default, registry.VolumeMedium); s == "disk" {
		medium = ""
	}
	return decision.Volume{
		Name:     SharedVolumeName,
		EmptyDir: &decision.EmptyDirVolume{Medium: medium, SizeLimit: sharedSizeLimit},
	}
}

func appendVolumes(vols []decision.Volume, rows []volumeRow, r *Render) []decision.Volume {
	for _, row := range rows {
		ref, ok := r.Values.Get(row.knob)
		if !ok {
			continue
		}
		name, _ := splitRef(ref, "")
		v := decision.Volume{Name: row.aux.volumeName(r.Name)}
		if row.secretMode != 0 {
			v.Secret = &decision.SecretVolume{SecretName: name, DefaultMode: row.secretMode}
		} else {
			v.ConfigMap = &decision.ConfigMapVolume{Name: name}
		}
		vols = append(vols, v)
	}
	return vols
}
