//! Lowering one flow graph (the main graph or a function) to an IR function.

use bitvec::prelude::*;

use flowc_ir::{
    Args, BlockId, Builder, Capacity, Function, FunctionKind, InstKind, Operand, Terminator, Trap, ValueDef,
};
use flowc_lang::ast::{self, Arg, Operator, Stmt};
use flowc_lang::flow::{edges, reverse_postorder, Labels, Signatures};
use flowc_lang::ops::Op;
use flowc_lang::symbol::SymbolMap;
use flowc_lang::Symbol;

use crate::ssa::{EntryValue, Ssa};
use flowc_ir::ix;

/// Variables read by a terminator (`promote` reads nothing: it is a jump).
fn term_reads(t: &ast::Terminator) -> Vec<Symbol> {
    match t {
        ast::Terminator::Promote { .. } => Vec::new(),
        t => t.uses(),
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
    params: SymbolMap<Operand>,
    unbound: SymbolMap<Operand>,
    entry: BlockId,
    /// In the main graph every variable read before it is written on some
    /// path is a parameter, created when construction first meets it.
    lazy_params: bool,
}

impl EntryValue for Entry {
    fn entry_value(&mut self, builder: &mut Builder, var: Symbol) -> Operand {
        if let Some(p) = self.params.get(&var) {
            return p.clone();
        }
        if let Some(u) = self.unbound.get(&var) {
            return u.clone();
        }
        if self.lazy_params {
            let o = Operand::Value(builder.param(Some(var)));
            self.params.insert(var, o.clone());
            return o;
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
    signatures: &Signatures,
) -> Function {
    let index = Labels::new(blocks);
    // Reachable AST blocks, in reverse postorder from the entry.
    let entry_index = index.get(entry_label).expect("the entry label names a block");
    let rpo = reverse_postorder(blocks, &index, entry_index, signatures);
    let mut reachable = bitvec![0; blocks.len()];
    for &i in &rpo {
        reachable.set(i, true);
    }
    let entry_has_preds = rpo.iter().any(|&i| edges(&blocks[i].term, signatures).any(|l| l == entry_label));

    // IR blocks: one per reachable AST block (file order), one trap block per
    // missing label; the AST entry is the IR entry unless it has predecessors.
    // Room for every block and statement, plus phis (a guess: they are
    // fewer than statements in practice, though half as many was too few
    // for the generated programs of `compile_scale`, whose instruction
    // arena then regrew and was copied). Room never used is never
    // touched, so it costs no resident memory.
    let statements: usize = rpo.iter().map(|&i| blocks[i].body.len() + 1).sum();
    let capacity = Capacity { blocks: rpo.len() + 1, insts: 2 * statements };
    let mut builder = Builder::with_capacity(kind, name, capacity);
    let fresh_entry = builder.entry();
    let mut ir_of: Vec<Option<BlockId>> = vec![None; blocks.len()];
    for (i, b) in blocks.iter().enumerate() {
        if reachable[i] {
            ir_of[i] = Some(if b.label == entry_label && !entry_has_preds {
                builder.set_name(fresh_entry, Some(b.label));
                fresh_entry
            } else {
                builder.block(Some(b.label))
            });
        }
    }
    let mut traps: SymbolMap<BlockId> = SymbolMap::default();
    let mut trap_blocks = Vec::new();
    for &i in &rpo {
        for l in edges(&blocks[i].term, signatures) {
            if index.get(l).is_none() && !traps.contains_key(&l) {
                let t = builder.block(None);
                builder.terminate(t, Terminator::Trap(Trap::UnknownLabel(l)));
                traps.insert(l, t);
                trap_blocks.push(t);
            }
        }
    }
    let targets = Targets { index: &index, ir_of: &ir_of, traps: &traps };
    let n = builder.func.blocks.len();
    let raw = ix::<flowc_ir::BlockData>;
    // Predecessors in the IR, distinct, in the order edges are met.
    let mut preds: Vec<Vec<BlockId>> = vec![Vec::new(); n];
    let mut add_edge = |from: BlockId, to: BlockId| {
        let p = &mut preds[raw(to)];
        if !p.contains(&from) {
            p.push(from);
        }
    };
    let entry_block = targets.get(entry_label);
    if entry_has_preds {
        add_edge(fresh_entry, entry_block);
    }
    for &i in &rpo {
        let from = ir_of[i].expect("reachable");
        for l in edges(&blocks[i].term, signatures) {
            add_edge(from, targets.get(l));
        }
    }

    let is_main = params.is_none();
    let mut entry =
        Entry { params: SymbolMap::default(), unbound: SymbolMap::default(), entry: fresh_entry, lazy_params: is_main };
    for &p in params.unwrap_or_default() {
        let v = builder.param(Some(p));
        entry.params.insert(p, Operand::Value(v));
    }
    let mut ssa = Ssa::new(builder, preds, capacity);

    // Fill blocks in reverse postorder; seal each as soon as all its
    // predecessors are filled.
    let mut order: Vec<(BlockId, Option<usize>)> = Vec::with_capacity(n);
    if entry_has_preds {
        order.push((fresh_entry, None));
    }
    order.extend(rpo.iter().map(|&i| (ir_of[i].expect("reachable"), Some(i))));
    order.extend(trap_blocks.iter().map(|&t| (t, None)));
    let mut filled = vec![false; n];
    let all_filled = |ssa: &Ssa, b: BlockId, filled: &[bool]| ssa.preds(b).iter().all(|p| filled[raw(*p)]);
    for &(b, ast) in &order {
        if all_filled(&ssa, b, &filled) {
            ssa.seal(b, &mut entry);
        }
        match ast {
            Some(i) => {
                let function = (kind != FunctionKind::Main).then_some(name);
                fill(&mut ssa, &mut entry, b, blocks[i], &targets, signatures, function);
            }
            None if b == fresh_entry => ssa.builder.terminate(b, Terminator::Jump(entry_block)),
            None => {}
        }
        filled[raw(b)] = true;
        for s in ssa.builder.func.blocks[b].term.successors() {
            if all_filled(&ssa, s, &filled) {
                ssa.seal(s, &mut entry);
            }
        }
    }
    let mut f = ssa.finish();
    if is_main {
        order_parameters(&mut f, &first_use_order(blocks, &rpo));
    }
    f
}

/// Maps labels to the IR blocks jumps go to.
struct Targets<'a> {
    index: &'a Labels,
    ir_of: &'a [Option<BlockId>],
    traps: &'a SymbolMap<BlockId>,
}

impl Targets<'_> {
    /// The lowered block of `l`, or the trap block of a missing label.
    fn get(&self, l: Symbol) -> BlockId {
        match self.index.get(l) {
            Some(i) => self.ir_of[i].expect("jump targets of reachable blocks are reachable"),
            None => self.traps[&l],
        }
    }
}

/// Puts the main graph's parameters in first-use order (their position in
/// `order`) and gives them the first value numbers.
fn order_parameters(f: &mut Function, order: &SymbolMap<usize>) {
    let key = |f: &Function, v: flowc_ir::ValueId| f.values[v].name.and_then(|n| order.get(&n).copied());
    let mut params = f.params.clone();
    params.sort_by_key(|&v| key(f, v).unwrap_or(usize::MAX));
    for (i, &p) in params.iter().enumerate() {
        f.values[p].def = ValueDef::Param(i as u32);
    }
    f.params = params.clone();
    f.reorder_values(&params);
}

/// Position of each variable's first read: blocks in reverse postorder,
/// statements in order, then the terminator.
fn first_use_order(blocks: &[&ast::Block], rpo: &[usize]) -> SymbolMap<usize> {
    let mut order = SymbolMap::default();
    let mut note = |v: Symbol| {
        let n = order.len();
        order.entry(v).or_insert(n);
    };
    for &i in rpo {
        for s in &blocks[i].body {
            s.args().into_iter().filter_map(arg_var).for_each(&mut note);
        }
        term_reads(&blocks[i].term).into_iter().for_each(&mut note);
    }
    order
}

fn fill(
    ssa: &mut Ssa,
    entry: &mut Entry,
    b: BlockId,
    block: &ast::Block,
    targets: &Targets,
    signatures: &Signatures,
    function: Option<Symbol>,
) {
    let is_main = function.is_none();
    let operand = |ssa: &mut Ssa, entry: &mut Entry, a: &Arg| match a {
        Arg::Var(v) => ssa.read(*v, b, entry),
        Arg::Const(c) => Operand::Const(c.clone()),
    };
    // Every instruction gets the site of the statement (or terminator) it
    // was made for, for error messages.
    let site = |statement: usize, is_terminator: bool| flowc_ir::Site {
        function,
        block: block.label,
        statement: statement as u32,
        is_terminator,
    };
    for (k, s) in block.body.iter().enumerate() {
        let before = ssa.builder.func.blocks[b].insts.len();
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
                let args = Args::from_iter([operand(ssa, entry, arg)]);
                let v = ssa.builder.inst(b, InstKind::generic_op(*op, args), Some(*dst)).unwrap();
                ssa.write(*dst, b, Operand::Value(v));
            }
            Stmt::Op2 { dst, op, lhs, rhs } => {
                let l = operand(ssa, entry, lhs);
                let r = operand(ssa, entry, rhs);
                let v = ssa.builder.inst(b, InstKind::generic_op(*op, [l, r]), Some(*dst)).unwrap();
                ssa.write(*dst, b, Operand::Value(v));
            }
            Stmt::New { dst, class } => {
                let v = ssa.builder.inst(b, InstKind::New(*class), Some(*dst)).unwrap();
                ssa.write(*dst, b, Operand::Value(v));
            }
            Stmt::Get { dst, obj, field } => {
                let obj = operand(ssa, entry, obj);
                let v = ssa.builder.inst(b, InstKind::get(obj, *field), Some(*dst)).unwrap();
                ssa.write(*dst, b, Operand::Value(v));
            }
            Stmt::Set { obj, field, value } => {
                let obj = operand(ssa, entry, obj);
                let value = operand(ssa, entry, value);
                ssa.builder.inst(b, InstKind::set(obj, *field, value), None);
            }
        }
        mark_sites(&mut ssa.builder.func, b, before, site(k + 1, false));
    }
    let terminator = site(block.body.len() + 1, true);
    let before = ssa.builder.func.blocks[b].insts.len();
    let to = |l: &Symbol| targets.get(*l);
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
        ast::Terminator::Call { dst, func, args, next } => match signatures.first(*func) {
            None => Terminator::Trap(Trap::UnknownFunction(*func)),
            Some(n) if n != args.len() => {
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
    mark_sites(&mut ssa.builder.func, b, before, terminator);
    ssa.builder.func.sites.set_term(b, terminator);
}

/// Gives the instructions of block `b` from position `from` on the source
/// site `site`.
fn mark_sites(f: &mut Function, b: BlockId, from: usize, site: flowc_ir::Site) {
    for k in from..f.blocks[b].insts.len() {
        let i = f.blocks[b].insts[k];
        f.sites.set_inst(i, site);
    }
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
