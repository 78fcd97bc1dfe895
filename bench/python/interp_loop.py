"""The dispatch-loop interpreter of examples/interp_loop.fg, written the same
way in Python: an accumulator machine over a list of atom-coded instructions
that counts n down, adding each value into acc.

    pypy3 bench/python/interp_loop.py N    prints N*(N+1)/2, then the seconds taken
"""
import harness



def run(code, n):
    pc, acc = 0, 0
    while True:
        op = code[pc]
        pc += 1
        if op == "add":
            acc = acc + n
        elif op == "dec":
            n = n - 1
        elif op == "jnz":
            target = code[pc]
            pc += 1
            if n != 0:
                pc = target
        elif op == "halt":
            return acc
        else:
            raise ValueError("unknown_instruction")


harness.main(lambda n: run(["add", "dec", "jnz", 0, "halt"], n))
