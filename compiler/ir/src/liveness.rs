//! Liveness: which values a block's end still needs, and from there which
//! values are live after any instruction.
//!
//! A use is an operand of an instruction or terminator, or a value a
//! guard's or terminator's resume record keeps; a phi's input for
//! predecessor `P` is a use at the end of `P`, and a phi's result is
//! defined at the start of its block. [`Liveness::new`] solves the usual
//! backward equations over the reachable blocks, one bit set per block
//! (the live-out set); [`Liveness::live_after`] walks one block back to an
//! instruction.
//!
//! Dense (a bit set of every value per block): the reference the sparse
//! [`crate::live_ranges`], which the code generator uses, is tested
//! against.

use bitvec::vec::BitVec;

use crate::cfg::Cfg;
use crate::function::{BlockId, Function, InstId};
use crate::inst::{InstKind, Operand};
use crate::ix;

/// The live-out set of every reachable block.
pub struct Liveness {
    live_out: Vec<BitVec>,
    values: usize,
}

impl Liveness {
    pub fn new(f: &Function, cfg: &Cfg) -> Liveness {
        let values = f.values.len();
        let blocks = f.blocks.len();
        let mut live_in = vec![BitVec::repeat(false, values); blocks];
        let mut live_out = vec![BitVec::repeat(false, values); blocks];
        let mut changed = true;
        while changed {
            changed = false;
            // Postorder: successors first, so most blocks settle in one sweep.
            for &b in cfg.rpo.iter().rev() {
                let mut out = BitVec::repeat(false, values);
                for &s in cfg.succs(b) {
                    out |= &live_in[ix(s)];
                    for &p in &f.blocks[s].phis {
                        if let Some(r) = f.insts[p].result {
                            out.set(ix(r), false);
                        }
                    }
                    for &p in &f.blocks[s].phis {
                        if let InstKind::Phi(inputs) = &f.insts[p].kind {
                            for (from, o) in inputs {
                                if *from == b {
                                    use_of(&mut out, o);
                                }
                            }
                        }
                    }
                }
                let mut live = out.clone();
                walk_back(f, b, &mut live, |_, _| true);
                for &p in &f.blocks[b].phis {
                    if let Some(r) = f.insts[p].result {
                        live.set(ix(r), false);
                    }
                }
                if live != live_in[ix(b)] {
                    live_in[ix(b)] = live;
                    changed = true;
                }
                live_out[ix(b)] = out;
            }
        }
        Liveness { live_out, values }
    }

    /// The values live at the end of `b` (empty if `b` is unreachable).
    pub fn live_out(&self, b: BlockId) -> Option<&BitVec> {
        self.live_out.get(ix(b))
    }

    /// The values live right after instruction `i` (not a phi) of block
    /// `b`: needed by what follows it in `b` or by `b`'s successors. `i`'s
    /// own result is included when it is used later.
    pub fn live_after(&self, f: &Function, b: BlockId, i: InstId) -> BitVec {
        let mut found = None;
        self.live_after_each(f, b, |k, live| {
            if k != i {
                return true;
            }
            found = Some(live.clone());
            false
        });
        found.unwrap_or_else(|| BitVec::repeat(false, self.values))
    }

    /// Walks block `b` back from its end, calling `at(i, live)` with the
    /// values live right after each instruction `i` (not the phis), last
    /// first, until `at` returns false: one walk for every instruction of
    /// a block that asks.
    pub fn live_after_each(&self, f: &Function, b: BlockId, at: impl FnMut(InstId, &BitVec) -> bool) {
        let mut live = match self.live_out.get(ix(b)) {
            Some(out) => out.clone(),
            None => BitVec::repeat(false, self.values),
        };
        walk_back(f, b, &mut live, at);
    }
}

fn use_of(live: &mut BitVec, o: &Operand) {
    if let Operand::Value(v) = o {
        live.set(ix(*v), true);
    }
}

/// Takes `live` (live at the end of `b`) back over `b`'s terminator and
/// instructions, showing `at` the set after each instruction, until `at`
/// returns false.
fn walk_back(f: &Function, b: BlockId, live: &mut BitVec, mut at: impl FnMut(InstId, &BitVec) -> bool) {
    let data = &f.blocks[b];
    data.term.operands().for_each(|o| use_of(live, o));
    if let Some(r) = data.term.resume() {
        f.resumes[r].operands().for_each(|o| use_of(live, o));
    }
    for &i in data.insts.iter().rev() {
        if !at(i, live) {
            return;
        }
        let inst = &f.insts[i];
        if let Some(r) = inst.result {
            live.set(ix(r), false);
        }
        inst.kind.operands().for_each(|o| use_of(live, o));
        if let InstKind::Guard { resume, .. } = &inst.kind {
            f.resumes[*resume].operands().for_each(|o| use_of(live, o));
        }
    }
}
