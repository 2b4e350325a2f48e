package installation

import (
	"testing"
)

func TestEnvironmentScan(t *testing.T) {
	known := knownNamesList
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{"a typo is reported, not dropped", []string{"DYNAMIC_CONFIG_AGENT_METRIC_PORT=9110"},
			[]string{`DYNAMIC_CONFIG_AGENT_METRIC_PORT: "DYNAMIC_CONFIG_AGENT_METRIC_PORT" is not an installation setting; the ones there are: ` + known}},
		{"a fleet endpoint is a per-store knob", []string{"DYNAMIC_CONFIG_AGENT_ENDPOINT=http://x"},
			[]string{`DYNAMIC_CONFIG_AGENT_ENDPOINT: "DYNAMIC_CONFIG_AGENT_ENDPOINT" is not an installation setting; endpoint is a per-store knob — set it in DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (agent.defaults.perStore)`}},
		{"a fleet token secret is a per-store knob", []string{"DYNAMIC_CONFIG_AGENT_TOKEN_SECRET=a/b"},
			[]string{`DYNAMIC_CONFIG_AGENT_TOKEN_SECRET: "DYNAMIC_CONFIG_AGENT_TOKEN_SECRET" is not an installation setting; token-secret is a per-store knob — set it in DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (agent.defaults.perStore)`}},
		{"the selfRotate family set non-empty", []string{"DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE=true", "DYNAMIC_CONFIG_WEBHOOK_VALIDITY_SECONDS="},
			[]string{`DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE: selfRotate TLS belongs to the front door (tls.mode: selfRotate, frontdoor --self-rotate); it is not an installation setting`}},
		{"the front door's own names and the locator are known", []string{
			"DYNAMIC_CONFIG_WEBHOOK_ADDR=0.0.0.0:8443", "DYNAMIC_CONFIG_WEBHOOK_METRICS_ADDR=x", "DYNAMIC_CONFIG_WEBHOOK_TLS_CERT=x",
			"DYNAMIC_CONFIG_WEBHOOK_TLS_KEY=x", "DYNAMIC_CONFIG_WEBHOOK_PLAINTEXT=1", "DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE=",
			"DYNAMIC_CONFIG_DECIDER_ADDR=x", "DYNAMIC_CONFIG_LOG_LEVEL=debug", "HOME=/root"}, nil},
		{"service links with the kubelet's values are ignored", []string{
			"DYNAMIC_CONFIG_WEBHOOK_SERVICE_HOST=10.96.0.12",
			"DYNAMIC_CONFIG_WEBHOOK_SERVICE_PORT=443",
			"DYNAMIC_CONFIG_WEBHOOK_SERVICE_PORT_HTTPS=443",
			"DYNAMIC_CONFIG_WEBHOOK_PORT=tcp://10.96.0.12:443",
			"DYNAMIC_CONFIG_WEBHOOK_PORT_443_TCP=tcp://10.96.0.12:443",
			"DYNAMIC_CONFIG_WEBHOOK_PORT_443_TCP_PROTO=tcp",
			"DYNAMIC_CONFIG_WEBHOOK_PORT_443_TCP_PORT=443",
			"DYNAMIC_CONFIG_WEBHOOK_PORT_443_TCP_ADDR=10.96.0.12",
			"DYNAMIC_CONFIG_AGENT_SERVICE_HOST=fd00::1",
			"DYNAMIC_CONFIG_AGENT_PORT=udp://[fd00::1]:53",
		}, nil},
		{"service-link names with other values are reported", []string{
			"DYNAMIC_CONFIG_WEBHOOK_SERVICE_HOST=webhook.local",
			"DYNAMIC_CONFIG_WEBHOOK_PORT_443_TCP_PROTO=http",
			"DYNAMIC_CONFIG_WEBHOOK_PORT=http://10.0.0.1:80",
		}, []string{
			`DYNAMIC_CONFIG_WEBHOOK_PORT: "DYNAMIC_CONFIG_WEBHOOK_PORT" is not an installation setting; the ones there are: ` + known,
			`DYNAMIC_CONFIG_WEBHOOK_PORT_443_TCP_PROTO: "DYNAMIC_CONFIG_WEBHOOK_PORT_443_TCP_PROTO" is not an installation setting; the ones there are: ` + known,
			`DYNAMIC_CONFIG_WEBHOOK_SERVICE_HOST: "DYNAMIC_CONFIG_WEBHOOK_SERVICE_HOST" is not an installation setting; the ones there are: ` + known,
		}},
		{"a known name is always read as its setting", []string{"DYNAMIC_CONFIG_AGENT_METRICS_PORT=9110"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadYAML(t, "", tt.env...)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("unexpected: %v", err)
				}
				return
			}
			assertLines(t, problemLines(t, "", tt.env...), tt.want)
		})
	}
}

func TestServiceLinkShapes(t *testing.T) {
	tests := []struct {
		name, variable, value string
		link                  bool
	}{
		{"a host holds an IPv4 literal", "X_SERVICE_HOST", "10.0.0.1", true},
		{"a host holds an IPv6 literal", "X_SERVICE_HOST", "2001:db8::1", true},
		{"a host name is not the kubelet's shape", "X_SERVICE_HOST", "x.svc", false},
		{"a named service port", "X_SERVICE_PORT_GRPC", "9090", true},
		{"a port above 65535", "X_SERVICE_PORT", "70000", false},
		{"a port URL with a bracketed IPv6", "X_PORT_53_UDP", "udp://[::1]:53", true},
		{"a port URL with a bare IPv6", "X_PORT_53_UDP", "udp://::1:53", false},
		{"an sctp protocol", "X_PORT_9_SCTP_PROTO", "sctp", true},
		{"an upper-case protocol", "X_PORT_9_SCTP_PROTO", "SCTP", false},
		{"an address", "X_PORT_9_TCP_ADDR", "10.1.2.3", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ServiceLink(tt.variable, tt.value); got != tt.link {
				t.Errorf("ServiceLink(%q, %q) = %v", tt.variable, tt.value, got)
			}
		})
	}
}
