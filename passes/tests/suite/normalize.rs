//! Pass `normalize`: snapshots of each rewrite, and the normal form checked
//! on the whole corpus and on generated programs (from every label, so that
//! unbound parameters take part).

use crate::support;

use expect_test::{expect, Expect};
use flowc_ir::ix;
use flowc_ir::{BlockId, Function, InstKind, Operand, Terminator};
use flowc_lang::ast::Operator;
use flowc_passes::defuse::surely_bound;

fn check(src: &str, expected: Expect) {
    let dump = support::dump_until(src, "normalize");
    expected.assert_eq(&dump);
    let run = support::run_until(src, "normalize");
    for f in &run.module.functions {
        check_normal_form(f).unwrap_or_else(|e| panic!("{e}\n{dump}"));
    }
}

/// The guarantees of `normalize` (its module docs, normal forms 1–7).
fn check_normal_form(f: &Function) -> Result<(), String> {
    let name = f.name;
    let cfg = flowc_ir::cfg::Cfg::new(f);
    let preds = |b: BlockId| cfg.preds(b).len();
    let succs = |b: BlockId| cfg.succs(b).len();
    if f.layout.first() != Some(&f.entry) || preds(f.entry) != 0 {
        return Err(format!("{name}: the entry is not first or has predecessors"));
    }
    let bound = surely_bound(f);
    for &b in &f.layout {
        let data = &f.blocks[b];
        let at = format!("{name}, b{}", ix(b));
        if !cfg.is_reachable(b) {
            return Err(format!("{at}: unreachable"));
        }
        let targets = data.term.successors();
        if targets.len() == 2 && targets[0] == targets[1] {
            return Err(format!("{at}: both targets are the same block"));
        }
        if succs(b) == 2 && cfg.succs(b).iter().any(|&t| preds(t) > 1) {
            return Err(format!("{at}: critical edge"));
        }
        if let Terminator::Jump(t) = data.term {
            let jump_only = data.phis.is_empty() && data.insts.is_empty();
            let splitter = preds(b) == 1 && succs(cfg.preds(b)[0]) == 2 && preds(t) > 1;
            let allowed = t == b || splitter || (b == f.entry && preds(t) > 1);
            if jump_only && !allowed {
                return Err(format!("{at}: jump-only block"));
            }
            if t != b && t != f.entry && preds(t) == 1 {
                return Err(format!("{at}: jumps to b{}, its only predecessor, unmerged", ix(t)));
            }
        }
        for &phi in &data.phis {
            let (InstKind::Phi(inputs), Some(r)) = (&f.insts[phi].kind, f.insts[phi].result) else { continue };
            let mut distinct: Vec<&Operand> = Vec::new();
            for (_, o) in inputs {
                if *o != Operand::Value(r) && !distinct.contains(&o) {
                    distinct.push(o);
                }
            }
            if distinct.len() < 2 {
                return Err(format!("{at}: trivial phi v{}", r.into_raw().into_u32()));
            }
        }
        for &i in &data.insts {
            let InstKind::Op { op: Operator::Known(op), args, .. } = &f.insts[i].kind else { continue };
            if !op.info().commutative || args.len() != 2 {
                continue;
            }
            let wrong = match (&args[0], &args[1]) {
                (Operand::Const(_), Operand::Value(_)) => true,
                (Operand::Value(x), Operand::Value(y)) => {
                    let b = |v: &flowc_ir::ValueId| bound[v.into_raw().into_u32() as usize];
                    x.into_raw().into_u32() > y.into_raw().into_u32() && (b(x) || b(y))
                }
                _ => false,
            };
            if wrong {
                return Err(format!("{at}: operands of {} not in canonical order", op.name()));
            }
        }
    }
    Ok(())
}

#[test]
fn jump_chains_collapse_into_straight_lines() {
    check(
        r#"entry start(n = 3)
start:
    goto a
a:
    goto b
b:
    x = n + 1
    goto c
c:
    goto d
d:
    print_and_stop(x)
"#,
        expect![[r#"
            main start(v0:n) {
            b0 start:
                v1:x = add v0, 1
                print v1
            }
        "#]],
    );
}

#[test]
fn jump_only_blocks_between_a_branch_and_a_join_are_bypassed_or_kept_as_splitters() {
    // `skip` and `also` only jump: `also` (one predecessor with one
    // successor) goes away; `skip` sits on the critical edge start -> join
    // and stays as its splitter.
    check(
        r#"entry start(n = 3)
start:
    if n goto work else goto skip
work:
    x = n * 2
    goto also
also:
    goto join
skip:
    goto join
join:
    print_and_stop(n)
"#,
        expect![[r#"
            main start(v0:n) {
            b0 start:
                branch v0, b1, b3
            b1 work:
                v1:x = mul v0, 2
                jump b4
            b3 skip:
                jump b4
            b4 join:
                print v0
            }
        "#]],
    );
}

#[test]
fn loop_exit_to_a_join_gets_its_critical_edge_split() {
    check(
        support::POWER,
        expect![[r#"
            main power(v0:y, v1:x) {
            b0 power:
                branch v0, b3, b4
            b3:
                jump b1
            b4:
                jump b2
            b1 power_rec:
                v2:res = phi [b3: 1, b5: v4]
                v5:y = phi [b3: v0, b5: v6]
                v4:res = mul v1, v2
                v6:y = sub v5, 1
                branch v6, b5, b6
            b5:
                jump b1
            b6:
                jump b2
            b2 power_done:
                v7:res = phi [b4: 1, b6: v4]
                print v7
            }
        "#]],
    );
}

#[test]
fn entry_that_is_a_loop_header_stays_first() {
    check(
        r#"entry start(i = 3)
start:
    i = i - 1
    if i goto start else goto done
done:
    print_and_stop(i)
"#,
        expect![[r#"
            main start(v0:i) {
            b0:
                jump b1
            b1 start:
                v1:i = phi [b0: v0, b3: v2]
                v2:i = sub v1, 1
                branch v2, b3, b2
            b3:
                jump b1
            b2 done:
                print v2
            }
        "#]],
    );
}

#[test]
fn constants_go_right_and_lower_values_first_in_commutative_operations() {
    // `1 - y` is not commutative. `b * a` keeps its order: both may be
    // unbound, and the first one read decides which error is raised. In
    // `x * b` and `t = k + x` one operand is computed, hence bound, so the
    // order cannot matter and they are sorted.
    check(
        r#"entry start(a = 2, b = 5, y = 7)
start:
    x = 1 + y
    d = 1 - y
    e = 3 == y
    k = a - b
    m = b * a
    n = x * b
    s = x + k
    t = k + x
    u = t + s
    w = u + m
    r = w + e
    z = r + n
    print_and_stop(z)
"#,
        expect![[r#"
            main start(v0:y, v1:a, v2:b) {
            b0 start:
                v3:x = add v0, 1
                v4:d = sub 1, v0
                v5:e = eq v0, 3
                v6:k = sub v1, v2
                v7:m = mul v2, v1
                v8:n = mul v2, v3
                v9:s = add v3, v6
                v10:t = add v3, v6
                v11:u = add v9, v10
                v12:w = add v7, v11
                v13:r = add v5, v12
                v14:z = add v8, v13
                print v14
            }
        "#]],
    );
}

#[test]
fn branch_to_one_block_twice_still_reads_its_operand() {
    check(
        r#"entry start(c = 1)
start:
    if c goto a else goto a
a:
    k = 0
    if k goto b else goto b
b:
    print_and_stop(c)
"#,
        expect![[r#"
            main start(v0:c) {
            b0 start:
                v1 = check_bound v0
                print v0
            }
        "#]],
    );
}

#[test]
fn branch_to_one_block_twice_on_an_unbound_variable_still_raises() {
    // `c` is not in the environment: the branch raises key_not_found(c)
    // before and after (checked by the differential run after the pass).
    check(
        r#"entry start()
start:
    if c goto a else goto a
a:
    print_and_stop(1)
"#,
        expect![[r#"
        main start(v0:c) {
        b0 start:
            v1 = check_bound v0
            print 1
        }
    "#]],
    );
}

#[test]
fn if_class_to_one_block_twice_becomes_a_check_and_a_jump() {
    check(
        r#"entry start()
start:
    p = new point
    if p is point goto a else goto a
a:
    print_and_stop(1)
"#,
        expect![[r#"
            main start() {
            b0 start:
                v0:p = new point
                print 1
            }
        "#]],
    );
}

#[test]
fn unreachable_blocks_are_removed_with_their_phi_inputs() {
    // b2 is unreachable: the phi of b3 loses its input from b2 and, left
    // with one, is replaced by it; b1 and b3 then merge into a line.
    let ir = r#"main m(v0:n) {
b0:
    jump b1
b1:
    v1 = add v0, 1
    jump b3
b2:
    v2 = mul v0, 2
    jump b3
b3:
    v3 = phi [b1: v1, b2: v2]
    print v3
}
"#;
    let n = flowc_lang::Symbol::intern("n");
    let out = support::run_ir_until(ir, &[(n, flowc_lang::Value::Int(4))], "normalize");
    expect![[r#"
        main m(v0:n) {
        b0:
            v1 = add v0, 1
            print v1
        }
    "#]]
    .assert_eq(&out);
    let module = flowc_ir::parse::module("out", &out).unwrap();
    check_normal_form(&module.functions[0]).unwrap();
}

#[test]
fn a_jump_only_block_shared_by_two_branches_becomes_two_splitters() {
    // b3 only jumps to the join b5 and both its predecessors branch: it is
    // kept as the splitter of b1's edge, b2's edge gets a new one, and b5's
    // phi input from b3 is duplicated for both.
    let ir = r#"main m(v0:n, v1:k) {
b0:
    branch v0, b1, b2
b1:
    branch v1, b3, b4
b2:
    branch v1, b3, b4
b3:
    jump b5
b4:
    v2 = add v0, 1
    jump b5
b5:
    v3 = phi [b3: 7, b4: v2]
    print v3
}
"#;
    let (n, k) = (flowc_lang::Symbol::intern("n"), flowc_lang::Symbol::intern("k"));
    for (nv, kv) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        let env = [(n, flowc_lang::Value::Int(nv)), (k, flowc_lang::Value::Int(kv))];
        support::run_ir_until(ir, &env, "normalize");
    }
    let out = support::run_ir_until(ir, &[(n, flowc_lang::Value::Int(1)), (k, flowc_lang::Value::Int(0))], "normalize");
    expect![[r#"
        main m(v0:n, v1:k) {
        b0:
            branch v0, b1, b2
        b1:
            branch v1, b3, b7
        b7:
            jump b4
        b2:
            branch v1, b6, b8
        b8:
            jump b4
        b6:
            jump b5
        b3:
            jump b5
        b4:
            v2 = add v0, 1
            jump b5
        b5:
            v3 = phi [b3: 7, b6: 7, b4: v2]
            print v3
        }
    "#]]
    .assert_eq(&out);
    let module = flowc_ir::parse::module("out", &out).unwrap();
    check_normal_form(&module.functions[0]).unwrap();
}

#[test]
fn cycles_of_jump_only_blocks_keep_one_block_jumping_to_itself() {
    let ir = r#"main m(v0:n) {
b0:
    branch v0, b1, b3
b1:
    jump b2
b2:
    jump b1
b3:
    print v0
}
"#;
    let n = flowc_lang::Symbol::intern("n");
    let out = support::run_ir_until(ir, &[(n, flowc_lang::Value::Int(0))], "normalize");
    expect![[r#"
        main m(v0:n) {
        b0:
            branch v0, b4, b3
        b4:
            jump b1
        b1:
            jump b1
        b3:
            print v0
        }
    "#]]
    .assert_eq(&out);
    let module = flowc_ir::parse::module("out", &out).unwrap();
    check_normal_form(&module.functions[0]).unwrap();
}

#[test]
fn every_corpus_program_from_every_label_is_in_normal_form_afterwards() {
    for p in flowc_testkit::corpus::all() {
        let (_, env) = flowc_testkit::engines::start(&p.program);
        for b in p.program.main_blocks() {
            if support::reference_from(&p.program, b.label, &env) == "error fuel_exhausted" {
                continue;
            }
            let what = format!("{} from {}", p.name(), b.label);
            let module = support::run_program_until(&p.program, b.label, &env, "normalize", &what);
            for f in &module.functions {
                check_normal_form(f).unwrap_or_else(|e| panic!("{what}: {e}\n{}", flowc_ir::print::function(f)));
            }
        }
    }
}

#[test]
fn generated_programs_are_in_normal_form_afterwards() {
    for seed in 0..300 {
        let p = flowc_testkit::gen::program(seed);
        let (label, env) = flowc_testkit::engines::start(&p);
        let what = format!("seed {seed}");
        let module = support::run_program_until(&p, label, &env, "normalize", &what);
        for f in &module.functions {
            check_normal_form(f).unwrap_or_else(|e| panic!("{what}: {e}\n{}", flowc_ir::print::function(f)));
            // The normal form is a fixpoint: normalizing again changes nothing.
            let mut again = f.clone();
            flowc_passes::normalize::function(&mut again);
            assert_eq!(flowc_ir::print::function(&again), flowc_ir::print::function(f), "{what}: not idempotent");
        }
    }
}
