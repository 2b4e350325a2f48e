package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRollingRestartsLoseNoAdmission (issue 12): a steady loop of asking
// pod creates through the real API server while the two front doors are
// replaced one by one (surge first, as maxSurge 1 / maxUnavailable 0 does),
// and again while the three deciders restart one by one. Every create must
// be stored with its agent; the counts are printed.
func TestRollingRestartsLoseNoAdmission(t *testing.T) {
	f := startFleet(t, 2)

	t.Run("front doors replaced one by one while pods are created: zero failed creates", func(t *testing.T) {
		loop := f.startCreateLoop("door-roll")
		time.Sleep(time.Second)
		for _, old := range append([]*fleetDoor(nil), f.doors...) {
			fresh := f.startDoor() // the surge pod
			if err := eventually(fresh.name+" in the endpoints", productReadyTimeout, 50*time.Millisecond, func() error {
				if !f.lb.isReady(fresh.addr) {
					return errNoEffectYet
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			// SIGTERM: readiness off and Connection: close for the drain
			// delay, then shutdown. The endpoint leaves the balancer
			// endpointsPropagation after the SIGTERM (a terminating pod
			// leaves the EndpointSlice, then kube-proxy catches up), or
			// earlier when the readiness poll sees the 503.
			time.AfterFunc(endpointsPropagation, func() { f.lb.remove(old.addr) })
			if err := old.proc.stop(30 * time.Second); err != nil {
				t.Fatalf("%s: %v", old.name, err)
			}
			time.Sleep(500 * time.Millisecond)
		}
		time.Sleep(time.Second)
		loop.report(t, "front doors restarted one by one")
	})

	t.Run("deciders restarted one by one while pods are created: zero failed creates", func(t *testing.T) {
		loop := f.startCreateLoop("decider-roll")
		time.Sleep(time.Second)
		for _, d := range f.deciders {
			d.stop() // SIGTERM: NOT_SERVING, the drain delay, graceful stop
			d.start()
			took := waitServing(t, d, 60*time.Second)
			t.Logf("%s answers Decide calls again %s after it was ready", d.name, took.Round(time.Millisecond))
		}
		time.Sleep(time.Second)
		loop.report(t, "deciders restarted one by one")
	})
}

// TestDeciderChaos (issue 12): one of three deciders killed (SIGKILL, no
// drain) under load costs no admission; all deciders killed refuse asking
// pods with the decider-unavailable message while plain pods are admitted
// without reaching the webhook; the time to recover after the restart is
// reported.
func TestDeciderChaos(t *testing.T) {
	f := startFleet(t, 1)
	door := f.doors[0]

	t.Run("one of three deciders killed under load: zero failed creates", func(t *testing.T) {
		loop := f.startCreateLoop("kill-one")
		time.Sleep(time.Second)
		victim := f.deciders[1]
		victim.kill()
		time.Sleep(2 * time.Second)
		restarted := time.Now()
		victim.start()
		took := waitServing(t, victim, 60*time.Second)
		loop.report(t, "one of three deciders killed")
		recovery := time.Since(restarted)
		fmt.Printf("e2e fleet: the killed decider answered again %s after its restart (%s after it was ready)\n",
			recovery.Round(time.Millisecond), took.Round(time.Millisecond))
	})

	for _, d := range f.deciders {
		d.kill()
	}

	t.Run("all deciders killed: five asking pods in a row are refused with the decider-unavailable message", func(t *testing.T) {
		refused := 0
		for i := range 5 {
			r := createPod(f.askingPod(fmt.Sprintf("all-down-%d", i)), false)
			msg := r.message()
			if r.ok() || !strings.Contains(msg, unavailablePrefix) || !strings.HasSuffix(msg, mutateDenySuffix) {
				t.Errorf("create %d: HTTP %d %q; want a refusal %q…%q", i, r.code, msg, unavailablePrefix, mutateDenySuffix)
				continue
			}
			refused++
		}
		fmt.Printf("e2e fleet: all deciders killed: %d of 5 asking pod creates refused with the decider-unavailable message\n", refused)
	})

	t.Run("all deciders killed: plain pods are admitted and never reach the webhook", func(t *testing.T) {
		answered := func() float64 {
			return metricSum(t, door.metricsAddr, "dynamic_config_admissions_total")
		}
		before := answered()
		admitted := 0
		for i := range 5 {
			r := createPod(pod(f.ns, fmt.Sprintf("plain-all-down-%d", i), map[string]string{"team": "payments"}), false)
			if !r.ok() {
				t.Errorf("plain pod %d: HTTP %d %q; want it stored", i, r.code, r.message())
				continue
			}
			admitted++
		}
		if got := answered() - before; got != 0 {
			t.Errorf("the front door answered %v reviews for plain pods; want 0 (the matchCondition filters them)", got)
		}
		fmt.Printf("e2e fleet: all deciders killed: %d of 5 plain pod creates admitted, front door reviews for them: %v\n",
			admitted, answered()-before)
	})

	t.Run("after the deciders restart, asking pods are injected again; recovery time reported", func(t *testing.T) {
		restarted := time.Now()
		for _, d := range f.deciders {
			d.start()
		}
		ready := time.Since(restarted)
		var last createResult
		n := 0
		err := eventually("an asking pod is injected again", 60*time.Second, 100*time.Millisecond, func() error {
			n++
			last = createPod(f.askingPod(fmt.Sprintf("recovered-%d", n)), true)
			if last.ok() && last.injected() {
				return nil
			}
			return errNoEffectYet
		})
		if err != nil {
			t.Fatalf("%v\nlast: HTTP %d %s", err, last.code, last.message())
		}
		recovery := time.Since(restarted)
		fmt.Printf("e2e fleet: recovery after restarting all deciders: %s (deciders ready after %s; %d probes)\n",
			recovery.Round(time.Millisecond), ready.Round(time.Millisecond), n)
	})
}
