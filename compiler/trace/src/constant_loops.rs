//! Loops a recording follows because the trace's constants decide them.
//!
//! A hot spot's recording stops at a loop header it arrives at (the
//! loop's own code, or a loop cut from the recording as an inner one): a
//! loop is code of its own, which runs for whatever values its variables
//! take. But some loops an interpreter runs for one instruction do the
//! same rounds every time that instruction runs: a Brainfuck interpreter
//! without a bracket map finds a bracket's partner by scanning its
//! program (`pc = pc - 1; c = prog[pc]; ...` until the brackets balance),
//! and with `pc` promoted and the program a list the trace assumes,
//! every test of that scan tests a constant of the trace. Cut from the
//! recording, the scan is a loop of its own, generic in `pc`, run at
//! every jump (BF counters 30: 5.6 s, where the same interpreter with
//! `can_enter_jit dispatch`, whose scan the recording follows, takes
//! 0.06 s). Followed, its rounds fold into the trace: the jump is a
//! constant.
//!
//! So a recording follows (does not stop at) the header of a loop of its
//! base frame ([`runs_as_constants_say`]) where
//! - every test in the loop (`if`, `if ... is`) is of a variable the
//!   loop computes only from constants of the trace — by operations of
//!   variables and literals (not `get`, `new` or a call's result; lists
//!   are immutable, so reading a constant list at a constant index is
//!   one), each variable it reads before setting it (live at the header:
//!   liveness over the loop's blocks) a constant where the recording
//!   arrives;
//! - the loop reads a constant list, and its graph promotes a variable
//!   the loop reads, or one computed only from promoted ones
//!   ([`derived_from`]: an operand read at the position, `b = xb[pc]`,
//!   that a scan for the label it names compares with) (what makes it an
//!   interpreter's scan of its program or a table from its position: a
//!   loop over a list from a literal start is the same loop each time,
//!   better its own or done at once, [`crate::skip`]);
//! - it has at most [`LOOP_BLOCKS`] blocks and calls nothing; the loop
//!   is the header and what reaches it again without passing the block
//!   the recording entered it from.
//!
//! The test is a heuristic, not a proof. Nothing depends on it for
//! correctness — a test of a value that is not constant is a guard in the
//! trace as any other — only for what the trace is: a loop taken for a
//! constant one that is not is unrolled as one path of its rounds. The
//! recording follows such loops only while it is short (a quarter of its
//! limit: [`crate::record::Limits::constant_loops`]).
//!
//! The loop's own hot spot (the interpreter found it hot too: it runs
//! every scan before the JIT starts) is given up once a recording follows
//! it (`Jit::leave_to_constants`): its code was generic in the position
//! it starts from, and went on to every position after a bracket, a
//! `guard_value` each, whose chain filled and gave the promotion up as
//! megamorphic. A loop a recording would have followed but for its length
//! (a scan across a program's longest loops) is a hot spot again.
//!
//! Only programs that have such a loop at all ([`ConstantLoops::possible`],
//! looked for once) have their recordings track which variables are
//! constant and look: that costs a quarter of the tutorial BF
//! interpreter's recording time. What a loop's blocks say does not
//! change, so each header's shape is found once per run, by the block it
//! is entered from ([`ConstantLoops`], a cache the JIT keeps).

use std::cell::RefCell;

use flowc_lang::ast::{Arg, Block, Operator, Program, Stmt, Terminator};
use flowc_lang::index::ProgramIndex;
use flowc_lang::ops::Op;
use flowc_lang::Symbol;
use rustc_hash::{FxHashMap, FxHashSet};

/// The most blocks of a loop a recording follows for its constants.
pub const LOOP_BLOCKS: usize = 64;

/// What a loop's blocks say, for [`runs_as_constants_say`]: the
/// variables its tests read, and each definition in it with what it
/// reads (`None`: a definition that is never a constant).
#[derive(Debug)]
struct Shape {
    tests: Vec<Symbol>,
    defs: Vec<(Symbol, Option<Vec<Symbol>>)>,
    /// The variables live at the header: a round may read them before
    /// the loop sets them (the first round, the values it is entered
    /// with).
    live: FxHashSet<Symbol>,
    /// The variables the loop sets.
    defined: FxHashSet<Symbol>,
    /// Lists the loop reads by `readlist` (variables; a literal list is
    /// a constant anyway).
    lists: Vec<Symbol>,
}

/// Per graph (`None`: the main graph), label and the label it is entered
/// from, the shape of the loop headed there, or `None` where the label
/// heads no loop a recording could follow whatever the constants (too
/// big, a call, a test of a field or an allocation, no list read).
/// Beside it, whether the program has a loop a recording could follow at
/// all: recordings of a program without one neither look nor track what
/// is constant (a set per frame updated at every operation: a quarter of
/// the tutorial BF interpreter's recording time).
#[derive(Default, Debug)]
pub struct ConstantLoops {
    shapes: RefCell<FxHashMap<(Head, Symbol), Option<Shape>>>,
    possible: std::cell::OnceCell<bool>,
    /// Per graph looked through, the variables it promotes somewhere.
    promoted: RefCell<FxHashMap<Option<Symbol>, FxHashSet<Symbol>>>,
    /// The loops recordings followed, by graph and header; and those not
    /// yet taken by [`ConstantLoops::newly_followed`].
    followed: RefCell<Noted>,
    /// The loops a recording would have followed but for its length
    /// (their rounds too many for a trace: an interpreter's scan across
    /// a program's longest loops), and those not yet taken by
    /// [`ConstantLoops::newly_followed`].
    too_long: RefCell<Noted>,
}

/// A loop's head: its graph (`None`: the main graph) and label.
pub type Head = (Option<Symbol>, Symbol);

/// Heads noted, and those noted since last taken.
#[derive(Default, Debug)]
struct Noted {
    all: FxHashSet<Head>,
    new: Vec<Head>,
}

/// Graphs of more blocks than this are not looked through for loops a
/// recording could follow ([`ConstantLoops::possible`]).
pub const POSSIBLE_BLOCKS: usize = 2_000;

impl ConstantLoops {
    pub fn new() -> ConstantLoops {
        ConstantLoops::default()
    }

    /// Whether recordings follow the loop headed at `header` of graph
    /// `function` for its constants: one did, and none found it too long
    /// to.
    pub fn followed(&self, function: Option<Symbol>, header: Symbol) -> bool {
        let at = (function, header);
        self.followed.borrow().all.contains(&at) && !self.too_long.borrow().all.contains(&at)
    }

    /// The loops recordings followed for the first time since the last
    /// call, and those found too long to follow for the first time, by
    /// graph and header.
    pub fn newly_followed(&self) -> (Vec<Head>, Vec<Head>) {
        (std::mem::take(&mut self.followed.borrow_mut().new), std::mem::take(&mut self.too_long.borrow_mut().new))
    }

    /// Notes that a recording followed the loop headed at `header` of
    /// graph `function`, or would have but for its length (`fits`).
    pub fn note(&self, function: Option<Symbol>, header: Symbol, fits: bool) {
        let mut set = if fits { self.followed.borrow_mut() } else { self.too_long.borrow_mut() };
        if set.all.insert((function, header)) {
            set.new.push((function, header));
        }
    }

    /// Whether some loop of `program` headed at a label of `watched` (by
    /// graph, `None` the main graph) could be followed for its constants,
    /// entered from one of the blocks that jump there: found the first
    /// time, in graphs of at most [`POSSIBLE_BLOCKS`] blocks.
    pub fn possible(&self, index: &ProgramIndex, program: &Program, watched: &[(Option<Symbol>, Symbol)]) -> bool {
        *self.possible.get_or_init(|| {
            let graphs = std::iter::once((None, program.main_blocks().collect::<Vec<&Block>>()))
                .chain(program.functions().map(|f| (Some(f.name), f.blocks.iter().collect())));
            for (g, blocks) in graphs {
                if blocks.len() > POSSIBLE_BLOCKS {
                    continue;
                }
                let promoted: FxHashSet<Symbol> = blocks
                    .iter()
                    .filter_map(|b| match b.term {
                        Terminator::Promote { var, .. } => Some(var),
                        _ => None,
                    })
                    .collect();
                if promoted.is_empty() {
                    continue;
                }
                let derived = derived_from(&blocks, &promoted);
                self.promoted.borrow_mut().insert(g, promoted.union(&derived).copied().collect());
                for (wg, header) in watched {
                    if *wg != g {
                        continue;
                    }
                    let mut shapes = self.shapes.borrow_mut();
                    for b in blocks.iter().filter(|b| b.term.successors().contains(header)) {
                        shapes.entry(((g, *header), b.label)).or_insert_with(|| self.shape(index, g, b.label, *header));
                    }
                }
            }
            self.shapes.borrow().values().any(Option::is_some)
        })
    }
}

/// The variables of a flow graph (`blocks`) that hold what its promoted
/// variables (`promoted`) decide: every definition of each is an
/// operation (not a field read, an allocation or a call) that reads one
/// of them or of these, and otherwise only literals and variables the
/// graph never defines (its inputs: an interpreter's program lists). An
/// interpreter's operands read at its position (`b = xb[pc]`), which a
/// scan of its program for a label named by the operand reads where it
/// reads no promoted variable (the scan starts from a literal).
fn derived_from(blocks: &[&Block], promoted: &FxHashSet<Symbol>) -> FxHashSet<Symbol> {
    let var = |a: &Arg| match a {
        Arg::Var(v) => Some(*v),
        Arg::Const(_) => None,
    };
    // Per variable defined, what each definition reads (`None`: not an
    // operation).
    let mut defs: FxHashMap<Symbol, Vec<Option<Vec<Symbol>>>> = FxHashMap::default();
    for b in blocks {
        for s in &b.body {
            let (dst, reads) = match s {
                Stmt::Op1 { dst, op: Operator::Known(_), arg } => (*dst, Some(var(arg).into_iter().collect())),
                Stmt::Op2 { dst, op: Operator::Known(_), lhs, rhs } => {
                    (*dst, Some(var(lhs).into_iter().chain(var(rhs)).collect()))
                }
                Stmt::Set { .. } => continue,
                other => match other.dst() {
                    Some(d) => (d, None),
                    None => continue,
                },
            };
            defs.entry(dst).or_default().push(reads);
        }
        if let Terminator::Call { dst, .. } = &b.term {
            defs.entry(*dst).or_default().push(None);
        }
    }
    let mut derived: FxHashSet<Symbol> = FxHashSet::default();
    loop {
        let decides = |v: &Symbol, derived: &FxHashSet<Symbol>| promoted.contains(v) || derived.contains(v);
        let fits = |reads: &Vec<Symbol>, derived: &FxHashSet<Symbol>| {
            reads.iter().any(|v| decides(v, derived))
                && reads.iter().all(|v| decides(v, derived) || !defs.contains_key(v))
        };
        let new: Vec<Symbol> = defs
            .iter()
            .filter(|(v, ds)| !decides(v, &derived) && ds.iter().all(|d| d.as_ref().is_some_and(|r| fits(r, &derived))))
            .map(|(v, _)| *v)
            .collect();
        if new.is_empty() {
            return derived;
        }
        derived.extend(new);
    }
}

/// Whether the loop headed at `header` of graph `function`, entered from
/// block `from`, runs the rounds the trace's constants say, `constant`
/// saying which variables hold constants of the trace where the
/// recording arrives (see the module docs).
pub fn runs_as_constants_say(
    loops: &ConstantLoops,
    index: &ProgramIndex,
    function: Option<Symbol>,
    (from, header): (Symbol, Symbol),
    constant: &dyn Fn(Symbol) -> bool,
) -> bool {
    let mut cache = loops.shapes.borrow_mut();
    let shape = cache.entry(((function, header), from)).or_insert_with(|| loops.shape(index, function, from, header));
    let Some(shape) = shape else { return false };
    shape.lists.iter().any(|l| constant(*l)) && decided(shape, constant)
}

/// Whether every test of `shape`'s loop reads a constant, `constant`
/// saying which variables hold one where the recording arrives.
fn decided(shape: &Shape, constant: &dyn Fn(Symbol) -> bool) -> bool {
    // Optimistically every variable the loop defines is constant; a
    // definition reading one that is not makes its variable not constant,
    // until nothing changes.
    let mut not: FxHashSet<Symbol> = FxHashSet::default();
    // (A variable the loop sets is constant where every value the loop
    // sets it to is, and, read in a round before it is set, so was the
    // value it came in with.)
    let holds = |v: &Symbol, not: &FxHashSet<Symbol>| {
        !not.contains(v)
            && if shape.defined.contains(v) { !shape.live.contains(v) || constant(*v) } else { constant(*v) }
    };
    loop {
        let mut changed = false;
        for (dst, reads) in &shape.defs {
            if not.contains(dst) {
                continue;
            }
            let constant_def = reads.as_ref().is_some_and(|r| r.iter().all(|v| holds(v, &not)));
            if !constant_def {
                not.insert(*dst);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    shape.tests.iter().all(|t| holds(t, &not))
}

impl ConstantLoops {
    /// The shape of the loop headed at `header` entered from `from`, if a
    /// recording could ever follow it: in a graph that promotes a
    /// variable the loop reads (an interpreter's position; a loop over a
    /// constant list from a literal start is the same loop every time it
    /// runs, and is better its own loop, or done at once).
    fn shape(&self, index: &ProgramIndex, function: Option<Symbol>, from: Symbol, header: Symbol) -> Option<Shape> {
        let shape = shape(index, function, from, header)?;
        let promoted = self.promoted.borrow();
        let promoted = promoted.get(&function)?;
        let reads = shape.defs.iter().flat_map(|(_, r)| r.iter().flatten()).chain(&shape.tests);
        reads.clone().any(|v| promoted.contains(v)).then_some(shape)
    }
}

/// The shape of the loop headed at `header` entered from `from`, if its
/// blocks could ever be followed for their constants.
fn shape(index: &ProgramIndex, function: Option<Symbol>, from: Symbol, header: Symbol) -> Option<Shape> {
    // The blocks reachable from the header (a bounded number), then the
    // loop: the header and the blocks that reach it again without going
    // through it or through `from` (the innermost loop the header heads
    // as entered from there; where it has another way in, what reaches
    // that is taken in too, the loop around it, whose tests are rarely
    // all constants).
    let mut reached: Vec<Symbol> = vec![header];
    let mut seen: FxHashSet<Symbol> = [header].into_iter().collect();
    let mut preds: FxHashMap<Symbol, Vec<Symbol>> = FxHashMap::default();
    let mut k = 0;
    while let Some(&l) = reached.get(k) {
        k += 1;
        let Some(b) = index.block(function, l) else { continue };
        for s in b.term.successors() {
            preds.entry(s).or_default().push(l);
            if seen.insert(s) {
                reached.push(s);
            }
        }
        if reached.len() > 4 * LOOP_BLOCKS {
            return None;
        }
    }
    let mut inside: FxHashSet<Symbol> = [header].into_iter().collect();
    let mut work: Vec<Symbol> = preds.get(&header).into_iter().flatten().copied().filter(|&p| p != from).collect();
    if work.is_empty() {
        return None;
    }
    while let Some(l) = work.pop() {
        if l != from && inside.insert(l) {
            work.extend(preds.get(&l).into_iter().flatten().copied());
        }
        if inside.len() > LOOP_BLOCKS {
            return None;
        }
    }
    let var = |a: &Arg| match a {
        Arg::Var(v) => Some(*v),
        Arg::Const(_) => None,
    };
    let mut shape = Shape {
        tests: Vec::new(),
        defs: Vec::new(),
        lists: Vec::new(),
        live: FxHashSet::default(),
        defined: FxHashSet::default(),
    };
    // What each block reads before it writes it, and writes.
    let mut uses: FxHashMap<Symbol, (FxHashSet<Symbol>, FxHashSet<Symbol>)> = FxHashMap::default();
    for l in &inside {
        let b = index.block(function, *l)?;
        let (reads, writes) = uses.entry(*l).or_default();
        for s in &b.body {
            let args: Vec<Symbol> = match s {
                Stmt::Op1 { arg, .. } => var(arg).into_iter().collect(),
                Stmt::Op2 { lhs, rhs, .. } => var(lhs).into_iter().chain(var(rhs)).collect(),
                Stmt::New { .. } => Vec::new(),
                Stmt::Get { obj, .. } => var(obj).into_iter().collect(),
                Stmt::Set { obj, value, .. } => var(obj).into_iter().chain(var(value)).collect(),
            };
            reads.extend(args.into_iter().filter(|a| !writes.contains(a)));
            if let Some(d) = s.dst() {
                writes.insert(d);
            }
            match s {
                Stmt::Op1 { dst, op, arg } => {
                    let known = matches!(op, Operator::Known(_));
                    shape.defs.push((*dst, known.then(|| var(arg).into_iter().collect())));
                }
                Stmt::Op2 { dst, op, lhs, rhs } => {
                    if let (Operator::Known(Op::ReadList), Some(list)) = (op, var(lhs)) {
                        shape.lists.push(list);
                    }
                    let known = matches!(op, Operator::Known(_));
                    shape.defs.push((*dst, known.then(|| var(lhs).into_iter().chain(var(rhs)).collect())));
                }
                Stmt::New { dst, .. } | Stmt::Get { dst, .. } => shape.defs.push((*dst, None)),
                Stmt::Set { .. } => {}
            }
        }
        reads.extend(b.term.uses().into_iter().filter(|a| !writes.contains(a)));
        match &b.term {
            Terminator::If { cond, .. } => shape.tests.push(*cond),
            Terminator::IfClass { obj, .. } => shape.tests.extend(var(obj)),
            Terminator::Call { .. } => return None,
            _ => {}
        }
    }
    // Liveness over the loop's blocks (what leaves the loop is not read
    // by its tests).
    let mut live: FxHashMap<Symbol, FxHashSet<Symbol>> = uses.iter().map(|(l, (r, _))| (*l, r.clone())).collect();
    loop {
        let mut changed = false;
        for l in &inside {
            let b = index.block(function, *l)?;
            let out: FxHashSet<Symbol> =
                b.term.successors().iter().filter_map(|s| live.get(s)).flatten().copied().collect();
            let (_, writes) = &uses[l];
            let entry = live.get_mut(l).expect("every block of the loop");
            for v in out {
                if !writes.contains(&v) && entry.insert(v) {
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    shape.live = live.remove(&header).unwrap_or_default();
    shape.defined = shape.defs.iter().map(|(d, _)| *d).collect();
    // A test of what a field holds or of an allocation, or of what the
    // loop computes from one, is never constant, whatever the recording
    // holds where it arrives.
    if shape.lists.is_empty() || !decided(&shape, &|_| true) {
        return None;
    }
    Some(shape)
}
