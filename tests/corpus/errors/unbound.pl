% key_not_found: a sum whose total is never set.
block(start, op1(i, same, const(3), jump(loop))).
block(loop, if(i, body, done)).
block(body, op2(total, add, var(total), var(i),
            op2(i, sub, var(i), const(1),
            jump(loop)))).
block(done, print_and_stop(var(total))).
entry(start, []).
