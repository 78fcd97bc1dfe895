"""What every peer program of the benchmarks does around its work: read N
from the command line, time `run(N)`, print the result on stdout and the
seconds on stderr (what bench/src/peers reads)."""
import sys
import time


def main(run):
    n = int(sys.argv[1])
    started = time.perf_counter()
    result = run(n)
    elapsed = time.perf_counter() - started
    print(result)
    print("%.6f" % elapsed, file=sys.stderr)
