//! Out of SSA: converting IR back into a runnable flow-graph program (the
//! analogue of Factor's `nodes>quot`), so every stage of the compiler can be
//! run by the reference interpreter.
//!
//! - Parameters keep their source names (the environment binds them by
//!   name); other values become variables `name_N` (or `vN`), made unique.
//!   An `unbound x` value becomes the never-assigned variable `x`, so reading
//!   it fails with `key_not_found(x)` as in the source.
//! - Phis become copies on the incoming edges: in the predecessor when it
//!   has a single successor, else in a new edge block. Copies of one edge are
//!   a parallel copy, sequentialized through temporaries when a copy would
//!   overwrite a variable another copy still reads.
//! - A `call` ends a block in the language, so blocks are split after calls.
//! - `check_bound` becomes a copy (which checks, as in the language); traps
//!   become the statement that raises the same error.
//!
//! Limitation: a phi input that is unbound at run time is copied, and the
//! copy fails where the original program might not have read the variable:
//! a parameter the environment leaves unbound, or a variable assigned on
//! one path and read only after it (a loop's variable first assigned in
//! one of its rounds, as `tests/corpus/shapes/row_rewired.fg` would be
//! without its first assignments of `q` and `gone`). The corpus binds
//! such variables on every path.

use std::collections::{HashMap, HashSet};

use flowc_lang::ast::{self, Arg, Entry, Item, Operator, Program, Stmt};
use flowc_lang::ops::Op;
use flowc_lang::{Symbol, Value};

use crate::function::{BlockId, Function, FunctionKind, Module, ValueId};
use crate::inst::{InstKind, Operand, Terminator, Trap};
use crate::print::{block_ref, value_ref};

/// Converts a module to a program whose `entry` fact starts at the main
/// function's entry block.
pub fn module_to_program(m: &Module) -> Result<Program, String> {
    let mut items = Vec::new();
    let mut main_entry = None;
    for f in &m.functions {
        match f.kind {
            FunctionKind::Main => {
                let (blocks, entry) = Converter::new(f).convert()?;
                main_entry = Some(entry);
                items.extend(blocks.into_iter().map(Item::Block));
            }
            FunctionKind::Function => {
                let (blocks, _) = Converter::new(f).convert()?;
                let params = f.params.iter().map(|&p| f.values[p].name.unwrap_or_else(|| sym(&value_ref(p)))).collect();
                items.push(Item::Function(ast::Function { name: f.name, params, blocks }));
            }
            FunctionKind::Trace => return Err(format!("trace `{}` cannot be converted to a program", f.name)),
        }
    }
    let mut head = Vec::new();
    if let Some(label) = main_entry {
        head.push(Item::Entry(Entry { label, env: None }));
    }
    head.extend(m.pure.iter().map(|f| Item::Pure(*f)));
    head.extend(m.immutable.iter().map(|(c, fs)| Item::Immutable(*c, fs.clone())));
    head.extend(items);
    Ok(Program { items: head })
}

/// [`module_to_program`] for a module lowered from `source` at `label`,
/// carrying over what the module does not hold: the start environment
/// `source` gives `label` (so the converted program runs as is, with the
/// same input) and the `can_enter_jit` hints on labels the converted main
/// graph still has. What `flowc opt --emit fgl` prints.
pub fn module_to_program_from(m: &Module, source: &Program, label: Symbol) -> Result<Program, String> {
    let mut program = module_to_program(m)?;
    let env = source.entry_env(label).map(<[_]>::to_vec);
    let labels: HashSet<Symbol> = program.main_blocks().map(|b| b.label).collect();
    let hints: Vec<Item> =
        source.can_enter_jit_labels().filter(|l| labels.contains(l)).map(Item::CanEnterJit).collect();
    for item in &mut program.items {
        if let Item::Entry(e) = item {
            e.env = env.clone();
        }
    }
    let at = program.items.iter().position(|i| !matches!(i, Item::Entry(_))).unwrap_or(program.items.len());
    program.items.splice(at..at, hints);
    Ok(program)
}

fn sym(s: &str) -> Symbol {
    Symbol::intern(s)
}

struct Converter<'f> {
    f: &'f Function,
    vars: HashMap<ValueId, Symbol>,
    labels: HashMap<BlockId, Symbol>,
    taken: HashSet<Symbol>,
    out: Vec<ast::Block>,
    /// Edge blocks of the block being converted, emitted after it.
    edges: Vec<ast::Block>,
}

impl<'f> Converter<'f> {
    fn new(f: &'f Function) -> Converter<'f> {
        let mut c = Converter {
            f,
            vars: HashMap::new(),
            labels: HashMap::new(),
            taken: HashSet::new(),
            out: Vec::new(),
            edges: Vec::new(),
        };
        // Parameters and unbound values keep their source names.
        for &p in &f.params {
            let n = f.values[p].name.unwrap_or_else(|| sym(&value_ref(p)));
            c.taken.insert(n);
            c.vars.insert(p, n);
        }
        for (_, i) in f.all_insts() {
            if let (InstKind::Unbound(x), Some(v)) = (&f.insts[i].kind, f.insts[i].result) {
                c.taken.insert(*x);
                c.vars.insert(v, *x);
            }
        }
        // Missing labels stay missing: generated labels avoid them.
        for &b in &f.layout {
            if let Terminator::Trap(Trap::UnknownLabel(l)) = f.blocks[b].term {
                c.taken.insert(l);
            }
        }
        // Labels: the source label where it is unique, else numbered.
        let mut count: HashMap<Symbol, usize> = HashMap::new();
        for &b in &f.layout {
            if let Some(n) = f.blocks[b].name {
                *count.entry(n).or_default() += 1;
            }
        }
        for &b in &f.layout {
            let want = match f.blocks[b].name {
                Some(n) if count[&n] == 1 => n.as_str().to_owned(),
                Some(n) => format!("{n}_{}", block_ref(b)),
                None => block_ref(b),
            };
            let l = c.fresh_label(&want);
            c.labels.insert(b, l);
        }
        c
    }

    fn fresh_label(&mut self, want: &str) -> Symbol {
        let mut name = want.to_owned();
        while self.taken.contains(&sym(&name)) {
            name.push('_');
        }
        let s = sym(&name);
        self.taken.insert(s);
        s
    }

    fn var(&mut self, v: ValueId) -> Symbol {
        if let Some(&s) = self.vars.get(&v) {
            return s;
        }
        let n = v.into_raw().into_u32();
        let want = match self.f.values[v].name {
            Some(name) => format!("{name}_{n}"),
            None => format!("v{n}"),
        };
        let s = self.fresh_label(&want);
        self.vars.insert(v, s);
        s
    }

    fn arg(&mut self, o: &Operand) -> Arg {
        match o {
            Operand::Value(v) => Arg::Var(self.var(*v)),
            Operand::Const(c) => Arg::Const(c.clone()),
        }
    }

    fn convert(mut self) -> Result<(Vec<ast::Block>, Symbol), String> {
        for &b in &self.f.layout.clone() {
            self.block(b)?;
        }
        let entry = self.labels[&self.f.entry];
        Ok((self.out, entry))
    }

    fn block(&mut self, b: BlockId) -> Result<(), String> {
        let f = self.f;
        let mut label = self.labels[&b];
        let mut body = Vec::new();
        for &i in &f.blocks[b].insts {
            let data = &f.insts[i];
            let dst = data.result.map(|v| self.var(v));
            match &data.kind {
                InstKind::Phi(_) => return Err("phi among the instructions".into()),
                InstKind::Op { op, args, .. } => {
                    let op = match op {
                        Operator::Known(k) if k.arity() == args.len() => Operator::Known(*k),
                        other => Operator::Unknown(sym(other.name())),
                    };
                    let dst = dst.expect("ops have results");
                    body.push(match args.as_slice() {
                        [a] => Stmt::Op1 { dst, op, arg: self.arg(a) },
                        [a, b2] => Stmt::Op2 { dst, op, lhs: self.arg(a), rhs: self.arg(b2) },
                        _ => return Err(format!("operation `{}` with {} operands", op.name(), args.len())),
                    });
                }
                InstKind::CheckBound(o) => {
                    let arg = self.arg(o);
                    let dst = dst.unwrap_or_else(|| sym("_"));
                    body.push(Stmt::Op1 { dst, op: Operator::Known(Op::Same), arg });
                }
                InstKind::Unbound(_) => {}
                InstKind::New(class) => body.push(Stmt::New { dst: dst.unwrap(), class: *class }),
                InstKind::Get { obj, field, .. } => {
                    body.push(Stmt::Get { dst: dst.unwrap(), obj: self.arg(obj), field: *field })
                }
                InstKind::Set { obj, field, value, .. } => {
                    body.push(Stmt::Set { obj: self.arg(obj), field: *field, value: self.arg(value) })
                }
                InstKind::Call { func, args } => {
                    let args = args.iter().map(|a| self.arg(a)).collect();
                    let next = self.fresh_label(&format!("{label}_ret"));
                    let term = ast::Terminator::Call { dst: dst.unwrap(), func: *func, args, next };
                    self.out.push(ast::Block { label, body: std::mem::take(&mut body), term });
                    label = next;
                }
                InstKind::Guard { .. } | InstKind::Iterations(_) => {
                    return Err("guards and iteration counts only occur in traces".into())
                }
                InstKind::Walk { .. } => return Err("walks only occur in code being compiled, after the passes".into()),
            }
        }
        let term = self.terminator(b, &mut body)?;
        self.out.push(ast::Block { label, body, term });
        self.out.append(&mut self.edges);
        Ok(())
    }

    /// The label to jump to for edge `from -> to`, with the phi copies
    /// either appended to `body` (single-successor blocks) or in an edge block.
    fn edge(&mut self, from: BlockId, to: BlockId, body: Option<&mut Vec<Stmt>>) -> Symbol {
        let copies = self.copies(from, to);
        match body {
            Some(body) => {
                body.extend(copies);
                self.labels[&to]
            }
            None if copies.is_empty() => self.labels[&to],
            None => {
                let l = self.fresh_label(&format!("{}_to_{}", self.labels[&from], self.labels[&to]));
                let term = ast::Terminator::Jump(self.labels[&to]);
                self.edges.push(ast::Block { label: l, body: copies, term });
                l
            }
        }
    }

    /// The parallel copy for the phis of `to` on the edge from `from`.
    fn copies(&mut self, from: BlockId, to: BlockId) -> Vec<Stmt> {
        let f = self.f;
        let mut pairs: Vec<(Symbol, Arg)> = Vec::new();
        for &phi in &f.blocks[to].phis {
            let InstKind::Phi(inputs) = &f.insts[phi].kind else { continue };
            let Some((_, o)) = inputs.iter().find(|(b, _)| *b == from) else { continue };
            let dst = self.var(f.insts[phi].result.expect("phi result"));
            let src = self.arg(o);
            if src != Arg::Var(dst) {
                pairs.push((dst, src));
            }
        }
        let dsts: HashSet<Symbol> = pairs.iter().map(|(d, _)| *d).collect();
        let conflict = pairs.iter().any(|(_, s)| matches!(s, Arg::Var(v) if dsts.contains(v)));
        let same = |dst, arg| Stmt::Op1 { dst, op: Operator::Known(Op::Same), arg };
        if !conflict {
            return pairs.into_iter().map(|(d, s)| same(d, s)).collect();
        }
        let temps: Vec<Symbol> = pairs.iter().map(|(d, _)| self.fresh_label(&format!("{d}_tmp"))).collect();
        let mut out: Vec<Stmt> = pairs.iter().zip(&temps).map(|((_, s), t)| same(*t, s.clone())).collect();
        out.extend(pairs.iter().zip(&temps).map(|((d, _), t)| same(*d, Arg::Var(*t))));
        out
    }

    fn cond_var(&mut self, o: &Operand, body: &mut Vec<Stmt>) -> Symbol {
        match self.arg(o) {
            Arg::Var(v) => v,
            Arg::Const(c) => {
                let t = self.fresh_label("cond");
                body.push(Stmt::Op1 { dst: t, op: Operator::Known(Op::Same), arg: Arg::Const(c) });
                t
            }
        }
    }

    fn terminator(&mut self, b: BlockId, body: &mut Vec<Stmt>) -> Result<ast::Terminator, String> {
        let f = self.f;
        Ok(match &f.blocks[b].term {
            Terminator::Jump(t) => ast::Terminator::Jump(self.edge(b, *t, Some(body))),
            Terminator::Branch { cond, then_block, else_block } => {
                let cond = self.cond_var(cond, body);
                let then_label = self.edge(b, *then_block, None);
                let else_label = self.edge(b, *else_block, None);
                ast::Terminator::If { cond, then_label, else_label }
            }
            Terminator::IfClass { obj, class, then_block, else_block } => {
                let obj = self.arg(obj);
                let then_label = self.edge(b, *then_block, None);
                let else_label = self.edge(b, *else_block, None);
                ast::Terminator::IfClass { obj, class: *class, then_label, else_label }
            }
            Terminator::Print(o) => ast::Terminator::PrintAndStop(self.arg(o)),
            Terminator::Return(o) => ast::Terminator::Return(self.arg(o)),
            Terminator::Trap(t) => match t {
                Trap::Error(r) => ast::Terminator::Error(*r),
                // A jump to the missing label fails the same way.
                Trap::UnknownLabel(l) => ast::Terminator::Jump(*l),
                Trap::UnknownFunction(func) => {
                    let dst = self.fresh_label("unused");
                    ast::Terminator::Call { dst, func: *func, args: vec![], next: self.labels[&b] }
                }
                Trap::ArgumentCount { func, got, .. } => {
                    let dst = self.fresh_label("unused");
                    let args = vec![Arg::Const(Value::Int(0)); *got];
                    ast::Terminator::Call { dst, func: *func, args, next: self.labels[&b] }
                }
                Trap::ReturnOutsideFunction => ast::Terminator::Return(Arg::Const(Value::Int(0))),
                Trap::Unreachable => ast::Terminator::Error(sym("unreachable")),
            },
            Terminator::Exit { .. } | Terminator::JumpTrace { .. } => {
                return Err("trace exits only occur in traces".into())
            }
        })
    }
}
