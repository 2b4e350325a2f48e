package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The tarball is read here with the standard library only (archive/tar,
// encoding/json), not with the library that wrote it: the test checks the
// OCI layout as any other reader would see it.

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
}

type ociImage struct {
	tag    string
	config struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		Config       struct {
			User       string            `json:"User"`
			Entrypoint []string          `json:"Entrypoint"`
			Cmd        []string          `json:"Cmd"`
			Labels     map[string]string `json:"Labels"`
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	manifestDigest string
	files          map[string][]byte // the layer's files
	modes          map[string]int64
}

// readOCITarball opens an OCI layout tarball with one image and checks
// every blob against its digest on the way.
func readOCITarball(t *testing.T, path string) *ociImage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			entries[h.Name] = data
		}
	}
	if !strings.Contains(string(entries["oci-layout"]), `"imageLayoutVersion": "1.0.0"`) &&
		!strings.Contains(string(entries["oci-layout"]), `"imageLayoutVersion":"1.0.0"`) {
		t.Fatalf("oci-layout is %q", entries["oci-layout"])
	}
	blob := func(d descriptor, wantType string) []byte {
		t.Helper()
		if d.MediaType != wantType {
			t.Fatalf("media type %s, want %s", d.MediaType, wantType)
		}
		data, ok := entries["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		if !ok {
			t.Fatalf("blob %s is missing", d.Digest)
		}
		sum := sha256.Sum256(data)
		if "sha256:"+hex.EncodeToString(sum[:]) != d.Digest || int64(len(data)) != d.Size {
			t.Fatalf("blob %s does not match its digest or size", d.Digest)
		}
		return data
	}
	var index struct {
		SchemaVersion int          `json:"schemaVersion"`
		Manifests     []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(entries["index.json"], &index); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	if index.SchemaVersion != 2 || len(index.Manifests) != 1 {
		t.Fatalf("index.json: schema %d, %d manifests; want 2 and one", index.SchemaVersion, len(index.Manifests))
	}
	img := &ociImage{tag: index.Manifests[0].Annotations["org.opencontainers.image.ref.name"], manifestDigest: index.Manifests[0].Digest}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(blob(index.Manifests[0], "application/vnd.oci.image.manifest.v1+json"), &manifest); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(blob(manifest.Config, "application/vnd.oci.image.config.v1+json"), &img.config); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Layers) != 1 || len(img.config.RootFS.DiffIDs) != 1 {
		t.Fatalf("%d layers, %d diff ids; want one layer on an empty base", len(manifest.Layers), len(img.config.RootFS.DiffIDs))
	}
	gz, err := gzip.NewReader(bytes.NewReader(blob(manifest.Layers[0], "application/vnd.oci.image.layer.v1.tar+gzip")))
	if err != nil {
		t.Fatal(err)
	}
	layer, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(layer); "sha256:"+hex.EncodeToString(sum[:]) != img.config.RootFS.DiffIDs[0] {
		t.Fatal("the layer does not match its diff id")
	}
	img.files, img.modes = map[string][]byte{}, map[string]int64{}
	lr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(lr)
		img.files[h.Name], img.modes[h.Name] = data, h.Mode
	}
	return img
}

// checkImage checks the image against the project's rules and runs the
// binary it carries: `version` must print version.
func checkImage(t *testing.T, img *ociImage, version, revision string) {
	t.Helper()
	c := img.config
	if c.OS != "linux" || c.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", c.OS, c.Architecture, runtime.GOARCH)
	}
	if c.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (non-root)", c.Config.User)
	}
	if len(c.Config.Entrypoint) != 1 || c.Config.Entrypoint[0] != "/dynamic-config" || len(c.Config.Cmd) != 0 {
		t.Errorf("entrypoint %q, cmd %q; want [/dynamic-config] and none", c.Config.Entrypoint, c.Config.Cmd)
	}
	if img.tag != strings.ReplaceAll(version, "+", "_") {
		t.Errorf("tag %q, want the version %q with + as _", img.tag, version)
	}
	want := map[string]string{
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": revision,
		"org.opencontainers.image.source":   "https://github.com/dynamic-config-admission/dynamic-config",
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.title":    "dynamic-config",
	}
	for k, v := range want {
		if c.Config.Labels[k] != v {
			t.Errorf("label %s is %q, want %q", k, c.Config.Labels[k], v)
		}
	}
	if c.Config.Labels["org.opencontainers.image.created"] == "" {
		t.Error("no org.opencontainers.image.created label")
	}
	if len(img.files) != 1 || img.files["dynamic-config"] == nil {
		names := make([]string, 0, len(img.files))
		for n := range img.files {
			names = append(names, n)
		}
		t.Fatalf("the layer holds %q; want the binary alone (no shell)", names)
	}
	if img.modes["dynamic-config"] != 0o555 {
		t.Errorf("the binary's mode is %o, want 555", img.modes["dynamic-config"])
	}
	bin := filepath.Join(t.TempDir(), "dynamic-config")
	if err := os.WriteFile(bin, img.files["dynamic-config"], 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("the extracted binary's `version` failed: %v\n%s", err, out)
	}
	if first, _, _ := strings.Cut(string(out), "\n"); first != "dynamic-config "+version {
		t.Errorf("the extracted binary says %q, want %q", first, "dynamic-config "+version)
	}
}

// buildBinary builds the static linux binary as `make image` does.
func buildBinary(t *testing.T, version string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "dynamic-config")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version="+version, "-o", bin, "./cmd/dynamic-config")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestTheImageRunsItsBinaryAsNonRootWithTheLabels(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the image's binary is a linux binary")
	}
	const version, revision = "v9.8.7-dev.3+0123abcd", "0123abcd0123abcd0123abcd0123abcd0123abcd"
	bin := buildBinary(t, version)
	dir := t.TempDir()
	spec := imageSpec{Binary: bin, Version: version, Revision: revision, Arch: runtime.GOARCH}
	first, err := writeImage(spec, filepath.Join(dir, "a.tar"))
	if err != nil {
		t.Fatal(err)
	}
	img := readOCITarball(t, filepath.Join(dir, "a.tar"))
	if img.manifestDigest != first.String() {
		t.Errorf("index.json names %s, the builder %s", img.manifestDigest, first)
	}
	checkImage(t, img, version, revision)

	t.Run("the same inputs give the same image (reproducible)", func(t *testing.T) {
		second, err := writeImage(spec, filepath.Join(dir, "b.tar"))
		if err != nil {
			t.Fatal(err)
		}
		if second != first {
			t.Errorf("digests %s and %s", first, second)
		}
	})
	t.Run("a bad --created is refused", func(t *testing.T) {
		bad := spec
		bad.Created = "yesterday"
		if _, err := writeImage(bad, filepath.Join(dir, "c.tar")); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
			t.Errorf("err %v, want the RFC 3339 refusal", err)
		}
	})
}

// TestTheBuiltImage checks `make image`'s tarball (make image-check sets
// IMAGE_TAR, IMAGE_VERSION and IMAGE_REVISION): the version stamped into
// the binary and the label is the project version.
func TestTheBuiltImage(t *testing.T) {
	path := os.Getenv("IMAGE_TAR")
	if path == "" {
		t.Skip("IMAGE_TAR is not set: make image-check runs this test on make image's tarball")
	}
	checkImage(t, readOCITarball(t, path), os.Getenv("IMAGE_VERSION"), os.Getenv("IMAGE_REVISION"))
}
