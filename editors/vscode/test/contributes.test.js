// Checks the debug contributions in package.json the way VS Code would, since
// `vsce package` does not: the extension-point schema, then every launch configuration
// we ship (initial ones and snippet bodies) against our own configurationAttributes.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const Ajv = require('ajv');

const root = path.join(__dirname, '..');
const manifest = require(path.join(root, 'package.json'));
const extPointSchema = require(path.join(root, 'schema', 'debug-contributions.schema.json'));

// The launch arguments neural-dap reads (adapter issue); each must be declared.
const ADAPTER_LAUNCH_ARGS = ['program', 'engine', 'stopOnEntry', 'call', 'args', 'cwd', 'model', 'verify', 'search'];
// Keys VS Code itself adds to every configuration.
const VSCODE_CONFIG_KEYS = { type: { const: 'neural' }, request: { const: 'launch' }, name: { type: 'string', minLength: 1 } };

function newAjv() {
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  // VS Code's additions to JSON Schema, used in configurationAttributes.
  ajv.addVocabulary(['enumDescriptions', 'markdownDescription', 'deprecationMessage', 'defaultSnippets']);
  return ajv;
}

function errorsOf(validate) {
  return newAjv().errorsText(validate.errors, { separator: '\n' });
}

const debuggers = manifest.contributes.debuggers;
const neural = debuggers.find((d) => d.type === 'neural');
const launch = neural && neural.configurationAttributes && neural.configurationAttributes.launch;

// Snippet text as the user gets it: ${1:text} placeholders filled with `text`, \$
// unescaped.
function expandSnippetText(text) {
  return text.replace(/\$\{\d+:([^}]*)\}/g, '$1').replace(/\\\$/g, '$');
}

// A snippet body is stringified and inserted as a snippet; a string value that
// starts with ^ is spliced in as raw JSON text (how "\${file}" reaches launch.json
// as "${file}" instead of becoming a snippet variable).
function expandSnippetValue(value) {
  if (typeof value === 'string') {
    return value.startsWith('^') ? JSON.parse(expandSnippetText(value.slice(1))) : expandSnippetText(value);
  }
  if (Array.isArray(value)) {
    return value.map(expandSnippetValue);
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandSnippetValue(v)]));
  }
  return value;
}

// The launch schema plus VS Code's own keys, closed so that a misspelt argument fails.
function closedLaunchSchema() {
  return {
    type: 'object',
    required: [...new Set(['type', 'request', 'name', ...(launch.required || [])])],
    properties: { ...VSCODE_CONFIG_KEYS, ...launch.properties },
    additionalProperties: false,
  };
}

test('contributes.debuggers and contributes.breakpoints satisfy VS Code extension-point schema', () => {
  const validate = newAjv().compile(extPointSchema);
  const ok = validate({ debuggers: manifest.contributes.debuggers, breakpoints: manifest.contributes.breakpoints });
  assert.ok(ok, errorsOf(validate));
});

test('the schema rejects a key VS Code does not allow (the check can fail)', () => {
  const validate = newAjv().compile(extPointSchema);
  assert.equal(validate({ debuggers: [{ ...neural, adapterExecutableCommand: 'x' }] }), false);
  assert.equal(validate({ debuggers: [{ ...neural, enableBreakpointsFor: { languageIds: ['python'] } }] }), false);
});

test('debugger type, label, languages and python breakpoints', () => {
  assert.ok(neural, 'no debugger of type "neural"');
  assert.equal(neural.label, 'Neural Python Debugger');
  assert.deepEqual(neural.languages, ['python']);
  assert.ok(manifest.contributes.breakpoints.some((b) => b.language === 'python'), 'breakpoints not enabled for python');
});

test('configurationAttributes.launch is a valid JSON Schema declaring every adapter launch argument', () => {
  assert.ok(launch, 'configurationAttributes.launch missing');
  newAjv().compile({ type: 'object', ...launch }); // VS Code nests it inside an object schema
  assert.deepEqual(launch.required, ['program']);
  for (const arg of ADAPTER_LAUNCH_ARGS) {
    const prop = launch.properties[arg];
    assert.ok(prop, `launch argument "${arg}" is not declared`);
    assert.ok(typeof prop.description === 'string' && prop.description.length > 10, `"${arg}" has no description`);
  }
  assert.deepEqual(Object.keys(launch.properties).sort(), [...ADAPTER_LAUNCH_ARGS].sort(), 'declared arguments the adapter does not read');
});

test('every declared default satisfies its own property schema', () => {
  for (const [name, prop] of Object.entries(launch.properties)) {
    if (!('default' in prop)) {
      continue;
    }
    const { default: value, ...schema } = prop;
    const validate = newAjv().compile(schema);
    assert.ok(validate(value), `default of "${name}": ${errorsOf(validate)}`);
  }
  assert.equal(launch.properties.engine.default, 'neural');
  assert.equal(launch.properties.stopOnEntry.default, true);
});

test('every initial configuration satisfies configurationAttributes.launch', () => {
  assert.ok(Array.isArray(neural.initialConfigurations) && neural.initialConfigurations.length > 0);
  const validate = newAjv().compile(closedLaunchSchema());
  for (const config of neural.initialConfigurations) {
    assert.ok(validate(config), `initial configuration "${config.name}": ${errorsOf(validate)}`);
  }
});

test('the three snippets exist and every snippet body satisfies configurationAttributes.launch', () => {
  const labels = neural.configurationSnippets.map((s) => s.label);
  assert.deepEqual(labels, ['Neural: current file', 'Neural: debug a call', 'Neural: verify against Python']);
  const validate = newAjv().compile(closedLaunchSchema());
  for (const snippet of neural.configurationSnippets) {
    const body = expandSnippetValue(snippet.body);
    assert.ok(validate(body), `snippet "${snippet.label}": ${errorsOf(validate)}`);
    assert.equal(body.program, '${file}');
  }
  const call = expandSnippetValue(neural.configurationSnippets[1].body);
  assert.equal(call.call, 'f([1, 2])');
  assert.equal(expandSnippetValue(neural.configurationSnippets[2].body).verify, true);
});

test('a misspelt or mistyped argument is rejected (the check can fail)', () => {
  const validate = newAjv().compile(closedLaunchSchema());
  const good = expandSnippetValue(neural.configurationSnippets[0].body);
  assert.equal(validate({ ...good, stopOnentry: true }), false);
  assert.equal(validate({ ...good, engine: 'python' }), false);
  assert.equal(validate({ ...good, args: 'a b' }), false);
  const { program, ...noProgram } = good;
  assert.equal(validate(noProgram), false);
});

test('the adapterPath setting is declared', () => {
  const setting = manifest.contributes.configuration.properties['neural.adapterPath'];
  assert.ok(setting);
  assert.equal(setting.type, 'string');
  assert.equal(setting.default, '');
});
