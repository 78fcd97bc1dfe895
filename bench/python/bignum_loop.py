# bench/programs/bignum_loop.fg in Python: arithmetic on integers beyond
# 64 bits, two temporaries per iteration.
#   pypy3 bench/python/bignum_loop.py N   prints the result, then the seconds taken
import harness


def run(n):
    big = 100000000000000000000
    t = 0
    for i in range(n):
        x = big + i
        y = x * x
        t = (t + y % 1000003) % 1000003
    return t


harness.main(run)
