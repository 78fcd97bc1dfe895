"""The tutorial-shaped Brainfuck interpreter of
tests/corpus/interpreters/bf_tutorial.fg, written the same way in Python:
the program as a list of characters, a bracket map, an if-chain over the
instruction, the tape a chain of cells grown on demand, output folded into
a checksum.

    pypy3 bench/python/bf_tutorial.py FILE    prints the checksum, then the seconds taken
"""
import sys
import time


class Cell(object):
    __slots__ = ("v", "l", "r")

    def __init__(self, l, r):
        self.v = 0
        self.l = l
        self.r = r


def bracket_map(prog):
    found, stack = [0] * len(prog), []
    for k, c in enumerate(prog):
        if c == "[":
            stack.append(k)
        elif c == "]":
            o = stack.pop()
            found[o], found[k] = k, o
    return found


def run(prog, brackets):
    tape = Cell(None, None)
    pc, total, n = 0, 0, len(prog)
    while pc < n:
        op = prog[pc]
        if op == "+":
            tape.v = (tape.v + 1) % 256
        elif op == "-":
            tape.v = (tape.v - 1) % 256
        elif op == ">":
            if tape.r is None:
                tape.r = Cell(tape, None)
            tape = tape.r
        elif op == "<":
            if tape.l is None:
                tape.l = Cell(None, tape)
            tape = tape.l
        elif op == "[":
            if tape.v == 0:
                pc = brackets[pc]
        elif op == "]":
            if tape.v != 0:
                pc = brackets[pc]
        elif op == ".":
            total = (total * 31 + tape.v) % 1000000007
        elif op == ",":
            tape.v = 0
        pc += 1
    return total


def main():
    with open(sys.argv[1]) as f:
        prog = [c for c in f.read() if c in "+-<>[].,"]
    brackets = bracket_map(prog)
    started = time.perf_counter()
    result = run(prog, brackets)
    elapsed = time.perf_counter() - started
    print(result)
    print("%.6f" % elapsed, file=sys.stderr)


main()
