-- The stack machine of examples/stack_machine.fg, written the same
-- way in Lua: its operand stack is a chain of cells {head, tail}, every
-- push allocates one. The bytecode sums n, n-1, ..., 1.
--   luajit bench/lua/stack_machine.lua N   prints N*(N+1)/2, then the seconds taken
local function run(code, n)
  local stack = {}
  local pc = 1
  while true do
    local op = code[pc]
    pc = pc + 1
    if op == "push" then
      stack = {head = code[pc], tail = stack}
      pc = pc + 1
    elseif op == "over" then stack = {head = stack.tail.head, tail = stack}
    elseif op == "add" then
      local b = stack.head; stack = stack.tail
      local a = stack.head; stack = stack.tail
      stack = {head = a + b, tail = stack}
    elseif op == "swap" then
      local b = stack.head; stack = stack.tail
      local a = stack.head; stack = stack.tail
      stack = {head = b, tail = stack}
      stack = {head = a, tail = stack}
    elseif op == "sub" then
      local b = stack.head; stack = stack.tail
      local a = stack.head; stack = stack.tail
      stack = {head = a - b, tail = stack}
    elseif op == "dup" then stack = {head = stack.head, tail = stack}
    elseif op == "jz" then
      local target = code[pc]
      pc = pc + 1
      local k = stack.head; stack = stack.tail
      if k == 0 then pc = target + 1 end
    elseif op == "jmp" then pc = code[pc] + 1
    elseif op == "pop" then stack = stack.tail
    elseif op == "pushn" then stack = {head = n, tail = stack}
    elseif op == "halt" then return stack.head
    else error("unknown_instruction") end
  end
end

local code = {"pushn", "push", 0, "over", "add", "swap", "push", 1, "sub", "dup", "jz", 15, "swap", "jmp", 3, "pop", "halt"}
local harness = dofile((arg[0]:match("^(.*[/\\])") or "") .. "harness.lua")
harness(function(n) return run(code, n) end)
