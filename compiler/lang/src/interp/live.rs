//! Variable liveness over a resolved flow graph, and promote chains.
//!
//! A variable is *live* at a block when some path from the block's start
//! reads it before writing it. The JIT uses this to know which variables
//! a trace must take and hand back: a variable that is dead at a trace's
//! anchor cannot be read before it is written again on any path from
//! there, so leaving it out changes nothing a program can observe (only
//! the order in which the environment would list it, which no program
//! reads). `promote` counts as a read of its variable (the tracer reads
//! it).
//!
//! Computed by the usual backward fixpoint over blocks, with one bit set
//! per block (words of 64 slots), in reverse order of the blocks until
//! nothing changes.

use super::resolve::{CStmt, CTerm, Graph, Operand, Slot, Target};

/// Live variables at the start of every block of one graph.
#[derive(Clone, Debug)]
pub struct Liveness {
    words: usize,
    live_in: Vec<u64>,
}

impl Liveness {
    /// Computes the liveness of `g`.
    pub fn of(g: &Graph) -> Liveness {
        let words = g.slot_names.len().div_ceil(64).max(1);
        let n = g.blocks.len();
        // Per block: slots read before written (gen) and slots written (kill).
        let mut gen = vec![0u64; n * words];
        let mut kill = vec![0u64; n * words];
        let mut succ: Vec<Vec<(u32, Option<Slot>)>> = Vec::with_capacity(n);
        for (b, block) in g.blocks.iter().enumerate() {
            let (gen_b, kill_b) = (&mut gen[b * words..(b + 1) * words], &mut kill[b * words..(b + 1) * words]);
            let read = |o: &Operand, gen_b: &mut [u64], kill_b: &[u64]| {
                if let Operand::Slot(s) = o {
                    read_slot(*s, gen_b, kill_b);
                }
            };
            for s in &block.stmts {
                let dst = match s {
                    CStmt::Op1 { dst, arg, .. } => {
                        read(arg, gen_b, kill_b);
                        Some(*dst)
                    }
                    CStmt::Op2 { dst, lhs, rhs, .. } => {
                        read(lhs, gen_b, kill_b);
                        read(rhs, gen_b, kill_b);
                        Some(*dst)
                    }
                    CStmt::New { dst, .. } => Some(*dst),
                    CStmt::Get { dst, obj, .. } => {
                        read(obj, gen_b, kill_b);
                        Some(*dst)
                    }
                    CStmt::Set { obj, value, .. } => {
                        read(obj, gen_b, kill_b);
                        read(value, gen_b, kill_b);
                        None
                    }
                };
                if let Some(d) = dst {
                    set(kill_b, d);
                }
            }
            let target = |t: &Target| t.block();
            let mut out = Vec::new();
            match &block.term {
                CTerm::Jump(t) => out.extend(target(t).map(|b| (b, None))),
                CTerm::Promote { var, target: t } => {
                    read_slot(*var, gen_b, kill_b);
                    out.extend(target(t).map(|b| (b, None)));
                }
                CTerm::If { cond, then_t, else_t } => {
                    read_slot(*cond, gen_b, kill_b);
                    out.extend(target(then_t).map(|b| (b, None)));
                    out.extend(target(else_t).map(|b| (b, None)));
                }
                CTerm::IfClass { obj, then_t, else_t, .. } => {
                    read(obj, gen_b, kill_b);
                    out.extend(target(then_t).map(|b| (b, None)));
                    out.extend(target(else_t).map(|b| (b, None)));
                }
                CTerm::Call { dst, args, next, .. } => {
                    for a in args {
                        read(a, gen_b, kill_b);
                    }
                    // The result is written when the callee returns.
                    out.extend(target(next).map(|b| (b, Some(*dst))));
                }
                CTerm::Print(a) | CTerm::Return(a) => read(a, gen_b, kill_b),
                CTerm::Error(_) => {}
            }
            succ.push(out);
        }
        let mut live_in = gen.clone();
        let mut scratch = vec![0u64; words];
        let mut changed = true;
        while changed {
            changed = false;
            for b in (0..n).rev() {
                scratch.iter_mut().for_each(|w| *w = 0);
                for &(s, written) in &succ[b] {
                    let s = s as usize;
                    for k in 0..words {
                        let mut w = live_in[s * words + k];
                        if let Some(d) = written {
                            if d as usize / 64 == k {
                                w &= !(1u64 << (d % 64));
                            }
                        }
                        scratch[k] |= w;
                    }
                }
                for k in 0..words {
                    let new = gen[b * words + k] | (scratch[k] & !kill[b * words + k]);
                    if new != live_in[b * words + k] {
                        live_in[b * words + k] = new;
                        changed = true;
                    }
                }
            }
        }
        Liveness { words, live_in }
    }

    /// Whether `slot` is live at the start of `block`.
    pub fn is_live(&self, block: u32, slot: Slot) -> bool {
        let w = self.live_in.get(block as usize * self.words + slot as usize / 64).copied().unwrap_or(0);
        w & (1u64 << (slot % 64)) != 0
    }

    /// The slots live at the start of `block`, in slot order.
    pub fn live_at(&self, block: u32) -> Vec<Slot> {
        let start = block as usize * self.words;
        let mut out = Vec::new();
        for (k, &w) in self.live_in[start..start + self.words].iter().enumerate() {
            let mut w = w;
            while w != 0 {
                let bit = w.trailing_zeros();
                out.push((k * 64) as Slot + bit);
                w &= w - 1;
            }
        }
        out
    }
}

fn set(bits: &mut [u64], s: Slot) {
    bits[s as usize / 64] |= 1u64 << (s % 64);
}

fn read_slot(s: Slot, gen: &mut [u64], kill: &[u64]) {
    if kill[s as usize / 64] & (1u64 << (s % 64)) == 0 {
        set(gen, s);
    }
}

impl Graph {
    /// The promote chain at `block`: the variables promoted, in order, by
    /// the blocks control passes through from `block`'s start while they
    /// hold nothing but a `promote` (or a jump) — PyPy's green variables of
    /// a hot spot at that label.
    pub fn promote_chain(&self, block: u32) -> Vec<Slot> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.blocks.len()];
        let mut b = block as usize;
        while let Some(blk) = self.blocks.get(b) {
            if seen[b] || !blk.stmts.is_empty() {
                break;
            }
            seen[b] = true;
            b = match &blk.term {
                CTerm::Promote { var, target: Target::Block(t) | Target::Watched(t) } => {
                    if !out.contains(var) {
                        out.push(*var);
                    }
                    *t as usize
                }
                CTerm::Jump(Target::Block(t) | Target::Watched(t)) => *t as usize,
                _ => break,
            };
        }
        out
    }
}
