package main

import (
	"archive/tar"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
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

// TestPublishPushesBothPlatformsTheAgentMirrorAndTheSignedChart runs
// `make publish MIRROR_AGENT=1 COSIGN_KEY=…` between two registries started
// in this process on 127.0.0.1 — a source holding a signed stand-in of the
// chart's agent image, and the destination (make publish-check sets
// PUBLISH_CHECK, PUBLISH_VERSION, PUBLISH_REVISION, PUBLISH_DIR, HELM and
// COSIGN_VERIFY) — as a release (the core of PUBLISH_VERSION), then pushes
// a later pre-release of the chart, and pulls everything back: the index
// names exactly linux/amd64 and linux/arm64, each manifest is the image
// built from that platform's binary (same digest), its config and its
// binary are that platform's, a CycloneDX SBOM of that binary with the
// modules' licences refers to it; the agent image is in the destination
// with its digest and signature; the chart renders from
// oci://REGISTRY/charts/dynamic-config with no --set and no --version as
// the release, with the pushed image and the mirrored agent; cosign's own
// verification (tools/cosign) accepts the index's, the chart's and the
// mirrored agent's signatures.
func TestPublishPushesBothPlatformsTheAgentMirrorAndTheSignedChart(t *testing.T) {
	if os.Getenv("PUBLISH_CHECK") == "" {
		t.Skip("PUBLISH_CHECK is not set: make publish-check runs this test")
	}
	devVersion, revision, dir := os.Getenv("PUBLISH_VERSION"), os.Getenv("PUBLISH_REVISION"), os.Getenv("PUBLISH_DIR")
	helm := strings.Fields(os.Getenv("HELM"))
	cosignVerify := os.Getenv("COSIGN_VERIFY")
	if devVersion == "" || dir == "" || len(helm) == 0 || cosignVerify == "" {
		t.Fatal("make publish-check sets PUBLISH_VERSION, PUBLISH_DIR, HELM and COSIGN_VERIFY")
	}
	version, later := releaseAndLater(t, devVersion)
	source, host := startRegistry(t), startRegistry(t)
	reg := host + "/team"
	chartDir := filepath.Join("..", "..", "charts", "dynamic-config")

	// The agent project's image, as its registry would serve it: a
	// two-platform index under the chart's agent tag, signed with its key.
	agentRepo := source + "/dynamic-config-rs/dynamic-config-agent"
	agentRef, err := chartAgentImage(chartDir, agentRepo)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := name.ParseReference(agentRef, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	agentIndex, err := random.Index(512, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(agent, agentIndex); err != nil {
		t.Fatal(err)
	}
	agentDigest, _ := agentIndex.Digest()
	agentKey, agentPub, _ := testKeyPair(t)
	agentSigner, err := loadSigner(agentKey, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signDigest(agent.Context().Digest(agentDigest.String()), agentSigner); err != nil {
		t.Fatal(err)
	}

	key, pub, verifier := testKeyPair(t)
	publish := exec.Command("make", "-C", filepath.Join("..", ".."), "--no-print-directory", "publish",
		"REGISTRY="+reg, "PUBLISH_INSECURE=1", "VERSION="+version, "REVISION="+revision,
		"MIRROR_AGENT=1", "MIRROR_AGENT_FROM="+agentRepo, "COSIGN_KEY="+key,
		"HELM_REGISTRY_CONFIG="+filepath.Join(t.TempDir(), "registry.json"))
	publish.Env = append(os.Environ(), PasswordEnv+"=pw")
	if out, err := publish.CombinedOutput(); err != nil {
		t.Fatalf("make publish: %v\n%s", err, out)
	}
	// A later development build's chart: helm must not take it without --devel.
	laterDir := t.TempDir()
	runHelm(t, helm, "package", filepath.Join(dir, "chart", "dynamic-config"), "--version", later, "--app-version", later, "-d", laterDir)
	runHelm(t, helm, "push", filepath.Join(laterDir, "dynamic-config-"+later+".tgz"), "oci://"+reg+"/charts", "--plain-http")

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

	mirrored := reg + "/dynamic-config-agent:" + agent.Identifier()
	t.Run("the agent image is mirrored with its digest and signature", func(t *testing.T) {
		ref, err := name.NewTag(mirrored, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		idx, err := remote.Index(ref)
		if err != nil {
			t.Fatalf("the destination has no %s: %v", mirrored, err)
		}
		if d, _ := idx.Digest(); d != agentDigest {
			t.Errorf("the mirrored agent is %s, the source's %s", d, agentDigest)
		}
		runCosignVerify(t, cosignVerify, agentPub, mirrored)
	})

	t.Run("the chart installs from the registry with no --set and no --version", func(t *testing.T) {
		rendered := runHelm(t, helm, "template", "dynamic-config", "oci://"+reg+"/charts/dynamic-config",
			"--plain-http", "--namespace", "dynamic-config")
		for _, want := range []string{
			"helm.sh/chart: dynamic-config-" + imageTag(strings.TrimPrefix(version, "v")),
			`image: "` + reg + "/dynamic-config:" + tag + `"`,
			mirrored,
		} {
			if !strings.Contains(rendered, want) {
				t.Errorf("the chart helm takes by default renders no %q", want)
			}
		}
		if strings.Contains(rendered, later) || strings.Contains(rendered, agentRepo) {
			t.Errorf("the default render names the pre-release %s or the agent's source %s", later, agentRepo)
		}
	})

	t.Run("the index and the chart carry signatures cosign verifies", func(t *testing.T) {
		chartRef := reg + "/charts/dynamic-config:" + imageTag(strings.TrimPrefix(version, "v"))
		for _, r := range []string{ref.String(), chartRef} {
			d, err := resolveDigest(r, true)
			if err != nil {
				t.Fatal(err)
			}
			if n := verifiedSignatures(t, d, verifier); n != 1 {
				t.Errorf("%s: %d signatures the key verifies, want 1", r, n)
			}
		}
		runCosignVerify(t, cosignVerify, pub, ref.String(), chartRef)
		_, otherPub, _ := testKeyPair(t)
		cmd := exec.Command(cosignVerify, "--key", otherPub, "--insecure", ref.String())
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("cosign-verify with another key accepted %s:\n%s", ref, out)
		}
	})
}

// releaseAndLater are the release make publish-check publishes (the core
// vX.Y.Z of the build's version) and a later pre-release of its chart
// (X.Y.(Z+1)-dev.1+later).
func releaseAndLater(t *testing.T, version string) (string, string) {
	t.Helper()
	core, _, _ := strings.Cut(strings.TrimPrefix(version, "v"), "+")
	core, _, _ = strings.Cut(core, "-")
	var major, minor, patch int
	if _, err := fmt.Sscanf(core, "%d.%d.%d", &major, &minor, &patch); err != nil {
		t.Fatalf("the version %s: %v", version, err)
	}
	return "v" + core, fmt.Sprintf("%d.%d.%d-dev.1+later", major, minor, patch+1)
}

// runCosignVerify runs tools/cosign's verifier (cosign's own code) with the
// public key on refs.
func runCosignVerify(t *testing.T, cosignVerify, pub string, refs ...string) {
	t.Helper()
	out, err := exec.Command(cosignVerify, append([]string{"--key", pub, "--insecure"}, refs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("cosign-verify %s: %v\n%s", strings.Join(refs, " "), err, out)
	}
	t.Log(strings.TrimSpace(string(out)))
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
