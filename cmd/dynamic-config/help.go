package main

import (
	"fmt"
	"io"
)

// Every subcommand's --help is one page in one style (kubectl's): the usage
// line, what the command does, examples, then the flags as pflag prints
// them. The pages' text lives next to the command table (main.go).

// example is one --help example: what it does and the command line.
type example struct {
	what, command string
}

const (
	deciderSynopsis           = "usage: dynamic-config decider [--installation FILE] [--rollout FILE] [--addr HOST:PORT] [--tls-cert FILE --tls-key FILE | --plaintext] [--callers FILE | --auth-token-file FILE]"
	frontdoorSynopsis         = "usage: dynamic-config frontdoor --decider-target TARGET [--addr HOST:PORT] [--tls-cert FILE --tls-key FILE | --self-rotate] [--on-decider-error deny|allow]"
	serveSynopsis             = "usage: dynamic-config serve [--installation FILE] [--rollout FILE] [--addr HOST:PORT] [--decider-addr HOST:PORT] [--tls-generate]"
	checkInstallationSynopsis = "usage: dynamic-config check-installation [--installation FILE | --values FILE] [--rollout FILE] [--no-env] [-o text|json]"
	fleetStatusSynopsis       = "usage: dynamic-config fleet-status --decider-target TARGET [--decider-plaintext | --decider-ca FILE] [--timeout DURATION]"
	versionSynopsis           = "usage: dynamic-config version [-o text|json]"
	completionSynopsis        = "usage: dynamic-config completion bash|zsh|fish"
)

var (
	deciderExamples = []example{
		{"serve an installation on loopback without TLS (local use)", "dynamic-config decider --installation installation.yaml --addr 127.0.0.1:9090 --plaintext"},
		{"serve with TLS and a callers file, as the chart runs it", "dynamic-config decider --installation /etc/dynamic-config/installation.yaml --tls-cert tls.crt --tls-key tls.key --callers callers.yaml"},
	}
	frontdoorExamples = []example{
		{"admit through a decider in the same cluster", "dynamic-config frontdoor --decider-target dns:///dynamic-config-decider.dynamic-config.svc:9090 --decider-ca ca.crt"},
		{"local use against `dynamic-config decider --plaintext`", "dynamic-config frontdoor --plaintext --addr 127.0.0.1:8080 --decider-target 127.0.0.1:9090 --decider-plaintext"},
	}
	serveExamples = []example{
		{"both servers on loopback with the embedded default installation", "dynamic-config serve"},
		{"your installation, behind a generated TLS pair", "dynamic-config serve --installation installation.yaml --tls-generate"},
	}
	injectExamples = []example{
		{"the mutated manifest, as the API server would store it", "dynamic-config inject -f pod.yaml --installation installation.yaml"},
		{"what the chart's values would do to a Deployment, as a JSON Patch", "dynamic-config inject -f deployment.yaml --values values.yaml -o patch"},
		{"pipe a whole directory into a server-side dry run", "dynamic-config inject -f manifests/ --installation installation.yaml | kubectl apply --dry-run=server -f -"},
	}
	explainExamples = []example{
		{"where every value of a pod's renders comes from", "dynamic-config explain -f pod.yaml --installation installation.yaml"},
		{"the same with the unset knobs, as JSON", "dynamic-config explain -f pod.yaml --values values.yaml --all -o json"},
	}
	checkInstallationExamples = []example{
		{"every problem of an installation document, at once", "dynamic-config check-installation --installation installation.yaml"},
		{"the installation the chart's values make, as GetInstallation answers it", "dynamic-config check-installation --values values.yaml -o json"},
		{"a rollout's candidate, validated as the decider will", "dynamic-config check-installation --installation installation.yaml --rollout rollout.yaml"},
	}
	fleetStatusExamples = []example{
		{"compare every replica's revision (exit 1 on skew)", "dynamic-config fleet-status --decider-target dns:///dynamic-config-decider.dynamic-config.svc:9090 --decider-ca ca.crt"},
	}
	versionExamples = []example{
		{"the version, the agent image and the Go version", "dynamic-config version"},
		{"the same with the VCS revision, for a script", "dynamic-config version -o json"},
	}
	completionExamples = []example{
		{"bash, for the current shell", "source <(dynamic-config completion bash)"},
		{"zsh, installed for every new shell", `dynamic-config completion zsh > "${fpath[1]}/_dynamic-config"`},
		{"fish", "dynamic-config completion fish > ~/.config/fish/completions/dynamic-config.fish"},
	}
)

// writeHelp writes subcommand name's help page; flags are pflag's usages.
func writeHelp(w io.Writer, name, flags string) {
	sc, ok := subcommands[name]
	if !ok {
		fmt.Fprintf(w, "usage: dynamic-config %s [flags]\n\nFlags:\n%s", name, flags)
		return
	}
	fmt.Fprintf(w, "%s\n\n%s.\n", sc.synopsis, capitalized(sc.summary))
	if len(sc.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range sc.examples {
			fmt.Fprintf(w, "  # %s\n  %s\n", e.what, e.command)
		}
	}
	fmt.Fprintf(w, "\nFlags:\n%s", flags)
}

func capitalized(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
