package main

import (
	"fmt"
	"io"
)

// runExplain is a placeholder until its issue lands.
func runExplain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "dynamic-config: not implemented yet")
	return exitUsage
}
