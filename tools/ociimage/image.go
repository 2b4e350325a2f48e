package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed facts; the Dockerfile states the same.
const (
	// Entrypoint is where the binary is in the image.
	Entrypoint = "/dynamic-config"
	// User is the non-root user and group the image runs as (the chart's
	// runAsUser/runAsGroup).
	User = "65532:65532"
	// Source is the repository (org.opencontainers.image.source).
	Source = "https://github.com/dynamic-config-admission/dynamic-config"
	// Licenses is the SPDX licence expression (org.opencontainers.image.licenses).
	Licenses = "Apache-2.0"
	// Title and Description name the image.
	Title       = "dynamic-config"
	Description = "dynamic-config admission: the gRPC decider, the admission front door and the offline doors, in one binary"
)

// imageSpec is what varies from one build to the next.
type imageSpec struct {
	Binary   string // path of the static binary
	Version  string // project version (scripts/version.sh)
	Revision string // source commit
	Created  string // RFC 3339; "" = the Unix epoch
	Arch     string // GOARCH of the binary
}

// imageTag is the tag of a version: OCI tags cannot hold "+", so the build
// metadata separator becomes "_" (as Helm does for chart versions in OCI
// registries); the chart's default tag makes the same substitution.
func imageTag(version string) string { return strings.ReplaceAll(version, "+", "_") }

// labels are the OCI annotations the image config carries.
func (s imageSpec) labels(created string) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":       Title,
		"org.opencontainers.image.description": Description,
		"org.opencontainers.image.version":     s.Version,
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.url":         Source,
		"org.opencontainers.image.licenses":    Licenses,
		"org.opencontainers.image.created":     created,
	}
	if s.Revision != "" {
		l["org.opencontainers.image.revision"] = s.Revision
	}
	return l
}

// buildImage assembles the image: an empty base, one layer with the binary
// at Entrypoint (mode 0555, owned by root so the user cannot replace it),
// the config and OCI media types throughout.
func buildImage(s imageSpec) (v1.Image, error) {
	created, err := createdTime(s.Created)
	if err != nil {
		return nil, err
	}
	binary, err := os.ReadFile(s.Binary)
	if err != nil {
		return nil, fmt.Errorf("read the binary: %w", err)
	}
	layerTar, err := binaryLayer(binary, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("build the layer: %w", err)
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: created}, CreatedBy: "tools/ociimage: COPY dynamic-config " + Entrypoint, Comment: "the static dynamic-config binary"},
	})
	if err != nil {
		return nil, fmt.Errorf("add the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", s.Arch
	cf.Created = v1.Time{Time: created}
	cf.Config.User = User
	cf.Config.Entrypoint = []string{Entrypoint}
	cf.Config.Cmd = nil
	cf.Config.WorkingDir = "/"
	cf.Config.Env = []string{"PATH=/"}
	cf.Config.Labels = s.labels(created.Format(timeLayout))
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("set the config: %w", err)
	}
	return mutate.Annotations(img, s.labels(created.Format(timeLayout))).(v1.Image), nil
}

// timeLayout is how the created time is written in labels.
const timeLayout = time.RFC3339

// createdTime reads --created: RFC 3339, or "" for the Unix epoch (a
// reproducible image).
func createdTime(created string) (time.Time, error) {
	if created == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339, created)
	if err != nil {
		return time.Time{}, fmt.Errorf("--created is %q: want RFC 3339: %w", created, err)
	}
	return t.UTC(), nil
}

// binaryLayer is the layer's tar: the binary at Entrypoint, nothing else
// (no shell, no package manager, no /etc/passwd: the user is numeric).
func binaryLayer(binary []byte, modTime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     strings.TrimPrefix(Entrypoint, "/"),
		Mode:     0o555,
		Size:     int64(len(binary)),
		ModTime:  modTime,
		Format:   tar.FormatPAX,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(binary); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeImage builds the image and writes it to out as a tar of an OCI image
// layout whose one manifest is tagged (org.opencontainers.image.ref.name)
// with the version's tag. It returns the manifest digest.
func writeImage(s imageSpec, out string) (v1.Hash, error) {
	img, err := buildImage(s)
	if err != nil {
		return v1.Hash{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	dir, err := os.MkdirTemp("", "ociimage-")
	if err != nil {
		return v1.Hash{}, err
	}
	defer os.RemoveAll(dir)
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("write the layout: %w", err)
	}
	if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": imageTag(s.Version),
	}), layout.WithPlatform(v1.Platform{OS: "linux", Architecture: s.Arch})); err != nil {
		return v1.Hash{}, fmt.Errorf("write the image: %w", err)
	}
	if err := tarDirectory(dir, out); err != nil {
		return v1.Hash{}, err
	}
	return digest, nil
}

// tarDirectory writes dir's tree to the tar file out, in name order, with
// fixed owners and times so that the same image gives the same file.
func tarDirectory(dir, out string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: time.Unix(0, 0)})
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
