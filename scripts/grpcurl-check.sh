#!/usr/bin/env bash
# The grpcurl promise (spec 06 §9): a plaintext decider holding the empty
# installation answers list, describe and Decide through server reflection.
# Needs GRPCURL and DYNAMIC_CONFIG (paths to the built binaries).
set -euo pipefail
check_name=grpcurl-check
# shellcheck source=scripts/decider-lib.sh
. "$(dirname "$0")/decider-lib.sh"

: >"$work/empty.yaml"

start_decider "$work/empty.yaml"

list="$("$GRPCURL" -plaintext "$addr" list)" || fail "list failed"
grep -qx 'dynamicconfig.decider.v1.DeciderService' <<<"$list" ||
	fail "list does not show dynamicconfig.decider.v1.DeciderService: $list"

describe="$("$GRPCURL" -plaintext "$addr" describe dynamicconfig.decider.v1.DeciderService)" || fail "describe failed"
grep -q 'rpc Decide' <<<"$describe" || fail "describe does not show Decide: $describe"
grep -q 'rpc GetInstallation' <<<"$describe" || fail "describe does not show GetInstallation: $describe"

decision="$("$GRPCURL" -plaintext -d @ "$addr" dynamicconfig.decider.v1.DeciderService/Decide <<'JSON'
{"purpose": "PURPOSE_MUTATE",
 "pod": {"namespace": "default", "name": "app", "operation": "OPERATION_CREATE",
         "resourceKind": "RESOURCE_KIND_POD",
         "annotations": {"dynamic-config.rs/inject": "true",
                         "dynamic-config.rs/source": "consul",
                         "dynamic-config.rs/endpoint": "http://consul:8500",
                         "dynamic-config.rs/key": "myapp/config.json",
                         "dynamic-config.rs/path": "/config/rendered.toml"},
         "containers": [{"name": "app"}]}}
JSON
)" || fail "Decide failed"
grep -q '"decision"' <<<"$decision" || fail "Decide did not return a DecisionResponse: $decision"
grep -q '"outcome": "OUTCOME_INJECT"' <<<"$decision" || fail "example 1 of 03 §7 is not OUTCOME_INJECT under the empty installation: $decision"
grep -q '"name": "dynamic-config-agent"' <<<"$decision" || fail "the plan has no dynamic-config-agent container: $decision"
grep -q '"installationRevision": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"' <<<"$decision" ||
	fail "the DecisionResponse does not carry the empty installation's revision: $decision"

installation="$("$GRPCURL" -plaintext "$addr" dynamicconfig.decider.v1.DeciderService/GetInstallation)" || fail "GetInstallation failed"
grep -q '"revision": "sha256:' <<<"$installation" || fail "GetInstallation has no revision: $installation"

# Issue 43: WatchRevision, a server stream, announces the revisions at once and then every
# heartbeat; grpcurl prints what arrives until -max-time ends the call (its exit code is then
# DeadlineExceeded's, which is the expected end here).
grep -q 'rpc WatchRevision ( .*WatchRevisionRequest ) returns ( stream .*WatchRevisionResponse )' <<<"$describe" ||
	fail "describe does not show the server-streaming WatchRevision: $describe"
watch="$("$GRPCURL" -plaintext -max-time 2 -d '{}' "$addr" dynamicconfig.decider.v1.DeciderService/WatchRevision 2>&1)" || true
grep -q '"installationRevision": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"' <<<"$watch" ||
	fail "WatchRevision does not announce the empty installation's revision: $watch"
grep -q '"heartbeatInterval": "5s"' <<<"$watch" || fail "WatchRevision does not announce its heartbeat interval: $watch"
grep -q '"deciderBuild": "' <<<"$watch" || fail "WatchRevision does not name the decider's build: $watch"
grep -q 'DeadlineExceeded' <<<"$watch" || fail "WatchRevision ended before grpcurl's -max-time: $watch"

# Issue 24: every decider is a leader; grpcurl drives SyncInstallation. It
# closes its side after the one message, so the leader answers with one
# snapshot of the installation in force and ends the stream.
grep -qx 'dynamicconfig.decider.v1.InstallationSyncService' <<<"$list" ||
	fail "list does not show dynamicconfig.decider.v1.InstallationSyncService: $list"
describe="$("$GRPCURL" -plaintext "$addr" describe dynamicconfig.decider.v1.InstallationSyncService)" || fail "describe of the sync service failed"
grep -q 'rpc SyncInstallation ( stream .*SyncRequest ) returns ( stream .*InstallationSnapshot )' <<<"$describe" ||
	fail "describe does not show the bidi SyncInstallation: $describe"
snapshot="$("$GRPCURL" -plaintext -d '{"followerId": "grpcurl-0", "cluster": "west"}' "$addr" \
	dynamicconfig.decider.v1.InstallationSyncService/SyncInstallation)" || fail "SyncInstallation failed"
grep -q '"revision": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"' <<<"$snapshot" ||
	fail "the snapshot does not carry the empty installation's revision: $snapshot"
grep -q '"canonical": "{}"' <<<"$snapshot" || fail "the snapshot's canonical form is not {}: $snapshot"
grep -q '"nonce": "1"' <<<"$snapshot" || fail "the snapshot has no nonce: $snapshot"
installation="$("$GRPCURL" -plaintext "$addr" dynamicconfig.decider.v1.DeciderService/GetInstallation)" || fail "GetInstallation failed"
grep -q '"role": "DECIDER_ROLE_LEADER"' <<<"$installation" || fail "GetInstallation does not say leader: $installation"
grep -q '"followerId": "grpcurl-0"' <<<"$installation" || fail "GetInstallation does not list the follower grpcurl-0: $installation"

stop_decider

# --reflection=false hides the service from grpcurl (health still answers).
start_decider "$work/empty.yaml" --reflection=false
if "$GRPCURL" -plaintext "$addr" list >"$work/list-off" 2>&1; then
	fail "list answered with --reflection=false: $(cat "$work/list-off")"
fi
grep -q 'does not support the reflection API' "$work/list-off" ||
	fail "list with --reflection=false failed for another reason: $(cat "$work/list-off")"
stop_decider

echo "grpcurl-check: list, describe, Decide, GetInstallation, WatchRevision and SyncInstallation answered; --reflection=false hides the service"
