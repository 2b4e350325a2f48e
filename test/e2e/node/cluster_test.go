package node

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// theNode is what scripts/node/run.sh hands the tests.
var theNode struct {
	kubeconfig    string // the admin kubeconfig (system:masters)
	kubectl       string
	helm          string
	chart         string // charts/dynamic-config
	imageRepo     string // the repository `make image`'s tarball was imported as
	imageTag      string
	dynamicConfig string // the host's dynamic-config binary (check-cluster from outside)
	work          string // values files, saved logs
	containerd    string // containerd's socket (to kill a container as a crash would)
	certManager   string // the cert-manager module's directory (its CRDs)
	t0            time.Time
	api           *apiClient
}

func TestMain(m *testing.M) {
	if os.Getenv("NODE_KUBECONFIG") == "" {
		fmt.Println("node: NODE_KUBECONFIG is not set: this tier runs under `make e2e-node`")
		os.Exit(0)
	}
	n := &theNode
	for _, v := range []struct {
		dst *string
		env string
	}{
		{&n.kubeconfig, "NODE_KUBECONFIG"}, {&n.kubectl, "NODE_KUBECTL"}, {&n.helm, "NODE_HELM"},
		{&n.chart, "NODE_CHART"}, {&n.imageRepo, "NODE_IMAGE_REPOSITORY"}, {&n.imageTag, "NODE_IMAGE_TAG"},
		{&n.dynamicConfig, "NODE_DYNAMIC_CONFIG"}, {&n.work, "NODE_WORK_DIR"}, {&n.containerd, "NODE_CONTAINERD_SOCK"},
		{&n.certManager, "NODE_CERT_MANAGER_DIR"},
	} {
		if *v.dst = os.Getenv(v.env); *v.dst == "" {
			fmt.Printf("node: %s is not set\n", v.env)
			os.Exit(2)
		}
	}
	ms, err := strconv.ParseInt(os.Getenv("NODE_T0"), 10, 64)
	if err != nil {
		fmt.Printf("node: NODE_T0 %q: %v\n", os.Getenv("NODE_T0"), err)
		os.Exit(2)
	}
	n.t0 = time.UnixMilli(ms)
	if n.api, err = newAPIClient(); err != nil {
		fmt.Printf("node: %v\n", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// mark prints one line of the run's timeline (the clock of scripts/node/up.sh).
func mark(format string, args ...any) {
	fmt.Printf("node: [%7.1fs] %s\n", time.Since(theNode.t0).Seconds(), fmt.Sprintf(format, args...))
}

// result is a finished command.
type result struct {
	args           []string
	stdout, stderr string
	err            error
}

func (r result) String() string {
	return fmt.Sprintf("%s: %v\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.err, r.stdout, r.stderr)
}

func run(ctx context.Context, stdin []byte, env []string, bin string, args ...string) result {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return result{append([]string{filepath.Base(bin)}, args...), out.String(), errb.String(), err}
}

// kubectl runs kubectl against the node (bounded by a minute).
func kubectl(stdin []byte, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return run(ctx, stdin, nil, theNode.kubectl, append([]string{"--kubeconfig", theNode.kubeconfig}, args...)...)
}

func mustKubectl(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	r := kubectl(stdin, args...)
	if r.err != nil {
		t.Fatalf("%v", r)
	}
	return r.stdout
}

// apply applies objects (JSON or YAML) with a server-side field manager.
func apply(t *testing.T, manifest string) {
	t.Helper()
	mustKubectl(t, []byte(manifest), "apply", "-f", "-")
}

// getJSON decodes `kubectl get … -o json` into out.
func getJSON(t *testing.T, out any, args ...string) {
	t.Helper()
	s := mustKubectl(t, nil, append(append([]string{"get"}, args...), "-o", "json")...)
	if err := json.Unmarshal([]byte(s), out); err != nil {
		t.Fatalf("decode kubectl get %v: %v", args, err)
	}
}

// helm runs helm against the node.
func helm(timeout time.Duration, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return run(ctx, nil, nil, theNode.helm, append([]string{"--kubeconfig", theNode.kubeconfig}, args...)...)
}

// eventually calls check until it returns nil, every interval, and fails
// the test with its last error after timeout.
func eventually(t *testing.T, what string, timeout, interval time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(interval)
	}
}

// apiClient talks to the API server directly, for what would cost a kubectl
// process per call in a loop (the cert-manager stand-in).
type apiClient struct {
	server string
	token  string
	client *http.Client
}

func newAPIClient() (*apiClient, error) {
	view := func(path string) (string, error) {
		r := run(context.Background(), nil, nil, theNode.kubectl, "--kubeconfig", theNode.kubeconfig,
			"config", "view", "--raw", "--minify", "-o", "jsonpath="+path)
		if r.err != nil {
			return "", fmt.Errorf("read the kubeconfig: %v", r)
		}
		return r.stdout, nil
	}
	server, err := view("{.clusters[0].cluster.server}")
	if err != nil {
		return nil, err
	}
	token, err := view("{.users[0].user.token}")
	if err != nil {
		return nil, err
	}
	caFile, err := view("{.clusters[0].cluster.certificate-authority}")
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s holds no certificate", caFile)
	}
	return &apiClient{server: server, token: token, client: &http.Client{
		Timeout:   20 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}},
	}}, nil
}

// errNotFound is a 404 from the API server.
var errNotFound = errors.New("not found")

// do sends body (JSON; nil for none) and decodes the answer into out (nil: dropped).
func (a *apiClient) do(ctx context.Context, method, path, contentType string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.server+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s %s: %w", method, path, errNotFound)
	case resp.StatusCode >= 300:
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
	case out != nil:
		return json.Unmarshal(data, out)
	}
	return nil
}
