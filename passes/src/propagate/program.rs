//! Facts about the whole program: per class and field, what every value
//! the program may store there is — kinds, integer range, list lengths,
//! class, constant ([`Info`]) — and per function, what its parameters
//! receive and what it returns. Factor's propagation
//! infers slot types; V8 tracks field representations; here it is done
//! statically, before any code runs, so a `get` of an interpreter's tape
//! cell (`cell.v`, always `(v + 1) % 256`, `(v - 1) % 256` or 0) is an
//! integer in `[0, 255]` to propagate, cleanup and the trace optimizer,
//! and a neighbour (`cell.r`, a cell or 0) is tested by its truth.
//!
//! Sound because fields are written only by `set`: objects have no
//! literals, so the environment holds none, and no builtin writes one.
//! A fact covers every `set` that may run, in any function, of any
//! engine: traces are recorded from the same program. A function is
//! called only by the program's `call`s (the main graph is where runs
//! start), so its parameters hold what those calls pass — except a
//! function no `call` names, whose parameters are any value.
//!
//! ## Data
//! [`ProgramFacts`] maps `(field, Some(class))` to the join of the values
//! stored into objects known to be of that class, and `(field, None)` to
//! those stored into objects of no known class. A read joins the entries
//! that may hold its object ([`ProgramFacts::read`]). A field no `set` may
//! write is bottom: a `get` of it always fails. Per function (by index in
//! the module): the join of each parameter's arguments over the calls
//! that may run, and of the values its `return`s may return (bottom: it
//! never returns).
//!
//! ## Solving ([`solve`])
//! Optimistic rounds, as propagate itself is optimistic within a
//! function. Every fact starts at bottom. A round analyzes the functions
//! with the facts so far (a `get` reads them, a function's parameters
//! are them, a call returns them) and joins what each executable `set`
//! stores, `call` passes and `return` returns, seen at its block (refined
//! by the branches that lead there), into the facts. A fact that keeps
//! changing is widened like a phi ([`Widening`]), so each changes a
//! bounded number of times. When a round changes no fact, everything that
//! may run is what the facts cover, and that round's analyses, made with
//! them, are propagate's results. Only the functions that depend on a
//! fact that changed (read its field, are its function, call it) are
//! analyzed again, each with the refiner of its last analysis (its
//! control-flow graph, dominators and the values its branches test,
//! which no round changes: [`super::refine::Refiner::with_params`]); a
//! program without objects or calls takes one round.
//! After [`MAX_ROUNDS`], once the analyses made add up to [`WORK_FACTOR`]
//! times the program's size, the facts are given up (every read,
//! parameter and result any value) and every function analyzed once more:
//! what solving costs stays linear in the program. A huge
//! function adds to the facts but reads and takes results from none
//! while they are solved ([`uses_facts`]; what its parameters receive it
//! does take, a part of what is solved), so it is analyzed once per
//! solve, and again when its parameters' facts change; then, the facts
//! solved, once more reading them. The fields only it writes it solves
//! itself, in its own analysis ([`super::own_fields`]). Where a huge
//! function calls, the facts are solved a second time, its calls then
//! returning what the first solution says they may ([`solve`]). The facts still
//! hold: what it stores was gathered reading any value of the fields
//! others write and, of its own, only what its own `set`s store, so they
//! cover every value it may store whatever the heap holds, and the last
//! analysis adds nothing to them.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use flowc_ir::{Function, FunctionKind, InstKind, Module, Terminator};
use flowc_lang::Symbol;

use super::refine::Refiner;
use super::Propagation;
use crate::lattice::{Info, Kinds, Widening};

/// Rounds the facts always get; past them, they are given up once the
/// analyses made so far add up to [`WORK_FACTOR`] times the program.
pub const MAX_ROUNDS: usize = 12;

/// How many times its own size the analyses of a program may add up to
/// before the facts are given up (past [`MAX_ROUNDS`]). A chain of calls
/// each passing on what the one before returned (`tape = call
/// move1(tape)`, then `move2`, ...: a run-length BF interpreter's residual
/// program) settles one call per two rounds, each analyzing the caller
/// again: 24 rounds for 34 walks, where the facts given up at 12 left every
/// link of its tape tested for its class.
pub const WORK_FACTOR: usize = 64;

/// Rounds after which the facts are given up whatever the work.
const ROUND_LIMIT: usize = 1024;

/// What the program may store in each field, pass to each function and
/// return from it (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramFacts {
    /// `(field, class)` → the join of the values stored there; class
    /// `None` for objects of no known class.
    stored: BTreeMap<(Symbol, Option<Symbol>), Info>,
    /// Per function of the module: its parameters' facts; `None` for one
    /// no `call` names (any values) and for the main graph.
    params: Vec<Option<Vec<Info>>>,
    /// Per function of the module: what it may return.
    returns: Vec<Info>,
    /// Functions by name ([`Module::function_index`]).
    by_name: HashMap<Symbol, usize>,
    /// No facts: every read, parameter and result is any value.
    unknown: bool,
}

impl ProgramFacts {
    /// Nothing known: every read, parameter and result is any value.
    pub fn unknown() -> ProgramFacts {
        ProgramFacts {
            stored: BTreeMap::new(),
            params: Vec::new(),
            returns: Vec::new(),
            by_name: HashMap::new(),
            unknown: true,
        }
    }

    /// Nothing stored, passed or returned anywhere (the optimistic start)
    /// in `module`.
    fn nothing(module: &Module) -> ProgramFacts {
        let by_name = module.function_index();
        let called: std::collections::HashSet<Symbol> = module
            .functions
            .iter()
            .flat_map(|f| f.all_insts().map(move |(_, i)| &f.insts[i].kind))
            .filter_map(|k| match k {
                InstKind::Call { func, .. } => Some(*func),
                _ => None,
            })
            .collect();
        let params = module
            .functions
            .iter()
            .map(|f| {
                let callable = f.kind == FunctionKind::Function && called.contains(&f.name);
                callable.then(|| vec![Info::bottom(); f.params.len()])
            })
            .collect();
        ProgramFacts {
            stored: BTreeMap::new(),
            params,
            returns: vec![Info::bottom(); module.functions.len()],
            by_name,
            unknown: false,
        }
    }

    /// The fact of parameter `k` of function `index`, if the facts know
    /// it (not for the main graph or a function no `call` names).
    pub fn param(&self, index: usize, k: usize) -> Option<Info> {
        if self.unknown {
            return None;
        }
        self.params.get(index)?.as_ref()?.get(k).cloned()
    }

    /// What a call of `func` returns, where known.
    pub fn returned(&self, func: Symbol) -> Option<Info> {
        if self.unknown {
            return None;
        }
        self.returns.get(*self.by_name.get(&func)?).cloned()
    }

    pub fn is_unknown(&self) -> bool {
        self.unknown
    }

    /// What a `get` of `field` reads from an object with info `obj`: the
    /// entries for its class and for objects of no known class, or for
    /// every class when its class is not known. Bottom when no `set` may
    /// write the field (the `get` fails).
    pub fn read(&self, obj: &Info, field: Symbol) -> Info {
        if self.unknown {
            return Info::value();
        }
        let class = obj.class.filter(|_| obj.kinds.has(Kinds::OBJECT));
        let mut acc = Info::bottom();
        for ((_, c), info) in self.stored.range((field, None)..).take_while(|((f, _), _)| *f == field) {
            if class.is_none() || c.is_none() || *c == class {
                acc = acc.join(info);
            }
        }
        acc
    }

    /// The one class whose objects may have `field` set, if the facts
    /// know of no other (and of no `set` of it on an object of no known
    /// class): a `get` of `field` that succeeds read an object of that
    /// class, since reading a field never set fails.
    pub fn owner(&self, field: Symbol) -> Option<Symbol> {
        if self.unknown {
            return None;
        }
        let mut classes = self.stored.range((field, None)..).take_while(|((f, _), _)| *f == field);
        let ((_, only), _) = classes.next()?;
        match (only, classes.next()) {
            (Some(c), None) => Some(*c),
            _ => None,
        }
    }

    /// Adds what one function's analysis found may run: `set`s, `call`s
    /// with their arguments, `return`s.
    fn add(&mut self, found: &Found) {
        for (key, value) in &found.stores {
            let entry = self.stored.entry(*key).or_insert_with(Info::bottom);
            *entry = entry.join(value);
        }
        for (callee, args) in &found.calls {
            let Some(Some(params)) = self.params.get_mut(*callee) else { continue };
            if params.len() != args.len() {
                continue;
            }
            // A call with an unbound argument fails before the callee runs.
            for (p, a) in params.iter_mut().zip(args) {
                *p = p.join(&local(a).bound());
            }
        }
        if let Some(r) = found.returns.as_ref() {
            self.returns[found.index] = self.returns[found.index].join(&local(r));
        }
    }

    /// The facts as lines `;   field class.name: info` (`*` for objects
    /// of no known class) and `;   returns function: info` (for the
    /// functions the program calls), sorted by name.
    pub fn render(&self, module: &Module, out: &mut String) {
        if self.unknown {
            out.push_str(";   unknown\n");
            return;
        }
        let mut lines: Vec<(String, Info)> = self
            .stored
            .iter()
            .map(|((field, class), info)| {
                (format!("field {}.{field}", class.map_or("*".to_owned(), |c| c.to_string())), info.clone())
            })
            .collect();
        for (k, f) in module.functions.iter().enumerate() {
            if matches!(self.params.get(k), Some(Some(_))) {
                lines.push((format!("returns {}", f.name), self.returns[k].clone()));
            }
        }
        lines.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, info) in lines {
            writeln!(out, ";   {name}: {info}").unwrap();
        }
    }

    /// Whether nothing is known of fields or calls (no `set` or `call`
    /// may run).
    pub fn is_empty(&self) -> bool {
        self.stored.is_empty() && self.params.iter().all(Option::is_none)
    }
}

/// An info as a fact of the program: without the allocation, which names
/// an instruction of one function.
fn local(info: &Info) -> Info {
    Info { alloc: None, ..info.clone() }
}

/// What a field holds once a `set` of `value` ran: the value as a fact of
/// the program ([`local`]), bound (a `set` of an unbound value fails).
pub(super) fn stored(value: &Info) -> Info {
    local(value).bound()
}

/// What may run in one function, by its analysis: the `set`s (what they
/// store, joined by field and the class of their object as
/// [`ProgramFacts`] keeps it: a residual program's main graph has tens of
/// thousands, of a few fields), the `call`s of the module's functions
/// (callee index, arguments), the join of what its `return`s return
/// (`None`: none may run).
#[derive(Default)]
struct Found {
    index: usize,
    stores: BTreeMap<(Symbol, Option<Symbol>), Info>,
    calls: Vec<(usize, Vec<Info>)>,
    returns: Option<Info>,
}

impl Found {
    /// What analysis `p` found may run in function `index`, with the infos
    /// of the operands at their blocks.
    fn of(module: &Module, by_name: &HashMap<Symbol, usize>, index: usize, p: &Propagation) -> Found {
        let f = &module.functions[index];
        let mut out = Found { index, ..Found::default() };
        for &b in &f.layout {
            if !p.is_executable(b) {
                continue;
            }
            for i in f.block_insts(b) {
                match &f.insts[i].kind {
                    InstKind::Set { obj, field, value, .. } => {
                        // A `set` of no value, or on what is no object,
                        // stores nothing (it fails).
                        let (obj, value) = (p.operand(f, obj, b), p.operand(f, value, b));
                        if !value.is_bottom() && obj.kinds.has(Kinds::OBJECT) {
                            let entry = out.stores.entry((*field, obj.class)).or_insert_with(Info::bottom);
                            *entry = entry.join(&stored(&value));
                        }
                    }
                    InstKind::Call { func, args } => {
                        if let Some(&callee) = by_name.get(func) {
                            let args = args.iter().map(|a| p.operand(f, a, b)).collect();
                            out.calls.push((callee, args));
                        }
                    }
                    _ => {}
                }
            }
            if let Terminator::Return(o) = &f.blocks[b].term {
                let r = p.operand(f, o, b);
                out.returns = Some(match out.returns.take() {
                    Some(acc) => acc.join(&r),
                    None => r,
                });
            }
        }
        out
    }
}

/// What the analysis of a function depends on: the fields its `get`s
/// read and the functions it calls, each sorted.
struct Depends {
    reads: Vec<Symbol>,
    calls: Vec<usize>,
}

/// Whether analyzing `f` takes what its calls return and its `get`s read
/// from the facts while they are solved: not for a huge function
/// (`flowc_ir::HUGE_INSTS`), which is then analyzed once to solve them
/// and once more reading the solution. Where it takes them, the code after a
/// call or a read is reached only once the callee's result or the field's
/// fact is known, so a main graph of many in a row would be analyzed
/// again per round. What it stores and passes still counts.
pub fn uses_facts(f: &Function) -> bool {
    !f.is_huge()
}

impl Depends {
    fn of(f: &Function, by_name: &HashMap<Symbol, usize>) -> Depends {
        let mut reads = Vec::new();
        let mut calls = Vec::new();
        for (_, i) in f.all_insts() {
            match &f.insts[i].kind {
                _ if !uses_facts(f) => {}
                InstKind::Get { field, .. } => reads.push(*field),
                InstKind::Call { func, .. } => calls.extend(by_name.get(func).copied()),
                _ => {}
            }
        }
        reads.sort();
        reads.dedup();
        calls.sort();
        calls.dedup();
        Depends { reads, calls }
    }
}

/// The facts one round changed.
#[derive(Default)]
struct Changed {
    fields: Vec<Symbol>,
    params: Vec<usize>,
    returns: Vec<usize>,
}

impl Changed {
    fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.params.is_empty() && self.returns.is_empty()
    }

    /// Whether function `index`, which depends on `d`, must be analyzed
    /// again.
    fn affects(&self, index: usize, d: &Depends) -> bool {
        d.reads.iter().any(|f| self.fields.binary_search(f).is_ok())
            || self.params.binary_search(&index).is_ok()
            || d.calls.iter().any(|c| self.returns.binary_search(c).is_ok())
    }
}

/// Where a fact lives, for counting its changes (widening).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Slot {
    Field(Symbol, Option<Symbol>),
    Param(usize, usize),
    Return(usize),
}

/// Counts a fact's changes and widens it like a phi.
struct Widen {
    widening: Widening,
    changes: BTreeMap<Slot, u8>,
}

impl Widen {
    /// The fact at `slot` that was `old`, given `collected` this round:
    /// `Some` of the new fact when it changed.
    fn step(&mut self, slot: Slot, old: &Info, collected: &Info) -> Option<Info> {
        let joined = old.join(collected);
        if joined == *old {
            return None;
        }
        let count = self.changes.entry(slot).or_insert(0);
        *count = count.saturating_add(1);
        Some(self.widening.step(*count, old, joined))
    }
}

/// What a function's `get`s and calls read while it is analyzed.
#[derive(Clone, Copy)]
pub(super) enum Reads<'a> {
    /// The facts.
    Facts,
    /// Not the facts (a huge function, [`uses_facts`]): its calls return
    /// what a solution made before says they may, if given, else any
    /// value ([`solve`]).
    Returns(Option<&'a ProgramFacts>),
}

/// Solves the facts of `module` (see the module docs): `analyze(i,
/// facts, reads, refiner)` analyzes function `i` with `facts`, its `get`s
/// and calls reading what `reads` says, reusing `refiner` (the refiner of
/// its last analysis, if any: the function's graph does not change
/// between rounds). Returns the facts and every function's
/// analysis made with them; with `reread_huge`, a huge function's is the
/// one made reading the solved facts (what the pass rewrites with), else
/// the one made solving them (the facts alone need no more).
///
/// Where a huge function calls, the facts are solved twice: the second
/// time its calls return what the first solution says they may (a sound
/// bound, solved for every value it passed), not any value. A residual
/// program's main graph that calls a walk along a chain `tape = call
/// move1(tape)` 4,505 times passed any value to the walks the first time,
/// and the links their grown cells point back through were any value; the
/// second time it passes the cells they return.
pub(super) fn solve(
    module: &Module,
    mut analyze: impl FnMut(usize, &ProgramFacts, Reads, Option<Refiner>) -> Propagation,
    reread_huge: bool,
) -> (ProgramFacts, Vec<Propagation>) {
    let huge_calls = module
        .functions
        .iter()
        .any(|f| !uses_facts(f) && f.all_insts().any(|(_, i)| matches!(f.insts[i].kind, InstKind::Call { .. })));
    if !huge_calls {
        return fixpoint(module, &mut analyze, reread_huge, None);
    }
    // Its huge functions not read again: a solution given up reads
    // nothing again anyway, and one that holds is solved once more.
    let (first, analyses) = fixpoint(module, &mut analyze, false, None);
    if first.unknown {
        return (first, analyses);
    }
    let second = fixpoint(module, &mut analyze, reread_huge, Some(&first));
    if second.0.unknown {
        // Given up the second time: the first solution holds, its huge
        // functions reading it.
        return fixpoint(module, &mut analyze, reread_huge, None);
    }
    second
}

/// [`solve`]'s rounds, huge functions' calls returning what `returns`
/// says they may (any value without it).
fn fixpoint(
    module: &Module,
    analyze: &mut impl FnMut(usize, &ProgramFacts, Reads, Option<Refiner>) -> Propagation,
    reread_huge: bool,
    returns: Option<&ProgramFacts>,
) -> (ProgramFacts, Vec<Propagation>) {
    let n = module.functions.len();
    // Nothing stored, passed or returned: the start, and what each round
    // collects into.
    let nothing = ProgramFacts::nothing(module);
    let mut facts = nothing.clone();
    let depends: Vec<Depends> = module.functions.iter().map(|f| Depends::of(f, &facts.by_name)).collect();
    let mut widen = Widen { widening: Widening::of_module(module), changes: BTreeMap::new() };
    let mut results: Vec<Option<Propagation>> = (0..n).map(|_| None).collect();
    let mut found: Vec<Found> = (0..n).map(|_| Found::default()).collect();
    // What the last round changed; `None`: analyze every function.
    let mut changed: Option<Changed> = None;
    let sizes: Vec<usize> = module.functions.iter().map(super::inline_size).collect();
    let budget = WORK_FACTOR * sizes.iter().sum::<usize>();
    let mut work = 0;
    for round in 0.. {
        for i in 0..n {
            if changed.as_ref().is_none_or(|c| c.affects(i, &depends[i])) {
                let reads = if uses_facts(&module.functions[i]) { Reads::Facts } else { Reads::Returns(returns) };
                work += sizes[i];
                let reuse = results[i].take().map(|p: Propagation| p.refiner);
                let p = analyze(i, &facts, reads, reuse);
                found[i] = Found::of(module, &facts.by_name, i, &p);
                results[i] = Some(p);
            }
        }
        if facts.unknown {
            break;
        }
        let mut next = nothing.clone();
        for f in &found {
            next.add(f);
        }
        let mut c = Changed::default();
        for (key, collected) in next.stored {
            let old = facts.stored.get(&key).cloned().unwrap_or_else(Info::bottom);
            if let Some(new) = widen.step(Slot::Field(key.0, key.1), &old, &collected) {
                facts.stored.insert(key, new);
                c.fields.push(key.0);
            }
        }
        for (i, params) in next.params.into_iter().enumerate() {
            for (k, collected) in params.into_iter().flatten().enumerate() {
                let Some(Some(old)) = facts.params[i].as_ref().map(|p| p.get(k).cloned()) else { continue };
                if let Some(new) = widen.step(Slot::Param(i, k), &old, &collected) {
                    facts.params[i].as_mut().expect("a called function")[k] = new;
                    c.params.push(i);
                }
            }
        }
        for (i, collected) in next.returns.into_iter().enumerate() {
            if let Some(new) = widen.step(Slot::Return(i), &facts.returns[i].clone(), &collected) {
                facts.returns[i] = new;
                c.returns.push(i);
            }
        }
        if c.is_empty() {
            // Huge functions read the solved facts once. What they store
            // was gathered reading any value of the fields others write
            // (and their own fields as they solved them), so the facts
            // cover every value they may store whatever the heap holds;
            // this analysis adds nothing to them.
            for (i, f) in module.functions.iter().enumerate() {
                if reread_huge && !uses_facts(f) {
                    let reuse = results[i].take().map(|p| p.refiner);
                    results[i] = Some(analyze(i, &facts, Reads::Facts, reuse));
                }
            }
            break;
        }
        if (round + 1 >= MAX_ROUNDS && work > budget) || round + 1 == ROUND_LIMIT {
            facts = ProgramFacts::unknown();
            changed = None;
            continue;
        }
        c.fields.sort();
        c.fields.dedup();
        c.params.dedup();
        changed = Some(c);
    }
    (facts, results.into_iter().map(|p| p.expect("every function analyzed")).collect())
}

/// Whether `info`, a value the facts say a field holds, is either the
/// integer 0 or an object of `class` (a link of a chain, 0 at its end):
/// then testing its class is testing its truth.
pub fn is_class_or_zero(info: &Info, class: Symbol) -> bool {
    info.kinds.within(Kinds::INT.union(Kinds::OBJECT))
        && info.kinds.has(Kinds::OBJECT)
        && info.class == Some(class)
        && (!info.kinds.has(Kinds::INT) || info.range.as_point() == Some(0))
}
