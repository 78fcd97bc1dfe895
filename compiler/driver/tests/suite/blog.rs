//! The series' printed outputs, reproduced byte for byte by the real
//! binary: Part 1's residual program, Part 2's traces, Part 3's optimizer,
//! Part 4's traces of the bytecode interpreter and its residual labels.
//! The expected texts are copied from the posts of the series (docs/language.md names them).

use std::process::Command;

use flowc_tests::corpus::workspace_root;

fn flowc(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_flowc")).args(args).current_dir(workspace_root()).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

const SQUARE: &str =
    "[mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a]";

/// Part 2: `?- do_trace(power_rec, [res/1, x/10, y/20]).`
const PART2_POWER: &str = r#"trace
op2(res,mul,var(res),var(x),op2(y,sub,var(y),const(1),guard_true(y,[],power_done,loop)))
opttrace
op2(res,mul,var(res),var(x),op2(y,sub,var(y),const(1),guard_true(y,[],power_done,loop)))
100000000000000000000
"#;

/// Part 2: `?- do_trace(b, [i/100, x/5]).` (with Part 2's identity optimizer).
const PART2_PROMOTION: &str = r#"trace
guard_value(x,5,[],b2,op2(x2,mul,var(x),const(2),op2(x3,add,var(x2),const(1),op2(i,sub,var(i),var(x3),op2(c,ge,var(i),const(0),guard_true(c,[],l_done,loop))))))
opttrace
guard_value(x,5,[],b2,op2(x2,mul,var(x),const(2),op2(x3,add,var(x2),const(1),op2(i,sub,var(i),var(x3),op2(c,ge,var(i),const(0),guard_true(c,[],l_done,loop))))))
-10
"#;

/// Part 4: tracing from bytecode_loop.
const PART4_LOOP: &str = r#"trace
  guard_value(bytecode,[mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a],[],bytecode_loop_promote_bytecode)
  guard_value(pc,2,[],bytecode_loop_promote_pc)
  op2(opcode,readlist,var(bytecode),var(pc))
  op2(pc,add,var(pc),const(1))
  op2(c,eq,var(opcode),const(jump_if_a))
  guard_false(c,[],op_jump_if_a)
  op2(c,eq,var(opcode),const(mov_a_r0))
  guard_false(c,[],op_mov_a_r0)
  op2(c,eq,var(opcode),const(mov_a_r1))
  guard_false(c,[],op_mov_a_r1)
  op2(c,eq,var(opcode),const(mov_a_r2))
  guard_false(c,[],op_mov_a_r2)
  op2(c,eq,var(opcode),const(mov_r0_a))
  guard_true(c,[],not_mov_r0_a)
  op1(a,same,var(r0))
  loop

opttrace
  guard_value(bytecode,[mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a],[],bytecode_loop_promote_bytecode)
  guard_value(pc,2,[bytecode/[mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a]],bytecode_loop_promote_pc)
  op1(a,same,var(r0))
  op1(bytecode,same,const([mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a]))
  op1(pc,same,const(3))
  op1(opcode,same,const(mov_r0_a))
  op1(c,same,const(1))
  loop

256
"#;

/// Part 4: meta-tracing from op_jump_if_a_jump (the post elides the middle
/// of the recorded trace).
const PART4_META: &str = r#"trace
  op1(pc,same,var(target))
  guard_value(bytecode,[mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a],[],bytecode_loop)
  guard_value(bytecode,[mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a],[],bytecode_loop_promote_bytecode)
  guard_value(pc,2,[],bytecode_loop_promote_pc)
  op2(opcode,readlist,var(bytecode),var(pc))
  op2(pc,add,var(pc),const(1))
  op2(c,eq,var(opcode),const(jump_if_a))
  guard_false(c,[],op_jump_if_a)
  op2(c,eq,var(opcode),const(mov_a_r0))
  guard_false(c,[],op_mov_a_r0)
  op2(c,eq,var(opcode),const(mov_a_r1))
  guard_false(c,[],op_mov_a_r1)
  op2(c,eq,var(opcode),const(mov_a_r2))
  guard_false(c,[],op_mov_a_r2)
  op2(c,eq,var(opcode),const(mov_r0_a))
  guard_true(c,[],not_mov_r0_a)
  op1(a,same,var(r0))
  guard_value(bytecode,[mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a],[],bytecode_loop_promote_bytecode)
  guard_value(pc,3,[],bytecode_loop_promote_pc)
  op2(opcode,readlist,var(bytecode),var(pc))
  ...
  lots of operations ommitted
  ...
  guard_value(bytecode,[mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a],[],bytecode_loop_promote_bytecode)
  guard_value(pc,9,[],bytecode_loop_promote_pc)
  op2(opcode,readlist,var(bytecode),var(pc))
  op2(pc,add,var(pc),const(1))
  op2(c,eq,var(opcode),const(jump_if_a))
  guard_true(c,[],not_jump_if_a)
  op2(c,eq,var(a),const(0))
  op2(target,readlist,var(bytecode),var(pc))
  op2(pc,add,var(pc),const(1))
  guard_false(c,[],bytecode_loop)
  loop

opttrace
  op1(pc,same,var(target))
  guard_value(bytecode,[mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a],[],bytecode_loop)
  guard_value(pc,2,[bytecode/[mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a]],bytecode_loop_promote_pc)
  op1(a,same,var(r0))
  op2(a,sub,var(a),const(1))
  op1(r0,same,var(a))
  op1(a,same,var(r2))
  op2(a,add,var(a),var(r1))
  op1(r2,same,var(a))
  op1(a,same,var(r0))
  op2(c,eq,var(a),const(0))
  guard_false(c,[bytecode/[mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a],pc/11,opcode/jump_if_a,target/2],bytecode_loop)
  op1(bytecode,same,const([mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a]))
  op1(pc,same,const(11))
  op1(opcode,same,const(jump_if_a))
  op1(target,same,const(2))
  op1(c,same,const(0))
  loop

256
"#;

#[test]
fn part2_power_trace() {
    let out = flowc(&[
        "trace",
        "examples/power.pl",
        "--entry",
        "power_rec",
        "--env",
        "[res/1,x/10,y/20]",
        "--optimizer",
        "blog",
        "--format",
        "prolog",
    ]);
    assert_eq!(out, PART2_POWER);
}

#[test]
fn part2_promotion_trace() {
    let out = flowc(&[
        "trace",
        "examples/promotion.pl",
        "--entry",
        "b",
        "--env",
        "[i/100,x/5]",
        "--optimizer",
        "none",
        "--format",
        "prolog",
    ]);
    assert_eq!(out, PART2_PROMOTION);
}

#[test]
fn part3_optimizer_on_the_promotion_trace() {
    // Part 3's optimize/3 on the trace of `b` (the post shows it for x = 3;
    // with x = 5 the constants are 5, 10 and 11).
    let out = flowc(&[
        "trace",
        "examples/promotion.pl",
        "--entry",
        "b",
        "--env",
        "[i/100,x/5]",
        "--optimizer",
        "blog",
        "--format",
        "prolog",
    ]);
    let opt = out.lines().nth(3).unwrap();
    assert_eq!(
        opt,
        "guard_value(x,5,[],b2,op2(i,sub,var(i),const(11),op2(c,ge,var(i),const(0),guard_true(c,[x/5,x2/10,x3/11],l_done,op1(x,same,const(5),op1(x2,same,const(10),op1(x3,same,const(11),loop)))))))"
    );
    assert_eq!(out.lines().nth(4), Some("-10"));
    let with_3 = flowc(&[
        "trace",
        "examples/promotion.pl",
        "--entry",
        "b",
        "--env",
        "[i/100,x/3]",
        "--optimizer",
        "blog",
        "--format",
        "prolog",
    ]);
    assert_eq!(
        with_3.lines().nth(3).unwrap(),
        "guard_value(x,3,[],b2,op2(i,sub,var(i),const(7),op2(c,ge,var(i),const(0),guard_true(c,[x/3,x2/6,x3/7],l_done,op1(x,same,const(3),op1(x2,same,const(6),op1(x3,same,const(7),loop)))))))"
    );
}

#[test]
fn part4_trace_from_the_dispatch_loop() {
    let env = format!("[bytecode/{SQUARE},pc/2,a/16,r0/16,r1/16,r2/0]");
    let out = flowc(&[
        "trace",
        "examples/bytecode_traced.pl",
        "--entry",
        "bytecode_loop",
        "--env",
        &env,
        "--optimizer",
        "blog",
        "--format",
        "prolog",
        "--layout",
        "lines",
    ]);
    assert_eq!(out, PART4_LOOP);
}

#[test]
fn part4_meta_trace_from_the_taken_jump() {
    let env = format!("[bytecode/{SQUARE},pc/11,a/16,r0/16,r1/16,r2/0,target/2]");
    let out = flowc(&[
        "trace",
        "examples/bytecode_traced.pl",
        "--entry",
        "op_jump_if_a_jump",
        "--env",
        &env,
        "--optimizer",
        "blog",
        "--format",
        "prolog",
        "--layout",
        "lines",
    ]);
    let elided = r#"  ...
  lots of operations ommitted
  ...
"#;
    let (head, rest) = PART4_META.split_once(elided).unwrap();
    let (tail, after) = rest.split_once("\nopttrace\n").unwrap();
    assert!(out.starts_with(head), "{out}");
    let (trace, opt) = out.split_once("\nopttrace\n").unwrap();
    assert!(trace.ends_with(tail), "{trace}");
    assert_eq!(opt, after);
}

#[test]
fn part1_residual_power_program() {
    let out = flowc(&["pe", "examples/power.pl", "--entry", "power", "--static", "[y/5]", "--format", "prolog"]);
    assert_eq!(
        out,
        r#"block(power_done1, print_and_stop(var(res))).
block(power_rec5, op2(res, mul, var(res), var(x), jump(power_done1))).
block(power_rec4, op2(res, mul, var(res), var(x), jump(power_rec5))).
block(power_rec3, op2(res, mul, var(res), var(x), jump(power_rec4))).
block(power_rec2, op2(res, mul, var(res), var(x), jump(power_rec3))).
block(power_rec1, op2(res, mul, const(1), var(x), jump(power_rec2))).
block(power1, jump(power_rec1)).
entry(power1).
"#
    );
}

#[test]
fn part4_residual_bytecode_program() {
    let out = flowc(&[
        "pe",
        "examples/bytecode.pl",
        "--entry",
        "bytecode_loop",
        "--static",
        &format!("[bytecode/{SQUARE},pc/0]"),
    ]);
    for line in [
        "block(op_return_a1, print_and_stop(var(a))).",
        "block(not_decr_a1, jump(op_return_a1)).",
        "block(not_add_r2_to_a2, jump(not_decr_a1)).",
        "block(not_add_r1_to_a2, jump(not_add_r2_to_a2)).",
        "block(not_add_r0_to_a3, jump(not_add_r1_to_a2)).",
        "block(not_mov_r2_a3, jump(not_add_r0_to_a3)).",
        "block(not_mov_r1_a5, jump(not_mov_r2_a3)).",
        "block(not_mov_r0_a5, jump(not_mov_r1_a5)).",
        "block(not_mov_a_r27, jump(not_mov_r0_a5)).",
        "block(not_mov_a_r18, jump(not_mov_a_r27)).",
        "block(not_mov_a_r09, jump(not_mov_a_r18)).",
        "block(not_jump_if_a11, jump(not_mov_a_r09)).",
        "block(bytecode_loop12, jump(not_jump_if_a11)).",
        "block(op_mov_r2_a2, op1(a, same, var(r2), jump(bytecode_loop12))).",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line}");
    }
    // The post's cleaned-up labels exist, and the residual program squares.
    for label in ["bytecode_loop1", "bytecode_loop11", "op_jump_if_a_jump1"] {
        assert!(out.lines().any(|l| l.starts_with(&format!("block({label}, "))), "missing {label}");
    }
    let dir = std::env::temp_dir().join(format!("flowc-pe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("residual.pl");
    std::fs::write(&file, &out).unwrap();
    let run = flowc(&["run", file.to_str().unwrap(), "--env", "[a/16,r0/0,r1/0,r2/0]"]);
    assert_eq!(run, "256\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ssa_meta_trace_keeps_only_the_programs_arithmetic() {
    let env = format!("[bytecode/{SQUARE},pc/11,a/16,r0/16,r1/16,r2/0,target/2]");
    let out = flowc(&[
        "trace",
        "examples/bytecode_traced.pl",
        "--entry",
        "op_jump_if_a_jump",
        "--env",
        &env,
        "--layout",
        "lines",
    ]);
    let (_, opt) = out.split_once("\nopttrace\n").unwrap();
    let (body, output) = opt.split_once("  loop\n").unwrap();
    assert_eq!(output, "\n256\n");
    assert!(!body.contains("readlist"), "{body}");
    assert!(!body.contains("op1("), "register copies remain:\n{body}");
    // The first iteration (peeled) checks the promoted bytecode and target
    // once; the loop after its phis is the square loop's work: r0 - 1,
    // r2 + r1 (of integers, as the first iteration's `add` found them),
    // and the jump_if_a test.
    let (first, looped) = body.split_at(body.find("  phi(").expect("loop phis"));
    assert_eq!(first.lines().filter(|l| l.trim().starts_with("guard_value")).count(), 2, "{body}");
    let ops: Vec<&str> = looped.lines().map(str::trim).filter(|l| l.starts_with("op")).collect();
    assert_eq!(
        ops,
        [
            "op2(a_26,sub.int,var(r0_23),const(1))",
            "op2(a_27,add.int,var(r2_24),var(r1_4))",
            "op2(c_28,eq.word,var(a_26),const(0))"
        ]
    );
    assert_eq!(looped.lines().filter(|l| l.trim().starts_with("guard_")).count(), 1, "{body}");
}

#[test]
fn trace_stats_compare_the_optimizers() {
    let env = format!("[bytecode/{SQUARE},pc/11,a/16,r0/16,r1/16,r2/0,target/2]");
    for optimizer in ["ssa", "blog"] {
        let out = Command::new(env!("CARGO_BIN_EXE_flowc"))
            .args([
                "trace",
                "examples/bytecode_traced.pl",
                "--entry",
                "op_jump_if_a_jump",
                "--env",
                &env,
                "--stats",
                "--optimizer",
                optimizer,
            ])
            .current_dir(workspace_root())
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with("recorded       71 operations    62 guards"), "{err}");
        let last = err.lines().last().unwrap();
        // The SSA trace is the peeled first iteration and the loop; per
        // iteration, the loop is Part 4's three operations and one guard.
        let expected = if optimizer == "ssa" {
            "ssa             6 operations     4 guards    104.0 resume bytes per guard, per iteration 3 operations 1 guards"
        } else {
            "blog           14 operations     3 guards     29.3 resume bytes per guard, per iteration 14 operations 3 guards"
        };
        assert!(last.starts_with(expected), "{optimizer}: {err}");
    }
}

#[test]
fn optimized_residual_program_loses_the_jump_only_blocks() {
    let static_env = format!("[bytecode/{SQUARE},pc/0]");
    let plain = flowc(&["pe", "examples/bytecode.pl", "--entry", "bytecode_loop", "--static", &static_env]);
    let jump_only = |text: &str| {
        text.lines().filter(|l| l.starts_with("block(") && l.contains(", jump(") && l.matches('(').count() == 2).count()
    };
    assert!(jump_only(&plain) > 50, "the raw residual program is full of jump-only blocks");
    let out = flowc(&["pe", "examples/bytecode.pl", "--entry", "bytecode_loop", "--static", &static_env, "--optimize"]);
    let blocks = out.lines().filter(|l| l.starts_with("block(")).count();
    assert!(blocks <= 8, "{blocks} blocks remain:\n{out}");
    assert!(!out.contains("not_"), "dispatch blocks remain:\n{out}");
    assert!(!out.contains("readlist"), "{out}");
    let dir = std::env::temp_dir().join(format!("flowc-peopt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("optimized.pl");
    std::fs::write(&file, &out).unwrap();
    assert_eq!(flowc(&["run", file.to_str().unwrap(), "--env", "[a/16,r0/0,r1/0,r2/0]"]), "256\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `pe --linear` (not the series' algorithm): Part 4's bytecode
/// interpreter specialized to the squaring program follows the static
/// dispatch within each residual block: no block of the if-chain over the
/// opcode is left (the series' algorithm makes a jump-only block per test
/// passed), far fewer blocks are made, and the residual program still
/// squares.
#[test]
fn the_linear_mode_follows_the_static_dispatch() {
    let static_env = format!("[bytecode/{SQUARE},pc/0]");
    let args = ["pe", "examples/bytecode.pl", "--entry", "bytecode_loop", "--static", &static_env];
    let series = flowc(&args);
    let linear = flowc(&[&args[..], &["--linear"]].concat());
    let blocks = |text: &str| text.lines().filter(|l| l.starts_with("block(")).count();
    let jump_only = |text: &str| {
        text.lines().filter(|l| l.starts_with("block(") && l.contains(", jump(") && l.matches('(').count() == 2).count()
    };
    assert!(jump_only(&series) > 50, "{series}");
    assert!(!linear.contains("not_"), "dispatch blocks remain:\n{linear}");
    assert!(3 * blocks(&linear) < blocks(&series), "{} against {}:\n{linear}", blocks(&linear), blocks(&series));
    let dir = std::env::temp_dir().join(format!("flowc-pe-linear-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("residual.pl");
    std::fs::write(&file, &linear).unwrap();
    assert_eq!(flowc(&["run", file.to_str().unwrap(), "--env", "[a/16,r0/0,r1/0,r2/0]"]), "256\n");
    std::fs::remove_dir_all(&dir).unwrap();
}
