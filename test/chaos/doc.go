// Package chaos is the tier that keeps issue 38 proven against the real
// binary (make chaos, part of make ci): a decider whose installation and
// callers file are rewritten in place under load puts no decision from a
// partial file, and an anonymous flood or the largest pod the caps allow
// does not take a decider or a front door past the memory limit of its
// chart, inside a memory cgroup of that limit (cgroup v1, as root; skipped,
// saying so, where there is none).
package chaos
