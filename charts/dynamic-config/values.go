// Package chart embeds the chart's own default values (values.yaml) for the
// decider's chart emulation (`check-installation --values`, cmd/dynamic-config):
// --values lays a user's file over exactly what `helm install` would, never a copy.
package chart

import _ "embed" // values.yaml

// Values is the chart's values.yaml as committed.
//
//go:embed values.yaml
var Values []byte
