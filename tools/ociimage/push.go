package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// binaryFlags is the repeated --binary (and --sbom) flag of the push mode.
type binaryFlags []platformBinary

func (b *binaryFlags) String() string {
	parts := make([]string, len(*b))
	for i, pb := range *b {
		parts[i] = pb.Platform.String() + "=" + pb.Path
	}
	return strings.Join(parts, ",")
}

func (b *binaryFlags) Set(s string) error {
	pb, err := parsePlatformBinary(s)
	if err != nil {
		return err
	}
	*b = append(*b, pb)
	return nil
}

// runPush is `ociimage push`: one image per --binary, an OCI image index
// naming each with its platform, pushed to --ref, then each --sbom as an
// artifact referring to its platform's image. It prints the digests.
func runPush(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ociimage push", flag.ContinueOnError)
	var spec imageSpec
	var binaries, sboms binaryFlags
	var ref string
	var insecure bool
	fs.Var(&binaries, "binary", "linux/ARCH=PATH of a static binary; once per platform")
	fs.Var(&sboms, "sbom", "linux/ARCH=PATH of the CycloneDX JSON SBOM of that platform's binary, pushed as an artifact whose subject is its image")
	fs.StringVar(&spec.Version, "version", "", "the project version (the org.opencontainers.image.version label)")
	fs.StringVar(&spec.Revision, "revision", "", "the source commit (org.opencontainers.image.revision)")
	fs.StringVar(&spec.Created, "created", "", "the build time, RFC 3339 (default: the Unix epoch, for a reproducible image)")
	fs.StringVar(&ref, "ref", "", "where to push the index: REGISTRY/REPOSITORY:TAG")
	fs.BoolVar(&insecure, "insecure", false, "the registry speaks plain HTTP")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if spec.Version == "" || ref == "" {
		return fmt.Errorf("--version and --ref are required")
	}
	tag, err := parseTag(ref, insecure)
	if err != nil {
		return err
	}
	idx, err := buildIndex(spec, binaries)
	if err != nil {
		return err
	}
	digest, err := pushIndex(idx, tag)
	if err != nil {
		return err
	}
	sbomDigests, err := pushSBOMs(idx, sboms, tag)
	if err != nil {
		return err
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: index %s\n", ref, digest)
	for _, d := range manifest.Manifests {
		fmt.Fprintf(stdout, "  %s: %s", d.Platform, d.Digest)
		if s, ok := sbomDigests[d.Platform.String()]; ok {
			fmt.Fprintf(stdout, " (SBOM %s)", s)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// registryOptions are the options of every registry call: the credentials
// of ~/.docker/config.json (docker login), if any.
func registryOptions() []remote.Option {
	return []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}
}
