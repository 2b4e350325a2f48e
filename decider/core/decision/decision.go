// Package decision holds the plain Go types of the decider's core: the facts
// a decision is made from and the decision itself (spec 06 §2–4). They mirror
// the protobuf messages; conversion lives in the service package. Nothing here
// does I/O.
package decision

import (
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
	"github.com/dynamic-config-admission/dynamic-config/internal/workload"
)

// Purpose says which admission path asks.
type Purpose int

// Purposes.
const (
	PurposeUnspecified Purpose = iota
	PurposeMutate
	PurposeValidate
)

// Operation is the admission operation.
type Operation int

// Operations.
const (
	OperationUnspecified Operation = iota
	OperationCreate
	OperationUpdate
	OperationDelete
	OperationConnect
)

// ResourceKind is the kind of object admitted.
type ResourceKind int

// Resource kinds.
const (
	KindUnspecified ResourceKind = iota
	KindPod
	KindDeployment
	KindStatefulSet
	KindDaemonSet
	KindReplicaSet
	KindReplicationController
	KindJob
	KindCronJob
)

// kindNames is indexed by ResourceKind: the Kubernetes kind of each.
var kindNames = [...]string{
	KindPod: "Pod", KindDeployment: "Deployment", KindStatefulSet: "StatefulSet",
	KindDaemonSet: "DaemonSet", KindReplicaSet: "ReplicaSet",
	KindReplicationController: "ReplicationController", KindJob: "Job", KindCronJob: "CronJob",
}

// String is the kind's Kubernetes name ("" for KindUnspecified or an unknown kind).
func (k ResourceKind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return ""
	}
	return kindNames[k]
}

// Facts is everything the decider may know about the admitted object (spec 06 §2.2).
type Facts struct {
	Purpose             Purpose
	Namespace           string
	Name                string
	GenerateName        string
	Operation           Operation
	DryRun              bool
	Annotations         map[string]string // only dynamic-config.rs/ keys
	Labels              map[string]string
	Containers          []Container
	InitContainers      []Container
	EphemeralContainers []Container
	RunAsUser           *int64
	// RunAsGroup, FSGroup and SupplementalGroups are the rest of
	// spec.securityContext's identity: who can read the rendered file.
	RunAsGroup                    *int64
	FSGroup                       *int64
	SupplementalGroups            []int64
	TerminationGracePeriodSeconds *int64
	VolumeNames                   []string
	ImagePullSecretNames          []string
	ResourceKind                  ResourceKind
	RequestUID                    string
	UserName                      string
	WorkloadAnnotationKeys        []string
	// RestartPolicy is spec.restartPolicy as written ("" when absent: Always).
	RestartPolicy string
	// AutomountServiceAccountToken is spec.automountServiceAccountToken (nil: absent).
	AutomountServiceAccountToken *bool
	// QoSGuaranteed tells whether the pod's QoS class is Guaranteed.
	QoSGuaranteed bool
	// ControllerKind and ControllerName are the object's controller owner
	// reference ("" when it has none): with the namespace, names and labels
	// they name the workload (Workload).
	ControllerKind string
	ControllerName string
}

// Container is one container of the pod spec.
type Container struct {
	Name             string
	HasCommand       bool
	Command          []string
	HasArgs          bool
	Args             []string
	HasLivenessProbe bool
	RunAsUser        *int64
	RunAsGroup       *int64
	Env              []EnvVar
	VolumeMountPaths []string
}

// EnvVar is one env entry; ValueFrom entries carry no literal value.
type EnvVar struct {
	Name      string
	Value     string
	ValueFrom bool
}

// Outcome is the decision's outcome.
type Outcome int

// Outcomes.
const (
	OutcomeUnspecified Outcome = iota
	OutcomeSkip
	OutcomeInject
	OutcomeRefuse
	OutcomeAllow
)

// SkipReason says why a decision skipped.
type SkipReason int

// Skip reasons.
const (
	SkipUnspecified SkipReason = iota
	SkipNoAnnotations
	SkipNotCreate
	SkipAlreadyInjected
	SkipNotRequested
	SkipNoPolicy
	SkipNotTargeted
)

// Reason classifies a refusal (spec 04 §2).
type Reason int

// Refusal reasons.
const (
	ReasonUnspecified Reason = iota
	ReasonMalformed
	ReasonPinned
	ReasonPolicy
	ReasonConflict
	ReasonEnvPolicy
)

// Tier is where a resolved value came from.
type Tier int

// Tiers.
const (
	TierUnspecified Tier = iota
	TierAnnotation
	TierStoreDefault
	TierFleetDefault
	TierBuiltIn
	TierPodSpec
	TierNone
	TierClass // a DynamicConfigClass or ClusterDynamicConfigClass (spec 08 §3)
)

// OverrideRule is the rung that decided whether an installation value is pinned.
type OverrideRule int

// Override rules.
const (
	OverrideUnspecified OverrideRule = iota
	OverrideMarker
	OverrideStoreFlag
	OverrideFleetFlag
	OverrideNotApplicable
)

// New is a decision by the installation of this revision: the one place
// the revision audit annotation (internal/annotation.AuditRevision) is
// written.
func New(revision string) Decision {
	return Decision{InstallationRevision: revision, AuditAnnotations: map[string]string{annotation.AuditRevision: revision}}
}

// Decision is the decider's answer (spec 06 §3.2).
type Decision struct {
	DecisionID           string
	Outcome              Outcome
	SkipReason           SkipReason
	Refusals             []Refusal
	Warnings             []Warning
	AuditAnnotations     map[string]string
	Renders              []Render
	Plan                 *Plan
	InstallationRevision string
	Gates                []GateRuling
	EnvPolicyResults     []EnvPolicyRuleResult
	// ClassesRevision is the class set's revision when the decision
	// consulted classes (spec 08 §2), "" otherwise.
	ClassesRevision string
	// Cluster and Caller are filled in by the service: the cluster decided
	// for and the authenticated caller's name (docs/multi-cluster.md).
	Cluster string
	Caller  string
}

// Refusal is one refusal.
type Refusal struct {
	Reason   Reason
	Slug     string
	HTTPCode int32
	Message  string
	Check    string
	Key      string
	Render   string
}

// Warning is one warning. A named render's warning names the render in
// Render (its Message also starts with render "<name>": ); the default
// render's and pod-wide warnings have none.
type Warning struct {
	Code    string
	Message string
	Render  string
}

// Render is one render with the provenance of each of its knobs.
type Render struct {
	Name            string
	Source          string
	Values          []ResolvedValue
	AgentContainers []string
	Validated       bool
}

// ResolvedValue is one knob's effective value and where it came from.
type ResolvedValue struct {
	Knob          string
	Value         string
	Set           bool
	Tier          Tier
	Pinned        bool
	OverrideRule  OverrideRule
	AnnotationKey string
	Variable      string
	DocumentPath  string
	Store         string
	Note          string
	// Class names the class that filled the value (tier TierClass):
	// "DynamicConfigClass ns/name" or "ClusterDynamicConfigClass name".
	Class string
}

// GateRuling is one gate consulted.
type GateRuling struct {
	Gate      string
	Subject   string
	Render    string
	Passed    bool
	Namespace string
	Listing   []string
}

// EnvPolicyRuleResult is one env-policy rule's result.
type EnvPolicyRuleResult struct {
	Index        int32
	Reject       string
	Mode         string
	Applies      bool
	Failed       bool
	MatchedNames []string
	MissingNames []string
	Evaluated    bool
}

// Workload names the workload of the admitted object in cluster (spec 10 §1).
func (f *Facts) Workload(cluster string) workload.Key {
	return workload.Of(cluster, workload.Object{
		Namespace:      f.Namespace,
		Kind:           f.ResourceKind.String(),
		Name:           f.Name,
		GenerateName:   f.GenerateName,
		Labels:         f.Labels,
		ControllerKind: f.ControllerKind,
		ControllerName: f.ControllerName,
	})
}
