package main

import (
	"archive/tar"
	"debug/elf"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The platforms make publish pushes (PUBLISH_PLATFORMS) and the ELF
// machine each binary must be built for.
var publishedPlatforms = []struct {
	platform v1.Platform
	machine  elf.Machine
}{
	{v1.Platform{OS: "linux", Architecture: "amd64"}, elf.EM_X86_64},
	{v1.Platform{OS: "linux", Architecture: "arm64"}, elf.EM_AARCH64},
}

// TestPublishPushesBothPlatformsAndTheChartToARegistry runs `make publish`
// against a registry started in this process on 127.0.0.1 (make
// publish-check sets PUBLISH_CHECK, PUBLISH_VERSION, PUBLISH_REVISION,
// PUBLISH_DIR and HELM), then pulls everything back: the index names
// exactly linux/amd64 and linux/arm64, each manifest is the image built
// from that platform's binary (same digest), its config and its binary
// are that platform's, a CycloneDX SBOM of that binary refers to it, and
// the chart pulls with helm and renders.
func TestPublishPushesBothPlatformsAndTheChartToARegistry(t *testing.T) {
	if os.Getenv("PUBLISH_CHECK") == "" {
		t.Skip("PUBLISH_CHECK is not set: make publish-check runs this test")
	}
	version, revision, dir := os.Getenv("PUBLISH_VERSION"), os.Getenv("PUBLISH_REVISION"), os.Getenv("PUBLISH_DIR")
	helm := strings.Fields(os.Getenv("HELM"))
	if version == "" || dir == "" || len(helm) == 0 {
		t.Fatal("make publish-check sets PUBLISH_VERSION, PUBLISH_DIR and HELM")
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithReferrersSupport(true)))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	if !strings.HasPrefix(host, "127.0.0.1:") {
		t.Fatalf("the registry listens on %s, want 127.0.0.1 only", host)
	}
	reg := host + "/team"

	publish := exec.Command("make", "-C", filepath.Join("..", ".."), "--no-print-directory", "publish",
		"REGISTRY="+reg, "PUBLISH_INSECURE=1", "VERSION="+version, "REVISION="+revision,
		"HELM_REGISTRY_CONFIG="+filepath.Join(t.TempDir(), "registry.json"))
	if out, err := publish.CombinedOutput(); err != nil {
		t.Fatalf("make publish: %v\n%s", err, out)
	}

	tag := imageTag(version)
	ref, err := name.NewTag(reg+"/dynamic-config:"+tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatalf("pull the index %s: %v", ref, err)
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if manifest.MediaType != types.OCIImageIndex {
		t.Errorf("the index's media type is %s, want %s", manifest.MediaType, types.OCIImageIndex)
	}
	if len(manifest.Manifests) != len(publishedPlatforms) {
		t.Fatalf("the index names %d manifests, want %d (linux/amd64, linux/arm64)", len(manifest.Manifests), len(publishedPlatforms))
	}
	for i, want := range publishedPlatforms {
		d := manifest.Manifests[i]
		t.Run(want.platform.String(), func(t *testing.T) {
			if d.Platform == nil || !d.Platform.Equals(want.platform) {
				t.Fatalf("manifest %d is for %v, want %s", i, d.Platform, want.platform)
			}
			binary := filepath.Join(dir, want.platform.OS+"-"+want.platform.Architecture, "dynamic-config")
			built, err := buildImage(imageSpec{Binary: binary, Version: version, Revision: revision, Arch: want.platform.Architecture})
			if err != nil {
				t.Fatal(err)
			}
			wantDigest, err := built.Digest()
			if err != nil {
				t.Fatal(err)
			}
			if d.Digest != wantDigest {
				t.Errorf("the index names %s, the image of %s is %s", d.Digest, binary, wantDigest)
			}
			img, err := remote.Image(ref.Context().Digest(d.Digest.String()))
			if err != nil {
				t.Fatalf("pull %s: %v", d.Digest, err)
			}
			if got, err := img.Digest(); err != nil || got != d.Digest {
				t.Errorf("the pulled manifest's digest is %s (%v), want %s", got, err, d.Digest)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.OS != want.platform.OS || cf.Architecture != want.platform.Architecture {
				t.Errorf("the config says %s/%s, want %s", cf.OS, cf.Architecture, want.platform)
			}
			if cf.Config.Labels["org.opencontainers.image.version"] != version {
				t.Errorf("the version label is %q, want %q", cf.Config.Labels["org.opencontainers.image.version"], version)
			}
			if m := pulledBinaryMachine(t, img); m != want.machine {
				t.Errorf("the image's binary is built for %s, want %s", m, want.machine)
			}
			checkPublishedSBOM(t, ref.Context(), d.Digest, binary, want.platform.Architecture, version)
		})
	}

	t.Run("the chart pulls with helm and renders the pushed image", func(t *testing.T) {
		chartVersion := strings.TrimPrefix(version, "v")
		out := t.TempDir()
		runHelm(t, helm, "pull", "oci://"+reg+"/charts/dynamic-config", "--version", chartVersion, "--plain-http", "-d", out)
		rendered := runHelm(t, helm, "template", "dynamic-config", filepath.Join(out, "dynamic-config-"+chartVersion+".tgz"),
			"--namespace", "dynamic-config", "--set", "image.repository="+reg+"/dynamic-config")
		if want := `image: "` + reg + "/dynamic-config:" + tag + `"`; !strings.Contains(rendered, want) {
			t.Errorf("the pulled chart's render has no %q", want)
		}
	})
}

// pulledBinaryMachine reads the binary out of the image's one layer and
// returns the machine its ELF header names.
func pulledBinaryMachine(t *testing.T, img v1.Image) elf.Machine {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("no dynamic-config in the layer: %v", err)
		}
		if h.Name != "dynamic-config" {
			continue
		}
		path := filepath.Join(t.TempDir(), "dynamic-config")
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := elf.Open(path)
		if err != nil {
			t.Fatalf("the image's binary is not ELF: %v", err)
		}
		defer f.Close()
		return f.Machine
	}
}

// runHelm runs the HELM command line (env VAR=… helm) with args.
func runHelm(t *testing.T, helm []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("env", append(append([]string{}, helm...), args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
