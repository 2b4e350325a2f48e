package kubeclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: with-ns
  context: {cluster: c, user: u, namespace: shop}
- name: without-ns
  context: {cluster: c, user: u}
current-context: %s
`

func writeKubeconfig(t *testing.T, context string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(strings.Replace(kubeconfig, "%s", context, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTheNamespaceIsTheContextsElseDefault(t *testing.T) {
	tests := []struct {
		name, context, want string
	}{
		{"a context with a namespace names it", "with-ns", "shop"},
		{"a context without one is default", "without-ns", "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Kubeconfig{Path: writeKubeconfig(t, tt.context)}).Namespace(); got != tt.want {
				t.Errorf("Namespace() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTheClientCarriesItsNameAndRate(t *testing.T) {
	path := writeKubeconfig(t, "with-ns")
	cfg, err := Kubeconfig{Path: path, UserAgent: "dynamic-config-test", QPS: 20}.REST()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6443" || cfg.UserAgent != "dynamic-config-test" || cfg.QPS != 20 || cfg.Burst != 40 {
		t.Errorf("host %q, user agent %q, qps %v, burst %d", cfg.Host, cfg.UserAgent, cfg.QPS, cfg.Burst)
	}
	cfg, err = Kubeconfig{Path: path}.REST()
	if err != nil || cfg.QPS != 0 || cfg.Burst != 0 {
		t.Errorf("without a rate: qps %v, burst %d, %v; want client-go's defaults (0)", cfg.QPS, cfg.Burst, err)
	}
}

func TestAMissingKubeconfigIsAnAPIServerClientError(t *testing.T) {
	_, err := Kubeconfig{Path: filepath.Join(t.TempDir(), "absent")}.Typed()
	if err == nil || !strings.HasPrefix(err.Error(), "API server client: ") {
		t.Errorf("err = %v, want an API server client error", err)
	}
}

func TestTheScopeIsEveryNamespaceTheOneGivenOrTheContexts(t *testing.T) {
	k := Kubeconfig{Path: writeKubeconfig(t, "with-ns")}
	for _, c := range []struct {
		name, namespace string
		all             bool
		want, wantErr   string
	}{
		{"-A is every namespace", "", true, "", ""},
		{"-n is the namespace given", "db", false, "db", ""},
		{"neither is the context's namespace", "", false, "shop", ""},
		{"-n with -A is an error", "db", true, "", "-n and -A exclude each other"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := k.Scope(c.namespace, c.all)
			if got != c.want || (err == nil) != (c.wantErr == "") || (err != nil && err.Error() != c.wantErr) {
				t.Errorf("Scope(%q, %v) = %q, %v; want %q, %q", c.namespace, c.all, got, err, c.want, c.wantErr)
			}
		})
	}
}
