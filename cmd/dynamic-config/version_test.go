package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/internal/buildinfo"
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

// A plain `go build` in a checkout records the VCS revision: the version is
// then scripts/version.sh's untagged form, and -o json carries the revision.
func TestVersionComesFromTheBuildInfoUnderAPlainGoBuild(t *testing.T) {
	withFoundationEnv(t, nil)
	const rev = "0123456789abcdef0123456789abcdef01234567"
	cases := []struct {
		name     string
		ldflags  string // main.version, "dev" when not set
		info     *debug.BuildInfo
		want     string
		revision string
	}{
		{"a clean checkout", "dev", buildInfo("(devel)", rev, "false"), "v0.0.0-dev+0123456789ab", rev},
		{"a checkout with changes", "dev", buildInfo("(devel)", rev, "true"), "v0.0.0-dev+0123456789ab.dirty", rev},
		{"go install module@version", "dev", buildInfo("v1.4.0", "", ""), "v1.4.0", ""},
		{"the Makefile's -X main.version wins", "v1.5.0", buildInfo("(devel)", rev, "false"), "v1.5.0", rev},
		{"no VCS information at all", "dev", buildInfo("(devel)", "", ""), "dev", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			oldVersion, oldInfo := version, readBuildInfo
			version, readBuildInfo = c.ldflags, func() (*debug.BuildInfo, bool) { return c.info, true }
			t.Cleanup(func() { version, readBuildInfo = oldVersion, oldInfo })
			var stdout, stderr bytes.Buffer
			if code := runVersion([]string{"-o", "json"}, nil, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			var got buildinfo.Info
			dec := json.NewDecoder(&stdout)
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("version -o json is not one JSON object: %v", err)
			}
			if got.Version != c.want || got.Revision != c.revision {
				t.Errorf("version %q revision %q, want %q and %q", got.Version, got.Revision, c.want, c.revision)
			}
		})
	}
}

func buildInfo(mainVersion, revision, modified string) *debug.BuildInfo {
	info := &debug.BuildInfo{Main: debug.Module{Version: mainVersion}}
	if revision != "" {
		info.Settings = append(info.Settings, debug.BuildSetting{Key: "vcs.revision", Value: revision},
			debug.BuildSetting{Key: "vcs.modified", Value: modified})
	}
	return info
}
