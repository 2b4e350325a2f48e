// Package rollout holds the rollout of spec 10: a candidate installation
// decided beside the active one, its stage (shadow or canary), the slice of
// workloads a canary gives the candidate's answer to, and the guard that
// falls back to the active's answer when the candidate newly refuses.
//
// It is pure: the rollout document is read from a doctree (Build) or from
// the form a leader sends a follower (FromTransport), the candidate is
// validated by decider/core/installation (the very code that validates the
// active installation), two decisions are compared (Compare) and an
// admission is routed (Rollout.Route) without I/O, logging or gRPC. Counting,
// halting, logging and reporting are decider/rolloutstate's; reading the
// file is decider/rolloutloader's.
package rollout

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// Stage is how far the candidate reaches (spec 10 §1).
type Stage int

// Stages.
const (
	// StageShadow decides with both installations and answers with the active.
	StageShadow Stage = iota
	// StageCanary gives the slice the candidate's answer.
	StageCanary
)

// String is the stage as the document writes it.
func (s Stage) String() string {
	if s == StageCanary {
		return "canary"
	}
	return "shadow"
}

// Guard is what a canary does with a workload the candidate newly refuses
// (spec 10 §4, guard.newRefusals).
type Guard int

// Guards.
const (
	// GuardFallback answers with the active's decision and halts the rollout.
	GuardFallback Guard = iota
	// GuardServe answers with the candidate's refusal and does not halt.
	GuardServe
)

// String is the guard as the document writes it.
func (g Guard) String() string {
	if g == GuardServe {
		return "serve"
	}
	return "fallback"
}

// Slice is which workloads a canary gives the candidate (spec 10 §2).
type Slice struct {
	// Buckets is the percentage as a count of workload.Buckets (10 000): a
	// workload whose key's bucket is below it is in the slice; percent × 100.
	Buckets int
	// Namespaces are always in the slice (sorted, no duplicates).
	Namespaces []string
	// Clusters are the clusters that canary (sorted, no duplicates); nil:
	// every cluster, a leader's and its followers' (spec 10 §2).
	Clusters []string
}

// Percent is the slice's percentage as the document writes it: "5", "0.5",
// "12.25".
func (s Slice) Percent() string { return PercentText(s.Buckets) }

// PercentText writes a count of buckets (percent × 100) as a percentage.
func PercentText(buckets int) string {
	whole, frac := buckets/100, buckets%100
	if frac == 0 {
		return strconv.Itoa(whole)
	}
	f := strconv.Itoa(100 + frac)[1:] // two digits
	return strconv.Itoa(whole) + "." + strings.TrimRight(f, "0")
}

// Rollout is one validated, immutable rollout: the candidate installation,
// its stage, slice and guard. A snapshot is never changed after Build or
// FromTransport returns it.
type Rollout struct {
	// Candidate is the candidate installation, validated exactly like the
	// active one; Candidate.Revision is the candidate revision (02 §10).
	Candidate *installation.Installation
	Stage     Stage
	Slice     Slice
	Guard     Guard
	// ID names the whole rollout — candidate revision, stage, slice and
	// guard — so that a change of any of them is seen by comparing IDs
	// (the leader's snapshots, the follower's state, the rollout state
	// token): "sha256:<hex>".
	ID string
	// DocumentPath is the rollout document that was read (TransportDocumentPath
	// on a follower).
	DocumentPath string
	// LoadedAt is when the rollout was put in force.
	LoadedAt time.Time
}

// Inert reports whether the candidate is the active installation (the same
// revision): the rollout then changes nothing and says so (spec 10 §2).
func (r *Rollout) Inert(activeRevision string) bool {
	return r.Candidate.Revision == activeRevision
}

// identify fills r.ID from the candidate revision, stage, slice and guard.
func (r *Rollout) identify() {
	var b strings.Builder
	b.WriteString(r.Candidate.Revision)
	b.WriteString("\nstage=")
	b.WriteString(r.Stage.String())
	b.WriteString("\nbuckets=")
	b.WriteString(strconv.Itoa(r.Slice.Buckets))
	b.WriteString("\nnamespaces=")
	b.WriteString(strings.Join(r.Slice.Namespaces, ","))
	b.WriteString("\nclusters=")
	if r.Slice.Clusters == nil {
		b.WriteString("*")
	} else {
		b.WriteString(strings.Join(r.Slice.Clusters, ","))
	}
	b.WriteString("\nguard=")
	b.WriteString(r.Guard.String())
	sum := sha256.Sum256([]byte(b.String()))
	r.ID = "sha256:" + hex.EncodeToString(sum[:])
}
