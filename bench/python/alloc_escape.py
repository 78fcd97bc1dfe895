# tests/corpus/shapes/alloc_escape.fg in Python: a loop allocating a
# short-lived object it passes to a recursive function.
#   pypy3 bench/python/alloc_escape.py N   prints the result, then the seconds taken
import harness


class Rect:
    def __init__(self, w, h):
        self.w = w
        self.h = h


def area(p, d):
    if d:
        return area(p, d - 1)
    return p.w * p.h


def run(n):
    t = 0
    for i in range(n):
        r = Rect(i, 3)
        t = (t + area(r, 1)) % 1000003
    return t


harness.main(run)
