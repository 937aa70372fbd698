#!/bin/bash
# bench/agent_loop.sh: an agent's whole loop (git clone, venv, pip install -e,
# unittest, edit, rerun, diff, commit) timed natively and under moat; the
# median of N runs each (default 3) and the ratio (target: within 1.3x).
# The loop and its step-by-step comparison: tests/compat/agent-loop.sh.
#   bench/agent_loop.sh [--moat BIN] [N]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
args=()
[ "${1:-}" = --moat ] && { args=(--moat "$2"); shift 2; }
exec "$here/../tests/compat/agent-loop.sh" "${args[@]}" --repeat "${1:-3}"
