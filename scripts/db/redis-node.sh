#!/usr/bin/env bash
# Starts one node of the throwaway Redis Cluster (daemonized): scripts/db/redis-node.sh PORT DIR
# Used by up.sh for the six nodes, and by the fault tests to start a killed node again
# (it rejoins the cluster from DIR/nodes.conf, as a replica once its replica took over).
# No persistence; a small cluster-node-timeout so that a killed primary fails over in
# about two seconds; the debug command from loopback, for DEBUG SLEEP.
set -euo pipefail
port=$1 dir=$2
exec redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
  --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 1000 \
  --cluster-require-full-coverage no --enable-debug-command local \
  --dir "$dir" --pidfile "$dir/pid" --logfile "$dir/log" --daemonize yes
