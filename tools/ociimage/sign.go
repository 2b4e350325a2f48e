package main

import (
	"bytes"
	"crypto"
	"crypto/elliptic"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// Signatures as cosign stores them with a key (`cosign sign --key`, the
// layout every cosign version verifies, `cosign verify --key`): for the
// manifest sha256:<hex> of a repository, the image tagged sha256-<hex>.sig
// in that repository holds one layer per signature, each the "simple
// signing" JSON payload naming the repository and the digest, with the
// base64 signature of the payload in an annotation. Keys are cosign's key
// files (ENCRYPTED SIGSTORE PRIVATE KEY, the password in COSIGN_PASSWORD):
// `cosign generate-key-pair` or `ociimage generate-key-pair` make them.
const (
	// SimpleSigningMediaType is a signature layer's media type.
	SimpleSigningMediaType types.MediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	// SignatureAnnotation holds a layer's base64 signature.
	SignatureAnnotation = "dev.cosignproject.cosign/signature"
	// PasswordEnv is the key's password, as cosign reads it.
	PasswordEnv = "COSIGN_PASSWORD"
)

// signatureTag is where cosign keeps the signatures of digest.
func signatureTag(digest name.Digest) name.Tag {
	return digest.Context().Tag(strings.Replace(digest.DigestStr(), ":", "-", 1) + ".sig")
}

// loadSigner reads a cosign private key file, decrypted with password.
func loadSigner(path string, password []byte) (signature.SignerVerifier, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the signing key: %w", err)
	}
	key, err := cryptoutils.UnmarshalPEMToPrivateKey(data, cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		return nil, fmt.Errorf("the signing key %s (password from %s): %w", path, PasswordEnv, err)
	}
	sv, err := signature.LoadSignerVerifier(key, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("the signing key %s: %w", path, err)
	}
	return sv, nil
}

// generateKeyPair makes a cosign key pair: an ECDSA P-256 private key
// encrypted with password (cosign's format) and its public key, both PEM.
func generateKeyPair(password []byte) (private, public []byte, err error) {
	return cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc(password))
}

// signDigest signs the manifest digest as cosign does and adds the
// signature to its signature image (made if there is none). A signature of
// the same payload that the key already verifies is kept, not repeated.
func signDigest(digest name.Digest, sv signature.SignerVerifier, opts ...remote.Option) (name.Tag, error) {
	tag := signatureTag(digest)
	body, err := payload.Cosign{Image: digest}.MarshalJSON()
	if err != nil {
		return tag, err
	}
	base, err := existingSignatures(tag, opts...)
	if err != nil {
		return tag, err
	}
	if signed, err := alreadySigned(base, body, sv); err != nil || signed {
		return tag, err
	}
	sig, err := sv.SignMessage(bytes.NewReader(body))
	if err != nil {
		return tag, fmt.Errorf("sign %s: %w", digest, err)
	}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:       static.NewLayer(body, SimpleSigningMediaType),
		MediaType:   SimpleSigningMediaType,
		Annotations: map[string]string{SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
	})
	if err != nil {
		return tag, err
	}
	if err := remote.Write(tag, img, opts...); err != nil {
		return tag, fmt.Errorf("push the signature %s: %w", tag, err)
	}
	return tag, nil
}

// existingSignatures is the signature image at tag, or an empty one (OCI
// media types, as cosign makes it) when the registry has none.
func existingSignatures(tag name.Tag, opts ...remote.Option) (v1.Image, error) {
	img, err := remote.Image(tag, opts...)
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
		return mutate.ConfigMediaType(base, types.OCIConfigJSON), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the signatures %s: %w", tag, err)
	}
	return img, nil
}

// alreadySigned reports whether img holds a signature of body that sv verifies.
func alreadySigned(img v1.Image, body []byte, sv signature.Verifier) (bool, error) {
	m, err := img.Manifest()
	if err != nil {
		return false, err
	}
	for _, l := range m.Layers {
		sig, err := base64.StdEncoding.DecodeString(l.Annotations[SignatureAnnotation])
		if err != nil || l.MediaType != SimpleSigningMediaType {
			continue
		}
		layer, err := img.LayerByDigest(l.Digest)
		if err != nil {
			return false, err
		}
		rc, err := layer.Compressed()
		if err != nil {
			return false, err
		}
		got, err := io.ReadAll(io.LimitReader(rc, 1<<20))
		rc.Close()
		if err != nil {
			return false, err
		}
		if bytes.Equal(got, body) && sv.VerifySignature(bytes.NewReader(sig), bytes.NewReader(body)) == nil {
			return true, nil
		}
	}
	return false, nil
}

// runSign is `ociimage sign --key cosign.key REF...`: each reference (a tag
// or a digest; an image, an index or a Helm chart) is resolved to its
// manifest digest and signed. It prints each digest and its signature tag.
func runSign(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ociimage sign", flag.ContinueOnError)
	key := fs.String("key", "", "the cosign private key file (its password in "+PasswordEnv+")")
	insecure := fs.Bool("insecure", false, "the registry speaks plain HTTP")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *key == "" || fs.NArg() == 0 {
		return errors.New("want --key FILE and at least one REGISTRY/REPOSITORY:TAG or @DIGEST")
	}
	sv, err := loadSigner(*key, []byte(os.Getenv(PasswordEnv)))
	if err != nil {
		return err
	}
	for _, r := range fs.Args() {
		digest, err := resolveDigest(r, *insecure)
		if err != nil {
			return err
		}
		tag, err := signDigest(digest, sv, registryOptions()...)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: signed %s (%s)\n", r, digest.DigestStr(), tag.TagStr())
	}
	return nil
}

// resolveDigest reads REF (a tag or a digest) and returns the digest of the
// manifest it names.
func resolveDigest(ref string, insecure bool) (name.Digest, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("%q: want REGISTRY/REPOSITORY:TAG or @DIGEST: %w", ref, err)
	}
	desc, err := remote.Head(r, registryOptions()...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("resolve %s: %w", ref, err)
	}
	return r.Context().Digest(desc.Digest.String()), nil
}

// runGenerateKeyPair is `ociimage generate-key-pair [--output-key-prefix P]`:
// P.key (mode 0600, encrypted with COSIGN_PASSWORD) and P.pub, as
// `cosign generate-key-pair` writes them. An existing file is kept.
func runGenerateKeyPair(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ociimage generate-key-pair", flag.ContinueOnError)
	prefix := fs.String("output-key-prefix", "cosign", "write PREFIX.key and PREFIX.pub")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	private, public, err := generateKeyPair([]byte(os.Getenv(PasswordEnv)))
	if err != nil {
		return err
	}
	for _, f := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{{*prefix + ".key", private, 0o600}, {*prefix + ".pub", public, 0o644}} {
		out, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
		if err != nil {
			return fmt.Errorf("write the key pair: %w", err)
		}
		_, err = out.Write(f.data)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "private key %s.key (encrypted with %s), public key %s.pub\n", *prefix, PasswordEnv, *prefix)
	return nil
}
