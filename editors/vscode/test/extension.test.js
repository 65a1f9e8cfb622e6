// activate() with a stand-in for the `vscode` module (VS Code itself cannot run here):
// it registers a descriptor factory for "neural" that starts the resolved adapter, or
// refuses with the resolver's message.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Module = require('node:module');

function fakeVscode(settings) {
  const registered = {};
  class DebugAdapterExecutable {
    constructor(command, args) {
      this.command = command;
      this.args = args;
    }
  }
  return {
    registered,
    DebugAdapterExecutable,
    debug: {
      registerDebugAdapterDescriptorFactory(type, factory) {
        registered[type] = factory;
        return { dispose() {} };
      },
    },
    commands: {
      registerCommand(name, handler) {
        registered[`command:${name}`] = handler;
        return { dispose() {} };
      },
    },
    workspace: {
      getConfiguration(section) {
        assert.equal(section, 'neural');
        return { get: (key, fallback) => (key in settings ? settings[key] : fallback) };
      },
    },
  };
}

function loadExtension(vscode) {
  const original = Module._load;
  Module._load = function load(request, ...rest) {
    return request === 'vscode' ? vscode : original.call(this, request, ...rest);
  };
  try {
    const file = require.resolve('../out/extension.js');
    delete require.cache[file];
    return require(file);
  } finally {
    Module._load = original;
  }
}

function activate(settings, extensionPath) {
  const vscode = fakeVscode(settings);
  const context = { extensionPath, subscriptions: [] };
  loadExtension(vscode).activate(context);
  assert.equal(context.subscriptions.length, 2);
  assert.equal(typeof vscode.registered['command:neural.whichInputs'], 'function');
  return vscode.registered.neural;
}

const session = { workspaceFolder: undefined };

test('the factory starts the adapter named by neural.adapterPath', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neural-ext-'));
  const adapter = path.join(dir, 'neural-dap');
  fs.writeFileSync(adapter, '#!/bin/sh\n');
  fs.chmodSync(adapter, 0o755);
  const factory = activate({ adapterPath: adapter }, dir);
  assert.ok(factory, 'no factory registered for type "neural"');
  const descriptor = factory.createDebugAdapterDescriptor(session);
  assert.equal(descriptor.command, adapter);
  assert.deepEqual(descriptor.args, []);
  const logged = activate({ adapterPath: adapter, adapterArgs: ['--log', '/tmp/x.log'] }, dir);
  assert.deepEqual(logged.createDebugAdapterDescriptor(session).args, ['--log', '/tmp/x.log']);
});

test('the factory uses the bundled bin/neural-dap when the setting is empty', () => {
  const ext = fs.mkdtempSync(path.join(os.tmpdir(), 'neural-ext-'));
  fs.mkdirSync(path.join(ext, 'bin'));
  const bundled = path.join(ext, 'bin', 'neural-dap');
  fs.writeFileSync(bundled, '#!/bin/sh\n');
  fs.chmodSync(bundled, 0o755);
  const descriptor = activate({}, ext).createDebugAdapterDescriptor(session);
  assert.equal(descriptor.command, bundled);
});

test('a missing adapter stops the launch with a message that says what to do', () => {
  const factory = activate({ adapterPath: '/nonexistent/neural-dap' }, os.tmpdir());
  assert.throws(() => factory.createDebugAdapterDescriptor(session), /neural\.adapterPath.*\/nonexistent\/neural-dap|\/nonexistent\/neural-dap.*cargo build/s);
});
