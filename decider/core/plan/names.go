package plan

import "github.com/dynamic-config-admission/dynamic-config/internal/annotation"

// The fixed names of spec 03 §1. Every one is part of the agent's contract.
const (
	// StatusAnnotationKey and StatusAnnotationValue form the status mark.
	StatusAnnotationKey   = "dynamic-config.rs/status"
	StatusAnnotationValue = "injected"
	// RevisionAnnotationKey is the revision stamp's key (spec 10 §8).
	RevisionAnnotationKey = annotation.RevisionStampKey

	// WatchingAgentName and InitAgentName are the default render's agents;
	// a named render <n> appends "-<n>".
	WatchingAgentName = "dynamic-config-agent"
	InitAgentName     = "dynamic-config-init"

	// SharedVolumeName is the one volume every render writes into.
	SharedVolumeName = "dynamic-config"
	sharedSizeLimit  = "16Mi"
	// sharedVolumeBytes is the shared volume's sizeLimit in bytes (16Mi).
	sharedVolumeBytes = 16 * 1024 * 1024

	// EnvInjectWrapperName is the $0 of the env-inject wrapper script.
	EnvInjectWrapperName = "dynamic-config-env"
	// EnvFingerprintVariable holds the rendered file's checksum (env-restart).
	EnvFingerprintVariable = "DYNAMIC_CONFIG_ENV_FINGERPRINT"

	// The agent's secret, pod identity and AWS environment variables.
	envToken           = "DYNAMIC_CONFIG_AGENT_TOKEN"
	envPassword        = "DYNAMIC_CONFIG_AGENT_PASSWORD"
	envEndpoint        = "DYNAMIC_CONFIG_AGENT_ENDPOINT"
	envPodName         = "DYNAMIC_CONFIG_POD_NAME"
	envPodUID          = "DYNAMIC_CONFIG_POD_UID"
	envAWSAccessKeyID  = "AWS_ACCESS_KEY_ID"
	envAWSSecretAccess = "AWS_SECRET_ACCESS_KEY"

	// Secret volume modes: 0400 for the ssh key, 0444 for TLS and extra.
	modeOwnerRead = 256
	modeAllRead   = 292

	// agentDefaultMaxDocumentBytes is the agent's own max-document-bytes.
	agentDefaultMaxDocumentBytes = 8388608

	// The readiness probe of a watching agent with a metrics port.
	readinessPath             = "/readyz"
	readinessPortName         = "metrics"
	readinessPeriodSeconds    = 5
	readinessFailureThreshold = 60
	// The startup probe of a watching agent placed as a native sidecar with
	// a metrics port (issue 40): the kubelet starts the next container only
	// once it passes, so the app starts after the first render. Every 2s
	// (the Kubernetes documentation's startup-coordination example: the app
	// waits at most 2s past the render), 150 times: the same 300s the
	// readiness probe (5s × 60) gives a render; past it the kubelet restarts
	// the agent.
	startupPeriodSeconds    = 2
	startupFailureThreshold = 150

	// restartPolicyAlways marks a native sidecar.
	restartPolicyAlways = "Always"
)

// AgentName returns the container name of a render's agent: the watching
// agent when watching is true, else the one-shot (init) agent.
func AgentName(render string, watching bool) string {
	base := InitAgentName
	if watching {
		base = WatchingAgentName
	}
	if render == "" {
		return base
	}
	return base + "-" + render
}

// auxiliary is one of a render's auxiliary volumes (spec 03 §1): a volume
// name and mount directory, suffixed "-<n>" for a named render.
type auxiliary struct {
	volume string // base volume name, e.g. "dynamic-config-ca"
	dir    string // base mount directory, e.g. "/etc/dynamic-config/ca"
}

var (
	auxCA        = auxiliary{"dynamic-config-ca", "/etc/dynamic-config/ca"}
	auxSSH       = auxiliary{"dynamic-config-ssh", "/etc/dynamic-config/ssh"}
	auxClientTLS = auxiliary{"dynamic-config-client-tls", "/etc/dynamic-config/tls"}
	auxTemplate  = auxiliary{"dynamic-config-template", "/etc/dynamic-config/template"}
	auxSchema    = auxiliary{"dynamic-config-schema", "/etc/dynamic-config/schema"}
	auxCanary    = auxiliary{"dynamic-config-canary", "/etc/dynamic-config/canary"}
	auxExtra     = auxiliary{"dynamic-config-extra", "/etc/dynamic-config/extra"}
)

// volumeName is the auxiliary volume's name for the render.
func (a auxiliary) volumeName(render string) string {
	if render == "" {
		return a.volume
	}
	return a.volume + "-" + render
}

// mountDir is the auxiliary volume's mount directory for the render.
func (a auxiliary) mountDir(render string) string {
	if render == "" {
		return a.dir
	}
	return a.dir + "-" + render
}

// Default object keys (spec 03 §1) of the references that may omit the key.
const (
	defaultCAKey       = "ca.crt"
	defaultSSHKey      = "ssh-privatekey"
	defaultTemplateKey = "template"
	defaultSchemaKey   = "schema.json"
	defaultCanaryKey   = "percent"
)
