// resolveAdapter: the setting wins, then the bundled binary, then PATH; a clear
// message otherwise. Needs the compiled output (npm run build).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { resolveAdapter, ADAPTER_NAME } = require('../out/adapterPath.js');

function tempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'neural-vscode-'));
}

function fakeAdapter(dir, mode = 0o755) {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, ADAPTER_NAME);
  fs.writeFileSync(file, '#!/bin/sh\n');
  fs.chmodSync(file, mode);
  return file;
}

test('an explicit setting is used, relative to the workspace folder', () => {
  const ws = tempDir();
  const file = fakeAdapter(path.join(ws, 'target', 'release'));
  assert.deepEqual(resolveAdapter({ configured: file, extensionPath: tempDir() }), { ok: true, path: file });
  assert.deepEqual(resolveAdapter({ configured: 'target/release/neural-dap', extensionPath: tempDir(), baseDir: ws }), { ok: true, path: file });
});

test('a setting that points nowhere is an error, not a silent fallback', () => {
  const ext = tempDir();
  fakeAdapter(path.join(ext, 'bin'));
  const result = resolveAdapter({ configured: '/nonexistent/neural-dap', extensionPath: ext });
  assert.equal(result.ok, false);
  assert.match(result.message, /neural\.adapterPath/);
  assert.match(result.message, /\/nonexistent\/neural-dap/);
});

test('a non-executable file is refused', () => {
  const dir = tempDir();
  const file = fakeAdapter(dir, 0o644);
  assert.equal(resolveAdapter({ configured: file, extensionPath: tempDir() }).ok, false);
});

test('the bundled binary comes before PATH', () => {
  const ext = tempDir();
  const bundled = fakeAdapter(path.join(ext, 'bin'));
  const onPath = tempDir();
  fakeAdapter(onPath);
  assert.deepEqual(resolveAdapter({ configured: '', extensionPath: ext, envPath: onPath }), { ok: true, path: bundled });
});

test('PATH is searched last', () => {
  const onPath = tempDir();
  const file = fakeAdapter(onPath);
  const envPath = ['/nonexistent', onPath].join(path.delimiter);
  assert.deepEqual(resolveAdapter({ configured: '  ', extensionPath: tempDir(), envPath }), { ok: true, path: file });
});

test('nothing found: the message says how to build and configure it', () => {
  const result = resolveAdapter({ configured: '', extensionPath: tempDir(), envPath: '' });
  assert.equal(result.ok, false);
  assert.match(result.message, /cargo build --release -p neural-dap/);
  assert.match(result.message, /neural\.adapterPath/);
});
