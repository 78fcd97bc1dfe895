% Generated from the readable version with flowc fmt; see README.
entry(start, [reps/200]).

block(start, op1(total, same, const(0),
             jump(outer))).

block(outer, if(reps, round, done)).

block(round, op1(a, same, const(0),
             op1(b, same, const(1),
             op1(k, same, const(90),
             jump(inner))))).

block(inner, if(k, step, next)).

block(step, op2(t, add, var(a), var(b),
            op1(a, same, var(b),
            op1(b, same, var(t),
            op2(k, sub, var(k), const(1),
            jump(inner)))))).

block(next, op2(total, add, var(total), var(a),
            op2(reps, sub, var(reps), const(1),
            jump(outer)))).

block(done, print_and_stop(var(total))).
