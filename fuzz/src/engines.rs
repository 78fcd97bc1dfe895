//! Fuzzing the engines against each other with generated programs.

use flowc_lang::pe;
use flowc_passes::versions::{Stage, Version, Wanted};
use flowc_tests::engines::{self, Outcome};
use flowc_tests::gen;
use flowc_trace::jit::Options;

/// The first disagreement on generated program `seed`, if any: the engine
/// and both outcomes. Call on a thread with a big stack.
pub fn disagreement(seed: u64) -> Option<String> {
    disagreement_on(&gen::program(seed))
}

/// [`disagreement`] on program `p`.
pub fn disagreement_on(p: &flowc_lang::Program) -> Option<String> {
    let p = p.clone();
    let (label, env) = engines::start(&p);
    let expected = engines::reference_with_margin(&p, label, &env)?;
    let differs =
        |engine: &str, got: Outcome| (got != expected).then(|| format!("{engine}: {got:?}, reference: {expected:?}"));
    let module = engines::lower(&p, label);
    if let Some(d) = differs("ir", engines::ir(&module, &env)) {
        return Some(d);
    }
    // Both versions, compacted, as `build` compiles them; the generic one
    // run after the last pass and after compaction.
    let last = flowc_passes::PIPELINE.last().map(|p| p.name);
    let mut found = None;
    let versions = flowc_passes::versions::pipeline(module, &Default::default(), Wanted::Both, |v, stage, m| {
        let at = match stage {
            Stage::Pass(pass) if Some(pass.name) == last => "ir after the passes",
            Stage::Compacted => "ir after compaction",
            Stage::Pass(_) => return,
        };
        if v == Version::Generic && found.is_none() {
            found = differs(at, engines::ir(m, &env));
        }
    });
    if found.is_some() {
        return found;
    }
    if let Some(d) = differs("native", engines::native(&versions, &env)) {
        return Some(d);
    }
    // Tiered, every function tiering up mid-run: as a whole (at once and
    // in the background), and region by region as huge functions are
    // (every function split into small regions).
    let tiered = |after, background, split| {
        let tiering = flowc_codegen::tiers::Tiering { after, region_after: after, background };
        flowc_codegen::Options { tiering: Some(tiering), split, ..Default::default() }
    };
    let tierings = [
        ("native tiered (1)", tiered(1, false, None)),
        ("native tiered (3)", tiered(3, true, None)),
        ("native tiered by region (1, regions of 4)", tiered(1, false, Some(4))),
        ("native tiered by region (2, regions of 12)", tiered(2, false, Some(12))),
    ];
    for (how, options) in tierings {
        if let Some(d) = differs(how, engines::native_tiered(&versions, &env, options).0) {
            return Some(d);
        }
    }
    for threshold in [1, 2, 5] {
        let options = Options { threshold, bridge_threshold: 1, ..Options::default() };
        if let Some(d) = differs(&format!("jit (threshold {threshold})"), engines::jit(&p, label, &env, options)) {
            return Some(d);
        }
    }
    // Code judged at every entry: most loops given up for not paying and
    // left to the interpreter, whose hot recursive calls it hands to
    // compiled code (compiler/trace/src/jit/calls.rs).
    let options = Options { threshold: 2, bridge_threshold: 1, judge_after: 1, ..Options::default() };
    if let Some(d) = differs("jit (judged at every entry)", engines::jit(&p, label, &env, options)) {
        return Some(d);
    }
    // Joins wherever one could start (compiler/trace/src/jit/joins.rs):
    // every exit to a label in one frame, nothing promoted or virtual,
    // records or jumps to the label's trace instead of a bridge.
    for background in [false, true] {
        let options =
            Options { threshold: 2, bridge_threshold: 1, join_after: Some(0), background, ..Options::default() };
        let how = if background { "jit (joins everywhere, in the background)" } else { "jit (joins everywhere)" };
        if let Some(d) = differs(how, engines::jit(&p, label, &env, options)) {
            return Some(d);
        }
    }
    // A cache of two pieces, flushed whenever the interpreter did more
    // than its code since it was found full: every table of pieces and
    // exits dropped and made again, on the running thread and with jobs
    // in the worker's hands.
    for background in [false, true] {
        let options = Options {
            threshold: 2,
            bridge_threshold: 1,
            max_traces: 2,
            full_window: 1,
            background,
            ..Options::default()
        };
        let how =
            if background { "jit (a cache of two pieces, in the background)" } else { "jit (a cache of two pieces)" };
        if let Some(d) = differs(how, engines::jit(&p, label, &env, options)) {
            return Some(d);
        }
    }
    // Traces optimized on a second thread, installed as they are done.
    let options = Options { threshold: 2, bridge_threshold: 1, background: true, ..Options::default() };
    if let Some(d) = differs("jit (threshold 2, in the background)", engines::jit(&p, label, &env, options)) {
        return Some(d);
    }
    // Started late, as `flowc run` does: the interpreter pauses at a
    // block's start and the JIT takes the frames over (the second time
    // from a light start, where the program promotes nothing).
    for (warmup, light) in [(1, false), (9, true)] {
        let options = Options { threshold: 2, bridge_threshold: 1, ..Options::default() };
        let got = engines::jit_late(&p, label, &env, options, warmup, light).0;
        if let Some(d) = differs(&format!("jit (after {warmup}{})", if light { ", light" } else { "" }), got) {
            return Some(d);
        }
    }
    for k in 0..=env.len().min(2) {
        let (statics, dynamic) = env.split_at(k);
        if let Ok(r) = pe::specialize(&p, label, statics, 5_000) {
            let got = engines::reference(&r.program(&p), r.entry, dynamic);
            if let Some(d) = differs(&format!("pe ({k} static)"), got) {
                return Some(d);
            }
        }
    }
    None
}
