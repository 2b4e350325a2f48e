// Package node is the real-node tier (`make e2e-node`, issue 39; issue 40
// item 2): the product as users run it, on a single real node that
// scripts/node/up.sh brought up on this machine — containerd and runc, a
// kubelet, kube-proxy, cluster DNS — so every pod really runs.
//
// The chart is installed with a real `helm install` (hooks on: the
// check-installation and install-proof Jobs run as pods), the image is the
// one `make image` built, and the injected agent is a stand-in built by the
// tier (standin/: the agent contract for the consul store, served by a fake
// consul in the cluster) under the installation's agent image name. The
// scenario is one ordered test, TestTheProductOnARealNode; it prints its
// timeline as `node: [  t s] …` lines on the same clock as up.sh's.
//
// Without NODE_KUBECONFIG (set by scripts/node/run.sh) the package's tests
// do nothing: `go test ./...` and `go vet` in test/e2e stay cheap.
package node
