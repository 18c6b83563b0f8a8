#!/bin/sh
# Registers the namespace expd uses (once; later runs find it). expd's
# worker adds its search attributes itself at start.
set -eu
ns="${TEMPORAL_NAMESPACE:-default}"
until temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do sleep 1; done
temporal operator namespace describe --address "$TEMPORAL_ADDRESS" --namespace "$ns" >/dev/null 2>&1 \
  || temporal operator namespace create --address "$TEMPORAL_ADDRESS" --namespace "$ns" --retention 30d
echo "namespace $ns is registered"
