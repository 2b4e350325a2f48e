// Command ociimage builds the dynamic-config container image without a
// Docker engine: one layer holding the static binary on an empty base, run
// as 65532:65532 with the binary as entrypoint, the OCI labels
// org.opencontainers.image.*, written as an OCI image layout in a tar file
// (what `docker buildx build --output type=oci` writes; `docker load`,
// `podman load`, skopeo and crane read it). The Dockerfile at the
// repository root builds the same image for people with a Docker engine.
//
//	go run ./ociimage --binary ../bin/image/dynamic-config --version v1.2.3 \
//	    --revision $(git rev-parse HEAD) --out ../bin/dynamic-config-image.tar
//
// The push mode builds the same image once per platform, assembles an OCI
// image index naming each with its platform, and pushes it (make publish):
//
//	go run ./ociimage push --binary linux/amd64=PATH --binary linux/arm64=PATH \
//	    --version v1.2.3 --revision $(git rev-parse HEAD) \
//	    --ref registry.example.com/team/dynamic-config:v1.2.3 [--insecure]
//
// The other modes of make publish and make mirror-agent:
//
//	go run ./ociimage mirror --chart ../charts/dynamic-config --to registry.example.com/team \
//	    [--from-repository cache.example.com/dynamic-config-agent]
//	    copies the chart's agent image (every platform, the same digest, and its
//	    cosign signatures) to registry.example.com/team/dynamic-config-agent:<tag>
//	go run ./ociimage chart-values --chart ../charts/dynamic-config --out DIR \
//	    --set image.repository=registry.example.com/team/dynamic-config
//	    the chart copied with the values that name the published images
//	go run ./ociimage generate-key-pair   cosign.key and cosign.pub (COSIGN_PASSWORD)
//	go run ./ociimage sign --key cosign.key REF...
//	    cosign-compatible signatures of an image index or a chart (cosign verify --key)
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
)

// modes are the subcommands beside the default (write the image tarball).
var modes = map[string]func(args []string, stdout io.Writer) error{
	"push":              runPush,
	"mirror":            runMirror,
	"chart-values":      runChartValues,
	"sign":              runSign,
	"generate-key-pair": runGenerateKeyPair,
}

func main() {
	if len(os.Args) > 1 {
		if mode, ok := modes[os.Args[1]]; ok {
			if err := mode(os.Args[2:], os.Stdout); err != nil {
				fmt.Fprintf(os.Stderr, "ociimage %s: %v\n", os.Args[1], err)
				os.Exit(1)
			}
			return
		}
	}
	var spec imageSpec
	var out string
	flag.StringVar(&spec.Binary, "binary", "", "the static linux dynamic-config binary (CGO_ENABLED=0)")
	flag.StringVar(&spec.Version, "version", "", "the project version (the org.opencontainers.image.version label and the tag)")
	flag.StringVar(&spec.Revision, "revision", "", "the source commit (org.opencontainers.image.revision)")
	flag.StringVar(&spec.Created, "created", "", "the build time, RFC 3339 (default: the Unix epoch, for a reproducible image)")
	flag.StringVar(&spec.Arch, "arch", runtime.GOARCH, "the binary's architecture")
	flag.StringVar(&out, "out", "", "the OCI tarball to write")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "ociimage: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if spec.Binary == "" || spec.Version == "" || out == "" {
		fmt.Fprintln(os.Stderr, "ociimage: --binary, --version and --out are required")
		os.Exit(2)
	}
	digest, err := writeImage(spec, out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ociimage: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %s (tag %s)\n", out, digest, imageTag(spec.Version))
}
