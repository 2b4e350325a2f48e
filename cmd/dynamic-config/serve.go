package main

import (
	"fmt"
	"io"
)

// runServe is a placeholder until its issue lands.
func runServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "dynamic-config: not implemented yet")
	return exitUsage
}
