// Step latency as an editor sees it, for neural-dap's engines and for debugpy, on the
// same program through the same DAP client, in one run. Each step is what an editor
// sends after Step Into: the stepIn request until its `stopped` event, then the
// stackTrace, scopes and variables of the top frame. Prints a Markdown table.
//
//   node bench-steps.js [program.py] [steps]     (default: programs/loop.py, 20 steps)
//
// NEURAL_DAP names the adapter (default: the release build); NEURAL_DAP_MODEL a
// checkpoint for the neural engine (default: the shipped one); debugpy is found with
// python3 -c "import debugpy" and skipped if missing.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const ADAPTER = path.resolve(process.env.NEURAL_DAP || path.join(__dirname, '..', '..', 'target', 'release', 'neural-dap'));
const PROGRAM = fs.realpathSync(process.argv[2] || path.join(__dirname, 'programs', 'loop.py'));
const STEPS = Number(process.argv[3] || 20);
const PYTHON = process.env.PYTHON || 'python3';

function debugpyAdapter() {
  try {
    const dir = execFileSync(PYTHON, ['-c', 'import debugpy, os; print(os.path.dirname(debugpy.__file__))'], { encoding: 'utf8' }).trim();
    return path.join(dir, 'adapter');
  } catch {
    return null;
  }
}

async function session(name, runtime, executable, type, launch) {
  const dc = new DebugClient(runtime, executable, type, {}, false);
  dc.defaultTimeout = 120000;
  await dc.start();
  dc._adapterProcess.stdin.on('error', () => {});
  const started = process.hrtime.bigint();
  // Listen before asking: `initialized` may follow the initialize answer at once.
  const initialized = dc.waitForEvent('initialized');
  const stopped = dc.waitForEvent('stopped');
  await dc.initializeRequest({ adapterID: type, linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
  // debugpy answers launch only after configurationDone: send that on `initialized`.
  const launched = dc.launchRequest(launch);
  await initialized;
  await dc.configurationDoneRequest();
  await launched;
  const stop = await stopped;
  const launchMs = Number(process.hrtime.bigint() - started) / 1e6;
  let threadId = stop.body.threadId || 1;
  const terminated = dc.waitForEvent('terminated').then(() => null, () => null);
  const times = [];
  for (let i = 0; i < STEPS; i++) {
    const t0 = process.hrtime.bigint();
    const next = Promise.race([dc.waitForEvent('stopped').catch(() => null), terminated]);
    await dc.stepInRequest({ threadId });
    const event = await next;
    if (event === null) break;
    threadId = event.body.threadId || threadId;
    const stack = await dc.stackTraceRequest({ threadId, startFrame: 0, levels: 20 });
    const scopes = await dc.scopesRequest({ frameId: stack.body.stackFrames[0].id });
    for (const scope of scopes.body.scopes.filter((s) => !s.expensive)) {
      await dc.variablesRequest({ variablesReference: scope.variablesReference });
    }
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  // DebugClient waits for the disconnect answer without a limit; don't hang on it.
  let timer;
  await Promise.race([dc.stop().catch(() => {}), new Promise((resolve) => { timer = setTimeout(resolve, 3000); })]);
  clearTimeout(timer);
  dc.stopAdapter();
  return { name, launchMs, times };
}

function percentile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.round((sorted.length - 1) * q)];
}

async function main() {
  const rows = [];
  const neural = { type: 'neural', request: 'launch', program: PROGRAM, stopOnEntry: true };
  if (process.env.NEURAL_DAP_MODEL) neural.model = process.env.NEURAL_DAP_MODEL;
  rows.push(await session('neural-dap, neural engine', ADAPTER, '--log-level=warn', 'neural', { ...neural, engine: 'neural' }));
  rows.push(await session('neural-dap, trace engine', ADAPTER, '--log-level=warn', 'neural', { ...neural, engine: 'trace' }));
  const debugpy = debugpyAdapter();
  if (debugpy) {
    rows.push(await session('debugpy', PYTHON, debugpy, 'python', {
      type: 'python', request: 'launch', program: PROGRAM, stopOnEntry: true, console: 'internalConsole', justMyCode: true,
    }));
  } else {
    console.error('debugpy not found (pip install debugpy): its row is left out');
  }
  console.log(`program: ${path.basename(PROGRAM)}, ${STEPS} Step Into requests, each with stackTrace, scopes and variables`);
  console.log('');
  console.log('| adapter | launch to first stop ms | step ms p50 | step ms p95 | steps |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.name} | ${r.launchMs.toFixed(0)} | ${percentile(r.times, 0.5).toFixed(1)} | ${percentile(r.times, 0.95).toFixed(1)} | ${r.times.length} |`);
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
