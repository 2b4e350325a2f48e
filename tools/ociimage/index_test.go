package main

import (
	"strings"
	"testing"
)

func TestABadPlatformBinaryIsRefusedNamingTheForm(t *testing.T) {
	for _, arg := range []string{"linux/arm64", "arm64=bin/x", "windows/amd64=bin/x", "linux/=bin/x", "linux/amd64="} {
		t.Run(arg, func(t *testing.T) {
			if _, err := parsePlatformBinary(arg); err == nil || !strings.Contains(err.Error(), "want linux/ARCH=PATH") {
				t.Errorf("err %v, want the linux/ARCH=PATH refusal", err)
			}
		})
	}
}

func TestAnIndexWithAPlatformTwiceOrNoneIsRefused(t *testing.T) {
	twice := []platformBinary{}
	for range 2 {
		pb, err := parsePlatformBinary("linux/amd64=unused")
		if err != nil {
			t.Fatal(err)
		}
		twice = append(twice, pb)
	}
	for _, c := range []struct {
		name     string
		binaries []platformBinary
		want     string
	}{
		{"a platform given twice", twice, "platform linux/amd64 is given twice"},
		{"no platform", nil, "no --binary"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := buildIndex(imageSpec{Version: "v1.2.3"}, c.binaries); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want %q", err, c.want)
			}
		})
	}
}
