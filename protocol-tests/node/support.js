// Shared set-up for the conformance suite: which adapter, which engine, the test
// programs and small helpers over DebugClient.
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

// NEURAL_DAP: the adapter binary (default: the release build CI makes).
const ADAPTER = path.resolve(process.env.NEURAL_DAP || path.join(__dirname, '..', '..', 'target', 'release', 'neural-dap'));
// NEURAL_DAP_ENGINE: "trace" (exact, needs python3) or "neural" (needs a checkpoint).
const ENGINE = process.env.NEURAL_DAP_ENGINE || 'trace';
// NEURAL_DAP_MODEL: checkpoint directory for the neural engine (launch argument `model`).
const MODEL = process.env.NEURAL_DAP_MODEL || '';
// The neural engine on a CPU can take seconds per step; the trace engine answers at once.
const TIMEOUT_MS = Number(process.env.NEURAL_DAP_TIMEOUT_MS || (ENGINE === 'neural' ? 60000 : 5000));

const PROGRAMS = path.join(__dirname, 'programs');

/** Absolute, symlink-free path of a test program, as the adapter should echo it. */
function program(name) {
  return fs.realpathSync(path.join(PROGRAMS, name));
}

/** Launch arguments for this run's engine. */
function launchArgs(programPath, extra = {}) {
  const args = { program: programPath, engine: ENGINE, ...extra };
  if (ENGINE === 'neural' && MODEL !== '') {
    args.model = MODEL;
  }
  return args;
}

/**
 * A started DebugClient on a fresh adapter process over stdio.
 * DebugClient spawns `runtime executable`: the adapter is the runtime and its one
 * argument is `executable`, so pass a harmless flag there rather than an empty string.
 */
async function startClient() {
  if (!fs.existsSync(ADAPTER)) {
    throw new Error(`neural-dap not found at ${ADAPTER}: build it (cargo build --release -p neural-dap) or set NEURAL_DAP to its path`);
  }
  const arg = process.env.NEURAL_DAP_ARG ?? '--log-level=info';
  const dc = new DebugClient(ADAPTER, arg, 'neural', {}, process.env.NEURAL_DAP_STDERR === '1');
  dc.defaultTimeout = TIMEOUT_MS;
  await dc.start();
  // DebugClient ignores the adapter's exit; say so, or a crash reads as a hang.
  // eslint-disable-next-line no-underscore-dangle
  const child = dc._adapterProcess;
  // A write after the adapter has gone (the disconnect in stopClient) must fail that
  // request, not the whole run with an uncaught EPIPE.
  child.stdin.on('error', () => {});
  child.once('exit', (code, signal) => {
    dc.exited = true;
    if (!dc.stopping) {
      console.error(`neural-dap exited during the test (code ${code}, signal ${signal}); NEURAL_DAP_STDERR=1 shows its log`);
    }
  });
  return dc;
}

/** Sets breakpoints on one file and checks each was verified on the line asked for. */
async function setBreakpoints(dc, file, lines) {
  const response = await dc.setBreakpointsRequest({
    source: { path: file },
    breakpoints: lines.map((line) => ({ line })),
    lines,
  });
  assert.equal(response.body.breakpoints.length, lines.length);
  response.body.breakpoints.forEach((bp, i) => {
    assert.equal(bp.verified, true, `breakpoint on line ${lines[i]} not verified: ${bp.message || ''}`);
    assert.equal(bp.line, lines[i]);
  });
  return response;
}

/**
 * initialize, launch, then after `initialized`: breakpoints and configurationDone,
 * the order VS Code uses. Resolves with the first stopped location.
 */
async function launchAndStop(dc, launch, { breakpoints = {}, reason, line }) {
  const [, , stopped] = await Promise.all([
    dc.waitForEvent('initialized').then(async () => {
      for (const [file, lines] of Object.entries(breakpoints)) {
        await setBreakpoints(dc, file, lines);
      }
      return dc.configurationDoneRequest();
    }),
    dc.launch(launch),
    dc.assertStoppedLocation(reason, { path: launch.program, line }),
  ]);
  return stopped;
}

/** Sends a step-like request and checks where it stops (listener registered first). */
async function stepAndAssert(dc, request, reason, expected) {
  const [, stack] = await Promise.all([request, dc.assertStoppedLocation(reason, expected)]);
  return stack;
}

/** name -> value of every variable in every scope of the top frame. */
async function topFrameVariables(dc, stack) {
  const frameId = stack.body.stackFrames[0].id;
  const scopes = await dc.scopesRequest({ frameId });
  const values = {};
  for (const scope of scopes.body.scopes) {
    const vars = await dc.variablesRequest({ variablesReference: scope.variablesReference });
    for (const v of vars.body.variables) {
      if (!(v.name in values)) {
        values[v.name] = v.value;
      }
    }
  }
  return values;
}

/** Stops the adapter; never lets a failing disconnect hide the test's own error. */
async function stopClient(dc) {
  if (dc) {
    dc.stopping = true;
    if (dc.exited) {
      dc.stopAdapter();
    } else {
      // DebugClient waits for the disconnect answer without a limit; don't hang on it.
      let timer;
      await Promise.race([dc.stop(), new Promise((resolve) => { timer = setTimeout(resolve, 3000); })]);
      clearTimeout(timer);
      dc.stopAdapter();
    }
  }
}

module.exports = {
  ADAPTER, ENGINE, TIMEOUT_MS, program, launchArgs, startClient, setBreakpoints,
  launchAndStop, stepAndAssert, topFrameVariables, stopClient,
};
