-- Minimal test harness for `nvim -l`: named checks, a summary line, an exit status.
local H = { passed = 0, failed = 0 }

-- io.stdout, not print: under `nvim -l` print goes through the message area.
function H.say(text)
  io.stdout:write(text, '\n')
end

--- Runs fn; a raised error (assert or error) counts as a failure with its message.
function H.check(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    H.passed = H.passed + 1
    H.say('ok - ' .. name)
  else
    H.failed = H.failed + 1
    H.say('FAIL - ' .. name .. '\n    ' .. tostring(err):gsub('\n', '\n    '))
  end
  return ok
end

function H.eq(actual, expected, what)
  if not vim.deep_equal(actual, expected) then
    error(string.format('%s: expected %s, got %s', what or 'value', vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

--- Prints `N passed, N failed` and exits non-zero when anything failed.
function H.finish()
  H.say(string.format('%d passed, %d failed', H.passed, H.failed))
  io.stdout:flush()
  os.exit(H.failed == 0 and 0 or 1)
end

return H
