-- tests/corpus/shapes/list_sum.fg in Lua: a linked list of k cells built
-- by one function and summed by another, n / k times.
--   luajit bench/lua/list_sum.lua N   prints the result, then the seconds taken
local K = 1000
local NIL = {}

local function build(k)
  local l = NIL
  for i = 0, k - 1 do l = {head = i, tail = l} end
  return l
end

local function total(l)
  local t = 0
  while l ~= NIL do
    t = t + l.head
    l = l.tail
  end
  return t
end

local function run(n)
  local acc = 0
  for _ = 1, math.floor(n / K) do acc = acc + total(build(K)) end
  return acc
end

local harness = dofile((arg[0]:match("^(.*[/\\])") or "") .. "harness.lua")
harness(run)
