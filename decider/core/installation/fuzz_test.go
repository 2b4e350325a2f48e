package installation

import (
	"reflect"
	"testing"
)

func FuzzStoreDefaults(f *testing.F) {
	for _, s := range []string{
		"consul: endpoint=http://consul.infra.svc:8500!, watch-seconds=10",
		"vault: overridable=false, endpoint=https://vault.vault.svc:8200, auth=kubernetes, watch-seconds=30?",
		"git: watch-seconds=120, agent-memory-limit=128Mi; s3: aws-secret=minio-cred",
		"redis: key=Hello!?; nats: key==x", "x", ";", "vault:", "a=b:c", "vault: overridable=true!",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		groups, problems := ParseStoreDefaults(text)
		if len(problems) > 0 {
			return
		}
		canon := FormatStoreDefaults(groups)
		again, problems := ParseStoreDefaults(canon)
		if len(problems) > 0 {
			t.Fatalf("canonical form %q of %q refused: %q", canon, text, problems)
		}
		if FormatStoreDefaults(again) != canon || !sameGroups(groups, again) {
			t.Fatalf("round trip of %q: %q → %q", text, canon, FormatStoreDefaults(again))
		}
	})
}

func sameGroups(a, b map[string]*StoreGroup) bool {
	if len(a) != len(b) {
		return false
	}
	for s, g := range a {
		h, ok := b[s]
		if !ok || !reflect.DeepEqual(g.Knobs, h.Knobs) || !reflect.DeepEqual(g.Overridable, h.Overridable) {
			return false
		}
	}
	return true
}

func FuzzGate(f *testing.F) {
	for _, s := range []string{
		"payments: HTTPS_PROXY, AWS_*; *: RUST_LOG", "payments: vault, s3; *: consul", "sandbox: git", "*", ";", "a:", " , ",
	} {
		f.Add("agentEnvAllow", s)
		f.Add("sourceAllow", s)
		f.Add("sourceDeny", s)
	}
	f.Fuzz(func(t *testing.T, gate, text string) {
		switch gate {
		case "agentEnvAllow", "sourceAllow", "sourceDeny":
		default:
			gate = "sourceAllow"
		}
		groups, problems := ParseGate(gate, "CTX", text)
		if len(problems) > 0 {
			return
		}
		canon := FormatGate(groups)
		again, problems := ParseGate(gate, "CTX", canon)
		if len(problems) > 0 || !reflect.DeepEqual(groups, again) {
			t.Fatalf("round trip of %q via %q: %+v %q", text, canon, again, problems)
		}
	})
}

func FuzzEnvList(f *testing.F) {
	for _, s := range []string{
		"HTTPS_PROXY=http://egress.infra.svc:3128, RUST_LOG=info", "A= x y ,B=", "OPTS=a=b", ",", "a=1", "A=1,A=2", "DYNAMIC_CONFIG_AGENT_TOKEN=x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		entries, problems := ParseEnvList("CTX", text)
		if len(problems) > 0 {
			return
		}
		canon := FormatEnvList(entries)
		again, problems := ParseEnvList("CTX", canon)
		if len(problems) > 0 || !reflect.DeepEqual(entries, again) {
			t.Fatalf("round trip of %q via %q: %q %q", text, canon, again, problems)
		}
	})
}
