-- tests/corpus/shapes/ledger.fg in Lua: a chain of items whose `val` holds
-- an integer, an atom (a string here), a constant list or another item,
-- told apart by the item's `kind`; N rounds over 1000 items.
--   luajit bench/lua/ledger.lua N   prints the result, then the seconds taken
local main = dofile(arg[0]:match("(.*/)") .. "harness.lua")

local SIZE = 1000
local SEQ = { 3, 1, 4, 1, 5, 9, 2, 6 }

local function build(size)
  local head = nil
  for k = size, 1, -1 do
    local e = { next = head }
    local pick = k % 4
    if pick == 1 then
      e.kind, e.val = "sym", "credit"
    elseif pick == 2 then
      e.kind, e.val = "seq", SEQ
    elseif pick == 3 and head ~= nil then
      e.kind, e.val = "ref", head
    else
      e.kind, e.val = "num", k * 37 % 1000
    end
    head = e
  end
  return head
end

main(function(rounds)
  local head = build(SIZE)
  local total = 0
  for r = rounds, 1, -1 do
    local e = head
    while e ~= nil do
      local kind = e.kind
      if kind == "num" then
        local v = e.val
        total = total + v
        e.val = (v + r) % 1000
      elseif kind == "sym" then
        if e.val == "credit" then
          total = total + 7
          e.val = "debit"
        else
          total = total + 3
          e.val = "credit"
        end
      elseif kind == "seq" then
        local l = e.val
        total = total + l[r % #l + 1]
      else
        local t = e.val
        if t.kind == "num" then
          total = total + t.val
        end
      end
      total = total % 1000000007
      e = e.next
    end
  end
  return total
end)
