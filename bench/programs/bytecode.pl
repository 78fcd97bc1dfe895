% Part 4: an interpreter for a tiny register bytecode, written in the
% flow-graph language. Registers r0, r1, r2 and the accumulator a.
%
% The bytecode program below squares a: a = 16 prints 256.
%   flowc run bench/programs/bytecode.pl
% This is the version Part 4 partially evaluates with [bytecode/B, pc/0] static.
% bytecode dispatch loop
block(bytecode_loop,
      op2(opcode, readlist, var(bytecode), var(pc),
      op2(pc, add, var(pc), const(1),
      op2(c, eq, var(opcode), const(jump_if_a),
      if(c, op_jump_if_a, not_jump_if_a))))).

% select the right bytecode via a long series of if statements
block(not_jump_if_a,
      op2(c, eq, var(opcode), const(mov_a_r0),
      if(c, op_mov_a_r0, not_mov_a_r0))).
block(not_mov_a_r0,
      op2(c, eq, var(opcode), const(mov_a_r1),
      if(c, op_mov_a_r1, not_mov_a_r1))).
block(not_mov_a_r1,
      op2(c, eq, var(opcode), const(mov_a_r2),
      if(c, op_mov_a_r2, not_mov_a_r2))).
block(not_mov_a_r2,
      op2(c, eq, var(opcode), const(mov_r0_a),
      if(c, op_mov_r0_a, not_mov_r0_a))).
block(not_mov_r0_a,
      op2(c, eq, var(opcode), const(mov_r1_a),
      if(c, op_mov_r1_a, not_mov_r1_a))).
block(not_mov_r1_a,
      op2(c, eq, var(opcode), const(mov_r2_a),
      if(c, op_mov_r2_a, not_mov_r2_a))).
block(not_mov_r2_a,
      op2(c, eq, var(opcode), const(add_r0_to_a),
      if(c, op_add_r0_to_a, not_add_r0_to_a))).
block(not_add_r0_to_a,
      op2(c, eq, var(opcode), const(add_r1_to_a),
      if(c, op_add_r1_to_a, not_add_r1_to_a))).
block(not_add_r1_to_a,
      op2(c, eq, var(opcode), const(add_r2_to_a),
      if(c, op_add_r2_to_a, not_add_r2_to_a))).
block(not_add_r2_to_a,
      op2(c, eq, var(opcode), const(decr_a),
      if(c, op_decr_a, not_decr_a))).
block(not_decr_a,
      op2(c, eq, var(opcode), const(return_a),
      if(c, op_return_a, not_return_a))).
block(not_return_a, error(unknown_opcode)).

% bytecode implementations
block(op_jump_if_a,
      op2(c, eq, var(a), const(0),
      op2(target, readlist, var(bytecode), var(pc),
      op2(pc, add, var(pc), const(1),
      if(c, bytecode_loop, op_jump_if_a_jump))))).
block(op_jump_if_a_jump,
      op1(pc, same, var(target),
      promote(bytecode, bytecode_loop))).
block(op_mov_a_r0, op1(r0, same, var(a), jump(bytecode_loop))).
block(op_mov_a_r1, op1(r1, same, var(a), jump(bytecode_loop))).
block(op_mov_a_r2, op1(r2, same, var(a), jump(bytecode_loop))).
block(op_mov_r0_a, op1(a, same, var(r0), jump(bytecode_loop))).
block(op_mov_r1_a, op1(a, same, var(r1), jump(bytecode_loop))).
block(op_mov_r2_a, op1(a, same, var(r2), jump(bytecode_loop))).
block(op_add_r0_to_a, op2(a, add, var(a), var(r0), jump(bytecode_loop))).
block(op_add_r1_to_a, op2(a, add, var(a), var(r1), jump(bytecode_loop))).
block(op_add_r2_to_a, op2(a, add, var(a), var(r2), jump(bytecode_loop))).
block(op_decr_a, op2(a, sub, var(a), const(1), jump(bytecode_loop))).
block(op_return_a, print_and_stop(var(a))).

entry(bytecode_loop, [bytecode/[mov_a_r0, mov_a_r1, mov_r0_a, decr_a, mov_a_r0, mov_r2_a, add_r1_to_a, mov_a_r2, mov_r0_a, jump_if_a, 2, mov_r2_a, return_a], pc/0, a/16, r0/0, r1/0, r2/0]).
