//! Random object-heavy programs through the whole pipeline: allocations in
//! branches and loops, objects stored in objects, reads of fields that may
//! be unset, immutable fields written twice, class tests, copies and
//! comparisons of objects. After every pass the IR must pass the checker
//! and behave like the reference interpreter (`support::run_until`).

use crate::support;

use std::fmt::Write as _;

/// A small deterministic generator (xorshift).
struct Gen {
    state: u64,
    out: String,
    labels: usize,
    emitted: usize,
    /// One class, no comparisons, calls or objects read from fields: more
    /// webs joined by phis survive escape analysis.
    plain: bool,
}

const OBJS: [&str; 3] = ["p0", "p1", "p2"];
const INTS: [&str; 3] = ["i0", "i1", "i2"];
const CLASSES: [&str; 2] = ["a", "b"];
const FIELDS: [&str; 3] = ["f", "g", "h"];

impl Gen {
    fn next(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }

    fn class(&mut self) -> &'static str {
        if self.plain {
            CLASSES[0]
        } else {
            self.pick(&CLASSES)
        }
    }

    fn line(&mut self, s: &str) {
        self.emitted += 1;
        writeln!(self.out, "    {s}").unwrap();
    }

    fn label(&mut self, kind: &str) -> String {
        self.labels += 1;
        format!("{kind}{}", self.labels)
    }

    fn open(&mut self, label: &str) {
        writeln!(self.out, "{label}:").unwrap();
    }

    fn stmt(&mut self, budget: usize, depth: usize) {
        let (o, o2, i, f) = (self.pick(&OBJS), self.pick(&OBJS), self.pick(&INTS), self.pick(&FIELDS));
        match self.below(20) {
            0..=2 => {
                let c = self.class();
                self.line(&format!("{o} = new {c}"));
                if self.below(3) > 0 {
                    for f in FIELDS {
                        let v = self.pick(&INTS);
                        self.line(&format!("{o}.{f} = {v}"));
                    }
                }
            }
            3..=5 => {
                let v = if self.below(3) == 0 { self.below(9).to_string() } else { self.pick(&INTS).to_string() };
                self.line(&format!("{o}.{f} = {v}"));
            }
            6 if !self.plain => self.line(&format!("{o}.{f} = {o2}")),
            7..=8 => self.line(&format!("{i} = {o}.{f}")),
            9 if !self.plain => self.line(&format!("{o} = {o2}.{f}")),
            10 => self.line(&format!("{o} = {o2}")),
            11 => {
                let j = self.pick(&INTS);
                self.line(&format!("{i} = {i} + {j}"));
            }
            12 if !self.plain && self.below(4) == 0 => self.line(&format!("{i} = {o} == {o2}")),
            13..=14 => self.diamond(budget, depth, None),
            15 => {
                let c = self.class();
                self.diamond(budget, depth, Some(format!("{o} is {c}")));
            }
            16..=17 if depth < 2 => self.counted_loop(budget, depth),
            18 if !self.plain && self.below(3) == 0 => {
                let k = self.label("k");
                self.line(&format!("{i} = call touch({o}) then {k}"));
                self.open(&k);
            }
            _ => self.line(&format!("{i} = {i} % 1000")),
        }
    }

    fn body(&mut self, budget: usize, depth: usize) {
        let target = self.emitted + budget;
        while self.emitted < target {
            let left = target - self.emitted;
            self.stmt(left, depth);
        }
    }

    fn diamond(&mut self, budget: usize, depth: usize, test: Option<String>) {
        let (t, e, j) = (self.label("then"), self.label("else"), self.label("join"));
        let test = test.unwrap_or_else(|| {
            let i = self.pick(&INTS);
            self.line(&format!("c = {i} < 3"));
            "c".to_string()
        });
        self.line(&format!("if {test} goto {t} else goto {e}"));
        let inner = (budget / 3).max(1);
        self.open(&t);
        let n = self.below(inner) + 1;
        self.body(n, depth);
        self.line(&format!("goto {j}"));
        self.open(&e);
        if self.below(3) > 0 {
            let n = self.below(inner) + 1;
            self.body(n, depth);
        }
        self.line(&format!("goto {j}"));
        self.open(&j);
    }

    fn counted_loop(&mut self, budget: usize, depth: usize) {
        let k = format!("k{depth}");
        let (h, b, x) = (self.label("head"), self.label("body"), self.label("exit"));
        let n = self.below(4);
        self.line(&format!("{k} = {n}"));
        self.line(&format!("goto {h}"));
        self.open(&h);
        self.line(&format!("if {k} goto {b} else goto {x}"));
        self.open(&b);
        let inner = (budget / 2).max(1);
        let m = self.below(inner) + 1;
        self.body(m, depth + 1);
        self.line(&format!("{k} = {k} - 1"));
        self.line(&format!("goto {h}"));
        self.open(&x);
    }
}

fn program(seed: u64) -> String {
    let mut g = Gen {
        state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        out: String::new(),
        labels: 0,
        emitted: 0,
        plain: seed % 2 == 1,
    };
    g.out.push_str("entry start(n = 3)\n");
    if g.below(2) == 0 {
        g.out.push_str("immutable a(f)\n");
    }
    g.out.push_str(
        r#"function touch(o):
    s:
        o.g = 1
        return 0
"#,
    );
    g.open("start");
    for (k, i) in INTS.iter().enumerate() {
        g.line(&format!("{i} = {k}"));
    }
    for o in OBJS {
        let c = g.class();
        g.line(&format!("{o} = new {c}"));
        if g.below(4) > 0 {
            for f in FIELDS {
                g.line(&format!("{o}.{f} = n"));
            }
        }
    }
    let size = 5 + g.below(30);
    g.body(size, 0);
    let last = if g.below(10) == 0 { g.pick(&OBJS) } else { g.pick(&INTS) };
    g.line(&format!("print_and_stop({last})"));
    g.out
}

#[test]
fn random_object_programs_through_every_pass() {
    let (mut unboxed, mut errors) = (0, 0);
    for seed in 0..400 {
        let src = program(seed);
        let result = std::panic::catch_unwind(|| {
            let run = support::run_until(&src, "dce");
            let lowered = support::lower(&src).1;
            let before = support::run_ir(&run.program, &lowered);
            let after = support::run_ir(&run.program, &run.module);
            (before.1 > after.1, after.0.starts_with("error"))
        });
        match result {
            Ok((fewer, error)) => {
                unboxed += fewer as usize;
                errors += error as usize;
            }
            Err(_) => panic!("seed {seed} failed; the program:\n{src}"),
        }
    }
    assert!(unboxed >= 40, "only {unboxed} programs lost allocations");
    assert!(errors >= 40, "only {errors} programs exercised errors");
}
