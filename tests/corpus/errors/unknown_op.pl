% missing_op, as the series' do_op throws it.
block(start, op1(x, same, const(3),
             op2(y, frob, var(x), const(1),
             print_and_stop(var(y))))).
