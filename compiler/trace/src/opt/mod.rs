//! The SSA trace optimizer (`--optimizer ssa`, and the JIT's): one
//! forward walk over a trace's blocks (DESIGN.md "Traces"), then the
//! shared `dce` pass.
//!
//! - A loop trace (a preheader `b0` and a loop `b1`, as
//!   [`crate::to_ir`] makes them) is first peeled ([`peel`]): `b1` becomes
//!   the first iteration and a copy `b2` the loop. The walk
//!   ([`walk`]) goes through `b0`, `b1` and `b2` in order, so the loop
//!   knows everything the first iteration proved; at the loop's head the
//!   objects the first iteration left virtual stay virtual around the
//!   loop ([`state`]), with the phis of their fields' values; the loop's
//!   other phis get kinds and ranges first ([`ranges`]).
//! - A straight trace (a bridge, or a trace that ends by jumping into
//!   another) is walked once; objects still virtual at its exit stay
//!   virtual in the exit's record, and are materialized for a jump.
//!
//! Facts about the trace's inputs come from guards in `b0` (the JIT puts
//! `guard_int` there for what it speculates on, [`crate::jit`]).

mod finish;
mod peel;
mod ranges;
mod state;
mod stats;
mod virtuals;
mod walk;

use flowc_ir::{BlockId, Function, Module, Terminator};
use flowc_lang::Symbol;

pub use peel::MAX_PEELED;
pub use stats::TraceStats;

use walk::Opt;

/// The loop block of a trace: the block that jumps to itself.
fn loop_block(f: &Function) -> Option<BlockId> {
    f.layout.iter().copied().find(|&b| f.blocks[b].term == Terminator::Jump(b))
}

/// Optimizes trace `f`; `hints` holds the program's functions and its
/// `pure` and `immutable` declarations; `remove_allocations` allows
/// virtual objects.
pub fn optimize(f: &mut Function, hints: &Module, remove_allocations: bool) {
    match loop_block(f) {
        Some(body) if f.layout.len() == 2 && f.layout[1] == body => optimize_loop(f, hints, remove_allocations, body),
        None if f.layout.len() == 1
            && matches!(f.blocks[f.entry].term, Terminator::Exit { .. } | Terminator::JumpTrace { .. }) =>
        {
            optimize_straight(f, hints, remove_allocations)
        }
        _ => return,
    }
    let mut module =
        Module { pure: hints.pure.clone(), immutable: hints.immutable.clone(), functions: vec![f.clone()] };
    flowc_passes::dce::function(&mut module, 0);
    *f = module.functions.pop().expect("the trace");
}

fn optimize_loop(f: &mut Function, hints: &Module, remove_allocations: bool, body: BlockId) {
    let original = f.clone();
    // Variables carried round the loop as real objects, after a mismatch.
    let mut real: Vec<Symbol> = Vec::new();
    loop {
        let mut g = original.clone();
        let (chain, lp) = match peel::peel(&mut g, body) {
            Some(copy) => (vec![g.entry, body], copy),
            None => (vec![g.entry], body),
        };
        let mut o = Opt::new(&mut g, hints, remove_allocations);
        let pred = *chain.last().expect("a preheader");
        for &b in &chain {
            o.run(b);
            if b != pred {
                o.install(b);
            }
        }
        let header = o.enter_loop(lp, pred, &real);
        o.install(pred);
        o.run(lp);
        match o.close_loop(header) {
            Ok(()) => {
                o.install(lp);
                o.trivial_phis(lp);
                o.share_records();
                *f = g;
                return;
            }
            Err(vars) => {
                let before = real.len();
                real.extend(vars.into_iter().filter(|v| !real.contains(v)).collect::<Vec<_>>());
                if real.len() == before {
                    // Cannot happen (each mismatch names a variable still
                    // carried virtual); never loop: carry everything real.
                    let names = original.values.iter().filter_map(|(_, v)| v.name);
                    real.extend(names);
                }
            }
        }
    }
}

fn optimize_straight(f: &mut Function, hints: &Module, remove_allocations: bool) {
    let b = f.entry;
    let mut o = Opt::new(f, hints, remove_allocations);
    o.run(b);
    match o.f.blocks[b].term.clone() {
        Terminator::Exit { resume, .. } => {
            // Objects still virtual at the exit stay virtual in its record.
            let record = o.snapshot(resume);
            o.f.resumes[resume] = record;
        }
        Terminator::JumpTrace { target, args } => {
            let args = args.iter().map(|a| o.real(a)).collect();
            o.f.blocks[b].term = Terminator::JumpTrace { target, args };
        }
        _ => {}
    }
    o.install(b);
    o.share_records();
}
