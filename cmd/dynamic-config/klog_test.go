package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// client-go logs through klog (API server warnings, throttling); no command
// prints a klog line unless asked with --log-level debug, which puts it in
// the command's own log (issue 40 item 9).
func TestNoKlogLineReachesStderrUnlessDebug(t *testing.T) {
	for _, tc := range []struct {
		name  string
		level string
		want  bool
	}{
		{"at the default level no klog line is printed", "info", false},
		{"--log-level debug shows it in the command's log", "debug", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			saved := os.Stderr
			os.Stderr = w
			var stderr bytes.Buffer
			fs := newFlagSet("check-cluster", &stderr)
			var g globalFlags
			g.register(fs, "text")
			_, _, done := parseArgs(fs, &g, []string{"--log-level", tc.level}, &stderr)
			klog.Warning("299 - \"apps/v1beta1 Deployment is deprecated\"")
			klog.Flush()
			os.Stderr = saved
			w.Close()
			raw, _ := io.ReadAll(r)
			if done {
				t.Fatalf("parseArgs stopped: %s", stderr.String())
			}
			if len(raw) > 0 {
				t.Errorf("klog wrote to the process's stderr: %q", raw)
			}
			if got := strings.Contains(stderr.String(), "deprecated"); got != tc.want {
				t.Errorf("the command's log %q: has the klog line %v, want %v", stderr.String(), got, tc.want)
			}
		})
	}
}
