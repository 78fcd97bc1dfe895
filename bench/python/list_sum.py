# tests/corpus/shapes/list_sum.fg in Python: a linked list of k cells
# built by one function and summed by another, n / k times.
#   pypy3 bench/python/list_sum.py N   prints the result, then the seconds taken
import harness

K = 1000


class Cons:
    def __init__(self, head, tail):
        self.head = head
        self.tail = tail


class Nil:
    pass


def build(k):
    l = Nil()
    for i in range(k):
        l = Cons(i, l)
    return l


def total(l):
    t = 0
    while isinstance(l, Cons):
        t += l.head
        l = l.tail
    return t


def run(n):
    acc = 0
    for _ in range(n // K):
        acc += total(build(K))
    return acc


harness.main(run)
