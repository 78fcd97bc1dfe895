# tests/corpus/shapes/ledger.fg in Python: a chain of items whose `val`
# holds an integer, an atom (a string here), a constant list or another
# item, told apart by the item's `kind`; N rounds over 1000 items.
#   pypy3 bench/python/ledger.py N   prints the result, then the seconds taken
import harness

SIZE = 1000
SEQ = (3, 1, 4, 1, 5, 9, 2, 6)


class Item:
    def __init__(self, nxt):
        self.next = nxt
        self.kind = None
        self.val = None


def build(size):
    head = None
    for k in range(size, 0, -1):
        e = Item(head)
        pick = k % 4
        if pick == 1:
            e.kind, e.val = "sym", "credit"
        elif pick == 2:
            e.kind, e.val = "seq", SEQ
        elif pick == 3 and head is not None:
            e.kind, e.val = "ref", head
        else:
            e.kind, e.val = "num", k * 37 % 1000
        head = e
    return head


def run(rounds):
    head = build(SIZE)
    total = 0
    for r in range(rounds, 0, -1):
        e = head
        while e is not None:
            kind = e.kind
            if kind == "num":
                v = e.val
                total += v
                e.val = (v + r) % 1000
            elif kind == "sym":
                if e.val == "credit":
                    total += 7
                    e.val = "debit"
                else:
                    total += 3
                    e.val = "credit"
            elif kind == "seq":
                l = e.val
                total += l[r % len(l)]
            else:
                t = e.val
                if t.kind == "num":
                    total += t.val
            total %= 1000000007
            e = e.next
    return total


harness.main(run)
