/* The tutorial-shaped Brainfuck interpreter of
 * tests/corpus/interpreters/bf_tutorial.fg, in C, as a peer for the
 * benchmarks: the program as an array of characters, a bracket map, an
 * if-chain over the instruction, the tape a chain of cells grown on demand,
 * output folded into a checksum. `bf_tutorial FILE` prints the checksum on
 * stdout and the seconds it ran on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct cell { long v; struct cell *l, *r; };

static struct cell *fresh(void) {
    struct cell *c = calloc(1, sizeof *c);
    if (!c) { perror("calloc"); exit(1); }
    return c;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: bf_tutorial FILE\n"); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    size_t cap = 1 << 16, n = 0;
    char *prog = malloc(cap);
    int ch;
    while ((ch = fgetc(f)) != EOF) {
        if (ch != '+' && ch != '-' && ch != '<' && ch != '>' && ch != '[' && ch != ']' && ch != '.' && ch != ',') continue;
        if (n == cap) prog = realloc(prog, cap *= 2);
        prog[n++] = (char)ch;
    }
    fclose(f);
    long *map = calloc(n + 1, sizeof *map), *stack = calloc(n + 1, sizeof *stack);
    long depth = 0;
    for (size_t k = 0; k < n; k++) {
        if (prog[k] == '[') stack[depth++] = (long)k;
        else if (prog[k] == ']') { long o = stack[--depth]; map[o] = (long)k; map[k] = o; }
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct cell *tape = fresh();
    long pc = 0, sum = 0, len = (long)n;
    while (pc < len) {
        char op = prog[pc];
        if (op == '+') tape->v = (tape->v + 1) % 256;
        else if (op == '-') tape->v = (tape->v + 255) % 256;
        else if (op == '>') {
            if (!tape->r) { struct cell *c = fresh(); c->l = tape; tape->r = c; }
            tape = tape->r;
        } else if (op == '<') {
            if (!tape->l) { struct cell *c = fresh(); c->r = tape; tape->l = c; }
            tape = tape->l;
        } else if (op == '[') { if (!tape->v) pc = map[pc]; }
        else if (op == ']') { if (tape->v) pc = map[pc]; }
        else if (op == '.') sum = (sum * 31 + tape->v) % 1000000007;
        else if (op == ',') tape->v = 0;
        pc++;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%ld\n", sum);
    fprintf(stderr, "%.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return 0;
}
