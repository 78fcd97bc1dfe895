//! Lowering one flow graph (the main graph or a function) to an IR function.

use std::collections::HashMap;

use bitvec::prelude::*;

use flowc_ir::{BlockId, Builder, Function, FunctionKind, InstKind, Operand, Terminator, Trap, ValueDef};
use flowc_lang::ast::{self, Arg, Operator, Stmt};
use flowc_lang::ops::{Form, Op};
use flowc_lang::Symbol;

use crate::ssa::{EntryValue, Ssa};

/// Where a jump goes: a lowered block or a trap for a missing label.
fn target(map: &HashMap<Symbol, BlockId>, traps: &HashMap<Symbol, BlockId>, l: Symbol) -> BlockId {
    map.get(&l).or_else(|| traps.get(&l)).copied().expect("every target has a block")
}

/// Variables read by a terminator (`promote` reads nothing: it is a jump).
fn term_reads(t: &ast::Terminator) -> Vec<Symbol> {
    match t {
        ast::Terminator::Promote { .. } => Vec::new(),
        t => t.uses(),
    }
}

/// Dense numbers for variable names.
#[derive(Default)]
struct VarIds {
    ids: HashMap<Symbol, usize>,
    names: Vec<Symbol>,
}

impl VarIds {
    fn id(&mut self, s: Symbol) -> usize {
        if let Some(&i) = self.ids.get(&s) {
            return i;
        }
        self.names.push(s);
        self.ids.insert(s, self.names.len() - 1);
        self.names.len() - 1
    }
}

fn arg_var(a: &Arg) -> Option<Symbol> {
    match a {
        Arg::Var(v) => Some(*v),
        Arg::Const(_) => None,
    }
}

/// Entry values: main-graph parameters by name, or `unbound` instructions
/// (one per variable, at the start of the entry block) in functions.
struct Entry {
    params: HashMap<Symbol, Operand>,
    unbound: HashMap<Symbol, Operand>,
    entry: BlockId,
}

impl EntryValue for Entry {
    fn entry_value(&mut self, builder: &mut Builder, var: Symbol) -> Operand {
        if let Some(p) = self.params.get(&var) {
            return p.clone();
        }
        if let Some(u) = self.unbound.get(&var) {
            return u.clone();
        }
        let v = builder.inst(self.entry, InstKind::Unbound(var), Some(var)).expect("unbound has a result");
        // Keep `unbound` values at the top of the entry block.
        let insts = &mut builder.func.blocks[self.entry].insts;
        let i = insts.pop().unwrap();
        let at = self.unbound.len();
        insts.insert(at, i);
        let o = Operand::Value(v);
        self.unbound.insert(var, o.clone());
        o
    }
}

/// Lowers the graph `blocks` from `entry_label`. `params` are a function's
/// declared parameters; the main graph (`None`) gets its free variables.
pub fn lower_graph(
    kind: FunctionKind,
    name: Symbol,
    params: Option<&[Symbol]>,
    blocks: &[&ast::Block],
    entry_label: Symbol,
    signatures: &[(Symbol, usize)],
) -> Function {
    let index: HashMap<Symbol, usize> = blocks.iter().enumerate().rev().map(|(i, b)| (b.label, i)).collect();
    // Reachable AST blocks, in reverse postorder from the entry.
    let rpo = reverse_postorder(blocks, &index, index[&entry_label]);
    let reachable: BitVec = {
        let mut r = bitvec![0; blocks.len()];
        for &i in &rpo {
            r.set(i, true);
        }
        r
    };
    let entry_has_preds = rpo.iter().any(|&i| blocks[i].term.successors().contains(&entry_label));

    let mut builder = Builder::new(kind, name);
    let mut map: HashMap<Symbol, BlockId> = HashMap::new();
    let fresh_entry = builder.entry();
    for (i, b) in blocks.iter().enumerate() {
        if !reachable[i] {
            continue;
        }
        let ir = if b.label == entry_label && !entry_has_preds {
            builder.set_name(fresh_entry, Some(b.label));
            fresh_entry
        } else {
            builder.block(Some(b.label))
        };
        map.insert(b.label, ir);
    }
    let mut traps: HashMap<Symbol, BlockId> = HashMap::new();
    for &i in &rpo {
        for l in blocks[i].term.successors() {
            if !map.contains_key(&l) && !traps.contains_key(&l) {
                let t = builder.block(None);
                builder.terminate(t, Terminator::Trap(Trap::UnknownLabel(l)));
                traps.insert(l, t);
            }
        }
    }
    // Predecessors in the IR, distinct, in the order edges are met.
    let mut preds: HashMap<BlockId, Vec<BlockId>> = HashMap::new();
    let mut add_edge = |from: BlockId, to: BlockId| {
        let p = preds.entry(to).or_default();
        if !p.contains(&from) {
            p.push(from);
        }
    };
    if entry_has_preds {
        add_edge(fresh_entry, map[&entry_label]);
    }
    for &i in &rpo {
        for l in blocks[i].term.successors() {
            add_edge(map[&blocks[i].label], target(&map, &traps, l));
        }
    }

    let mut entry = Entry { params: HashMap::new(), unbound: HashMap::new(), entry: fresh_entry };
    match params {
        Some(ps) => {
            for &p in ps {
                let v = builder.param(Some(p));
                entry.params.insert(p, Operand::Value(v));
            }
        }
        None => {
            for var in free_variables(blocks, &rpo, &index) {
                let v = builder.param(Some(var));
                entry.params.insert(var, Operand::Value(v));
            }
        }
    }
    let is_main = params.is_none();
    let mut ssa = Ssa::new(builder, preds.clone());

    // Fill blocks in reverse postorder; seal each as soon as all its
    // predecessors are filled.
    let mut order: Vec<BlockId> = Vec::new();
    if entry_has_preds {
        order.push(fresh_entry);
    }
    order.extend(rpo.iter().map(|&i| map[&blocks[i].label]));
    let mut trap_blocks: Vec<BlockId> = traps.values().copied().collect();
    trap_blocks.sort_by_key(|b| b.into_raw().into_u32());
    order.extend(trap_blocks);
    let ast_of: HashMap<BlockId, usize> = rpo.iter().map(|&i| (map[&blocks[i].label], i)).collect();
    let mut filled: HashMap<BlockId, bool> = HashMap::new();
    let all_filled = |b: BlockId, filled: &HashMap<BlockId, bool>| {
        preds.get(&b).is_none_or(|ps| ps.iter().all(|p| filled.contains_key(p)))
    };
    for &b in &order {
        if all_filled(b, &filled) {
            ssa.seal(b, &mut entry);
        }
        match ast_of.get(&b) {
            Some(&i) => fill(&mut ssa, &mut entry, b, blocks[i], &map, &traps, signatures, is_main),
            None if b == fresh_entry => {
                let to = map[&entry_label];
                ssa.builder.terminate(b, Terminator::Jump(to));
            }
            None => {}
        }
        filled.insert(b, true);
        let succs: Vec<BlockId> = ssa.builder.func.blocks[b].term.successors();
        for s in succs {
            if all_filled(s, &filled) {
                ssa.seal(s, &mut entry);
            }
        }
    }
    ssa.finish()
}

fn reverse_postorder(blocks: &[&ast::Block], index: &HashMap<Symbol, usize>, entry: usize) -> Vec<usize> {
    let mut visited = bitvec![0; blocks.len()];
    let mut post = Vec::new();
    let succ =
        |i: usize| -> Vec<usize> { blocks[i].term.successors().iter().filter_map(|l| index.get(l).copied()).collect() };
    let mut stack = vec![(entry, succ(entry), 0usize)];
    visited.set(entry, true);
    while let Some((b, s, k)) = stack.last_mut() {
        if *k < s.len() {
            let t = s[*k];
            *k += 1;
            if !visited[t] {
                visited.set(t, true);
                let st = succ(t);
                stack.push((t, st, 0));
            }
        } else {
            post.push(*b);
            stack.pop();
        }
    }
    post.reverse();
    post
}

/// Variables that may be read before any write on some path from the
/// entry (live into the entry), in first-use order: blocks in reverse
/// postorder, statements in order.
fn free_variables(blocks: &[&ast::Block], rpo: &[usize], index: &HashMap<Symbol, usize>) -> Vec<Symbol> {
    let mut vars = VarIds::default();
    // Per block: upward-exposed reads and writes, plus first-read order.
    let mut uses: Vec<Vec<usize>> = vec![Vec::new(); blocks.len()];
    let mut defs: Vec<Vec<usize>> = vec![Vec::new(); blocks.len()];
    let mut first_reads: Vec<usize> = Vec::new();
    for &i in rpo {
        let b = blocks[i];
        let mut written: Vec<usize> = Vec::new();
        let mut reads: Vec<Symbol> = Vec::new();
        let mut writes: Vec<Option<Symbol>> = Vec::new();
        for s in &b.body {
            reads.extend(s.args().into_iter().filter_map(arg_var));
            writes.push(s.dst());
            for v in reads.drain(..) {
                let v = vars.id(v);
                if !written.contains(&v) && !uses[i].contains(&v) {
                    uses[i].push(v);
                }
                first_reads.push(v);
            }
            if let Some(d) = writes.pop().flatten() {
                let d = vars.id(d);
                if !written.contains(&d) {
                    written.push(d);
                }
            }
        }
        for v in term_reads(&b.term) {
            let v = vars.id(v);
            if !written.contains(&v) && !uses[i].contains(&v) {
                uses[i].push(v);
            }
            first_reads.push(v);
        }
        if let ast::Terminator::Call { dst, .. } = &b.term {
            written.push(vars.id(*dst));
        }
        defs[i] = written;
    }
    let names = vars.names;
    let n = names.len();
    let mut live_in: Vec<BitVec> = vec![bitvec![0; n]; blocks.len()];
    let succ =
        |i: usize| -> Vec<usize> { blocks[i].term.successors().iter().filter_map(|l| index.get(l).copied()).collect() };
    let mut changed = true;
    while changed {
        changed = false;
        for &i in rpo.iter().rev() {
            let mut live = bitvec![0; n];
            for s in succ(i) {
                live |= &live_in[s];
            }
            for &d in &defs[i] {
                live.set(d, false);
            }
            for &u in &uses[i] {
                live.set(u, true);
            }
            if live != live_in[i] {
                live_in[i] = live;
                changed = true;
            }
        }
    }
    let entry_live = &live_in[rpo[0]];
    let mut out = Vec::new();
    for v in first_reads {
        if entry_live[v] && !out.contains(&names[v]) {
            out.push(names[v]);
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn fill(
    ssa: &mut Ssa,
    entry: &mut Entry,
    b: BlockId,
    block: &ast::Block,
    map: &HashMap<Symbol, BlockId>,
    traps: &HashMap<Symbol, BlockId>,
    signatures: &[(Symbol, usize)],
    is_main: bool,
) {
    let operand = |ssa: &mut Ssa, entry: &mut Entry, a: &Arg| match a {
        Arg::Var(v) => ssa.read(*v, b, entry),
        Arg::Const(c) => Operand::Const(c.clone()),
    };
    for s in &block.body {
        match s {
            Stmt::Op1 { dst, op: Operator::Known(Op::Same), arg } => {
                let o = operand(ssa, entry, arg);
                let o = if may_be_unbound(&ssa.builder.func, &o, is_main) {
                    let v = ssa.builder.inst(b, InstKind::CheckBound(o), Some(*dst)).unwrap();
                    Operand::Value(v)
                } else {
                    o
                };
                ssa.write(*dst, b, o);
            }
            Stmt::Op1 { dst, op, arg } => {
                let args = vec![operand(ssa, entry, arg)];
                let v = ssa.builder.inst(b, op_kind(*op, args), Some(*dst)).unwrap();
                ssa.write(*dst, b, Operand::Value(v));
            }
            Stmt::Op2 { dst, op, lhs, rhs } => {
                let l = operand(ssa, entry, lhs);
                let r = operand(ssa, entry, rhs);
                let v = ssa.builder.inst(b, op_kind(*op, vec![l, r]), Some(*dst)).unwrap();
                ssa.write(*dst, b, Operand::Value(v));
            }
            Stmt::New { dst, class } => {
                let v = ssa.builder.inst(b, InstKind::New(*class), Some(*dst)).unwrap();
                ssa.write(*dst, b, Operand::Value(v));
            }
            Stmt::Get { dst, obj, field } => {
                let obj = operand(ssa, entry, obj);
                let v = ssa.builder.inst(b, InstKind::Get { obj, field: *field }, Some(*dst)).unwrap();
                ssa.write(*dst, b, Operand::Value(v));
            }
            Stmt::Set { obj, field, value } => {
                let obj = operand(ssa, entry, obj);
                let value = operand(ssa, entry, value);
                ssa.builder.inst(b, InstKind::Set { obj, field: *field, value }, None);
            }
        }
    }
    let to = |l: &Symbol| target(map, traps, *l);
    let term = match &block.term {
        ast::Terminator::Jump(l) | ast::Terminator::Promote { label: l, .. } => Terminator::Jump(to(l)),
        ast::Terminator::If { cond, then_label, else_label } => Terminator::Branch {
            cond: ssa.read(*cond, b, entry),
            then_block: to(then_label),
            else_block: to(else_label),
        },
        ast::Terminator::PrintAndStop(a) => Terminator::Print(operand(ssa, entry, a)),
        ast::Terminator::IfClass { obj, class, then_label, else_label } => Terminator::IfClass {
            obj: operand(ssa, entry, obj),
            class: *class,
            then_block: to(then_label),
            else_block: to(else_label),
        },
        ast::Terminator::Call { dst, func, args, next } => match signatures.iter().find(|(f, _)| f == func) {
            None => Terminator::Trap(Trap::UnknownFunction(*func)),
            Some(&(_, n)) if n != args.len() => {
                Terminator::Trap(Trap::ArgumentCount { func: *func, expected: n, got: args.len() })
            }
            Some(_) => {
                let args = args.iter().map(|a| operand(ssa, entry, a)).collect();
                let v = ssa.builder.inst(b, InstKind::Call { func: *func, args }, Some(*dst)).unwrap();
                ssa.write(*dst, b, Operand::Value(v));
                Terminator::Jump(to(next))
            }
        },
        ast::Terminator::Return(a) if is_main => {
            // The interpreter reads the operand before it finds no caller.
            if let Arg::Var(_) = a {
                let o = operand(ssa, entry, a);
                ssa.builder.inst(b, InstKind::CheckBound(o), None::<Symbol>);
            }
            Terminator::Trap(Trap::ReturnOutsideFunction)
        }
        ast::Terminator::Return(a) => Terminator::Return(operand(ssa, entry, a)),
        ast::Terminator::Error(r) => Terminator::Trap(Trap::Error(*r)),
    };
    ssa.builder.terminate(b, term);
}

fn op_kind(op: Operator, args: Vec<Operand>) -> InstKind {
    let op = match op {
        Operator::Known(known) if known.arity() != args.len() => Operator::Unknown(Symbol::intern(known.name())),
        op => op,
    };
    InstKind::Op { op, form: Form::Generic, args }
}

/// Whether a copied value may be unbound at run time: a main-graph
/// parameter the environment may lack, an `unbound` value, or a phi that
/// may merge one.
fn may_be_unbound(f: &Function, o: &Operand, is_main: bool) -> bool {
    let Operand::Value(v) = o else { return false };
    match f.values[*v].def {
        ValueDef::Param(_) => is_main,
        ValueDef::Inst(i) => matches!(f.insts[i].kind, InstKind::Unbound(_) | InstKind::Phi(_)),
        ValueDef::Detached => false,
    }
}
