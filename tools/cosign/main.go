// Command cosign-verify checks cosign signatures made with a key, with
// cosign's own verification code (github.com/sigstore/cosign/v3/pkg/cosign,
// what `cosign verify --key KEY --insecure-ignore-tlog=true` runs): make
// publish-check verifies with it what make publish signed (tools/ociimage,
// sigstore's signature library), so the signatures are proven to be what
// cosign reads, not only what the signer wrote. No transparency log and no
// certificate: a key pair, offline.
//
//	cosign-verify --key cosign.pub [--insecure] REGISTRY/REPOSITORY:TAG|@DIGEST...
//
// It prints each reference's verified digest and claimed repository, and
// exits 1 when a reference has no signature the key verifies.
package main

import (
	"context"
	"crypto"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/cosign/v3/pkg/cosign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

func main() {
	key := flag.String("key", "", "the cosign public key file")
	insecure := flag.Bool("insecure", false, "the registry speaks plain HTTP")
	flag.Parse()
	if *key == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: cosign-verify --key cosign.pub [--insecure] REF...")
		os.Exit(2)
	}
	if err := verify(*key, *insecure, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "cosign-verify: %v\n", err)
		os.Exit(1)
	}
}

func verify(keyFile string, insecure bool, refs []string) error {
	pem, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pem)
	if err != nil {
		return fmt.Errorf("the public key %s: %w", keyFile, err)
	}
	verifier, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return fmt.Errorf("the public key %s: %w", keyFile, err)
	}
	co := &cosign.CheckOpts{SigVerifier: verifier, IgnoreTlog: true, IgnoreSCT: true, ClaimVerifier: cosign.SimpleClaimVerifier}
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	for _, r := range refs {
		ref, err := name.ParseReference(r, opts...)
		if err != nil {
			return fmt.Errorf("%q: %w", r, err)
		}
		sigs, _, err := cosign.VerifyImageSignatures(context.Background(), ref, co)
		if err != nil {
			return fmt.Errorf("%s: %w", r, err)
		}
		for _, s := range sigs {
			body, err := s.Payload()
			if err != nil {
				return err
			}
			var p payload.SimpleContainerImage
			if err := json.Unmarshal(body, &p); err != nil {
				return fmt.Errorf("%s: a signature's payload: %w", r, err)
			}
			fmt.Printf("%s: verified %s, signed for %s\n", r, p.Critical.Image.DockerManifestDigest, p.Critical.Identity.DockerReference)
		}
	}
	return nil
}
