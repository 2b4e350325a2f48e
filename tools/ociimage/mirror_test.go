package main

import (
	"bytes"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// startRegistry is a registry in this process on 127.0.0.1; it returns host:port.
func startRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithReferrersSupport(true)))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	if !strings.HasPrefix(host, "127.0.0.1:") {
		t.Fatalf("the registry listens on %s, want 127.0.0.1 only", host)
	}
	return host
}

// testKeyPair writes a cosign key pair (password "pw") into a temporary
// directory and returns the private key's path, the public key's path and
// the public key.
func testKeyPair(t *testing.T) (string, string, signature.Verifier) {
	t.Helper()
	private, public, err := generateKeyPair([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path, pubPath := filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	if err := os.WriteFile(path, private, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubPath, public, 0o644); err != nil {
		t.Fatal(err)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(public)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return path, pubPath, v
}

// verifiedSignatures counts the signatures of digest that v verifies and
// whose simple-signing payload names digest and its repository, as
// `cosign verify --key` checks them.
func verifiedSignatures(t *testing.T, digest name.Digest, v signature.Verifier) int {
	t.Helper()
	img, err := remote.Image(signatureTag(digest))
	if err != nil {
		t.Fatalf("the signatures of %s: %v", digest, err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range m.Layers {
		layer, err := img.LayerByDigest(l.Digest)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := layer.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		sig, err := base64.StdEncoding.DecodeString(l.Annotations[SignatureAnnotation])
		if err != nil || v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(body)) != nil {
			continue
		}
		var p payload.SimpleContainerImage
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatalf("a signature's payload: %v", err)
		}
		if p.Critical.Image.DockerManifestDigest != digest.DigestStr() || p.Critical.Identity.DockerReference != digest.Context().Name() {
			t.Errorf("a signature names %s in %s, want %s in %s", p.Critical.Image.DockerManifestDigest,
				p.Critical.Identity.DockerReference, digest.DigestStr(), digest.Context().Name())
			continue
		}
		n++
	}
	return n
}

// TestMirrorCopiesTheChartsAgentImageAndItsSignaturesBetweenTwoRegistries:
// the agent image of a chart (a two-platform index, signed at the source)
// is copied from one in-process registry to another under the same tag,
// with the same digest, every platform and the source's signature.
func TestMirrorCopiesTheChartsAgentImageAndItsSignaturesBetweenTwoRegistries(t *testing.T) {
	source, target := startRegistry(t), startRegistry(t)
	idx, err := random.Index(256, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	srcRef, err := name.NewTag(source+"/dynamic-config-rs/dynamic-config-agent:v0.3.0", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(srcRef, idx); err != nil {
		t.Fatal(err)
	}
	digest, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	key, _, verifier := testKeyPair(t)
	sv, err := loadSigner(key, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signDigest(srcRef.Context().Digest(digest.String()), sv); err != nil {
		t.Fatal(err)
	}

	chart := t.TempDir()
	values := "agent:\n  image: elsewhere.example/dynamic-config-rs/dynamic-config-agent\n  tag: v0.3.0\n  digest: \"\"\n"
	if err := os.WriteFile(filepath.Join(chart, "values.yaml"), []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = runMirror([]string{"--chart", chart, "--to", target + "/team", "--insecure",
		"--from-repository", source + "/dynamic-config-rs/dynamic-config-agent"}, &out)
	if err != nil {
		t.Fatalf("mirror: %v", err)
	}
	t.Log(strings.TrimSpace(out.String()))

	dstRef, err := name.NewTag(target+"/team/dynamic-config-agent:v0.3.0", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	got, err := remote.Index(dstRef)
	if err != nil {
		t.Fatalf("the mirror has no %s: %v", dstRef, err)
	}
	if d, _ := got.Digest(); d != digest {
		t.Errorf("the mirrored index is %s, the source's %s", d, digest)
	}
	m, err := got.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, desc := range m.Manifests {
		if _, err := remote.Image(dstRef.Context().Digest(desc.Digest.String())); err != nil {
			t.Errorf("the mirror lacks the platform manifest %s: %v", desc.Digest, err)
		}
	}
	// The copied signature names the source repository (it was signed
	// there): cosign verifies it against the digest, which is the same.
	if n := verifiedSignatures(t, srcRef.Context().Digest(digest.String()), verifier); n != 1 {
		t.Errorf("%d verified signatures at the source, want 1", n)
	}
	sigs, err := remote.Image(signatureTag(dstRef.Context().Digest(digest.String())))
	if err != nil {
		t.Fatalf("the mirror has no signatures of %s: %v", digest, err)
	}
	want, _ := remote.Image(signatureTag(srcRef.Context().Digest(digest.String())))
	if a, b := mustDigest(t, sigs), mustDigest(t, want); a != b {
		t.Errorf("the mirrored signature image is %s, the source's %s", a, b)
	}
}

func mustDigest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSignIsVerifiedAndNotRepeated: a signature of an index verifies with
// the key pair's public key and names the digest and its repository;
// signing again adds nothing; a second key adds its own.
func TestSignIsVerifiedAndNotRepeated(t *testing.T) {
	reg := startRegistry(t)
	idx, err := random.Index(128, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := name.NewTag(reg+"/team/dynamic-config:v1.2.3", name.Insecure)
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatal(err)
	}
	key, _, verifier := testKeyPair(t)
	t.Setenv(PasswordEnv, "pw")
	for range 2 {
		var out bytes.Buffer
		if err := runSign([]string{"--key", key, "--insecure", ref.String()}, &out); err != nil {
			t.Fatalf("sign: %v", err)
		}
	}
	d, _ := idx.Digest()
	digest := ref.Context().Digest(d.String())
	if n := verifiedSignatures(t, digest, verifier); n != 1 {
		t.Errorf("%d verified signatures after signing twice, want 1", n)
	}
	other, _, otherVerifier := testKeyPair(t)
	if err := runSign([]string{"--key", other, "--insecure", ref.String()}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if a, b := verifiedSignatures(t, digest, verifier), verifiedSignatures(t, digest, otherVerifier); a != 1 || b != 1 {
		t.Errorf("after a second key: %d and %d verified signatures, want 1 each", a, b)
	}
	t.Setenv(PasswordEnv, "wrong")
	if err := runSign([]string{"--key", key, "--insecure", ref.String()}, io.Discard); err == nil || !strings.Contains(err.Error(), PasswordEnv) {
		t.Errorf("a wrong password: %v, want an error naming %s", err, PasswordEnv)
	}
}

// TestChartValuesCopiesTheChartWithoutItsGoPackage: the copy make publish
// packages holds the chart's files, values.yaml edited, and no .go file
// (it would be a second copy of package chart inside the module).
func TestChartValuesCopiesTheChartWithoutItsGoPackage(t *testing.T) {
	src := t.TempDir()
	for name, text := range map[string]string{
		"Chart.yaml":          "name: c\n",
		"values.yaml":         "image:\n  repository: x\n",
		"templates/a.yaml":    "a: 1\n",
		"chart.go":            "package chart\n",
		"templates/tests.tpl": "{{/* */}}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	if err := runChartValues([]string{"--chart", src, "--out", out, "--set", "image.repository=127.0.0.1:5000/team/dynamic-config"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(out, filepath.Base(src))
	for _, name := range []string{"Chart.yaml", "templates/a.yaml", "templates/tests.tpl"} {
		if _, err := os.Stat(filepath.Join(dst, name)); err != nil {
			t.Errorf("the copy lacks %s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "chart.go")); err == nil {
		t.Error("the copy holds chart.go")
	}
	if got, _ := os.ReadFile(filepath.Join(dst, "values.yaml")); string(got) != "image:\n  repository: 127.0.0.1:5000/team/dynamic-config\n" {
		t.Errorf("the copy's values.yaml is %q", got)
	}
}

// TestChartValuesSetsTheImagesAndKeepsTheComments: the published chart's
// values.yaml names the pushed images, every other line unchanged.
func TestChartValuesSetsTheImagesAndKeepsTheComments(t *testing.T) {
	text := "image:\n  repository: ghcr.io/x/dynamic-config   # the image\n  tag: \"\"\n\nagent:\n  image: ghcr.io/y/dynamic-config-agent\n  tag: v0.3.0                # pinned\n  nested:\n    image: keep\n"
	got, err := setValuesLine(text, "image.repository", "127.0.0.1:5000/team/dynamic-config")
	if err == nil {
		got, err = setValuesLine(got, "agent.image", "127.0.0.1:5000/team/dynamic-config-agent")
	}
	if err != nil {
		t.Fatal(err)
	}
	want := "image:\n  repository: 127.0.0.1:5000/team/dynamic-config   # the image\n  tag: \"\"\n\nagent:\n  image: 127.0.0.1:5000/team/dynamic-config-agent\n  tag: v0.3.0                # pinned\n  nested:\n    image: keep\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, c := range []struct{ path, value, says string }{
		{"image.missing", "x", `no line "  missing: …"`},
		{"image", "x", "two levels"},
		{"image.repository", "a b", "want an image reference"},
		{"image.repository", "x # y", "want an image reference"},
		{"image.repository", "*alias", "want an image reference"},
	} {
		if _, err := setValuesLine(text, c.path, c.value); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("--set %s=%s: %v, want an error saying %q", c.path, c.value, err, c.says)
		}
	}
}
