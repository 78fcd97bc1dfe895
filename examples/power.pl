% Part 1: x to the power y.
%   flowc run examples/power.pl                       prints 10000000000
%   flowc run examples/power.pl --env '[x/10,y/20]'   prints 100000000000000000000
block(power, op1(res, same, const(1),
             if(y, power_rec, power_done))).
block(power_rec, op2(res, mul, var(res), var(x),
                 op2(y, sub, var(y), const(1),
                 if(y, power_rec, power_done)))).
block(power_done, print_and_stop(var(res))).

entry(power, [x/10, y/10]).
% Part 2 traces the loop from here.
entry(power_rec, [res/1, x/10, y/20]).
