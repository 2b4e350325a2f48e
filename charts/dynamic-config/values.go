// Package chart is the chart's installation mapping in Go, next to the
// templates it mirrors: the offline doors' --values (check-installation,
// inject, explain) load the installation `helm install` would render
// (installation.go, helm.go), over the chart's own default values embedded
// here — never a copy — and with the fleet keys and built-ins of the
// installation table, which also write templates/_installation.tpl's lists
// (fleetkeys.go).
package chart

import _ "embed" // values.yaml

// Values is the chart's values.yaml as committed.
//
//go:embed values.yaml
var Values []byte

// Schema is the chart's values.schema.json as committed.
//
//go:embed values.schema.json
var Schema []byte
