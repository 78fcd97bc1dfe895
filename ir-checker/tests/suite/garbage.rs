//! Robustness: damaged input never makes the parser or the checker panic.
//!
//! Rules:
//! - Texts: every truncation of every valid example, and seeded random
//!   edits (deleted spans, inserted tokens, swapped and repeated lines) go
//!   through `parse::module` and, when that succeeds, `check_module`; parse
//!   errors are fine.
//! - IR: seeded random mutations of parsed functions, including ids outside
//!   their arenas (which the parser never produces), go through `check`.
//! - Each run checks twice and compares (the output is deterministic), and
//!   renders every violation; the counters assert the inputs really reached
//!   the checker and really broke invariants.

use crate::common::{parse, VALID};
use flowc_ir::{BlockData, Function, InstData, InstKind, Operand, ResumeData, Terminator, Trap, ValueData, ValueDef};

/// xorshift64*: small, seeded, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Parses and checks; returns (parsed, violations).
fn run_text(text: &str) -> (bool, usize) {
    match flowc_ir::parse::module("garbage.ir", text) {
        Err(e) => {
            assert!(!e.to_string().is_empty());
            (false, 0)
        }
        Ok(m) => {
            let first = flowc_ir_checker::check_module(&m);
            assert_eq!(first, flowc_ir_checker::check_module(&m), "nondeterministic on:\n{text}");
            let vs = first.err().unwrap_or_default();
            for v in &vs {
                assert!(v.to_string().starts_with("function "));
            }
            (true, vs.len())
        }
    }
}

const TOKENS: [&str; 18] = [
    "v99",
    "b7",
    "r3",
    "@4",
    "phi [",
    "}",
    "\n",
    ",",
    ":",
    "=",
    "b0:\n",
    "    jump b0\n",
    "    guard_true v1, r0 else l0\n",
    "v1",
    "resume r0 {\n",
    "frame [a = v2]\n",
    "call fib(",
    "0",
];

fn corrupt(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(|l| format!("{l}\n")).collect();
    for _ in 0..1 + rng.below(3) {
        let k = rng.below(lines.len());
        match rng.below(5) {
            0 => {
                let j = rng.below(lines.len());
                lines.swap(k, j);
            }
            1 => {
                let l = lines[k].clone();
                lines.insert(k, l);
            }
            2 => {
                lines.remove(k);
                if lines.is_empty() {
                    lines.push(String::new());
                }
            }
            _ => {
                let line = &lines[k];
                let chars: Vec<char> = line.chars().collect();
                let at = rng.below(chars.len() + 1);
                let mut s: String = chars[..at].iter().collect();
                if rng.below(2) == 0 {
                    s.push_str(TOKENS[rng.below(TOKENS.len())]);
                    s.extend(&chars[at..]);
                } else {
                    s.extend(chars[(at + 1 + rng.below(4)).min(chars.len())..].iter());
                }
                lines[k] = s;
            }
        }
    }
    lines.concat()
}

#[test]
fn damaged_texts_never_panic() {
    let (mut parsed, mut violations) = (0, 0);
    for (_, text) in VALID {
        for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            let (p, v) = run_text(&text[..end]);
            parsed += p as usize;
            violations += v;
        }
    }
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for round in 0..4000 {
        let text = corrupt(&mut rng, VALID[round % VALID.len()].1);
        let (p, v) = run_text(&text);
        parsed += p as usize;
        violations += v;
    }
    assert!(parsed > 300, "only {parsed} damaged texts parsed");
    assert!(violations > 300, "only {violations} violations found");
}

/// Ids `0..arena.len() + 3`, obtained by allocating in a copy of the arena
/// (the last three are outside the original).
macro_rules! ids_of {
    ($arena:expr, $make:expr) => {{
        let mut copy = $arena.clone();
        let target = copy.len() + 3;
        while copy.len() < target {
            copy.alloc($make);
        }
        copy.iter().map(|(id, _)| id).collect::<Vec<_>>()
    }};
}

fn mutate(rng: &mut Rng, f: &mut Function) {
    let blocks = ids_of!(
        f.blocks,
        BlockData {
            name: None,
            phis: Default::default(),
            insts: Default::default(),
            term: Terminator::Trap(Trap::ReturnOutsideFunction)
        }
    );
    let insts = ids_of!(f.insts, InstData { kind: InstKind::New("x".into()), result: None });
    let values = ids_of!(f.values, ValueData { def: ValueDef::Detached, name: None });
    let resumes = ids_of!(f.resumes, ResumeData::default());
    let pick = |rng: &mut Rng, n: usize| rng.below(n);
    for _ in 0..1 + rng.below(3) {
        let b = blocks[pick(rng, blocks.len())];
        let i = insts[pick(rng, insts.len())];
        let v = values[pick(rng, values.len())];
        let r = resumes[pick(rng, resumes.len())];
        let real_inst = f.insts.iter().nth(rng.below(f.insts.len())).map(|(id, _)| id);
        let n_blocks = f.blocks.len();
        let real_block =
            f.layout.get(rng.below(f.layout.len())).copied().filter(|x| x.into_raw().into_u32() < n_blocks as u32);
        match rng.below(12) {
            0 => f.entry = b,
            1 => f.layout.push(b),
            2 => {
                if !f.layout.is_empty() {
                    let k = rng.below(f.layout.len());
                    f.layout.remove(k);
                }
            }
            3 => f.params.push(v),
            4 => {
                if let Some(x) = real_block {
                    f.blocks[x].insts.push(i);
                }
            }
            5 => {
                if let Some(x) = real_block {
                    f.blocks[x].phis.insert(0, i);
                }
            }
            6 => {
                if let Some(x) = real_inst {
                    f.insts[x].result = if rng.below(3) == 0 { None } else { Some(v) };
                }
            }
            7 => {
                if let Some(x) = real_inst {
                    if let Some(o) = f.insts[x].kind.operands_mut().next() {
                        *o = Operand::Value(v);
                    }
                    if let InstKind::Phi(inputs) = &mut f.insts[x].kind {
                        inputs.push((b, Operand::Value(v)));
                    }
                    if let InstKind::Guard { resume, .. } = &mut f.insts[x].kind {
                        *resume = r;
                    }
                }
            }
            8 => {
                if let Some(x) = real_block {
                    f.blocks[x].term = match rng.below(3) {
                        0 => Terminator::Jump(b),
                        1 => Terminator::Branch { cond: Operand::Value(v), then_block: b, else_block: x },
                        _ => Terminator::Return(Operand::Value(v)),
                    };
                }
            }
            9 => {
                let k = rng.below(f.values.len() + 1);
                let x = f.values.iter().nth(k).map(|(id, _)| id);
                if let Some(x) = x {
                    f.values[x].def = match rng.below(3) {
                        0 => ValueDef::Detached,
                        1 => ValueDef::Param(rng.below(4) as u32),
                        _ => ValueDef::Inst(i),
                    };
                }
            }
            10 => {
                let x = f.resumes.iter().nth(rng.below(f.resumes.len() + 1)).map(|(id, _)| id);
                if let Some(x) = x {
                    if let Some(frame) = f.resumes[x].frames.first_mut() {
                        frame.env.push(("q".into(), flowc_ir::ResumeValue::Virtual(rng.below(3) as u32)));
                        frame.env.push(("w".into(), flowc_ir::ResumeValue::Operand(Operand::Value(v))));
                    }
                }
            }
            _ => f.layout.reverse(),
        }
    }
}

#[test]
fn damaged_ir_never_panics() {
    let functions: Vec<Function> = VALID.iter().flat_map(|(_, t)| parse(t).functions).collect();
    let mut rng = Rng(0x0dd_ba11_cafe_f00d);
    let mut broken = 0;
    for round in 0..3000 {
        let mut f = functions[round % functions.len()].clone();
        for _ in 0..1 + rng.below(3) {
            mutate(&mut rng, &mut f);
        }
        let first = flowc_ir_checker::check(&f);
        assert_eq!(first, flowc_ir_checker::check(&f));
        if let Err(vs) = first {
            broken += 1;
            for v in &vs {
                assert!(v.to_string().starts_with(&format!("function {}", f.name)));
            }
        }
    }
    assert!(broken > 2000, "only {broken} of 3000 mutated functions were reported invalid");
}
