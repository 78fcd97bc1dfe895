-- The tutorial-shaped Brainfuck interpreter of
-- tests/corpus/interpreters/bf_tutorial.fg, written the same way in Lua:
-- the program as an array of characters, a bracket map, an if-chain over
-- the instruction, the tape a chain of cells grown on demand, output folded
-- into a checksum.
--
--     luajit bench/lua/bf_tutorial.lua FILE    prints the checksum, then the seconds taken

local function read_program(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("*a")
  f:close()
  local prog = {}
  for c in text:gmatch("[%+%-<>%[%]%.,]") do
    prog[#prog + 1] = c
  end
  return prog
end

local function bracket_map(prog)
  local found, stack = {}, {}
  for k = 1, #prog do
    found[k] = 0
    if prog[k] == "[" then
      stack[#stack + 1] = k
    elseif prog[k] == "]" then
      local o = stack[#stack]
      stack[#stack] = nil
      found[o], found[k] = k, o
    end
  end
  return found
end

local function run(prog, brackets)
  local tape = { v = 0, l = false, r = false }
  local pc, total, n = 1, 0, #prog
  while pc <= n do
    local op = prog[pc]
    if op == "+" then
      tape.v = (tape.v + 1) % 256
    elseif op == "-" then
      tape.v = (tape.v - 1) % 256
    elseif op == ">" then
      if not tape.r then tape.r = { v = 0, l = tape, r = false } end
      tape = tape.r
    elseif op == "<" then
      if not tape.l then tape.l = { v = 0, l = false, r = tape } end
      tape = tape.l
    elseif op == "[" then
      if tape.v == 0 then pc = brackets[pc] end
    elseif op == "]" then
      if tape.v ~= 0 then pc = brackets[pc] end
    elseif op == "." then
      total = (total * 31 + tape.v) % 1000000007
    elseif op == "," then
      tape.v = 0
    end
    pc = pc + 1
  end
  return total
end

local prog = read_program(arg[1])
local brackets = bracket_map(prog)
local started = os.clock()
local result = run(prog, brackets)
local elapsed = os.clock() - started
print(string.format("%.0f", result))
io.stderr:write(string.format("%.6f\n", elapsed))
