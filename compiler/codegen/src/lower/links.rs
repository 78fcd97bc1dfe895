//! Links laid out in a row, predicted ahead of time.
//!
//! A program that walks a chain of objects — a Brainfuck tape of `cell`s,
//! a linked list — reads each link from the object before it: `t = t.r`.
//! Every step waits for the load before it (four or five cycles of a
//! level-one hit), and nothing else can overlap with the walk: native code
//! of public mandelbrot.b's residual program spends its time right after
//! those loads. Objects of one size are bumped from one run of the heap
//! (`new_object`), so a chain built by allocating each object as it is
//! linked lies in a row: the next object is the current one's address plus
//! the object size, the previous one minus it.
//!
//! So a `get` whose result the function walks is lowered as a prediction
//! (`get_field`): the loaded word is compared with `obj + size` and with
//! `obj - size`, and where it matches the result is the *computed*
//! address, not the loaded one. The comparison is a branch the processor
//! predicts; what follows depends only on the addition, so the next step's
//! load issues without waiting for this one's, and the loads of a walk
//! overlap. A word that matches neither takes the ordinary path (the
//! unset test, the runtime). The prediction is checked every time: a
//! heap laid out otherwise only costs two compares. The JIT learns the
//! same thing from the addresses a recording saw (`guard_at`,
//! docs/architecture.md, "Links laid out in a row"); ahead of time it is a
//! guess, and this is how it is made cheap when wrong.
//!
//! Which `get`s: those whose result the function uses as an object — the
//! object operand of a `get` or `set` — directly or through phis. A field
//! holding integers is not walked and keeps its plain load.

use bitvec::vec::BitVec;
use flowc_ir::{ix, Function, InstKind, Operand, ValueId};

/// By raw value index: the results of `get`s that `f` walks (see the
/// module docs).
pub(super) fn walked_links(f: &Function) -> BitVec {
    let n = f.values.len();
    let mut used_as_object: BitVec = BitVec::repeat(false, n);
    // The phi defining each value, by raw index into `phis`.
    let mut phi_of: Vec<u32> = vec![u32::MAX; n];
    let mut phis: Vec<&flowc_ir::inst::PhiInputs> = Vec::new();
    let mut work: Vec<ValueId> = Vec::new();
    for &b in &f.layout {
        for i in f.block_insts(b) {
            let inst = &f.insts[i];
            match &inst.kind {
                InstKind::Get { obj: Operand::Value(o), .. } | InstKind::Set { obj: Operand::Value(o), .. }
                    if !used_as_object.replace(ix(*o), true) =>
                {
                    work.push(*o);
                }
                InstKind::Phi(inputs) => {
                    if let Some(r) = inst.result {
                        phi_of[ix(r)] = phis.len() as u32;
                        phis.push(inputs);
                    }
                }
                _ => {}
            }
        }
    }
    // Backwards through phis: what flows into a walked phi is walked.
    while let Some(v) = work.pop() {
        let Some(inputs) = phis.get(phi_of[ix(v)] as usize) else { continue };
        for (_, input) in inputs.iter() {
            if let Operand::Value(w) = input {
                if !used_as_object.replace(ix(*w), true) {
                    work.push(*w);
                }
            }
        }
    }
    let mut links: BitVec = BitVec::repeat(false, n);
    for &b in &f.layout {
        for i in f.block_insts(b) {
            if let (InstKind::Get { .. }, Some(r)) = (&f.insts[i].kind, f.insts[i].result) {
                if used_as_object[ix(r)] {
                    links.set(ix(r), true);
                }
            }
        }
    }
    links
}
