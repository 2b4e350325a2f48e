package plan

import (
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

func warn(code, message string) decision.Warning {
	return decision.Warning{Code: code, Message: message}
}

// renderWarn is named render render's warning: the render named in its own
// field and in the message's prefix (spec 03 §6.1 rule 8).
func renderWarn(code, render, text string) decision.Warning {
	return decision.Warning{Code: code, Render: render, Message: `render "` + render + `": ` + text}
}

func TestWarnings(t *testing.T) {
	const (
		disk      = "volume-medium=disk keeps the rendered document on node-backed storage, where it outlives the pod"
		world     = "file-mode is world-readable (0644): anything that can read the volume can read the rendered document; 0640 or 0600 keeps it to owner and group"
		watchLow  = "watch-seconds is 2 — every replica polls the store that often; mind the store's load and its bill"
		skip      = "tls-skip-verify is on: the store's certificate is not authenticated, so anyone on the path can stand in for it"
		revokeOff = `revoke-on-shutdown is "false": the dynamic credential stays valid after this pod is gone, until its lease runs out`
	)
	history := func(n, b string) string {
		return "history keeps " + n + " earlier documents of up to " + b + " bytes each, more than the 16Mi shared volume holds: the kubelet evicts the pod when the volume outgrows its sizeLimit — lower history or max-document-bytes"
	}
	cases := []struct {
		name   string
		values map[string]string
		named  []Render
		want   []decision.Warning
	}{
		{"a plain pod has no warnings", nil, nil, nil},
		{"rule 1: volume-medium disk", map[string]string{"volume-medium": "disk"}, nil,
			[]decision.Warning{warn("volume-disk", disk)}},
		{"rule 2: a world bit in the default file mode, shown normalised", map[string]string{"file-mode": "0o644"}, nil,
			[]decision.Warning{warn("file-mode-world-readable", world)}},
		{"rule 2: 0640 has no world bit", map[string]string{"file-mode": "0640"}, nil, nil},
		{"rule 3: watch-seconds below 5", map[string]string{"watch-seconds": "02"}, nil,
			[]decision.Warning{warn("watch-seconds-low", watchLow)}},
		{"rule 3: watch-seconds 5 is fine", map[string]string{"watch-seconds": "5"}, nil, nil},
		{"rule 4: tls-skip-verify", map[string]string{"tls-skip-verify": "true"}, nil,
			[]decision.Warning{warn("tls-skip-verify", skip)}},
		{"rule 5: dynamic with revoke-on-shutdown false", map[string]string{"dynamic": "true", "revoke-on-shutdown": "false"}, nil,
			[]decision.Warning{warn("revoke-on-shutdown-off", revokeOff)}},
		{"rule 6: history × the agent's 8388608 above 16Mi", map[string]string{"history": "3"}, nil,
			[]decision.Warning{warn("history-volume", history("3", "8388608"))}},
		{"rule 6: history 2 × 8388608 is exactly 16Mi and fits", map[string]string{"history": "2"}, nil, nil},
		{"rule 6: history × an annotated max-document-bytes", map[string]string{"history": "10", "max-document-bytes": "01677722"}, nil,
			[]decision.Warning{warn("history-volume", history("10", "1677722"))}},
		{"rule 6: the largest max-document-bytes still warns", map[string]string{"history": "1", "max-document-bytes": "18446744073709551615"}, nil,
			[]decision.Warning{warn("history-volume", history("1", "18446744073709551615"))}},
		{"rule 6: mode init has no watching agent to keep history", map[string]string{"history": "3", "mode": "init"}, nil, nil},
		{"rule 8: named renders, sorted, rules 2–4 with the render's prefix", map[string]string{"volume-medium": "disk", "tls-skip-verify": "true"},
			[]Render{
				{Name: "a", Values: values(map[string]string{"path": "/config/a.json", "file-mode": "0644", "watch-seconds": "2", "tls-skip-verify": "true"})},
				{Name: "b", Values: values(map[string]string{"path": "/config/b.json", "tls-skip-verify": "true", "volume-medium": "disk", "history": "9"})},
			},
			[]decision.Warning{
				warn("volume-disk", disk),
				warn("tls-skip-verify", skip),
				renderWarn("file-mode-world-readable", "a", world),
				renderWarn("watch-seconds-low", "a", watchLow),
				renderWarn("tls-skip-verify", "a", skip),
				renderWarn("tls-skip-verify", "b", skip),
			}},
		{"every default rule in order", map[string]string{"volume-medium": "disk", "file-mode": "644", "watch-seconds": "2",
			"tls-skip-verify": "true", "dynamic": "true", "revoke-on-shutdown": "false", "history": "3"}, nil,
			[]decision.Warning{warn("volume-disk", disk), warn("file-mode-world-readable", world), warn("watch-seconds-low", watchLow),
				warn("tls-skip-verify", skip), warn("revoke-on-shutdown-off", revokeOff), warn("history-volume", history("3", "8388608"))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := input(with(consul(), tc.values), tc.named...)
			// the app runs as the agent's user: these are the rules of
			// spec 03 §6.1, not who can read the file (readable_test.go)
			uid := int64(65532)
			in.Facts.Containers[0].RunAsUser = &uid
			equal(t, "warnings", Warnings(in), tc.want)
		})
	}
}
