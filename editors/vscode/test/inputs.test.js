// The rows of the "Which inputs give this?" quick pick, from the adapter's candidates.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { rows } = require('../out/inputs.js');

test('a candidate shows its call, probability and what Python said', () => {
  const [checked, nested, exact] = rows([
    { function: 'fib', line: 2, arguments: [{ name: 'n', value: '3' }], call: 'fib(3)', probability: 0.43, reproduces: true, note: null },
    { function: 'inner', line: 2, arguments: [{ name: 'x', value: '0' }], call: null, probability: 0.00002, reproduces: null, note: 'not checked: inner is a nested function' },
    { function: 'fib', line: 2, arguments: [{ name: 'n', value: '5' }], call: 'fib(5)', probability: null, reproduces: false, note: 'under Python, fib(5) never reaches this state' },
  ]);
  assert.deepEqual(checked, { label: 'fib(3)', description: 'p=0.43', detail: '$(check) reproduces this state under Python', call: 'fib(3)' });
  assert.deepEqual(nested, { label: 'inner(x=0)', description: 'p=2.0e-5', detail: 'not checked: inner is a nested function', call: null });
  assert.equal(exact.description, 'exact');
  assert.equal(exact.detail, 'under Python, fib(5) never reaches this state');
});
