// Package e2e drives the dynamic-config binary through a real kube-apiserver
// (with an embedded etcd) and kubectl, exactly as a cluster would: the
// webhooks are registered by URL, pods go through `kubectl apply`, and the
// stored objects are read back.
//
// The tests need the binaries that `make e2e` builds; the variables are
// listed in harness_test.go. This module is separate from the product's so
// that k8s.io/kubernetes never enters the product's go.mod.
package e2e
