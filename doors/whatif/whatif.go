// Package whatif is `dynamic-config diff` (spec 10 §7): every pod template
// of the -f manifests (or of the workloads a cluster holds) goes through two
// offline engines — the active installation's and the candidate's — the
// same engine as inject (doors/engine), and the two decisions are compared
// as the decider's shadow compares them (rollout.Compare, spec 10 §3).
// What differs is listed once per workload key: the result and the plan
// paths, with the old and new values on request. This is the command a
// GitOps repository runs on a pull request.
package whatif

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	deciderd "github.com/dynamic-config-admission/dynamic-config/decider/daemon"
	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	"github.com/dynamic-config-admission/dynamic-config/doors/inject"
	"github.com/dynamic-config-admission/dynamic-config/doors/installationsource"
	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
)

// Options are diff's inputs.
type Options struct {
	// Active is the active installation: a document or chart values. With
	// Values and no other candidate, the values' rollout.candidate is the
	// candidate.
	Active installationsource.Source
	// Candidate is the candidate installation document (--candidate),
	// CandidateValues its chart values (--candidate-values), Rollout a
	// rollout document whose candidate it is (--rollout); one at most.
	Candidate, CandidateValues, Rollout string
	// ClassesFile is --classes-file ("" = classes off).
	ClassesFile string
	// Files are the -f manifests (files, directories, - for stdin).
	Files []string
	Stdin io.Reader
	// FromCluster lists the workloads through Kubeconfig instead of Files,
	// in Namespace (the kubeconfig context's when "") or every namespace.
	FromCluster   bool
	AllNamespaces bool
	Kubeconfig    string
	// Namespace is -n: the documents' namespace, or the one listed.
	Namespace string
	// Cluster is --cluster-name: the cluster asked for, the keys' first part.
	Cluster string
	// ShowValues adds each differing path's old and new value.
	ShowValues bool
}

// check reports a combination that is a usage error.
func (o *Options) check() error {
	named := 0
	for _, s := range []string{o.Candidate, o.CandidateValues, o.Rollout} {
		if s != "" {
			named++
		}
	}
	switch {
	case named > 1:
		return errors.New("--candidate, --candidate-values and --rollout each name the candidate: give one")
	case named == 0 && o.Active.Values == "":
		return errors.New("no candidate: give --candidate FILE, --candidate-values FILE or --rollout FILE (or --values whose rollout.candidate is set)")
	case o.FromCluster == (len(o.Files) > 0):
		return errors.New("give the manifests with -f FILE|DIR|- or read them with --from-cluster (one of them)")
	case o.AllNamespaces && (!o.FromCluster || o.Namespace != ""):
		return errors.New("-A lists every namespace with --from-cluster, and excludes -n")
	}
	return o.Active.Check()
}

// Run loads both installations and the manifests and compares every pod.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	active, err := o.Active.Load()
	if err != nil {
		return nil, err
	}
	candidate, err := o.candidate()
	if err != nil {
		return nil, err
	}
	set, err := deciderd.ReadClassesFile(o.ClassesFile)
	if err != nil {
		return nil, err
	}
	if set == nil && (active.ClassesEnabled || candidate.ClassesEnabled) {
		return nil, errors.New("DYNAMIC_CONFIG_WEBHOOK_CLASSES is true, and diff does not watch the API server: give the classes with --classes-file FILE")
	}
	var docs []*manifest.Document
	if o.FromCluster {
		docs, err = ClusterDocuments(ctx, o.Kubeconfig, o.Namespace, o.AllNamespaces)
		o.Namespace = "" // the objects' own
	} else {
		docs, err = manifest.Read("diff", o.Files, false, o.Stdin, inject.Admit)
	}
	if err != nil {
		return nil, err
	}
	engines := [2]*engine.Engine{}
	for i, inst := range []*installation.Installation{active, candidate} {
		if engines[i], err = engine.New(inst, set); err != nil {
			return nil, err
		}
		defer engines[i].Close()
		engines[i].ForCluster(o.Cluster)
	}
	r := &Report{ActiveRevision: active.Revision, CandidateRevision: candidate.Revision, Counts: map[string]int{}}
	seen := map[string]*Workload{}
	for _, doc := range docs {
		targets, err := manifest.PodTargets(doc, o.Namespace)
		if err != nil {
			return nil, err
		}
		for _, t := range targets {
			if t.Pod == nil {
				continue
			}
			var admitted [2]*engine.Admitted
			for i, e := range engines {
				if admitted[i], err = e.AdmitPod(t.Pod, t.Namespace, t.Name); err != nil {
					return nil, fmt.Errorf("%s: %w", doc.Where(), err)
				}
			}
			key := workloadKey(doc, t, o.Cluster)
			r.add(seen, key, where(doc, t), compareAdmissions(admitted[0], admitted[1]), admitted, o.ShowValues)
		}
	}
	return r, nil
}

// candidate loads the candidate installation the options name.
func (o *Options) candidate() (*installation.Installation, error) {
	if o.Candidate != "" || o.CandidateValues != "" {
		return installationsource.Source{Document: o.Candidate, Values: o.CandidateValues, Environ: o.Active.Environ}.Load()
	}
	src := o.Active
	src.Rollout = o.Rollout
	r, err := src.LoadRollout()
	switch {
	case err != nil:
		return nil, err
	case r == nil:
		return nil, fmt.Errorf("%s: rollout.candidate is empty: there is no candidate to compare", o.Active.Values)
	}
	return r.Candidate, nil
}

// where names a pod in the input: its file and, for a template, its owner.
func where(doc *manifest.Document, t manifest.PodTarget) string {
	if t.Label == "" {
		return doc.Where()
	}
	return doc.Where() + ": " + t.Label
}
