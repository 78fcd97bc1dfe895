//! The bodies of the coverage-guided fuzz targets (`fuzz/libfuzzer`, run
//! with `cargo fuzz`), kept here so that `cargo test` replays their
//! regression inputs (`fuzz/regressions/<target>/`) without libFuzzer.
//! Each takes the fuzzer's bytes and panics on a finding.
//!
//! - [`ir_text`]: bytes as IR text into the parser and the checker. They
//!   must answer without panicking; a module the checker accepts must print
//!   back to a text that parses to the same module (the text format repairs
//!   nothing and loses nothing), and must survive every pass and the IR
//!   interpreter with the checker still accepting it.
//! - [`mutant`]: bytes choose a generated program, a subject of its IR and a
//!   mutation class ([`crate::mutants`]); the checker must reject the
//!   mutant with the class's rule.
//! - [`valid_ir`]: the bytes drive the valid-IR generator
//!   ([`crate::irgen`], decision by decision through `arbitrary`): a
//!   module that must pass the checker, every pass and native code with
//!   one outcome ([`crate::valid`]), or (first byte odd) a trace that the
//!   IR interpreter and native code must leave alike.
//! - [`program`]: bytes choose a generated program (plain or
//!   allocation-heavy), which every engine must run to the same outcome
//!   ([`crate::engines`]).
//!
//! The JIT and native code run on the caller's thread: call `ir_text` and
//! `program` from a thread with a big stack (`flowc_codegen::with_stack`),
//! as their targets do; `mutant` runs its (small, generated) programs on
//! the fuzzer's own thread, where its cache of subjects lives.

use std::panic::{catch_unwind, AssertUnwindSafe};

use flowc_tests::rng::Rng;

use crate::mutants::{judge, mutate, Class};

/// The first 8 bytes as a little-endian number (zero-padded), and the rest.
fn seed(data: &[u8]) -> (u64, &[u8]) {
    let mut b = [0u8; 8];
    let n = data.len().min(8);
    b[..n].copy_from_slice(&data[..n]);
    (u64::from_le_bytes(b), &data[n..])
}

/// IR text into the parser and checker; see the module docs.
pub fn ir_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(module) = flowc_ir::parse::module("fuzz.ir", text) else { return };
    match flowc_ir_checker::check_module(&module) {
        Err(vs) => vs.iter().for_each(|v| drop(v.to_string())),
        Ok(()) => valid_module(module),
    }
}

/// What every valid module must survive: printing and parsing back, every
/// pass with the checker after each, and the IR interpreter before and
/// after the passes giving the same outcome. (Traces are checked and
/// printed only: they run inside the JIT, with the interpreter to resume.)
fn valid_module(mut module: flowc_ir::Module) {
    if let Err(e) = crate::valid::round_trip(&module) {
        panic!("a valid module: {e}");
    }
    let printed = flowc_ir::print::module(&module);
    if module.functions.iter().any(|f| f.kind == flowc_ir::FunctionKind::Trace) || module.main().is_none() {
        return;
    }
    let config = flowc_lang::interp::Config { fuel: Some(100_000), ..Default::default() };
    let outcome = |m: &flowc_ir::Module| match flowc_ir::interp::run(m, &[], &config) {
        Ok(o) => Ok(o.output()),
        Err(e) => Err(e.kind.term()),
    };
    let before = outcome(&module);
    let mut cx = flowc_passes::Context::new(&module);
    flowc_passes::optimize(&mut module, &mut cx, |pass, m, _| {
        if let Err(vs) = flowc_ir_checker::check_module(m) {
            let list: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
            panic!("the IR is invalid after {}:\n{}\n{printed}", pass.name, list.join("\n"));
        }
    });
    let after = outcome(&module);
    let exhausted = |o: &Result<String, String>| o.as_ref().is_err_and(|e| e == "fuel_exhausted");
    if !exhausted(&before) && !exhausted(&after) {
        assert_eq!(before, after, "the passes changed the outcome of\n{printed}");
    }
}

/// How many generated programs the `mutant` target draws its subjects
/// from: few enough that their IR (lowering, eight passes, a JIT run each)
/// is made once per process and cached, so the fuzzer spends its time on
/// mutations rather than on compiling.
pub const MUTANT_PROGRAMS: u64 = 512;

thread_local! {
    static SUBJECTS: std::cell::RefCell<std::collections::HashMap<u64, std::rc::Rc<Vec<crate::mutants::Subject>>>> =
        Default::default();
}

/// A structured mutant the checker must reject; see the module docs. Runs
/// on the caller's thread (the subjects are cached per thread).
pub fn mutant(data: &[u8]) {
    let (s, rest) = seed(data);
    let program_seed = s % MUTANT_PROGRAMS;
    let subjects = SUBJECTS.with(|c| {
        c.borrow_mut()
            .entry(program_seed)
            .or_insert_with(|| std::rc::Rc::new(crate::kill::subjects(program_seed)))
            .clone()
    });
    if subjects.is_empty() {
        return;
    }
    let (choice, rest) = seed(rest);
    let subject = &subjects[(choice % subjects.len() as u64) as usize];
    let class = Class::ALL[((choice >> 32) % Class::ALL.len() as u64) as usize];
    let (r, _) = seed(rest);
    let mut rng = Rng::new(r);
    let made = catch_unwind(AssertUnwindSafe(|| mutate(class, subject, &mut rng)))
        .unwrap_or_else(|_| panic!("mutation {} panicked on program {program_seed}", class.name()));
    if let Some(m) = made {
        if let Err(said) = judge(&m, class.expected()) {
            panic!("a {} mutant of program {program_seed} ({}) survived: {said}", class.name(), subject.origin);
        }
    }
}

/// Generated valid IR every consumer must agree on; see the module docs.
pub fn valid_ir(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let problem =
        if first & 1 == 0 { crate::valid::run_bytes(rest).err() } else { crate::valid::run_trace_bytes(rest).err() };
    if let Some(p) = problem {
        panic!("generated {}: {p}", if first & 1 == 0 { "module" } else { "trace" });
    }
}

/// A generated program every engine must agree on; see the module docs.
pub fn program(data: &[u8]) {
    let (s, _) = seed(data);
    let p = if s & 1 == 0 { flowc_tests::gen::program(s >> 1) } else { flowc_tests::gen::alloc_program(s >> 1) };
    if let Some(d) = crate::engines::disagreement_on(&p) {
        panic!(
            "engines disagree on generated program {} ({}): {d}",
            s >> 1,
            if s & 1 == 0 { "plain" } else { "alloc" }
        );
    }
}

/// A target's body.
pub type Target = fn(&[u8]);

/// The targets by name, for replaying inputs.
pub const TARGETS: [(&str, Target); 4] =
    [("ir_text", ir_text), ("mutant", mutant), ("valid_ir", valid_ir), ("program", program)];
