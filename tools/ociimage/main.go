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
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "push" {
		if err := runPush(os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "ociimage push: %v\n", err)
			os.Exit(1)
		}
		return
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
