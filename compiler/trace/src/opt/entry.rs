//! What code jumping into a loop must bring: the loop's entry state
//! (PyPy's virtual state), and making or matching it at the end of a
//! straight trace.
//!
//! The JIT compiles a hot loop as two pieces of code ([`crate::jit`]): its
//! *preamble*, which the interpreter enters — the speculation checks and
//! the first iteration, from the variables of the loop's head — and the
//! *loop* itself, which the preamble jumps into. The preamble ends with
//! the head's variables in hand, some of them objects it never allocated
//! (virtual); [`Opt::define_entry`] describes that state as a
//! [`LoopEntry`]: per variable of the head, a *shape* — a value the loop
//! takes as a parameter, a constant, or an object of a class whose fields
//! have shapes in turn (two variables holding one object share it) — and
//! per parameter a *fact* the loop may assume (an integer range, a
//! class). The loop is then the recorded trace converted from that state
//! ([`LoopEntry::start`]): its objects are allocated in its preheader,
//! where the optimizer makes them virtual again, and its parameters have
//! the facts ([`LoopEntry::infos`]).
//!
//! A bridge (or an entry trace) that ends by jumping to the loop's
//! preamble tries to jump into the loop instead ([`Opt::enter_loop_at`]):
//! its variables must have the shapes — objects still virtual, of the
//! same classes with the same fields, as many distinct objects; the same
//! constants — and its parameters the facts, each known or checked by a
//! guard that leaves at the loop's head (a *restart* guard: the
//! interpreter, or the preamble, takes the state as it is). Then no
//! object is allocated on the way into the loop. When the shapes do not
//! match, it jumps to the preamble with real values, which is always
//! right.
//!
//! Facts are widened before the loop assumes them (an integer in
//! `[2, 2^31]` becomes "positive and at most 2^32"), so that the states
//! bridges bring match as often as the loop allows.

use flowc_ir::{GuardKind, InstKind, Operand, ResumeData, ResumeFrame, ResumeId, ResumeValue};
use flowc_lang::ops::range::Interval;
use flowc_lang::{Symbol, Value};
use flowc_passes::edit::ix;
use flowc_passes::lattice::{Info, Kinds};

use super::walk::Opt;
use crate::to_ir::{Start, StartFrame, StartObject, StartValue};

/// What a loop expects at its head ([`crate::opt::entry`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LoopEntry {
    /// The label of the loop's head, and the function whose frame it is
    /// in (`None`: the main graph).
    pub anchor: Symbol,
    pub function: Option<Symbol>,
    /// The variables of the head, in the order the preamble takes them.
    pub vars: Vec<(Symbol, Shape)>,
    /// The objects the shapes refer to.
    pub objects: Vec<ObjectShape>,
    /// Per parameter of the loop, in order: its name and what the loop
    /// assumes of it.
    pub inputs: Vec<(Symbol, Fact)>,
}

/// The shape of a variable or field at the loop's head.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// The loop's parameter at this position.
    Input(usize),
    Const(Value),
    /// The object at this position of [`LoopEntry::objects`].
    Object(usize),
}

/// An object the loop expects virtual: its class and its fields' shapes.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectShape {
    pub class: Symbol,
    pub fields: Vec<(Symbol, Shape)>,
}

/// What a loop assumes of a parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    /// Nothing but that it is bound.
    Any,
    /// An integer in `lo..=hi`.
    Int(i64, i64),
    /// An object of this class.
    Class(Symbol),
    /// This value: a constant the preamble ended with, for a loop whose
    /// parameters must stay its head's variables
    /// ([`crate::opt::Jump::Defines`]'s `constant_inputs`: the dispatch
    /// tier, which the tier's links enter with every variable).
    Is(Value),
}

const WORD: (i64, i64) = (flowc_lang::ops::range::WORD_MIN as i64, flowc_lang::ops::range::WORD_MAX as i64);
const SMALL: i64 = 1 << 32;

impl Fact {
    /// The fact the loop assumes of a value known as `info`: its integer
    /// range widened to a sign and a size (32 bits, a machine word), or
    /// its class.
    pub fn widened(info: &Info) -> Fact {
        if info.kinds == Kinds::INT && !info.range.is_empty() {
            let (lo, hi) = (info.range.lo(), info.range.hi());
            let lo = if lo >= 1 {
                Some(1)
            } else if lo >= 0 {
                Some(0)
            } else if lo >= -(SMALL as i128) {
                Some(-SMALL)
            } else {
                (lo >= WORD.0 as i128).then_some(WORD.0)
            };
            let hi = if hi <= -1 {
                Some(-1)
            } else if hi <= SMALL as i128 {
                Some(SMALL)
            } else {
                (hi <= WORD.1 as i128).then_some(WORD.1)
            };
            return match (lo, hi) {
                (Some(lo), Some(hi)) => Fact::Int(lo, hi),
                _ => Fact::Any,
            };
        }
        match info.class {
            Some(c) if info.kinds == Kinds::OBJECT => Fact::Class(c),
            _ => Fact::Any,
        }
    }

    /// What the loop knows of the parameter.
    pub fn info(&self) -> Info {
        match self {
            Fact::Any => Info::value(),
            Fact::Int(lo, hi) => Info::int(Interval::new(*lo as i128, *hi as i128)),
            Fact::Class(c) => Info::object(*c, None),
            Fact::Is(v) => Info::of_const(v),
        }
    }

    /// The guard that checks the fact of `o`.
    fn guard(&self, o: Operand) -> Option<GuardKind> {
        match self {
            Fact::Any => None,
            Fact::Int(lo, hi) => Some(GuardKind::Int(o, *lo, *hi)),
            Fact::Class(c) => Some(GuardKind::Class(o, *c)),
            Fact::Is(v) => Some(GuardKind::Value(o, v.clone())),
        }
    }
}

impl LoopEntry {
    /// Calls `f` on every constant of the entry's shapes.
    pub fn each_value_mut(&mut self, f: &mut impl FnMut(&mut Value)) {
        let shapes = self.vars.iter_mut().chain(self.objects.iter_mut().flat_map(|o| &mut o.fields));
        for (_, s) in shapes {
            if let Shape::Const(c) = s {
                f(c)
            }
        }
        for (_, fact) in &mut self.inputs {
            if let Fact::Is(c) = fact {
                f(c)
            }
        }
    }

    /// Where the loop's trace starts: its head's variables as the shapes
    /// say, the objects allocated first.
    pub fn start(&self) -> Start {
        let value = |s: &Shape| match s {
            Shape::Input(k) => StartValue::Param(*k),
            Shape::Const(c) => StartValue::Const(c.clone()),
            Shape::Object(k) => StartValue::Object(*k),
        };
        Start {
            params: self.inputs.iter().map(|(n, _)| *n).collect(),
            frames: vec![StartFrame {
                function: self.function,
                env: self.vars.iter().map(|(n, s)| (*n, value(s))).collect(),
                call: None,
            }],
            objects: self
                .objects
                .iter()
                .map(|o| StartObject { class: o.class, fields: o.fields.iter().map(|(f, s)| (*f, value(s))).collect() })
                .collect(),
            promoted: Vec::new(),
        }
    }

    /// What the loop knows of its parameters, in order.
    pub fn infos(&self) -> Vec<Info> {
        self.inputs.iter().map(|(_, f)| f.info()).collect()
    }
}

/// Building an entry from the end of a preamble.
struct Definer {
    objects: Vec<ObjectShape>,
    /// The preamble's virtual objects already given a shape.
    seen: Vec<(flowc_ir::ValueId, usize)>,
    inputs: Vec<(Symbol, Fact)>,
    args: Vec<Operand>,
}

/// Matching an entry at the end of a bridge.
struct Matcher {
    /// Per object shape: the bridge's virtual object.
    objects: Vec<Option<flowc_ir::ValueId>>,
    /// Per parameter: the bridge's operand.
    args: Vec<Option<Operand>>,
}

impl Opt<'_> {
    /// The entry state of the loop the preamble being walked jumps into
    /// with `args`, the values of the head's variables `names`: the entry,
    /// the loop's arguments and the records of the guards that check the
    /// facts the preamble does not know (`None` if that cannot be). Virtual objects stay virtual; a
    /// variable in `assumed` is an integer in that range (what the
    /// preamble speculated on, which its loop keeps assuming), others have
    /// what is known of them, widened. With `constant_inputs`, a variable
    /// holding a constant is a parameter too, of that value
    /// ([`Fact::Is`]): the loop takes all its head's variables.
    pub fn define_entry(
        &mut self,
        anchor: Symbol,
        function: Option<Symbol>,
        vars: &[(Symbol, Operand)],
        assumed: &[(Symbol, i64, i64)],
        constant_inputs: bool,
    ) -> Option<(LoopEntry, Vec<Operand>, Vec<ResumeId>)> {
        let mut d = Definer { objects: Vec::new(), seen: Vec::new(), inputs: Vec::new(), args: Vec::new() };
        let shapes = vars
            .iter()
            .map(|(n, a)| {
                let fact = assumed.iter().find(|(x, _, _)| x == n).map(|&(_, lo, hi)| Fact::Int(lo, hi));
                let shape = match self.resolve(a) {
                    Operand::Const(c) if constant_inputs => {
                        d.inputs.push((*n, Fact::Is(c.clone())));
                        d.args.push(Operand::Const(c));
                        Shape::Input(d.inputs.len() - 1)
                    }
                    _ => self.define_shape(&mut d, *n, a, fact),
                };
                (*n, shape)
            })
            .collect();
        let entry = LoopEntry { anchor, function, vars: shapes, objects: d.objects, inputs: d.inputs };
        // Constants and objects have shapes of their own, so no argument is
        // known not to have its fact.
        let restarts = self.check_facts(&entry, vars, &d.args)?;
        Some((entry, d.args, restarts))
    }

    fn define_shape(&mut self, d: &mut Definer, name: Symbol, o: &Operand, fact: Option<Fact>) -> Shape {
        let o = self.resolve(o);
        if let Operand::Const(c) = &o {
            return Shape::Const(c.clone());
        }
        let Some(v) = self.virtual_of(&o) else {
            let info = self.info_of(&o);
            // A variable the iteration does not write keeps its value in
            // every iteration: what the preamble's guards proved of it
            // holds in the loop as it is (an interpreter's program
            // length, compared with each promoted position: the loop's
            // own comparisons then fold).
            let invariant =
                matches!(&o, Operand::Value(p) if self.f.params.contains(p) && self.f.values[*p].name == Some(name));
            let fact = match fact {
                Some(Fact::Int(lo, hi)) if invariant && info.kinds == Kinds::INT && !info.range.is_empty() => {
                    let r = info.range.intersect(Interval::new(lo as i128, hi as i128));
                    match (i64::try_from(r.lo()), i64::try_from(r.hi())) {
                        (Ok(lo), Ok(hi)) if lo <= hi => Fact::Int(lo, hi),
                        _ => Fact::Int(lo, hi),
                    }
                }
                // What was assumed of the variable before the first
                // iteration, or what the iteration made of it: a counter
                // assumed in [1, n] is in [1, n + 1] (so the loop's ranges
                // find the same bound round the loop).
                Some(Fact::Int(lo, hi)) if info.kinds == Kinds::INT && !info.range.is_empty() => {
                    let r = info.range.hull(Interval::new(lo as i128, hi as i128));
                    match (i64::try_from(r.lo()), i64::try_from(r.hi())) {
                        (Ok(lo), Ok(hi)) => Fact::Int(lo, hi),
                        _ => Fact::Int(lo, hi),
                    }
                }
                Some(f) => f,
                None => Fact::widened(&info),
            };
            d.inputs.push((name, fact));
            d.args.push(o);
            return Shape::Input(d.inputs.len() - 1);
        };
        if let Some(&(_, k)) = d.seen.iter().find(|(x, _)| *x == v) {
            return Shape::Object(k);
        }
        let k = d.objects.len();
        let virt = self.virtuals[ix(v)].clone().expect("a virtual object");
        d.objects.push(ObjectShape { class: virt.class, fields: Vec::new() });
        d.seen.push((v, k));
        let fields = virt.fields.iter().map(|(f, x)| (*f, self.define_shape(d, *f, x, None))).collect();
        d.objects[k].fields = fields;
        Shape::Object(k)
    }

    /// Jumps into the loop of `entry` from the end of the straight trace
    /// being walked, whose head variables have the values `args`: the
    /// guards that check the facts not known (leaving at the loop's head
    /// with `args`; placed, with their records returned) and the loop's
    /// arguments. `None`, with nothing changed, when the shapes do not
    /// match.
    pub fn enter_loop_at(&mut self, entry: &LoopEntry, args: &[Operand]) -> Option<(Vec<Operand>, Vec<ResumeId>)> {
        if args.len() != entry.vars.len() {
            return None;
        }
        let mut m = Matcher { objects: vec![None; entry.objects.len()], args: vec![None; entry.inputs.len()] };
        for ((_, shape), a) in entry.vars.iter().zip(args) {
            let a = self.resolve(a);
            if !self.matches_shape(entry, &mut m, shape, &a) {
                return None;
            }
        }
        // A virtual object matched to a shape must not also be passed as a
        // parameter (it would become two objects).
        let shaped: Vec<flowc_ir::ValueId> = m.objects.iter().flatten().copied().collect();
        let mut inputs = Vec::with_capacity(m.args.len());
        for a in &m.args {
            let a = a.clone()?;
            if self.virtual_of(&a).is_some_and(|v| shaped.contains(&v)) {
                return None;
            }
            inputs.push(a);
        }
        let vars: Vec<(Symbol, Operand)> = entry.vars.iter().map(|(n, _)| *n).zip(args.iter().cloned()).collect();
        let records = self.check_facts(entry, &vars, &inputs)?;
        // Parameters: virtual objects the loop takes as values are
        // materialized here.
        let inputs = inputs.iter().map(|a| self.real(a)).collect();
        Some((inputs, records))
    }

    /// Places guards checking the facts of `entry` that are not known of
    /// `inputs`, the loop's arguments, leaving at the loop's head with
    /// variables `vars`; returns their records. `None`, with nothing
    /// placed, when an argument is known not to have its fact.
    fn check_facts(
        &mut self,
        entry: &LoopEntry,
        vars: &[(Symbol, Operand)],
        inputs: &[Operand],
    ) -> Option<Vec<ResumeId>> {
        let mut checks = Vec::new();
        for (k, (_, fact)) in entry.inputs.iter().enumerate() {
            let a = &inputs[k];
            let Some(guard) = fact.guard(a.clone()) else { continue };
            let known = match (a, self.virtual_of(a)) {
                (Operand::Const(c), _) => Some(guard.holds(c, None)),
                (_, Some(v)) => {
                    Some(matches!(fact, Fact::Class(c) if self.virtuals[ix(v)].as_ref().is_some_and(|x| x.class == *c)))
                }
                _ => self.holds(&guard, a).then_some(true),
            };
            match known {
                Some(true) => {}
                // A constant or an object without the fact: the loop is
                // not for this state.
                Some(false) => return None,
                None => checks.push(guard),
            }
        }
        let record = ResumeData {
            frames: vec![ResumeFrame {
                function: entry.function,
                env: vars.iter().map(|(n, a)| (*n, ResumeValue::Operand(a.clone()))).collect(),
                call: None,
            }],
            virtuals: Vec::new(),
        };
        let mut records = Vec::new();
        for kind in checks {
            let resume = self.f.resumes.alloc(record.clone());
            let (i, _) = self.make(InstKind::Guard { kind, resume, label: entry.anchor }, None);
            self.inst(i);
            records.push(resume);
        }
        Some(records)
    }

    fn matches_shape(&self, entry: &LoopEntry, m: &mut Matcher, shape: &Shape, o: &Operand) -> bool {
        match shape {
            Shape::Const(c) => o.as_const() == Some(c),
            Shape::Input(k) => match &m.args[*k] {
                // Each parameter has one place in the shapes.
                Some(_) => false,
                None => {
                    m.args[*k] = Some(o.clone());
                    true
                }
            },
            Shape::Object(k) => {
                let Some(v) = self.virtual_of(o) else { return false };
                if let Some(w) = m.objects[*k] {
                    return w == v;
                }
                if m.objects.contains(&Some(v)) {
                    return false;
                }
                m.objects[*k] = Some(v);
                let shape = &entry.objects[*k];
                let virt = self.virtuals[ix(v)].as_ref().expect("a virtual object");
                if virt.class != shape.class || virt.fields.len() != shape.fields.len() {
                    return false;
                }
                let fields: Vec<(Symbol, Operand)> = virt.fields.clone();
                shape.fields.iter().all(|(f, s)| {
                    fields.iter().find(|(g, _)| g == f).is_some_and(|(_, x)| {
                        let x = self.resolve(x);
                        self.matches_shape(entry, m, s, &x)
                    })
                })
            }
        }
    }
}
