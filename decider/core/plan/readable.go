package plan

import (
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// WarnFileUnreadable is the code of the warning of an app container that
// cannot read the rendered file (issue 40).
const WarnFileUnreadable = "file-unreadable"

// unreadableFiles: the agent writes each render's file as its own UID, with
// the shared volume's group — the pod's fsGroup (the kubelet gives the
// emptyDir that group, set-group-ID, and every container the group), else
// the agent's GID — and the resolved file-mode. An app container that gets
// the mount and is not that user, not in that group with the group bit set,
// and not helped by a world bit, cannot read it. One warning per render
// (in render order) and container (in index order) that cannot, naming
// both users, the mode and the fix, and the pin that rules a fix out. A
// render whose file-mode is the agent's own default (unresolved) is not
// judged: the mode is unknown here. UID 0 reads every file (decision).
func unreadableFiles(in *Input) []decision.Warning {
	agentUID, _ := lookupNumber(&in.Default, registry.AgentRunAsUser)
	agentGID, _ := lookupNumber(&in.Default, registry.AgentRunAsGroup)
	pod := in.pod()
	fileGID := int64(agentGID)
	if pod.FSGroup != nil {
		fileGID = *pod.FSGroup
	}
	mounts := appMounts(in)
	var out []decision.Warning
	for i := -1; i < len(in.Named); i++ {
		r, name := &in.Default, ""
		if i >= 0 {
			r, name = &in.Named[i], in.Named[i].Name
		}
		if !r.Values.Has(registry.FileMode) {
			continue
		}
		mode := r.Values.Number(registry.FileMode)
		file, _ := r.Values.Get(registry.Path)
		for _, m := range mounts {
			c := &pod.Containers[m.ContainerIndex]
			uid, known := effectiveUser(pod, c)
			if mode&0o004 != 0 || known && (uid == 0 || uid == int64(agentUID)) ||
				mode&0o040 != 0 && inGroup(pod, c, fileGID) {
				continue
			}
			f := unreadable{container: c.Name, uid: uid, known: known, agentUID: agentUID, fileGID: fileGID,
				mode: mode, file: file, fsGroup: pod.FSGroup != nil, fileModePin: r.FileModePin, runAsUserPin: in.RunAsUserPin}
			out = append(out, renderWarning(WarnFileUnreadable, name, f.text()))
		}
	}
	return out
}

// effectiveUser is the UID an app container runs as: its own runAsUser,
// else the pod's; known is false when neither says (the image's USER,
// which admission cannot see).
func effectiveUser(pod *decision.Facts, c *decision.Container) (uid int64, known bool) {
	switch {
	case c.RunAsUser != nil:
		return *c.RunAsUser, true
	case pod.RunAsUser != nil:
		return *pod.RunAsUser, true
	}
	return 0, false
}

// inGroup reports whether the app container is in group gid: its runAsGroup
// (else the pod's), the pod's fsGroup or one of its supplementalGroups.
func inGroup(pod *decision.Facts, c *decision.Container, gid int64) bool {
	primary := c.RunAsGroup
	if primary == nil {
		primary = pod.RunAsGroup
	}
	if primary != nil && *primary == gid || pod.FSGroup != nil && *pod.FSGroup == gid {
		return true
	}
	for _, g := range pod.SupplementalGroups {
		if g == gid {
			return true
		}
	}
	return false
}

// unreadable is one container that cannot read one render's file.
type unreadable struct {
	container                 string
	uid                       int64
	known                     bool // uid is the container's (else the image's, unknown)
	agentUID                  uint64
	fileGID                   int64
	mode                      uint64
	file                      string
	fsGroup                   bool // the pod sets fsGroup
	fileModePin, runAsUserPin string
}

// text is the warning: who cannot read what, and the fixes the pins leave.
// The group fix (the file's group bit and an fsGroup) needs file-mode
// unpinned when the bit is missing; the user fix (the agent as the app's
// UID) needs agent-run-as-user unpinned and the app's UID known; when the
// pins rule both out, the app can still run as the agent's UID.
func (u *unreadable) text() string {
	agent := "UID " + itoa(u.agentUID)
	owned := ", owned by " + agent + ", group " + strconv.FormatInt(u.fileGID, 10) + ", file-mode " + octal(u.mode)
	head := "container " + strconv.Quote(u.container) + " (UID " + strconv.FormatInt(u.uid, 10) + ") cannot read " + u.file + owned
	if !u.known {
		head = "container " + strconv.Quote(u.container) + " runs as its image's user, unknown at admission: unless it is " +
			agent + " it cannot read " + u.file + owned
	}
	var fixes []string
	var pins string
	groupMode := octal(u.mode | 0o040)
	switch {
	case u.mode&0o040 != 0:
		fixes = append(fixes, "give the pod a securityContext.fsGroup")
	case u.fileModePin != "":
		pins = "file-mode is pinned by " + u.fileModePin
	case u.fsGroup:
		fixes = append(fixes, "set file-mode "+strconv.Quote(groupMode))
	default:
		fixes = append(fixes, "set file-mode "+strconv.Quote(groupMode)+" and a pod securityContext.fsGroup")
	}
	if u.known {
		if u.runAsUserPin == "" {
			fixes = append(fixes, "set agent-run-as-user "+strconv.Quote(strconv.FormatInt(u.uid, 10)))
		} else {
			pins = joinClauses(pins, "agent-run-as-user is pinned by "+u.runAsUserPin)
		}
	}
	if len(fixes) == 0 {
		fixes = append(fixes, "run it as "+agent)
	}
	text := head + ": " + fixes[0]
	if len(fixes) > 1 {
		text += ", or " + fixes[1]
	}
	if pins != "" {
		text += " (" + pins + ")"
	}
	return text
}

// octal prints a file mode as the agent's flag does: 0 and the octal digits.
func octal(mode uint64) string { return "0" + strconv.FormatUint(mode, 8) }

func joinClauses(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
