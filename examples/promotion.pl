% Part 2: a loop counting down in steps of x * 2 + 1, with x promoted.
%   flowc run examples/promotion.pl     prints -10
block(l, op2(c, ge, var(i), const(0),
         if(c, b, l_done))).
block(l_done, print_and_stop(var(i))).
block(b, promote(x, b2)).
block(b2, op2(x2, mul, var(x), const(2),
          op2(x3, add, var(x2), const(1),
          op2(i, sub, var(i), var(x3),
          jump(l))))).

entry(b, [i/100, x/5]).
