-- tests/corpus/shapes/alloc_escape.fg in Lua: a loop allocating a
-- short-lived table it passes to a recursive function.
--   luajit bench/lua/alloc_escape.lua N   prints the result, then the seconds taken
local function area(p, d)
  if d ~= 0 then return area(p, d - 1) end
  return p.w * p.h
end

local function run(n)
  local t = 0
  for i = 0, n - 1 do
    local r = {w = i, h = 3}
    t = (t + area(r, 1)) % 1000003
  end
  return t
end

local harness = dofile((arg[0]:match("^(.*[/\\])") or "") .. "harness.lua")
harness(run)
