//! A generator of arbitrary *valid* IR modules, beyond what the front end
//! emits: random control flow (irreducible loops, critical edges,
//! unreachable blocks, self loops), phis everywhere (long phi cycles
//! through loops), every operation in every form it can validly take,
//! objects, calls, traps and unbound values.
//!
//! # How a function is made
//!
//! 1. **Shape first.** `n` logical blocks, each a *head* and a *cont*
//!    block, plus one *stop* block. A head decrements the function's fuel
//!    and branches to its cont, or to stop when the fuel is spent; a cont
//!    ends in the logical block's random terminator (jump, branch, class
//!    test, print or return, error trap) to heads. Every cycle goes through
//!    a head, so every run ends: generated programs need no fuel from the
//!    engine, and native code can run them.
//! 2. **Dominators** of that shape say which values each block may use.
//! 3. **Values, in reverse postorder.** A block starts with the values
//!    available at the end of its immediate dominator; phis come first (a
//!    fuel phi, plus random ones with a declared type), then random
//!    instructions whose operands are chosen among available values of
//!    fitting types, then the terminator's operands. Blocks unreachable
//!    from the entry use only parameters and their own values. Phi inputs
//!    are filled last, from the values available at the end of each
//!    predecessor, so back edges carry values around loops.
//!
//! # Forms
//!
//! A value has a static type ([`Ty`]): an integer with an interval, a list
//! of known length, an atom, an object of a class, or anything. An
//! operation takes a specialized form only when the types prove its
//! promise: `.int` when its operands are integers (a list and an integer
//! for `readlist`), `.word` when they are words and
//! `flowc_lang::ops::range` proves the result is one (the index inside the
//! list for `readlist`). The IR stays valid *and* meaningful: a form's
//! promise is never broken at run time.
//!
//! Calls go from a function to functions after it in the module, so there
//! is no recursion and every call returns.
//!
//! # Traces
//!
//! [`trace`] makes a trace: a loop (an entry block jumping to a header
//! whose phis carry values around) or a bridge (straight-line code ending
//! in `exit`), with guards of every kind, each with resume data — one or
//! two frames (the outer with a pending call), environments naming
//! available values, constants and virtual objects whose fields name
//! values and other virtual objects. A fuel guard ends every loop.

use crate::choices::Choices;
use flowc_ir::cfg::{Cfg, DomTree};
use flowc_ir::{Args, BlockId, Builder, Function, FunctionKind, InstKind, Module, Operand, Terminator, Trap, ValueId};
use flowc_lang::ast::Operator;
use flowc_lang::ops::range::{self, Interval};
use flowc_lang::ops::{Form, Op};
use flowc_lang::{Symbol, Value};

/// What the generator knows of a value.
#[derive(Clone, Debug)]
pub enum Ty {
    Int(Interval),
    /// A list of this many elements.
    List(usize),
    Atom,
    Obj(Symbol),
    Any,
}

const CLASSES: [&str; 2] = ["point", "cell"];
const FIELDS: [&str; 3] = ["x", "y", "next"];

/// A generated module, and the environment its main function takes.
pub struct Generated {
    pub module: Module,
    pub env: Vec<(Symbol, Value)>,
}

/// The module of `seed`.
pub fn module(seed: u64) -> Generated {
    module_from(&mut Choices::seeded(seed ^ 0x5EED_0F1A_u64))
}

/// The module the fuzzer's bytes describe.
pub fn module_from_bytes(data: &[u8]) -> Generated {
    module_from(&mut Choices::bytes(data))
}

fn module_from(rng: &mut Choices) -> Generated {
    let helpers = rng.below(3);
    // Signatures first, so calls know their callees.
    let mut sigs: Vec<(Symbol, usize)> = vec![(Symbol::intern("main"), rng.below(3))];
    for k in 0..helpers {
        sigs.push((Symbol::intern(&format!("f{k}")), rng.below(4)));
    }
    let mut functions = Vec::new();
    for k in 0..sigs.len() {
        let kind = if k == 0 { FunctionKind::Main } else { FunctionKind::Function };
        functions.push(FnGen::new(rng, kind, sigs[k], &sigs[k + 1..]).run());
    }
    let env = (0..sigs[0].1).map(|k| (Symbol::intern(&format!("x{k}")), Value::Int(rng.range(-20, 40)))).collect();
    Generated { module: Module { pure: Vec::new(), immutable: Vec::new(), functions }, env }
}

/// A generated trace, the arguments it starts from, and the module that
/// gives it a layout of objects.
pub struct GeneratedTrace {
    pub trace: Function,
    pub args: Vec<Value>,
}

/// The trace of `seed`.
pub fn trace(seed: u64) -> GeneratedTrace {
    trace_from(&mut Choices::seeded(seed ^ 0x7ACE_u64))
}

/// The trace the fuzzer's bytes describe.
pub fn trace_from_bytes(data: &[u8]) -> GeneratedTrace {
    trace_from(&mut Choices::bytes(data))
}

fn trace_from(rng: &mut Choices) -> GeneratedTrace {
    let params = rng.below(4);
    let args = (0..params).map(|_| Value::Int(rng.range(-20, 40))).collect();
    let g = FnGen::new(rng, FunctionKind::Trace, (Symbol::intern("generated"), params), &[]);
    GeneratedTrace { trace: g.trace(), args }
}

struct FnGen<'r, 'c> {
    rng: &'r mut Choices<'c>,
    b: Builder,
    kind: FunctionKind,
    callees: Vec<(Symbol, usize)>,
    /// Types of the values made so far, by value index.
    types: Vec<Ty>,
}

/// The shape of one logical block.
#[derive(Clone, Copy)]
enum Shape {
    Jump(usize),
    Branch(usize, usize),
    IfClass(usize, usize),
    Exit,
    Trap,
}

impl<'r, 'c> FnGen<'r, 'c> {
    fn new(
        rng: &'r mut Choices<'c>,
        kind: FunctionKind,
        (name, params): (Symbol, usize),
        callees: &[(Symbol, usize)],
    ) -> Self {
        let mut g = FnGen { rng, b: Builder::new(kind, name), kind, callees: callees.to_vec(), types: Vec::new() };
        for k in 0..params {
            let v = g.b.param(Some(Symbol::intern(&format!("x{k}"))));
            g.set_ty(v, if kind == FunctionKind::Main { Ty::Int(Interval::new(-20, 40)) } else { Ty::Any });
        }
        g
    }

    fn set_ty(&mut self, v: ValueId, t: Ty) {
        let k = v.into_raw().into_u32() as usize;
        if self.types.len() <= k {
            self.types.resize(k + 1, Ty::Any);
        }
        self.types[k] = t;
    }

    fn ty(&self, v: ValueId) -> Ty {
        self.types.get(v.into_raw().into_u32() as usize).cloned().unwrap_or(Ty::Any)
    }

    fn run(mut self) -> Function {
        let n = 1 + self.rng.below(7);
        // Blocks: head k, cont k, then stop.
        let entry = self.b.entry();
        let mut heads = vec![entry];
        let mut conts = Vec::new();
        for k in 0..n {
            if k > 0 {
                heads.push(self.b.block(None));
            }
            conts.push(self.b.block(None));
        }
        let stop = self.b.block(Some(Symbol::intern("stop")));
        let shapes: Vec<Shape> = (0..n).map(|_| self.shape(n)).collect();
        // Placeholder terminators give the shape; operands come later.
        let c = Operand::int(1);
        for k in 0..n {
            self.b.terminate(heads[k], Terminator::Branch { cond: c.clone(), then_block: conts[k], else_block: stop });
            let t = match shapes[k] {
                Shape::Jump(t) => Terminator::Jump(heads[t]),
                Shape::Branch(t, e) => {
                    Terminator::Branch { cond: c.clone(), then_block: heads[t], else_block: heads[e] }
                }
                Shape::IfClass(t, e) => Terminator::IfClass {
                    obj: c.clone(),
                    class: Symbol::intern(CLASSES[0]),
                    then_block: heads[t],
                    else_block: heads[e],
                },
                Shape::Exit => self.exit(c.clone()),
                Shape::Trap => Terminator::Trap(Trap::Error(Symbol::intern("generated"))),
            };
            self.b.terminate(conts[k], t);
        }
        self.b.terminate(stop, self.exit(Operand::Const(Value::atom("out_of_fuel"))));
        // Values, dominators first.
        let cfg = Cfg::new(&self.b.func);
        let dom = DomTree::new(&self.b.func, &cfg);
        let nblocks = self.b.func.blocks.len();
        let mut end_avail: Vec<Option<Vec<ValueId>>> = vec![None; nblocks];
        let params = self.b.func.params.clone();
        let mut order: Vec<BlockId> = cfg.rpo.clone();
        order.extend(self.b.func.layout.iter().copied().filter(|&b| !cfg.is_reachable(b)));
        let mut phis: Vec<(BlockId, ValueId, Ty)> = Vec::new();
        // Each head's fuel after its decrement, and each block's fuel value.
        let mut fuel_after: Vec<Option<ValueId>> = vec![None; nblocks];
        let mut fuel_phis: Vec<(BlockId, ValueId)> = Vec::new();
        for &blk in &order {
            let ix = blk.into_raw().into_u32() as usize;
            let mut avail = match dom.idom(blk) {
                Some(d) if cfg.is_reachable(blk) => end_avail[d.into_raw().into_u32() as usize].clone().unwrap(),
                _ => params.clone(),
            };
            let preds = cfg.preds(blk).to_vec();
            if heads.contains(&blk) {
                // The fuel: a constant at the entry, a phi elsewhere.
                let fuel = if blk == entry {
                    let v = self.b.op(blk, Op::Same, vec![Operand::int(60)], Some(Symbol::intern("fuel")));
                    self.set_ty(v, Ty::Int(Interval::point(60)));
                    v
                } else {
                    let v = self.b.phi(blk, Vec::new(), Some(Symbol::intern("fuel")));
                    self.set_ty(v, Ty::Int(Interval::FULL));
                    fuel_phis.push((blk, v));
                    v
                };
                if !preds.is_empty() && blk != entry {
                    let made = self.typed_phis(blk);
                    avail.extend(made.iter().map(|(v, _)| *v));
                    phis.extend(made.into_iter().map(|(v, t)| (blk, v, t)));
                }
                let form = if self.rng.chance(50) { Form::Int } else { Form::Generic };
                let (next, ok) = self.spend_fuel(blk, fuel, form);
                fuel_after[ix] = Some(next);
                avail.push(next);
                self.body(blk, &mut avail);
                if let Terminator::Branch { cond, .. } = &mut self.b.func.blocks[blk].term {
                    *cond = ok.into();
                }
            } else if blk != stop {
                self.body(blk, &mut avail);
                let term_operand = self.operand(&avail, &Ty::Any);
                match &mut self.b.func.blocks[blk].term {
                    Terminator::Branch { cond, .. } => *cond = term_operand,
                    Terminator::IfClass { obj, class, .. } => {
                        *obj = term_operand;
                        *class = Symbol::intern(CLASSES[self.rng.below(CLASSES.len())]);
                    }
                    Terminator::Print(o) | Terminator::Return(o) => *o = term_operand,
                    _ => {}
                }
            }
            end_avail[ix] = Some(avail);
        }
        // Phi inputs, from the end of each predecessor.
        for (blk, v) in fuel_phis {
            let inputs = cfg
                .preds(blk)
                .iter()
                .map(|&p| {
                    // A cont's fuel is its head's: the head dominates it.
                    let from = fuel_source(&heads, &conts, p);
                    let o = match from.and_then(|h| fuel_after[h.into_raw().into_u32() as usize]) {
                        Some(f) => Operand::Value(f),
                        None => Operand::int(0),
                    };
                    (p, o)
                })
                .collect();
            self.set_phi_inputs(v, inputs);
        }
        for (blk, v, t) in phis {
            let inputs = cfg
                .preds(blk)
                .iter()
                .map(|&p| {
                    let avail = end_avail[p.into_raw().into_u32() as usize].clone().unwrap_or_default();
                    (p, self.operand(&avail, &t))
                })
                .collect();
            self.set_phi_inputs(v, inputs);
        }
        self.b.finish()
    }

    /// A loop trace or a bridge (see the module docs).
    fn trace(mut self) -> Function {
        let entry = self.b.entry();
        let mut avail = self.b.func.params.clone();
        self.body(entry, &mut avail);
        self.guards(entry, &avail);
        if self.rng.chance(30) {
            // A bridge: straight on to an exit.
            let r = self.resume(&avail);
            let label = Symbol::intern("out");
            self.b.terminate(entry, Terminator::Exit { resume: r, label });
            return self.b.finish();
        }
        let header = self.b.block(Some(Symbol::intern("loop")));
        self.b.terminate(entry, Terminator::Jump(header));
        let fuel = self.b.phi(header, Vec::new(), Some(Symbol::intern("fuel")));
        self.set_ty(fuel, Ty::Int(Interval::FULL));
        let mut inside = avail.clone();
        let phis = self.typed_phis(header);
        inside.extend(phis.iter().map(|(v, _)| *v));
        let (next, ok) = self.spend_fuel(header, fuel, Form::Int);
        inside.push(next);
        let r = self.resume(&inside);
        self.b.inst(
            header,
            InstKind::Guard { kind: flowc_ir::GuardKind::True(ok.into()), resume: r, label: Symbol::intern("done") },
            None,
        );
        self.body(header, &mut inside);
        self.guards(header, &inside);
        self.b.terminate(header, Terminator::Jump(header));
        self.set_phi_inputs(fuel, vec![(entry, Operand::int(25)), (header, Operand::Value(next))]);
        for (v, t) in phis {
            let from_entry = self.operand(&avail, &t);
            let around = self.operand(&inside, &t);
            self.set_phi_inputs(v, vec![(entry, from_entry), (header, around)]);
        }
        self.b.finish()
    }

    /// Zero to two (in a trace, three) phis of random declared types at the
    /// start of `blk`; their inputs are filled once every block is made.
    fn typed_phis(&mut self, blk: BlockId) -> Vec<(ValueId, Ty)> {
        let most = if self.kind == FunctionKind::Trace { 4 } else { 3 };
        (0..self.rng.below(most))
            .map(|_| {
                let t = self.random_ty();
                let v = self.b.phi(blk, Vec::new(), None);
                self.set_ty(v, t.clone());
                (v, t)
            })
            .collect()
    }

    /// `next = sub fuel, 1` (in `form`) and `ok = gt next, 0` appended to
    /// `blk`: the fuel after this block, and whether any is left.
    fn spend_fuel(&mut self, blk: BlockId, fuel: ValueId, form: Form) -> (ValueId, ValueId) {
        let args = [fuel.into(), Operand::int(1)].into_iter().collect();
        let kind = InstKind::Op { op: Operator::Known(Op::Sub), form, args };
        let next = self.b.inst(blk, kind, Some(Symbol::intern("fuel"))).expect("an operation has a result");
        self.set_ty(next, Ty::Int(Interval::FULL));
        let ok = self.b.op(blk, Op::Gt, vec![next.into(), Operand::int(0)], None);
        self.set_ty(ok, Ty::Int(Interval::BOOL));
        (next, ok)
    }

    /// Zero to three guards of random kinds at the end of `blk`, and now
    /// and then an iteration count.
    fn guards(&mut self, blk: BlockId, avail: &[ValueId]) {
        use flowc_ir::GuardKind;
        for _ in 0..self.rng.below(4) {
            let o = self.operand(avail, &Ty::Any);
            let kind = match self.rng.below(6) {
                0 => GuardKind::True(o),
                1 => GuardKind::False(o),
                2 => GuardKind::Value(o, Value::Int(self.rng.range(-3, 3))),
                3 => GuardKind::Class(o, Symbol::intern(CLASSES[self.rng.below(2)])),
                4 => GuardKind::NotClass(o, Symbol::intern(CLASSES[self.rng.below(2)])),
                _ => {
                    let lo = self.rng.range(-50, 10);
                    GuardKind::Int(o, lo, lo + self.rng.range(0, 60))
                }
            };
            let resume = self.resume(avail);
            let label = Symbol::intern(&format!("l{}", self.rng.below(3)));
            self.b.inst(blk, InstKind::Guard { kind, resume, label }, None);
        }
        // A count of skipped loop iterations, as a counted loop's skip
        // ends (traces only, as guards).
        if self.rng.chance(20) {
            let k = Operand::int(self.rng.range(0, 5));
            self.b.inst(blk, InstKind::Iterations(k), None);
        }
    }

    /// A resume record over `avail`: one or two frames, virtual objects.
    fn resume(&mut self, avail: &[ValueId]) -> flowc_ir::ResumeId {
        use flowc_ir::{ResumeData, ResumeFrame, ResumeValue, VirtualObject};
        let virtuals = self.rng.below(3);
        let value = |g: &mut Self| -> ResumeValue {
            if virtuals > 0 && g.rng.chance(20) {
                ResumeValue::Virtual(g.rng.below(virtuals) as u32)
            } else {
                ResumeValue::Operand(g.operand(avail, &Ty::Any))
            }
        };
        let frames = 1 + self.rng.below(2);
        let mut data = ResumeData::default();
        for k in 0..frames {
            let env = (0..self.rng.below(4)).map(|n| (Symbol::intern(&format!("x{n}")), value(self))).collect();
            let call = (k + 1 < frames).then(|| (Symbol::intern("r"), Symbol::intern("after")));
            let function = (k > 0).then(|| Symbol::intern("callee"));
            data.frames.push(ResumeFrame { function, env, call });
        }
        for _ in 0..virtuals {
            let class = Symbol::intern(CLASSES[self.rng.below(2)]);
            let fields = (0..self.rng.below(3)).map(|n| (Symbol::intern(FIELDS[n]), value(self))).collect();
            data.virtuals.push(VirtualObject { class, fields });
        }
        self.b.resume(data)
    }

    fn set_phi_inputs(&mut self, v: ValueId, inputs: Vec<(BlockId, Operand)>) {
        let flowc_ir::ValueDef::Inst(i) = self.b.func.values[v].def else { unreachable!() };
        self.b.func.insts[i].kind = InstKind::Phi(inputs.into_iter().collect());
    }

    fn exit(&self, o: Operand) -> Terminator {
        if self.kind == FunctionKind::Main {
            Terminator::Print(o)
        } else {
            Terminator::Return(o)
        }
    }

    fn shape(&mut self, n: usize) -> Shape {
        // Targets are heads 1.. (never the entry).
        let target = |rng: &mut Choices| if n == 1 { 0 } else { 1 + rng.below(n - 1) };
        if n == 1 {
            return if self.rng.chance(10) { Shape::Trap } else { Shape::Exit };
        }
        match self.rng.below(20) {
            0..=5 => Shape::Jump(target(self.rng)),
            6..=12 => Shape::Branch(target(self.rng), target(self.rng)),
            13..=14 => Shape::IfClass(target(self.rng), target(self.rng)),
            15 => Shape::Trap,
            _ => Shape::Exit,
        }
    }

    fn random_ty(&mut self) -> Ty {
        match self.rng.below(10) {
            0..=5 => Ty::Int(Interval::FULL),
            6 => Ty::Atom,
            7 => Ty::List(2),
            8 => Ty::Obj(Symbol::intern(CLASSES[self.rng.below(2)])),
            _ => Ty::Any,
        }
    }

    /// An operand of type `want` among `avail` (or a constant of it; for
    /// objects, any value when none is available).
    fn operand(&mut self, avail: &[ValueId], want: &Ty) -> Operand {
        let fits: Vec<ValueId> = avail.iter().copied().filter(|&v| fits(&self.ty(v), want)).collect();
        if !fits.is_empty() && self.rng.chance(80) {
            return Operand::Value(*self.rng.pick(&fits));
        }
        match want {
            Ty::Int(i) => {
                let (lo, hi) = (i.lo().max(-100) as i64, i.hi().min(100) as i64);
                Operand::int(if lo <= hi { self.rng.range(lo, hi) } else { 0 })
            }
            Ty::List(n) => Operand::Const(Value::list((0..*n).map(|k| Value::Int(k as i64 * 3)).collect())),
            Ty::Atom => Operand::Const(Value::atom(["a", "b", "none"][self.rng.below(3)])),
            // No object constants: any available value (or an integer).
            Ty::Obj(_) | Ty::Any => match avail.is_empty() {
                false if self.rng.chance(70) => Operand::Value(*self.rng.pick(avail)),
                _ => Operand::int(self.rng.range(-5, 5)),
            },
        }
    }

    /// An available object, if any.
    fn object(&mut self, avail: &[ValueId]) -> Option<Operand> {
        let objs: Vec<ValueId> = avail.iter().copied().filter(|&v| matches!(self.ty(v), Ty::Obj(_))).collect();
        (!objs.is_empty()).then(|| Operand::Value(*self.rng.pick(&objs)))
    }

    /// The type of an operand.
    fn operand_ty(&self, o: &Operand) -> Ty {
        match o {
            Operand::Value(v) => self.ty(*v),
            Operand::Const(Value::Int(i)) => Ty::Int(Interval::point(*i as i128)),
            Operand::Const(Value::List(l)) => Ty::List(l.len()),
            Operand::Const(Value::Atom(_)) => Ty::Atom,
            Operand::Const(_) => Ty::Any,
        }
    }

    /// Random instructions appended to `blk`, their results added to `avail`.
    fn body(&mut self, blk: BlockId, avail: &mut Vec<ValueId>) {
        for _ in 0..self.rng.below(6) {
            let (kind, t) = match self.rng.below(20) {
                0..=11 => self.op_inst(avail),
                12 => (InstKind::New(Symbol::intern(CLASSES[self.rng.below(2)])), None),
                13 | 14 => match self.object(avail) {
                    // Fields are read only after a write in the same
                    // block could have set them; a read of an unset field
                    // is an error like any other, now and then.
                    Some(obj) if self.rng.chance(60) => {
                        let value = self.operand(avail, &Ty::Int(Interval::FULL));
                        (InstKind::set(obj, Symbol::intern(FIELDS[self.rng.below(FIELDS.len())]), value), None)
                    }
                    Some(obj) => {
                        (InstKind::get(obj, Symbol::intern(FIELDS[self.rng.below(FIELDS.len())])), Some(Ty::Any))
                    }
                    None => (InstKind::New(Symbol::intern(CLASSES[self.rng.below(2)])), None),
                },
                15 | 16 if !self.callees.is_empty() => {
                    let (func, arity) = *self.rng.pick(&self.callees.clone());
                    let args: Args = (0..arity).map(|_| self.operand(avail, &Ty::Any)).collect();
                    (InstKind::Call { func, args }, Some(Ty::Any))
                }
                17 => {
                    let o = self.operand(avail, &Ty::Any);
                    let t = self.operand_ty(&o);
                    (InstKind::CheckBound(o), Some(t))
                }
                18 if self.rng.chance(10) => (InstKind::Unbound(Symbol::intern("u")), Some(Ty::Any)),
                _ => self.op_inst(avail),
            };
            let class = match &kind {
                InstKind::New(c) => Some(*c),
                _ => None,
            };
            if let Some(v) = self.b.inst(blk, kind, None) {
                let t = match class {
                    Some(c) => Ty::Obj(c),
                    None => t.unwrap_or(Ty::Any),
                };
                self.set_ty(v, t);
                avail.push(v);
            }
        }
    }

    /// A random operation, in the strongest form its operands allow (or a
    /// weaker one), with its result type.
    fn op_inst(&mut self, avail: &[ValueId]) -> (InstKind, Option<Ty>) {
        let op = *self.rng.pick(Op::ALL);
        let wants: Vec<Ty> = match op {
            Op::ReadList => vec![Ty::List(2), Ty::Int(Interval::new(0, 1))],
            Op::Len => vec![Ty::List(2)],
            Op::Same | Op::Eq | Op::Ne => vec![Ty::Any; op.arity()],
            _ => vec![Ty::Int(Interval::FULL); op.arity()],
        };
        // Now and then an operand of any type: generic forms fail on it.
        let args: Args = wants
            .iter()
            .map(|w| if self.rng.chance(3) { self.operand(avail, &Ty::Any) } else { self.operand(avail, w) })
            .collect();
        let tys: Vec<Ty> = args.iter().map(|a| self.operand_ty(a)).collect();
        let ints: Option<Vec<Interval>> =
            tys.iter().map(|t| if let Ty::Int(i) = t { Some(*i) } else { None }).collect();
        let int_ok = match op {
            Op::ReadList => matches!(tys[..], [Ty::List(_), Ty::Int(_)]),
            Op::Len => false,
            _ => ints.is_some(),
        };
        let word_ok = match (op, &tys[..]) {
            (Op::ReadList, [Ty::List(n), Ty::Int(i)]) => i.lo() >= 0 && i.hi() < *n as i128,
            (Op::Len, [Ty::List(_)]) => true,
            (Op::Same | Op::Eq | Op::Ne, _) => false,
            _ => ints.as_ref().is_some_and(|is| range::cannot_overflow(op, is)),
        };
        let forms = op.info().forms;
        let form = match self.rng.below(3) {
            0 if word_ok && forms.contains(&Form::Word) => Form::Word,
            1 if int_ok && forms.contains(&Form::Int) => Form::Int,
            _ => Form::Generic,
        };
        let result = match (op, &ints) {
            (Op::ReadList, _) => Ty::Int(Interval::new(0, 3)),
            (Op::Len, _) => Ty::Int(Interval::NON_NEGATIVE),
            (Op::Same, _) => tys[0].clone(),
            (Op::Eq | Op::Ne, _) => Ty::Int(Interval::BOOL),
            (_, Some(is)) => Ty::Int(range::transfer(op, is)),
            _ => Ty::Any,
        };
        (InstKind::Op { op: Operator::Known(op), form, args }, Some(result))
    }
}

/// The head whose fuel reaches the end of block `p`: `p` itself, or the
/// head of the cont `p`.
fn fuel_source(heads: &[BlockId], conts: &[BlockId], p: BlockId) -> Option<BlockId> {
    if heads.contains(&p) {
        return Some(p);
    }
    conts.iter().position(|&c| c == p).map(|k| heads[k])
}

/// Whether a value of type `have` may stand where `want` is wanted.
fn fits(have: &Ty, want: &Ty) -> bool {
    match (have, want) {
        (_, Ty::Any) => true,
        (Ty::Int(h), Ty::Int(w)) => w.lo() <= h.lo() && h.hi() <= w.hi(),
        (Ty::List(h), Ty::List(w)) => h == w,
        (Ty::Atom, Ty::Atom) => true,
        (Ty::Obj(_), Ty::Obj(_)) => true,
        _ => false,
    }
}
