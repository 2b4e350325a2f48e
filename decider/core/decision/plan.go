package decision

// The semantic mutation plan (spec 03 §2, 06 §4): what the front door turns
// into a JSON Patch.

// Plan is the semantic mutation plan (spec 03 §2, 06 §4).
type Plan struct {
	StatusAnnotation Annotation
	// RevisionAnnotation is the revision stamp written beside the status
	// mark (spec 10 §8): dynamic-config.rs/revision = the first 12 hex
	// digits of the deciding installation's revision.
	RevisionAnnotation Annotation
	Volumes            []Volume
	AppMounts          []AppMount
	ImagePullSecret    string
	CommandRewrite     *CommandRewrite
	Agents             []AgentPlacement
}

// Annotation is a key/value pair.
type Annotation struct {
	Key   string
	Value string
}

// Volume is one volume to add; exactly one source is set.
type Volume struct {
	Name      string
	EmptyDir  *EmptyDirVolume
	ConfigMap *ConfigMapVolume
	Secret    *SecretVolume
}

// EmptyDirVolume is an emptyDir source.
type EmptyDirVolume struct {
	Medium    string // "Memory" or ""
	SizeLimit string
}

// ConfigMapVolume is a configMap source.
type ConfigMapVolume struct{ Name string }

// SecretVolume is a secret source.
type SecretVolume struct {
	SecretName  string
	DefaultMode int32
}

// AppMount is the shared volume's mount into one app container.
type AppMount struct {
	ContainerIndex int32
	ContainerName  string
	Mount          VolumeMount
}

// VolumeMount is one mount.
type VolumeMount struct {
	Name      string
	MountPath string
	ReadOnly  bool
}

// CommandRewrite is the env-inject rewrite of one app container.
type CommandRewrite struct {
	ContainerIndex int32
	ContainerName  string
	Command        []string
	RemoveArgs     bool
	LivenessProbe  *Probe
}

// ContainerList is the pod list an agent goes into.
type ContainerList int

// Container lists.
const (
	ListUnspecified ContainerList = iota
	ListContainers
	ListInitContainers
)

// Position is where in the list an agent goes.
type Position int

// Positions.
const (
	PositionUnspecified Position = iota
	PositionAppend
	PositionFirst
)

// AgentPlacement is one agent container and where it goes.
type AgentPlacement struct {
	List      ContainerList
	Position  Position
	Container AgentContainer
}

// AgentContainer is the full spec of one injected agent container.
type AgentContainer struct {
	Name            string
	Image           string
	Args            []string
	Env             []AgentEnvVar
	VolumeMounts    []VolumeMount
	Requests        map[string]string
	Limits          map[string]string
	SecurityContext SecurityContext
	Ports           []ContainerPort
	ReadinessProbe  *Probe
	// StartupProbe is a native sidecar's startup probe (issue 40): the
	// kubelet starts the app containers after the agent's first render.
	StartupProbe  *Probe
	RestartPolicy string
	Render        string
}

// AgentEnvVar is one env entry of an agent; exactly one source is set.
type AgentEnvVar struct {
	Name         string
	Value        *string
	SecretKeyRef *SecretKeyRef
	FieldRef     *FieldRef
}

// SecretKeyRef points at a Secret key.
type SecretKeyRef struct{ Name, Key string }

// FieldRef points at a pod field.
type FieldRef struct{ FieldPath string }

// SecurityContext is the agent's restricted security context.
type SecurityContext struct {
	RunAsNonRoot             bool
	RunAsUser                int64
	RunAsGroup               int64
	AllowPrivilegeEscalation bool
	CapabilitiesDrop         []string
	ReadOnlyRootFilesystem   bool
	SeccompProfileType       string
}

// ContainerPort is one port; an empty Name is unnamed.
type ContainerPort struct {
	ContainerPort int32
	Name          string
}

// Probe is a readiness or liveness probe; exactly one handler is set.
type Probe struct {
	HTTPGet          *HTTPGetAction
	Exec             *ExecAction
	PeriodSeconds    int32
	FailureThreshold int32
}

// HTTPGetAction probes over HTTP; PortName wins when set, else PortNumber.
type HTTPGetAction struct {
	Path       string
	PortNumber int32
	PortName   string
}

// ExecAction runs a command.
type ExecAction struct{ Command []string }
