//! The SSA trace optimizer (`--optimizer ssa`): one forward pass over the
//! loop of a trace (DESIGN.md "Traces"), then the shared `dce` pass.
//!
//! Before the walk, the loop's phis get kinds and ranges: the body is run
//! abstractly until every phi is stable (`phi_ranges`), from what the
//! JIT lets the trace assume of its inputs ([`optimize_assuming`]).
//!
//! Walking the trace in order, it knows facts about values (the lattice of
//! `propagate`, [`flowc_passes::lattice`]) and rewrites as it goes:
//! - operations with known operands fold (the op table's `eval`); others
//!   take the cheapest form their operands allow; a repeated pure
//!   operation reuses the first one (CSE);
//! - guards teach: after `guard_value x, c` uses of `x` become `c`; after
//!   `guard_false x`, `x` is 0; after `guard_true c` with `c = lt x, 10`,
//!   `x` is below 10; after `guard_class`, the class is known. A guard
//!   whose outcome is already known is dropped;
//! - allocations are removed: a `new` becomes a virtual object whose
//!   fields are tracked through `set` and `get`; it is materialized only
//!   where it escapes (any other use, the loop's back edge) — and in the
//!   resume data of guards, where it stays virtual and is rebuilt only if
//!   the guard fails. Only done when the program cannot observe allocation
//!   numbers ([`flowc_passes::observe`]);
//! - at the end, a loop-carried phi whose value does not change is
//!   replaced by its initial value, and guards with equal resume data
//!   share one record.
//!
//! Then the shared dead-code elimination removes what nothing needs.
//!
//! A bridge (straight-line code ending in an `exit`, [`crate::to_ir::bridge`])
//! is optimized the same way; objects still virtual at its exit stay
//! virtual in the exit's record.

use flowc_ir::{
    BlockId, Function, GuardKind, InstData, InstId, InstKind, Module, Operand, ResumeData, ResumeId, ResumeValue,
    Terminator, ValueData, ValueDef, ValueId, VirtualObject,
};
use flowc_lang::ast::Operator;
use flowc_lang::ops::range::Interval;
use flowc_lang::ops::{Form, Op};
use flowc_lang::{Symbol, Value};
use flowc_passes::edit::{ix, Substitution};
use flowc_passes::lattice::{self, Info, Kinds, Widening};

/// Operation and guard counts, and resume data size, of a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    pub operations: usize,
    pub guards: usize,
    /// Bytes of resume data (a 16-byte header per record, frame and virtual
    /// object, 8 bytes per variable and field), each record counted once.
    pub resume_bytes: usize,
}

impl TraceStats {
    pub fn of(f: &Function) -> TraceStats {
        let mut s = TraceStats::default();
        let mut seen: Vec<ResumeId> = Vec::new();
        for (_, i) in f.all_insts() {
            match &f.insts[i].kind {
                InstKind::Guard { resume, .. } => {
                    s.guards += 1;
                    if !seen.contains(resume) {
                        seen.push(*resume);
                        s.resume_bytes += record_bytes(&f.resumes[*resume]);
                    }
                }
                InstKind::Phi(_) | InstKind::Unbound(_) => {}
                _ => s.operations += 1,
            }
        }
        s
    }

    /// Resume data per guard, in bytes.
    pub fn bytes_per_guard(&self) -> f64 {
        if self.guards == 0 {
            0.0
        } else {
            self.resume_bytes as f64 / self.guards as f64
        }
    }
}

fn record_bytes(r: &ResumeData) -> usize {
    16 + r.frames.iter().map(|f| 16 + 8 * f.env.len()).sum::<usize>()
        + r.virtuals.iter().map(|v| 16 + 8 * v.fields.len()).sum::<usize>()
}

/// `guard_value p, c` in the loop, where `p` is a phi whose back-edge
/// input is `c` itself: only the first iteration can fail it, so the guard
/// moves to the preheader, on the phi's entry input, and `p` becomes `c`.
/// Returns whether anything changed.
fn settle_promoted_phis(f: &mut Function, body: BlockId) -> bool {
    let pre = f.entry;
    let mut subst = Substitution::new(f);
    let mut gone: Vec<InstId> = Vec::new();
    for i in f.blocks[body].insts.clone() {
        let InstKind::Guard { kind: GuardKind::Value(Operand::Value(p), c), .. } = f.insts[i].kind.clone() else {
            continue;
        };
        let ValueDef::Inst(phi) = f.values[p].def else { continue };
        let InstKind::Phi(inputs) = &f.insts[phi].kind else { continue };
        if gone.contains(&phi) {
            continue;
        }
        let entry = inputs.iter().find(|(b, _)| *b == pre).map(|(_, o)| o.clone());
        let back = inputs.iter().find(|(b, _)| *b == body).map(|(_, o)| o.clone());
        let (Some(entry), Some(Operand::Const(k))) = (entry, back) else { continue };
        if k != c {
            continue;
        }
        let resume = entry_record(f);
        let label = f.name;
        let g = f.insts.alloc(InstData {
            kind: InstKind::Guard { kind: GuardKind::Value(entry, c.clone()), resume, label },
            result: None,
        });
        f.blocks[pre].insts.push(g);
        subst.set(p, Operand::Const(c));
        gone.push(phi);
        gone.push(i);
    }
    if gone.is_empty() {
        return false;
    }
    flowc_passes::edit::unlink_where(f, body, |i| gone.contains(&i));
    subst.apply(f);
    true
}

/// A resume record for leaving before the first iteration: the main frame
/// with the trace's parameters, at its anchor (as if the trace had not been
/// entered).
fn entry_record(f: &mut Function) -> ResumeId {
    let env = f
        .params
        .iter()
        .map(|&p| {
            let name = f.values[p].name.expect("trace parameters are named");
            (name, ResumeValue::Operand(Operand::Value(p)))
        })
        .collect();
    let frame = flowc_ir::ResumeFrame { function: None, env, call: None };
    let record = ResumeData { frames: vec![frame], virtuals: Vec::new() };
    if let Some((r, _)) = f.resumes.iter().find(|(_, d)| **d == record) {
        return r;
    }
    f.resumes.alloc(record)
}

/// Kinds and ranges of the phis of loop block `body`, given the
/// parameters' infos: the body (straight-line code between guards) is run
/// abstractly — operations by the op table's transfer functions, guards
/// narrowing what they test as [`Opt::learn`] does — and each phi joins its
/// entry input with what the back edge brings, until nothing changes.
/// Phis that keep growing are widened as propagate's are
/// ([`Widening`]), so this ends (were it not to within its rounds, every
/// phi would come out as any value). Phis of
/// anything but integers come out as any value.
fn phi_ranges(f: &Function, body: BlockId, params: &[(ValueId, Info)]) -> Vec<(ValueId, Info)> {
    let pre = f.entry;
    let mut info = vec![Info::bottom(); f.values.len()];
    for (p, i) in params {
        info[ix(*p)] = i.clone();
    }
    let of = |info: &[Info], o: &Operand| match o {
        Operand::Const(c) => Info::of_const(c),
        Operand::Value(v) => info.get(ix(*v)).cloned().filter(|i| !i.is_bottom()).unwrap_or_else(Info::value),
    };
    let phis: Vec<(ValueId, Operand, Operand)> = f.blocks[body]
        .phis
        .iter()
        .filter_map(|&i| {
            let InstKind::Phi(inputs) = &f.insts[i].kind else { return None };
            let input = |b: BlockId| inputs.iter().find(|(p, _)| *p == b).map(|(_, o)| o.clone());
            Some((f.insts[i].result?, input(pre)?, input(body)?))
        })
        .collect();
    let widening = Widening::of(f);
    let mut current: Vec<Info> = phis.iter().map(|(_, entry, _)| of(&info, entry)).collect();
    let mut changes = vec![0u8; phis.len()];
    let mut settled = false;
    for _ in 0..16 {
        for ((phi, _, _), i) in phis.iter().zip(&current) {
            info[ix(*phi)] = i.clone();
        }
        for &i in &f.blocks[body].insts {
            abstract_step(f, &mut info, i, &of);
        }
        let mut changed = false;
        for (k, (_, entry, back)) in phis.iter().enumerate() {
            let joined = of(&info, entry).join(&of(&info, back));
            if joined == current[k] {
                continue;
            }
            changed = true;
            changes[k] = changes[k].saturating_add(1);
            current[k] = widening.step(changes[k], &current[k], joined);
        }
        if !changed {
            settled = true;
            break;
        }
    }
    // Unsettled (not seen in practice): no claim at all.
    phis.iter()
        .zip(current)
        .map(|((phi, _, _), i)| (*phi, if settled && i.kinds == Kinds::INT { i } else { Info::value() }))
        .collect()
}

/// One instruction of [`phi_ranges`]' abstract run of a loop body.
fn abstract_step(f: &Function, info: &mut [Info], i: InstId, of: &impl Fn(&[Info], &Operand) -> Info) {
    let data = &f.insts[i];
    match &data.kind {
        InstKind::Op { op: Operator::Known(op), args, .. } if op.arity() == args.len() => {
            let infos: Vec<Info> = args.iter().map(|a| of(info, a)).collect();
            if let Some(v) = data.result {
                info[ix(v)] = lattice::transfer(*op, &infos);
            }
        }
        InstKind::Guard { kind, .. } => {
            let Operand::Value(v) = kind.operand() else { return };
            let v = *v;
            match kind {
                GuardKind::True(_) | GuardKind::False(_) => {
                    let holds = matches!(kind, GuardKind::True(_));
                    info[ix(v)] = lattice::when_truth(of(info, &Operand::Value(v)), holds);
                    if let Some((op, x, k, mirrored)) = compared_with_constant(f, v) {
                        info[ix(x)] = lattice::when_compared(of(info, &Operand::Value(x)), op, k, mirrored, holds);
                    }
                }
                GuardKind::Value(_, c) => info[ix(v)] = Info::of_const(c),
                GuardKind::Class(..) | GuardKind::NotClass(..) => {}
            }
        }
        _ => {
            if let Some(v) = data.result {
                info[ix(v)] = Info::value();
            }
        }
    }
}

/// `c`'s definition when it compares a value with an integer constant:
/// the comparison, the value, the constant, and whether the constant is
/// on the left (what a guard on `c` teaches about the value).
fn compared_with_constant(f: &Function, c: ValueId) -> Option<(Op, ValueId, i128, bool)> {
    let ValueDef::Inst(ci) = f.values[c].def else { return None };
    let InstKind::Op { op: Operator::Known(op), args, .. } = &f.insts[ci].kind else { return None };
    if !matches!(op, Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Eq | Op::Ne) {
        return None;
    }
    match args.as_slice() {
        [Operand::Value(x), Operand::Const(Value::Int(k))] => Some((*op, *x, *k as i128, false)),
        [Operand::Const(Value::Int(k)), Operand::Value(x)] => Some((*op, *x, *k as i128, true)),
        _ => None,
    }
}

/// The loop block of a trace: the block that jumps to itself.
fn loop_block(f: &Function) -> Option<BlockId> {
    f.layout.iter().copied().find(|&b| f.blocks[b].term == Terminator::Jump(b))
}

/// Optimizes trace `f`; `hints` holds the program's `pure` and `immutable`
/// declarations; `remove_allocations` allows virtual objects.
pub fn optimize(f: &mut Function, hints: &Module, remove_allocations: bool) {
    optimize_assuming(f, hints, remove_allocations, &[]);
}

/// [`optimize`], assuming each parameter in `assume` is an integer in its
/// interval (the JIT checks that before entering the code). Loop phis
/// then get ranges (`phi_ranges`): a counter that starts positive and
/// leaves the loop at 0 is a word, and so is the arithmetic on it.
pub fn optimize_assuming(f: &mut Function, hints: &Module, remove_allocations: bool, assume: &[(ValueId, Interval)]) {
    match loop_block(f) {
        Some(body) => {
            let mut o = Opt::new(f, hints, remove_allocations, assume);
            o.loop_phis(body);
            o.hoist_invariant_guards(body);
            o.run(body);
            o.finish(body);
            // A promoted variable the loop sets to the value it promotes
            // needs checking on entry only; then a second round folds what
            // its constant value makes constant.
            if settle_promoted_phis(f, body) {
                let mut o = Opt::new(f, hints, remove_allocations, assume);
                o.loop_phis(body);
                o.hoist_invariant_guards(body);
                o.run(body);
                o.finish(body);
            }
        }
        // A bridge: one block that ends by leaving the trace.
        None if f.layout.len() == 1 && f.blocks[f.entry].term.resume().is_some() => {
            let body = f.entry;
            let mut o = Opt::new(f, hints, remove_allocations, &[]);
            o.run(body);
            o.finish_bridge(body);
        }
        None => return,
    }
    let mut module =
        Module { pure: hints.pure.clone(), immutable: hints.immutable.clone(), functions: vec![f.clone()] };
    flowc_passes::dce::function(&mut module, 0);
    *f = module.functions.pop().expect("the trace");
}

struct Virtual {
    class: Symbol,
    fields: Vec<(Symbol, Operand)>,
}

struct Opt<'a> {
    f: &'a mut Function,
    hints: &'a Module,
    remove_allocations: bool,
    info: Vec<Info>,
    subst: Vec<Option<Operand>>,
    virtuals: Vec<Option<Virtual>>,
    cse: std::collections::HashMap<(Operator, Form, flowc_ir::Args), ValueId>,
    out: Vec<InstId>,
}

impl<'a> Opt<'a> {
    fn new(
        f: &'a mut Function,
        hints: &'a Module,
        remove_allocations: bool,
        assume: &[(ValueId, Interval)],
    ) -> Opt<'a> {
        let n = f.values.len();
        let mut info = vec![Info::bottom(); n];
        for &p in &f.params {
            info[ix(p)] = match assume.iter().find(|(q, _)| *q == p) {
                Some((_, r)) => Info::int(*r),
                None => Info::value(),
            };
        }
        for (_, i) in f.all_insts() {
            if let (InstKind::Unbound(_), Some(v)) = (&f.insts[i].kind, f.insts[i].result) {
                info[ix(v)] = Info::of_kinds(Kinds::UNBOUND);
            }
        }
        Opt {
            f,
            hints,
            remove_allocations,
            info,
            subst: vec![None; n],
            virtuals: (0..n).map(|_| None).collect(),
            cse: Default::default(),
            out: Vec::new(),
        }
    }

    fn grow(&mut self) {
        let n = self.f.values.len();
        self.info.resize(n, Info::bottom());
        self.subst.resize(n, None);
        self.virtuals.resize_with(n, || None);
    }

    fn resolve(&self, o: &Operand) -> Operand {
        let mut o = o.clone();
        while let Operand::Value(v) = o {
            match self.subst.get(ix(v)).and_then(|s| s.clone()) {
                Some(next) => o = next,
                None => break,
            }
        }
        o
    }

    fn info_of(&self, o: &Operand) -> Info {
        match o {
            Operand::Const(c) => Info::of_const(c),
            Operand::Value(v) if self.virtuals[ix(*v)].is_some() => {
                Info::object(self.virtuals[ix(*v)].as_ref().unwrap().class, None)
            }
            Operand::Value(v) => {
                let i = &self.info[ix(*v)];
                if i.is_bottom() {
                    Info::value()
                } else {
                    i.clone()
                }
            }
        }
    }

    fn virtual_of(&self, o: &Operand) -> Option<ValueId> {
        match o {
            Operand::Value(v) if self.virtuals[ix(*v)].is_some() => Some(*v),
            _ => None,
        }
    }

    /// A new instruction, not yet placed.
    fn make(&mut self, kind: InstKind, name: Option<Symbol>) -> (InstId, Option<ValueId>) {
        let has = kind.has_result();
        let i = self.f.insts.alloc(InstData { kind, result: None });
        let v = has.then(|| self.f.values.alloc(ValueData { def: ValueDef::Inst(i), name }));
        self.f.insts[i].result = v;
        self.grow();
        (i, v)
    }

    /// Makes virtual object `v` real here: `new` and its fields' `set`s.
    fn materialize(&mut self, v: ValueId) -> Operand {
        let Some(virt) = self.virtuals[ix(v)].take() else { return Operand::Value(v) };
        let (i, nv) = self.make(InstKind::New(virt.class), self.f.values[v].name);
        let nv = nv.unwrap();
        self.out.push(i);
        self.info[ix(nv)] = Info::object(virt.class, None);
        self.subst[ix(v)] = Some(Operand::Value(nv));
        for (field, value) in virt.fields {
            let value = self.real(&value);
            let (s, _) = self.make(InstKind::Set { obj: Operand::Value(nv), field, value }, None);
            self.out.push(s);
        }
        Operand::Value(nv)
    }

    /// The operand, resolved, with a virtual object materialized.
    fn real(&mut self, o: &Operand) -> Operand {
        let o = self.resolve(o);
        match self.virtual_of(&o) {
            Some(v) => self.materialize(v),
            None => o,
        }
    }

    /// Guards on the trace's parameters (values the loop never changes)
    /// are checked once, in the preheader, before the first iteration: a
    /// failing one leaves for the interpreter at the anchor with the
    /// parameters, as if the trace had not been entered. In the loop they
    /// hold, and what they teach holds from its first instruction.
    fn hoist_invariant_guards(&mut self, body: BlockId) {
        let pre = self.f.entry;
        if pre == body {
            return;
        }
        let mut record: Option<ResumeId> = None;
        for i in self.f.blocks[body].insts.clone() {
            let InstKind::Guard { kind, .. } = self.f.insts[i].kind.clone() else { continue };
            let o = self.resolve(kind.operand());
            let Operand::Value(v) = o else { continue };
            if !self.f.params.contains(&v) || self.holds(&kind, &o) {
                continue;
            }
            let resume = *record.get_or_insert_with(|| entry_record(self.f));
            let label = self.f.name;
            let (g, _) = self.make(InstKind::Guard { kind: kind.clone(), resume, label }, None);
            self.f.blocks[pre].insts.push(g);
            self.learn(&kind, &o);
        }
    }

    /// Gives the loop's phis the ranges [`phi_ranges`] finds.
    fn loop_phis(&mut self, body: BlockId) {
        let params: Vec<(ValueId, Info)> = self.f.params.iter().map(|&p| (p, self.info[ix(p)].clone())).collect();
        for (phi, info) in phi_ranges(self.f, body, &params) {
            self.info[ix(phi)] = info;
        }
    }

    fn run(&mut self, body: BlockId) {
        let insts = self.f.blocks[body].insts.clone();
        for i in insts {
            self.inst(i);
        }
    }

    fn keep(&mut self, i: InstId, kind: InstKind) {
        self.f.insts[i].kind = kind;
        self.out.push(i);
    }

    fn inst(&mut self, i: InstId) {
        let kind = self.f.insts[i].kind.clone();
        let result = self.f.insts[i].result;
        match kind {
            InstKind::Op { op: Operator::Known(op), args, .. } if op.arity() == args.len() => {
                let args: flowc_ir::Args = args.iter().map(|a| self.real(a)).collect();
                let infos: Vec<Info> = args.iter().map(|a| self.info_of(a)).collect();
                let out = lattice::transfer(op, &infos);
                let v = result.expect("ops have results");
                if let (Some(c), true) = (&out.constant, args.iter().all(|a| matches!(a, Operand::Const(_)))) {
                    self.subst[ix(v)] = Some(Operand::Const(c.clone()));
                    return;
                }
                let form = lattice::best_form(op, &infos);
                let key = (Operator::Known(op), form, args.clone());
                if let Some(&prev) = self.cse.get(&key) {
                    self.subst[ix(v)] = Some(Operand::Value(prev));
                    return;
                }
                self.cse.insert(key, v);
                self.info[ix(v)] = out;
                self.keep(i, InstKind::Op { op: Operator::Known(op), form, args });
            }
            InstKind::Op { op, form, args } => {
                let args = args.iter().map(|a| self.real(a)).collect();
                self.keep(i, InstKind::Op { op, form, args });
            }
            InstKind::CheckBound(o) => {
                let o = self.resolve(&o);
                let v = result.expect("check_bound has a result");
                if self.virtual_of(&o).is_some() || !self.info_of(&o).may_be_unbound() {
                    self.subst[ix(v)] = Some(o);
                    return;
                }
                self.info[ix(v)] = self.info_of(&o).bound();
                self.keep(i, InstKind::CheckBound(o));
            }
            InstKind::New(class) => {
                let v = result.expect("new has a result");
                if self.remove_allocations {
                    self.virtuals[ix(v)] = Some(Virtual { class, fields: Vec::new() });
                } else {
                    self.info[ix(v)] = Info::object(class, Some(i));
                    self.keep(i, InstKind::New(class));
                }
            }
            InstKind::Set { obj, field, value } => {
                let obj = self.resolve(&obj);
                let value = self.resolve(&value);
                if let Some(ov) = self.virtual_of(&obj) {
                    let virt = self.virtuals[ix(ov)].as_mut().unwrap();
                    let immutable = self.hints.is_immutable(virt.class, field);
                    match virt.fields.iter_mut().find(|(f, _)| *f == field) {
                        // Setting an immutable field twice fails: leave it to run time.
                        Some(_) if immutable => {}
                        Some(slot) => {
                            slot.1 = value;
                            return;
                        }
                        None => {
                            virt.fields.push((field, value));
                            return;
                        }
                    }
                }
                let obj = self.real(&obj);
                let value = self.real(&value);
                self.keep(i, InstKind::Set { obj, field, value });
            }
            InstKind::Get { obj, field } => {
                let obj = self.resolve(&obj);
                let v = result.expect("get has a result");
                // An immutable field of a known object (promoted) is fixed.
                if let Operand::Const(Value::Object(o)) = &obj {
                    if self.hints.is_immutable(o.class, field) {
                        if let Some(x) = o.get(field) {
                            self.subst[ix(v)] = Some(Operand::Const(x));
                            return;
                        }
                    }
                }
                if let Some(ov) = self.virtual_of(&obj) {
                    let virt = self.virtuals[ix(ov)].as_ref().unwrap();
                    if let Some((_, x)) = virt.fields.iter().find(|(f, _)| *f == field) {
                        self.subst[ix(v)] = Some(x.clone());
                        return;
                    }
                }
                let obj = self.real(&obj);
                self.info[ix(v)] = Info::value();
                self.keep(i, InstKind::Get { obj, field });
            }
            InstKind::Guard { kind, resume, label } => self.guard(i, kind, resume, label),
            InstKind::Call { func, args } => {
                let args: flowc_ir::Args = args.iter().map(|a| self.real(a)).collect();
                let v = result.expect("calls have results");
                if let Some(c) = self.fold_call(func, &args) {
                    self.subst[ix(v)] = Some(Operand::Const(c));
                    return;
                }
                self.info[ix(v)] = Info::value();
                self.keep(i, InstKind::Call { func, args });
            }
            InstKind::Phi(_) | InstKind::Unbound(_) => self.out.push(i),
        }
    }

    /// The result of a `pure` function called with constant arguments, if
    /// running it returns a constant.
    fn fold_call(&self, func: Symbol, args: &[Operand]) -> Option<Value> {
        if !self.hints.is_pure(func) {
            return None;
        }
        let consts: Vec<Value> = args.iter().map(|a| a.as_const().cloned()).collect::<Option<_>>()?;
        let config = flowc_lang::interp::Config { fuel: Some(100_000), max_depth: 10_000 };
        match flowc_ir::interp::call(self.hints, func, &consts, &config) {
            Ok(flowc_ir::interp::Exit::Returned(v)) if v.is_constant() => Some(v),
            _ => None,
        }
    }

    fn guard(&mut self, i: InstId, kind: GuardKind, resume: ResumeId, label: Symbol) {
        let o = self.resolve(kind.operand());
        // Guards on virtual objects are decided by their class.
        if let Some(v) = self.virtual_of(&o) {
            let class = self.virtuals[ix(v)].as_ref().unwrap().class;
            let holds = match &kind {
                GuardKind::True(_) => true,
                GuardKind::Class(_, c) => *c == class,
                GuardKind::NotClass(_, c) => *c != class,
                GuardKind::False(_) | GuardKind::Value(..) => false,
            };
            if holds {
                return;
            }
        }
        if self.holds(&kind, &o) {
            return;
        }
        let o = self.real(&o);
        let mut kind = kind;
        *kind.operand_mut() = o.clone();
        let record = self.snapshot(resume);
        self.f.resumes[resume] = record;
        self.keep(i, InstKind::Guard { kind: kind.clone(), resume, label });
        self.learn(&kind, &o);
    }

    /// Whether guard `kind` on `o` is known to hold.
    fn holds(&self, kind: &GuardKind, o: &Operand) -> bool {
        if let Operand::Const(c) = o {
            let is = |class: Symbol| matches!(c, Value::Object(x) if x.class == class);
            return match kind {
                GuardKind::True(_) => c.is_truthy(),
                GuardKind::False(_) => !c.is_truthy(),
                GuardKind::Value(_, k) => c == k,
                GuardKind::Class(_, class) => is(*class),
                GuardKind::NotClass(_, class) => !is(*class),
            };
        }
        let info = self.info_of(o);
        match kind {
            GuardKind::True(_) => info.truth() == Some(true),
            GuardKind::False(_) => info.truth() == Some(false),
            GuardKind::Value(_, c) => info.constant.as_ref() == Some(c),
            GuardKind::Class(_, c) => info.is_class(*c) == Some(true),
            GuardKind::NotClass(_, c) => info.is_class(*c) == Some(false),
        }
    }

    /// What passing the guard teaches about later uses.
    fn learn(&mut self, kind: &GuardKind, o: &Operand) {
        let Operand::Value(v) = o else { return };
        let v = *v;
        let info = self.info_of(o);
        match kind {
            GuardKind::True(_) | GuardKind::False(_) => {
                let truth = matches!(kind, GuardKind::True(_));
                let learned = lattice::when_truth(info, truth);
                if let Some(c) = &learned.constant {
                    self.subst[ix(v)] = Some(Operand::Const(c.clone()));
                }
                self.info[ix(v)] = learned;
                self.learn_comparison(v, truth);
            }
            GuardKind::Value(_, c) => {
                self.subst[ix(v)] = Some(Operand::Const(c.clone()));
                self.info[ix(v)] = Info::of_const(c);
            }
            GuardKind::Class(_, c) => self.info[ix(v)] = Info::object(*c, info.alloc),
            GuardKind::NotClass(..) => {}
        }
    }

    /// After a guard on `c = cmp x, k`, narrows `x`.
    fn learn_comparison(&mut self, c: ValueId, holds: bool) {
        let Some((op, x, k, mirrored)) = compared_with_constant(self.f, c) else { return };
        let narrowed = lattice::when_compared(self.info_of(&Operand::Value(x)), op, k, mirrored, holds);
        if let Some(c) = &narrowed.constant {
            self.subst[ix(x)] = Some(Operand::Const(c.clone()));
        }
        self.info[ix(x)] = narrowed;
    }

    /// The guard's resume record with current operands, virtual objects
    /// kept virtual.
    /// A record made by an earlier round (after `settle_promoted_phis`)
    /// may already hold virtual objects: they keep their numbers, their
    /// fields' operands are brought up to date, and objects virtual in
    /// this round are numbered after them.
    fn snapshot(&mut self, r: ResumeId) -> ResumeData {
        let mut record = self.f.resumes[r].clone();
        let mut virtuals: Vec<(Option<ValueId>, VirtualObject)> =
            std::mem::take(&mut record.virtuals).into_iter().map(|v| (None, v)).collect();
        for k in 0..virtuals.len() {
            let mut fields = std::mem::take(&mut virtuals[k].1.fields);
            for (_, rv) in fields.iter_mut() {
                if let ResumeValue::Operand(o) = rv {
                    *rv = self.resume_value(o, &mut virtuals);
                }
            }
            virtuals[k].1.fields = fields;
        }
        for frame in &mut record.frames {
            for (_, rv) in frame.env.iter_mut() {
                if let ResumeValue::Operand(o) = rv {
                    *rv = self.resume_value(o, &mut virtuals);
                }
            }
        }
        record.virtuals = virtuals.into_iter().map(|(_, v)| v).collect();
        record
    }

    fn resume_value(&self, o: &Operand, virtuals: &mut Vec<(Option<ValueId>, VirtualObject)>) -> ResumeValue {
        let o = self.resolve(o);
        let Some(v) = self.virtual_of(&o) else { return ResumeValue::Operand(o) };
        if let Some(k) = virtuals.iter().position(|(x, _)| *x == Some(v)) {
            return ResumeValue::Virtual(k as u32);
        }
        let k = virtuals.len();
        let virt = self.virtuals[ix(v)].as_ref().unwrap();
        virtuals.push((Some(v), VirtualObject { class: virt.class, fields: Vec::new() }));
        let fields: Vec<(Symbol, ResumeValue)> =
            virt.fields.iter().map(|(f, x)| (*f, self.resume_value(x, virtuals))).collect();
        virtuals[k].1.fields = fields;
        ResumeValue::Virtual(k as u32)
    }

    /// Back edges, trivial phis, shared records; installs the new body.
    fn finish(&mut self, body: BlockId) {
        // Phis nothing reads any more (their variable is rewritten before
        // any use) go first, so their back-edge objects stay virtual.
        let used = self.used_values(body);
        let unused: Vec<InstId> = self.f.blocks[body]
            .phis
            .iter()
            .copied()
            .filter(|&p| self.f.insts[p].result.is_some_and(|v| !used[ix(v)]))
            .collect();
        self.f.blocks[body].phis.retain(|p| !unused.contains(p));
        for p in unused {
            if let Some(v) = self.f.insts[p].result {
                self.f.values[v].def = ValueDef::Detached;
            }
        }
        let phis = self.f.blocks[body].phis.clone();
        let mut inputs = Vec::new();
        for &phi in &phis {
            let InstKind::Phi(ins) = self.f.insts[phi].kind.clone() else { continue };
            // Facts learned along the loop hold at its end (the back edge),
            // not where it is entered: entry inputs stay as they are.
            let mut new = flowc_ir::PhiInputs::with_capacity(ins.len());
            for (p, o) in ins {
                let o = if p == body { self.real(&o) } else { o };
                new.push((p, o));
            }
            inputs.push((phi, new));
        }
        for (phi, new) in inputs {
            self.f.insts[phi].kind = InstKind::Phi(new);
        }
        self.f.blocks[body].insts = self.out.iter().copied().filter(|i| !phis.contains(i)).collect();
        // Every kept instruction got its operands rewritten in order; the
        // substitutions are position-dependent (a guard's facts hold only
        // after it), so none is applied to the whole trace.
        // A phi whose back-edge value is itself or its start value is trivial.
        loop {
            let mut trivial = Substitution::new(self.f);
            let mut gone = Vec::new();
            for &phi in &self.f.blocks[body].phis {
                let InstKind::Phi(ins) = &self.f.insts[phi].kind else { continue };
                let me = Operand::Value(self.f.insts[phi].result.unwrap());
                let others: Vec<&Operand> = ins.iter().map(|(_, o)| o).filter(|o| **o != me).collect();
                if let Some(first) = others.first() {
                    if others.iter().all(|o| o == first) {
                        trivial.set(self.f.insts[phi].result.unwrap(), (*first).clone());
                        gone.push(phi);
                    }
                }
            }
            if gone.is_empty() {
                break;
            }
            flowc_passes::edit::unlink_where(self.f, body, |i| gone.contains(&i));
            trivial.apply(self.f);
        }
        self.share_records(body);
    }

    /// Installs a bridge's new body; its exit's record is taken at the end,
    /// objects still virtual there staying virtual.
    fn finish_bridge(&mut self, body: BlockId) {
        if let Some(r) = self.f.blocks[body].term.resume() {
            let record = self.snapshot(r);
            self.f.resumes[r] = record;
        }
        self.f.blocks[body].insts = std::mem::take(&mut self.out).into();
        self.share_records(body);
    }

    /// Values read by the kept instructions, their resume records, or the
    /// phis (phi inputs count only when the phi itself is read: a fixpoint).
    fn used_values(&self, body: BlockId) -> Vec<bool> {
        let mut used = vec![false; self.f.values.len()];
        // Kept instructions and their records already hold final operands.
        let mark = |o: &Operand, used: &mut Vec<bool>| {
            if let Operand::Value(v) = o {
                used[ix(*v)] = true;
            }
        };
        for &i in &self.out {
            let kind = &self.f.insts[i].kind;
            for o in kind.operands() {
                mark(o, &mut used);
            }
            if let InstKind::Guard { resume, .. } = kind {
                for o in self.f.resumes[*resume].operands() {
                    mark(o, &mut used);
                }
            }
        }
        loop {
            let mut changed = false;
            for &p in &self.f.blocks[body].phis {
                let Some(v) = self.f.insts[p].result else { continue };
                if !used[ix(v)] {
                    continue;
                }
                if let InstKind::Phi(inputs) = &self.f.insts[p].kind {
                    for (from, o) in inputs {
                        // Back-edge inputs will be resolved; entry inputs not.
                        let o = if *from == body { self.resolve(o) } else { o.clone() };
                        if let Operand::Value(w) = o {
                            if !used[ix(w)] {
                                used[ix(w)] = true;
                                changed = true;
                            }
                        }
                    }
                }
            }
            if !changed {
                return used;
            }
        }
    }

    /// Guards whose records are equal share the first one.
    fn share_records(&mut self, body: BlockId) {
        let mut kept: Vec<ResumeId> = Vec::new();
        for i in self.f.blocks[body].insts.clone() {
            let InstKind::Guard { kind, resume, label } = self.f.insts[i].kind.clone() else { continue };
            match kept.iter().find(|&&r| self.f.resumes[r] == self.f.resumes[resume]) {
                Some(&same) => self.f.insts[i].kind = InstKind::Guard { kind, resume: same, label },
                None => kept.push(resume),
            }
        }
    }
}
