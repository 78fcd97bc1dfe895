% Objects: each iteration allocates a point, sets and reads its fields.
% The point never escapes, so the optimizer can remove the allocation.
%   flowc run examples/points.pl      prints 2450
immutable(point, [x, y]).
entry(start, [n/50]).

block(start, op1(sum, same, const(0),
             op1(i, same, const(0),
             jump(loop)))).
block(loop, op2(c, lt, var(i), var(n),
            if(c, body, done))).
block(body, new(p, point,
            set(var(p), x, var(i),
            op2(twice, mul, var(i), const(2),
            set(var(p), y, var(twice),
            get(px, var(p), x,
            get(py, var(p), y,
            op2(s, add, var(px), var(py),
            op2(s2, sub, var(s), var(i),
            op2(sum, add, var(sum), var(s2),
            op2(i, add, var(i), const(1),
            jump(loop)))))))))))).
block(done, print_and_stop(var(sum))).
