#!/usr/bin/env bash
# `make run`'s processes: one worker (runs the turns) in the background and daphne (the web tier) in the
# foreground. Ctrl-C (or daphne exiting) stops both; the worker finishes the turns it is running first.
set -u
cd "$(dirname "$0")/.."
PORT="${PORT:-8000}"
# Prometheus multiprocess mode: the worker and daphne write their series to files here and /metrics serves the
# sum (docs/architecture.md "Metrics"). Emptied at each start: series of processes of an earlier run go.
export PROMETHEUS_MULTIPROC_DIR="${PROMETHEUS_MULTIPROC_DIR:-$PWD/var/metrics}"
mkdir -p "$PROMETHEUS_MULTIPROC_DIR" && rm -f "$PROMETHEUS_MULTIPROC_DIR"/*.db
# Its own session: Ctrl-C in the terminal reaches daphne only; the trap below stops the worker (once).
setsid .venv/bin/python manage.py worker --threads "${WORKER_THREADS:-4}" &
worker=$!
stop() {
    trap - INT TERM EXIT
    kill -TERM "$worker" 2>/dev/null && wait "$worker" 2>/dev/null
}
trap stop INT TERM EXIT
.venv/bin/daphne -e "tcp:port=${PORT}:interface=127.0.0.1:backlog=1024" config.asgi:application
