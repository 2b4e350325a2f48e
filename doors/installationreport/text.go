// Package installationreport writes an installation as check-installation
// shows it (spec 07 §1.6): the GetInstallation content — settings, store
// defaults, gates and the env policy — as tables.
package installationreport

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// WriteText prints the GetInstallation content as tables
// (decision: the layout; an envPolicy listed value shows as <set>).
func WriteText(w io.Writer, r *deciderv1.GetInstallationResponse) {
	doc := r.GetDocumentPath()
	switch {
	case doc == "":
		doc = "none"
	case !r.GetDocumentPresent():
		doc += " (absent)"
	}
	fmt.Fprintln(w, "document: "+doc)
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tVALUE\tPIN\tSOURCE\tFROM")
	for _, s := range r.GetSettings() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.GetName(), shown(s.GetValue()), pin(s), sourceWord(s.GetSource()), s.GetOrigin())
	}
	tw.Flush()

	fmt.Fprintln(w)
	if len(r.GetStoreDefaults()) == 0 {
		fmt.Fprintln(w, "store defaults: none")
	} else {
		fmt.Fprintln(w, "store defaults:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  STORE\tKNOB\tVALUE\tPIN\tFROM")
		for _, sd := range r.GetStoreDefaults() {
			if sd.Overridable != nil {
				fmt.Fprintf(tw, "  %s\t%s\t%t\t\t%s\n", sd.GetStore(), "overridable", sd.GetOverridable(), sd.GetOrigin())
			}
			for _, k := range sd.GetKnobs() {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", sd.GetStore(), k.GetName(), shown(k.GetValue()), pin(k), k.GetOrigin())
			}
		}
		tw.Flush()
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "gates:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, g := range r.GetGates() {
		if len(g.GetGroups()) == 0 {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", g.GetName(), "—", gateEmptyMeaning(g.GetName()))
			continue
		}
		var groups []string
		for _, grp := range g.GetGroups() {
			groups = append(groups, grp.GetNamespace()+": "+strings.Join(grp.GetNames(), ", "))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", g.GetName(), strings.Join(groups, "; "), g.GetOrigin())
	}
	tw.Flush()

	fmt.Fprintln(w)
	p := r.GetEnvPolicy()
	if p == nil {
		fmt.Fprintln(w, "env policy: none")
		return
	}
	fmt.Fprintf(w, "env policy: targets %s (%s)\n", strings.Join(p.GetTargets(), ", "), p.GetOrigin())
	for _, rule := range p.GetRules() {
		var vars []string
		for _, v := range rule.GetEnvironmentVariables() {
			if v.GetHasValue() {
				vars = append(vars, v.GetName()+"=<set>")
			} else {
				vars = append(vars, v.GetName())
			}
		}
		ns := "every namespace"
		if len(rule.GetNamespaces()) > 0 {
			ns = "namespaces " + strings.Join(rule.GetNamespaces(), ", ")
		}
		fmt.Fprintf(w, "  rule %d: reject %s, mode %s, %s: %s\n", rule.GetIndex(), rule.GetReject(), rule.GetMode(), ns, strings.Join(vars, ", "))
	}
}

func shown(v string) string {
	if v == "" {
		return "—"
	}
	return v
}

// pin shows the override rule's outcome, with the marker written on the value.
func pin(s *deciderv1.Setting) string {
	out := ""
	if s.GetPinned() {
		out = "pin"
	}
	switch s.GetMarker() {
	case deciderv1.Marker_MARKER_PINNED:
		out += " (!)"
	case deciderv1.Marker_MARKER_OVERRIDABLE:
		out += " (?)"
	}
	return strings.TrimSpace(out)
}

func sourceWord(s deciderv1.SettingSource) string {
	switch s {
	case deciderv1.SettingSource_SETTING_SOURCE_ENVIRONMENT:
		return "environment"
	case deciderv1.SettingSource_SETTING_SOURCE_DOCUMENT:
		return "document"
	case deciderv1.SettingSource_SETTING_SOURCE_BUILT_IN:
		return "built-in"
	}
	return "unset"
}

func gateEmptyMeaning(gate string) string {
	switch gate {
	case "agentEnvAllow":
		return "(empty: no agent-env name is allowed anywhere)"
	case "sourceAllow":
		return "(empty: every store everywhere)"
	case "sourceDeny":
		return "(empty: nothing denied)"
	}
	return ""
}
