package main

import (
	"net/http"
	"testing"
	"time"
)

// TestTheDecisionCacheFlagTurnsTheFrontDoorsCacheOnAndOff runs serve and
// admits the same review again and again: by default an admission after the
// decider announced its revisions is answered from the cache; with
// --decision-cache=false every answer is the decider's own, as before the
// cache (no source mark, a decision id of its own each time).
func TestTheDecisionCacheFlagTurnsTheFrontDoorsCacheOnAndOff(t *testing.T) {
	for _, c := range []struct {
		name   string
		args   []string
		cached bool
	}{
		{"on by default: a question asked before is answered from the cache", nil, true},
		{"--decision-cache=false: every question is the decider's", []string{"--decision-cache=false"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := foundationServe(t, c.args...)["frontdoor"]
			first := foundationPostReview(t, http.DefaultClient, url).Response
			if _, marked := first.AuditAnnotations["decision-source"]; marked || first.AuditAnnotations["decision-id"] == "" {
				t.Fatalf("the first answer is not the decider's: %v", first.AuditAnnotations)
			}
			ids := map[string]bool{first.AuditAnnotations["decision-id"]: true}
			// The cache answers once the revision watch announced, at
			// most a heartbeat after the start; 3 s holds several.
			for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				r := foundationPostReview(t, http.DefaultClient, url).Response
				source := r.AuditAnnotations["decision-source"]
				if c.cached && source == "cache" {
					if r.AuditAnnotations["origin-decision-id"] == "" {
						t.Fatalf("an answer from the cache names no origin: %v", r.AuditAnnotations)
					}
					return
				}
				if source != "" || r.AuditAnnotations["origin-decision-id"] != "" || len(r.AuditAnnotations) != len(first.AuditAnnotations) {
					t.Fatalf("an answer with the cache off carries marks: %v (the first: %v)", r.AuditAnnotations, first.AuditAnnotations)
				}
				if id := r.AuditAnnotations["decision-id"]; ids[id] {
					t.Fatalf("decision id %q given twice: an answer repeated", id)
				} else {
					ids[id] = true
				}
			}
			if c.cached {
				t.Fatalf("%d admissions of one review in 3 s, none answered from the cache", len(ids))
			}
		})
	}
}
