package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestPprofNeedsTheMetricsListener(t *testing.T) {
	cases := []struct {
		name string
		main func(context.Context, []string, io.Writer) int
		args []string
		want string
	}{
		{"the decider refuses --pprof without a metrics listener", deciderMain,
			[]string{"--plaintext", "--pprof", "--metrics-addr", ""},
			"decider: --pprof serves on the metrics listener; set --metrics-addr too\n"},
		{"the front door refuses --pprof without a metrics listener", frontdoorMain,
			[]string{"--decider-target", "127.0.0.1:9090", "--pprof"},
			"frontdoor: --pprof serves on the metrics listener; set --metrics-addr too\n"},
		{"serve refuses --pprof without a metrics listener", serveMain,
			[]string{"--pprof"},
			"serve: --pprof serves on the metrics listener; set --metrics-addr too\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withFoundationEnv(t, nil)
			var stderr bytes.Buffer
			if code := c.main(t.Context(), c.args, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if stderr.String() != c.want {
				t.Errorf("stderr %q, want %q", stderr.String(), c.want)
			}
		})
	}
}

func TestPprofIsServedOnTheMetricsListenerOnlyWhenAsked(t *testing.T) {
	get := func(t *testing.T, url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	t.Run("with --pprof the profiles are listed next to /metrics", func(t *testing.T) {
		metrics := freeLoopbackAddr(t)
		addrs := foundationServe(t, "--metrics-addr", metrics, "--pprof")
		if code, body := get(t, "http://"+metrics+"/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "allocs") {
			t.Errorf("/debug/pprof/ = %d, want 200 listing the profiles", code)
		}
		if code, _ := get(t, "http://"+metrics+"/metrics"); code != http.StatusOK {
			t.Errorf("/metrics = %d, want 200", code)
		}
		if code, _ := get(t, addrs["frontdoor"]+"/debug/pprof/"); code != http.StatusNotFound {
			t.Errorf("the admission listener's /debug/pprof/ = %d, want 404", code)
		}
	})
	t.Run("without --pprof there is no profile", func(t *testing.T) {
		metrics := freeLoopbackAddr(t)
		foundationServe(t, "--metrics-addr", metrics)
		if code, _ := get(t, "http://"+metrics+"/debug/pprof/"); code != http.StatusNotFound {
			t.Errorf("/debug/pprof/ = %d, want 404", code)
		}
	})
}
