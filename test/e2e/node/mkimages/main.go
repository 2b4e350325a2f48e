// Command mkimages writes the real-node tier's own images (`make e2e-node`)
// as docker-archive tarballs naming their image, which `ctr images import`
// takes as they are (no registry is reachable from the node): the sandbox
// image, and the stand-in binary (test/e2e/node/standin) as the agent — under
// the name the installation injects — the consul store and the app.
//
//	go run ./node/mkimages --pause PATH --standin PATH --agent-image NAME:TAG --out DIR
//
// Each image is one layer holding one static binary on an empty base, run as
// a numeric non-root user; the layer's times are the Unix epoch, so the same
// binaries give the same digests.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The images' names on the node besides the agent's (test/e2e/node reads them).
const (
	PauseImage  = "localhost/dcnode/pause:1"
	ConsulImage = "localhost/dcnode/consul:1"
	AppImage    = "localhost/dcnode/app:1"
)

type image struct {
	file       string   // tarball under --out
	ref        string   // the image name
	binary     string   // the static binary
	path       string   // where it sits in the image
	entrypoint []string // its entrypoint
	user       string
}

func main() {
	pause := flag.String("pause", "", "the static pause binary")
	standin := flag.String("standin", "", "the static stand-in binary")
	agentImage := flag.String("agent-image", "", "the name the installation injects the agent as (NAME:TAG)")
	out := flag.String("out", "", "the directory to write the tarballs into")
	flag.Parse()
	if *pause == "" || *standin == "" || *agentImage == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "mkimages: --pause, --standin, --agent-image and --out are required")
		os.Exit(2)
	}
	images := []image{
		{"pause.tar", PauseImage, *pause, "/pause", []string{"/pause"}, "65535:65535"},
		{"agent.tar", *agentImage, *standin, "/standin", []string{"/standin", "agent"}, "65532:65532"},
		{"consul.tar", ConsulImage, *standin, "/standin", []string{"/standin", "consul"}, "65532:65532"},
		{"app.tar", AppImage, *standin, "/standin", []string{"/standin", "app"}, "65532:65532"},
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "mkimages: %v\n", err)
		os.Exit(1)
	}
	for _, im := range images {
		digest, err := write(im, filepath.Join(*out, im.file))
		if err != nil {
			fmt.Fprintf(os.Stderr, "mkimages: %s: %v\n", im.ref, err)
			os.Exit(1)
		}
		fmt.Printf("mkimages: %s %s (%s)\n", im.file, im.ref, digest)
	}
}

func write(im image, out string) (v1.Hash, error) {
	ref, err := name.NewTag(im.ref)
	if err != nil {
		return v1.Hash{}, err
	}
	bin, err := os.ReadFile(im.binary)
	if err != nil {
		return v1.Hash{}, err
	}
	layerTar, err := oneFile(im.path, bin)
	if err != nil {
		return v1.Hash{}, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return v1.Hash{}, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return v1.Hash{}, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return v1.Hash{}, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config.User = im.user
	cf.Config.Entrypoint = im.entrypoint
	cf.Config.WorkingDir = "/"
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return v1.Hash{}, err
	}
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}

// oneFile is a layer's tar holding one executable at path.
func oneFile(path string, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeReg, Name: path[1:], Mode: 0o555, Size: int64(len(data)),
		ModTime: time.Unix(0, 0), Format: tar.FormatPAX,
	}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
