package rollout

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/internal/dnsname"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// Transport is the form in which a leader hands its rollout to a follower
// (spec 10 §6): the candidate as an installation's transport form (its
// canonical JSON, environment merged, and revision), the stage, the slice
// and the guard.
type Transport struct {
	Candidate  installation.Transport
	Stage      Stage
	Buckets    int
	Namespaces []string
	// Clusters nil: every cluster (a follower's too).
	Clusters []string
	Guard    Guard
	// ID is the leader's Rollout.ID; the follower's rebuilt rollout must
	// have the same.
	ID string
}

// Transport returns the transport form of r.
func (r *Rollout) Transport() Transport {
	return Transport{
		Candidate:  r.Candidate.Transport(),
		Stage:      r.Stage,
		Buckets:    r.Slice.Buckets,
		Namespaces: r.Slice.Namespaces,
		Clusters:   r.Slice.Clusters,
		Guard:      r.Guard,
		ID:         r.ID,
	}
}

// ErrIDMismatch is wrapped by FromTransport's error when the rollout
// rebuilt is not the one the leader named.
var ErrIDMismatch = errors.New("rollout id mismatch")

// FromTransport rebuilds the rollout a leader sent: the candidate through
// installation.FromTransport (validated by the installation's code, its
// revision checked), the slice checked as the document's is. Every problem
// comes at once as a *Problems; an ID other than the leader's wraps
// ErrIDMismatch. It does no I/O.
func FromTransport(t Transport) (*Rollout, error) {
	b := builder{path: installation.TransportDocumentPath}
	if t.Stage != StageShadow && t.Stage != StageCanary {
		b.value("stage", strconv.Itoa(int(t.Stage)), "shadow or canary")
	}
	if t.Guard != GuardFallback && t.Guard != GuardServe {
		b.value("guard.newRefusals", strconv.Itoa(int(t.Guard)), "fallback or serve")
	}
	if _, ok := ParsePercent(PercentText(t.Buckets)); !ok || t.Buckets < 0 {
		b.value("canary.percent", strconv.Itoa(t.Buckets), "a count of buckets from 0 to 10000 (percent × 100)")
	}
	b.transportNames("canary.namespaces", t.Namespaces, dnsname.IsLabel, "a namespace name (a lower-case DNS label)")
	b.transportNames("canary.clusters", t.Clusters, dnsname.IsSubdomain, "a cluster name (a lower-case DNS name)")
	if t.Clusters != nil && len(t.Clusters) == 0 {
		b.at("canary.clusters", "canary.clusters is empty: leave it out for every cluster, or name the clusters that canary")
	}
	if t.Stage == StageCanary && t.Buckets == 0 && len(t.Namespaces) == 0 {
		b.at("canary", "stage is canary and the slice is empty: set canary.percent above 0 or list canary.namespaces (or set stage: shadow)")
	}
	cand, err := installation.FromTransport(t.Candidate)
	if err != nil {
		var p *installation.Problems
		if !errors.As(err, &p) {
			if len(b.items) == 0 {
				return nil, err
			}
			b.text("candidate: " + err.Error())
		} else {
			b.candidate(p)
		}
	}
	if len(b.items) > 0 {
		return nil, b.problems("")
	}
	r := &Rollout{
		Candidate:    cand,
		Stage:        t.Stage,
		Slice:        Slice{Buckets: t.Buckets, Namespaces: slices.Clone(t.Namespaces), Clusters: slices.Clone(t.Clusters)},
		Guard:        t.Guard,
		DocumentPath: installation.TransportDocumentPath,
		LoadedAt:     now(),
	}
	if t.Clusters != nil && r.Slice.Clusters == nil {
		r.Slice.Clusters = []string{}
	}
	r.identify()
	if r.ID != t.ID {
		return nil, fmt.Errorf("%w: the rollout sent is %s, the snapshot says %s", ErrIDMismatch, r.ID, redact.Quote(t.ID))
	}
	return r, nil
}

// transportNames checks a list of names sent by a leader: each valid,
// sorted, no duplicates (as Build leaves them).
func (b *builder) transportNames(path string, names []string, valid func(string) bool, what string) {
	for i, n := range names {
		at := path + "[" + strconv.Itoa(i) + "]"
		if !valid(n) {
			b.value(at, n, what)
			continue
		}
		if i > 0 && names[i-1] >= n {
			b.at(at, at+": the list is not sorted without duplicates")
		}
	}
}
