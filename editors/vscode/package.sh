#!/usr/bin/env bash
# Builds the .vsix. With an adapter path, bundles that binary as bin/neural-dap and the
# shipped model as bin/model/, where the adapter looks first (next to itself), so the
# .vsix works on any machine.
# Usage: editors/vscode/package.sh [path/to/neural-dap]
set -euo pipefail
# The adapter path is the caller's, relative or absolute: test it before changing folder.
adapter=""
if [ $# -ge 1 ]; then
  if [ ! -f "$1" ] || [ ! -x "$1" ]; then
    echo "package.sh: adapter '$1' is not an executable file; build it with cargo build --release -p neural-dap" >&2
    exit 1
  fi
  adapter="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
fi
cd "$(dirname "$0")"
rm -rf bin
if [ -n "$adapter" ]; then
  mkdir -p bin/model
  cp "$adapter" bin/neural-dap
  cp ../../model/weights/default/{config.json,model.safetensors,tokenizer.json} bin/model/
fi
npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
npx vsce package --no-dependencies --allow-missing-repository --skip-license
