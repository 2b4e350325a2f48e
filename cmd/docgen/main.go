// Command docgen writes docs/annotations.md from the annotation registry, or
// with -check fails when the committed file has drifted from it.
//
//	go run ./cmd/docgen               # regenerate docs/annotations.md
//	go run ./cmd/docgen -check        # exit 1 when it is out of date
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/dynamic-config-admission/dynamic-config/docs"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

func run(args []string, stderr io.Writer) int {
	flags := flag.NewFlagSet("docgen", flag.ContinueOnError)
	flags.SetOutput(stderr)
	out := flags.String("out", "docs/annotations.md", "the generated file")
	check := flags.Bool("check", false, "write nothing; fail when the file differs from the generated text")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	generated, err := docs.Annotations()
	if err != nil {
		fmt.Fprintf(stderr, "docgen: %v\n", err)
		return 1
	}
	if *check {
		committed, err := os.ReadFile(*out)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "docgen: %v\n", err)
			return 1
		}
		if !bytes.Equal(committed, generated) {
			fmt.Fprintf(stderr, "%s is out of date: run make docs and commit\n", *out)
			return 1
		}
		return 0
	}
	if err := os.WriteFile(*out, generated, 0o644); err != nil {
		fmt.Fprintf(stderr, "docgen: %v\n", err)
		return 1
	}
	return 0
}
