// External DAP conformance of neural-dap, driven by VS Code's own test client
// (@vscode/debugadapter-testsupport). Line numbers refer to programs/*.py.
'use strict';
const { describe, it, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const {
  ENGINE, TIMEOUT_MS, program, launchArgs, startClient, setBreakpoints,
  launchAndStop, stepAndAssert, topFrameVariables, stopClient,
} = require('../support');

const CALLS = program('calls.py');
const LOOP = program('loop.py');
const THREAD = { threadId: 1 };

describe(`neural-dap conformance (engine ${ENGINE})`, { timeout: TIMEOUT_MS * 10 }, () => {
  let dc;
  beforeEach(async () => {
    dc = await startClient();
  });
  afterEach(async () => {
    await stopClient(dc);
    dc = undefined;
  });

  it('initialize advertises configurationDone, step back and the exception filters', async () => {
    const response = await dc.initializeRequest();
    const caps = response.body;
    assert.equal(caps.supportsConfigurationDoneRequest, true);
    assert.equal(caps.supportsStepBack, true);
    assert.deepEqual((caps.exceptionBreakpointFilters || []).map((f) => f.filter).sort(), ['raised', 'uncaught']);
  });

  it('launch stops on entry at the first line', async () => {
    await launchAndStop(dc, launchArgs(CALLS), { reason: 'entry', line: 1 });
  });

  it('hitBreakpoint: a breakpoint inside a function is hit', async () => {
    await dc.hitBreakpoint(launchArgs(CALLS, { stopOnEntry: false }), { path: CALLS, line: 7 });
  });

  it('next steps over a call; stepBack returns to the same state', async () => {
    const atBp = await launchAndStop(dc, launchArgs(CALLS, { stopOnEntry: false }), {
      breakpoints: { [CALLS]: [7] }, reason: 'breakpoint', line: 7,
    });
    const before = await topFrameVariables(dc, atBp);
    assert.equal(before.x, '3');
    assert.equal('y' in before, false);

    const afterNext = await stepAndAssert(dc, dc.nextRequest(THREAD), 'step', { path: CALLS, line: 8 });
    assert.equal((await topFrameVariables(dc, afterNext)).y, '6');

    const back = await stepAndAssert(dc, dc.stepBackRequest(THREAD), 'step', { path: CALLS, line: 7 });
    assert.deepEqual(await topFrameVariables(dc, back), before);

    const again = await stepAndAssert(dc, dc.nextRequest(THREAD), 'step', { path: CALLS, line: 8 });
    assert.deepEqual(await topFrameVariables(dc, again), await topFrameVariables(dc, afterNext));
  });

  it('stepIn enters the callee; stepOut returns to the caller', async () => {
    await launchAndStop(dc, launchArgs(CALLS, { stopOnEntry: false }), {
      breakpoints: { [CALLS]: [7] }, reason: 'breakpoint', line: 7,
    });
    const inAdd = await stepAndAssert(dc, dc.stepInRequest(THREAD), 'step', { path: CALLS });
    const frames = inAdd.body.stackFrames;
    assert.equal(frames[0].name, 'add');
    assert.ok([1, 2].includes(frames[0].line), `stepIn stopped on line ${frames[0].line}, not the def or first line of add`);
    assert.deepEqual(frames.slice(1).map((f) => [f.name, f.line]), [['twice', 7], ['<module>', 12]]);
    const args = await topFrameVariables(dc, inAdd);
    assert.equal(args.a, '3');
    assert.equal(args.b, '3');

    const out = await stepAndAssert(dc, dc.stepOutRequest(THREAD), 'step', { path: CALLS });
    assert.equal(out.body.stackFrames[0].name, 'twice');
    assert.ok([7, 8].includes(out.body.stackFrames[0].line), `stepOut stopped on line ${out.body.stackFrames[0].line}`);
  });

  it('continue runs to the next breakpoint, then to the end', async () => {
    await launchAndStop(dc, launchArgs(CALLS, { stopOnEntry: false }), {
      breakpoints: { [CALLS]: [2, 13] }, reason: 'breakpoint', line: 2,
    });
    await stepAndAssert(dc, dc.continueRequest(THREAD), 'breakpoint', { path: CALLS, line: 13 });
    await Promise.all([dc.continueRequest(THREAD), dc.waitForEvent('terminated')]);
  });

  it('reverseContinue goes back through earlier hits of a loop, then to the entry', async () => {
    const hit = (k) => async (stack) => assert.equal((await topFrameVariables(dc, stack)).k, String(k));
    await launchAndStop(dc, launchArgs(LOOP, { stopOnEntry: false }), {
      breakpoints: { [LOOP]: [7] }, reason: 'breakpoint', line: 7,
    }).then(hit(0));
    await stepAndAssert(dc, dc.continueRequest(THREAD), 'breakpoint', { path: LOOP, line: 7 }).then(hit(1));
    await stepAndAssert(dc, dc.continueRequest(THREAD), 'breakpoint', { path: LOOP, line: 7 }).then(hit(2));
    await stepAndAssert(dc, dc.reverseContinueRequest(THREAD), 'breakpoint', { path: LOOP, line: 7 }).then(hit(1));
    await stepAndAssert(dc, dc.reverseContinueRequest(THREAD), 'breakpoint', { path: LOOP, line: 7 }).then(hit(0));
    await stepAndAssert(dc, dc.reverseContinueRequest(THREAD), 'entry', { path: LOOP, line: 1 });
  });

  it('stepBack with statement granularity steps over a call backwards', async () => {
    await launchAndStop(dc, launchArgs(LOOP, { stopOnEntry: false }), {
      breakpoints: { [LOOP]: [6] }, reason: 'breakpoint', line: 6,
    });
    await stepAndAssert(dc, dc.continueRequest(THREAD), 'breakpoint', { path: LOOP, line: 6 });
    // Back from the loop header of iteration 2 lands on line 7 of iteration 1, not inside square().
    const back = await stepAndAssert(dc, dc.stepBackRequest({ threadId: 1, granularity: 'statement' }), 'step', { path: LOOP, line: 7 });
    assert.equal(back.body.stackFrames[0].name, '<module>');
    assert.equal((await topFrameVariables(dc, back)).k, '0');
  });

  it('an unknown request is rejected and the session goes on', async () => {
    await launchAndStop(dc, launchArgs(CALLS), { reason: 'entry', line: 1 });
    await assert.rejects(dc.customRequest('neuralNoSuchRequest', { x: 1 }));
    const threads = await dc.threadsRequest();
    assert.equal(threads.body.threads.length, 1);
  });

  it('setBreakpoints before launch reports verified lines', async () => {
    // Listen first: `initialized` may arrive in the same read as the initialize response.
    const initialized = dc.waitForEvent('initialized');
    await dc.initializeRequest();
    await Promise.all([
      initialized.then(() => setBreakpoints(dc, CALLS, [2, 7])),
      dc.launchRequest(launchArgs(CALLS)),
    ]);
  });
});
