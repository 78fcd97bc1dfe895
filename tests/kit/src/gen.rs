//! A seeded random program generator.
//!
//! Programs are built structurally — straight-line operations, if/else
//! diamonds, counted loops, object groups, calls, promotions, jump chains —
//! and lowered to labelled blocks, so every generated program terminates
//! (loop counters are never written by loop bodies; functions only call
//! later functions, or themselves with a shrinking counter). With
//! [`GenConfig::errors`] the generator also writes operations that may fail
//! (type errors, division by zero, unset and immutable fields, unbound
//! variables, unknown labels, operations and functions, wrong argument
//! counts), so differential tests compare error kinds too. With
//! [`GenConfig::alloc`] programs allocate heavily, for the collector: objects
//! made in loops (and live across the loops' guards, so traces' resume data
//! holds them), a linked list grown and shrunk and summed by loops and by a
//! recursive function, objects passed to functions and returned from them.
//! Everything is a pure function of the seed and the configuration.

use std::collections::HashSet;

use flowc_lang::ast::*;
use flowc_lang::ops::Op;
use flowc_lang::{Symbol, Value};

use crate::rng::Rng;

#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Approximate number of statements in the main flow graph.
    pub size: usize,
    /// Number of functions besides the main graph.
    pub functions: usize,
    /// Write operations that may fail at run time.
    pub errors: bool,
    /// Use names that need quoting or look like keywords.
    pub odd_names: bool,
    /// Allocate heavily (see the module docs).
    pub alloc: bool,
    /// End every loop body with its integer variables taking each
    /// other's values: a rotation of some of them, and one copied to
    /// another (loop variables whose next values are other variables'
    /// current ones, or one value: what code keeping loop variables in
    /// registers must get right).
    pub rotate: bool,
}

impl Default for GenConfig {
    fn default() -> GenConfig {
        GenConfig { size: 40, functions: 2, errors: false, odd_names: false, alloc: false, rotate: false }
    }
}

/// A configuration drawn from the seed: sizes, functions, errors and odd
/// names vary, so a range of seeds covers every feature.
/// How many generated programs a test runs: `FLOWC_SEEDS` if set, else
/// `default`.
pub fn seed_count(default: u64) -> u64 {
    std::env::var("FLOWC_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

pub fn config_for(seed: u64) -> GenConfig {
    let mut rng = Rng::new(seed.wrapping_mul(31).wrapping_add(7));
    GenConfig {
        size: 5 + rng.below(60),
        functions: rng.below(4),
        errors: rng.chance(25),
        odd_names: rng.chance(20),
        alloc: false,
        rotate: false,
    }
}

/// Generated programs `0..count`, named `seed N`.
pub fn programs(count: u64) -> Vec<(String, Program)> {
    (0..count).map(|seed| (format!("seed {seed}"), program(seed))).collect()
}

/// The modules the front end makes of generated programs `0..count` from
/// their entries (those it lowers), with their seeds.
pub fn lowered(count: u64) -> impl Iterator<Item = (u64, flowc_ir::Module)> {
    (0..count).filter_map(|seed| {
        let p = program(seed);
        let (label, _) = crate::engines::start(&p);
        flowc_frontend::lower(&p, label).ok().map(|m| (seed, m))
    })
}

/// Allocation-heavy generated programs `0..count`, named `alloc seed N`.
pub fn alloc_programs(count: u64) -> Vec<(String, Program)> {
    (0..count).map(|seed| (format!("alloc seed {seed}"), alloc_program(seed))).collect()
}

/// An allocation-heavy program: [`config_for`]'s configuration with
/// [`GenConfig::alloc`].
pub fn alloc_program(seed: u64) -> Program {
    let cfg = config_for(seed);
    generate(seed, &GenConfig { alloc: true, size: cfg.size.max(30), ..cfg })
}

/// Generates a program with the configuration [`config_for`] draws.
pub fn program(seed: u64) -> Program {
    generate(seed, &config_for(seed))
}

/// [`program`] with [`GenConfig::rotate`]: loops whose variables take
/// each other's values.
pub fn rotate_program(seed: u64) -> Program {
    generate(seed, &GenConfig { rotate: true, ..config_for(seed) })
}

/// Generated programs `0..count` of [`rotate_program`], named
/// `rotate seed N`.
pub fn rotate_programs(count: u64) -> Vec<(String, Program)> {
    (0..count).map(|seed| (format!("rotate seed {seed}"), rotate_program(seed))).collect()
}

/// `p` with its main graph huge (`flowc_ir::HUGE_INSTS`) where the
/// program facts are solved, as a partially evaluated interpreter's
/// residual program is: its entry block first counts a variable (from the
/// environment's first, else from 1) up past that many statements, which
/// nothing reads. So propagate solves the main graph's own fields itself
/// and reads no program facts there while they are solved: what
/// `flowc-fuzz engines --huge` compares across engines. The count is
/// folded into one addition by cleanup, so code generation sees the
/// program at its own size; code lowered for compile time is tried by
/// `native::huge_functions_stop_at_the_first_error` (generated programs
/// huge in their own right) and the tests of huge functions' stops.
pub fn huge(mut p: Program) -> Program {
    let entry = p.items.iter().find_map(|i| match i {
        Item::Entry(e) => Some(e.clone()),
        _ => None,
    });
    let label = entry.as_ref().map(|e| e.label);
    let first = entry.and_then(|e| e.env).and_then(|env| env.first().map(|(k, _)| Arg::Var(*k)));
    let counter = Symbol::intern("huge_pad");
    let block = p.items.iter_mut().find_map(|i| match i {
        Item::Block(b) if label.is_none_or(|l| b.label == l) => Some(b),
        _ => None,
    });
    if let Some(b) = block {
        let start = first.unwrap_or(Arg::Const(Value::Int(1)));
        let mut body = vec![Stmt::Op1 { dst: counter, op: Operator::Known(Op::Same), arg: start }];
        body.extend((0..=flowc_ir::HUGE_INSTS).map(|_| Stmt::Op2 {
            dst: counter,
            op: Operator::Known(Op::Add),
            lhs: Arg::Var(counter),
            rhs: Arg::Const(Value::Int(1)),
        }));
        body.append(&mut b.body);
        b.body = body;
    }
    p
}

const INT_VARS: usize = 6;
const OBJ_VARS: usize = 2;
const CLASSES: [&str; 2] = ["c0", "c1"];
const FIELDS: [&str; 3] = ["f0", "f1", "f2"];
const ODD_INTS: [&str; INT_VARS] = ["if", "x y", "Goto", "_t", "naïve", "it's"];

/// Generates one program.
pub fn generate(seed: u64, cfg: &GenConfig) -> Program {
    let mut g =
        Gen { rng: Rng::new(seed), cfg: cfg.clone(), blocks: Vec::new(), cur: None, labels: 0, func: None, emitted: 0 };
    let mut items = Vec::new();
    let inputs: Vec<(Symbol, Value)> = (0..2).map(|i| (g.int(i), Value::Int(g.rng.range(-20, 40)))).collect();
    items.push(Item::Entry(Entry { label: Symbol::intern("start"), env: Some(inputs) }));
    for class in CLASSES {
        items.push(Item::Immutable(Symbol::intern(class), vec![Symbol::intern("f0")]));
    }
    let (functions, coins): (Vec<Function>, Vec<bool>) = (0..cfg.functions).map(|f| g.function(f)).unzip();
    let helpers = if cfg.alloc { helpers() } else { Vec::new() };
    // `pure` is a promise: never made for a function that allocates, by
    // itself or through what it calls (a folded or dropped call would skip
    // allocations that number the objects after them).
    let allocating = allocating(functions.iter().chain(&helpers));
    for (function, coin) in functions.iter().zip(coins) {
        if coin && !allocating.contains(&function.name) {
            items.push(Item::Pure(function.name));
        }
    }
    items.extend(helpers.into_iter().map(Item::Function));
    g.func = None;
    g.start(Symbol::intern("start"));
    g.init(2);
    let size = cfg.size;
    if cfg.alloc {
        // The whole body in a loop: what it allocates becomes garbage
        // (or grows the list) round after round.
        let k = Symbol::intern("rounds");
        let rounds = g.rng.range(10, 40);
        g.counted(k, rounds, ["round", "work", "done"], |g| {
            g.alloc_op(size, 0);
            g.body(size, 0);
        });
    } else {
        g.body(size, 0);
    }
    let (obj, which) = (g.rng.chance(10), g.rng.below(INT_VARS));
    let last = if obj { g.obj(which % OBJ_VARS) } else { g.int(which) };
    g.close(Terminator::PrintAndStop(Arg::Var(last)));
    let main_blocks = std::mem::take(&mut g.blocks);
    // Loop headers are marked in generation; add a few hints.
    for b in &main_blocks {
        if b.label.as_str().starts_with("head") && g.rng.chance(30) {
            items.push(Item::CanEnterJit(b.label));
        }
    }
    items.extend(main_blocks.into_iter().map(Item::Block));
    items.extend(functions.into_iter().map(Item::Function));
    Program { items }
}

struct Gen {
    rng: Rng,
    cfg: GenConfig,
    blocks: Vec<Block>,
    cur: Option<(Symbol, Vec<Stmt>)>,
    labels: usize,
    /// The function being generated: its index and parameter count.
    func: Option<usize>,
    /// Statements and terminators emitted so far (budgets count these).
    emitted: usize,
}

/// The functions of `functions` that allocate: that make an object, or
/// call one that does.
fn allocating<'a>(functions: impl Iterator<Item = &'a Function> + Clone) -> HashSet<Symbol> {
    let mut out = HashSet::new();
    loop {
        let before = out.len();
        for f in functions.clone() {
            let makes = |b: &Block| b.body.iter().any(|s| matches!(s, Stmt::New { .. }));
            let calls = |b: &Block| matches!(b.term, Terminator::Call { func, .. } if out.contains(&func));
            if f.blocks.iter().any(|b| makes(b) || calls(b)) {
                out.insert(f.name);
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

fn var(s: Symbol) -> Arg {
    Arg::Var(s)
}

fn int(i: i64) -> Arg {
    Arg::Const(Value::Int(i))
}

impl Gen {
    fn int(&self, i: usize) -> Symbol {
        if self.cfg.odd_names {
            Symbol::intern(ODD_INTS[i])
        } else {
            Symbol::intern(&format!("x{i}"))
        }
    }

    fn obj(&self, i: usize) -> Symbol {
        Symbol::intern(&format!("o{i}"))
    }

    fn pick_name(&mut self, names: &[&str]) -> Symbol {
        let i = self.rng.below(names.len());
        Symbol::intern(names[i])
    }

    fn counter(&self, depth: usize) -> Symbol {
        Symbol::intern(&format!("k{depth}"))
    }

    fn label(&mut self, kind: &str) -> Symbol {
        self.labels += 1;
        let prefix = match self.func {
            Some(f) => format!("f{f}_"),
            None => String::new(),
        };
        if self.cfg.odd_names && self.rng.chance(10) {
            Symbol::intern(&format!("{prefix}{kind} {}", self.labels))
        } else {
            Symbol::intern(&format!("{prefix}{kind}{}", self.labels))
        }
    }

    fn start(&mut self, label: Symbol) {
        assert!(self.cur.is_none(), "previous block not closed");
        self.cur = Some((label, Vec::new()));
    }

    fn emit(&mut self, s: Stmt) {
        self.emitted += 1;
        self.cur.as_mut().expect("an open block").1.push(s);
    }

    fn close(&mut self, term: Terminator) {
        self.emitted += 1;
        let (label, body) = self.cur.take().expect("an open block");
        self.blocks.push(Block { label, body, term });
    }

    /// Closes the current block with a jump to a fresh block and opens it.
    fn jump_to_new(&mut self, kind: &str) {
        let l = self.label(kind);
        self.close(Terminator::Jump(l));
        self.start(l);
    }

    fn rand_int_var(&mut self) -> Symbol {
        let i = self.rng.below(INT_VARS);
        self.int(i)
    }

    fn int_operand(&mut self) -> Arg {
        if self.rng.chance(70) {
            var(self.rand_int_var())
        } else {
            int(self.rng.range(-9, 20))
        }
    }

    /// Initializes int variables `from..` and the objects.
    fn init(&mut self, from: usize) {
        for i in from..INT_VARS {
            let v = self.rng.range(-5, 30);
            let dst = self.int(i);
            self.emit(Stmt::Op1 { dst, op: Operator::Known(Op::Same), arg: int(v) });
        }
        let list = if self.cfg.errors && self.rng.chance(30) {
            Value::list(vec![Value::Int(3), Value::atom("a"), Value::list(vec![Value::Int(1)])])
        } else {
            Value::list(vec![Value::Int(3), Value::Int(-1), Value::Int(4), Value::Int(1), Value::Int(5)])
        };
        self.emit(Stmt::Op1 { dst: Symbol::intern("l"), op: Operator::Known(Op::Same), arg: Arg::Const(list) });
        if self.func.is_none() {
            for o in 0..OBJ_VARS {
                self.new_object(o);
            }
            if self.cfg.alloc {
                self.emit(Stmt::New { dst: Symbol::intern(CHAIN), class: Symbol::intern("nil") });
            }
        }
    }

    /// `o = new c` and all fields set, so later reads are safe.
    fn new_object(&mut self, o: usize) {
        let class = self.pick_name(&CLASSES);
        let dst = self.obj(o);
        self.emit(Stmt::New { dst, class });
        let skip = if self.cfg.errors && self.rng.chance(20) { self.rng.below(FIELDS.len()) } else { usize::MAX };
        for (i, f) in FIELDS.iter().enumerate() {
            if i != skip {
                let value = self.int_operand();
                self.emit(Stmt::Set { obj: var(dst), field: Symbol::intern(f), value });
            }
        }
    }

    /// Emits about `budget` statements of structured code at loop depth `depth`.
    fn body(&mut self, budget: usize, depth: usize) {
        let target = self.emitted + budget;
        while self.emitted < target {
            let left = target - self.emitted;
            if self.cfg.alloc && self.rng.chance(25) {
                self.alloc_op(left, depth);
                continue;
            }
            match self.rng.below(100) {
                0..=54 => self.assignment(),
                55..=64 => self.diamond(left, depth),
                65..=74 if depth < 2 => self.counted_loop(left, depth),
                75..=82 if self.func.is_none() => self.object_op(),
                83..=86 if self.func.is_none() => self.class_test(left, depth),
                87..=93 => self.call(),
                94..=96 => {
                    // Objects promoted too, in allocation-heavy programs: a
                    // trace then names them, and reads their immutable
                    // fields (on the JIT's worker, through lent handles).
                    let v = if self.cfg.alloc && self.func.is_none() && self.rng.chance(50) {
                        let o = self.rng.below(OBJ_VARS);
                        self.obj(o)
                    } else {
                        self.rand_int_var()
                    };
                    let l = self.label("promoted");
                    self.close(Terminator::Promote { var: v, label: l });
                    self.start(l);
                }
                _ => self.jump_to_new("next"),
            }
        }
    }

    fn assignment(&mut self) {
        let dst = self.rand_int_var();
        let known = |op| Operator::Known(op);
        let errors = self.cfg.errors;
        if errors && self.rng.chance(6) {
            // Something that may fail at run time.
            let stmt = match self.rng.below(6) {
                0 => Stmt::Op2 { dst, op: known(Op::Div), lhs: self.int_operand(), rhs: var(self.rand_int_var()) },
                1 => Stmt::Op2 { dst, op: known(Op::Add), lhs: self.int_operand(), rhs: Arg::Const(Value::atom("a")) },
                2 => Stmt::Op2 { dst, op: known(Op::ReadList), lhs: var(Symbol::intern("l")), rhs: self.int_operand() },
                3 => Stmt::Op1 { dst, op: Operator::from_name("frob"), arg: self.int_operand() },
                4 => Stmt::Op2 { dst, op: known(Op::Sub), lhs: var(Symbol::intern("unset")), rhs: int(1) },
                _ => Stmt::Op2 { dst, op: known(Op::Lt), lhs: var(Symbol::intern("l")), rhs: self.int_operand() },
            };
            self.emit(stmt);
            return;
        }
        let stmt = match self.rng.below(14) {
            0 | 1 => Stmt::Op2 { dst, op: known(Op::Add), lhs: self.int_operand(), rhs: self.int_operand() },
            2 | 3 => Stmt::Op2 { dst, op: known(Op::Sub), lhs: self.int_operand(), rhs: self.int_operand() },
            4 => Stmt::Op2 { dst, op: known(Op::Mul), lhs: self.int_operand(), rhs: int(self.rng.range(-9, 9)) },
            5 => {
                let op = *self.rng.pick(&[Op::Div, Op::Mod]);
                let d = *self.rng.pick(&[-7, -2, 1, 3, 10, 1000]);
                Stmt::Op2 { dst, op: known(op), lhs: self.int_operand(), rhs: int(d) }
            }
            6 | 7 => {
                let op = *self.rng.pick(&[Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge]);
                Stmt::Op2 { dst, op: known(op), lhs: self.int_operand(), rhs: self.int_operand() }
            }
            8 => Stmt::Op1 { dst, op: known(Op::Neg), arg: self.int_operand() },
            9 => Stmt::Op1 { dst, op: known(Op::Same), arg: self.int_operand() },
            10 => {
                let list = var(Symbol::intern("l"));
                let index = if errors { self.int_operand() } else { int(self.rng.range(0, 4)) };
                let elem = if errors { dst } else { Symbol::intern("e") };
                self.emit(Stmt::Op2 { dst: elem, op: known(Op::ReadList), lhs: list, rhs: index });
                if elem == dst {
                    return;
                }
                Stmt::Op2 { dst, op: known(Op::Add), lhs: var(elem), rhs: self.int_operand() }
            }
            11 => Stmt::Op1 { dst, op: known(Op::Len), arg: var(Symbol::intern("l")) },
            12 => {
                let big = Value::from_big(num_big(self.rng.range(1, 9)));
                Stmt::Op2 { dst, op: known(Op::Add), lhs: self.int_operand(), rhs: Arg::Const(big) }
            }
            _ => {
                // Keep values bounded: reduce modulo a prime.
                Stmt::Op2 { dst, op: known(Op::Mod), lhs: var(dst), rhs: int(1_000_003) }
            }
        };
        self.emit(stmt);
    }

    /// if c goto T else goto E; T: ...; goto J; E: ...; goto J; J:
    fn diamond(&mut self, budget: usize, depth: usize) {
        let c = Symbol::intern("c");
        let op = *self.rng.pick(&[Op::Lt, Op::Ge, Op::Eq, Op::Ne]);
        let (lhs, rhs) = (var(self.rand_int_var()), self.int_operand());
        self.emit(Stmt::Op2 { dst: c, op: Operator::Known(op), lhs, rhs });
        let (t, e, j) = (self.label("then"), self.label("else"), self.label("join"));
        self.close(Terminator::If { cond: c, then_label: t, else_label: e });
        self.start(t);
        self.arm(budget, depth, j);
        self.start(e);
        if self.rng.chance(30) {
            self.close(Terminator::Jump(j));
        } else {
            self.arm(budget, depth, j);
        }
        self.start(j);
    }

    /// The statements of a branch (up to a third of `budget`), then a jump
    /// to `join`.
    fn arm(&mut self, budget: usize, depth: usize, join: Symbol) {
        let n = self.rng.below((budget / 3).max(1)) + 1;
        self.body(n, depth);
        self.close(Terminator::Jump(join));
    }

    /// k = n; goto H; H: if k goto B else goto X; B: ...; k = k - 1; goto H; X:
    fn counted_loop(&mut self, budget: usize, depth: usize) {
        let k = self.counter(depth);
        let n = if self.cfg.alloc {
            self.rng.range(1, 12)
        } else if self.cfg.rotate {
            // Enough rounds for compiled loops to run their loop block.
            self.rng.range(4, 30)
        } else {
            self.rng.range(0, 4)
        };
        self.counted(k, n, ["head", "body", "exit"], |g| {
            let inner = (budget / 2).max(1);
            let n = g.rng.below(inner) + 1;
            g.body(n, depth + 1);
        });
    }

    /// `k = n; goto H; H: if k goto B else goto X; B: body; k = k - 1;
    /// goto H; X:` (the labels' kinds are `names`); generation goes on in X.
    fn counted(&mut self, k: Symbol, n: i64, names: [&str; 3], body: impl FnOnce(&mut Gen)) {
        self.emit(Stmt::Op1 { dst: k, op: Operator::Known(Op::Same), arg: int(n) });
        let (h, b, x) = (self.label(names[0]), self.label(names[1]), self.label(names[2]));
        self.close(Terminator::Jump(h));
        self.start(h);
        self.close(Terminator::If { cond: k, then_label: b, else_label: x });
        self.start(b);
        body(self);
        if self.cfg.rotate {
            self.rotation();
        }
        self.emit(Stmt::Op2 { dst: k, op: Operator::Known(Op::Sub), lhs: var(k), rhs: int(1) });
        self.close(Terminator::Jump(h));
        self.start(x);
    }

    /// Integer variables taking each other's values ([`GenConfig::rotate`]):
    /// `t = a; a = b; b = c; c = t` over two to all of them, then one
    /// variable copied to another, and one of them computed anew from two.
    fn rotation(&mut self) {
        let same = |dst, arg| Stmt::Op1 { dst, op: Operator::Known(Op::Same), arg };
        let n = 2 + self.rng.below(INT_VARS - 1);
        let first = self.rng.below(INT_VARS);
        let vars: Vec<Symbol> = (0..n).map(|k| self.int((first + k) % INT_VARS)).collect();
        let t = Symbol::intern("rot");
        self.emit(same(t, var(vars[0])));
        for w in vars.windows(2) {
            self.emit(same(w[0], var(w[1])));
        }
        self.emit(same(vars[n - 1], var(t)));
        let (from, to) = (self.rand_int_var(), self.rand_int_var());
        self.emit(same(to, var(from)));
        let dst = self.rand_int_var();
        let (a, b) = (self.rand_int_var(), self.rand_int_var());
        self.emit(Stmt::Op2 { dst, op: Operator::Known(Op::Add), lhs: var(a), rhs: var(b) });
        self.emit(Stmt::Op2 { dst, op: Operator::Known(Op::Mod), lhs: var(dst), rhs: int(1_000_003) });
    }

    fn object_op(&mut self) {
        let o = self.rng.below(OBJ_VARS);
        let obj = self.obj(o);
        match self.rng.below(5) {
            0 => self.new_object(o),
            1 | 2 => {
                let field = if self.cfg.errors && self.rng.chance(15) { "f0" } else { *self.rng.pick(&FIELDS[1..]) };
                let value = self.int_operand();
                self.emit(Stmt::Set { obj: var(obj), field: Symbol::intern(field), value });
            }
            3 => {
                let dst = self.rand_int_var();
                let field = self.pick_name(&FIELDS);
                self.emit(Stmt::Get { dst, obj: var(obj), field });
            }
            _ => {
                let dst = self.rand_int_var();
                let other = var(self.obj(1 - o));
                self.emit(Stmt::Op2 { dst, op: Operator::Known(Op::Eq), lhs: var(obj), rhs: other });
            }
        }
    }

    fn class_test(&mut self, budget: usize, depth: usize) {
        let which = self.rng.below(OBJ_VARS);
        let obj = var(self.obj(which));
        let class = self.pick_name(&CLASSES);
        let (t, e, j) = (self.label("is"), self.label("isnt"), self.label("join"));
        self.close(Terminator::IfClass { obj, class, then_label: t, else_label: e });
        self.start(t);
        self.arm(budget, depth, j);
        self.start(e);
        self.close(Terminator::Jump(j));
        self.start(j);
    }

    /// One of the allocation-heavy operations: a list cell pushed (inline
    /// or by `push`), the list popped, summed by a loop or by `total`, an
    /// object boxed by `box` and read by `unbox`, an object made in a loop
    /// and read after a branch.
    fn alloc_op(&mut self, budget: usize, depth: usize) {
        let chain = Symbol::intern(CHAIN);
        // Pushes most (the list grows), pops least.
        let k = if self.func.is_none() { [0, 0, 0, 1, 1, 2, 3, 4, 5, 5, 6, 6][self.rng.below(12)] } else { 5 };
        match k {
            0 => {
                let cell = Symbol::intern("cell");
                self.emit(Stmt::New { dst: cell, class: Symbol::intern("cell") });
                let head = self.int_operand();
                self.emit(Stmt::Set { obj: var(cell), field: Symbol::intern("head"), value: head });
                self.emit(Stmt::Set { obj: var(cell), field: Symbol::intern("next"), value: var(chain) });
                self.emit(Stmt::Op1 { dst: chain, op: Operator::Known(Op::Same), arg: var(cell) });
            }
            1 => {
                let next = self.label("pushed");
                let args = vec![var(chain), self.int_operand()];
                self.close(Terminator::Call { dst: chain, func: Symbol::intern("push"), args, next });
                self.start(next);
            }
            2 => {
                let (p, j) = (self.label("pop"), self.label("popped"));
                let class = Symbol::intern("cell");
                self.close(Terminator::IfClass { obj: var(chain), class, then_label: p, else_label: j });
                self.start(p);
                self.emit(Stmt::Get { dst: chain, obj: var(chain), field: Symbol::intern("next") });
                self.close(Terminator::Jump(j));
                self.start(j);
            }
            3 => {
                // w = chain; H: if w is cell goto B else goto X;
                // B: h = w.head; x = (x + h) % p; w = w.next; goto H; X:
                let (w, h, dst) = (Symbol::intern("w"), Symbol::intern("h"), self.rand_int_var());
                self.emit(Stmt::Op1 { dst: w, op: Operator::Known(Op::Same), arg: var(chain) });
                let (head, body, exit) = (self.label("walk"), self.label("step"), self.label("walked"));
                self.close(Terminator::Jump(head));
                self.start(head);
                let class = Symbol::intern("cell");
                self.close(Terminator::IfClass { obj: var(w), class, then_label: body, else_label: exit });
                self.start(body);
                self.emit(Stmt::Get { dst: h, obj: var(w), field: Symbol::intern("head") });
                self.emit(Stmt::Op2 { dst, op: Operator::Known(Op::Add), lhs: var(dst), rhs: var(h) });
                self.emit(Stmt::Op2 { dst, op: Operator::Known(Op::Mod), lhs: var(dst), rhs: int(1_000_003) });
                self.emit(Stmt::Get { dst: w, obj: var(w), field: Symbol::intern("next") });
                self.close(Terminator::Jump(head));
                self.start(exit);
            }
            4 => {
                let dst = self.rand_int_var();
                let next = self.label("summed");
                self.close(Terminator::Call { dst, func: Symbol::intern("total"), args: vec![var(chain)], next });
                self.start(next);
            }
            5 => {
                let b = Symbol::intern("b");
                let (boxed, read) = (self.label("boxed"), self.label("unboxed"));
                let v = self.int_operand();
                self.close(Terminator::Call { dst: b, func: Symbol::intern("box"), args: vec![v], next: boxed });
                self.start(boxed);
                let dst = self.rand_int_var();
                let args = vec![var(b), self.int_operand()];
                self.close(Terminator::Call { dst, func: Symbol::intern("unbox"), args, next: read });
                self.start(read);
            }
            _ => {
                // An object made here, a branch, then read: in a loop its
                // trace's guards hold it virtual in their resume data.
                let t = Symbol::intern("t");
                self.emit(Stmt::New { dst: t, class: Symbol::intern("c1") });
                for f in FIELDS {
                    let value = self.int_operand();
                    self.emit(Stmt::Set { obj: var(t), field: Symbol::intern(f), value });
                }
                self.diamond(budget, depth);
                let dst = self.rand_int_var();
                let field = self.pick_name(&FIELDS);
                self.emit(Stmt::Get { dst, obj: var(t), field });
            }
        }
    }

    fn call(&mut self) {
        let first = self.func.map_or(0, |f| f + 1);
        if first >= self.cfg.functions {
            return self.assignment();
        }
        let f = first + self.rng.below(self.cfg.functions - first);
        let mut func = Symbol::intern(&format!("f{f}"));
        let mut nargs = 2;
        if self.cfg.errors && self.rng.chance(10) {
            if self.rng.chance(50) {
                func = Symbol::intern("nosuch");
            } else {
                nargs = 3;
            }
        }
        // Function f's first parameter counts recursion down: keep it small.
        let small = Symbol::intern("arg");
        let source = var(self.rand_int_var());
        self.emit(Stmt::Op2 { dst: small, op: Operator::Known(Op::Mod), lhs: source, rhs: int(5) });
        let mut args = vec![var(small)];
        while args.len() < nargs {
            args.push(self.int_operand());
        }
        let dst = self.rand_int_var();
        let next = self.label("ret");
        self.close(Terminator::Call { dst, func, args, next });
        self.start(next);
    }

    /// `function fN(n, p)`: recursion on `n` down to 0 plus a random body.
    /// The function, and whether it may be declared pure (it cannot fail;
    /// [`generate`] also asks that it not allocate).
    fn function(&mut self, index: usize) -> (Function, bool) {
        self.func = Some(index);
        self.blocks.clear();
        let name = Symbol::intern(&format!("f{index}"));
        let (n, p) = (Symbol::intern("n"), self.int(0));
        let entry = self.label("entry");
        self.start(entry);
        let c = Symbol::intern("c");
        self.emit(Stmt::Op2 { dst: c, op: Operator::Known(Op::Le), lhs: var(n), rhs: int(0) });
        let (base, rec) = (self.label("base"), self.label("rec"));
        self.close(Terminator::If { cond: c, then_label: base, else_label: rec });
        self.start(base);
        self.close(Terminator::Return(var(p)));
        self.start(rec);
        self.init(1);
        let size = 3 + self.rng.below(12);
        self.body(size, 1);
        let m = Symbol::intern("m");
        self.emit(Stmt::Op2 { dst: m, op: Operator::Known(Op::Sub), lhs: var(n), rhs: int(1) });
        let back = self.label("back");
        let r = self.rand_int_var();
        let acc = self.int_operand();
        self.close(Terminator::Call { dst: r, func: name, args: vec![var(m), acc], next: back });
        self.start(back);
        let result = self.int_operand();
        self.close(Terminator::Return(result));
        let blocks = std::mem::take(&mut self.blocks);
        let pure = self.rng.chance(50) && !self.cfg.errors;
        (Function { name, params: vec![n, p], blocks }, pure)
    }
}

/// The list the allocation-heavy operations grow and walk.
const CHAIN: &str = "chain";

/// The functions allocation-heavy programs call: `box(v)` returns a new
/// `c1` object, `unbox(b, k)` reads one, `push(l, v)` returns a new list
/// cell, `total(l)` sums a list recursively.
fn helpers() -> Vec<Function> {
    let text = "\
function box(v):
    s:
        b = new c1
        b.f0 = v
        w = v + 1
        b.f1 = w
        u = v * 2
        b.f2 = u
        return b
function unbox(b, k):
    s:
        r = b.f1
        r = r + k
        r = r % 1000003
        return r
function push(l, v):
    s:
        c = new cell
        c.head = v
        c.next = l
        return c
function total(l):
    s:
        if l is cell goto rec else goto base
    rec:
        h = l.head
        t = l.next
        r = call total(t) then add
    add:
        r = h + r
        r = r % 1000003
        return r
    base:
        return 0
entry s
s:
    print_and_stop(0)
";
    let program = flowc_lang::syntax::parse("helpers", text).expect("the helpers parse");
    program
        .items
        .into_iter()
        .filter_map(|item| match item {
            Item::Function(f) => Some(f),
            _ => None,
        })
        .collect()
}

/// A big integer constant: 10^18 times `k`, beyond `i64` for k >= 10.
fn num_big(k: i64) -> num_bigint::BigInt {
    num_bigint::BigInt::from(k) * num_bigint::BigInt::from(10i64).pow(19)
}
