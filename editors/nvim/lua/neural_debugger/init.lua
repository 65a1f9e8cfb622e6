-- Neural Python Debugger for nvim-dap: registers the `neural` adapter (neural-dap over
-- stdio), Python launch configurations of type `neural`, commands for the reverse
-- steps nvim-dap already implements (dap.step_back, dap.reverse_continue), and
-- :NeuralInputs, which asks the adapter which inputs give the current state.
local M = {}

M.defaults = {
  -- The neural-dap binary: a path, or a command on PATH.
  adapter_path = 'neural-dap',
  -- Extra arguments for the adapter (for example { '--log', '/tmp/neural-dap.log' }).
  adapter_args = {},
  -- Engine of the configurations: 'neural' (the transformer) or 'trace' (real Python, replayed).
  engine = 'neural',
  -- Checkpoint directory for the neural engine; nil lets the adapter choose its default.
  model = nil,
  -- Seconds nvim-dap waits for `initialize` before it warns; loading a model can take a while.
  initialize_timeout_sec = 20,
}

local CONFIG_NAMES = {
  current = 'Neural: current file',
  call = 'Neural: debug a call',
  verify = 'Neural: verify against Python',
}

local function notify(msg, level)
  vim.notify('neural_debugger: ' .. msg, level)
end

-- Asks for the call expression when the configuration starts, as nvim-dap allows.
local function ask_call()
  local expr = vim.fn.input('Call to debug: ', 'f()')
  if expr == nil or vim.trim(expr) == '' then
    -- nvim-dap aborts the launch when a configuration function returns this.
    return require('dap').ABORT
  end
  return expr
end

local function configurations(opts)
  local base = { type = 'neural', request = 'launch', program = '${file}', engine = opts.engine, stopOnEntry = true }
  if opts.model then
    base.model = opts.model
  end
  return {
    vim.tbl_extend('force', base, { name = CONFIG_NAMES.current }),
    vim.tbl_extend('force', base, { name = CONFIG_NAMES.call, call = ask_call }),
    vim.tbl_extend('force', base, { name = CONFIG_NAMES.verify, engine = 'neural', verify = true }),
  }
end

-- Resolves the adapter command; warns (does not fail) so that setup can run before the
-- adapter is built.
local function adapter_command(path)
  local expanded = vim.fn.expand(path)
  if vim.fn.executable(expanded) ~= 1 then
    notify(
      string.format(
        "adapter '%s' is not an executable file or a command on PATH; build it with "
          .. "`cargo build --release -p neural-dap` and pass adapter_path = '<repo>/target/release/neural-dap'",
        expanded
      ),
      vim.log.levels.WARN
    )
  end
  return expanded
end

local function probability_text(p)
  if p >= 0.01 or p == 0 then
    return string.format('%.2f', p)
  end
  return string.format('%.1e', p)
end

--- The candidates of an `inverseCall` response as lines: the call, its probability,
--- and whether Python reproduced the stop with it.
---@param candidates table[]
---@return string[]
function M.format_candidates(candidates)
  local lines = {}
  for i, c in ipairs(candidates) do
    local call = c.call
    if call == nil or call == vim.NIL then
      local written = {}
      for _, a in ipairs(c.arguments) do
        table.insert(written, a.name .. '=' .. a.value)
      end
      call = c['function'] .. '(' .. table.concat(written, ', ') .. ')'
    end
    local line = string.format('%d. %s', i, call)
    if type(c.probability) == 'number' then
      line = line .. '  p=' .. probability_text(c.probability)
    end
    if c.reproduces == true then
      line = line .. '  reproduces this state under Python'
    elseif type(c.note) == 'string' then
      line = line .. '  (' .. c.note .. ')'
    end
    table.insert(lines, line)
  end
  return lines
end

local function which_inputs(dap, count)
  local session = dap.session()
  if not session then
    notify('no debug session: start one and stop inside a call first', vim.log.levels.WARN)
    return
  end
  session:request('inverseCall', { count = count }, function(err, body)
    if err then
      notify('which inputs give this? ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    local lines = M.format_candidates(body.candidates)
    vim.notify('Which inputs give this state?\n' .. table.concat(lines, '\n'), vim.log.levels.INFO)
  end)
end

local function define_commands(dap)
  vim.api.nvim_create_user_command('NeuralStepBack', function()
    dap.step_back()
  end, { desc = 'Neural debugger: step back one statement' })
  vim.api.nvim_create_user_command('NeuralReverseContinue', function()
    dap.reverse_continue()
  end, { desc = 'Neural debugger: run backwards to the previous breakpoint hit' })
  vim.api.nvim_create_user_command('NeuralInputs', function(cmd)
    local count = tonumber(cmd.args) or 3
    which_inputs(dap, count)
  end, { nargs = '?', desc = 'Neural debugger: which inputs give this state? (candidate calls, checked under Python)' })
end

--- Registers the adapter, the configurations and the commands with nvim-dap.
---@param opts table|nil see M.defaults
function M.setup(opts)
  opts = vim.tbl_deep_extend('force', M.defaults, opts or {})
  local ok, dap = pcall(require, 'dap')
  if not ok then
    notify('nvim-dap is not installed (require("dap") failed); install mfussenegger/nvim-dap first', vim.log.levels.ERROR)
    return
  end

  dap.adapters.neural = {
    type = 'executable',
    command = adapter_command(opts.adapter_path),
    args = opts.adapter_args,
    options = { initialize_timeout_sec = opts.initialize_timeout_sec },
  }

  -- Replace our own entries on a second setup; keep everyone else's.
  local python = {}
  for _, config in ipairs(dap.configurations.python or {}) do
    if config.type ~= 'neural' then
      table.insert(python, config)
    end
  end
  vim.list_extend(python, configurations(opts))
  dap.configurations.python = python

  define_commands(dap)
end

M.config_names = CONFIG_NAMES

return M
