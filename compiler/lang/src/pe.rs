//! The partial evaluator of Part 1 (`do_pe`): online, polyvariant, with a
//! cache keyed by label plus the ordered partial environment, and residual
//! labels named by a counter per label (`power1`, `power_rec3`), exactly as
//! the series' Prolog names them (`gensym`).
//!
//! Semantics follow the series' `pe/3` rules: an operation whose operands
//! are all known is executed and its result recorded in the partial
//! environment; otherwise it is residualized with known operands replaced by
//! constants and its result forgotten. `if` on a known variable follows one
//! branch; on an unknown one both are specialized. `promote` is a jump.
//! Residual blocks are emitted in the order the series asserts them: a
//! block after everything it jumps to (post-order).
//!
//! Beyond the series (which has neither): objects and calls are run-time
//! only — `new`, `get`, `set` and `call` are residualized (their results
//! forgotten), `if_class` on a known non-object goes to its else branch,
//! functions are copied unchanged. An operation that fails on known
//! operands is residualized, so the residual program raises the error when
//! it runs. A jump to a missing label stays a jump to it. Specialization
//! stops with an error after `max_blocks` residual blocks, since partial
//! evaluation need not terminate.
//!
//! [`Mode::Linear`], a mode beside the series' algorithm, for programs
//! whose residual would be large (an interpreter specialized to a long
//! program):
//! - the cache is keyed by the static variables *live* at the label (read
//!   on some path from it before being written), and the others leave the
//!   partial environment there, so a static variable dead at a label (an
//!   interpreter's last opcode) does not make it more residual blocks;
//! - a jump whose target is known (a `goto`, `promote`, an `if` on a
//!   static value) continues in the same residual block, unless the target
//!   is a loop header of the source program (where the cache must stop
//!   static loops): an interpreter's dispatch for one instruction becomes
//!   one residual block, not one per label it passes;
//! - a call with static arguments calls a copy of its function
//!   specialized to them (by the same rules, cached by function and static
//!   arguments, named by `gensym` on the function's name), which takes the
//!   dynamic ones: an interpreter whose tape moves by a called function
//!   `move(tape, n)` calls, for a BF `>>>`, a `move1(tape)` that walks
//!   three cells, no counter left. What the call returns stays dynamic;
//!   calls are still calls, so the call depth a run reaches is the same.

use indexmap::IndexMap;
use rustc_hash::{FxBuildHasher, FxHashSet};

use crate::ast::{Arg, Block, Entry, Function, Item, Operator, Program, Stmt, Terminator};
use crate::env::{self, Env};
use crate::interp::live::Liveness;
use crate::interp::resolve::Resolved;
use crate::symbol::{Symbol, SymbolMap};
use crate::value::Value;

/// An ordered partial environment, as a cache key.
pub type PartialEnv = Vec<(Symbol, Value)>;

/// A finished specialization.
pub struct Residual {
    /// The residual blocks in the order the series asserts them.
    pub blocks: Vec<Block>,
    /// The residual label of the start.
    pub entry: Symbol,
    /// `code_cache` facts: (label, partial environment, residual label), in
    /// the order they were added (with [`Mode::Linear`] each environment's
    /// bindings in the order of their symbols' numbers).
    pub cache: Vec<(Symbol, PartialEnv, Symbol)>,
    /// With [`Mode::Linear`]: the functions specialized to static arguments
    /// of calls, each after those it calls; and those of them copied from a
    /// function declared `pure`.
    pub functions: Vec<Function>,
    pub pure: Vec<Symbol>,
    /// The algorithm that made it.
    pub mode: Mode,
}

impl Residual {
    /// With [`Mode::Linear`], the functions a run of the residual program
    /// may enter: those its main graph calls, and those they call, of the
    /// source's and the copies; `None` (all of the source's) with the
    /// series' algorithm, whose output keeps the source's functions.
    fn reached(&self, source: &Program) -> Option<FxHashSet<Symbol>> {
        if self.mode != Mode::Linear {
            return None;
        }
        let calls = |blocks: &[Block]| -> Vec<Symbol> { blocks.iter().filter_map(|b| b.term.callee()).collect() };
        let mut reached: FxHashSet<Symbol> = FxHashSet::default();
        let mut work = calls(&self.blocks);
        while let Some(f) = work.pop() {
            if !reached.insert(f) {
                continue;
            }
            let body = source.function(f).or_else(|| self.functions.iter().find(|c| c.name == f));
            work.extend(body.map(|b| calls(&b.blocks)).unwrap_or_default());
        }
        Some(reached)
    }

    /// The residual program: hints and functions of `source`, the residual
    /// blocks, and an `entry` fact. A `can_enter_jit` naming a block of
    /// the source's main graph is left out (unless a residual block has
    /// its label): the residual has specializations of that block under
    /// other labels, and is no interpreter whose loop closes there any
    /// more, so its loops are the ones the JIT finds (the hint would
    /// otherwise name no label of the program, which the reader rejects).
    /// With [`Mode::Linear`], a function of the source no run of the
    /// residual enters is left out, and the hints on it: the
    /// whole-program facts take a function no call names to be entered
    /// with any value, so the run-length BF interpreter's `move`, left
    /// behind by its copies, made every link field of the residual's
    /// cells any value (its grown cell's link is its parameter), and the
    /// JIT tested each link for its class instead of for 0.
    pub fn program(&self, source: &Program) -> Program {
        let mut items = vec![Item::Entry(Entry { label: self.entry, env: None })];
        let reached = self.reached(source);
        let kept = |f: &Symbol| reached.as_ref().is_none_or(|r| r.contains(f));
        let labelled = |l: &Symbol| {
            self.blocks.iter().any(|b| b.label == *l)
                || source.functions().filter(|f| kept(&f.name)).any(|f| f.blocks.iter().any(|b| b.label == *l))
        };
        items.extend(
            source
                .items
                .iter()
                .filter(|i| match i {
                    Item::Block(_) | Item::Entry(_) => false,
                    Item::CanEnterJit(l) => labelled(l),
                    Item::Function(f) => kept(&f.name),
                    Item::Pure(f) => kept(f),
                    _ => true,
                })
                .cloned(),
        );
        items.extend(self.pure.iter().map(|&f| Item::Pure(f)));
        items.extend(self.functions.iter().cloned().map(Item::Function));
        items.extend(self.blocks.iter().cloned().map(Item::Block));
        Program { items }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeError {
    UnknownLabel(Symbol),
    TooManyBlocks(usize),
}

impl std::fmt::Display for PeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeError::UnknownLabel(l) => write!(f, "unknown label `{l}`"),
            PeError::TooManyBlocks(n) => {
                write!(f, "partial evaluation produced more than {n} residual blocks; it may not terminate (raise --max-blocks)")
            }
        }
    }
}

/// Which algorithm specializes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// The series': a residual block per label reached and whole partial
    /// environment.
    #[default]
    Series,
    /// Keys of live variables, known jumps followed (see the module docs).
    Linear,
}

/// The residual blocks `flowc pe` makes before it gives up, when it is
/// given no `--max-blocks`: partial evaluation need not terminate, and the
/// limit is what stops it.
pub const BLOCKS: usize = 100_000;

/// With [`Mode::Linear`], the residual blocks allowed per value of the
/// static environment (each element of a list counted, and the list).
/// The linear mode's residual grows with the static program it is given,
/// not with its run: the tutorial BF interpreter makes 2.5 to 5.3 blocks
/// per BF instruction of public programs (`prog` and `map` are two values
/// per instruction), so a fixed [`BLOCKS`] refused hanoi.b (53,885
/// instructions, 137,633 blocks) and pi-16.b (23,948, 113,685) while
/// they take 0.3 s to specialize. A static loop that never ends still
/// stops, after a number of blocks linear in what was given.
pub const BLOCKS_PER_STATIC_VALUE: usize = 8;

/// The block limit for `mode` and the static environment `static_env`
/// when none is given: [`BLOCKS`], or with [`Mode::Linear`]
/// [`BLOCKS_PER_STATIC_VALUE`] per static value where that is more.
pub fn default_max_blocks(mode: Mode, static_env: &[(Symbol, Value)]) -> usize {
    fn values(v: &Value) -> usize {
        match v {
            Value::List(items) => 1 + items.iter().map(values).sum::<usize>(),
            _ => 1,
        }
    }
    match mode {
        Mode::Series => BLOCKS,
        Mode::Linear => {
            let given: usize = static_env.iter().map(|(_, v)| values(v)).sum();
            BLOCKS.max(given.saturating_mul(BLOCKS_PER_STATIC_VALUE))
        }
    }
}

/// Specializes the main flow graph of `program` from `label` with the
/// static (partial) environment `static_env`, as the series does.
pub fn specialize(
    program: &Program,
    label: Symbol,
    static_env: &[(Symbol, Value)],
    max_blocks: usize,
) -> Result<Residual, PeError> {
    specialize_with(program, label, static_env, max_blocks, Mode::Series)
}

/// [`specialize`] by the algorithm `mode`.
pub fn specialize_with(
    program: &Program,
    label: Symbol,
    static_env: &[(Symbol, Value)],
    max_blocks: usize,
    mode: Mode,
) -> Result<Residual, PeError> {
    let blocks: SymbolMap<&Block> = program.main_blocks().map(|b| (b.label, b)).collect();
    if !blocks.contains_key(&label) {
        return Err(PeError::UnknownLabel(label));
    }
    let taken = labels_named(program.main_blocks());
    let mut calls = (mode == Mode::Linear).then(|| Calls::new(program));
    let linear = calls.as_ref().map(|c| Linear { live: c.live(0), headers: loop_headers(&blocks, label) });
    let mut pe = Pe {
        blocks,
        cache: IndexMap::default(),
        counters: SymbolMap::default(),
        taken,
        out: Vec::new(),
        max_blocks,
        linear,
        calls: calls.as_mut(),
    };
    let entry = pe.do_pe(label, env::from_pairs(static_env))?;
    let cache = pe.cache.into_iter().map(|((l, env), r)| (l, env, r)).collect();
    let blocks = pe.out;
    let (functions, pure) = calls.map(|c| (c.out, c.made_pure)).unwrap_or_default();
    Ok(Residual { blocks, entry, cache, functions, pure, mode })
}

/// With [`Mode::Linear`]: the program's functions, and their copies
/// specialized to the static arguments of calls (module docs).
struct Calls<'p> {
    resolved: Resolved,
    functions: SymbolMap<&'p Function>,
    pure: FxHashSet<Symbol>,
    /// (function, static parameters) to the specialized copy's name.
    cache: IndexMap<(Symbol, PartialEnv), Symbol, FxBuildHasher>,
    /// The source's function names and those made.
    names: FxHashSet<Symbol>,
    counters: SymbolMap<usize>,
    out: Vec<Function>,
    made_pure: Vec<Symbol>,
    /// Residual blocks made, in the main graph and the copies.
    blocks: usize,
    /// Copies being made, one inside another.
    nested: usize,
    /// Copies made, by function.
    copies: SymbolMap<usize>,
}

/// The most copies made one inside another (a call in a copy being made
/// specialized in turn): past it a call calls its function as it is, so
/// that a function calling itself with ever other static arguments does
/// not take the stack's depth before the block limit.
const MOST_NESTED: usize = 64;

/// The most blocks one copy may make, with the copies it makes: past it
/// the copy is given up and the call calls the function as it is (a call
/// `count(100000)` of a function looping `n` times would unroll it).
const COPY_BLOCKS: usize = 2_000;

/// The most copies of one function: past it a call calls the function as
/// it is. A static loop counter passed to a function would otherwise copy
/// the function once per round (the run-length BF interpreter's `move`
/// has 34 copies for mandelbrot.b, one per distance moved).
const MOST_COPIES: usize = 256;

impl<'p> Calls<'p> {
    fn new(program: &'p Program) -> Calls<'p> {
        let functions: SymbolMap<&Function> = program.functions().map(|f| (f.name, f)).collect();
        let pure = program
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Pure(f) => Some(*f),
                _ => None,
            })
            .collect();
        Calls {
            resolved: Resolved::new(program, &[]),
            // The functions defined, and those called (a call of a
            // missing function raises its error, which a copy named so
            // would catch).
            names: functions
                .keys()
                .copied()
                .chain(
                    program
                        .main_blocks()
                        .chain(program.functions().flat_map(|f| &f.blocks))
                        .filter_map(|b| b.term.callee()),
                )
                .collect(),
            functions,
            pure,
            cache: IndexMap::default(),
            counters: SymbolMap::default(),
            out: Vec::new(),
            made_pure: Vec::new(),
            blocks: 0,
            nested: 0,
            copies: SymbolMap::default(),
        }
    }

    /// The variables live at each label of flow graph `graph` (0 the main
    /// graph, `k + 1` the `k`-th function), sorted.
    fn live(&self, graph: usize) -> SymbolMap<Vec<Symbol>> {
        live_in(&self.resolved, graph)
    }

    /// `gensym` among function names.
    fn gensym(&mut self, base: Symbol) -> Symbol {
        loop {
            let n = self.counters.entry(base).or_insert(0);
            *n += 1;
            let name = Symbol::intern(&format!("{base}{n}"));
            if self.names.insert(name) {
                return name;
            }
        }
    }
}

struct Pe<'p, 'c> {
    blocks: SymbolMap<&'p Block>,
    cache: IndexMap<(Symbol, PartialEnv), Symbol, FxBuildHasher>,
    counters: SymbolMap<usize>,
    /// Labels of the source program and those gensym made, which it must
    /// not hand out again (`body2` + `32` and `body23` + `2` are both
    /// `body232`).
    taken: FxHashSet<Symbol>,
    out: Vec<Block>,
    max_blocks: usize,
    /// With [`Mode::Linear`]: what it reads of the source program.
    linear: Option<Linear>,
    /// With [`Mode::Linear`]: the functions calls are specialized into.
    calls: Option<&'c mut Calls<'p>>,
}

/// What [`Mode::Linear`] knows of the source program's main flow graph.
struct Linear {
    /// The variables live at each label, sorted.
    live: SymbolMap<Vec<Symbol>>,
    /// The labels a back edge jumps to (from a depth-first search from
    /// the start, then from every label not reached): every cycle passes
    /// one.
    headers: FxHashSet<Symbol>,
}

/// The labels blocks `blocks` have and jump to (a jump to a missing
/// label raises its error, which a block gensym named so would catch).
fn labels_named<'b>(blocks: impl Iterator<Item = &'b Block>) -> FxHashSet<Symbol> {
    let mut names = FxHashSet::default();
    for b in blocks {
        names.insert(b.label);
        names.extend(b.term.successors());
    }
    names
}

/// The targets of back edges of `blocks`, searched depth first from
/// `start`, then from every label not reached, in name order.
fn loop_headers(blocks: &SymbolMap<&Block>, start: Symbol) -> FxHashSet<Symbol> {
    let mut labels: Vec<Symbol> = blocks.keys().copied().filter(|&l| l != start).collect();
    labels.sort_by_key(|l| l.as_str());
    labels.insert(0, start);
    // 1: on the search's path, 2: done.
    let mut state: SymbolMap<u8> = SymbolMap::default();
    let mut headers = FxHashSet::default();
    for root in labels {
        if state.contains_key(&root) {
            continue;
        }
        let mut stack: Vec<(Symbol, Vec<Symbol>)> = vec![(root, blocks[&root].term.successors())];
        state.insert(root, 1);
        while let Some((l, succs)) = stack.last_mut() {
            match succs.pop() {
                Some(s) if blocks.contains_key(&s) => match state.get(&s) {
                    Some(1) => {
                        headers.insert(s);
                    }
                    Some(_) => {}
                    None => {
                        state.insert(s, 1);
                        let next = blocks[&s].term.successors();
                        stack.push((s, next));
                    }
                },
                Some(_) => {}
                None => {
                    state.insert(*l, 2);
                    stack.pop();
                }
            }
        }
    }
    headers
}

/// The variables live at each label of flow graph `graph` of a resolved
/// program (the interpreter's [`Liveness`]), sorted.
fn live_in(resolved: &Resolved, graph: usize) -> SymbolMap<Vec<Symbol>> {
    let g = &resolved.graphs[graph];
    let live = Liveness::of(g);
    g.labels
        .iter()
        .map(|(&label, &b)| {
            let mut vars: Vec<Symbol> = live.live_at(b).into_iter().map(|s| g.slot_names[s as usize]).collect();
            vars.sort();
            (label, vars)
        })
        .collect()
}

/// `presolve`: a known variable becomes its constant.
fn presolve(a: &Arg, env: &Env) -> Arg {
    match a {
        Arg::Var(v) => env.get(v).map_or(a.clone(), |c| Arg::Const(c.clone())),
        Arg::Const(_) => a.clone(),
    }
}

fn known(a: &Arg) -> Option<&Value> {
    match a {
        Arg::Const(c) => Some(c),
        Arg::Var(_) => None,
    }
}

impl<'p> Pe<'p, '_> {
    /// `gensym(L, LR)`: `L` followed by the next number for `L`.
    fn gensym(&mut self, base: Symbol) -> Symbol {
        loop {
            let n = self.counters.entry(base).or_insert(0);
            *n += 1;
            let name = Symbol::intern(&format!("{base}{n}"));
            if self.taken.insert(name) {
                return name;
            }
        }
    }

    fn do_pe(&mut self, label: Symbol, mut penv: Env) -> Result<Symbol, PeError> {
        self.forget_dead(label, &mut penv);
        let mut key = (label, penv.iter().map(|(k, v)| (*k, v.clone())).collect::<Vec<_>>());
        if self.linear.is_some() {
            // The linear mode keys by the bindings, not their order: a
            // variable forgotten where it is dead and written again comes
            // back last (the run-length BF interpreter's `pc = arg` at a
            // jump), and keyed in order, one instruction was specialized
            // once per order it was reached in.
            // By symbol number, not name (a name is read under the
            // interner's lock: sorted so, `pe` of 84,000 BF instructions
            // spent a tenth of its time there).
            key.1.sort_unstable_by_key(|(k, _)| *k);
        }
        if let Some(&r) = self.cache.get(&key) {
            return Ok(r);
        }
        let Some(&block) = self.blocks.get(&label) else {
            // A missing label stays missing: the residual program fails there.
            return Ok(label);
        };
        // Counted over the main graph and every copy of a function (a
        // function calling itself with ever other static arguments makes
        // copies without end).
        let made = self.calls.as_ref().map_or(self.cache.len(), |c| c.blocks);
        if made >= self.max_blocks {
            return Err(PeError::TooManyBlocks(self.max_blocks));
        }
        let residual = self.gensym(label);
        self.cache.insert(key, residual);
        if let Some(c) = self.calls.as_deref_mut() {
            c.blocks += 1;
        }
        let (body, term) = self.pe_code(block, penv)?;
        self.out.push(Block { label: residual, body, term });
        Ok(residual)
    }

    /// With [`Mode::Linear`]: drops the static variables dead at `label`
    /// (written there before they are read).
    fn forget_dead(&self, label: Symbol, penv: &mut Env) {
        if let Some(live) = self.linear.as_ref().and_then(|l| l.live.get(&label)) {
            penv.retain(|v, _| live.binary_search(v).is_ok());
        }
    }

    /// The block at `label` to continue in, within the residual block being
    /// made, when the mode follows known jumps and it is no loop header.
    fn follow(&self, label: Symbol) -> Option<&'p Block> {
        let linear = self.linear.as_ref()?;
        if linear.headers.contains(&label) {
            return None;
        }
        self.blocks.get(&label).copied()
    }

    /// Specializes `block`'s statements into `body`.
    fn pe_stmts(block: &Block, penv: &mut Env, body: &mut Vec<Stmt>) {
        for s in &block.body {
            match s {
                Stmt::Op1 { dst, op, arg } => {
                    let a = presolve(arg, &*penv);
                    match fold(*op, &[&a]) {
                        Some(v) => env::write(penv, *dst, v),
                        None => {
                            env::remove(penv, *dst);
                            body.push(Stmt::Op1 { dst: *dst, op: *op, arg: a });
                        }
                    }
                }
                Stmt::Op2 { dst, op, lhs, rhs } => {
                    let (a, b) = (presolve(lhs, &*penv), presolve(rhs, &*penv));
                    match fold(*op, &[&a, &b]) {
                        Some(v) => env::write(penv, *dst, v),
                        None => {
                            env::remove(penv, *dst);
                            body.push(Stmt::Op2 { dst: *dst, op: *op, lhs: a, rhs: b });
                        }
                    }
                }
                Stmt::New { dst, class } => {
                    env::remove(penv, *dst);
                    body.push(Stmt::New { dst: *dst, class: *class });
                }
                Stmt::Get { dst, obj, field } => {
                    let obj = presolve(obj, &*penv);
                    env::remove(penv, *dst);
                    body.push(Stmt::Get { dst: *dst, obj, field: *field });
                }
                Stmt::Set { obj, field, value } => {
                    body.push(Stmt::Set { obj: presolve(obj, &*penv), field: *field, value: presolve(value, &*penv) });
                }
            }
        }
    }

    fn pe_code(&mut self, block: &'p Block, mut penv: Env) -> Result<(Vec<Stmt>, Terminator), PeError> {
        let mut body = Vec::new();
        let mut block = block;
        loop {
            Self::pe_stmts(block, &mut penv, &mut body);
            // A known target: followed in this block where the mode does.
            let known_target = match &block.term {
                Terminator::Jump(l) | Terminator::Promote { label: l, .. } => Some(*l),
                Terminator::If { cond, then_label, else_label } => {
                    penv.get(cond).map(|c| if c.is_truthy() { *then_label } else { *else_label })
                }
                // Constants are never objects.
                Terminator::IfClass { obj, else_label, .. } => known(&presolve(obj, &penv)).map(|_| *else_label),
                _ => None,
            };
            let Some(l) = known_target else { break };
            match self.follow(l) {
                Some(next) => {
                    self.forget_dead(l, &mut penv);
                    block = next;
                }
                None => return Ok((body, Terminator::Jump(self.do_pe(l, penv)?))),
            }
        }
        let term = match &block.term {
            Terminator::Jump(l) | Terminator::Promote { label: l, .. } => Terminator::Jump(self.do_pe(*l, penv)?),
            Terminator::PrintAndStop(a) => Terminator::PrintAndStop(presolve(a, &penv)),
            Terminator::If { cond, then_label, else_label } => match penv.get(cond) {
                Some(c) => {
                    let l = if c.is_truthy() { *then_label } else { *else_label };
                    Terminator::Jump(self.do_pe(l, penv)?)
                }
                None => {
                    let t = self.do_pe(*then_label, penv.clone())?;
                    let e = self.do_pe(*else_label, penv)?;
                    Terminator::If { cond: *cond, then_label: t, else_label: e }
                }
            },
            Terminator::IfClass { obj, class, then_label, else_label } => {
                let obj = presolve(obj, &penv);
                match known(&obj) {
                    // Constants are never objects.
                    Some(_) => Terminator::Jump(self.do_pe(*else_label, penv)?),
                    None => {
                        let t = self.do_pe(*then_label, penv.clone())?;
                        let e = self.do_pe(*else_label, penv)?;
                        Terminator::IfClass { obj, class: *class, then_label: t, else_label: e }
                    }
                }
            }
            Terminator::Call { dst, func, args, next } => {
                let args = args.iter().map(|a| presolve(a, &penv)).collect();
                let (func, args) = self.specialize_call(*func, args)?;
                env::remove(&mut penv, *dst);
                Terminator::Call { dst: *dst, func, args, next: self.do_pe(*next, penv)? }
            }
            Terminator::Return(a) => Terminator::Return(presolve(a, &penv)),
            Terminator::Error(r) => Terminator::Error(*r),
        };
        Ok((body, term))
    }

    /// A call of `func` with arguments `args` (static ones constants):
    /// with [`Mode::Linear`], where some are static, a call of `func`'s
    /// copy specialized to them, with the others (module docs); else the
    /// call as it is (no such function, or a count of arguments its
    /// parameters do not match, which the run then raises).
    fn specialize_call(&mut self, func: Symbol, args: Vec<Arg>) -> Result<(Symbol, Vec<Arg>), PeError> {
        let Some(calls) = self.calls.as_deref_mut() else { return Ok((func, args)) };
        let Some(&f) = calls.functions.get(&func).filter(|f| f.params.len() == args.len() && !f.blocks.is_empty())
        else {
            return Ok((func, args));
        };
        let statics: PartialEnv =
            f.params.iter().zip(&args).filter_map(|(p, a)| known(a).map(|v| (*p, v.clone()))).collect();
        if statics.is_empty() {
            return Ok((func, args));
        }
        let dynamic: Vec<Arg> = args.into_iter().filter(|a| known(a).is_none()).collect();
        let key = (func, statics);
        if let Some(&name) = calls.cache.get(&key) {
            return Ok((name, dynamic));
        }
        let made = calls.copies.entry(func).or_insert(0);
        if *made >= MOST_COPIES || calls.nested >= MOST_NESTED {
            return Ok((func, args_again(f, &key.1, dynamic)));
        }
        *made += 1;
        // What to go back to if the copy grows past its blocks.
        let before = (calls.out.len(), calls.cache.len(), calls.made_pure.len(), calls.blocks);
        let name = calls.gensym(func);
        calls.cache.insert(key.clone(), name);
        let graph = calls.resolved.functions.get(&func).map_or(0, |&k| k as usize);
        let blocks: SymbolMap<&Block> = f.blocks.iter().map(|b| (b.label, b)).collect();
        let entry = f.blocks[0].label;
        let linear = Linear { live: calls.live(graph), headers: loop_headers(&blocks, entry) };
        let mut copy = Pe {
            taken: labels_named(f.blocks.iter()),
            blocks,
            cache: IndexMap::default(),
            counters: SymbolMap::default(),
            out: Vec::new(),
            max_blocks: self.max_blocks.min(before.3 + COPY_BLOCKS),
            linear: Some(linear),
            calls: Some(calls),
        };
        copy.calls.as_deref_mut().expect("the calls specialized").nested += 1;
        let made = copy.do_pe(entry, env::from_pairs(&key.1));
        copy.calls.as_deref_mut().expect("the calls specialized").nested -= 1;
        let start = match made {
            Ok(start) => start,
            Err(PeError::TooManyBlocks(_)) => {
                // Too big to copy (a static loop in it unrolled, or copies
                // without end): the copy and those it made go, and the
                // call calls the function as it is.
                let calls = self.calls.as_deref_mut().expect("the calls specialized");
                calls.out.truncate(before.0);
                calls.cache.truncate(before.1);
                calls.made_pure.truncate(before.2);
                calls.blocks = before.3;
                return Ok((func, args_again(f, &key.1, dynamic)));
            }
            Err(e) => return Err(e),
        };
        let mut body = copy.out;
        // The entry first (a function's first block is where it starts);
        // the rest in the order made.
        if let Some(k) = body.iter().position(|b| b.label == start) {
            let b = body.remove(k);
            body.insert(0, b);
        }
        let params = f.params.iter().filter(|p| !key.1.iter().any(|(s, _)| s == *p)).copied().collect();
        let calls = self.calls.as_deref_mut().expect("the calls specialized");
        calls.out.push(Function { name, params, blocks: body });
        if calls.pure.contains(&func) {
            calls.made_pure.push(name);
        }
        Ok((name, dynamic))
    }
}

/// The arguments of a call of `f` whose static parameters are `statics`
/// and whose other arguments are `dynamic`, in the order of its parameters.
fn args_again(f: &Function, statics: &PartialEnv, dynamic: Vec<Arg>) -> Vec<Arg> {
    let mut dynamic = dynamic.into_iter();
    f.params
        .iter()
        .map(|p| match statics.iter().find(|(s, _)| s == p) {
            Some((_, v)) => Arg::Const(v.clone()),
            None => dynamic.next().expect("an argument per parameter"),
        })
        .collect()
}

/// `do_op` on known operands; `None` when an operand is unknown or the
/// operation fails (it is then residualized and fails at run time).
fn fold(op: Operator, args: &[&Arg]) -> Option<Value> {
    let Operator::Known(op) = op else { return None };
    if op.arity() != args.len() {
        return None;
    }
    let vals: Vec<Value> = args.iter().map(|a| known(a).cloned()).collect::<Option<_>>()?;
    op.eval(&vals).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax;
    use crate::syntax::term::{Style, Term};

    /// A bytecode interpreter: `code` of 1 (add one), 2 (double) or
    /// anything else (subtract one), run on `x`.
    const BYTECODE: &str = r#"start:
    pc = 0
    acc = x
    goto dispatch
dispatch:
    n = len(code)
    more = pc < n
    if more goto fetch else goto done
fetch:
    op = code[pc]
    pc = pc + 1
    is_add = op == 1
    if is_add goto add else goto not_add
not_add:
    is_dbl = op == 2
    if is_dbl goto dbl else goto dec
add:
    acc = acc + 1
    goto dispatch
dbl:
    acc = acc * 2
    goto dispatch
dec:
    acc = acc - 1
    goto dispatch
done:
    print_and_stop(acc)
"#;

    /// `x` specialized thirteen times is named up to `x14`, and `x1` once
    /// would be `x11` too: generated names never repeat.
    #[test]
    fn generated_labels_are_distinct() {
        let src = r#"x:
    c = i < 12
    if c goto step else goto x1
step:
    i = i + 1
    goto x
x1:
    print_and_stop(i)
"#;
        let p = syntax::parse("t", src).unwrap();
        let r = specialize(&p, Symbol::intern("x"), &[(Symbol::intern("i"), Value::Int(0))], 1000).unwrap();
        let mut labels: Vec<Symbol> = r.blocks.iter().map(|b| b.label).collect();
        labels.sort_by_key(|l| l.as_str());
        let n = labels.len();
        labels.dedup();
        assert_eq!(labels.len(), n, "{labels:?}");
        let out = crate::interp::run(&r.program(&p), r.entry, &[], &crate::interp::Config::default()).unwrap();
        assert_eq!(out.value, Value::Int(12));
    }

    /// A `can_enter_jit` on the interpreter's dispatch label does not
    /// outlive the specialization: the residual program, printed, reads
    /// back (a hint naming no label of it would not), keeps the hint on a
    /// function's label, and computes what the interpreter does, in
    /// either mode.
    #[test]
    fn the_residual_keeps_only_hints_that_name_its_labels() {
        let src = r#"can_enter_jit dispatch
can_enter_jit twice
function double(a):
    twice:
        b = a * 2
        return b
start:
    pc = 0
    acc = x
    goto dispatch
dispatch:
    n = len(code)
    more = pc < n
    if more goto fetch else goto done
fetch:
    op = code[pc]
    pc = pc + 1
    is_add = op == 1
    if is_add goto add else goto dbl
add:
    acc = acc + 1
    goto dispatch
dbl:
    acc = call double(acc) then dispatch
done:
    print_and_stop(acc)
"#;
        let p = syntax::parse("t", src).unwrap();
        let static_env = [(Symbol::intern("code"), Value::list([1, 2, 1].map(Value::Int).to_vec()))];
        for mode in [Mode::Series, Mode::Linear] {
            let r = specialize_with(&p, Symbol::intern("start"), &static_env, 1000, mode).unwrap();
            let text = syntax::print(syntax::Syntax::Readable, &r.program(&p));
            let back = syntax::parse("residual", &text).unwrap_or_else(|e| panic!("{mode:?}: {e}\n{text}"));
            let hints: Vec<&str> = back.can_enter_jit_labels().map(|l| l.as_str()).collect();
            assert_eq!(hints, ["twice"], "{mode:?}");
            let env = [(Symbol::intern("x"), Value::Int(5))];
            let out = crate::interp::run(&back, r.entry, &env, &crate::interp::Config::default()).unwrap();
            assert_eq!(out.value, Value::Int(13), "{mode:?}");
        }
    }

    /// In the linear mode, a call with static arguments calls a copy of
    /// its function specialized to them (its static loop unrolled), with
    /// the dynamic arguments only; one copy per function and static
    /// arguments, a `pure` function's copy declared pure; what the program
    /// prints is the same. The series' mode leaves calls as they are. A
    /// function calling itself with ever other static arguments ends in
    /// the block limit, not in a stack overflow.
    #[test]
    fn the_linear_mode_specializes_calls_to_their_static_arguments() {
        let src = r#"pure add_n
function add_n(x, n):
    loop:
        if n goto step else goto out
    step:
        x = x + 1
        n = n - 1
        goto loop
    out:
        return x
start:
    a = call add_n(x, 3) then second
second:
    b = call add_n(a, 3) then third
third:
    c = call add_n(b, 2) then done
done:
    print_and_stop(c)
"#;
        let p = syntax::parse("t", src).unwrap();
        let start = Symbol::intern("start");
        let env = [(Symbol::intern("x"), Value::Int(5))];
        let run = |program: &Program| {
            crate::interp::run(program, start, &env, &crate::interp::Config::default()).unwrap().value
        };
        let r = specialize_with(&p, start, &[], 1000, Mode::Linear).unwrap();
        let out = r.program(&p);
        let copies: Vec<(&str, Vec<&str>)> =
            r.functions.iter().map(|f| (f.name.as_str(), f.params.iter().map(|p| p.as_str()).collect())).collect();
        assert_eq!(copies, [("add_n1", vec!["x"]), ("add_n2", vec!["x"])]);
        let pure: Vec<&str> = r.pure.iter().map(|f| f.as_str()).collect();
        assert_eq!(pure, ["add_n1", "add_n2"]);
        // No loop left in a copy: `n` is known at each of its tests.
        for f in &r.functions {
            assert!(f.blocks.iter().all(|b| !matches!(b.term, Terminator::If { .. })), "{f:?}");
        }
        let residual = crate::interp::run(&out, r.entry, &env, &crate::interp::Config::default()).unwrap().value;
        assert_eq!(residual, Value::Int(13));
        assert_eq!(run(&p), Value::Int(13));
        let series = specialize(&p, start, &[], 1000).unwrap();
        assert!(series.functions.is_empty());
        // Without end: `up(k)` calls `up(k + 1)`.
        let src = r#"function up(k):
    go:
        j = k + 1
        r = call up(j) then back
    back:
        return r
start:
    r = call up(0) then done
done:
    print_and_stop(r)
"#;
        let p = syntax::parse("t", src).unwrap();
        // The copy that would pass the limit is given up, and its call
        // calls `up` as it is.
        let r = specialize_with(&p, start, &[], 100, Mode::Linear).unwrap();
        assert!(!r.functions.is_empty() && r.functions.len() < MOST_NESTED, "{}", r.functions.len());
        assert!(r.program(&p).functions().any(|f| f.name.as_str() == "up"));
        // With room for more blocks than the copies may nest: the copies
        // stop nesting, and the last calls the function as it is.
        let r = specialize_with(&p, start, &[], 100_000, Mode::Linear).unwrap();
        assert_eq!(r.functions.len(), MOST_NESTED);
        // A static loop counter passed to a function: a copy per round up
        // to `MOST_COPIES`, then calls of the function as it is.
        let src = r#"function plus(a, k):
    add:
        b = a + k
        return b
start:
    i = 0
    goto top
top:
    more = i < 300
    if more goto body else goto done
body:
    x = call plus(x, i) then next
next:
    i = i + 1
    goto top
done:
    print_and_stop(x)
"#;
        let p = syntax::parse("t", src).unwrap();
        let r = specialize_with(&p, start, &[], 100_000, Mode::Linear).unwrap();
        assert_eq!(r.functions.len(), MOST_COPIES);
        let env = [(Symbol::intern("x"), Value::Int(1))];
        let out = crate::interp::run(&r.program(&p), r.entry, &env, &crate::interp::Config::default()).unwrap();
        assert_eq!(out.value, Value::Int(1 + 299 * 300 / 2));
    }

    /// Copies and their blocks get names nothing of the program uses,
    /// called or jumped to, though missing: a call of the missing `walk1`
    /// and a jump to the missing `top1` raise their errors in the residual
    /// as in the source. A copy that would pass `COPY_BLOCKS` (a static
    /// loop of 100,000 rounds unrolled) is given up: the call calls its
    /// function as it is, and the residual computes what the source does.
    #[test]
    fn copies_are_named_apart_and_given_up_past_their_blocks() {
        let start = Symbol::intern("start");
        let run = |src: &str| {
            let p = syntax::parse("t", src).unwrap();
            let r = specialize_with(&p, start, &[], 100_000, Mode::Linear).unwrap();
            let config = crate::interp::Config::default();
            let got = crate::interp::run(&r.program(&p), r.entry, &[], &config).map(|o| o.value).map_err(|e| e.kind);
            let expected = crate::interp::run(&p, start, &[], &config).map(|o| o.value).map_err(|e| e.kind);
            assert_eq!(got, expected, "{src}");
            (got, r)
        };
        let (got, _) = run(r#"function walk(x, n):
    top:
        y = x + n
        return y
start:
    a = call walk(1, 2) then next
next:
    b = call walk1(a) then done
done:
    print_and_stop(b)
"#);
        assert!(got.is_err());
        let (got, _) = run(r#"function jump(n):
    top:
        if n goto top1 else goto out
    out:
        return n
start:
    a = call jump(1) then done
done:
    print_and_stop(a)
"#);
        assert!(got.is_err());
        let (got, r) = run(r#"function count(n):
    top:
        s = 0
        goto loop
    loop:
        if n goto step else goto out
    step:
        s = s + 1
        n = n - 1
        goto loop
    out:
        return s
start:
    a = call count(100000) then done
done:
    print_and_stop(a)
"#);
        assert_eq!(got, Ok(Value::Int(100_000)));
        assert!(r.functions.is_empty(), "{:?}", r.functions.iter().map(|f| f.name).collect::<Vec<_>>());
    }

    /// In the linear mode the residual program keeps only the functions
    /// a run of it may enter (those its main graph calls, and theirs), and
    /// the hints on them: `walk`, called only with a static count, is left
    /// behind by its copy, and so is its `pure` hint; `helper`, called by
    /// the copy, stays. The series' algorithm keeps every function.
    #[test]
    fn the_linear_residual_keeps_only_the_functions_it_enters() {
        let src = r#"pure walk
function helper(x):
    h:
        y = x + 1
        return y
function walk(x, n):
    top:
        if n goto step else goto out
    step:
        x = call helper(x) then back
    back:
        n = n - 1
        goto top
    out:
        return x
start:
    r = call walk(x, 2) then done
done:
    print_and_stop(r)
"#;
        let p = syntax::parse("t", src).unwrap();
        let start = Symbol::intern("start");
        let env = [(Symbol::intern("x"), Value::Int(5))];
        let names = |prog: &Program| -> Vec<String> { prog.functions().map(|f| f.name.to_string()).collect() };
        let linear = specialize_with(&p, start, &[], 1000, Mode::Linear).unwrap();
        let out = linear.program(&p);
        assert_eq!(names(&out), ["helper", "walk1"]);
        assert!(!out.items.iter().any(|i| matches!(i, Item::Pure(f) if f.as_str() == "walk")));
        let back = syntax::parse("residual", &syntax::print(syntax::Syntax::Readable, &out)).unwrap();
        let run = crate::interp::run(&back, linear.entry, &env, &crate::interp::Config::default()).unwrap();
        assert_eq!(run.value, Value::Int(7));
        let series = specialize(&p, start, &[], 1000).unwrap();
        assert_eq!(names(&series.program(&p)), ["helper", "walk"]);
    }

    /// A small interpreter specialized to its program (`code` and `pc`
    /// static, `acc` not): the series' algorithm makes a residual block per
    /// label reached, keyed by every static variable; the linear mode one
    /// per position of the program, keyed by what is live at `dispatch`.
    /// Both residual programs print what the interpreter prints.
    #[test]
    fn the_linear_mode_makes_a_block_per_interpreted_instruction() {
        let src = BYTECODE;
        let p = syntax::parse("t", src).unwrap();
        let code = Value::list([1, 2, 1, 3].map(Value::Int).to_vec());
        let static_env = [(Symbol::intern("code"), code.clone())];
        let start = Symbol::intern("start");
        let run = |r: &Residual| {
            let env = [(Symbol::intern("x"), Value::Int(5))];
            crate::interp::run(&r.program(&p), r.entry, &env, &crate::interp::Config::default()).unwrap().value
        };
        let series = specialize(&p, start, &static_env, 1000).unwrap();
        let linear = specialize_with(&p, start, &static_env, 1000, Mode::Linear).unwrap();
        assert_eq!(run(&series), Value::Int(12));
        assert_eq!(run(&linear), Value::Int(12));
        // `start`, then `dispatch` at each position 0..=4 (the last one
        // reaching `done`); the series' mode passes every label.
        assert_eq!(linear.blocks.len(), 6, "{:?}", linear.blocks);
        assert_eq!(series.blocks.len(), 17);
        let keys: Vec<Vec<&str>> = linear
            .cache
            .iter()
            .filter(|(l, ..)| l.as_str() == "dispatch")
            .map(|(_, env, _)| {
                // In the order of the symbols' numbers.
                let mut names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
                names.sort();
                names
            })
            .collect();
        assert_eq!(keys, vec![vec!["code", "pc"]; 5]);
    }

    /// The linear mode keys its cache by the static bindings, not their
    /// order: a jump writes `pc` where it is dead, so `pc` comes back last
    /// in the partial environment, and the loop's instructions, reached
    /// again in that order, were specialized a second time (the residual's
    /// loop then entered at two blocks, which no loop analysis takes for
    /// a loop: the JIT watched nothing and ran it interpreted).
    #[test]
    fn the_linear_mode_specializes_an_instruction_once_whatever_the_order() {
        let src = r#"
start:
    pc = 0
    n = len(code)
    goto dispatch
dispatch:
    more = pc < n
    if more goto fetch else goto done
fetch:
    op = code[pc]
    arg = args[pc]
    is_dec = op == 1
    if is_dec goto dec else goto back
dec:
    x = x - 1
    goto next
back:
    if x goto jump else goto next
jump:
    pc = arg
    goto next
next:
    pc = pc + 1
    goto dispatch
done:
    print_and_stop(x)
"#;
        let p = syntax::parse("t", src).unwrap();
        let static_env = [
            (Symbol::intern("code"), Value::list([1, 1, 2].map(Value::Int).to_vec())),
            (Symbol::intern("args"), Value::list([0, 0, -1].map(Value::Int).to_vec())),
        ];
        let r = specialize_with(&p, Symbol::intern("start"), &static_env, 1000, Mode::Linear).unwrap();
        let positions: Vec<String> = r
            .cache
            .iter()
            .filter(|(l, ..)| l.as_str() == "dispatch")
            .map(|(_, env, _)| env.iter().find(|(k, _)| k.as_str() == "pc").map(|(_, v)| v.to_string()).unwrap())
            .collect();
        assert_eq!(positions, ["0", "1", "2", "3"], "{:?}", r.cache);
        let env = [(Symbol::intern("x"), Value::Int(6))];
        let run = crate::interp::run(&r.program(&p), r.entry, &env, &crate::interp::Config::default()).unwrap();
        assert_eq!(run.value, Value::Int(0));
    }

    /// The linear mode's default block limit grows with the static
    /// environment: an interpreter given a program longer than
    /// [`BLOCKS`] instructions specializes, where the fixed limit gives up.
    #[test]
    fn the_linear_modes_block_limit_grows_with_the_static_program() {
        let src = BYTECODE;
        // Each residual block is specialized inside the one jumping to it,
        // so a straight program nests as deep as it is long: on a big
        // stack, as `flowc` runs.
        let lengths = std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn(move || {
                let p = syntax::parse("t", src).unwrap();
                let start = Symbol::intern("start");
                let long = vec![(Symbol::intern("code"), Value::list(vec![Value::Int(1); BLOCKS + 10]))];
                let limits = [Mode::Series, Mode::Linear].map(|m| default_max_blocks(m, &long));
                let fixed = specialize_with(&p, start, &long, BLOCKS, Mode::Linear).map(|r| r.blocks.len());
                let grown = specialize_with(&p, start, &long, limits[1], Mode::Linear).map(|r| r.blocks.len());
                (limits, default_max_blocks(Mode::Linear, &[]), fixed, grown)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(lengths.0, [BLOCKS, (BLOCKS + 11) * BLOCKS_PER_STATIC_VALUE]);
        assert_eq!(lengths.1, BLOCKS);
        assert_eq!(lengths.2, Err(PeError::TooManyBlocks(BLOCKS)));
        // `start` and a `dispatch` per position, the last reaching `done`.
        assert_eq!(lengths.3, Ok(BLOCKS + 12));
    }

    #[test]
    fn part1_power_with_y_5() {
        let src = "block(power, op1(res, same, const(1), if(y, power_rec, power_done))).
                   block(power_rec, op2(res, mul, var(res), var(x), op2(y, sub, var(y), const(1), if(y, power_rec, power_done)))).
                   block(power_done, print_and_stop(var(res))).";
        let p = syntax::parse("power", src).unwrap();
        let r = specialize(&p, Symbol::intern("power"), &[(Symbol::intern("y"), Value::Int(5))], 1000).unwrap();
        assert_eq!(r.entry.as_str(), "power1");
        let cache: Vec<String> = r
            .cache
            .iter()
            .map(|(l, env, lr)| {
                let env = Term::list(
                    env.iter().map(|(k, v)| Term::compound("/", vec![Term::sym(*k), Term::value(v)])).collect(),
                );
                format!("code_cache({l}, {}, {lr}).", env.to_string_in(Style::Listing))
            })
            .collect();
        assert_eq!(
            cache,
            [
                "code_cache(power, [y/5], power1).",
                "code_cache(power_rec, [y/5, res/1], power_rec1).",
                "code_cache(power_rec, [y/4], power_rec2).",
                "code_cache(power_rec, [y/3], power_rec3).",
                "code_cache(power_rec, [y/2], power_rec4).",
                "code_cache(power_rec, [y/1], power_rec5).",
                "code_cache(power_done, [y/0], power_done1).",
            ]
        );
    }
}
