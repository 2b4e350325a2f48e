package chart

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
)

// The fleet keys the chart writes into the installation document, and the
// built-ins it leaves out, are the installation table's (decider/core/
// installation, whose fleet rows are the registry's): both the emulation
// (installation.go) and templates/_installation.tpl (InstallationTemplate,
// `make docs`; `make check-docs` fails on a stale template) read them here.

// defaultsPrefix is where the chart keeps the fleet defaults.
const defaultsPrefix = "agent.defaults."

// perStoreValue is the fleet value the chart renders as storeDefaults, a map
// of its own (not one of the scalar fleet keys).
const perStoreValue = "perStore"

// FleetKey is one scalar document key the chart writes from a fleet value.
type FleetKey struct {
	// Key is the document key (spec 02 §2.6).
	Key string
	// Value is its name under agent.defaults.
	Value string
	// BuiltIn is the key's built-in default.
	BuiltIn string
}

// FleetKeys are the installation settings a value under agent.defaults sets,
// in the installation table's order, but agent.defaults.perStore (the
// storeDefaults map).
func FleetKeys() []FleetKey {
	inst, err := installation.Build(installation.Document{}, nil, docparse.Text)
	if err != nil {
		panic("the empty installation is invalid: " + err.Error()) // the table's own built-ins
	}
	var out []FleetKey
	for _, s := range inst.Settings {
		value, ok := strings.CutPrefix(s.ChartValue, defaultsPrefix)
		if ok && value != perStoreValue {
			out = append(out, FleetKey{Key: s.Name, Value: value, BuiltIn: s.BuiltIn})
		}
	}
	return out
}

// BuiltIns are the document keys whose chart default (values.yaml) is their
// built-in, by key: the chart writes them only when a value differs, so that
// its defaults alone give the empty installation's settings.
func BuiltIns() map[string]string {
	defaults := lookupPath(chartDefaults(), "agent", "defaults")
	out := map[string]string{}
	for _, k := range FleetKeys() {
		v := lookupPath(defaults, k.Value)
		if k.BuiltIn != "" && v != nil && v.Kind == doctree.Scalar && installation.Trim(v.Value) == k.BuiltIn {
			out[k.Key] = k.BuiltIn
		}
	}
	return out
}

// The two blocks of templates/_installation.tpl that InstallationTemplate writes.
const (
	fleetKeysDefine = `{{- define "dynamic-config.installation.fleetKeys" -}}`
	builtInsDefine  = `{{- define "dynamic-config.installation.builtIns" -}}`
	defineEnd       = `{{- end -}}`
)

// InstallationTemplate is tpl (templates/_installation.tpl) with its
// fleetKeys and builtIns blocks written from FleetKeys and BuiltIns.
func InstallationTemplate(tpl []byte) ([]byte, error) {
	var keys, builtIns strings.Builder
	b := BuiltIns()
	for _, k := range FleetKeys() {
		fmt.Fprintf(&keys, "- [%s, %s]\n", k.Key, k.Value)
		if v, ok := b[k.Key]; ok {
			fmt.Fprintf(&builtIns, "%s: %s\n", k.Key, v)
		}
	}
	out, err := replaceBlock(tpl, fleetKeysDefine, keys.String())
	if err != nil {
		return nil, err
	}
	return replaceBlock(out, builtInsDefine, builtIns.String())
}

// replaceBlock replaces the body of the define that begins with define.
func replaceBlock(tpl []byte, define, body string) ([]byte, error) {
	start := bytes.Index(tpl, []byte(define+"\n"))
	if start < 0 {
		return nil, fmt.Errorf("no %s line", define)
	}
	start += len(define) + 1
	end := bytes.Index(tpl[start:], []byte(defineEnd))
	if end < 0 {
		return nil, fmt.Errorf("%s has no %s", define, defineEnd)
	}
	out := append([]byte{}, tpl[:start]...)
	out = append(out, body...)
	return append(out, tpl[start+end:]...), nil
}
