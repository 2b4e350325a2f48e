package plan

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

func i64p(n int64) *int64 { return &n }

// An app container that cannot read the rendered file is told so, with
// both users, the mode, the fix and the pin that rules a fix out (issue
// 40); one that can read it is not.
func TestAnAppThatCannotReadTheRenderedFileIsWarned(t *testing.T) {
	type pod struct {
		runAsUser, runAsGroup, fsGroup, appUser, appGroup *int64
		supplemental                                      []int64
	}
	cases := []struct {
		name   string
		values map[string]string
		pod    pod
		pins   [2]string // file-mode, agent-run-as-user
		want   string    // "" = no warning
	}{
		{"another user and no shared group", map[string]string{"file-mode": "0640"}, pod{appUser: i64p(1000)}, [2]string{},
			`container "app" (UID 1000) cannot read /config/rendered.toml, owned by UID 65532, group 65532, file-mode 0640: give the pod a securityContext.fsGroup, or set agent-run-as-user "1000"`},
		{"the pod's runAsUser is the app's when the container names none", map[string]string{"file-mode": "0640"}, pod{runAsUser: i64p(1000)}, [2]string{},
			`container "app" (UID 1000) cannot read /config/rendered.toml, owned by UID 65532, group 65532, file-mode 0640: give the pod a securityContext.fsGroup, or set agent-run-as-user "1000"`},
		{"the image's user is unknown, and said to be", map[string]string{"file-mode": "0640"}, pod{}, [2]string{},
			`container "app" runs as its image's user, unknown at admission: unless it is UID 65532 it cannot read /config/rendered.toml, owned by UID 65532, group 65532, file-mode 0640: give the pod a securityContext.fsGroup`},
		{"no group bit: the fix sets one too", map[string]string{"file-mode": "0600"}, pod{appUser: i64p(1000)}, [2]string{},
			`container "app" (UID 1000) cannot read /config/rendered.toml, owned by UID 65532, group 65532, file-mode 0600: set file-mode "0640" and a pod securityContext.fsGroup, or set agent-run-as-user "1000"`},
		{"an fsGroup without the group bit needs the bit only", map[string]string{"file-mode": "0400"}, pod{appUser: i64p(1000), fsGroup: i64p(2000)}, [2]string{},
			`container "app" (UID 1000) cannot read /config/rendered.toml, owned by UID 65532, group 2000, file-mode 0400: set file-mode "0440", or set agent-run-as-user "1000"`},
		{"a pinned file-mode is named", map[string]string{"file-mode": "0600"}, pod{appUser: i64p(1000)}, [2]string{"fileMode", ""},
			`container "app" (UID 1000) cannot read /config/rendered.toml, owned by UID 65532, group 65532, file-mode 0600: set agent-run-as-user "1000" (file-mode is pinned by fileMode)`},
		{"a pinned agent user is named", map[string]string{"file-mode": "0640"}, pod{appUser: i64p(1000)}, [2]string{"", "DYNAMIC_CONFIG_AGENT_RUN_AS_USER"},
			`container "app" (UID 1000) cannot read /config/rendered.toml, owned by UID 65532, group 65532, file-mode 0640: give the pod a securityContext.fsGroup (agent-run-as-user is pinned by DYNAMIC_CONFIG_AGENT_RUN_AS_USER)`},
		{"both pinned: the app can still run as the agent's user", map[string]string{"file-mode": "0400", "agent-run-as-user": "1000"}, pod{appUser: i64p(2000)},
			[2]string{"storeDefaults.vault.file-mode", "storeDefaults.vault.agent-run-as-user"},
			`container "app" (UID 2000) cannot read /config/rendered.toml, owned by UID 1000, group 65532, file-mode 0400: run it as UID 1000 (file-mode is pinned by storeDefaults.vault.file-mode; agent-run-as-user is pinned by storeDefaults.vault.agent-run-as-user)`},
		{"an unknown user under a pinned mode without the group bit", map[string]string{"file-mode": "0400"}, pod{}, [2]string{"fileMode", ""},
			`container "app" runs as its image's user, unknown at admission: unless it is UID 65532 it cannot read /config/rendered.toml, owned by UID 65532, group 65532, file-mode 0400: run it as UID 65532 (file-mode is pinned by fileMode)`},
		{"the agent's own user reads it", map[string]string{"file-mode": "0600"}, pod{appUser: i64p(65532)}, [2]string{}, ""},
		{"root reads it", map[string]string{"file-mode": "0400"}, pod{appUser: i64p(0)}, [2]string{}, ""},
		{"a world bit lets anyone read it", map[string]string{"file-mode": "0644"}, pod{appUser: i64p(1000)}, [2]string{}, ""},
		{"an fsGroup and the group bit let every container read it", map[string]string{"file-mode": "0640"}, pod{appUser: i64p(1000), fsGroup: i64p(2000)}, [2]string{}, ""},
		{"the agent's group as the app's runAsGroup", map[string]string{"file-mode": "0640"}, pod{appUser: i64p(1000), appGroup: i64p(65532)}, [2]string{}, ""},
		{"the pod's runAsGroup is the app's when the container names none", map[string]string{"file-mode": "0640"}, pod{appUser: i64p(1000), runAsGroup: i64p(65532)}, [2]string{}, ""},
		{"the agent's group among the supplemental groups", map[string]string{"file-mode": "0640"}, pod{appUser: i64p(1000), supplemental: []int64{5, 65532}}, [2]string{}, ""},
		{"a shared group without the group bit does not help", map[string]string{"file-mode": "0600"}, pod{appUser: i64p(1000), appGroup: i64p(65532)}, [2]string{},
			`container "app" (UID 1000) cannot read /config/rendered.toml, owned by UID 65532, group 65532, file-mode 0600: set file-mode "0640" and a pod securityContext.fsGroup, or set agent-run-as-user "1000"`},
		{"the agent's own default mode is unknown here: not judged", nil, pod{appUser: i64p(1000)}, [2]string{}, ""},
		{"same-user gives the agent the app's UID", map[string]string{"file-mode": "0600", "agent-run-as-user": "1000"}, pod{appUser: i64p(1000)}, [2]string{}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := input(with(consul(), tc.values))
			f := in.Facts
			f.RunAsUser, f.RunAsGroup, f.FSGroup, f.SupplementalGroups = tc.pod.runAsUser, tc.pod.runAsGroup, tc.pod.fsGroup, tc.pod.supplemental
			f.Containers[0].RunAsUser, f.Containers[0].RunAsGroup = tc.pod.appUser, tc.pod.appGroup
			in.Default.FileModePin, in.RunAsUserPin = tc.pins[0], tc.pins[1]
			var got []string
			for _, w := range Warnings(in) {
				if w.Code == WarnFileUnreadable {
					got = append(got, w.Message)
					if len(w.Message) > 256 {
						t.Errorf("warning of %d bytes: the API server passes on 256", len(w.Message))
					}
				}
			}
			if want := []string{tc.want}; tc.want == "" && len(got) > 0 || tc.want != "" && strings.Join(got, "\n") != tc.want {
				t.Errorf("warnings:\n%s\nwant:\n%v", strings.Join(got, "\n"), want)
			}
		})
	}
}

// Every render's file is judged with its own file-mode, and every
// container that gets the mount, in index order; a container
// inject-containers leaves out never sees the file.
func TestEveryRenderAndEveryMountedContainerIsJudged(t *testing.T) {
	in := input(with(consul(), map[string]string{"file-mode": "0600", "inject-containers": "app, web"}),
		Render{Name: "cache", Values: values(map[string]string{"path": "/config/cache.json", "file-mode": "0640"})})
	in.Facts.Containers = []decision.Container{{Name: "app", RunAsUser: i64p(1000)}, {Name: "side", RunAsUser: i64p(1001)},
		{Name: "web", RunAsUser: i64p(1002), RunAsGroup: i64p(65532)}}
	var got []string
	for _, w := range Warnings(in) {
		if w.Code == WarnFileUnreadable {
			got = append(got, w.Message[:strings.Index(w.Message, ")")+1])
		}
	}
	want := []string{`container "app" (UID 1000)`, `container "web" (UID 1002)`, `render "cache": container "app" (UID 1000)`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
