package plan

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// secretEnv are the render's secret references, in env order (spec 03 §3.6 item 1).
var secretEnv = []struct {
	knob     registry.ID
	variable string
}{
	{registry.TokenSecret, envToken},
	{registry.PasswordSecret, envPassword},
	{registry.EndpointSecret, envEndpoint},
}

// agentEnv is one agent's env (spec 03 §3.6). The default render's agents get
// secret env, AWS env, pod identity env, then the merged agent env; a named
// render's agents get their own secret env, the merged agent env, then AWS
// env (a different order on purpose — compatibility). nil when empty.
func agentEnv(v *view) []decision.AgentEnvVar {
	var env []decision.AgentEnvVar
	env = appendSecretEnv(env, v)
	if v.isDefault() {
		env = appendAWSEnv(env, v)
		if v.podIs(registry.Events) || hasCanary(v) {
			env = append(env,
				fieldEnv(envPodName, "metadata.name"),
				fieldEnv(envPodUID, "metadata.uid"))
		}
		env = appendAgentEnv(env, v)
	} else {
		env = appendAgentEnv(env, v)
		env = appendAWSEnv(env, v)
	}
	return env
}

func hasCanary(v *view) bool {
	_, ok := v.pod(registry.CanaryConfigMap)
	return ok
}

func appendSecretEnv(env []decision.AgentEnvVar, v *view) []decision.AgentEnvVar {
	for _, s := range secretEnv {
		ref, ok := v.render.Values.Get(s.knob)
		if !ok {
			continue
		}
		name, key := splitRef(ref, "")
		env = append(env, secretEnvVar(s.variable, name, key))
	}
	return env
}

// appendAWSEnv adds the two AWS variables from the pod-wide aws-secret.
func appendAWSEnv(env []decision.AgentEnvVar, v *view) []decision.AgentEnvVar {
	secret, ok := v.pod(registry.AWSSecret)
	if !ok {
		return env
	}
	return append(env,
		secretEnvVar(envAWSAccessKeyID, secret, envAWSAccessKeyID),
		secretEnvVar(envAWSSecretAccess, secret, envAWSSecretAccess))
}

// appendAgentEnv adds the merged fleet + pod environment as plain values.
func appendAgentEnv(env []decision.AgentEnvVar, v *view) []decision.AgentEnvVar {
	for _, e := range v.in.AgentEnv {
		value := e.Value // a copy: the plan never points into the installation
		env = append(env, decision.AgentEnvVar{Name: e.Name, Value: &value})
	}
	return env
}

func secretEnvVar(variable, secret, key string) decision.AgentEnvVar {
	return decision.AgentEnvVar{
		Name:         variable,
		SecretKeyRef: &decision.SecretKeyRef{Name: secret, Key: key},
	}
}

func fieldEnv(variable, fieldPath string) decision.AgentEnvVar {
	return decision.AgentEnvVar{Name: variable, FieldRef: &decision.FieldRef{FieldPath: fieldPath}}
}
