package main

import (
	"bytes"
	"runtime"
	"testing"
)

func TestVersionPrintsBinaryAgentImageAndGo(t *testing.T) {
	withFoundationEnv(t, nil)
	old := version
	version = "v9.9.9"
	t.Cleanup(func() { version = old })
	var stdout, stderr bytes.Buffer
	if code := runVersion(nil, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := "dynamic-config v9.9.9\n" +
		"agent image: ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.3.0\n" +
		"go: " + runtime.Version() + "\n"
	if stdout.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), want)
	}
}
