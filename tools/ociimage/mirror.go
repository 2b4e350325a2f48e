package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"go.yaml.in/yaml/v3"
)

// chartAgentImage is the agent image a chart's values.yaml injects
// (agent.image, with agent.digest or else agent.tag), read from
// fromRepository instead of agent.image when that is set: what
// `make mirror-agent` copies.
func chartAgentImage(chartDir, fromRepository string) (string, error) {
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		return "", err
	}
	var v struct {
		Agent struct {
			Image  string `yaml:"image"`
			Tag    string `yaml:"tag"`
			Digest string `yaml:"digest"`
		} `yaml:"agent"`
	}
	if err := yaml.Unmarshal(data, &v); err != nil {
		return "", fmt.Errorf("%s/values.yaml: %w", chartDir, err)
	}
	a := v.Agent
	if a.Image == "" {
		return "", fmt.Errorf("%s/values.yaml has no agent.image", chartDir)
	}
	if fromRepository != "" {
		a.Image = fromRepository
	}
	switch {
	case a.Digest != "":
		return a.Image + "@" + a.Digest, nil
	case a.Tag != "":
		return a.Image + ":" + a.Tag, nil
	default:
		return a.Image, nil
	}
}

// mirrorTarget is where an image of source goes in registry (host[:port][/path]):
// the last element of its repository, with its tag or digest.
func mirrorTarget(source name.Reference, registry string, insecure bool) (name.Reference, error) {
	repo := registry + "/" + path.Base(source.Context().RepositoryStr())
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	if d, ok := source.(name.Digest); ok {
		return name.NewDigest(repo+"@"+d.DigestStr(), opts...)
	}
	return name.NewTag(repo+":"+source.Identifier(), opts...)
}

// mirror copies the manifest source names — an index with every platform
// it lists, or one image — and its blobs to target unchanged, so its digest
// stays; then the cosign signatures of that digest, when source's registry
// has them. It returns the digest.
func mirror(source, target name.Reference) (string, bool, error) {
	opts := registryOptions()
	desc, err := remote.Get(source, opts...)
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", source, err)
	}
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err == nil {
			err = remote.WriteIndex(target, idx, opts...)
		}
		if err != nil {
			return "", false, fmt.Errorf("copy the index %s to %s: %w", source, target, err)
		}
	} else {
		img, err := desc.Image()
		if err == nil {
			err = remote.Write(target, img, opts...)
		}
		if err != nil {
			return "", false, fmt.Errorf("copy the image %s to %s: %w", source, target, err)
		}
	}
	digest := desc.Digest.String()
	sigs, err := remote.Image(signatureTag(source.Context().Digest(digest)), opts...)
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return digest, false, nil
	}
	if err == nil {
		err = remote.Write(signatureTag(target.Context().Digest(digest)), sigs, opts...)
	}
	if err != nil {
		return digest, false, fmt.Errorf("copy the signatures of %s: %w", source, err)
	}
	return digest, true, nil
}

// runMirror is `ociimage mirror --chart DIR --to REGISTRY [--from-repository REPO]`.
func runMirror(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ociimage mirror", flag.ContinueOnError)
	chart := fs.String("chart", "", "the chart whose values.yaml names the agent image (agent.image, agent.tag, agent.digest)")
	from := fs.String("from-repository", "", "copy the chart's agent tag or digest from this repository instead of agent.image (e.g. a cache of it)")
	to := fs.String("to", "", "the registry (host[:port][/path]) to copy into, as REGISTRY/<the source's last path element>:<its tag>")
	insecure := fs.Bool("insecure", false, "the registries may speak plain HTTP")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *to == "" || *chart == "" {
		return errors.New("want --chart DIR and --to REGISTRY")
	}
	src, err := chartAgentImage(*chart, *from)
	if err != nil {
		return err
	}
	var opts []name.Option
	if *insecure {
		opts = append(opts, name.Insecure)
	}
	source, err := name.ParseReference(src, opts...)
	if err != nil {
		return fmt.Errorf("the agent image %q: %w", src, err)
	}
	target, err := mirrorTarget(source, *to, *insecure)
	if err != nil {
		return fmt.Errorf("--to %q: %w", *to, err)
	}
	digest, signed, err := mirror(source, target)
	if err != nil {
		return err
	}
	note := "no cosign signature at the source"
	if signed {
		note = "with its cosign signatures"
	}
	fmt.Fprintf(stdout, "%s → %s (%s, %s)\n", source, target, digest, note)
	return nil
}
