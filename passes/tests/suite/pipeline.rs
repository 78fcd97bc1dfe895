//! The pipeline through `dce` over every program of `examples/` and
//! `tests/corpus/` (from every label of the main graph, so that free
//! variables become possibly-unbound parameters) and over 300 generated
//! programs: the IR checker passes and the IR interpreter agrees with the
//! reference interpreter after every pass (`support::run_program_until`).
//! Also checks that the `pure` hints of generated programs that raise no
//! errors do get used: some dead pure calls disappear.

use crate::support;

use flowc_ir::{InstKind, Module};
use flowc_lang::ast::Item;
use flowc_lang::Program;
use flowc_testkit::{corpus, engines, gen};

#[test]
fn the_corpus_from_every_label_survives_the_pipeline() {
    let mut runs = 0;
    for p in corpus::all() {
        let (_, env) = engines::start(&p.program);
        for b in p.program.main_blocks() {
            if support::reference_from(&p.program, b.label, &env) == "error fuel_exhausted" {
                continue;
            }
            support::run_program_until(&p.program, b.label, &env, "dce", &format!("{} from {}", p.name(), b.label));
            runs += 1;
        }
    }
    assert!(runs > 20, "only {runs} corpus runs");
}

/// The generated program of `seed`. A `pure` hint promises that dropping
/// a call whose result is unused is unobservable; dce relies on it. The
/// generator writes failing operations (into any function, pure or not)
/// when its configuration asks for errors, so such programs lose their
/// `pure` hints: a dropped call could otherwise drop the error.
fn generated(seed: u64) -> Program {
    let mut p = gen::program(seed);
    if gen::config_for(seed).errors {
        p.items.retain(|item| !matches!(item, Item::Pure(_)));
    }
    p
}

#[test]
fn generated_programs_survive_the_pipeline() {
    let (mut errors, mut pure_calls_before, mut pure_calls_after) = (0, 0, 0);
    for seed in 0..300 {
        let p = generated(seed);
        let (label, env) = engines::start(&p);
        errors += support::reference_from(&p, label, &env).starts_with("error") as usize;
        pure_calls_before += pure_calls(&engines::lower(&p, label));
        let module = support::run_program_until(&p, label, &env, "dce", &format!("seed {seed}"));
        pure_calls_after += pure_calls(&module);
    }
    assert!(errors > 10, "only {errors} generated programs raised errors");
    assert!(pure_calls_after < pure_calls_before, "no dead pure call removed ({pure_calls_before} calls)");
}

fn pure_calls(m: &Module) -> usize {
    let is_pure_call = |f: &flowc_ir::Function, i: flowc_ir::InstId| matches!(&f.insts[i].kind, InstKind::Call { func, .. } if m.is_pure(*func));
    m.functions.iter().map(|f| f.all_insts().filter(|&(_, i)| is_pure_call(f, i)).count()).sum()
}
