package e2e

import (
	"strings"
	"testing"
	"time"
)

// The consul line of the seed installation, and the edits made to it.
const (
	consulLine10 = `consul: "endpoint=http://consul.infra.svc:8500!, watch-seconds=10"`
	consulLine45 = `consul: "endpoint=http://consul.infra.svc:8500!, watch-seconds=45"`
	consulLine99 = `consul: "endpoint=http://consul.infra.svc:8500!, watch-seconds=99"`
)

func TestAnInstallationEditReachesTheNextPodAndABrokenEditChangesNothing(t *testing.T) {
	seed := seedInstallation(t)
	if !strings.Contains(seed, consulLine10) {
		t.Fatalf("testdata/seed-000-installation.yaml lacks %s", consulLine10)
	}
	site := newInjectionSite(t, seed, injection{})
	consul := consulAnnotations()

	t.Run("before the edit, a consul pod watches every 10 seconds", func(t *testing.T) {
		wantAdmitted(t, applyJSON(t, pod(site.ns, "consul-1", consul)))
		if got := watchArg(getPod(t, site.ns, "consul-1")); got != "10" {
			t.Errorf("--watch %q; want 10", got)
		}
	})

	edited := strings.Replace(seed, consulLine10, consulLine45, 1)
	writeInstallation(t, site.installation, edited)

	t.Run("after the edit, the next consul pod gets the new value", func(t *testing.T) {
		var last kubectlResult
		err := eventually("the edit is loaded", 30*time.Second, 250*time.Millisecond, func() error {
			last = applyJSON(t, pod(site.ns, "consul-2", consul), "--dry-run=server", "-o", "json")
			if last.err == nil && watchArg(decodePod(t, last)) == "45" {
				return nil
			}
			return errNoEffectYet
		})
		if err != nil {
			t.Fatalf("%v\nlast dry run: %s", err, last)
		}
		wantAdmitted(t, applyJSON(t, pod(site.ns, "consul-2", consul)))
		if got := watchArg(getPod(t, site.ns, "consul-2")); got != "45" {
			t.Errorf("--watch %q; want 45", got)
		}
	})

	// A broken edit: a valid-looking consul change together with a fleet
	// value that fails validation. Nothing of it may take effect.
	broken := strings.Replace(strings.Replace(edited, consulLine45, consulLine99, 1), `watchSeconds: "30"`, `watchSeconds: "soon"`, 1)
	logBefore := len(site.serve.proc.logText())
	writeInstallation(t, site.installation, broken)

	t.Run("after a broken edit, the last good installation still decides", func(t *testing.T) {
		err := eventually("the broken edit is rejected", 30*time.Second, 250*time.Millisecond, func() error {
			if strings.Contains(site.serve.proc.logText()[logBefore:], "installation reload rejected") {
				return nil
			}
			return errNoEffectYet
		})
		if err != nil {
			t.Fatalf("%v; serve logged:\n%s", err, site.serve.proc.logTail(20))
		}
		r := applyJSON(t, pod(site.ns, "consul-3", consul))
		wantAdmitted(t, r)
		if got := watchArg(getPod(t, site.ns, "consul-3")); got != "45" {
			t.Errorf("--watch %q; want 45 (the last good installation)", got)
		}
	})
}
