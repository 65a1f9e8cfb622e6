// Finds the neural-dap binary. Kept free of the `vscode` module so that it can be
// unit-tested with plain `node --test`.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

export const ADAPTER_NAME = process.platform === 'win32' ? 'neural-dap.exe' : 'neural-dap';

export type Resolution = { ok: true; path: string } | { ok: false; message: string };

export interface Search {
  /** The `neural.adapterPath` setting; empty when unset. */
  configured: string;
  /** Folder the extension is installed in (holds `bin/` when the adapter is bundled). */
  extensionPath: string;
  /** Folder that relative settings are resolved against (the workspace folder). */
  baseDir?: string;
  /** The PATH variable to search last. */
  envPath?: string;
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p;
}

/**
 * Order: the setting (an explicit choice must not silently fall back to something
 * else), then the binary bundled in the extension, then `neural-dap` on PATH.
 */
export function resolveAdapter(search: Search): Resolution {
  const configured = search.configured.trim();
  if (configured !== '') {
    const expanded = expandHome(configured);
    const file = path.isAbsolute(expanded) ? expanded : path.resolve(search.baseDir ?? process.cwd(), expanded);
    if (isExecutableFile(file)) {
      return { ok: true, path: file };
    }
    return {
      ok: false,
      message:
        `The setting neural.adapterPath points to "${file}", which is not an executable file. ` +
        'Build the adapter (cargo build --release -p neural-dap) and point the setting at target/release/neural-dap, or clear the setting to use the bundled adapter.',
    };
  }
  const bundled = path.join(search.extensionPath, 'bin', ADAPTER_NAME);
  if (isExecutableFile(bundled)) {
    return { ok: true, path: bundled };
  }
  for (const dir of (search.envPath ?? '').split(path.delimiter)) {
    if (dir !== '' && isExecutableFile(path.join(dir, ADAPTER_NAME))) {
      return { ok: true, path: path.join(dir, ADAPTER_NAME) };
    }
  }
  return {
    ok: false,
    message:
      `The neural-dap adapter was not found: it is not bundled (${bundled}) and not on PATH. ` +
      'Build it with cargo build --release -p neural-dap and set neural.adapterPath to target/release/neural-dap.',
  };
}
