package daemon

import (
	"errors"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
)

// ForFlags is the listener's TLS as the decider's flags name it (zero with
// plaintext: --plaintext), or the flags' conflict (spec 07 §1.1).
func (t TLS) ForFlags(plaintext bool) (TLS, error) {
	hasPair := t.CertFile != "" || t.KeyFile != ""
	switch {
	case plaintext && hasPair:
		return t, errors.New("--plaintext and --tls-cert/--tls-key exclude each other")
	case plaintext && t.ClientCA != "":
		return t, errors.New("--tls-client-ca needs --tls-cert/--tls-key; it cannot be used with --plaintext")
	case plaintext:
		return TLS{}, nil
	case t.CertFile == "" || t.KeyFile == "":
		if hasPair {
			return t, errors.New("--tls-cert and --tls-key go together")
		}
		return t, errors.New("no TLS pair at --tls-cert/--tls-key and --plaintext not set")
	}
	return t, nil
}

// CheckCallers validates the cluster name and its pairing with the callers
// file and the token file, naming the flags (--cluster-name, --callers,
// --auth-token-file).
func (c *Config) CheckCallers() error {
	if problem := callers.CheckClusterName(c.Cluster); problem != "" {
		return errors.New("--cluster-name is " + problem)
	}
	if c.Callers == "" {
		return nil
	}
	if c.TokenFile != "" {
		return errors.New("--callers and --auth-token-file exclude each other; list the token's SHA-256 in the callers file as a caller's tokenSHA256")
	}
	if c.Cluster == "" {
		return errors.New("--callers needs --cluster-name: the decider's own cluster, which a request naming no cluster is decided for and checked against")
	}
	return nil
}
