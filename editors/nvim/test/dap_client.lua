-- A small DAP client for headless tests: spawns an adapter with stdio pipes, frames
-- messages with Content-Length, and starts sessions the way nvim-dap does
-- (lua/dap/session.lua in mfussenegger/nvim-dap: the initialize arguments, launch sent
-- as soon as initialize answers, then on `initialized`: setBreakpoints,
-- setExceptionBreakpoints with the default filters, configurationDone).
-- Callbacks from libuv only append bytes; parsing happens in the main loop (vim.wait).
local uv = vim.uv or vim.loop

local Client = {}
Client.__index = Client

--- Spawns `command args...`. Returns a client, or nil and an error message.
function Client.spawn(command, args)
  local self = setmetatable({
    seq = 1,
    buffer = '',
    stderr = {},
    responses = {}, -- request seq -> response
    events = {}, -- every event received, in order
    handlers = {}, -- event name -> list of functions(event)
    exited = nil,
  }, Client)
  local stdin, stdout, stderr = uv.new_pipe(false), uv.new_pipe(false), uv.new_pipe(false)
  local handle, pid_or_err = uv.spawn(command, { args = args or {}, stdio = { stdin, stdout, stderr } }, function(code, signal)
    self.exited = { code = code, signal = signal }
  end)
  if not handle then
    return nil, string.format('could not start %s: %s', command, tostring(pid_or_err))
  end
  self.handle, self.stdin, self.stdout, self.stderr_pipe = handle, stdin, stdout, stderr
  stdout:read_start(function(err, chunk)
    if chunk then
      self.buffer = self.buffer .. chunk
    elseif err then
      self.read_error = err
    end
  end)
  stderr:read_start(function(_, chunk)
    if chunk then
      table.insert(self.stderr, chunk)
    end
  end)
  return self
end

-- Decodes every complete message in the buffer.
function Client:pump()
  while true do
    local header_end = self.buffer:find('\r\n\r\n', 1, true)
    if not header_end then
      return
    end
    local length = tonumber(self.buffer:sub(1, header_end - 1):match('Content%-Length:%s*(%d+)'))
    if not length then
      error('malformed header from adapter: ' .. self.buffer:sub(1, header_end - 1))
    end
    local body_start = header_end + 4
    if #self.buffer < body_start + length - 1 then
      return
    end
    local body = self.buffer:sub(body_start, body_start + length - 1)
    self.buffer = self.buffer:sub(body_start + length)
    -- Decoded as nvim-dap decodes (lua/dap/rpc.lua): JSON null in objects becomes nil.
    local message = vim.json.decode(body, { luanil = { object = true } })
    if message.type == 'response' then
      self.responses[message.request_seq] = message
    elseif message.type == 'event' then
      table.insert(self.events, message)
      for _, handler in ipairs(self.handlers[message.event] or {}) do
        handler(message)
      end
    end
  end
end

--- Registers a function called for every later event of that name.
function Client:on(event, handler)
  self.handlers[event] = self.handlers[event] or {}
  table.insert(self.handlers[event], handler)
end

function Client:send(command, arguments)
  local seq = self.seq
  self.seq = seq + 1
  local message = { seq = seq, type = 'request', command = command, arguments = arguments }
  local body = vim.json.encode(message)
  self.stdin:write(string.format('Content-Length: %d\r\n\r\n%s', #body, body))
  return seq
end

--- Waits (pumping the loop) until pred() is true; false on timeout or adapter exit.
function Client:wait(pred, timeout_ms)
  local ok = vim.wait(timeout_ms or 5000, function()
    self:pump()
    return pred() or self.exited ~= nil
  end, 5)
  self:pump()
  return ok and pred()
end

--- Sends a request and waits for its response (the whole response table).
function Client:request(command, arguments, timeout_ms)
  local seq = self:send(command, arguments)
  if not self:wait(function()
    return self.responses[seq] ~= nil
  end, timeout_ms) then
    error(string.format('no response to %s within %d ms%s', command, timeout_ms or 5000, self:exit_note()))
  end
  local response = self.responses[seq]
  self.responses[seq] = nil
  return response
end

--- Index in self.events of the first event named `name` after index `after` that
--- satisfies pred, waiting for it if needed.
function Client:wait_event(name, after, timeout_ms, pred)
  local found
  self:wait(function()
    for i = (after or 0) + 1, #self.events do
      local e = self.events[i]
      if e.event == name and (not pred or pred(e)) then
        found = i
        return true
      end
    end
    return false
  end, timeout_ms)
  return found and self.events[found] or nil, found
end

function Client:exit_note()
  if self.exited then
    return string.format(' (adapter exited with code %s; stderr: %s)', self.exited.code, table.concat(self.stderr))
  end
  return ''
end

-- The arguments nvim-dap sends with initialize (Session:initialize).
function Client.nvim_dap_initialize_arguments(adapter_id)
  return {
    clientID = 'neovim',
    clientName = 'neovim',
    adapterID = adapter_id or 'nvim-dap',
    pathFormat = 'path',
    columnsStartAt1 = true,
    linesStartAt1 = true,
    supportsRunInTerminalRequest = true,
    supportsVariableType = true,
    supportsProgressReporting = true,
    supportsStartDebuggingRequest = true,
    locale = os.getenv('LANG') or 'en_US',
  }
end

--- Starts a session in nvim-dap's order. `breakpoints` maps a file path to a list of
--- lines. Returns the capabilities and a log of what was sent and answered, in order.
function Client:start_session(config, breakpoints, timeout_ms)
  local log = {}
  local function call(command, arguments)
    local response = self:request(command, arguments, timeout_ms)
    table.insert(log, { command = command, arguments = arguments, response = response })
    return response
  end
  local init = call('initialize', Client.nvim_dap_initialize_arguments())
  if not init.success then
    return nil, log, 'initialize failed: ' .. tostring(init.message)
  end
  local caps = init.body or {}
  -- nvim-dap sends launch right after initialize answers, without waiting for
  -- `initialized`; the configuration requests follow when that event arrives.
  local launch_seq = self:send(config.request, config)
  local initialized = self:wait_event('initialized', 0, timeout_ms)
  if not initialized then
    return caps, log, 'no initialized event' .. self:exit_note()
  end
  for path, lines in pairs(breakpoints or {}) do
    local bps = {}
    for _, line in ipairs(lines) do
      table.insert(bps, { line = line })
    end
    call('setBreakpoints', {
      source = { path = path, name = vim.fn.fnamemodify(path, ':t') },
      sourceModified = false,
      breakpoints = bps,
      lines = lines,
    })
  end
  if caps.exceptionBreakpointFilters then
    local filters = {}
    for _, f in ipairs(caps.exceptionBreakpointFilters) do
      if f.default then
        table.insert(filters, f.filter)
      end
    end
    call('setExceptionBreakpoints', { filters = filters })
  end
  if caps.supportsConfigurationDoneRequest then
    call('configurationDone', nil)
  end
  if not self:wait(function()
    return self.responses[launch_seq] ~= nil
  end, timeout_ms) then
    return caps, log, 'no response to launch' .. self:exit_note()
  end
  local launch = self.responses[launch_seq]
  self.responses[launch_seq] = nil
  table.insert(log, { command = config.request, arguments = config, response = launch })
  if not launch.success then
    return caps, log, 'launch failed: ' .. tostring(launch.message)
  end
  return caps, log, nil
end

--- What nvim-dap fetches on a `stopped` event: stackTrace from frame 0, the scopes of
--- the top frame and the variables of every scope that is not expensive.
function Client:inspect(stopped, timeout_ms)
  local stack = self:request('stackTrace', { startFrame = 0, threadId = stopped.body.threadId }, timeout_ms)
  assert(stack.success, 'stackTrace failed: ' .. tostring(stack.message))
  local frames = stack.body.stackFrames
  local view = { reason = stopped.body.reason, frames = frames, top = frames[1], variables = {}, scopes = {} }
  if not frames[1] then
    return view
  end
  local scopes = self:request('scopes', { frameId = frames[1].id }, timeout_ms)
  assert(scopes.success, 'scopes failed: ' .. tostring(scopes.message))
  for _, scope in ipairs(scopes.body.scopes) do
    table.insert(view.scopes, scope.name)
    if not scope.expensive then
      local vars = self:request('variables', { variablesReference = scope.variablesReference }, timeout_ms)
      assert(vars.success, 'variables failed: ' .. tostring(vars.message))
      for _, v in ipairs(vars.body.variables) do
        if view.variables[v.name] == nil then
          view.variables[v.name] = v.value
        end
      end
    end
  end
  return view
end

--- Sends a stepping request (with nvim-dap's default granularity) and returns the view
--- at the next stop, or nil and the reason there was none.
function Client:step(command, thread_id, timeout_ms)
  local mark = #self.events
  local response = self:request(command, { threadId = thread_id, granularity = 'statement' }, timeout_ms)
  if not response.success then
    return nil, command .. ' failed: ' .. tostring(response.message)
  end
  local stopped = self:wait_event('stopped', mark, timeout_ms)
  if not stopped then
    local ended = self:wait_event('terminated', mark, 10)
    return nil, ended and 'session terminated' or ('no stopped event after ' .. command .. self:exit_note())
  end
  return self:inspect(stopped, timeout_ms)
end

--- disconnect, then make sure the process is gone.
function Client:close()
  if not self.exited then
    pcall(self.request, self, 'disconnect', { terminateDebuggee = true }, 2000)
    self:wait(function()
      return false
    end, 200)
  end
  if not self.exited and self.handle then
    self.handle:kill('sigterm')
  end
  for _, pipe in ipairs({ self.stdin, self.stdout, self.stderr_pipe }) do
    if pipe and not pipe:is_closing() then
      pipe:close()
    end
  end
  if self.handle and not self.handle:is_closing() then
    self.handle:close()
  end
end

return Client
