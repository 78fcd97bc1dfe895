-- The Part 4 bytecode interpreter (bench/programs/bytecode_traced.pl),
-- written the same way in Lua: a dispatch loop over a list of opcodes with
-- a chain of comparisons, registers r0, r1, r2 and the accumulator a.
--   luajit bench/lua/bytecode.lua A   prints A*A, then the seconds taken
local function run(bytecode, a)
  local pc, r0, r1, r2 = 1, 0, 0, 0
  while true do
    local opcode = bytecode[pc]
    pc = pc + 1
    if opcode == "jump_if_a" then
      local target = bytecode[pc]
      pc = pc + 1
      if a ~= 0 then pc = target + 1 end
    elseif opcode == "mov_a_r0" then r0 = a
    elseif opcode == "mov_a_r1" then r1 = a
    elseif opcode == "mov_a_r2" then r2 = a
    elseif opcode == "mov_r0_a" then a = r0
    elseif opcode == "mov_r1_a" then a = r1
    elseif opcode == "mov_r2_a" then a = r2
    elseif opcode == "add_r0_to_a" then a = a + r0
    elseif opcode == "add_r1_to_a" then a = a + r1
    elseif opcode == "add_r2_to_a" then a = a + r2
    elseif opcode == "decr_a" then a = a - 1
    elseif opcode == "return_a" then return a
    else error("unknown_opcode") end
  end
end

local square = {"mov_a_r0", "mov_a_r1", "mov_r0_a", "decr_a", "mov_a_r0", "mov_r2_a",
  "add_r1_to_a", "mov_a_r2", "mov_r0_a", "jump_if_a", 2, "mov_r2_a", "return_a"}
local harness = dofile((arg[0]:match("^(.*[/\\])") or "") .. "harness.lua")
harness(function(a) return run(square, a) end)
