// Command standin is the real-node tier's stand-in for what a cluster runs
// around the admission project (`make e2e-node`, issue 39), one static
// binary in three images:
//
//	standin agent ARGS…   the injected agent, honouring the agent contract
//	                      (spec 03 §3) for the consul store (agent.go)
//	standin consul        a consul KV HTTP API in memory, the agent's store (consul.go)
//	standin app MODE PATH an application that reads its rendered file (app.go)
//
// None of it is shipped.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: standin agent|consul|app ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "agent":
		err = runAgent(os.Args[2:])
	case "consul":
		err = runConsul(os.Args[2:])
	case "app":
		err = runApp(os.Args[2:])
	default:
		err = fmt.Errorf("unknown role %q: agent, consul or app", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "standin %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
