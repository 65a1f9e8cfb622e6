// The VS Code end-to-end test: the packaged .vsix in a real VS Code (code-server's web
// workbench) driven through chromium by playwright-core. With each engine it debugs
// workspace/fibs.py as a user would: Call Stack, Variables (a list expanded, the
// Prediction scope), Step Over/Into/Out, a breakpoint clicked in the gutter, Continue,
// Step Back, Reverse, Stop. Nothing waits a fixed time: the adapter logs every message
// it sends, the log says when a stop happened and what was sent, and the page must then
// show it. Prints "N passed, N failed" last.
// Usage (run.sh installs the tools and clears PATH of neural-dap):
//   node test.mjs TOOLS VSIX ARTIFACTS
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [tools, vsix, artifacts] = process.argv.slice(2);
const { chromium } = createRequire(`${tools}/playwright/`)('playwright-core');
const codeServer = `${tools}/code-server/node_modules/code-server/out/node/entry.js`;
const program = path.join(path.dirname(fileURLToPath(import.meta.url)), 'workspace', 'fibs.py');
const WAIT = 120_000; // generous: CI machines are small and busy

let passed = 0;
let failed = 0;
async function check(name, body) {
  try {
    await body();
    passed++;
    console.log(`ok - ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok - ${name}\n  ${String(e.message).split('\n').join('\n  ')}`);
    throw e; // the steps after it depend on it
  }
}
function expect(ok, message) {
  if (!ok) throw new Error(message);
}
async function until(what, probe, timeout = WAIT) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100)); // a poll, not a wait for time
  }
}

// ---- The adapter's log: "request seq=N command=X" and "send {json}" lines.
function logLines(log) {
  const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
  return text.split('\n').slice(0, -1); // the last piece may be half written
}
const sent = (log) =>
  logLines(log).flatMap((line) => {
    const at = line.indexOf(' send {');
    return at < 0 ? [] : [JSON.parse(line.slice(at + 6))];
  });
const requested = (log) => logLines(log).flatMap((line) => line.match(/ request seq=\d+ command=(\w+)/)?.slice(1) ?? []);
const isEvent = (name) => (m) => m.type === 'event' && m.event === name;

// ---- Set-up: a copy of the package away from the checkout, a fresh code-server.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'neural-vscode-e2e-'));
fs.rmSync(artifacts, { recursive: true, force: true });
fs.mkdirSync(artifacts, { recursive: true });
const env = { ...process.env, XDG_CONFIG_HOME: `${tmp}/xdg`, XDG_DATA_HOME: `${tmp}/xdg`, XDG_CACHE_HOME: `${tmp}/xdg` };
const userDir = `${tmp}/user`;
const extDir = `${tmp}/extensions`;
const pkg = `${tmp}/package/${path.basename(vsix)}`;
fs.mkdirSync(path.dirname(pkg));
fs.copyFileSync(vsix, pkg);
execFileSync(process.execPath, [codeServer, '--user-data-dir', userDir, '--extensions-dir', extDir, '--install-extension', pkg], {
  env,
  stdio: ['ignore', 'inherit', 'inherit'],
});
const installed = fs.readdirSync(extDir).find((name) => name.startsWith('neural-debugger.'));
const adapter = `${extDir}/${installed}/bin/neural-dap`;
// The adapter looks for the model next to itself first; the package must carry both.
for (const file of ['neural-dap', 'model/config.json', 'model/model.safetensors', 'model/tokenizer.json']) {
  if (!fs.existsSync(`${extDir}/${installed}/bin/${file}`)) throw new Error(`the installed extension has no bin/${file}`);
}
fs.mkdirSync(`${userDir}/User`, { recursive: true });
fs.writeFileSync(
  `${userDir}/User/settings.json`,
  JSON.stringify({
    'workbench.colorTheme': 'Default Dark Modern',
    'workbench.startupEditor': 'none',
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'chat.disableAIFeatures': true,
    'editor.minimap.enabled': false,
    'extensions.ignoreRecommendations': true,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
  }),
);

/** A folder with fibs.py and a launch.json of type neural; settings.json if given. */
function workspace(name, launch, settings) {
  const dir = `${tmp}/${name}`;
  fs.mkdirSync(`${dir}/.vscode`, { recursive: true });
  fs.copyFileSync(program, `${dir}/fibs.py`);
  const configuration = {
    type: 'neural',
    request: 'launch',
    name: `fibs.py (${name})`,
    program: '${workspaceFolder}/fibs.py',
    stopOnEntry: true,
    ...launch,
  };
  fs.writeFileSync(`${dir}/.vscode/launch.json`, JSON.stringify({ version: '0.2.0', configurations: [configuration] }, null, 2));
  if (settings) fs.writeFileSync(`${dir}/.vscode/settings.json`, JSON.stringify(settings, null, 2));
  return dir;
}

/** The bundled adapter behind a script that adds --log (README, "Seeing the protocol"). */
function loggingAdapter(engine) {
  const log = `${artifacts}/adapter-${engine}.log`;
  const script = `${tmp}/neural-dap-${engine}.sh`;
  fs.writeFileSync(script, `#!/bin/sh\nRUST_LOG=neural_dap=trace exec '${adapter}' --log '${log}' "$@"\n`, { mode: 0o755 });
  return { script, log };
}

/** Starts code-server on a free port of 127.0.0.1 and chromium; returns the URL. */
let server;
let browser;
async function start() {
  server = spawn(
    process.execPath,
    [
      codeServer,
      ...['--bind-addr', '127.0.0.1:0', '--auth', 'none', '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust'],
      ...['--user-data-dir', userDir, '--extensions-dir', extDir],
    ],
    { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }, // its own group: its extension hosts go with it
  );
  const serverLog = fs.createWriteStream(`${artifacts}/code-server.log`);
  server.stderr.pipe(serverLog);
  const url = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (data) => {
      serverLog.write(data);
      out += data;
      const found = out.match(/HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)\//);
      if (found) resolve(found[1]);
    });
    server.on('exit', (code) => reject(new Error(`code-server exited (${code}) before listening; see ${artifacts}/code-server.log`)));
  });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], env });
  return url;
}
let url;

// ---- The page.
const rows = (page, view) => page.locator(`.debug-${view} .monaco-list-row`);
// A CSS string: predicted values may hold quotes, backslashes, newlines.
const css = (text) => `"${text.replace(/["\\]/g, '\\$&').replace(/[\0-\x1f]/g, (c) => `\\${c.charCodeAt(0).toString(16)} `)}"`;
const row = (page, view, label) => page.locator(`.debug-${view} .monaco-list-row[aria-label=${css(label)}]`).first();
const button = (page, label) => page.locator(`.debug-toolbar .action-label[aria-label^="${label}"]`);

async function open(folder) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  page.setDefaultTimeout(WAIT);
  await page.goto(`${url}/?folder=${encodeURIComponent(folder)}`);
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'fibs.py' }).click();
  await page.locator('.part.editor .monaco-editor .view-line', { hasText: 'def fib' }).waitFor();
  await page.locator('.activitybar a[aria-label^="Run and Debug"]').click();
  return page;
}

/** Runs `action`, waits for the adapter to send its stop and for the page to show it. */
async function stopAfter(page, log, action) {
  const before = sent(log).filter(isEvent('stopped')).length;
  await action();
  const stop = await until('a stop in the adapter log', () => {
    const messages = sent(log);
    const stops = messages.flatMap((m, i) => (isEvent('stopped')(m) ? [i] : []));
    if (stops.length <= before) {
      expect(!messages.some(isEvent('terminated')), 'the program ended instead of stopping');
      return null;
    }
    const after = messages.slice(stops[before]);
    const trace = after.find((m) => m.type === 'response' && m.command === 'stackTrace');
    const scopes = after.findIndex((m) => m.type === 'response' && m.command === 'scopes');
    const variables = after.slice(scopes).filter((m) => m.type === 'response' && m.command === 'variables');
    return (
      trace &&
      scopes >= 0 &&
      variables.length > 0 && {
        ...after[0].body,
        frames: trace.body.stackFrames,
        total: trace.body.totalFrames ?? trace.body.stackFrames.length,
        variables: variables.flatMap((m) => m.body.variables),
      }
    );
  });
  const top = stop.frames[0];
  await row(page, 'call-stack', `Stack Frame ${top.name}, line ${top.line}, ${top.source.name}`).waitFor();
  await rows(page, 'call-stack').nth(stop.total - 1).waitFor();
  await page.locator('.call-stack-state-message', { hasText: stop.description ?? `Paused on ${stop.reason}` }).waitFor();
  // The first variable the adapter sent for this stop (at the top of the view: the
  // list only renders the rows in sight).
  const [first] = stop.variables;
  if (first) await row(page, 'variables', `${first.name}, value ${first.value}`).waitFor();
  return stop;
}
const click = (page, label) => () => button(page, label).click();

/** Expands a variable row; returns the labels of its children. */
async function expand(page, variable) {
  const label = await variable.getAttribute('aria-label');
  await variable.locator('.monaco-tl-twistie').click();
  return until(`the children of ${label}`, () =>
    rows(page, 'variables').evaluateAll((all, label) => {
      const ordered = all.sort((x, y) => x.dataset.index - y.dataset.index);
      const at = ordered.findIndex((e) => e.getAttribute('aria-label') === label);
      const level = (e) => Number(e.getAttribute('aria-level'));
      const children = [];
      for (const e of ordered.slice(at + 1)) {
        if (level(e) <= level(ordered[at])) break;
        children.push(e.getAttribute('aria-label'));
      }
      return children.length > 0 && children;
    }, label),
  );
}

/** Clicks the editor's gutter (glyph margin) beside a line. */
async function clickGutter(page, line) {
  const editor = page.locator('.part.editor .monaco-editor').first();
  const margin = await editor.locator('.glyph-margin').boundingBox();
  const number = await editor.locator('.line-numbers', { hasText: new RegExp(`^${line}$`) }).boundingBox();
  await page.mouse.click(margin.x + margin.width / 2, number.y + number.height / 2);
}

async function shot(page, name) {
  await page.screenshot({ path: `${artifacts}/${name}.png` });
}

/** One session: every action, what the page shows after it, what the adapter logged. */
async function session(engine) {
  const adapterLog = loggingAdapter(engine);
  const page = await open(workspace(engine, { engine }, { 'neural.adapterPath': adapterLog.script }));
  const log = adapterLog.log;
  const neural = engine === 'neural';
  const stops = [];
  const stepped = async (label) => stops.push(await stopAfter(page, log, click(page, label)));
  try {
    await check(`${engine}: Start Debugging stops on entry`, async () => {
      stops.push(await stopAfter(page, log, () => page.locator('.debug-start-action, [aria-label^="Start Debugging"]').first().click()));
      expect(stops[0].reason === 'entry', `stopped for ${stops[0].reason}`);
      await row(page, 'call-stack', 'Stack Frame <module>, line 2, fibs.py').waitFor();
      await button(page, 'Step Back').waitFor();
      await button(page, 'Reverse').waitFor();
    });

    await check(`${engine}: Step Over four times; the Call Stack follows`, async () => {
      for (let i = 0; i < 4; i++) await stepped('Step Over');
      if (!neural) await row(page, 'call-stack', 'Stack Frame <module>, line 13, fibs.py').waitFor();
    });

    await check(`${engine}: Variables show Locals${neural ? ' and Prediction' : ''}; a list expands`, async () => {
      const list = page.locator('.debug-variables .monaco-list-row[aria-level="2"][aria-label*=", value ["]', { has: page.locator('.collapsible') });
      await list.first().waitFor().catch(() => {
        throw new Error('no expandable list among the variables');
      });
      const children = await expand(page, list.first());
      if (neural) {
        const prediction = row(page, 'variables', 'Scope Prediction');
        await prediction.waitFor();
        const notes = await expand(page, prediction);
        // The probability the stop announced is the one the scope shows.
        const p = stops.at(-1).description?.match(/probability (\S+)/)?.[1];
        expect(p ? notes.includes(`probability, value ${p}`) : notes.length > 0, `Prediction shows ${JSON.stringify(notes)}, not probability ${p}`);
      } else {
        expect(JSON.stringify(children) === JSON.stringify(['0, value 3', '1, value 5']), `sizes expands to ${JSON.stringify(children)}`);
        await row(page, 'variables', 'k, value 3').waitFor();
        await row(page, 'variables', 'values, value []').waitFor();
        expect((await row(page, 'variables', 'Scope Prediction').count()) === 0, 'the trace engine shows a Prediction scope');
      }
      await shot(page, `${engine}-1-variables`);
    });

    await check(`${engine}: Step Into, Step Over, Step Out`, async () => {
      await stepped('Step Into');
      expect(neural || stops.at(-1).frames[0].name === 'fib', 'Step Into did not enter fib');
      expect(neural || stops.at(-1).total === 2, 'Step Into: not two frames');
      await stepped('Step Over');
      await stepped('Step Out');
      if (!neural) {
        await row(page, 'call-stack', 'Stack Frame <module>, line 12, fibs.py').waitFor();
        await row(page, 'variables', 'values, value [2]').waitFor(); // fib(3) returned
      }
    });

    await check(`${engine}: a click in the gutter sets a breakpoint on line 6`, async () => {
      const answered = (m) => m.type === 'response' && m.command === 'setBreakpoints';
      const before = sent(log).filter(answered).length;
      await clickGutter(page, 6);
      await row(page, 'breakpoints', `fibs.py 6, ${tmp}/${engine}/fibs.py`).waitFor();
      await page.locator('.part.editor .monaco-editor .codicon-debug-breakpoint').waitFor();
      const answer = await until('the setBreakpoints response', () => sent(log).filter(answered)[before]);
      const [breakpoint] = answer.body.breakpoints;
      expect(breakpoint.verified && breakpoint.line === 6, `the adapter answered ${JSON.stringify(answer.body)}`);
    });

    await check(`${engine}: Continue stops at the breakpoint`, async () => {
      await stepped('Continue');
      const stop = stops.at(-1);
      if (!neural) {
        expect(stop.reason === 'breakpoint', `stopped for ${stop.reason}`);
        await row(page, 'call-stack', 'Stack Frame fib, line 6, fibs.py').waitFor();
        for (const v of ['n, value 5', 'i, value 0', 'a, value 0', 'b, value 1']) await row(page, 'variables', v).waitFor();
      }
      await shot(page, `${engine}-2-breakpoint`);
    });

    await check(`${engine}: Step Back, then Reverse to the breakpoint's last hit`, async () => {
      await stepped('Step Back');
      if (!neural) await row(page, 'call-stack', 'Stack Frame fib, line 5, fibs.py').waitFor();
      await stepped('Reverse');
      if (!neural) {
        // The last hit before: fib(3)'s last iteration.
        await row(page, 'call-stack', 'Stack Frame fib, line 6, fibs.py').waitFor();
        for (const v of ['n, value 3', 'i, value 2', 'a, value 1', 'b, value 2']) await row(page, 'variables', v).waitFor();
      }
      await shot(page, `${engine}-3-reversed`);
    });

    await check(`${engine}: Stop ends the session`, async () => {
      await button(page, 'Stop').click();
      await page.locator('.debug-toolbar').waitFor({ state: 'hidden' });
      await until('the disconnect response', () => sent(log).some((m) => m.command === 'disconnect' && m.success));
      await rows(page, 'call-stack').first().waitFor({ state: 'detached' });
    });

    await check(`${engine}: the adapter's log has every request answered`, async () => {
      const commands = requested(log);
      const wanted = ['initialize', 'launch', 'setBreakpoints', 'configurationDone', 'next', 'stepIn', 'stepOut'];
      for (const c of [...wanted, 'continue', 'stepBack', 'reverseContinue', 'disconnect']) {
        expect(commands.includes(c), `no ${c} request in the log`);
      }
      const refused = sent(log).filter((m) => m.type === 'response' && !m.success);
      expect(refused.length === 0, `refused: ${JSON.stringify(refused)}`);
      const reasons = sent(log).filter(isEvent('stopped')).map((m) => m.body.reason);
      const want = ['entry', 'step', 'step', 'step', 'step', 'step', 'step', 'step', 'breakpoint', 'step', 'breakpoint'];
      if (neural) {
        expect(reasons.length === want.length, `${reasons.length} stops for ${want.length} actions: ${reasons}`);
        const described = sent(log).filter(isEvent('stopped')).slice(1).every((m) => /^predicted with probability |^a guess/.test(m.body.description));
        expect(described, 'a neural stop without its probability');
      } else {
        expect(reasons.join() === want.join(), `stop reasons ${reasons}`);
      }
    });
  } catch {
    await shot(page, `${engine}-failed`).catch(() => {});
  } finally {
    await page.close();
  }
}

/** The extension's own choice of adapter: no setting, none on PATH, so the bundled one. */
async function bundled() {
  const page = await open(workspace('bundled', { engine: 'neural' }));
  try {
    await check('bundled adapter and model: a neural session starts with no setting and no neural-dap on PATH', async () => {
      await page.locator('.debug-start-action, [aria-label^="Start Debugging"]').first().click();
      await page.locator('.call-stack-state-message', { hasText: 'Paused on entry' }).waitFor();
      await row(page, 'call-stack', 'Stack Frame <module>, line 2, fibs.py').waitFor();
      await button(page, 'Stop').click();
      await page.locator('.debug-toolbar').waitFor({ state: 'hidden' });
    });
  } catch {
    await shot(page, 'bundled-failed').catch(() => {});
  } finally {
    await page.close();
  }
}

try {
  url = await start();
  await bundled();
  await session('neural');
  await session('trace');
} finally {
  await browser?.close();
  if (server) process.kill(-server.pid, 'SIGTERM');
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`screenshots and logs: ${artifacts}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
