% Generated from the readable version with flowc fmt; see README.
entry(start, [n/300]).

block(start, op1(total, same, const(0),
             op1(i, same, const(1),
             jump(outer)))).

block(outer, op2(c, ge, var(i), var(n),
             if(c, done, pair))).

block(pair, op2(a, mul, var(i), const(7),
            op2(a, add, var(a), const(1),
            op1(b, same, const(360),
            jump(inner))))).

block(inner, op2(same, eq, var(a), var(b),
             if(same, found, step))).

block(step, op2(bigger, ge, var(a), var(b),
            if(bigger, sub_a, sub_b))).

block(sub_a, op2(a, sub, var(a), var(b),
             jump(inner))).

block(sub_b, op2(b, sub, var(b), var(a),
             jump(inner))).

block(found, op2(total, add, var(total), var(a),
             op2(i, add, var(i), const(1),
             jump(outer)))).

block(done, print_and_stop(var(total))).
