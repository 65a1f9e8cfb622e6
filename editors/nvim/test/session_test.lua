-- Drives a real neural-dap the way nvim-dap does (see dap_client.lua) on
-- fixtures/calls.py with the trace engine: entry, breakpoint, next, stepIn, stepOut,
-- stepBack, reverseContinue, variables, program output, the end of the session.
-- Run: nvim --headless --clean -l editors/nvim/test/session_test.lua /path/to/neural-dap
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
package.path = table.concat({ here .. '/?.lua', here .. '/../lua/?/init.lua', package.path }, ';')
local H = require('harness')
local Client = require('dap_client')

local adapter = arg[1]
local engine = arg[2] or 'trace'
local TIMEOUT = tonumber(os.getenv('NEURAL_DAP_TIMEOUT_MS') or '') or (engine == 'neural' and 60000 or 5000)
local program = vim.uv.fs_realpath(here .. '/fixtures/calls.py')

if not adapter or vim.fn.executable(adapter) ~= 1 then
  H.say(string.format("adapter '%s' is not executable: pass the neural-dap path as the first argument", tostring(adapter)))
  H.failed = H.failed + 1
  H.finish()
end

local client, err = Client.spawn(adapter, {})
if not client then
  H.say(err)
  H.failed = H.failed + 1
  H.finish()
end

local view -- the state nvim-dap would show at the current stop
local thread_id

local function at(expected_reason, expected_line, expected_function)
  assert(view, 'no current stop')
  H.eq(view.reason, expected_reason, 'stop reason')
  H.eq(view.top.line, expected_line, 'line')
  H.eq(view.top.source and view.top.source.path, program, 'source path')
  if expected_function then
    H.eq(view.top.name, expected_function, 'function')
  end
end

local function step(command)
  local v, why = client:step(command, thread_id, TIMEOUT)
  assert(v, why)
  view = v
end

H.check('session starts in nvim-dap order with its initialize arguments', function()
  local config = { type = 'neural', request = 'launch', name = 'Neural: current file', program = program, engine = engine }
  local caps, log, failure = client:start_session(config, { [program] = { 7 } }, TIMEOUT)
  assert(not failure, failure)
  local order = {}
  for _, entry in ipairs(log) do
    table.insert(order, entry.command)
    assert(entry.response.success, entry.command .. ' failed: ' .. tostring(entry.response.message))
  end
  H.eq(order, { 'initialize', 'setBreakpoints', 'setExceptionBreakpoints', 'configurationDone', 'launch' }, 'requests')
  H.eq(caps.supportsStepBack, true, 'supportsStepBack')
  H.eq(caps.supportsConfigurationDoneRequest, true, 'supportsConfigurationDoneRequest')
  local bp = log[2].response.body.breakpoints[1]
  H.eq({ bp.verified, bp.line }, { true, 7 }, 'breakpoint verified on line 7')
end)

H.check('stops on entry at line 1', function()
  local stopped = client:wait_event('stopped', 0, TIMEOUT)
  assert(stopped, 'no stopped event after launch' .. client:exit_note())
  thread_id = stopped.body.threadId
  local threads = client:request('threads', nil, TIMEOUT)
  H.eq(#threads.body.threads, 1, 'threads')
  view = client:inspect(stopped, TIMEOUT)
  at('entry', 1, '<module>')
end)

local at_breakpoint
H.check('continue hits the breakpoint in twice() with x = 3', function()
  step('continue')
  at('breakpoint', 7, 'twice')
  H.eq(view.variables.x, '3', 'x')
  H.eq(view.frames[2] and { view.frames[2].name, view.frames[2].line }, { '<module>', 12 }, 'caller frame')
  at_breakpoint = view
end)

H.check('inverseCall at the breakpoint gives twice(3), which reproduces it under Python', function()
  local response = client:request('inverseCall', { count = 3 }, TIMEOUT)
  assert(response.success, 'inverseCall failed: ' .. tostring(response.message))
  local nd = require('neural_debugger')
  H.eq(nd.format_candidates(response.body.candidates), { '1. twice(3)  reproduces this state under Python' }, 'shown')
end)

H.check('next steps over add() to line 8 with y = 6', function()
  step('next')
  at('step', 8, 'twice')
  H.eq(view.variables.y, '6', 'y')
end)

H.check('stepBack returns to line 7 with the same variables as before', function()
  step('stepBack')
  at('step', 7, 'twice')
  H.eq(view.variables, at_breakpoint.variables, 'variables')
end)

H.check('stepIn enters add() with a = 3, b = 3', function()
  step('stepIn')
  H.eq(view.reason, 'step', 'reason')
  -- The call state: add's `def` line with the arguments bound.
  H.eq(view.top.name, 'add', 'function')
  H.eq(view.top.line, 1, 'line')
  H.eq({ view.variables.a, view.variables.b }, { '3', '3' }, 'arguments')
end)

H.check('stepOut returns to twice() at line 8 with y = 6', function()
  step('stepOut')
  at('step', 8, 'twice')
  H.eq(view.variables.y, '6', 'y')
end)

H.check('reverseContinue goes back to the breakpoint hit, then to the entry', function()
  step('reverseContinue')
  at('breakpoint', 7, 'twice')
  H.eq(view.variables, at_breakpoint.variables, 'variables at the breakpoint')
  step('reverseContinue')
  -- Only the reason and frame here: the entry's line is checked once, above.
  H.eq(view.reason, 'entry', 'reason')
  H.eq(#view.frames, 1, 'frames')
  H.eq(view.top.name, '<module>', 'function')
end)

H.check('continue twice runs past the breakpoint to the end, with the program output', function()
  step('continue')
  at('breakpoint', 7, 'twice')
  local mark = #client.events
  local response = client:request('continue', { threadId = thread_id }, TIMEOUT)
  assert(response.success, 'continue failed: ' .. tostring(response.message))
  assert(client:wait_event('terminated', mark, TIMEOUT), 'no terminated event' .. client:exit_note())
  local out = {}
  for _, e in ipairs(client.events) do
    if e.event == 'output' and e.body.category == 'stdout' then
      table.insert(out, e.body.output)
    end
  end
  H.eq(table.concat(out), '7\ndone 10\n', 'stdout')
end)

client:close()
H.finish()
