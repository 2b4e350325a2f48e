package main

import (
	"fmt"
	"io"
)

// runDecider is a placeholder until its issue lands.
func runDecider(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "dynamic-config: not implemented yet")
	return exitUsage
}
