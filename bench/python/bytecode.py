"""The Part 4 bytecode interpreter (examples/bytecode_traced.pl),
written the same way in Python: a dispatch loop over a list of opcodes with a
chain of comparisons, registers r0, r1, r2 and the accumulator a.

    pypy3 bench/python/bytecode.py A    prints A*A, then the seconds taken
"""
import harness



def run(bytecode, a):
    pc, r0, r1, r2 = 0, 0, 0, 0
    while True:
        opcode = bytecode[pc]
        pc += 1
        if opcode == "jump_if_a":
            target = bytecode[pc]
            pc += 1
            if a != 0:
                pc = target
        elif opcode == "mov_a_r0":
            r0 = a
        elif opcode == "mov_a_r1":
            r1 = a
        elif opcode == "mov_a_r2":
            r2 = a
        elif opcode == "mov_r0_a":
            a = r0
        elif opcode == "mov_r1_a":
            a = r1
        elif opcode == "mov_r2_a":
            a = r2
        elif opcode == "add_r0_to_a":
            a = a + r0
        elif opcode == "add_r1_to_a":
            a = a + r1
        elif opcode == "add_r2_to_a":
            a = a + r2
        elif opcode == "decr_a":
            a = a - 1
        elif opcode == "return_a":
            return a
        else:
            raise ValueError("unknown_opcode")


SQUARE = ["mov_a_r0", "mov_a_r1", "mov_r0_a", "decr_a", "mov_a_r0", "mov_r2_a",
          "add_r1_to_a", "mov_a_r2", "mov_r0_a", "jump_if_a", 2, "mov_r2_a", "return_a"]

harness.main(lambda a: run(SQUARE, a))
