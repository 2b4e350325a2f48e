package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// checkPublishedSBOM finds, among the referrers of the image subject in
// repo, the one CycloneDX artifact, and checks that it describes binary:
// the SBOM's recorded SHA-256 of the binary, its GOARCH and the main
// module's version, and a licence for every module it lists (issue 40
// item 10: cyclonedx-gomod -licenses -assert-licenses).
func checkPublishedSBOM(t *testing.T, repo name.Repository, subject v1.Hash, binary, arch, version string) {
	t.Helper()
	referrers, err := remote.Referrers(repo.Digest(subject.String()))
	if err != nil {
		t.Fatalf("list the referrers of %s: %v", subject, err)
	}
	refs, err := referrers.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var found []v1.Hash
	for _, d := range refs.Manifests {
		art, err := remote.Image(repo.Digest(d.Digest.String()))
		if err != nil {
			t.Fatalf("pull the referrer %s: %v", d.Digest, err)
		}
		m, err := art.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		if m.ArtifactType == string(SBOMArtifactType) && m.Subject != nil && m.Subject.Digest == subject && len(m.Layers) == 1 && m.Layers[0].MediaType == SBOMArtifactType {
			found = append(found, m.Layers[0].Digest)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d CycloneDX artifacts refer to %s, want one", len(found), subject)
	}
	blob, err := remote.Layer(repo.Digest(found[0].String()))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := blob.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var bom struct {
		BOMFormat  string `json:"bomFormat"`
		Components []struct {
			Name     string            `json:"name"`
			Licenses []json.RawMessage `json:"licenses"`
		} `json:"components"`
		Metadata struct {
			Component struct {
				Version string `json:"version"`
			} `json:"component"`
			Properties []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"properties"`
		} `json:"metadata"`
	}
	if err := json.NewDecoder(io.LimitReader(rc, 16<<20)).Decode(&bom); err != nil {
		t.Fatalf("the SBOM is not JSON: %v", err)
	}
	props := map[string]string{}
	for _, p := range bom.Metadata.Properties {
		props[p.Name] = p.Value
	}
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	for _, c := range []struct{ what, got, want string }{
		{"bomFormat", bom.BOMFormat, "CycloneDX"},
		{"the main module's version", bom.Metadata.Component.Version, version},
		{"GOARCH", props["cdx:gomod:build:env:GOARCH"], arch},
		{"the binary's SHA-256", props["cdx:gomod:binary:hash:SHA-256"], hex.EncodeToString(sum[:])},
	} {
		if c.got != c.want {
			t.Errorf("the SBOM's %s is %q, want %q", c.what, c.got, c.want)
		}
	}
	var unlicensed []string
	for _, c := range bom.Components {
		if len(c.Licenses) == 0 {
			unlicensed = append(unlicensed, c.Name)
		}
	}
	if len(bom.Components) == 0 || len(unlicensed) > 0 {
		t.Errorf("the SBOM lists %d modules, %d without a licence: %v", len(bom.Components), len(unlicensed), unlicensed)
	}
}
