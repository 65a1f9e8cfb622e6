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

// Under the neural engine each stop after the entry is the model's prediction. A test
// that needs a predicted stop to be exactly right checks, in the neural run, what the
// protocol promises whatever the model says (see `predicted`); NEURAL_DAP_EXACT=1
// makes the neural run check every location and value as the trace run does.
const EXACT = ENGINE !== 'neural' || process.env.NEURAL_DAP_EXACT === '1';

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
  // The entry is worked out from the source; any other first stop is predicted.
  const atEntry = reason === 'entry' && launch.stopOnEntry !== false;
  const stop = EXACT || atEntry
    ? dc.assertStoppedLocation(reason, { path: launch.program, line })
    : predictedStop(dc, Promise.resolve(), launch.program);
  const [, , stopped] = await Promise.all([
    dc.waitForEvent('initialized').then(async () => {
      for (const [file, lines] of Object.entries(breakpoints)) {
        await setBreakpoints(dc, file, lines);
      }
      return dc.configurationDoneRequest();
    }),
    dc.launch(launch),
    stop,
  ]);
  return stopped;
}

/** Sends a step-like request and checks where it stops (listener registered first). */
async function stepAndAssert(dc, request, reason, expected) {
  if (!EXACT) {
    return predictedStop(dc, request, expected.path);
  }
  const [, stack] = await Promise.all([request, dc.assertStoppedLocation(reason, expected)]);
  return stack;
}

/**
 * The first `stopped` or `terminated` event from now on; `cancel` stops listening.
 * Registered before the caller awaits anything, so the event cannot slip past.
 */
function nextStopOrEnd(dc) {
  let cancel;
  const promise = new Promise((resolve, reject) => {
    const timer = setTimeout(() => { cancel(); reject(new Error(`no stopped or terminated event within ${TIMEOUT_MS} ms`)); }, TIMEOUT_MS);
    const onStopped = (event) => { cancel(); resolve(event); };
    const onTerminated = (event) => { cancel(); resolve(event); };
    cancel = () => {
      clearTimeout(timer);
      dc.removeListener('stopped', onStopped);
      dc.removeListener('terminated', onTerminated);
    };
    dc.on('stopped', onStopped);
    dc.on('terminated', onTerminated);
  });
  return { promise, cancel: () => cancel() };
}

/**
 * What the protocol promises for a move the model predicts, whatever it predicts: the
 * request is answered; if it succeeded, a `stopped` event (a stack in `programPath`)
 * or the end follows; if it failed, it says why and the session still answers.
 * Resolves with the stack trace at the stop, or null when the program ended.
 */
async function predictedStop(dc, request, programPath) {
  const next = nextStopOrEnd(dc);
  try {
    await request;
  } catch (error) {
    next.cancel();
    assert.ok(String(error.message || error).trim() !== '', 'a refused move says why');
    const threads = await dc.threadsRequest();
    assert.equal(threads.body.threads.length, 1, 'the session goes on after a refused move');
    // Still stopped where it was, or (a move after the end) no longer stopped at all.
    return dc.stackTraceRequest({ threadId: 1 }).catch(() => null);
  }
  const event = await next.promise;
  if (event.event === 'terminated') {
    return null;
  }
  assert.ok(['step', 'breakpoint', 'entry', 'exception'].includes(event.body.reason), `stop reason ${event.body.reason}`);
  const stack = await dc.stackTraceRequest({ threadId: 1 });
  assert.ok(stack.body.stackFrames.length >= 1, 'a stop has a stack');
  if (programPath) {
    assert.equal(stack.body.stackFrames[0].source.path, programPath);
  }
  return stack;
}

/** Runs `check` where predicted stops must be exact (the trace run, NEURAL_DAP_EXACT=1). */
async function exact(check) {
  if (EXACT) {
    await check();
  }
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
  ADAPTER, ENGINE, EXACT, TIMEOUT_MS, program, launchArgs, startClient, setBreakpoints,
  launchAndStop, stepAndAssert, predictedStop, exact, topFrameVariables, stopClient,
};
