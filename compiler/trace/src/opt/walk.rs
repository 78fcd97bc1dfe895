//! The forward walk over a trace's blocks, in order: it knows facts about
//! values (the lattice of `propagate`, [`flowc_passes::lattice`]) and
//! rewrites each instruction as it goes.
//!
//! - operations with known operands fold (the op table's `eval`); others
//!   take the cheapest form their operands allow; a repeated pure
//!   operation reuses the first one (CSE) — also across blocks, since each
//!   block of a trace dominates the ones after it;
//! - guards teach: after `guard_value x, c` uses of `x` become `c`; after
//!   `guard_false x`, `x` is 0; after `guard_true c` with `c = lt x, 10`,
//!   `x` is below 10; after `guard_class`, the class is known; after
//!   `guard_int`, the range. A guard whose outcome is already known is
//!   dropped;
//! - allocations become virtual objects ([`super::virtuals`]) when the
//!   program cannot observe allocation numbers;
//! - calls of `pure` functions with constant arguments are run;
//! - reads of object fields are remembered within a block (the heap
//!   cache, PyPy's `heap.py`): a second `get` of the same field of the
//!   same object is the first one's value, a `get` after a `set` is the
//!   value set. A `set` of a field forgets that field of every object that
//!   may be the same one (all but those of another class), a call forgets
//!   everything, and each block starts with nothing known — except a
//!   loop's block, which keeps what its predecessor (a peeled first
//!   iteration) knew of the fields the loop never writes, when it calls
//!   nothing ([`Opt::run_loop`]). Objects the trace holds as constants
//!   (promoted) are cached alike, by identity ([`super::heap`]).
//!
//! Every kept instruction gets its operands rewritten in order; the
//! substitutions are position-dependent (a guard's facts hold only after
//! it), so none is applied to the whole trace.

use rustc_hash::FxHashMap as HashMap;

use flowc_ir::{
    Args, BlockId, Function, GuardKind, InstData, InstId, InstKind, Module, Operand, ResumeId, ValueData, ValueDef,
    ValueId,
};
use flowc_lang::ast::Operator;
use flowc_lang::ops::Op;
use flowc_lang::{Symbol, Value};
use flowc_passes::edit::ix;
use flowc_passes::lattice::{self, Info, Kinds};
use flowc_passes::propagate::{is_class_or_zero, ProgramFacts};

use super::heap::HeapCache;
use super::ranges::{compared_with_constant, equated, known_to_pass, when_guarded};
use super::virtuals::Virtual;
use super::Options;

pub(super) struct Opt<'a> {
    pub f: &'a mut Function,
    pub hints: &'a Module,
    pub remove_allocations: bool,
    /// What the program may store in each field, when known.
    pub(super) fields: Option<&'a ProgramFacts>,
    pub info: Vec<Info>,
    pub subst: Vec<Option<Operand>>,
    pub virtuals: Vec<Option<Virtual>>,
    /// Whether the walk has made a virtual object yet
    /// ([`Opt::make_virtual`]): until it has, no operand is one, and a
    /// guard's record is brought up to date without looking for them
    /// ([`Opt::refresh`]; most traces allocate nothing).
    pub(super) made_virtual: bool,
    /// Whether the walk is in a loop's own block ([`Opt::run_loop`]),
    /// where an operation returning an operand as it is stays: counted
    /// loops ([`super::counted`]) read each cell's step through its `mod`.
    in_loop: bool,
    /// Operations already made, by operator and operands: the same value
    /// whatever form each took (an operation that went on taught its
    /// operands' kinds, so the same operation after it takes a cheaper
    /// form, [`Opt::learn_operands`]).
    cse: HashMap<(Operator, Args), ValueId>,
    /// The `guard_at`s kept, by link, base and distance, and what their
    /// results are: one that held holds for good (values do not change,
    /// cells do not move), so the same guard later — a peeled loop's, on a
    /// link its first iteration read — is its result.
    ats: HashMap<(Operand, Operand, i64), Operand>,
    /// The object each kept `guard_at` found at a distance from its base
    /// (by base and distance): a link met later at the same place is that
    /// object, once its address is compared with it ([`Opt::guard_at`]).
    places: HashMap<(Operand, i64), Operand>,
    /// The `guard_at`s whose results are the object an earlier one found
    /// at their place, and those earlier ones: together they check that
    /// the link is that object, and they stay
    /// ([`super::rows::keep_paying`]).
    pub(super) placed: Vec<InstId>,
    /// The results of `guard_at`s kept: the object each is counted from
    /// (no other `guard_at`'s result), and how many bytes past it.
    rows: HashMap<ValueId, (Operand, i64)>,
    /// What each field of a real object holds, where known (the heap
    /// cache: see the module docs).
    pub heap: HeapCache,
    /// The instructions kept for the block being walked, in order.
    pub out: Vec<InstId>,
    /// Records more than one guard of the trace leaves by (the JIT's
    /// entry checks share one), as they were before the walk: each guard
    /// gets a copy resolved where it stands (what a later guard knows,
    /// such as a value an earlier check pinned, does not hold at an
    /// earlier one).
    shared: HashMap<ResumeId, flowc_ir::ResumeData>,
    /// The instructions walked so far.
    walked: usize,
    /// [`super::Options::give_up`], and whether it said yes: the walk
    /// then stops, leaving the trace half done.
    give_up: Option<super::GiveUp<'a>>,
    pub(super) gave_up: bool,
    /// The record of the last guard kept: the record it had, the record
    /// it got, and when it was walked.
    last_guard: Option<(ResumeId, ResumeId, usize)>,
    /// What was known of the values of each kept guard's record where the
    /// guard stands, for the bridge that may start there
    /// ([`super::known`]).
    pub(super) exit_facts: super::known::Notebook,
}

impl<'a> Opt<'a> {
    /// A walk over `f` as `options` say: its parameters are known as
    /// `options.facts` (in order; any bound value where missing).
    pub fn new(f: &'a mut Function, hints: &'a Module, options: &Options<'a>) -> Opt<'a> {
        let n = f.values.len();
        let mut info = vec![Info::bottom(); n];
        let mut subst = vec![None; n];
        for (k, &p) in f.params.iter().enumerate() {
            info[ix(p)] = options.facts.get(k).cloned().unwrap_or_else(Info::value);
            // A parameter known to be one value is that value
            // ([`super::Fact::Is`]): what it reads folds, and records hold
            // the constant.
            if let Some(c) = &info[ix(p)].constant {
                subst[ix(p)] = Some(Operand::Const(c.clone()));
            }
        }
        for (_, i) in f.all_insts() {
            if let (InstKind::Unbound(_), Some(v)) = (&f.insts[i].kind, f.insts[i].result) {
                info[ix(v)] = Info::of_kinds(Kinds::UNBOUND);
            }
        }
        // A record a guard shares with another guard or with an exit is
        // copied for each guard kept ([`Opt::guard_record`]): each is
        // brought up to date where its guard is, the exit's at the end.
        let mut uses: HashMap<ResumeId, u32> = HashMap::default();
        let guards = f.all_insts().filter_map(|(_, i)| match &f.insts[i].kind {
            InstKind::Guard { resume, .. } => Some(*resume),
            _ => None,
        });
        let exits = f.layout.iter().filter_map(|&b| f.blocks[b].term.resume());
        for r in guards.chain(exits) {
            *uses.entry(r).or_insert(0) += 1;
        }
        let shared = uses.into_iter().filter(|&(_, n)| n > 1).map(|(r, _)| (r, f.resumes[r].clone())).collect();
        Opt {
            shared,
            walked: 0,
            give_up: options.give_up,
            gave_up: false,
            last_guard: None,
            exit_facts: Default::default(),
            f,
            hints,
            remove_allocations: options.remove_allocations,
            fields: options.fields,
            info,
            subst,
            virtuals: (0..n).map(|_| None).collect(),
            made_virtual: false,
            in_loop: false,
            cse: Default::default(),
            ats: Default::default(),
            places: Default::default(),
            placed: Vec::new(),
            rows: Default::default(),
            heap: Default::default(),
            out: Vec::new(),
        }
    }

    pub fn grow(&mut self) {
        let n = self.f.values.len();
        self.info.resize(n, Info::bottom());
        self.subst.resize(n, None);
        self.virtuals.resize_with(n, || None);
    }

    pub fn resolve(&self, o: &Operand) -> Operand {
        // Followed by reference, cloned once: the walk resolves every
        // operand and every resume value.
        substituted(&self.subst, o).unwrap_or(o).clone()
    }

    pub fn info_of(&self, o: &Operand) -> Info {
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

    pub fn virtual_of(&self, o: &Operand) -> Option<ValueId> {
        match o {
            Operand::Value(v) if self.virtuals[ix(*v)].is_some() => Some(*v),
            _ => None,
        }
    }

    /// A new instruction, not yet placed.
    pub fn make(&mut self, kind: InstKind, name: Option<Symbol>) -> (InstId, Option<ValueId>) {
        let has = kind.has_result();
        let i = self.f.insts.alloc(InstData { kind, result: None });
        let v = has.then(|| self.f.values.alloc(ValueData { def: ValueDef::Inst(i), name }));
        self.f.insts[i].result = v;
        self.grow();
        (i, v)
    }

    /// A value no instruction defines, standing for a virtual object.
    pub fn placeholder(&mut self, name: Option<Symbol>) -> ValueId {
        let v = self.f.values.alloc(ValueData { def: ValueDef::Detached, name });
        self.grow();
        v
    }

    /// Walks `block`'s instructions (not its phis) into `out`.
    pub fn run(&mut self, block: BlockId) {
        self.heap.clear();
        self.walk(block);
    }

    /// Walks loop block `lp`, entered from the block walked last: what
    /// that block read or wrote of fields the loop never writes (and only
    /// when it calls nothing) still holds in every iteration, so a
    /// loop-invariant read done in a peeled first iteration is not done
    /// again in the loop; so do the fields the loop carries in phis,
    /// `carried` (each object and field with its phi's value: see
    /// [`super::state`]).
    pub fn run_loop(&mut self, lp: BlockId, carried: &[(ValueId, Symbol, ValueId)]) {
        let f = &*self.f;
        let insts = &f.blocks[lp].insts;
        if insts.iter().any(|&i| matches!(f.insts[i].kind, InstKind::Call { .. })) {
            self.heap.clear();
        } else {
            let written: Vec<Symbol> = insts
                .iter()
                .filter_map(|&i| match &f.insts[i].kind {
                    InstKind::Set { field, .. } => Some(*field),
                    _ => None,
                })
                .collect();
            self.heap.forget_fields(&written);
        }
        for &(obj, field, value) in carried {
            self.heap.objects.insert((obj, field), Operand::Value(value));
        }
        self.in_loop = true;
        self.walk(lp);
        self.in_loop = false;
    }

    /// What a read of `field` of `obj` gives: what the program may store
    /// there (bottom, a field never set, cannot be read: a recorded read
    /// was not), any value without the program's facts.
    pub fn field_info_of(&self, obj: &Operand, field: Symbol) -> Info {
        let stored = self.fields.map_or_else(Info::value, |facts| facts.read(&self.info_of(obj), field));
        if stored.is_bottom() {
            Info::value()
        } else {
            stored
        }
    }

    /// Whether `o` is known to be an object (code then reads and writes
    /// its fields without testing it: `get.object`).
    fn is_object(&self, o: &Operand) -> bool {
        self.info_of(o).surely(Kinds::OBJECT)
    }

    /// The class of `o` when it is known to be an object of it.
    fn object_class(&self, o: &Operand) -> Option<Symbol> {
        let info = self.info_of(o);
        info.class.filter(|_| info.kinds == Kinds::OBJECT)
    }

    /// A `set` of `field` of object `obj`: what the heap cache knows of
    /// that field of other objects is forgotten, but of objects known to
    /// be others (of another class).
    fn forget_field(&mut self, obj: &Operand, field: Symbol) {
        let class = self.object_class(obj);
        let mut heap = std::mem::take(&mut self.heap);
        heap.forget_field(obj, field, class, |p| self.object_class(&Operand::Value(p)), self.in_loop);
        // What the cache kept by the places of cells, the trace checks.
        self.placed.extend(heap.take_relied());
        self.heap = heap;
    }

    fn walk(&mut self, block: BlockId) {
        let insts = self.f.blocks[block].insts.clone();
        for i in insts {
            if self.walked.is_multiple_of(super::ASK_EVERY) && self.give_up.is_some_and(|g| (g.0)()) {
                self.gave_up = true;
            }
            if self.gave_up {
                return;
            }
            self.inst(i);
        }
    }

    /// Makes the walked instructions `block`'s.
    pub fn install(&mut self, block: BlockId) {
        self.f.blocks[block].insts = std::mem::take(&mut self.out).into();
    }

    fn keep(&mut self, i: InstId, kind: InstKind) {
        self.f.insts[i].kind = kind;
        self.out.push(i);
    }

    /// Walks instruction `i` (not yet placed): kept in `out`, or not.
    pub fn inst(&mut self, i: InstId) {
        self.walked += 1;
        let kind = self.f.insts[i].kind.clone();
        let result = self.f.insts[i].result;
        match kind {
            InstKind::Op { op: Operator::Known(op), args, .. } => {
                let mut args: Args = args.iter().map(|a| self.real(a)).collect();
                if op == Op::Mod {
                    if let Some(sum) = self.modular_sum(&args) {
                        args[0] = sum;
                    }
                }
                let infos: Vec<Info> = args.iter().map(|a| self.info_of(a)).collect();
                let out = lattice::transfer(op, &infos);
                let v = result.expect("ops have results");
                // A bound value equals itself (an object passed round a
                // loop that assumes it comes back, compared with itself).
                if let (Op::Eq | Op::Ne, [Operand::Value(x), Operand::Value(y)]) = (op, args.as_slice()) {
                    if x == y && !infos[0].may_be_unbound() {
                        self.subst[ix(v)] = Some(Operand::Const(Value::Int(i64::from(op == Op::Eq))));
                        return;
                    }
                }
                // An operation that returns one of its operands as it is
                // (`v % 256` of a byte known to be one) is that operand,
                // but in a loop's own block (see `in_loop`).
                if let Some(k) = lattice::identity(op, &infos).filter(|_| !self.in_loop) {
                    self.subst[ix(v)] = Some(args[k].clone());
                    return;
                }
                // Folded when its operands are constants, or when it is a
                // comparison of integers whose ranges decide it (which
                // cannot fail): `pc < n` at a promoted `pc`, with what the
                // loop's entry proved of `n`.
                let decided = op.is_comparison() && infos.iter().all(|i| i.kinds == Kinds::INT);
                if let (Some(c), true) = (&out.constant, decided || args.iter().all(|a| matches!(a, Operand::Const(_))))
                {
                    self.subst[ix(v)] = Some(Operand::Const(c.clone()));
                    return;
                }
                let form = lattice::best_form(op, &infos);
                let key = (Operator::Known(op), args.clone());
                if let Some(&prev) = self.cse.get(&key) {
                    self.subst[ix(v)] = Some(Operand::Value(prev));
                    return;
                }
                self.cse.insert(key, v);
                self.info[ix(v)] = out;
                self.learn_operands(op, &args);
                self.keep(i, InstKind::Op { op: Operator::Known(op), form, args });
            }
            InstKind::Op { op, form, args } => {
                let args = args.iter().map(|a| self.real(a)).collect();
                self.keep(i, InstKind::Op { op, form, args });
            }
            InstKind::Iterations(o) => {
                let o = self.real(&o);
                self.keep(i, InstKind::Iterations(o));
            }
            // Made for whole programs only (`flowc_codegen::walks`): kept,
            // its object made real, its result anything.
            InstKind::Walk { obj, field, links } => {
                let obj = self.real(&obj);
                if let Some(v) = result {
                    self.info[ix(v)] = Info::value();
                }
                self.keep(i, InstKind::Walk { obj, field, links });
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
                    self.make_virtual(v, Virtual { class, fields: Vec::new() });
                } else {
                    self.info[ix(v)] = Info::object(class, Some(i));
                    self.keep(i, InstKind::New(class));
                }
            }
            InstKind::Set { obj, field, value, .. } => {
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
                self.forget_field(&obj, field);
                self.heap.insert(&obj, field, value.clone());
                let proven = self.is_object(&obj);
                self.keep(i, InstKind::Set { obj: obj.clone(), field, value, proven });
                if !proven {
                    self.learn_object(&obj, None);
                }
            }
            InstKind::Get { obj, field, .. } => {
                let obj = self.resolve(&obj);
                let v = result.expect("get has a result");
                // An immutable field of a known object (promoted) is fixed.
                if let Operand::Const(Value::Object(o)) = &obj {
                    if self.hints.is_immutable(o.class(), field) {
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
                if let Some(x) = self.heap.get(&obj, field) {
                    self.subst[ix(v)] = Some(x.clone());
                    return;
                }
                self.heap.insert(&obj, field, Operand::Value(v));
                self.info[ix(v)] = self.field_info_of(&obj, field);
                let proven = self.is_object(&obj);
                self.keep(i, InstKind::Get { obj: obj.clone(), field, proven });
                if !proven {
                    self.learn_read(&obj, field);
                }
            }
            InstKind::Guard { kind, resume, label } => self.guard(i, kind, resume, label),
            InstKind::Call { func, args } => {
                let args: Args = args.iter().map(|a| self.real(a)).collect();
                let v = result.expect("calls have results");
                // The callee may write any object.
                self.heap.clear();
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

    /// For `mod y, M` (`args`), `y` being `(z mod M) ± b` for an integer
    /// `z`: the sum `z ± b` (the same modulo `M`), made here, or `z ± a ±
    /// b` when `z` is itself `x ± a` — a run of BF `+` (`v = (v + 1) mod
    /// 256` each) becomes one `add` and one `mod` instead of a chain of
    /// two operations per step. The intermediate values stay for what
    /// else uses them (resume records), and dead code elimination drops
    /// the rest.
    fn modular_sum(&mut self, args: &[Operand]) -> Option<Operand> {
        let [Operand::Value(y), Operand::Const(Value::Int(m))] = args else { return None };
        let (z, b) = self.plus_constant(*y)?;
        let InstKind::Op { op: Operator::Known(Op::Mod), args: inner, .. } = self.defining(z)? else { return None };
        let [Operand::Value(z), Operand::Const(Value::Int(m2))] = inner.as_slice() else { return None };
        let z = *z;
        if m != m2 || *m <= 0 || self.info_of(&Operand::Value(z)).kinds != Kinds::INT {
            return None;
        }
        let (x, total) = match self.plus_constant(z) {
            Some((x, a)) if self.info_of(&Operand::Value(x)).kinds == Kinds::INT => (x, a.checked_add(b)?),
            _ => (z, b),
        };
        if total == 0 {
            return Some(Operand::Value(x));
        }
        let args: Args = [Operand::Value(x), Operand::Const(Value::Int(total))].into_iter().collect();
        let infos: Vec<Info> = args.iter().map(|a| self.info_of(a)).collect();
        let out = lattice::transfer(Op::Add, &infos);
        let form = lattice::best_form(Op::Add, &infos);
        let key = (Operator::Known(Op::Add), args.clone());
        if let Some(&prev) = self.cse.get(&key) {
            return Some(Operand::Value(prev));
        }
        let kind = InstKind::Op { op: Operator::Known(Op::Add), form, args };
        let (i, v) = self.make(kind.clone(), self.f.values[*y].name);
        let v = v.expect("an add has a result");
        self.cse.insert(key, v);
        self.info[ix(v)] = out;
        self.keep(i, kind);
        Some(Operand::Value(v))
    }

    /// `v` as `x + k` (or `x - k`) for a constant `k`, where an
    /// instruction kept by the walk defines it so.
    fn plus_constant(&self, v: ValueId) -> Option<(ValueId, i64)> {
        let InstKind::Op { op: Operator::Known(op @ (Op::Add | Op::Sub)), args, .. } = self.defining(v)? else {
            return None;
        };
        match (op, args.as_slice()) {
            (_, [Operand::Value(x), Operand::Const(Value::Int(k))]) => {
                Some((*x, if *op == Op::Add { *k } else { k.checked_neg()? }))
            }
            (Op::Add, [Operand::Const(Value::Int(k)), Operand::Value(x)]) => Some((*x, *k)),
            _ => None,
        }
    }

    /// The instruction that defines `v`, as the walk rewrote it.
    fn defining(&self, v: ValueId) -> Option<&InstKind> {
        match self.f.values[v].def {
            ValueDef::Inst(i) => Some(&self.f.insts[i].kind),
            _ => None,
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
        if let GuardKind::At(link, base, delta) = kind {
            return self.guard_at(i, (link, base, delta), resume, label);
        }
        let o = self.resolve(kind.operand());
        // Guards on virtual objects are decided by their class.
        if let Some(v) = self.virtual_of(&o) {
            let class = self.virtuals[ix(v)].as_ref().unwrap().class;
            let holds = match &kind {
                GuardKind::True(_) => true,
                GuardKind::Class(_, c) | GuardKind::Link(_, c) => *c == class,
                GuardKind::NotClass(_, c) => *c != class,
                GuardKind::False(_)
                | GuardKind::Value(..)
                | GuardKind::Int(..)
                | GuardKind::At(..)
                | GuardKind::Row(..)
                | GuardKind::Cold(_) => false,
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
        let resume = self.guard_record(resume);
        // The class of a value that is an object of that class or 0 (a
        // link of a chain, by the field facts) is its truth; and its truth
        // is that class's `guard_link`, which code fuses with the
        // `guard_at` after it (a link tested for 0, not for its class).
        let info = self.info_of(&o);
        let checked = match &kind {
            GuardKind::Class(_, c) if is_class_or_zero(&info, *c) => GuardKind::Link(o.clone(), *c),
            GuardKind::NotClass(_, c) if is_class_or_zero(&info, *c) => GuardKind::False(o.clone()),
            GuardKind::True(_) => match info.class {
                Some(c) if is_class_or_zero(&info, c) => GuardKind::Link(o.clone(), c),
                _ => kind.clone(),
            },
            _ => kind.clone(),
        };
        self.keep(i, InstKind::Guard { kind: checked, resume, label });
        self.learn(&kind, &o);
    }

    /// Notes what is known here of the values of record `resume`, unless
    /// an earlier guard leaving by it did ([`super::known`]).
    pub(super) fn note_exit(&mut self, resume: ResumeId) {
        let (info, virtuals) = (&self.info, &self.virtuals);
        self.exit_facts.note(resume, &self.f.resumes[resume], |v| {
            // (A virtual object stands in a record as itself, not as a
            // value; a value of no fact says nothing.)
            let i = &info[ix(v)];
            if virtuals[ix(v)].is_some() || i.is_bottom() {
                return None;
            }
            super::known::Known::of(i)
        });
    }

    /// The record of a guard kept, `resume` brought up to date (a copy of
    /// it when the record is shared). A guard right after one kept with
    /// the same record — a `guard_at` after the class guard of its link —
    /// saw the same state, and leaves by the same record: no second
    /// snapshot, and no second copy.
    fn guard_record(&mut self, resume: ResumeId) -> ResumeId {
        if let Some((had, got, at)) = self.last_guard {
            if had == resume && at + 1 == self.walked {
                self.last_guard = Some((had, got, self.walked));
                return got;
            }
        }
        let got = match self.shared.get(&resume) {
            Some(original) => self.f.resumes.alloc(original.clone()),
            None => resume,
        };
        self.refresh(got);
        // What is known here, before the guard learns anything: what its
        // bridge starts knowing ([`super::known`]). (A guard that reuses
        // the record above keeps this note: it knows no less.)
        self.note_exit(got);
        self.last_guard = Some((resume, got, self.walked));
        got
    }

    /// `guard_at` (instruction `i`, its result the link): kept where the
    /// link is an object the code holds, read from a base the code holds;
    /// else the result is the link. A virtual object has no cell, and a
    /// link or base not known to be an object (the class guard before it
    /// folded into something weaker) could be a word that is no object's,
    /// which the code's comparison of addresses would not tell apart. (A
    /// base the link was read from is an object: the `get` raises its
    /// error on anything else.)
    fn guard_at(&mut self, i: InstId, (link, base, delta): (Operand, Operand, i64), resume: ResumeId, label: Symbol) {
        let link = self.resolve(&link);
        let base = self.resolve(&base);
        let result = self.f.insts[i].result.expect("guard_at has a result");
        let cells = self.virtual_of(&link).is_none() && self.virtual_of(&base).is_none();
        let object = |o: &Operand| self.info_of(o).kinds == Kinds::OBJECT;
        let read_from = |o: &Operand| {
            let Operand::Value(l) = link else { return false };
            matches!(self.defining(l), Some(InstKind::Get { obj, .. }) if obj == o)
        };
        let objects = object(&link) && (object(&base) || read_from(&base));
        if !cells || !objects || link.as_const().is_some() {
            self.subst[ix(result)] = Some(link);
            return;
        }
        // Counted from where the base is counted from: every link of a
        // walk is its start plus a distance, none waits for the one
        // before — and a walk back to its start (a distance of 0) is the
        // start, as a link that comes back is.
        let (base, delta) = match &base {
            Operand::Value(b) => match self.rows.get(b) {
                Some((root, off)) => (self.resolve(root), off + delta),
                None => (base, delta),
            },
            Operand::Const(_) => (base, delta),
        };
        let key = (link.clone(), base.clone(), delta);
        if let Some(held) = self.ats.get(&key) {
            self.subst[ix(result)] = Some(held.clone());
            return;
        }
        // Another link at a place a kept guard found an object at is that
        // object (cells do not move): the guard stays, to check the link is
        // there, and the trace goes on with the object it holds already, so
        // what the heap cache knows of its fields holds for this link too (in
        // a BF `[>++++++++++[>++++++++++[-]<-]<-]`, the skip of the loop
        // inside comes back to the cell through the `l` of the cell to its
        // right, a link the way out did not read; a skip of the loop around
        // states the two are one object: `counted::skip_of`).
        // Dropping a `guard_at` that does not pay would leave the link in
        // its result's place, unchecked: these are kept ([`Opt::placed`]).
        let placed = if delta == 0 { None } else { self.places.get(&(base.clone(), delta)).cloned() };
        if let Some(held) = placed.filter(|h| *h != link) {
            let resume = self.guard_record(resume);
            self.placed.push(i);
            // So does the one that found the object there: without it the
            // object would be its link, never checked to lie there.
            if let Operand::Value(h) = held {
                if let ValueDef::Inst(g) = self.f.values[h].def {
                    if matches!(self.f.insts[g].kind, InstKind::Guard { kind: GuardKind::At(..), .. }) {
                        self.placed.push(g);
                    }
                }
            }
            self.ats.insert(key, held.clone());
            self.subst[ix(result)] = Some(held);
            self.keep(i, InstKind::Guard { kind: GuardKind::At(link, base, delta), resume, label });
            return;
        }
        let is = if delta == 0 { base.clone() } else { Operand::Value(result) };
        self.ats.insert(key, is.clone());
        if delta != 0 {
            self.places.insert((base.clone(), delta), is.clone());
        }
        let resume = self.guard_record(resume);
        match is {
            Operand::Value(r) if r == result => {
                self.info[ix(result)] = self.info_of(&link);
                self.rows.insert(result, (base.clone(), delta));
                // The result is the link, as a new value: what the heap
                // cache knows of the link's fields, and which objects it
                // is not, is known of it.
                if let Operand::Value(l) = link {
                    self.heap.alias(l, result);
                }
                if let Operand::Value(b) = base {
                    self.heap.place(result, b, delta, i);
                }
            }
            other => {
                // The start it came back to is the link: what is known of
                // the link is known of it.
                if let Operand::Value(b) = other {
                    if self.info_of(&other).class.is_none() {
                        self.info[ix(b)] = self.info_of(&link);
                    }
                }
                self.subst[ix(result)] = Some(other);
            }
        }
        self.keep(i, InstKind::Guard { kind: GuardKind::At(link, base, delta), resume, label });
    }

    /// Whether guard `kind` on `o` is known to hold.
    pub fn holds(&self, kind: &GuardKind, o: &Operand) -> bool {
        match o {
            Operand::Const(c) => kind.holds(c, None),
            _ => known_to_pass(kind, &self.info_of(o)),
        }
    }

    /// What passing the guard teaches about later uses.
    fn learn(&mut self, kind: &GuardKind, o: &Operand) {
        let Operand::Value(v) = o else { return };
        let v = *v;
        let learned = when_guarded(self.info_of(o), kind);
        // A promoted object is a constant too, though the lattice keeps
        // only its class.
        let constant = match kind {
            GuardKind::Value(_, c) => Some(c.clone()),
            _ => learned.constant.clone(),
        };
        if let Some(c) = constant {
            self.subst[ix(v)] = Some(Operand::Const(c));
        }
        self.info[ix(v)] = learned;
        if let GuardKind::True(_) | GuardKind::False(_) = kind {
            self.learn_comparison(v, matches!(kind, GuardKind::True(_)));
        }
    }

    /// After operation `op` on `args`: the trace goes on only if each
    /// operand was of the kinds `op` takes (its generic form raises its
    /// error on anything else), so later uses know it. `pc < n` then
    /// `prog[pc]` in a loop that never promoted them: `pc` and `n` are
    /// integers, `prog` a list, and the rest of the trace (and the loop's
    /// entry, [`super::entry`]) no longer test their kinds.
    ///
    /// A `readlist` that went on read an element: its index is within the
    /// list (`pc` after `prog[pc]` is in `[0, len)`, so `pc + 1` cannot
    /// overflow and takes the `.word` form).
    fn learn_operands(&mut self, op: Op, args: &[Operand]) {
        let within = match (op, args) {
            (Op::ReadList, [list, _]) => {
                let len = self.info_of(list).len;
                (!len.is_empty()).then(|| flowc_lang::ops::range::Interval::new(0, len.hi() - 1))
            }
            _ => None,
        };
        for (k, a) in args.iter().enumerate() {
            let Operand::Value(v) = a else { continue };
            let info = self.info_of(a);
            let mut learned = info.restrict_kinds(lattice::operand_kinds(op, k));
            if let (Some(r), 1) = (within, k) {
                learned = learned.restrict_range(r);
            }
            // (None of its kinds: the operation always fails, and nothing
            // after it runs; what is known stays.)
            if !learned.is_bottom() && learned != info {
                self.info[ix(*v)] = learned;
            }
        }
    }

    /// After a `get` of `field` of `obj` not known to be an object: the
    /// code goes on only if it was one (the read of anything else raises
    /// its error), and one of the class that alone may have the field set
    /// (the program's facts, [`ProgramFacts::owner`]: a field never set
    /// cannot be read). A loop's first `get` of a cell it starts with
    /// states the class the rest of the trace, and the loop's entry
    /// ([`super::entry`]), then know: the loop entered from a bridge no
    /// longer tests its cell's kind and class.
    fn learn_read(&mut self, obj: &Operand, field: Symbol) {
        let owner = self.fields.and_then(|facts| facts.owner(field));
        self.learn_object(obj, owner);
    }

    /// `obj` (a value) is an object, of `class` where given: what a `get`
    /// or `set` that went on found. Known more already, it stays so.
    fn learn_object(&mut self, obj: &Operand, class: Option<Symbol>) {
        let Operand::Value(v) = obj else { return };
        let info = self.info_of(obj);
        let other_class = matches!((info.class, class), (Some(c), Some(k)) if c != k);
        if !info.kinds.has(Kinds::OBJECT) || other_class {
            return;
        }
        let learned = match class.or(info.class) {
            Some(c) => Info::object(c, info.alloc),
            None => Info::of_kinds(Kinds::OBJECT),
        };
        self.info[ix(*v)] = learned;
    }

    /// After a guard on `c = cmp x, k`, narrows `x`. After one that
    /// `c = eq x, y` holds of two objects, they are one: the later is
    /// the earlier (a tape cell reached by moving away and back is the
    /// cell, whose fields the heap cache knows); after one that it fails,
    /// they are two ([`super::heap::HeapCache::learn_apart`]).
    fn learn_comparison(&mut self, c: ValueId, holds: bool) {
        if let Some((x, y)) = equated(self.f, c) {
            if holds {
                self.learn_same(x, y);
            } else {
                // Two values found not to be one: two objects, where they
                // are objects (a skip's check that two cells differ), so a
                // write of a field of one keeps what the heap cache knows
                // of the other's.
                let (x, y) = (self.resolve(&Operand::Value(x)), self.resolve(&Operand::Value(y)));
                if let (Operand::Value(x), Operand::Value(y)) = (x, y) {
                    self.heap.learn_apart(x, y);
                }
            }
            return;
        }
        let Some((op, x, k, mirrored)) = compared_with_constant(self.f, c) else { return };
        let narrowed = lattice::when_compared(self.info_of(&Operand::Value(x)), op, k, mirrored, holds);
        if let Some(c) = &narrowed.constant {
            self.subst[ix(x)] = Some(Operand::Const(c.clone()));
        }
        self.info[ix(x)] = narrowed;
    }

    /// After a guard that `x == y` holds: of two objects, the later is
    /// the earlier, and what the heap cache knows of the later is known
    /// of the earlier (where it knows nothing already).
    fn learn_same(&mut self, x: ValueId, y: ValueId) {
        let is_object = |v: ValueId| self.info_of(&Operand::Value(v)).kinds == Kinds::OBJECT;
        if x == y || !is_object(x) || !is_object(y) {
            return;
        }
        let (early, late) = if ix(x) < ix(y) { (x, y) } else { (y, x) };
        let to = self.resolve(&Operand::Value(early));
        self.subst[ix(late)] = Some(to.clone());
        let Operand::Value(to) = to else { return };
        let known: Vec<(Symbol, Operand)> =
            self.heap.objects.iter().filter(|((o, _), _)| *o == late).map(|((_, f), x)| (*f, x.clone())).collect();
        // One entry per field: the order does not matter.
        for (field, x) in known {
            self.heap.objects.remove(&(late, field));
            self.heap.objects.entry((to, field)).or_insert(x);
        }
    }
}

/// What operand `o` now stands for ([`Opt::resolve`]) by the walk's
/// substitution `subst`, if it substituted it; `None` where it stands for
/// itself.
pub(super) fn substituted<'s>(subst: &'s [Option<Operand>], o: &Operand) -> Option<&'s Operand> {
    let Operand::Value(v) = o else { return None };
    let mut now = subst.get(ix(*v))?.as_ref()?;
    while let Operand::Value(v) = now {
        match subst.get(ix(*v)) {
            Some(Some(next)) => now = next,
            _ => break,
        }
    }
    Some(now)
}

#[cfg(test)]
mod tests {
    use super::super::check::optimized as check;
    use expect_test::expect;

    /// An operation that returns its operand as it is goes, its result
    /// that operand: `v % 256` of a byte a guard found in `0..=255` (and
    /// not 0, decremented: a BF `-` after its loop's test), `x + 0`,
    /// `x * 1`. Where the range could leave `0..256` the `mod` stays.
    #[test]
    fn an_operation_that_returns_its_operand_is_that_operand() {
        let text = "trace 't'(v0:a, v1:b, v2:c) {
b0:
    guard_int v0, 0, 255, r0 else out
    v3:x = mod v0, 256
    guard_true v3, r0 else out
    v4:y = sub v3, 1
    v5:z = mod v4, 256
    v6:u = add v5, 1
    v7:w = mod v6, 256
    guard_int v1, -5, 5, r0 else out
    v8:s = add v1, 0
    v9:t = mul v8, 1
    v10:m = mod v9, 256
    exit r1 to out
resume r0 {
    frame [a = v0, b = v1, c = v2]
}
resume r1 {
    frame [a = v5, b = v7, c = v10]
}
}
";
        check(
            text,
            expect![[r#"
                trace t(v0:a, v1:b, v2:c) {
                b0:
                    guard_int v0, 0, 255, r2 else out
                    guard_true v0, r3 else out
                    v4:y = sub.word v0, 1
                    v6:u = add.word v4, 1
                    guard_int v1, -5, 5, r4 else out
                    v10:m = mod.word v1, 256
                    exit r1 to out
                resume r1 {
                    frame [a = v4, b = v6, c = v10]
                }
                resume r2 {
                    frame [a = v0, b = v1, c = v2]
                }
                resume r3 {
                    frame [a = v0, b = v1, c = v2]
                }
                resume r4 {
                    frame [a = v0, b = v1, c = v2]
                }
                }
            "#]],
        );
    }

    /// An operation that went on found its operands of the kinds it
    /// takes: after `pc < n` and `prog[pc]` (the dispatch of an
    /// interpreter whose `pc` is not promoted), `pc + 1` needs no kind
    /// test and the next `prog[pc']` and `pc' < n` none of `prog` or
    /// `n`. An equality teaches nothing but that its operands are bound,
    /// and `x` compared with `k` may be anything after.
    /// An index a `readlist` read from a list of known length is within it
    /// from there on: `pc + 1` after `prog[pc]` cannot overflow (`.word`),
    /// and `pc < 3` then holds (folded). Of a list of unknown length, the
    /// index is not negative, which says nothing of `pc + 1`.
    #[test]
    fn an_index_read_from_a_list_is_within_it() {
        let text = "trace 't'(v0:pc, v1:list) {
b0:
    v2:op = readlist [7, 8, 9], v0
    v3:next = add v0, 1
    v4:more = lt v0, 3
    guard_true v4, r0 else out
    v5:x = readlist v1, v0
    v6:y = add v0, 2
    exit r1 to out
resume r0 {
    frame [pc = v0]
}
resume r1 {
    frame [pc = v3, op = v2, x = v5, y = v6]
}
}
";
        check(
            text,
            expect![[r#"
                trace t(v0:pc, v1:list) {
                b0:
                    v2:op = readlist [7, 8, 9], v0
                    v3:next = add.word v0, 1
                    v5:x = readlist v1, v0
                    v6:y = add.word v0, 2
                    exit r1 to out
                resume r1 {
                    frame [pc = v3, op = v2, x = v5, y = v6]
                }
                }
            "#]],
        );
    }

    #[test]
    fn an_operation_that_went_on_found_its_operands_of_its_kinds() {
        let text = "trace 't'(v0:prog, v1:n, v2:pc, v3:x, v4:k) {
b0:
    v5:more = lt v2, v1
    guard_true v5, r0 else out
    v6:op = readlist v0, v2
    v7:pc = add v2, 1
    v8:more = lt v7, v1
    guard_true v8, r0 else out
    v9:op = readlist v0, v7
    v10 = eq v3, v4
    guard_false v10, r0 else out
    v11:y = add v3, 1
    exit r1 to out
resume r0 {
    frame [prog = v0, n = v1, pc = v2, x = v3, k = v4]
}
resume r1 {
    frame [prog = v0, n = v1, pc = v7, x = v11, k = v9]
}
}
";
        check(
            text,
            expect![[r#"
                trace t(v0:prog, v1:n, v2:pc, v3:x, v4:k) {
                b0:
                    v5:more = lt v2, v1
                    guard_true v5, r2 else out
                    v6:op = readlist v0, v2
                    v7:pc = add.int v2, 1
                    v8:more = lt.int v7, v1
                    guard_true v8, r3 else out
                    v9:op = readlist.int v0, v7
                    v10 = eq v3, v4
                    guard_false v10, r3 else out
                    v11:y = add v3, 1
                    exit r1 to out
                resume r1 {
                    frame [prog = v0, n = v1, pc = v7, x = v11, k = v9]
                }
                resume r2 {
                    frame [prog = v0, n = v1, pc = v2, x = v3, k = v4]
                }
                resume r3 {
                    frame [prog = v0, n = v1, pc = v2, x = v3, k = v4]
                }
                }
            "#]],
        );
    }

    /// A guard that two cells are not one object (a skip's check) keeps
    /// what the heap cache knows of one across a write of the other's
    /// field: the later reads of both are the values written.
    #[test]
    fn a_write_keeps_the_field_of_an_object_found_to_be_another() {
        let text = "trace 't'(v0:a, v1:b) {
b0:
    guard_class v0, cell, r0 else out
    guard_class v1, cell, r0 else out
    v2 = eq.word v0, v1
    guard_false v2, r0 else out
    set v0, v, 1
    set v1, v, 2
    v3:x = get v0, v
    v4:y = get v1, v
    exit r1 to out
resume r0 {
    frame [a = v0, b = v1]
}
resume r1 {
    frame [a = v3, b = v4]
}
}
";
        check(
            text,
            expect![[r#"
                trace t(v0:a, v1:b) {
                b0:
                    guard_class v0, cell, r2 else out
                    guard_class v1, cell, r2 else out
                    v2 = eq.word v0, v1
                    guard_false v2, r3 else out
                    set.object v0, v, 1
                    set.object v1, v, 2
                    exit r1 to out
                resume r1 {
                    frame [a = 1, b = 2]
                }
                resume r2 {
                    frame [a = v0, b = v1]
                }
                resume r3 {
                    frame [a = v0, b = v1]
                }
                }
            "#]],
        );
    }

    /// The program's facts where `cell`s alone have `v` set (and `r`, and
    /// boxes `k`).
    fn cell_facts() -> flowc_passes::propagate::ProgramFacts {
        super::super::check::facts_of(
            "entry start(n = 3)\nstart:\n    c = new cell\n    c.v = n\n    c.r = 0\n    b = new box\n    b.k = c\n    print_and_stop(n)\n",
        )
    }

    /// What a `get` or `set` went on from is an object ([`Opt::learn_read`]):
    /// after the first read of `v0`'s `v`, which only a `cell` may have
    /// set, `v0` is a cell — its `set`, its other reads and the guard on
    /// its class need no test (`guard_class v0` folds). A `set` of `v1`
    /// makes it an object of some class: its read after is `get.object`,
    /// its class guard stays (`u`, which no `set` writes, has no owner).
    /// Without the facts the read makes `v0` an object of no known class:
    /// its class guard stays.
    #[test]
    fn a_value_read_from_is_an_object_of_the_class_that_alone_has_the_field() {
        let text = "trace 't'(v0:c, v1:o) {
b0:
    v2:x = get v0, v
    v3:y = add v2, 1
    set v0, v, v3
    v4:r = get v0, r
    guard_class v0, cell, r0 else out
    set v1, w, v3
    v5:z = get v1, u
    guard_class v1, box, r0 else out
    exit r1 to out
resume r0 {
    frame [c = v0, o = v1]
}
resume r1 {
    frame [c = v0, o = v1, x = v4, z = v5]
}
}
";
        let facts = cell_facts();
        super::super::check::optimized_with(
            text,
            Some(&facts),
            expect![[r#"
                trace t(v0:c, v1:o) {
                b0:
                    v2:x = get v0, v
                    v3:y = add v2, 1
                    set.object v0, v, v3
                    v4:r = get.object v0, r
                    set v1, w, v3
                    v5:z = get.object v1, u
                    guard_class v1, box, r2 else out
                    exit r1 to out
                resume r1 {
                    frame [c = v0, o = v1, x = v4, z = v5]
                }
                resume r2 {
                    frame [c = v0, o = v1]
                }
                }
            "#]],
        );
        check(
            text,
            expect![[r#"
                trace t(v0:c, v1:o) {
                b0:
                    v2:x = get v0, v
                    v3:y = add v2, 1
                    set.object v0, v, v3
                    v4:r = get.object v0, r
                    guard_class v0, cell, r2 else out
                    set v1, w, v3
                    v5:z = get.object v1, u
                    guard_class v1, box, r3 else out
                    exit r1 to out
                resume r1 {
                    frame [c = v0, o = v1, x = v4, z = v5]
                }
                resume r2 {
                    frame [c = v0, o = v1]
                }
                resume r3 {
                    frame [c = v0, o = v1]
                }
                }
            "#]],
        );
    }

    /// Cells a `guard_at` placed at two distances from one cell, and
    /// that cell, are three objects (cells do not move): in a loop's own
    /// block, a write of the field of one keeps what the heap cache knows
    /// of the others' (a BF loop's `>+<-`), so the reads after the writes
    /// are the values written (`v5`, `v6`), and the `guard_at`s that said
    /// so stay (without them nothing would check it). Of a link not placed
    /// (`v8`), a write forgets it (`v7`, `v10` read again). In straight
    /// code (the peeled first round, `b1`) places keep nothing: there a
    /// kept `guard_at` costs a guard per run for the load it saves.
    #[test]
    fn cells_placed_apart_keep_their_fields_across_each_others_writes_in_a_loop() {
        let text = "trace 't'(v0:a, v9:x) {
b0:
    guard_class v0, cell, r0 else out
    v1:r = get v0, r
    guard_class v1, cell, r0 else out
    v2:r = guard_at v1, v0, 64, r0 else out
    v3:r = get v2, r
    guard_class v3, cell, r0 else out
    v4:r = guard_at v3, v0, 128, r0 else out
    v8:l = get v0, l
    guard_class v8, cell, r0 else out
    jump b1
b1 loop:
    v11:n = phi [b0: v9, b1: v12]
    set v0, v, v11
    set v2, v, 2
    set v4, v, 3
    v5:x = get v0, v
    v6:y = get v2, v
    set v8, v, v9
    v7:z = get v4, v
    v10:w = get v2, v
    v12:n = sub v5, v6
    guard_true v7, r1 else out
    guard_true v10, r1 else out
    jump b1
resume r0 {
    frame [a = v0]
}
resume r1 {
    frame [a = v0, n = v11]
}
}
";
        check(
            text,
            expect![[r#"
                trace t(v0:a, v9:x) {
                b0:
                    guard_class v0, cell, r4 else out
                    v1:r = get.object v0, r
                    guard_class v1, cell, r5 else out
                    v2:r = guard_at v1, v0, 64, r5 else out
                    v3:r = get.object v2, r
                    guard_class v3, cell, r5 else out
                    v4:r = guard_at v3, v0, 128, r9 else out
                    v8:l = get.object v0, l
                    guard_class v8, cell, r5 else out
                    jump b1
                b1 loop:
                    set.object v0, v, v9
                    set.object v2, v, 2
                    set.object v4, v, 3
                    v5:x = get.object v0, v
                    v6:y = get.object v2, v
                    set.object v8, v, v9
                    v7:z = get.object v4, v
                    v10:w = get.object v2, v
                    v12:n = sub v5, v6
                    guard_true v7, r8 else out
                    guard_true v10, r8 else out
                    jump b2
                b2 loop:
                    v13:n = phi [b1: v12, b2: v18]
                    set.object v0, v, v13
                    set.object v2, v, 2
                    set.object v4, v, 3
                    set.object v8, v, v9
                    v16:z = get.object v4, v
                    v17:w = get.object v2, v
                    v18:n = sub.int v13, 2
                    guard_true v16, r2 else out
                    guard_true v17, r2 else out
                    jump b2
                resume r2 {
                    frame [a = v0, n = v13]
                }
                resume r4 {
                    frame [a = v0]
                }
                resume r5 {
                    frame [a = v0]
                }
                resume r8 {
                    frame [a = v0, n = v9]
                }
                resume r9 {
                    frame [a = v0]
                }
                }
            "#]],
        );
    }

    /// A `guard_at`'s result is its link under a new name: a read of a
    /// field through either finds what was read or written through the
    /// other, after the guard as before it.
    #[test]
    fn a_link_found_in_its_row_is_its_link_to_the_heap_cache() {
        let text = "trace 't'(v0:a) {
b0:
    guard_class v0, cell, r0 else out
    v1:r = get v0, r
    guard_class v1, cell, r0 else out
    v2:r = guard_at v1, v0, 64, r0 else out
    set v1, v, 5
    v3:x = get v2, v
    set v2, w, 6
    v4:y = get v1, w
    exit r1 to out
resume r0 {
    frame [a = v0]
}
resume r1 {
    frame [a = v3, r = v4]
}
}
";
        check(
            text,
            expect![[r#"
                trace t(v0:a) {
                b0:
                    guard_class v0, cell, r2 else out
                    v1:r = get.object v0, r
                    guard_class v1, cell, r3 else out
                    set.object v1, v, 5
                    set.object v1, w, 6
                    exit r1 to out
                resume r1 {
                    frame [a = 5, r = 6]
                }
                resume r2 {
                    frame [a = v0]
                }
                resume r3 {
                    frame [a = v0]
                }
                }
            "#]],
        );
    }

    /// A walk out and back whose way back reads a link the way out did not
    /// (`v6`, the `l` of the cell two to the right): its `guard_at` finds
    /// it where the way out found `v3`, so it is `v3`. The guard stays, to
    /// check that, and the trace goes on with `v3`: what was written to its
    /// `v` is what is read back, and the guard of it folds.
    #[test]
    fn a_link_back_at_a_place_the_walk_found_a_cell_at_is_that_cell() {
        let text = "trace 't'(v0:tape) {
b0:
    guard_class v0, cell, r0 else out
    v1:r = get v0, r
    guard_link v1, cell, r0 else grow
    v2:r = guard_at v1, v0, 56, r0 else right
    set v2, v, 7
    v3:r = get v2, r
    guard_link v3, cell, r0 else grow
    v4:r = guard_at v3, v0, 112, r0 else right
    v5:l = get v4, l
    guard_link v5, cell, r0 else grow
    v6:l = guard_at v5, v0, 56, r0 else left
    v7:v = get v6, v
    guard_true v7, r0 else out
    exit r1 to out
resume r0 {
    frame [tape = v0]
}
resume r1 {
    frame [tape = v6, x = v7]
}
}
";
        check(
            text,
            expect![[r#"
                trace t(v0:tape) {
                b0:
                    guard_class v0, cell, r2 else out
                    v1:r = get.object v0, r
                    guard_link v1, cell, r3 else grow
                    v2:r = guard_at v1, v0, 56, r3 else right
                    set.object v2, v, 7
                    v3:r = get.object v2, r
                    guard_link v3, cell, r3 else grow
                    v5:l = get.object v3, l
                    guard_link v5, cell, r3 else grow
                    v6:l = guard_at v5, v0, 56, r3 else left
                    exit r1 to out
                resume r1 {
                    frame [tape = v2, x = 7]
                }
                resume r2 {
                    frame [tape = v0]
                }
                resume r3 {
                    frame [tape = v0]
                }
                }
            "#]],
        );
    }

    /// A walk asked whether the trace is still wanted
    /// ([`super::super::Options::give_up`]) asks every `ASK_EVERY`
    /// instructions, stops at the first yes (it asks no more, and the
    /// trace is reported given up, loop or straight), and while it is told
    /// no, optimizes as a walk that never asks.
    #[test]
    fn a_walk_told_the_trace_is_not_wanted_gives_up() {
        use super::super::{optimize_trace, GiveUp, Options, ASK_EVERY};
        use std::cell::Cell;
        let adds = 8 * ASK_EVERY;
        let body: String = (0..adds).map(|k| format!("    v{}:s = add v{}, 1\n", k + 3, k + 2)).collect();
        let straight = format!(
            "trace t(v0:a) {{\nb0:\n    v1:s = add v0, 1\n    v2:s = add v1, 1\n{body}    exit r0 to out\nresume r0 {{\n    frame [a = v{}]\n}}\n}}\n",
            adds + 2
        );
        let looped = format!(
            "trace t(v0:a) {{\nb0:\n    jump b1\nb1 loop:\n    v1:a = phi [b0: v0, b1: v{last}]\n    v2:s = add v1, 1\n{body}    guard_true v{last}, r0 else out\n    jump b1\nresume r0 {{\n    frame [a = v{last}]\n}}\n}}\n",
            last = adds + 2
        );
        for text in [straight, looped] {
            let m = flowc_ir::parse::module("trace", &text).unwrap();
            let hints = flowc_ir::Module { functions: Vec::new(), ..m.clone() };
            let optimize = |give_up| {
                let mut f = m.functions[0].clone();
                let out = optimize_trace(&mut f, &hints, &Options { give_up, ..Options::new(true) });
                (out.gave_up, flowc_ir::print::function(&f))
            };
            let (gave_up, plain) = optimize(None);
            assert!(!gave_up);
            let asked = Cell::new(0);
            let no = || {
                asked.set(asked.get() + 1);
                false
            };
            assert_eq!(optimize(Some(GiveUp(&no))), (false, plain), "told no, as if never asked");
            assert!(asked.get() >= adds / ASK_EVERY, "asked {} times", asked.get());
            let asked = Cell::new(0);
            let yes_at_third = || {
                asked.set(asked.get() + 1);
                asked.get() == 3
            };
            assert!(optimize(Some(GiveUp(&yes_at_third))).0, "gave up:\n{text}");
            assert_eq!(asked.get(), 3, "no question after the yes");
        }
    }
}
