package main

import (
	"fmt"
	"io"
)

// runInject is a placeholder until its issue lands.
func runInject(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "dynamic-config: not implemented yet")
	return exitUsage
}
