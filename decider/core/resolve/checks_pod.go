package resolve

import (
	"slices"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// awsEnv are the names an aws-secret supplies.
var awsEnv = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}

// agentEnv is B49: the agent-env grammar (spec 01 §3.10), then
// agent-env.aws and agent-env.reserved. The entries are kept for the merge.
func agentEnv(s *state) *decision.Refusal {
	a := &s.def.ann[registry.AgentEnv]
	if !a.set {
		return nil
	}
	entries := make([]installation.EnvEntry, 0, strings.Count(a.value, ",")+1)
	var ref *decision.Refusal
	listItems(a.value, func(item string) bool {
		name, val, ok := strings.Cut(item, "=")
		if !ok {
			ref = refuse("agent-env.entry", a.key, "", "dynamic-config.rs/agent-env holds "+q(item)+": comma-separated NAME=value pairs (a value itself cannot contain a comma)")
			return false
		}
		name = strings.TrimSpace(name)
		if !envName(name) {
			ref = refuse("agent-env.name", a.key, "", "dynamic-config.rs/agent-env names "+q(name)+`: variable names are UPPER_SNAKE, like "RUST_LOG"`)
			return false
		}
		for _, e := range entries {
			if e.Name == name {
				ref = refuse("agent-env.twice", a.key, "", "dynamic-config.rs/agent-env sets "+name+" twice")
				return false
			}
		}
		entries = append(entries, installation.EnvEntry{Name: name, Value: val})
		return true
	})
	if ref != nil {
		return ref
	}
	if len(entries) == 0 {
		return refuse("agent-env.nothing", a.key, "", "dynamic-config.rs/agent-env is present and names nothing: drop it or fill it")
	}
	if s.def.vals[registry.AWSSecret].set {
		for _, e := range entries {
			if slices.Contains(awsEnv, e.Name) {
				return refuse("agent-env.aws", a.key, "", "dynamic-config.rs/agent-env sets "+e.Name+", and dynamic-config.rs/aws-secret already supplies it: one credential, one place")
			}
		}
	}
	for _, e := range entries {
		if slices.Contains(installation.ReservedAgentEnv, e.Name) { // agent-env.reserved, the fleet list's rule too
			return refuse("agent-env.reserved", a.key, "", "dynamic-config.rs/agent-env sets "+e.Name+", which the injection sets itself: drop it")
		}
	}
	s.agentEnv = entries
	return nil
}

// envName is ^[A-Z_][A-Z0-9_]*$.
func envName(n string) bool {
	if n == "" || !(n[0] >= 'A' && n[0] <= 'Z' || n[0] == '_') {
		return false
	}
	for i := 1; i < len(n); i++ {
		c := n[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// listItems walks a comma-separated list, items trimmed, empty items dropped.
func listItems(v string, yield func(string) bool) {
	for v != "" {
		var item string
		item, v, _ = strings.Cut(v, ",")
		if item = strings.TrimSpace(item); item != "" && !yield(item) {
			return
		}
	}
}

// hasContainer reports whether spec.containers holds name, and its index.
func (s *state) container(name string) (int, bool) {
	for i := range s.f.Containers {
		if s.f.Containers[i].Name == name {
			return i, true
		}
	}
	return -1, false
}

// injectContainers is B50.
func injectContainers(s *state) *decision.Refusal {
	a := &s.def.ann[registry.InjectContainers]
	if !a.set {
		return nil
	}
	var ref *decision.Refusal
	named := false
	listItems(a.value, func(item string) bool {
		named = true
		if _, ok := s.container(item); !ok {
			ref = refuse("inject-containers.missing", a.key, "", "dynamic-config.rs/inject-containers names container "+q(item)+", and the pod has no such container")
			return false
		}
		return true
	})
	if !named {
		return refuse("inject-containers.empty", a.key, "", "dynamic-config.rs/inject-containers is empty: name one or more of the pod's containers, comma-separated, or drop it to mount into every container")
	}
	return ref
}

// envInject is B51.
func envInject(s *state) *decision.Refusal {
	a := &s.def.ann[registry.EnvInject]
	if !a.set {
		return nil
	}
	target := a.value
	if ic := &s.def.ann[registry.InjectContainers]; ic.set {
		listed := false
		listItems(ic.value, func(item string) bool {
			listed = item == target
			return !listed
		})
		if !listed {
			return refuse("env-inject.excluded", a.key, "", "dynamic-config.rs/env-inject names container "+q(target)+", which dynamic-config.rs/inject-containers leaves out: the file would not be mounted there")
		}
	}
	idx, ok := s.container(target)
	if !ok {
		return refuse("env-inject.missing", a.key, "", "dynamic-config.rs/env-inject names container "+q(target)+", and the pod has no such container")
	}
	c := &s.f.Containers[idx]
	if !c.HasCommand || len(c.Command) == 0 {
		return refuse("env-inject.no-command", a.key, "", "dynamic-config.rs/env-inject names container "+q(target)+", which has no command: the wrapper must know what to exec, and the image's ENTRYPOINT cannot be read at admission — spell the command out in the pod")
	}
	p := &s.def.vals[registry.Path]
	if p.set && !shellSafe(p.text) {
		return refuse("env-inject.path", a.key, "", "dynamic-config.rs/env-inject sources "+q(p.text)+` in a shell, and that path holds characters the wrapper does not quote: use letters, digits, ".", "_", "-" and "/"`)
	}
	if er := &s.def.ann[registry.EnvRestart]; er.set && er.value == "true" && c.HasLivenessProbe {
		return refuse("env-restart.liveness", er.key, "", "dynamic-config.rs/env-restart needs the livenessProbe of container "+q(target)+", and it already has one: the restart check would replace it")
	}
	if p.set && !strings.HasSuffix(p.text, ".env") {
		return refuse("env-inject.format", a.key, "", "dynamic-config.rs/env-inject sources "+q(p.text)+" in a shell, and only a .env file is shell syntax: end dynamic-config.rs/path with .env")
	}
	return nil
}

// shellSafe is [A-Za-z0-9._/-]*.
func shellSafe(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '/' || c == '-') {
			return false
		}
	}
	return true
}
