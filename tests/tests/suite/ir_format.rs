//! The IR text format round-trips, and out-of-SSA conversion gives programs
//! that print what the originals print.

use flowc_ir::{parse, print, InstKind, Operand};
use flowc_tests::engines;
use flowc_tests::{corpus, gen};

fn round_trip(name: &str, text: &str) {
    let m = parse::module(name, text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
    assert_eq!(print::module(&m), text, "{name}: print(parse(text)) != text");
}

#[test]
fn text_format_round_trips_over_the_corpus() {
    for p in corpus::all() {
        for b in p.program.main_blocks() {
            let m = engines::lower(&p.program, b.label);
            round_trip(&p.name(), &print::module(&m));
        }
    }
}

#[test]
fn text_format_round_trips_over_generated_programs() {
    for seed in 0..300 {
        let p = gen::program(seed);
        let (label, _) = engines::start(&p);
        round_trip(&format!("seed {seed}"), &print::module(&engines::lower(&p, label)));
    }
}

#[test]
fn no_trivial_phis_remain() {
    let mut programs: Vec<_> = corpus::all().into_iter().map(|c| c.program).collect();
    programs.extend((0..300).map(gen::program));
    let mut phis = 0;
    for p in &programs {
        let (label, _) = engines::start(p);
        let m = engines::lower(p, label);
        for f in &m.functions {
            for (_, i) in f.all_insts() {
                let InstKind::Phi(inputs) = &f.insts[i].kind else { continue };
                phis += 1;
                let me = Operand::Value(f.insts[i].result.unwrap());
                let mut distinct: Vec<&Operand> = inputs.iter().map(|(_, o)| o).filter(|o| **o != me).collect();
                distinct.dedup();
                distinct.sort_by_key(|o| format!("{o:?}"));
                distinct.dedup();
                assert!(distinct.len() > 1, "trivial phi {}", print::inst_to_string(f, i));
            }
        }
    }
    assert!(phis > 100, "only {phis} phis");
}

#[test]
fn out_of_ssa_programs_print_what_the_originals_print() {
    for case in engines::cases(corpus::with_generated(300)).filter(|c| c.finishes()) {
        assert_eq!(engines::via_fgl(&case.lowered(), &case.env), case.expected, "{}", case.name);
    }
}
