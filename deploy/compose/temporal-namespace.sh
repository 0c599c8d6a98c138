#!/bin/sh
# Run by the temporal-create-namespace one-shot once the server is healthy: the namespace Drydock
# uses, and the custom search attributes its workflows set (workflows/search-attributes.ts, all
# Keyword). Each step looks before it acts, so a second run changes nothing and succeeds.
set -eu

: "${TEMPORAL_ADDRESS:?the Temporal frontend, host:port}"
namespace="${TEMPORAL_NAMESPACE:-default}"
retention="${TEMPORAL_RETENTION:-7d}"
export TEMPORAL_ADDRESS

# Healthy means the frontend's port is open; the namespace service may still be starting.
until temporal operator cluster health | grep -q SERVING; do
  echo "waiting for Temporal at $TEMPORAL_ADDRESS"
  sleep 2
done

if temporal operator namespace describe --namespace "$namespace" >/dev/null 2>&1; then
  echo "namespace $namespace: exists"
else
  temporal operator namespace create --namespace "$namespace" --retention "$retention"
  echo "namespace $namespace: created (retention $retention)"
fi

# A new namespace reaches the server's namespace cache some seconds later; until then it is "not found".
tries=0
until existing="$(temporal operator search-attribute list --namespace "$namespace" 2>/dev/null)"; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "namespace $namespace: still unknown to the server after 2 minutes" >&2
    exit 1
  fi
  sleep 2
done
for name in NodeId TenantId PoolId LifecycleOperation OperationId Hostname ParentOperationId; do
  if printf '%s\n' "$existing" | grep -qw "$name"; then
    echo "search attribute $name: exists"
  else
    temporal operator search-attribute create --namespace "$namespace" --name "$name" --type Keyword
    echo "search attribute $name: created"
  fi
done
