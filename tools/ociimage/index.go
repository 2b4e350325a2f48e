package main

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// platformBinary is one --binary os/arch=path of the push mode.
type platformBinary struct {
	Platform v1.Platform
	Path     string
}

// parsePlatformBinary reads "linux/arm64=bin/publish/linux-arm64/dynamic-config"
// (--binary and --sbom).
func parsePlatformBinary(s string) (platformBinary, error) {
	plat, path, ok := strings.Cut(s, "=")
	osName, arch, okPlat := strings.Cut(plat, "/")
	if !ok || !okPlat || path == "" || osName != "linux" || arch == "" {
		return platformBinary{}, fmt.Errorf("--binary %q: want linux/ARCH=PATH (e.g. linux/arm64=bin/publish/linux-arm64/dynamic-config)", s)
	}
	return platformBinary{Platform: v1.Platform{OS: osName, Architecture: arch}, Path: path}, nil
}

// buildIndex builds one image per binary (buildImage, the same image
// `make image` writes) and the OCI image index that names each with its
// platform, in the order given. The index carries the same annotations as
// each image.
func buildIndex(base imageSpec, binaries []platformBinary) (v1.ImageIndex, error) {
	if len(binaries) == 0 {
		return nil, fmt.Errorf("no --binary: want one linux/ARCH=PATH per platform")
	}
	seen := map[string]bool{}
	for _, b := range binaries {
		if seen[b.Platform.String()] {
			return nil, fmt.Errorf("--binary: platform %s is given twice", b.Platform)
		}
		seen[b.Platform.String()] = true
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var adds []mutate.IndexAddendum
	for _, b := range binaries {
		s := base
		s.Binary, s.Arch = b.Path, b.Platform.Architecture
		img, err := buildImage(s)
		if err != nil {
			return nil, fmt.Errorf("the %s image: %w", b.Platform, err)
		}
		p := b.Platform
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: &p}})
	}
	idx = mutate.AppendManifests(idx, adds...)
	created, err := createdTime(base.Created)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(idx, base.labels(created.Format(timeLayout))).(v1.ImageIndex), nil
}

// parseTag reads --ref (REGISTRY/REPOSITORY:TAG); insecure allows a
// plain-HTTP registry (name.Insecure).
func parseTag(ref string, insecure bool) (name.Tag, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	tag, err := name.NewTag(ref, opts...)
	if err != nil {
		return name.Tag{}, fmt.Errorf("--ref %q: want REGISTRY/REPOSITORY:TAG: %w", ref, err)
	}
	return tag, nil
}

// pushIndex pushes the index, its images and their blobs to tag, with the
// credentials of ~/.docker/config.json (docker login) if any, and returns
// the index's digest.
func pushIndex(idx v1.ImageIndex, tag name.Tag) (v1.Hash, error) {
	if err := remote.WriteIndex(tag, idx, registryOptions()...); err != nil {
		return v1.Hash{}, fmt.Errorf("push %s: %w", tag, err)
	}
	return idx.Digest()
}
