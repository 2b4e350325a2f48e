// Package golist reads the package graph of the module the way `go list
// -json` reports it: the build checks (cmd/purecheck, cmd/archdoc) draw and
// fence the house from it, so neither can drift from what the compiler sees.
package golist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// Package is the part of `go list -json`'s record the checks read.
type Package struct {
	ImportPath string
	Name       string
	Doc        string
	Standard   bool
	DepOnly    bool
	Imports    []string
	Module     *struct{ Path string }
}

// Run runs `go list -json` with args (GO names the go command, default
// "go") and decodes its stream of packages.
func Run(args ...string) ([]Package, error) {
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(goCmd, append([]string{"list", "-json"}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list %v: %w: %s", args, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return Decode(&stdout)
}

// Decode reads a `go list -json` stream.
func Decode(r io.Reader) ([]Package, error) {
	var pkgs []Package
	dec := json.NewDecoder(r)
	for {
		var p Package
		if err := dec.Decode(&p); err != nil {
			if errors.Is(err, io.EOF) {
				return pkgs, nil
			}
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}
