package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The binaries the harness drives, passed in by `make e2e` (mk/e2e.mk).
const (
	envKubeAPIServer = "E2E_KUBE_APISERVER" // the kube-apiserver built from k8s.io/kubernetes
	envEtcd          = "E2E_ETCD"           // the embedded-etcd main (tools/etcd)
	envProduct       = "E2E_DYNAMIC_CONFIG" // the dynamic-config binary under test
	envKubectl       = "E2E_KUBECTL"        // kubectl; default: kubectl on PATH
	envWorkDir       = "E2E_WORK_DIR"       // where logs and state go; default: a temporary directory
)

// Bounds of the slow steps on a loaded 2-core machine.
const (
	etcdReadyTimeout      = 60 * time.Second
	apiserverReadyTimeout = 120 * time.Second
	productReadyTimeout   = 30 * time.Second
	webhookEffectTimeout  = 30 * time.Second
	kubectlTimeout        = 60 * time.Second
)

// cluster is the one etcd + kube-apiserver pair every test of the run shares.
// Tests isolate themselves with a fresh namespace and webhook configurations
// whose namespaceSelector matches only that namespace.
type cluster struct {
	workDir    string
	auditLog   string
	product    string
	kubectl    string
	kubeconfig string
	serverURL  string
	token      string
	// webhookClientCA is the CA of the client certificate the API server
	// presents to admission webhooks that ask for one (issue 17).
	webhookClientCA string
}

var theCluster *cluster

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	c, stop, err := startCluster()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		stop()
		return 1
	}
	theCluster = c
	code := m.Run()
	stop()
	if code == 0 && os.Getenv(envWorkDir) == "" {
		os.RemoveAll(c.workDir)
	} else {
		fmt.Fprintf(os.Stderr, "e2e: logs and state kept in %s\n", c.workDir)
	}
	return code
}

// startCluster starts etcd and kube-apiserver on loopback and writes a
// kubeconfig. stop is always safe to call, even after a failure.
func startCluster() (*cluster, func(), error) {
	stop := func() {}
	bins := map[string]string{}
	for _, name := range []string{envKubeAPIServer, envEtcd, envProduct} {
		v := os.Getenv(name)
		if v == "" {
			return nil, stop, fmt.Errorf("%s is not set; run the end-to-end tests with `make e2e`", name)
		}
		if _, err := os.Stat(v); err != nil {
			return nil, stop, fmt.Errorf("%s: %w", name, err)
		}
		bins[name] = v
	}
	kubectl := os.Getenv(envKubectl)
	if kubectl == "" {
		kubectl = "kubectl"
	}
	kubectl, err := exec.LookPath(kubectl)
	if err != nil {
		return nil, stop, fmt.Errorf("kubectl: %w", err)
	}

	workDir := os.Getenv(envWorkDir)
	if workDir == "" {
		if workDir, err = os.MkdirTemp("", "dynamic-config-e2e-"); err != nil {
			return nil, stop, err
		}
	} else if err := os.MkdirAll(workDir, 0o755); err != nil {
		return nil, stop, err
	}
	c := &cluster{workDir: workDir, product: bins[envProduct], kubectl: kubectl}
	stop, err = c.start(bins[envEtcd], bins[envKubeAPIServer])
	if err != nil {
		return nil, stop, err
	}
	return c, stop, nil
}

// start runs etcd and kube-apiserver on loopback with their state under
// c.workDir and writes c's kubeconfig. stop is always safe to call, even
// after a failure. (TestMain starts the run's cluster; a multi-cluster test
// starts a second one the same way.)
func (c *cluster) start(etcdBin, apiserverBin string) (func(), error) {
	var procs []*process
	stop := func() {
		for i := len(procs) - 1; i >= 0; i-- {
			if err := procs[i].stop(15 * time.Second); err != nil {
				fmt.Fprintf(os.Stderr, "e2e: %s: %v\n", procs[i].name, err)
			}
		}
	}
	workDir := c.workDir
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return stop, err
	}

	// etcd
	etcdPort, peerPort, err := twoPorts()
	if err != nil {
		return stop, err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	started := time.Now()
	etcd, err := startProcess("etcd", filepath.Join(workDir, "etcd.log"), nil, etcdBin,
		"--data-dir", filepath.Join(workDir, "etcd-data"),
		"--listen-client-url", etcdURL,
		"--listen-peer-url", fmt.Sprintf("http://127.0.0.1:%d", peerPort))
	if err != nil {
		return stop, err
	}
	procs = append(procs, etcd)
	if err := eventually("etcd /health", etcdReadyTimeout, 200*time.Millisecond, aliveCheck(etcd, func() error {
		return httpOK(http.DefaultClient, etcdURL+"/health", "")
	})); err != nil {
		return stop, err
	}
	fmt.Fprintf(os.Stderr, "e2e: etcd ready on %s in %s\n", etcdURL, time.Since(started).Round(time.Millisecond))

	// kube-apiserver
	pki := filepath.Join(workDir, "apiserver")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return stop, err
	}
	c.token = randomHex(16)
	tokenFile := filepath.Join(pki, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(c.token+`,e2e-admin,e2e-admin,"system:masters"`+"\n"), 0o600); err != nil {
		return stop, err
	}
	auditPolicy := filepath.Join(pki, "audit-policy.yaml")
	if err := os.WriteFile(auditPolicy, []byte(auditPolicyYAML), 0o644); err != nil {
		return stop, err
	}
	c.auditLog = filepath.Join(workDir, "audit.log")
	saKey, saPub := filepath.Join(pki, "sa.key"), filepath.Join(pki, "sa.pub")
	if err := writeServiceAccountKeys(saKey, saPub); err != nil {
		return stop, err
	}
	admissionConfig, webhookClientCA, err := writeWebhookClientAuth(filepath.Join(pki, "webhook-client"))
	if err != nil {
		return stop, err
	}
	c.webhookClientCA = webhookClientCA
	apiPort, err := onePort()
	if err != nil {
		return stop, err
	}
	c.serverURL = fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	started = time.Now()
	apiserver, err := startProcess("kube-apiserver", filepath.Join(workDir, "kube-apiserver.log"), nil, apiserverBin,
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(apiPort),
		"--cert-dir", filepath.Join(pki, "serving"),
		"--token-auth-file", tokenFile,
		"--authorization-mode", "RBAC",
		"--service-account-key-file", saPub,
		"--service-account-signing-key-file", saKey,
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range", "10.96.0.0/24",
		// No controller-manager runs, so no namespace gets a default ServiceAccount.
		"--disable-admission-plugins", "ServiceAccount",
		"--admission-control-config-file", admissionConfig,
		"--endpoint-reconciler-type", "none",
		"--audit-policy-file", auditPolicy,
		"--audit-log-path", c.auditLog,
		"--audit-log-mode", "blocking",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		"--v", "1",
	)
	if err != nil {
		return stop, err
	}
	procs = append(procs, apiserver)
	insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the apiserver's self-signed loopback certificate
	}}
	if err := eventually("kube-apiserver /readyz", apiserverReadyTimeout, 250*time.Millisecond, aliveCheck(apiserver, func() error {
		return httpOK(insecure, c.serverURL+"/readyz", c.token)
	})); err != nil {
		return stop, err
	}
	fmt.Fprintf(os.Stderr, "e2e: kube-apiserver ready on %s in %s\n", c.serverURL, time.Since(started).Round(time.Millisecond))

	c.kubeconfig = filepath.Join(workDir, "kubeconfig")
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: e2e-admin
  user:
    token: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: e2e-admin}
current-context: e2e
`, c.serverURL, c.token)
	if err := os.WriteFile(c.kubeconfig, []byte(kubeconfig), 0o600); err != nil {
		return stop, err
	}
	return stop, nil
}

// auditPolicyYAML records, at Metadata level (which carries the webhooks'
// audit annotations), every create of a pod or workload.
const auditPolicyYAML = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    verbs: [create]
    resources:
      - group: ""
        resources: [pods, replicationcontrollers]
      - group: apps
        resources: [deployments, statefulsets, daemonsets, replicasets]
      - group: batch
        resources: [jobs, cronjobs]
  - level: None
`

// httpOK GETs url (with a bearer token when set) and wants a 200.
func httpOK(client *http.Client, url, token string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, trimmed(body))
	}
	return nil
}

func writeServiceAccountKeys(keyPath, pubPath string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("service-account key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// onePort and twoPorts reserve loopback ports outside a test (TestMain).
func onePort() (int, error) {
	ports, err := reservePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

func twoPorts() (int, int, error) {
	ports, err := reservePorts(2)
	if err != nil {
		return 0, 0, err
	}
	return ports[0], ports[1], nil
}
