//! The checker's kill rate: structured mutants ([`crate::mutants`]) of the
//! IR the project makes, counted per class — made, and rejected with the
//! class's expected rule.
//!
//! Subjects come from generated programs (`flowc_tests::gen::program`):
//! the front end's module, the module after each of the eight passes, and
//! the traces and bridges the JIT compiles at eager thresholds — for the
//! plain and the allocation-heavy program of each seed. Each subject gets
//! [`PER_SUBJECT`] (traces: [`PER_TRACE`]) attempts per class, every attempt seeded
//! from (program seed, subject, class, attempt), so a survivor is
//! reproduced by its seed alone. Call on a thread with a big stack
//! (`flowc_codegen::with_stack`): the JIT compiles traces.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use flowc_ir::{FunctionKind, Module};
use flowc_tests::engines;
use flowc_tests::gen;
use flowc_tests::rng::Rng;
use flowc_trace::jit::{Jit, Options};

use crate::mutants::{judge, mutate, Class, Expected, Mutant, Subject};

/// Attempts per class and subject, for modules.
pub const PER_SUBJECT: u64 = 2;
/// Attempts per class and subject for traces and bridges, which are fewer
/// than modules and alone have guards and resume data to break.
pub const PER_TRACE: u64 = 8;

/// The mutants of one class.
#[derive(Clone, Debug, Default)]
pub struct ClassCount {
    pub made: u64,
    /// Rejected with the expected rule (or parse error).
    pub killed: u64,
}

/// A mutant the checker did not reject as expected.
#[derive(Clone, Debug)]
pub struct Survivor {
    pub seed: u64,
    pub class: Class,
    pub origin: String,
    /// What the checker said instead.
    pub said: String,
    /// The mutated function, printed (when printing it does not fail).
    pub text: String,
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub classes: BTreeMap<Class, ClassCount>,
    /// Subjects by origin: `front end`, `after <pass>`, `trace`, `bridge`.
    pub subjects: BTreeMap<String, u64>,
    /// Programs the subjects came from.
    pub programs: u64,
    pub survivors: Vec<Survivor>,
    /// Mutations or checks that panicked, as (seed, class, origin).
    pub panics: Vec<(u64, Class, String)>,
}

impl Report {
    pub fn mutants(&self) -> u64 {
        self.classes.values().map(|c| c.made).sum()
    }

    /// Whether every class made mutants and killed them all.
    pub fn all_killed(&self) -> bool {
        Class::ALL.iter().all(|c| self.classes.get(c).is_some_and(|n| n.made > 0 && n.killed == n.made))
            && self.panics.is_empty()
    }

    /// The table the `kill` command prints.
    pub fn table(&self) -> String {
        let mut out = format!("{:<32} {:<18} {:>8} {:>8} {:>8}\n", "class", "expected", "made", "killed", "rate");
        for c in Class::ALL {
            let n = self.classes.get(&c).cloned().unwrap_or_default();
            let expected = match c.expected() {
                Expected::Rule(r) => r.name().to_owned(),
                Expected::ParseError(_) => "parse error".to_owned(),
            };
            let rate =
                if n.made == 0 { "-".to_owned() } else { format!("{:.2}%", 100.0 * n.killed as f64 / n.made as f64) };
            out.push_str(&format!("{:<32} {:<18} {:>8} {:>8} {:>8}\n", c.name(), expected, n.made, n.killed, rate));
        }
        let origins: Vec<String> = self.subjects.iter().map(|(o, n)| format!("{n} {o}")).collect();
        out.push_str(&format!(
            "{} mutants of {} subjects from {} programs ({})\n",
            self.mutants(),
            self.subjects.values().sum::<u64>(),
            self.programs,
            origins.join(", ")
        ));
        out
    }
}

/// The IR made for the generated programs of `seed` (plain and
/// allocation-heavy): front end, after each pass, traces and bridges.
pub fn subjects(seed: u64) -> Vec<Subject> {
    let mut out = subjects_of(&gen::program(seed));
    out.extend(subjects_of(&gen::alloc_program(seed)));
    out
}

fn subjects_of(p: &flowc_lang::Program) -> Vec<Subject> {
    let p = p.clone();
    let Some(label) = p.default_entry() else { return Vec::new() };
    let Ok(lowered) = flowc_frontend::lower(&p, label) else { return Vec::new() };
    let whole = |module: Module, origin: String| Subject { module, origin, focus: None };
    let mut out = vec![whole(lowered.clone(), "front end".to_owned())];
    let mut module = lowered.clone();
    let mut cx = flowc_passes::Context::new(&module);
    flowc_passes::optimize(&mut module, &mut cx, |pass, m, _| {
        out.push(whole(m.clone(), format!("after {}", pass.name)))
    });
    let (_, env) = engines::start(&p);
    let options = Options { threshold: 1, bridge_threshold: 1, ..Options::default() };
    let mut jit = Jit::new(&p, &lowered, options);
    let _ = jit.run(label, &env, &engines::config());
    // A trace with the program's functions, so its calls resolve.
    let with_functions = |f: &flowc_ir::Function, origin: &str| {
        let mut m = Module { pure: lowered.pure.clone(), immutable: lowered.immutable.clone(), functions: Vec::new() };
        m.functions.extend(lowered.functions.iter().filter(|g| g.kind == FunctionKind::Function).cloned());
        m.functions.push(f.clone());
        let focus = Some(m.functions.len() - 1);
        Subject { module: m, origin: origin.to_owned(), focus }
    };
    // A trace naming an object (a promoted one) has no text to read back.
    let printable = |f: &flowc_ir::Function| {
        let mut objects = false;
        f.clone().each_constant_mut(&mut |v| objects |= v.holds_objects());
        !objects
    };
    for (_, f) in jit.traces().into_iter().filter(|(_, f)| printable(f)) {
        out.push(with_functions(f, "trace"));
    }
    for f in jit.bridges().into_iter().filter(|f| printable(f)) {
        out.push(with_functions(f, "bridge"));
    }
    out
}

/// Mutates the IR of programs `first, first + 1, …` until at least
/// `mutants` mutants are made.
pub fn run(first: u64, mutants: u64) -> Report {
    let mut report = Report::default();
    let mut seed = first;
    while report.mutants() < mutants {
        let subjects = subjects(seed);
        report.programs += 2;
        for (n, s) in subjects.iter().enumerate() {
            *report.subjects.entry(origin_kind(&s.origin)).or_default() += 1;
            for (k, &c) in Class::ALL.iter().enumerate() {
                let attempts = if s.focus.is_some() { PER_TRACE } else { PER_SUBJECT };
                for attempt in 0..attempts {
                    let mut rng = Rng::new(mix(seed, n as u64, k as u64, attempt));
                    try_one(&mut report, seed, c, s, &mut rng);
                }
            }
        }
        seed += 1;
    }
    report
}

/// `after <pass>` subjects are counted together.
fn origin_kind(origin: &str) -> String {
    if origin.starts_with("after ") {
        "after a pass".to_owned()
    } else {
        origin.to_owned()
    }
}

fn try_one(report: &mut Report, seed: u64, c: Class, s: &Subject, rng: &mut Rng) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mutant = mutate(c, s, rng)?;
        Some((judge(&mutant, c.expected()), mutant))
    }));
    let Ok(made) = outcome else {
        report.panics.push((seed, c, s.origin.clone()));
        return;
    };
    let Some((verdict, mutant)) = made else { return };
    let count = report.classes.entry(c).or_default();
    count.made += 1;
    match verdict {
        Ok(()) => count.killed += 1,
        Err(said) => {
            let text = match &mutant {
                Mutant::Text(t) => t.clone(),
                Mutant::Module(m) => catch_unwind(AssertUnwindSafe(|| flowc_ir::print::module(m)))
                    .unwrap_or_else(|_| "(the mutant does not print)".to_owned()),
            };
            report.survivors.push(Survivor { seed, class: c, origin: s.origin.clone(), said, text });
        }
    }
}

/// One rng seed per (program, subject, class, attempt).
fn mix(seed: u64, subject: u64, class: u64, attempt: u64) -> u64 {
    let mut h = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for x in [subject, class, attempt] {
        h = (h ^ x).wrapping_mul(0xBF58_476D_1CE4_E5B9).rotate_left(31);
    }
    h
}
