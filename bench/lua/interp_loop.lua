-- The dispatch-loop interpreter of examples/interp_loop.fg, written the
-- same way in Lua: an accumulator machine over a list of atom-coded
-- instructions that counts n down, adding each value into acc.
--   luajit bench/lua/interp_loop.lua N   prints N*(N+1)/2, then the seconds taken
local function run(code, n)
  local pc, acc = 1, 0
  while true do
    local op = code[pc]
    pc = pc + 1
    if op == "add" then acc = acc + n
    elseif op == "dec" then n = n - 1
    elseif op == "jnz" then
      local target = code[pc]
      pc = pc + 1
      if n ~= 0 then pc = target + 1 end
    elseif op == "halt" then return acc
    else error("unknown_instruction") end
  end
end

local harness = dofile((arg[0]:match("^(.*[/\\])") or "") .. "harness.lua")
harness(function(n) return run({"add", "dec", "jnz", 0, "halt"}, n) end)
