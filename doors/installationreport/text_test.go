package installationreport

import (
	"bytes"
	"testing"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func TestWriteTextShowsTheInstallationAsTables(t *testing.T) {
	tests := []struct {
		name string
		resp *deciderv1.GetInstallationResponse
		want string
	}{
		{"the empty installation: built-ins, no document, empty gates, no policy",
			&deciderv1.GetInstallationResponse{
				Settings: []*deciderv1.Setting{
					{Name: "mode", Value: "sidecar", Source: deciderv1.SettingSource_SETTING_SOURCE_BUILT_IN},
					{Name: "cpuLimit", Source: deciderv1.SettingSource_SETTING_SOURCE_UNSET},
				},
				Gates: []*deciderv1.Gate{{Name: "agentEnvAllow"}, {Name: "sourceDeny"}},
			},
			`document: none

SETTING   VALUE    PIN  SOURCE    FROM
mode      sidecar       built-in  
cpuLimit  —             unset     

store defaults: none

gates:
  agentEnvAllow  —  (empty: no agent-env name is allowed anywhere)
  sourceDeny     —  (empty: nothing denied)

env policy: none
`},
		{"a document's pinned value, a store default, a gate and a policy with a listed value",
			&deciderv1.GetInstallationResponse{
				DocumentPath: "/etc/dynamic-config/installation.yaml", DocumentPresent: true,
				Settings: []*deciderv1.Setting{{Name: "fileMode", Value: "0640", Pinned: true, Marker: deciderv1.Marker_MARKER_PINNED,
					Source: deciderv1.SettingSource_SETTING_SOURCE_DOCUMENT, Origin: "installation.yaml: fileMode"}},
				StoreDefaults: []*deciderv1.StoreDefaults{{Store: "vault", Knobs: []*deciderv1.Setting{{Name: "endpoint", Value: "https://vault:8200", Origin: "installation.yaml: storeDefaults.vault.endpoint"}}}},
				Gates:         []*deciderv1.Gate{{Name: "sourceAllow", Groups: []*deciderv1.GateGroup{{Namespace: "*", Names: []string{"consul", "vault"}}}, Origin: "installation.yaml: sourceAllow"}},
				EnvPolicy: &deciderv1.EnvPolicy{Targets: []string{"pods"}, Origin: "installation.yaml: envPolicy", Rules: []*deciderv1.EnvPolicyRule{{
					Index: 0, Reject: "anyIn", Mode: "enforce", Namespaces: []string{"payments"},
					EnvironmentVariables: []*deciderv1.EnvPolicyVariable{{Name: "LOG_LEVEL", HasValue: true}, {Name: "HTTPS_PROXY"}}}}},
			},
			`document: /etc/dynamic-config/installation.yaml

SETTING   VALUE  PIN      SOURCE    FROM
fileMode  0640   pin (!)  document  installation.yaml: fileMode

store defaults:
  STORE  KNOB      VALUE               PIN  FROM
  vault  endpoint  https://vault:8200       installation.yaml: storeDefaults.vault.endpoint

gates:
  sourceAllow  *: consul, vault  installation.yaml: sourceAllow

env policy: targets pods (installation.yaml: envPolicy)
  rule 0: reject anyIn, mode enforce, namespaces payments: LOG_LEVEL=<set>, HTTPS_PROXY
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			WriteText(&out, tt.resp)
			if out.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tt.want)
			}
		})
	}
}
