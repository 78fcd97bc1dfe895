//! Walks: chains of links read one after the other, checked at once.
//!
//! A program that walks a chain of objects — a Brainfuck tape of `cell`s
//! moved along by `>>>>>>>>`, partially evaluated into straight code —
//! reads each link from the object before it and tests it (`l = t.r; if
//! l is cell ... else grow`), so a run of eight moves is eight loads and
//! eight tests where gcc's translation of the BF program adds 8 to a
//! pointer. The heap keeps *rows* of objects laid out one after another
//! and linked both ways (`flowc_lang::heap::rows`), within which the
//! object `n` links on is the address `n` strides on, no link read.
//!
//! This rewrite, run on each function just before code generation (after
//! the eight passes, which never see its instruction), finds such chains
//! and puts one `walk` (`flowc_ir::InstKind::Walk`) in front of each: the
//! object the chain ends at, or 0 where a link on the way is none, which
//! native code answers from the rows (`lower/links.rs` `walk`). Where it
//! is an object, the code goes straight to the end of the chain; where 0,
//! the chain runs as before (growing the tape, raising its errors).
//!
//! **The shape.** Block `d0` ends in `x1 = get t0, f` and `branch x1, o1,
//! e1`; `o1` is empty and jumps to `d1` (or `o1` is `d1`), whose phi `t1`
//! takes `x1` from that edge; `d1` holds nothing but phis and `x2 = get
//! t1, f`, last, with the same branch shape; and so on to `dk`, the block
//! the `k`-th link goes to, which may hold anything. Then `d0` is split
//! before its `get`: `w = walk t0, f, k; branch w, fast, slow`, `slow`
//! holding the `get` and the branch, and `fast` jumping to `dk`, whose
//! phis take `w` for `tk` and, for the others, what they take along the
//! chain (followed back through the chain's phis to a value defined
//! before the chain).
//!
//! **Why it is sound.** Where `walk` answers an object, each `xi` is an
//! object, so every branch goes to `oi`, and the chain's blocks do
//! nothing but read: running them would reach `dk` with `tk = w` and the
//! phis as said. A value the skipped blocks define is used only where the
//! chain itself runs — its own block, the two successors of its block,
//! the phis of the next — so nothing after `dk` reads one: that is
//! checked, and a chain whose values are read further on is cut shorter.
//! Chains of fewer than [`MIN_LINKS`] links are left alone: the walk's
//! check costs about as much as a few predicted links
//! (`lower/links.rs`). The rewrite runs once per compile, on IR the
//! passes made (run again, it would find the `slow` blocks' chains).

use flowc_ir::{
    ix, BlockData, BlockId, Function, InstData, InstKind, Operand, Terminator, ValueData, ValueDef, ValueId,
};
use flowc_lang::Symbol;

/// The fewest links a chain is walked at once for.
pub const MIN_LINKS: usize = 4;

/// One step of a chain: the block ending in the `get` of a link and the
/// branch testing it, and where its test's object goes.
#[derive(Clone, Copy, Debug)]
struct Step {
    /// The block whose last instruction reads the link.
    block: BlockId,
    /// The `get`'s result.
    link: ValueId,
    /// The edge into the next block: its source (an empty block, or
    /// `block` itself) and the next block.
    from: BlockId,
    next: BlockId,
    /// The branch's other successor.
    other: BlockId,
}

/// Puts a `walk` in front of each chain of at least [`MIN_LINKS`] links
/// of `f` (module docs); returns how many.
pub fn rewrite(f: &mut Function) -> usize {
    let cfg = flowc_ir::cfg::Cfg::new(f);
    let mut uses = Uses::of(f, &cfg);
    // By block: the two blocks split from it, laid out after it.
    let mut after: Vec<Option<[BlockId; 2]>> = vec![None; f.blocks.len()];
    let mut made = 0;
    let mut taken = vec![false; f.blocks.len()];
    // A chain's first block before the others.
    for &d0 in &cfg.rpo {
        if taken[ix(d0)] {
            continue;
        }
        let Some((field, steps)) = chain(f, d0) else { continue };
        let Some(k) = (MIN_LINKS..=steps.len()).rev().find(|&k| fits(f, &uses, &steps[..k])) else { continue };
        for s in &steps[..k] {
            taken[ix(s.block)] = true;
        }
        after[ix(d0)] = Some(put_walk(f, &mut uses, field, &steps[..k]));
        made += 1;
    }
    if made > 0 {
        let mut layout = Vec::with_capacity(f.layout.len() + 2 * made);
        for &b in &f.layout {
            layout.push(b);
            layout.extend(after[ix(b)].into_iter().flatten());
        }
        f.layout = layout;
    }
    made
}

/// The step that block `b` ends in, if it ends in one: its `get` of
/// `field` (if given, that field) and the branch testing it.
fn step(f: &Function, b: BlockId, field: Option<Symbol>) -> Option<(Symbol, Step)> {
    let data = &f.blocks[b];
    let &last = data.insts.last()?;
    let InstKind::Get { field: got, .. } = f.insts[last].kind else { return None };
    let link = f.insts[last].result?;
    if field.is_some_and(|fl| fl != got) {
        return None;
    }
    let Terminator::Branch { cond: Operand::Value(c), then_block, else_block } = data.term else { return None };
    if c != link || then_block == else_block {
        return None;
    }
    // The edge the link goes on by: through an empty block, or straight.
    let (from, next) = match &f.blocks[then_block] {
        o if o.phis.is_empty() && o.insts.is_empty() => match o.term {
            Terminator::Jump(n) => (then_block, n),
            _ => (b, then_block),
        },
        _ => (b, then_block),
    };
    Some((got, Step { block: b, link, from, next, other: else_block }))
}

/// The longest chain from `d0` (module docs): its field and steps.
fn chain(f: &Function, d0: BlockId) -> Option<(Symbol, Vec<Step>)> {
    let (field, first) = step(f, d0, None)?;
    let mut steps = vec![first];
    loop {
        let last = *steps.last().expect("a step");
        let next = last.next;
        // The next block: phis, then the next link's `get` alone, once in
        // the chain.
        if f.blocks[next].insts.len() != 1 || steps.iter().any(|s| s.block == next) || next == f.entry {
            break;
        }
        let Some((_, s)) = step(f, next, Some(field)) else { break };
        // It goes on with the link: its `get` reads a phi taking the
        // link from the edge.
        let InstKind::Get { obj: Operand::Value(t), .. } = f.insts[f.blocks[next].insts[0]].kind else { break };
        if phi_input(f, next, t, last.from) != Some(Operand::Value(last.link)) {
            break;
        }
        steps.push(s);
    }
    (steps.len() >= MIN_LINKS).then_some((field, steps))
}

/// What phi `v` of block `b` takes from predecessor `from`, if `v` is
/// one of `b`'s phis.
fn phi_input(f: &Function, b: BlockId, v: ValueId, from: BlockId) -> Option<Operand> {
    let ValueDef::Inst(i) = f.values[v].def else { return None };
    if !f.blocks[b].phis.contains(&i) {
        return None;
    }
    let InstKind::Phi(inputs) = &f.insts[i].kind else { return None };
    inputs.iter().find(|(p, _)| *p == from).map(|(_, o)| o.clone())
}

/// Where each value is used: the blocks of the instructions and
/// terminators that read it, and for a phi's input the edge's source;
/// and each block's predecessors. Both are kept as walks are put in
/// ([`put_walk`]: the new edge's phi inputs are uses, the end block gets
/// a predecessor).
struct Uses {
    sites: Vec<Vec<Site>>,
    preds: Vec<Vec<BlockId>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Site {
    /// In a block's instruction (not a phi) or terminator.
    In(BlockId),
    /// A phi of block `.0` takes it from predecessor `.1`.
    Phi(BlockId, BlockId),
}

impl Uses {
    fn of(f: &Function, cfg: &flowc_ir::cfg::Cfg) -> Uses {
        let mut sites = vec![Vec::new(); f.values.len()];
        crate::lower::each_operand(f, |o, b, from| {
            if let Operand::Value(v) = o {
                sites[ix(*v)].push(from.map_or(Site::In(b), |p| Site::Phi(b, p)));
            }
        });
        let preds = f.blocks.iter().map(|(b, _)| cfg.preds(b).to_vec()).collect();
        Uses { sites, preds }
    }
}

/// Whether the chain `steps` (its first block `d0`, its last step's next
/// block the end) can be walked at once: the end's phis have values to
/// take from the walk's edge, and nothing but the chain reads a value
/// its skipped blocks define.
fn fits(f: &Function, uses: &Uses, steps: &[Step]) -> bool {
    let end = steps.last().expect("a step").next;
    if steps.iter().any(|s| s.block == end) {
        return false;
    }
    // (No skipped block is the entry: each has a predecessor, and the
    // checker gives the entry none.)
    // Each phi of the end block has a value for the walk's edge.
    if end_inputs(f, steps).is_none() {
        return false;
    }
    // The values the chain defines: each step's link, and the skipped
    // blocks' phis. They may be read only where the chain's own block still
    // dominates once the walk's edge reaches the end: in that block, and
    // in its two successors where it is their one predecessor (a
    // successor the end reaches otherwise — the end itself — would read
    // a value the walk's edge never defined).
    for (k, s) in steps.iter().enumerate() {
        let mut defined = vec![s.link];
        if k > 0 {
            defined.extend(f.blocks[s.block].phis.iter().filter_map(|&i| f.insts[i].result));
        }
        let only_from = |b: BlockId| b == s.block || uses.preds[ix(b)] == [s.block];
        for v in defined {
            let ok = uses.sites[ix(v)].iter().all(|site| match *site {
                Site::In(b) => b == s.block || ((b == s.from || b == s.other) && only_from(b)),
                Site::Phi(b, from) => b == s.next && (from == s.from || from == s.other) && only_from(from),
            });
            if !ok {
                return false;
            }
        }
    }
    true
}

/// For each phi of the chain's end block, in order, what it takes on the
/// walk's edge: the walk (`None` in the list) for the last link's phi,
/// else the value along the chain, followed back through its phis to one
/// defined before it; `None` where one is not.
fn end_inputs(f: &Function, steps: &[Step]) -> Option<Vec<Option<Operand>>> {
    let last = steps.last().expect("a step");
    let end = last.next;
    let mut out = Vec::new();
    for &i in &f.blocks[end].phis {
        let InstKind::Phi(inputs) = &f.insts[i].kind else { return None };
        let o = inputs.iter().find(|(p, _)| *p == last.from).map(|(_, o)| o.clone())?;
        if o == Operand::Value(last.link) {
            out.push(None);
            continue;
        }
        out.push(Some(before_chain(f, steps, o)?));
    }
    // The last link's phi is there (the chain goes on with it).
    out.iter().any(Option::is_none).then_some(out)
}

/// Operand `o`, read at the end of the chain's last step, followed back
/// through the phis of the chain's blocks to what it is before the chain
/// (a constant, or a value defined outside the chain's skipped blocks and
/// not its links).
fn before_chain(f: &Function, steps: &[Step], mut o: Operand) -> Option<Operand> {
    for k in (1..steps.len()).rev() {
        let Operand::Value(v) = o else { return Some(o) };
        let s = steps[k];
        if steps.iter().any(|t| t.link == v) {
            return None;
        }
        match phi_input(f, s.block, v, steps[k - 1].from) {
            Some(input) => o = input,
            None => {
                // Defined in a skipped block otherwise: not before the chain.
                if let ValueDef::Inst(i) = f.values[v].def {
                    if steps[1..]
                        .iter()
                        .any(|t| f.blocks[t.block].phis.contains(&i) || f.blocks[t.block].insts.contains(&i))
                    {
                        return None;
                    }
                }
            }
        }
    }
    match o {
        Operand::Value(v) if steps.iter().any(|t| t.link == v) => None,
        o => Some(o),
    }
}

/// Rewrites the chain `steps` (module docs): `d0` split before its `get`
/// into the walk and its branch, a `slow` block with the rest, and a
/// `fast` block jumping to the end.
/// Returns the two new blocks, to be laid out right after `d0`; `uses`
/// learns the new uses and edges.
fn put_walk(f: &mut Function, uses: &mut Uses, field: Symbol, steps: &[Step]) -> [BlockId; 2] {
    let inputs = end_inputs(f, steps).expect("fits checked the end's phis");
    let d0 = steps[0].block;
    let end = steps.last().expect("a step").next;
    let get = *f.blocks[d0].insts.last().expect("a step's block ends in its get");
    let InstKind::Get { obj, .. } = f.insts[get].kind.clone() else { unreachable!("a step's get") };
    let name = f.values[steps.last().expect("a step").link].name;
    let walk = f.insts.alloc(InstData { kind: InstKind::Walk { obj, field, links: steps.len() as u32 }, result: None });
    let w = f.values.alloc(ValueData { def: ValueDef::Inst(walk), name });
    f.insts[walk].result = Some(w);
    let block = |term| BlockData { name: None, phis: Default::default(), insts: Default::default(), term };
    let fast = f.blocks.alloc(block(Terminator::Jump(end)));
    let mut slow_data = block(f.blocks[d0].term.clone());
    slow_data.insts.push(get);
    let slow = f.blocks.alloc(slow_data);
    f.sites.move_term(d0, slow);
    let d0_data = &mut f.blocks[d0];
    d0_data.insts.pop();
    d0_data.insts.push(walk);
    d0_data.term = Terminator::Branch { cond: Operand::Value(w), then_block: fast, else_block: slow };
    // The blocks after `d0` now come from `slow`.
    for succ in [steps[0].from, steps[0].next, steps[0].other] {
        for &i in &f.blocks[succ].phis.clone() {
            if let InstKind::Phi(ins) = &mut f.insts[i].kind {
                ins.iter_mut().filter(|(p, _)| *p == d0).for_each(|(p, _)| *p = slow);
            }
        }
    }
    uses.sites.resize(f.values.len(), Vec::new());
    for (&i, input) in f.blocks[end].phis.clone().iter().zip(inputs) {
        let input = input.unwrap_or(Operand::Value(w));
        if let Operand::Value(v) = input {
            uses.sites[ix(v)].push(Site::Phi(end, fast));
        }
        if let InstKind::Phi(ins) = &mut f.insts[i].kind {
            ins.push((fast, input));
        }
    }
    // The new blocks' edges.
    uses.preds.resize(f.blocks.len(), Vec::new());
    uses.preds[ix(end)].push(fast);
    uses.preds[ix(fast)] = vec![d0];
    uses.preds[ix(slow)] = vec![d0];
    let then_block = if steps[0].from == d0 { steps[0].next } else { steps[0].from };
    for succ in [then_block, steps[0].other] {
        for p in uses.preds[ix(succ)].iter_mut().filter(|p| **p == d0) {
            *p = slow;
        }
    }
    [fast, slow]
}

/// [`rewrite`] on the functions of `m` that get walks: huge ones
/// ([`flowc_ir::HUGE_INSTS`]), or, `everywhere`, all but traces; how many
/// walks. A function compiled whole has its hot loops optimized, where a
/// predicted link (`lower/links.rs`) costs about a cycle and the walk's
/// check more (a hand-written loop walking eight links a round: 140 ->
/// 153 ms, its links laid out otherwise 139 -> 156 ms); a huge one is
/// compiled in regions, most of it cheaply, where links go through frame
/// words and are not predicted.
///
/// The same step runs every function's clearing loops at once
/// ([`crate::clears`]), counted with the walks.
pub fn rewrite_module(m: &mut flowc_ir::Module, everywhere: bool) -> usize {
    m.functions
        .iter_mut()
        .filter(|f| f.kind != flowc_ir::FunctionKind::Trace)
        .map(|f| crate::clears::rewrite(f) + if everywhere || f.is_huge() { rewrite(f) } else { 0 })
        .sum()
}

/// `m` with its walks ([`rewrite_module`]): a copy where it has any.
pub fn with_walks(m: &flowc_ir::Module, everywhere: bool) -> std::borrow::Cow<'_, flowc_ir::Module> {
    let wanted = |f: &flowc_ir::Function| everywhere || f.is_huge() || crate::clears::may_have(f);
    if !m.functions.iter().any(|f| f.kind != flowc_ir::FunctionKind::Trace && wanted(f)) {
        return std::borrow::Cow::Borrowed(m);
    }
    let mut copy = m.clone();
    match rewrite_module(&mut copy, everywhere) {
        0 => std::borrow::Cow::Borrowed(m),
        _ => std::borrow::Cow::Owned(copy),
    }
}
