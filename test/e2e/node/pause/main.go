// Command pause is the real node's sandbox image (`make e2e-node`): it holds
// a pod's namespaces by sleeping until it is told to stop. No registry is
// reachable from the node, so the tier builds this one itself.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
