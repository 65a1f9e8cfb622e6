-- setup() against a stub `dap` module (nvim-dap cannot be installed here): what it
-- registers is exactly what nvim-dap reads (dap.adapters, dap.configurations, calls
-- to dap.step_back / dap.reverse_continue).
-- Run: nvim --headless --clean -l editors/nvim/test/setup_test.lua
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
package.path = table.concat({ here .. '/?.lua', here .. '/../lua/?.lua', here .. '/../lua/?/init.lua', package.path }, ';')
local H = require('harness')

local calls = {}
local stub = {
  ABORT = {},
  adapters = {},
  configurations = { python = { { type = 'debugpy', request = 'launch', name = 'Python: file', program = '${file}' } } },
  step_back = function()
    table.insert(calls, 'step_back')
  end,
  reverse_continue = function()
    table.insert(calls, 'reverse_continue')
  end,
  -- The session of a stop inside fib(); it answers inverseCall as neural-dap does.
  session = function()
    return {
      request = function(_, command, arguments, callback)
        table.insert(calls, { command, arguments })
        callback(nil, {
          candidates = {
            { ['function'] = 'fib', line = 2, arguments = { { name = 'n', value = '3' } }, call = 'fib(3)', probability = 0.43, reproduces = true, note = vim.NIL },
            { ['function'] = 'inner', line = 5, arguments = { { name = 'x', value = '0' } }, call = vim.NIL, probability = 0.00002, reproduces = vim.NIL, note = 'not checked: a nested function' },
          },
        })
      end,
    }
  end,
}
package.loaded['dap'] = stub

local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
end

local fake = vim.fn.tempname()
vim.fn.writefile({ '#!/bin/sh' }, fake)
vim.fn.setfperm(fake, 'rwxr-xr-x')

local nd = require('neural_debugger')

H.check('setup registers dap.adapters.neural as an executable over stdio', function()
  nd.setup({ adapter_path = fake })
  local a = stub.adapters.neural
  assert(a, 'dap.adapters.neural not set')
  H.eq(a.type, 'executable', 'type')
  H.eq(a.command, fake, 'command')
  H.eq(a.args, {}, 'args')
  H.eq(#notes, 0, 'notifications for an existing adapter')
end)

H.check('setup adds the three neural python configurations and keeps existing ones', function()
  local py = stub.configurations.python
  H.eq(py[1].type, 'debugpy', 'first configuration kept')
  local names = {}
  for _, c in ipairs(py) do
    if c.type == 'neural' then
      table.insert(names, c.name)
      H.eq(c.request, 'launch', c.name .. ' request')
      H.eq(c.program, '${file}', c.name .. ' program')
    end
  end
  H.eq(names, { 'Neural: current file', 'Neural: debug a call', 'Neural: verify against Python' }, 'names')
  H.eq(py[3].call ~= nil and type(py[3].call), 'function', 'call asked at launch')
  H.eq(py[4].verify, true, 'verify flag')
  H.eq(py[2].engine, 'neural', 'default engine')
end)

H.check('a second setup replaces our configurations instead of adding more', function()
  nd.setup({ adapter_path = fake, engine = 'trace', model = '/models/x' })
  local count = 0
  for _, c in ipairs(stub.configurations.python) do
    if c.type == 'neural' then
      count = count + 1
    end
  end
  H.eq(count, 3, 'neural configurations')
  H.eq(#stub.configurations.python, 4, 'all configurations')
  H.eq(stub.configurations.python[2].engine, 'trace', 'engine option')
  H.eq(stub.configurations.python[2].model, '/models/x', 'model option')
  H.eq(stub.configurations.python[4].engine, 'neural', 'verify always runs the neural engine')
end)

H.check('the call configuration asks for the expression and aborts on an empty answer', function()
  local call = stub.configurations.python[3].call
  local original = vim.fn.input
  vim.fn.input = function()
    return 'f([1, 2])'
  end
  H.eq(call(), 'f([1, 2])', 'expression')
  vim.fn.input = function()
    return ''
  end
  H.eq(call(), stub.ABORT, 'empty input')
  vim.fn.input = original
end)

H.check(':NeuralStepBack and :NeuralReverseContinue call nvim-dap', function()
  vim.cmd('NeuralStepBack')
  vim.cmd('NeuralReverseContinue')
  H.eq(calls, { 'step_back', 'reverse_continue' }, 'calls')
end)

H.check(':NeuralInputs asks the session for inverseCall and shows the candidates', function()
  calls, notes = {}, {}
  vim.cmd('NeuralInputs 2')
  H.eq(calls, { { 'inverseCall', { count = 2 } } }, 'request')
  H.eq(#notes, 1, 'notifications')
  H.eq(
    notes[1].msg,
    'Which inputs give this state?\n1. fib(3)  p=0.43  reproduces this state under Python\n2. inner(x=0)  p=2.0e-05  (not checked: a nested function)',
    'shown'
  )
end)

H.check('a missing adapter is reported with what to do', function()
  notes = {}
  nd.setup({ adapter_path = '/nonexistent/neural-dap' })
  H.eq(#notes, 1, 'notifications')
  assert(notes[1].msg:find('/nonexistent/neural-dap', 1, true), notes[1].msg)
  assert(notes[1].msg:find('cargo build --release -p neural-dap', 1, true), notes[1].msg)
  H.eq(notes[1].level, vim.log.levels.WARN, 'level')
end)

H.check('without nvim-dap, setup says so and registers nothing', function()
  package.loaded['dap'] = nil
  package.preload['dap'] = function()
    error('module dap not found')
  end
  notes = {}
  nd.setup({ adapter_path = fake })
  H.eq(#notes, 1, 'notifications')
  assert(notes[1].msg:find('nvim-dap is not installed', 1, true), notes[1].msg)
  H.eq(notes[1].level, vim.log.levels.ERROR, 'level')
end)

H.finish()
