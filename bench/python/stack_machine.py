"""The stack machine of examples/stack_machine.fg, written the same way
in Python: its operand stack is a chain of cells (head, tail), every push
allocates one. The bytecode sums n, n-1, ..., 1.

    pypy3 bench/python/stack_machine.py N    prints N*(N+1)/2, then the seconds taken
"""
import harness



class Cell(object):
    __slots__ = ("head", "tail")

    def __init__(self, head, tail):
        self.head = head
        self.tail = tail


def run(code, n):
    stack = None
    pc = 0
    while True:
        op = code[pc]
        pc += 1
        if op == "push":
            stack = Cell(code[pc], stack)
            pc += 1
        elif op == "over":
            stack = Cell(stack.tail.head, stack)
        elif op == "add":
            b = stack.head
            stack = stack.tail
            a = stack.head
            stack = stack.tail
            stack = Cell(a + b, stack)
        elif op == "swap":
            b = stack.head
            stack = stack.tail
            a = stack.head
            stack = stack.tail
            stack = Cell(b, stack)
            stack = Cell(a, stack)
        elif op == "sub":
            b = stack.head
            stack = stack.tail
            a = stack.head
            stack = stack.tail
            stack = Cell(a - b, stack)
        elif op == "dup":
            stack = Cell(stack.head, stack)
        elif op == "jz":
            target = code[pc]
            pc += 1
            k = stack.head
            stack = stack.tail
            if k == 0:
                pc = target
        elif op == "jmp":
            pc = code[pc]
        elif op == "pop":
            stack = stack.tail
        elif op == "pushn":
            stack = Cell(n, stack)
        elif op == "halt":
            return stack.head
        else:
            raise ValueError("unknown_instruction")


CODE = ["pushn", "push", 0, "over", "add", "swap", "push", 1, "sub", "dup", "jz", 15, "swap", "jmp", 3, "pop", "halt"]
harness.main(lambda n: run(CODE, n))
