//! Clears: loops that count a field down (or up) to 0, run at once.
//!
//! A Brainfuck `[-]` partially evaluated is one block that loops to
//! itself:
//!
//! ```text
//! b10:
//!     v49 = get.object v46, v
//!     v50 = sub.word v49, 1
//!     v51 = mod.word v50, 256
//!     set.object v46, v, v51
//!     branch v51, b2, b8        (b2: jump b10)
//! ```
//!
//! Each round takes the field one step towards 0 modulo `M`, whatever it
//! held (a small integer: the `.word` forms say so), so the loop always
//! ends, with the field 0, at the branch's second successor — after up to
//! `M` rounds, each a load, an operation, a store and a branch, where
//! gcc's translation of the BF program clears the cell. This rewrite, run
//! with the walks just before code generation ([`crate::walks`]), makes
//! such a block read the field (which raises what the loop's first read
//! would: the field unset), write 0 and jump to the branch's second
//! successor.
//!
//! **The shape.** A block with no phis and exactly these instructions:
//! `x = get o, f`; `y = sub.word x, 1` (or `add`, by any constant `c`
//! with `c mod M` 1 or `M - 1`: one step either way); `z = mod.word y,
//! M` for a constant `M > 0`; `set o, f, z` (the `.int` forms too: any
//! integer, however big, steps into `0..M` and on to 0); ending in `branch z, back, out` where
//! `back` is the block itself or an empty block that jumps to it and has
//! it as its only predecessor; `o` defined outside the block; `y` used
//! only there and `z` only there, `out`'s phis aside, which take 0 for it.
//! The loop's object cannot change under it: nothing else runs in it.
//! Under `--fuel` (one step per loop round in native code) such a loop no
//! longer counts its rounds, as the JIT's loops run at once do not.

use flowc_ir::{ix, BlockId, Function, InstKind, Operand, Terminator};
use flowc_lang::ast::Operator;
use flowc_lang::ops::{Form, Op};
use flowc_lang::Value;

/// Runs each clearing loop of `f` at once (module docs); returns how
/// many.
pub fn rewrite(f: &mut Function) -> usize {
    let uses = crate::lower::count_uses(f);
    let cfg = flowc_ir::cfg::Cfg::new(f);
    let preds: Vec<u32> = f.blocks.iter().map(|(b, _)| cfg.preds(b).len() as u32).collect();
    let mut made = 0;
    let mut dropped = vec![false; f.blocks.len()];
    for b in f.layout.clone() {
        let Some((out, back)) = clearing(f, b, &uses, &preds) else { continue };
        let [get, step, modulo, set] = f.blocks[b].insts[..] else { unreachable!("clearing checked four") };
        // The step and the remainder go: their values are defined nowhere.
        for i in [step, modulo] {
            if let Some(v) = f.insts[i].result {
                f.values[v].def = flowc_ir::ValueDef::Detached;
            }
        }
        let InstKind::Set { value, .. } = &mut f.insts[set].kind else { unreachable!("clearing checked a set") };
        let z = value.clone();
        *value = Operand::Const(Value::Int(0));
        // `out`'s phis take 0 where they took the last round's value.
        for &i in &f.blocks[out].phis.clone() {
            if let InstKind::Phi(inputs) = &mut f.insts[i].kind {
                inputs
                    .iter_mut()
                    .filter(|(p, o)| *p == b && *o == z)
                    .for_each(|(_, o)| *o = Operand::Const(Value::Int(0)));
            }
        }
        f.blocks[b].insts = [get, set].into_iter().collect();
        f.blocks[b].term = Terminator::Jump(out);
        if back != b {
            dropped[ix(back)] = true;
        }
        made += 1;
    }
    f.layout.retain(|b| !dropped[ix(*b)]);
    made
}

/// Whether `f` may have a clearing loop: a block of four instructions,
/// the last a `set`, ending in a branch (what [`rewrite`] looks at
/// closely), so that a module with none is not copied to look.
pub fn may_have(f: &Function) -> bool {
    f.layout.iter().any(|&b| {
        let data = &f.blocks[b];
        data.insts.len() == 4
            && matches!(data.term, Terminator::Branch { .. })
            && matches!(data.insts.last().map(|&i| &f.insts[i].kind), Some(InstKind::Set { .. }))
    })
}

/// Whether block `b` is a clearing loop (module docs): its way out and
/// its way back.
fn clearing(f: &Function, b: BlockId, uses: &[u32], preds: &[u32]) -> Option<(BlockId, BlockId)> {
    let data = &f.blocks[b];
    if !data.phis.is_empty() || data.insts.len() != 4 {
        return None;
    }
    let kinds: Vec<&InstKind> = data.insts.iter().map(|&i| &f.insts[i].kind).collect();
    let result = |k: usize| f.insts[data.insts[k]].result;
    let [InstKind::Get { obj, field, .. }, step, modulo, InstKind::Set { obj: obj2, field: field2, value, .. }] =
        kinds[..]
    else {
        return None;
    };
    let (x, y, z) = (result(0)?, result(1)?, result(2)?);
    let word = |k: &InstKind, op: Op| match k {
        InstKind::Op { op: Operator::Known(o), form: Form::Word | Form::Int, args } if *o == op => match &args[..] {
            [Operand::Value(a), Operand::Const(Value::Int(c))] => Some((*a, *c)),
            _ => None,
        },
        _ => None,
    };
    let (m_of, m) = word(modulo, Op::Mod)?;
    // One step either way modulo m (`- 1`, `+ 1`, `+ (m - 1)`, ...).
    let by = match (word(step, Op::Sub), word(step, Op::Add)) {
        (Some((a, c)), _) if a == x => c.checked_neg()?,
        (_, Some((a, c))) if a == x => c,
        _ => return None,
    };
    let unit = m > 0 && (by.rem_euclid(m) == 1 || by.rem_euclid(m) == m - 1);
    if !unit || m_of != y || obj != obj2 || field != field2 || *value != Operand::Value(z) {
        return None;
    }
    // The object is the loop's: defined outside it (it has no phis, and
    // its own instructions define x, y and z only).
    if matches!(obj, Operand::Value(o) if [x, y, z].contains(o)) {
        return None;
    }
    let Terminator::Branch { cond: Operand::Value(c), then_block, else_block } = data.term else { return None };
    if c != z || then_block == else_block || else_block == b {
        return None;
    }
    let back = then_block;
    let loops = back == b
        || (preds[ix(back)] == 1
            && f.blocks[back].phis.is_empty()
            && f.blocks[back].insts.is_empty()
            && f.blocks[back].term == Terminator::Jump(b));
    // y is the mod's alone; z the set's, the branch's and the way out's
    // phis' (which take 0 for it); x the step's and, in no case, more.
    let z_in_phis: u32 = f.blocks[else_block]
        .phis
        .iter()
        .map(|&i| match &f.insts[i].kind {
            InstKind::Phi(inputs) => inputs.iter().filter(|(p, o)| *p == b && *o == Operand::Value(z)).count() as u32,
            _ => 0,
        })
        .sum();
    let only_here = uses[ix(x)] == 1 && uses[ix(y)] == 1 && uses[ix(z)] == 2 + z_in_phis;
    (loops && only_here).then_some((else_block, back))
}
