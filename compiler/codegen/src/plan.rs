//! What code each function and trace gets, decided in one place.
//!
//! A [`Plan`] says, for one function or trace about to be defined:
//! - its **shape**: one Cranelift function, or regions that are functions
//!   of their own with a driver ([`Shape`]; huge functions, cold ones,
//!   tier-0 code);
//! - how **Cranelift compiles** it ([`Codegen`]: optimized, cheap, or the
//!   baseline compiler for traces);
//! - whether it is **lowered for compile time** (every operation of an
//!   object through the runtime, slow paths where they fall, a block's
//!   stops tested once), and which of its blocks are **cold** (no inline
//!   paths): [`Plan::cold`], [`Plan::inline_objects`];
//! - whether its loops may get an **optimistic copy**
//!   ([`Plan::optimistic`]);
//! - when its runtime calls' stops are tested ([`Plan::defer_stops`]);
//! - whether it is **tiered**, as a whole ([`Plan::tiered`]) or region by
//!   region ([`Plan::by_region`], [`Plan::region_tier1`]).
//!
//! [`crate::define`] and [`crate::lower`] ask the plan: changing which
//! code gets inline paths is a change to this file. What the plan reads
//! of a block comes from the function's facts ([`crate::lower::Facts`]:
//! which blocks lie on hot cycles, whether the function's runs are known,
//! every block cold for tier-0 code), and a trace the baseline compiler
//! refuses is compiled cheaply instead by the trace cache. Every
//! threshold these decisions read is in [`policy`], with
//! why it is what it is (docs/architecture.md, "Thresholds and what set
//! them", has the measurements).

use flowc_ir::{Function, FunctionKind};

use crate::compile::Codegen;
use crate::lower::Facts;

/// The thresholds of code generation, one row each.
pub mod policy {
    /// How many times a block may run per run of the program and still
    /// be compiled for compile time rather than speed (no inline paths, no
    /// optimistic copy). An inline path saves a few nanoseconds per run
    /// over a runtime call and costs some 30 Cranelift instructions of
    /// optimized compiling: it pays back after thousands of runs, if at
    /// all.
    pub const COLD_RUNS: u32 = 1000;

    /// How many instructions a region of a split function holds at most
    /// ([`flowc_ir::regions`]): Cranelift's structures for the regions on
    /// their way ([`IN_FLIGHT`]) are what compiling a huge function holds
    /// beyond the IR, and smaller regions cost no more time.
    pub const REGION_INSTS: usize = 250;

    /// How big a loop nest may be and still stay whole in one region: a
    /// loop cut by a region boundary leaves and re-enters a function every
    /// iteration, and reads values from the frame instead of registers; a
    /// bigger bound raises the peak memory of compiling huge programs.
    pub const REGION_LOOP_INSTS: usize = 1000;

    /// [`REGION_INSTS`] and [`REGION_LOOP_INSTS`] for a function whose
    /// code is all cold and that is not huge: its loops run a few times,
    /// so a nest of more than this many instructions is cut like
    /// straight-line code, and its regions are smaller. Its largest
    /// region's Cranelift structures are a cost that does not shrink with
    /// the program, and a program this small pays for it out of a budget
    /// of a kilobyte per statement (a huge function amortizes it).
    pub const COLD_REGION_INSTS: usize = 125;
    pub const COLD_REGION_LOOP_INSTS: usize = 250;

    /// How many instructions on cycles a function (not a trace) may have
    /// and still get an optimistic copy. The copy doubles what its loops
    /// cost to compile, and what it saves is a tag test per operation
    /// whose operand it takes to be small — much in a small loop whose
    /// time those tests are a fair part of, little in a big one. A trace
    /// keeps its copy whatever its size: the JIT compiles only loops that
    /// have proved hot, and traces' values come from guards that know
    /// more.
    pub const OPTIMISTIC_COPY_INSTS: usize = 100;

    /// How many calls or iterations tiered code runs in tier 0 before its
    /// optimized tier is compiled at once ([`crate::tiers::Tiering::after`]):
    /// the bound below which code counts as cold ([`COLD_RUNS`]), for the
    /// same reason. Tier 0 runs some ten times slower than the optimized
    /// tier, which costs about as much to compile as tier 0 spends on each
    /// of its statements in a thousand runs: tiering up then at most
    /// doubles what the code would have cost compiled optimized from the
    /// start (the rent-or-buy bound), and saves all of the compile for
    /// code that runs less.
    pub const TIER_UP_AFTER: u32 = COLD_RUNS;

    /// [`TIER_UP_AFTER`] when the optimized tier is compiled in the
    /// background: the running thread pays only for lowering, a tenth of
    /// the compile, so it may start earlier.
    pub const TIER_UP_AFTER_IN_BACKGROUND: u32 = 200;

    /// How many entries and hot loop iterations a region of a function
    /// tiered region by region ([`crate::plan::Plan::by_region`]) runs in
    /// tier 0 before its optimized tier is compiled, in the background:
    /// a hundred times [`TIER_UP_AFTER_IN_BACKGROUND`]. A region entered
    /// or iterated this often may run only a small loop of its up to
    /// [`REGION_LOOP_INSTS`] instructions, and a huge function has
    /// hundreds of regions that reach a function's threshold: compiled in
    /// the order they reach it, one at a time, the hottest came late.
    pub const REGION_TIER_UP_AFTER_IN_BACKGROUND: u32 = 100 * TIER_UP_AFTER_IN_BACKGROUND;

    /// [`REGION_TIER_UP_AFTER_IN_BACKGROUND`] when the optimized tier is
    /// compiled at once, on the running thread: three hundred times
    /// [`TIER_UP_AFTER`]. A region compiled optimized costs some 8 ms
    /// there, which only the hottest regions win back.
    pub const REGION_TIER_UP_AFTER: u32 = 300 * TIER_UP_AFTER;

    /// Below this many IR instructions in all, functions are compiled on
    /// one thread: a second thread's allocator arenas and stack cost
    /// memory that small programs do not win back in time.
    pub const PARALLEL_INSTS: usize = 20_000;

    /// How many lowered functions may wait for the worker or be compiled
    /// by it at once: two, so that it takes the next as soon as it is
    /// done while the lowering thread compiles what comes after
    /// ([`crate::compile`]). With one, the worker waited for the
    /// lowering thread's own compile to end: `compile_shapes`'
    /// `loops_in_sequence`, code generation 131 against 115 ms, the
    /// process's peak the same (48.4 and 48.6 MB).
    pub const IN_FLIGHT: usize = 2;

    /// How many functions the lowering thread compiled itself may wait,
    /// compiled, for the one at the worker before them
    /// ([`crate::compile`]): one made it wait for the worker often
    /// (`loops_in_sequence`'s code generation 136 against 110-117 ms), four
    /// and eight gained nothing and hold more.
    pub const AHEAD: usize = 2;
}

/// How a function's code is laid out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One Cranelift function.
    Whole,
    /// Regions of at most `max` instructions (loop nests of up to
    /// `max_loop` kept whole), each a function of its own compiled
    /// cheaply (a region's optimized tier, and in code that never tiers
    /// up a hot region: [`Plan::region_tier1`], [`Plan::hot_region`]),
    /// and a driver that calls the first ([`crate::lower::frame`]).
    Regions { max: usize, max_loop: usize },
}

/// What code a function or trace gets (see the module docs).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub shape: Shape,
    /// Which code generator compiles it, with which settings (a split
    /// function's regions: Cranelift's cheap ones, but for a region's
    /// optimized tier).
    pub codegen: Codegen,
    /// Lowered for compile time: a huge function, or a split one's
    /// regions (forced splits in tests included, so they run what huge
    /// functions run), but for a region's optimized tier.
    pub for_compile_time: bool,
    /// Its loops may get an optimistic copy ([`crate::lower`]'s module
    /// docs; which of its instructions may leave the copy is
    /// [`crate::lower::optimistic`]'s to say). Not a huge function's (the
    /// copy's variables cost Cranelift's SSA builder memory per variable
    /// and block), nor a trace's compiled by anything but the optimizing
    /// settings, nor a function's (a trace keeps its copy whatever its
    /// size) with more than [`policy::OPTIMISTIC_COPY_INSTS`] instructions
    /// on cycles.
    pub optimistic: bool,
    /// Its hot loops get inline paths ([`Plan::cold`]). Not the tier-0
    /// code of a function tiered region by region ([`Plan::by_region`]):
    /// each of its regions that proves hot is compiled optimized on its
    /// own, so tier 0 is compiled for compile time in its loops too, but
    /// for the fields of proven objects ([`Plan::inline_proven_fields`],
    /// which add no block but a stop test). A main graph of 5,000 small loops counted
    /// from the input (`compile_shapes`' `loops_in_sequence`) took twice
    /// as long to compile with them, and most such loops run a few times.
    pub hot_paths: bool,
}

impl Plan {
    /// The plan of `f`, with `facts`: a trace compiled by `trace_tier`
    /// (the trace cache's choice), a function split into regions of
    /// `split` instructions when the tests force it.
    pub fn of(f: &Function, facts: &Facts, split: Option<usize>, trace_tier: Option<Codegen>) -> Plan {
        let cold = facts.all_cold();
        let huge = f.is_huge();
        if f.kind != FunctionKind::Trace && (huge || split.is_some() || (cold && f.insts.len() > policy::REGION_INSTS))
        {
            let (max, max_loop) = match split {
                Some(n) => (n, n),
                None if cold && !huge => (policy::COLD_REGION_INSTS, policy::COLD_REGION_LOOP_INSTS),
                None => (policy::REGION_INSTS, policy::REGION_LOOP_INSTS),
            };
            return Plan::regions(max, max_loop);
        }
        let codegen = match trace_tier {
            Some(tier) if f.kind == FunctionKind::Trace => tier,
            _ if huge || cold => Codegen::Cheap,
            _ => Codegen::Optimized,
        };
        let optimistic = !huge
            && trace_tier.is_none_or(|t| t == Codegen::Optimized)
            && (f.kind == FunctionKind::Trace
                || f.all_insts().filter(|&(b, _)| facts.on_cycle(b)).count() <= policy::OPTIMISTIC_COPY_INSTS);
        Plan { shape: Shape::Whole, codegen, for_compile_time: huge, optimistic, hot_paths: true }
    }

    /// The plan of a function split into regions of at most `max`
    /// instructions (loop nests of up to `max_loop` whole).
    fn regions(max: usize, max_loop: usize) -> Plan {
        Plan {
            shape: Shape::Regions { max, max_loop },
            codegen: Codegen::Cheap,
            for_compile_time: true,
            optimistic: false,
            hot_paths: true,
        }
    }

    /// The plan of a tiered function's tier-0 code ([`crate::tiers`]):
    /// split like a cold function (every block is cold in the facts
    /// tier 0 is lowered with: `Facts::every_block_cold`).
    pub fn tier0() -> Plan {
        Plan::regions(policy::COLD_REGION_INSTS, policy::COLD_REGION_LOOP_INSTS)
    }

    /// Whether a block is cold — lowered without inline paths, its
    /// runtime calls' stops tested once — given whether it lies on a hot
    /// cycle (`on_cycle`) and whether the function's runs per run of the
    /// program are known (then code on no hot cycle runs at most
    /// [`policy::COLD_RUNS`] times in all). Code that runs at most once
    /// per call or that many times per run is small and quick to compile
    /// that way: only hot loops pay back inline paths' size. Every block
    /// is cold in code whose hot loops get none ([`Plan::hot_paths`]).
    pub fn cold(&self, on_cycle: bool, runs_known: bool) -> bool {
        !self.hot_paths || ((self.for_compile_time || runs_known) && !on_cycle)
    }

    /// Whether a block (`cold` as [`Plan::cold`] says) reads and writes
    /// objects' fields and allocates in line. Not in code lowered for
    /// compile time: the inline paths' blocks and branches made
    /// Cranelift's work on huge functions three times longer.
    pub fn inline_objects(&self, cold: bool) -> bool {
        !self.for_compile_time && !cold
    }

    /// Whether a block (`cold` as [`Plan::cold`] says, on a hot cycle or
    /// not: `on_cycle`) reads and writes the fields of objects the
    /// optimizer proved objects (`get.object`, `set.object`) in line:
    /// wherever [`Plan::inline_objects`] says, and in the hot loops of
    /// code lowered for compile time too (tier-0 code whose hot loops
    /// get no other inline path included: [`Plan::hot_paths`]), where
    /// that path is a load and a test (a write of a bound value: a store)
    /// and no block more than the runtime call it saves. A partially
    /// evaluated interpreter's residual program, one huge function, spent
    /// a fifth of its run in the runtime's `get`.
    pub fn inline_proven_fields(&self, cold: bool, on_cycle: bool) -> bool {
        !cold || on_cycle
    }

    /// Whether a block (`cold` as [`Plan::cold`] says) computes `//` and
    /// `%` of small integers in line, in every form. Not in cold code:
    /// their inline paths are the biggest of any operation (a remainder by
    /// a constant is three blocks and a general path), which only hot
    /// loops pay back — tier 0 of a function whose field reads became
    /// known small integers took three times the machine code and twice
    /// the compile time for them (`compile_shapes`'
    /// `function_with_hot_loop`).
    pub fn inline_division(&self, cold: bool) -> bool {
        !cold
    }

    /// Whether slow paths are placed after the hot code. Not in code
    /// lowered for compile time: its register allocator (the single-pass
    /// one) walks the blocks backwards and holds every value used in a
    /// block it has seen but defined in one it has not, so slow paths
    /// gathered at the end kept thousands of values live across the whole
    /// function.
    pub fn slow_paths_last(&self) -> bool {
        !self.for_compile_time
    }

    /// Whether a block (`cold` as [`Plan::cold`] says) tests the stops of
    /// its runtime calls once, at its end ([`crate::lower`]'s
    /// `flush_stop`), rather than after each.
    pub fn defer_stops(&self, cold: bool) -> bool {
        self.for_compile_time || cold
    }

    /// Whether `f`, with `facts`, is compiled in tiers region by region
    /// when code is (`tiering`; [`crate::tiers`]): a huge function (or, in
    /// tests, one whose split is forced: `forced_split`) that is neither a
    /// trace nor all cold. Its whole optimized tier would cost what
    /// compiling huge functions for compile time exists to avoid, so each
    /// region that proves hot is compiled optimized on its own
    /// ([`Plan::region_tier1`]).
    pub fn by_region(f: &Function, facts: &Facts, tiering: bool, forced_split: bool) -> bool {
        tiering && f.kind != FunctionKind::Trace && !facts.all_cold() && (f.is_huge() || forced_split)
    }

    /// The plan of the optimized tier of one region of a split function
    /// tiered region by region ([`Plan::by_region`]): the same regions
    /// (same frame, same entries), compiled for speed — Cranelift's
    /// optimizing settings, inline paths in hot blocks, slow paths last.
    /// No optimistic copy: a region's loops are entered from the frame.
    pub fn region_tier1(&self) -> Plan {
        Plan {
            shape: self.shape,
            codegen: Codegen::Optimized,
            for_compile_time: false,
            optimistic: false,
            hot_paths: true,
        }
    }

    /// Whether region `region` of `regions` holds a block on a hot cycle
    /// (`on_cycle`): in code that never tiers up — built ahead of time
    /// (`flowc build`), run without tiering, or a huge function compiled
    /// for the JIT's traces to call — such a region is
    /// compiled as the optimized tier of a function tiered region by
    /// region would compile it once it proved hot ([`Plan::region_tier1`]),
    /// and the others for compile time. A huge function's hot loops are
    /// where its time goes, and an executable has no compiler to tier
    /// them up with: the tutorial BF interpreter partially evaluated for
    /// fractal 5, built, ran 2.0 s with every region compiled for compile
    /// time, against 1.25 s tiered in memory. What that costs stays linear
    /// in the program: each region is at most [`policy::REGION_LOOP_INSTS`]
    /// instructions (that program built in 2.4 s instead of 0.9).
    pub fn hot_region(
        regions: &flowc_ir::regions::Regions,
        region: usize,
        on_cycle: impl Fn(flowc_ir::BlockId) -> bool,
    ) -> bool {
        regions.members(region).any(|p| on_cycle(regions.piece(p).block))
    }

    /// The plan of the tier-0 code of a function tiered region by region
    /// ([`Plan::by_region`]) whose plan is this one: without inline paths
    /// in its hot loops ([`Plan::hot_paths`]).
    pub fn region_tier0(&self) -> Plan {
        Plan { hot_paths: false, ..*self }
    }

    /// Whether `f`, with `facts`, is compiled in tiers when code is
    /// (`tiering`): not a trace, not huge (huge functions are tiered
    /// region by region: [`Plan::by_region`]), and a function called by name that is not
    /// all cold, or a main graph with hot loops. Small functions are
    /// tiered too: even the smallest costs the optimized pipeline's
    /// memory, and tier 0 is cheap for them.
    pub fn tiered(f: &Function, facts: &Facts, tiering: bool) -> bool {
        tiering && {
            let callable = f.kind == FunctionKind::Function;
            let hot = !facts.all_cold() && (callable || !facts.hot_headers().is_empty());
            f.kind != FunctionKind::Trace && !f.is_huge() && hot
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A loop of `adds` additions of the parameter to a running total
    /// (each `add.int` may leave the small integers), in a function of
    /// `kind` (`main` or `trace`).
    pub(crate) fn looping(kind: &str, adds: usize) -> Function {
        let mut body = String::new();
        let mut last = 1;
        for k in 0..adds {
            body.push_str(&format!("    v{}:t = add.int v{last}, v0\n", 10 + k));
            last = 10 + k;
        }
        let text = format!(
            "{kind} start(v0:n) {{\nb0 start:\n    jump b1\nb1 loop:\n    v1:t = phi [b0: 1, b2: v{last}]\n    \
             v2:c = lt v1, v0\n    branch v2, b2, b3\nb2 body:\n{body}    jump b1\nb3 done:\n    print v1\n}}\n"
        );
        flowc_ir::parse::module("test", &text).expect("parses").functions.remove(0)
    }

    fn plan(f: &Function, trace_tier: Option<Codegen>) -> Plan {
        Plan::of(f, &Facts::new(f), None, trace_tier)
    }

    #[test]
    fn a_hot_loop_is_compiled_whole_and_optimized_with_its_optimistic_copy() {
        let f = looping("main", 10);
        let p = plan(&f, None);
        assert_eq!(
            p,
            Plan {
                shape: Shape::Whole,
                codegen: Codegen::Optimized,
                for_compile_time: false,
                optimistic: true,
                hot_paths: true
            }
        );
        // Its loop's blocks get inline paths, the code around them too
        // (its runs per run are not known).
        let facts = Facts::new(&f);
        let on = |b: usize| facts.on_cycle(f.layout[b]);
        assert!(!p.cold(on(1), false) && p.inline_objects(p.cold(on(1), false)));
        assert!(!p.cold(on(0), false), "runs unknown: not cold");
        assert!(p.cold(on(0), true), "runs known, on no cycle: cold");
    }

    #[test]
    fn loops_over_the_budget_get_no_optimistic_copy_but_a_trace_keeps_its_own() {
        let over = policy::OPTIMISTIC_COPY_INSTS;
        assert!(!plan(&looping("main", over), None).optimistic);
        assert!(plan(&looping("trace", over), Some(Codegen::Optimized)).optimistic);
        // A trace compiled by the baseline compiler, or cheaply, has none.
        let cheap = plan(&looping("trace", 3), Some(Codegen::Cheap));
        assert_eq!(
            cheap,
            Plan {
                shape: Shape::Whole,
                codegen: Codegen::Cheap,
                for_compile_time: false,
                optimistic: false,
                hot_paths: true
            }
        );
        assert_eq!(plan(&looping("trace", 3), Some(Codegen::Baseline)).codegen, Codegen::Baseline);
    }

    #[test]
    fn huge_and_split_functions_are_regions_lowered_for_compile_time() {
        let huge = looping("main", flowc_ir::HUGE_INSTS);
        let p = plan(&huge, None);
        let regions = Shape::Regions { max: policy::REGION_INSTS, max_loop: policy::REGION_LOOP_INSTS };
        assert_eq!(
            p,
            Plan {
                shape: regions,
                codegen: Codegen::Cheap,
                for_compile_time: true,
                optimistic: false,
                hot_paths: true
            }
        );
        // Even its blocks on cycles read objects through the runtime, and
        // test stops once per block.
        assert!(!p.inline_objects(p.cold(true, false)) && p.defer_stops(false) && !p.slow_paths_last());
        // Traces are never split, however big: lowered for compile time.
        let trace = plan(&looping("trace", flowc_ir::HUGE_INSTS), Some(Codegen::Baseline));
        assert_eq!((trace.shape, trace.for_compile_time), (Shape::Whole, true));
        // The tests' forced split.
        let small = looping("main", 3);
        let forced = Plan::of(&small, &Facts::new(&small), Some(7), None);
        assert_eq!(forced.shape, Shape::Regions { max: 7, max_loop: 7 });
        // Tier-0 code: a cold function's regions.
        let cold = Shape::Regions { max: policy::COLD_REGION_INSTS, max_loop: policy::COLD_REGION_LOOP_INSTS };
        assert_eq!(Plan::tier0().shape, cold);
    }

    #[test]
    fn hot_functions_and_main_graphs_with_hot_loops_are_tiered() {
        let hot = looping("main", 3);
        assert!(Plan::tiered(&hot, &Facts::new(&hot), true));
        assert!(!Plan::tiered(&hot, &Facts::new(&hot), false), "not when nothing is tiered");
        let trace = looping("trace", 3);
        assert!(!Plan::tiered(&trace, &Facts::new(&trace), true));
        let huge = looping("main", flowc_ir::HUGE_INSTS);
        assert!(!Plan::tiered(&huge, &Facts::new(&huge), true));
        // A main graph whose loop runs once in all: all cold, not tiered,
        // compiled cheaply.
        let facts = Facts::new(&hot).with_runs(&hot, Some(1)).every_block_cold();
        assert!(!Plan::tiered(&hot, &facts, true));
        assert_eq!(Plan::of(&hot, &facts, None, None).codegen, Codegen::Cheap);
    }

    #[test]
    fn a_function_tiered_region_by_region_has_no_inline_paths_in_tier_0_but_proven_fields() {
        let huge = looping("main", flowc_ir::HUGE_INSTS);
        let facts = Facts::new(&huge);
        assert!(Plan::by_region(&huge, &facts, true, false));
        let p = plan(&huge, None);
        let tier0 = p.region_tier0();
        // Compiled for compile time everywhere, its hot loops too (where
        // the huge function's plan gives them inline paths), but for the
        // fields of proven objects on its hot cycles.
        assert!(!p.cold(true, false) && tier0.cold(true, false) && tier0.cold(false, false));
        assert!(tier0.inline_proven_fields(tier0.cold(true, false), true));
        assert!(!tier0.inline_proven_fields(tier0.cold(false, false), false));
        assert!(!tier0.inline_division(tier0.cold(true, false)));
        // Its regions' optimized tier has them all.
        let tier1 = tier0.region_tier1();
        assert!(!tier1.cold(true, false) && tier1.inline_division(tier1.cold(true, false)));
        assert_eq!((tier0.shape, tier1.shape), (p.shape, p.shape));
    }
}
