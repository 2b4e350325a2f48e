package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The SBOM artifact (OCI 1.1): an image manifest whose artifactType and
// one layer are CycloneDX JSON, whose config is the empty descriptor and
// whose subject is the platform image it describes, so registries list it
// under that image's referrers (or the sha256-<digest> fallback tag).
const (
	// SBOMArtifactType is the CycloneDX JSON media type.
	SBOMArtifactType types.MediaType = "application/vnd.cyclonedx+json"
	emptyConfigType  types.MediaType = "application/vnd.oci.empty.v1+json"
	// SBOMFileName is the layer's org.opencontainers.image.title.
	SBOMFileName = "dynamic-config.cdx.json"
)

var emptyConfig = []byte("{}")

// sbomArtifact is the artifact as a v1.Image (partial.CompressedImageCore).
type sbomArtifact struct {
	manifest []byte
	sbom     []byte
}

// newSBOMArtifact wraps the CycloneDX document sbom as an artifact whose
// subject is the image described by subject.
func newSBOMArtifact(sbom []byte, subject v1.Descriptor) (v1.Image, error) {
	if !json.Valid(sbom) {
		return nil, fmt.Errorf("the SBOM is not JSON")
	}
	desc := func(mt types.MediaType, data []byte) map[string]any {
		sum := sha256.Sum256(data)
		return map[string]any{"mediaType": mt, "digest": "sha256:" + hex.EncodeToString(sum[:]), "size": len(data)}
	}
	layer := desc(SBOMArtifactType, sbom)
	layer["annotations"] = map[string]string{"org.opencontainers.image.title": SBOMFileName}
	config := desc(emptyConfigType, emptyConfig)
	config["data"] = emptyConfig
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     types.OCIManifestSchema1,
		"artifactType":  SBOMArtifactType,
		"config":        config,
		"layers":        []any{layer},
		"subject":       v1.Descriptor{MediaType: subject.MediaType, Digest: subject.Digest, Size: subject.Size},
	})
	if err != nil {
		return nil, err
	}
	return partial.CompressedToImage(&sbomArtifact{manifest: manifest, sbom: sbom})
}

func (a *sbomArtifact) RawConfigFile() ([]byte, error)      { return emptyConfig, nil }
func (a *sbomArtifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (a *sbomArtifact) RawManifest() ([]byte, error)        { return a.manifest, nil }

func (a *sbomArtifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	for _, b := range []struct {
		data []byte
		mt   types.MediaType
	}{{a.sbom, SBOMArtifactType}, {emptyConfig, emptyConfigType}} {
		if l := (blobLayer{b.data, b.mt}); l.digest() == h {
			return l, nil
		}
	}
	return nil, fmt.Errorf("the SBOM artifact has no blob %s", h)
}

// blobLayer is one blob of the artifact, stored as is.
type blobLayer struct {
	data []byte
	mt   types.MediaType
}

func (l blobLayer) digest() v1.Hash {
	sum := sha256.Sum256(l.data)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
}
func (l blobLayer) Digest() (v1.Hash, error) { return l.digest(), nil }
func (l blobLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.data)), nil
}
func (l blobLayer) Size() (int64, error)                { return int64(len(l.data)), nil }
func (l blobLayer) MediaType() (types.MediaType, error) { return l.mt, nil }

// pushSBOMs pushes, for each platform with an SBOM file, the artifact whose
// subject is that platform's manifest in idx, by digest into tag's
// repository. It returns the artifacts' digests by platform.
func pushSBOMs(idx v1.ImageIndex, sboms []platformBinary, tag name.Tag) (map[string]v1.Hash, error) {
	manifest, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	pushed := map[string]v1.Hash{}
	for _, s := range sboms {
		var subject *v1.Descriptor
		for i, d := range manifest.Manifests {
			if d.Platform != nil && d.Platform.Equals(s.Platform) {
				subject = &manifest.Manifests[i]
			}
		}
		if subject == nil {
			return nil, fmt.Errorf("--sbom %s: the index has no %s image", s.Platform, s.Platform)
		}
		data, err := os.ReadFile(s.Path)
		if err != nil {
			return nil, fmt.Errorf("read the %s SBOM: %w", s.Platform, err)
		}
		art, err := newSBOMArtifact(data, *subject)
		if err != nil {
			return nil, fmt.Errorf("the %s SBOM %s: %w", s.Platform, s.Path, err)
		}
		digest, err := art.Digest()
		if err != nil {
			return nil, err
		}
		if err := remote.Write(tag.Context().Digest(digest.String()), art, registryOptions()...); err != nil {
			return nil, fmt.Errorf("push the %s SBOM: %w", s.Platform, err)
		}
		pushed[s.Platform.String()] = digest
	}
	return pushed, nil
}
