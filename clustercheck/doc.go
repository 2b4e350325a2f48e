// Package clustercheck checks an installed release through the API server
// (issue 21, docs/spec-changes.md): the install proof — a pod that asks for
// the agent, created with a server-side dry run until the answer carries the
// agent — and the sanity of our webhook configurations (caBundle against the
// front door's serving certificate, the Service's ready endpoints,
// failurePolicy, matchConditions, timeoutSeconds against the decider
// deadline). `dynamic-config check-cluster` (cmd/dynamic-config) runs it from
// a laptop; the chart's install-proof hook Job runs its probe in the cluster.
//
// It knows the product only by its names on the wire (the webhook names, the
// status annotation, the agent's container names): it imports neither the
// front door nor the decider.
package clustercheck
