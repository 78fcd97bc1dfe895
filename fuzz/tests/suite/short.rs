//! The fuzzers, briefly: they must find nothing, and really exercise what
//! they fuzz.

#[test]
fn the_checker_answers_every_damaged_text() {
    let report = flowc_fuzz::checker::run(0, 2_000);
    assert!(report.panics.is_empty(), "panicking inputs: {:?}", report.panics.first());
    assert_eq!(report.inputs, report.parse_errors + report.invalid + report.valid);
    // Damage reaches the checker, and the checker finds some of it.
    assert!(report.invalid > 50, "{report:?}");
    assert!(report.parse_errors > 50, "{report:?}");
}

#[test]
fn every_mutant_class_is_killed() {
    let report = flowc_codegen::with_stack(|| flowc_fuzz::kill::run(0, 20_000));
    let survivors: Vec<String> = report
        .survivors
        .iter()
        .take(3)
        .map(|s| format!("{} (seed {}): {}\n{}", s.class.name(), s.seed, s.said, s.text))
        .collect();
    assert!(report.all_killed(), "{}\n{}\npanics: {:?}", report.table(), survivors.join("\n"), report.panics);
    // Every class was tried in earnest, on every kind of subject.
    for c in flowc_fuzz::mutants::Class::ALL {
        assert!(report.classes[&c].made >= 100, "few {} mutants:\n{}", c.name(), report.table());
    }
    for origin in ["front end", "after a pass", "trace", "bridge"] {
        assert!(report.subjects.get(origin).is_some_and(|n| *n > 0), "no {origin} subject:\n{}", report.table());
    }
}

#[test]
fn the_engines_agree_on_generated_programs() {
    let disagreements: Vec<String> = flowc_codegen::with_stack(|| {
        (10_000..10_100)
            .filter_map(|seed| flowc_fuzz::engines::disagreement(seed).map(|d| format!("{seed}: {d}")))
            .collect()
    });
    assert!(disagreements.is_empty(), "{disagreements:?}");
}

#[test]
fn the_engines_agree_on_allocation_heavy_programs_when_collecting_at_every_allocation() {
    let disagreements: Vec<String> = flowc_codegen::with_stack(|| {
        flowc_lang::heap::with(|h| h.set_stress(true));
        (0..20)
            .filter_map(|seed| {
                let p = flowc_tests::gen::alloc_program(seed);
                flowc_fuzz::engines::disagreement_on(&p).map(|d| format!("{seed}: {d}"))
            })
            .collect()
    });
    assert!(disagreements.is_empty(), "{disagreements:?}");
}

#[test]
fn the_engines_agree_on_allocation_heavy_programs_with_huge_main_graphs() {
    // A residual program's shape (`gen::huge`): the main graph, huge as
    // the front end lowers it, solves the fields only it writes itself.
    let disagreements: Vec<String> = flowc_codegen::with_stack(|| {
        (0..20)
            .filter_map(|seed| {
                let p = flowc_tests::gen::huge(flowc_tests::gen::alloc_program(seed));
                let (label, _) = flowc_tests::engines::start(&p);
                let main = flowc_tests::engines::lower(&p, label);
                assert!(main.main().is_some_and(|f| f.is_huge()), "seed {seed}: the main graph is not huge");
                flowc_fuzz::engines::disagreement_on(&p).map(|d| format!("{seed}: {d}"))
            })
            .collect()
    });
    assert!(disagreements.is_empty(), "{disagreements:?}");
}

/// Runs `run` on seeds 0..300 (on a big stack): the problems found, and
/// how many runs ended the way `wanted` says.
fn over_seeds<T>(run: fn(u64) -> Result<T, String>, wanted: fn(&T) -> bool) -> (Vec<String>, usize) {
    flowc_codegen::with_stack(|| {
        let mut problems = Vec::new();
        let mut count = 0;
        for seed in 0..300 {
            match run(seed) {
                Err(p) => problems.push(format!("{seed}: {p}")),
                Ok(end) => count += wanted(&end) as usize,
            }
        }
        (problems, count)
    })
}

#[test]
fn generated_valid_ir_survives_every_consumer() {
    let (problems, printed) =
        over_seeds(flowc_fuzz::valid::run, |o| matches!(o, flowc_tests::engines::Outcome::Output(_)));
    assert!(problems.is_empty(), "{problems:?}");
    // The modules run, not only fail early: many print their result.
    assert!(printed > 100, "{printed} of 300 printed");
}

#[test]
fn generated_traces_leave_alike_interpreted_and_compiled() {
    let (problems, left) = over_seeds(flowc_fuzz::valid::run_trace, |end| end.is_ok());
    assert!(problems.is_empty(), "{problems:?}");
    // Most leave by a guard or an exit rather than an error.
    assert!(left > 200, "{left} of 300 left by a guard or an exit");
}
