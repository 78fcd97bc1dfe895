//! What a loop trace assumes of its inputs: the integers its loop compares
//! (a counter, its bound; a counter tested for 0) and the steps of those
//! counters keep the sign (and the 32-bit size) they had when it was
//! recorded. With that, the optimizer's loop ranges make a counter that
//! steps towards a guard a word, free of overflow and tag checks. Other
//! integers the loop computes with (an accumulator) are assumed only to be
//! machine integers — their sign says nothing about the loop — which
//! spares their tag tests.
//!
//! A variable a trace passes on unchanged and compares with several
//! values (an interpreter's program length, compared with each position
//! it passes) is assumed to keep its value: pinned ([`pins`], and the
//! checks of [`checks`] of a single value), it is a constant in the trace,
//! in its exits' records and so in every bridge recorded from them. An
//! entry trace is entered only with the values it pins (a failing check
//! of one cannot retrace: its bridge would arrive at the same entry).
//!
//! Lists are immutable and made only from constants, so a list a trace
//! starts with is the same list each time it is entered as often as not
//! (an interpreter's program, the environment's tables): a trace assumes
//! each list it starts with is the one it was recorded with, by a
//! `guard_value` that compares identity first — converted as a promotion
//! ([`assume_lists`]), so the conversion folds what the trace reads of it
//! (`prog[pc]` at a constant `pc`, `len`), and an interpreter's dispatch
//! on a list-held program folds away as if the program were promoted.
//!
//! The assumptions are `guard_int` checks at the start of the loop's
//! preamble, which the interpreter enters; the loop itself assumes them
//! as facts of its entry state ([`crate::opt::LoopEntry`]), which code
//! jumping into the loop checks in turn. A check of the preamble that
//! fails often gets, as its bridge, a trace of the same loop that assumes
//! nothing (a retrace).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use flowc_ir::{Function, GuardKind, InstData, InstKind, Operand, ResumeData, ResumeFrame, ResumeValue, ValueId};
use flowc_lang::ast::Operator;
use flowc_lang::ops::range::{self, SMALL_PARAM};
use flowc_lang::{Symbol, Value};

use crate::to_ir::Start;

/// A check: the parameter at this position is an integer in this range.
pub type Check = (usize, i64, i64);

/// The entry checks a loop's preamble `f` gets (one iteration of the loop
/// as [`crate::to_ir`] makes it, not yet optimized, ending in a
/// `jump_trace` that passes the head's variables `names` on), when its
/// parameters had the values `args` when it was recorded.
///
/// The iteration is read as the loop it stands for: a parameter is the
/// head's value of its variable (in the loop, the phi it starts), and the
/// jump's argument for that variable is the value the next iteration
/// starts with (the phi's input from the back edge). So one conversion
/// serves both the checks and the preamble.
pub fn checks(f: &Function, names: &[Symbol], args: &[Value]) -> Vec<Check> {
    let (min, max) = (SMALL_PARAM.0 as i64, SMALL_PARAM.1 as i64);
    // Parameters the loop compares: directly (a bound, a counter at the
    // head); a variable the loop overwrites before reading says nothing.
    let params: HashSet<ValueId> = f.params.iter().copied().collect();
    let next_of = next_values(f, names);
    let pinned = pinned(f, &next_of);
    // Compared values (a truth test compares with 0).
    let mut compared: Vec<ValueId> = Vec::new();
    for (_, i) in f.all_insts() {
        match &f.insts[i].kind {
            InstKind::Op { op: Operator::Known(op), args, .. } if op.is_comparison() => {
                compared.extend(args.iter().filter_map(|a| a.as_value()))
            }
            InstKind::Guard { kind: GuardKind::True(o) | GuardKind::False(o), .. } => compared.extend(o.as_value()),
            _ => {}
        }
    }
    // The operands of the arithmetic that defines `v`, if it is some.
    let operands = |v: ValueId| -> Vec<ValueId> {
        match f.values[v].def {
            flowc_ir::ValueDef::Inst(d) => match &f.insts[d].kind {
                InstKind::Op { op: Operator::Known(op), args, .. } if op.is_arithmetic() => {
                    args.iter().filter_map(|a| a.as_value()).collect()
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    };
    // The parameters behind them: a compared parameter, the operands of
    // the arithmetic a compared value comes from (a counter tested after
    // its step), and the operands of the arithmetic that makes a compared
    // parameter's next value (the step).
    let mut computed: HashSet<ValueId> = HashSet::default();
    let note = |v: ValueId, computed: &mut HashSet<ValueId>| {
        if params.contains(&v) {
            computed.insert(v);
        }
    };
    for &c in &compared {
        note(c, &mut computed);
        for o in operands(c) {
            note(o, &mut computed);
        }
        if let Some(&next) = next_of.get(&c) {
            for x in operands(next) {
                note(x, &mut computed);
            }
        }
    }
    // The other parameters the loop computes with are assumed to stay machine integers: no tag
    // tests on them, whatever their sign.
    let mut arithmetic: HashSet<ValueId> = HashSet::default();
    for (_, i) in f.all_insts() {
        if let InstKind::Op { op: Operator::Known(op), args, .. } = &f.insts[i].kind {
            if op.is_comparison() || op.is_arithmetic() {
                arithmetic.extend(args.iter().filter_map(|a| a.as_value()).filter(|v| params.contains(v)));
            }
        }
    }
    let (word_min, word_max) = (range::WORD_MIN as i64, range::WORD_MAX as i64);
    f.params
        .iter()
        .zip(args)
        .enumerate()
        .filter_map(|(k, (p, v))| {
            pin(&pinned, k, p, v).or(match v {
                Value::Int(v) if computed.contains(p) && (min..=max).contains(v) => Some(match *v {
                    v if v > 0 => (k, 1, max),
                    0 => (k, 0, max),
                    _ => (k, min, -1),
                }),
                Value::Int(_) if arithmetic.contains(p) => Some((k, word_min, word_max)),
                _ => None,
            })
        })
        .collect()
}

/// The checks the dispatch tier's preamble gets ([`crate::jit`]'s
/// `tier`), its parameters `names` having had the values `args` when it
/// was recorded: each integer the dispatch loop never writes, on any of
/// its paths (`fixed`: the program's length), is pinned, and nothing
/// else is assumed. The tier runs every position: a range assumed of its
/// position would be a check in every bridge that jumps back into it,
/// where pinned values are constants of the bridges' records.
pub fn tier_checks(names: &[Symbol], args: &[Value], fixed: &[Symbol]) -> Vec<Check> {
    names
        .iter()
        .zip(args)
        .enumerate()
        .filter(|(_, (n, _))| fixed.contains(n))
        .filter_map(|(k, (_, v))| pin_value(k, v))
        .collect()
}

/// Per parameter of `f` (a trace ending in a `jump_trace` that passes the
/// variables `names` on, or leaving by an exit at its end: a loop's
/// segment), what its variable is where the trace ends: each operand
/// passed on for it, in the order of `f`'s blocks.
fn passed_on(f: &Function, names: &[Symbol]) -> Vec<(ValueId, Operand)> {
    let param_of: HashMap<Symbol, ValueId> = f.params.iter().filter_map(|&p| Some((f.values[p].name?, p))).collect();
    let mut passed = Vec::new();
    for b in f.blocks.values() {
        match &b.term {
            flowc_ir::Terminator::JumpTrace { args: next, .. } => {
                for (name, o) in names.iter().zip(next) {
                    passed.extend(param_of.get(name).map(|&p| (p, o.clone())));
                }
            }
            flowc_ir::Terminator::Exit { resume, .. } => {
                if let [frame] = &f.resumes[*resume].frames[..] {
                    for (name, rv) in &frame.env {
                        if let (Some(&p), ResumeValue::Operand(o)) = (param_of.get(name), rv) {
                            passed.push((p, o.clone()));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    passed
}

/// Per parameter of `f`, the value its variable has when the trace ends
/// ([`passed_on`]; the last where it ends in several places).
fn next_values(f: &Function, names: &[Symbol]) -> HashMap<ValueId, ValueId> {
    passed_on(f, names).into_iter().filter_map(|(p, o)| Some((p, o.as_value()?))).collect()
}

/// The parameters of trace `f` it passes on unchanged (`next_of`,
/// from [`next_values`]) and compares with several values: an
/// interpreter's program length against each position it passes (the
/// positions are promoted, so in compiled code they are constants).
/// Assumed to keep their value, they are constants in the loop, in its
/// exits' records and so in the bridges recorded from those, where each
/// such comparison folds. Only loops pin: a preamble check that fails
/// often retraces the loop; an entry trace's would get a bridge that
/// arrives at the same entry again (an entry runs once per outer
/// iteration, where such a variable may change).
fn pinned(f: &Function, next_of: &HashMap<ValueId, ValueId>) -> HashSet<ValueId> {
    let mut compared_with: HashMap<ValueId, Vec<Operand>> = HashMap::default();
    for (_, i) in f.all_insts() {
        if let InstKind::Op { op: Operator::Known(op), args, .. } = &f.insts[i].kind {
            if let (true, [a, b]) = (op.is_comparison(), &args[..]) {
                for (x, y) in [(a, b), (b, a)] {
                    // Only parameters passed on unchanged can be pinned.
                    if let Some(p) = x.as_value().filter(|p| next_of.get(p) == Some(p)) {
                        // Two different operands decide it: more are not
                        // kept (an interpreter's `pc < n` compares `n`
                        // with every position a trace passes).
                        let seen = compared_with.entry(p).or_default();
                        if seen.len() < 2 && !seen.contains(y) {
                            seen.push(y.clone());
                        }
                    }
                }
            }
        }
    }
    compared_with.into_iter().filter(|(_, others)| others.len() >= 2).map(|(p, _)| p).collect()
}

/// The check that pins parameter `p` (at position `k`) to `v`, its value
/// when recorded, if it is [`pinned`] and `v` a small integer.
fn pin(pinned: &HashSet<ValueId>, k: usize, p: &ValueId, v: &Value) -> Option<Check> {
    pinned.contains(p).then(|| pin_value(k, v)).flatten()
}

/// Parameter `k`, of value `v`, pinned to it: where `v` is an integer a
/// pin can hold (within [`SMALL_PARAM`]).
fn pin_value(k: usize, v: &Value) -> Option<Check> {
    let (min, max) = (SMALL_PARAM.0 as i64, SMALL_PARAM.1 as i64);
    match v {
        Value::Int(v) if (min..=max).contains(v) => Some((k, *v, *v)),
        _ => None,
    }
}

/// The checks an entry trace `f` (straight code from the interpreter,
/// ending in a `jump_trace` that passes the variables `names` on) gets,
/// its parameters having had the values `args` when it was recorded: the
/// values of its pinned parameters ([`pinned`]). Unlike a loop's, a
/// failing one cannot retrace (its bridge would arrive at the same entry
/// again): the JIT enters an entry trace only with those values, and
/// records another variant for others.
///
/// A parameter the trace passes on as the constant it had when recorded
/// counts as passed on unchanged: the recording learnt it there (a loop
/// done at once inside the trace holds for that value, and the values
/// after it are constants), and where the pin holds, passing the
/// constant is passing the parameter. The tutorial BF interpreter's
/// entry traces through such a loop compared the program's length with
/// every position they pass, a comparison and a guard per instruction,
/// and so did the bridges of their exits (`digits 200`).
pub fn pins(f: &Function, names: &[Symbol], args: &[Value]) -> Vec<Check> {
    let passed = passed_on(f, names);
    let mut next_of: HashMap<ValueId, ValueId> = passed.iter().filter_map(|(p, o)| Some((*p, o.as_value()?))).collect();
    for (&p, v) in f.params.iter().zip(args) {
        // Passed on only as the constant it had when recorded: unchanged
        // where the pin holds.
        let mut as_recorded =
            passed.iter().filter(|(q, _)| *q == p).map(|(_, o)| matches!(o, Operand::Const(c) if c == v));
        if as_recorded.next() == Some(true) && as_recorded.all(|same| same) {
            next_of.insert(p, p);
        }
    }
    let pinned = pinned(f, &next_of);
    f.params.iter().zip(args).enumerate().filter_map(|(k, (p, v))| pin(&pinned, k, p, v)).collect()
}

/// The checks a loop's segment `f` gets (straight code from the hot spot
/// at `label` of graph `function`, leaving by an exit at its end), its
/// parameters having had the values `args`: those of [`pins`], but for
/// variables some statement on a cycle through `label` writes — the
/// segment leaves before the rest of the loop, which may change what the
/// segment passes on unchanged (an index compared twice at the head,
/// counted at the end), and a pin that fails every round would make a
/// variant per round.
pub fn segment_pins(
    f: &Function,
    names: &[Symbol],
    args: &[Value],
    index: &flowc_lang::index::ProgramIndex,
    function: Option<Symbol>,
    label: Symbol,
) -> Vec<Check> {
    let written = written_round(index, function, label);
    pins(f, names, args).into_iter().filter(|&(k, ..)| names.get(k).is_none_or(|n| !written.contains(n))).collect()
}

/// The variables the statements and calls of the blocks on a cycle
/// through `label` (of graph `function`) write.
fn written_round(index: &flowc_lang::index::ProgramIndex, function: Option<Symbol>, label: Symbol) -> HashSet<Symbol> {
    let successors = |l: Symbol| index.block(function, l).map(|b| b.term.successors()).unwrap_or_default();
    // The blocks reachable from `label`, and which of them reach it back.
    let mut reached: HashSet<Symbol> = HashSet::default();
    let mut preds: HashMap<Symbol, Vec<Symbol>> = HashMap::default();
    let mut work = vec![label];
    while let Some(l) = work.pop() {
        if !reached.insert(l) {
            continue;
        }
        for s in successors(l) {
            preds.entry(s).or_default().push(l);
            work.push(s);
        }
    }
    let mut round: HashSet<Symbol> = HashSet::default();
    let mut work = vec![label];
    while let Some(l) = work.pop() {
        if round.insert(l) {
            work.extend(preds.get(&l).into_iter().flatten().copied());
        }
    }
    let mut written = HashSet::default();
    for l in round {
        let Some(b) = index.block(function, l) else { continue };
        written.extend(b.body.iter().filter_map(|s| s.dst()));
        if let flowc_lang::ast::Terminator::Call { dst, .. } = &b.term {
            written.insert(*dst);
        }
    }
    written
}

/// Field reads a loop's recorded iteration makes before its loop assumes
/// objects come back ([`same_objects`]): the assumption makes the loop
/// peeled (its optimizing and code twice), which pays where an iteration
/// reaches far through them (the BF fractal's `[-<<<<+>>>>]`: 11 reads,
/// 8 of them links) and not in short runs of short moves (`[->+<]`: 5;
/// docs/architecture.md, "Measurements behind the comments").
pub const SAME_OBJECT_READS: usize = 8;

/// The variables of `names` whose values were the same object when the
/// recorded iteration started (`args`, in order) and when it closed
/// (`end`): an interpreter's tape cell in a loop that moves away and back
/// (`[-<<<<+>>>>]`). The loop assumes they come back every iteration
/// ([`crate::to_ir::End::LiveLoop`]), so the cells it reaches from them
/// are found once, before it. A loop whose assumption fails often is
/// traced again assuming nothing, as for its other checks.
pub fn same_objects(names: &[Symbol], args: &[Value], end: &[(Symbol, Value)]) -> Vec<Symbol> {
    names
        .iter()
        .zip(args)
        .filter(|(n, v)| matches!(v, Value::Object(_)) && end.iter().any(|(m, w)| m == *n && w == *v))
        .map(|(n, _)| *n)
        .collect()
}

/// `start` (a trace starting in one frame whose parameters had the values
/// `args` when it was recorded) assuming each list among them: promoted
/// ([`Start::promoted`]), so the trace starts with a `guard_value` per
/// list (after the checks [`insert`] adds) and converts every read of it
/// as a read of the constant. An interpreter's dispatch on a list-held
/// program is folded by the conversion, not left for the optimizer, which
/// costs more per instruction (docs/architecture.md, "Lists assumed").
pub fn assume_lists(start: &Start, args: &[Value]) -> Start {
    let mut start = start.clone();
    for (name, v) in start.params.iter().zip(args) {
        if matches!(v, Value::List(_)) {
            start.promoted.push((*name, v.clone()));
        }
    }
    start
}

/// A resume record that leaves with `f`'s parameters, in the base frame
/// (of `function`).
fn entry_resume(f: &mut Function, function: Option<Symbol>) -> flowc_ir::ResumeId {
    let env = f
        .params
        .iter()
        .map(|&p| (f.values[p].name.expect("trace parameters are named"), ResumeValue::Operand(Operand::Value(p))))
        .collect();
    f.resumes.alloc(ResumeData { frames: vec![ResumeFrame { function, env, call: None }], virtuals: vec![] })
}

/// Adds `checks` to the start of `f`'s entry block: guards that leave for
/// the interpreter at `anchor` in the base frame (of `function`) with the
/// parameters.
pub fn insert(f: &mut Function, checks: &[Check], anchor: Symbol, function: Option<Symbol>) {
    if checks.is_empty() {
        return;
    }
    let resume = entry_resume(f, function);
    let entry = f.entry;
    for (k, &(p, lo, hi)) in checks.iter().enumerate() {
        let kind = GuardKind::Int(Operand::Value(f.params[p]), lo, hi);
        let g = f.insts.alloc(InstData { kind: InstKind::Guard { kind, resume, label: anchor }, result: None });
        f.blocks[entry].insts.insert(k, g);
    }
}

#[cfg(test)]
mod tests {
    use flowc_lang::{env, syntax, Symbol, Value};

    use crate::record::{record, Heap, Recorded};
    use crate::to_ir::{self, End, Start};

    /// A dispatch loop over a program held in a list, its `pc` promoted.
    const DISPATCH: &str = "dispatch:
    promote pc then decode
decode:
    op = prog[pc]
    hit = op == 7
    if hit goto seven else goto other
seven:
    s = s + 1
    goto next
other:
    s = s + 2
    goto next
next:
    pc = pc + 1
    i = i - 1
    if i goto dispatch else goto done
done:
    print_and_stop(s)
";

    /// An entry trace comparing `n` with two positions and passing it on
    /// as the constant it had when recorded (a loop done at once inside
    /// it learnt it) is pinned to it; passed on as another constant, or as
    /// a value computed from it, it is not.
    #[test]
    fn a_parameter_passed_on_as_its_recorded_constant_is_pinned() {
        let pins = |passed: &str| {
            let text = format!(
                "trace 'e'(v0:n, v1:i) {{
b0:
    v2 = lt 5, v0
    guard_true v2, r0 else done
    v3 = lt 6, v0
    guard_true v3, r0 else done
    v4 = add v0, 1
    jump_trace 'l'({passed}, v1)
resume r0 {{
    frame [n = v0, i = v1]
}}
}}
"
            );
            let f = flowc_ir::parse::function("e.ir", &text).unwrap_or_else(|e| panic!("{e}"));
            let names = [Symbol::intern("n"), Symbol::intern("i")];
            super::pins(&f, &names, &[Value::Int(3081), Value::Int(0)])
        };
        assert_eq!(pins("3081"), vec![(0, 3081, 3081)]);
        assert_eq!(pins("v0"), vec![(0, 3081, 3081)]);
        assert_eq!(pins("3080"), vec![]);
        assert_eq!(pins("v4"), vec![]);
    }

    /// A list the trace starts with, assumed: one `guard_value` on it where
    /// the trace starts, and every read of it converted as a read of the
    /// constant, so the dispatch on `prog[pc]` is folded before the
    /// optimizer sees it — not assumed, the reads and tests stay.
    #[test]
    fn an_assumed_list_is_read_as_its_constant() {
        let program = syntax::parse("test", DISPATCH).unwrap_or_else(|e| panic!("{e}"));
        let prog = Value::list(vec![Value::Int(7), Value::Int(3), Value::Int(7), Value::Int(7)]);
        let pairs = [("prog", prog), ("pc", Value::Int(0)), ("s", Value::Int(0)), ("i", Value::Int(4))];
        let start: Vec<(Symbol, Value)> = pairs.into_iter().map(|(n, v)| (Symbol::intern(n), v)).collect();
        let mut heap = Heap::new(&program);
        let Recorded::Loop { trace, .. } =
            record(&program, Symbol::intern("dispatch"), env::from_pairs(&start), &mut heap, 10_000).unwrap()
        else {
            panic!("the loop did not close")
        };
        let (vars, args): (Vec<Symbol>, Vec<Value>) = start.iter().cloned().unzip();
        let plain = Start::frame(None, &vars);
        let assumed = super::assume_lists(&plain, &args);
        assert_eq!(assumed.promoted.len(), 1, "one list among the start's values");
        let exit = End::Exit(Symbol::intern("dispatch"));
        let name = Symbol::intern("t");
        let index = flowc_lang::index::ProgramIndex::new(&program);
        let convert = |start: &Start| to_ir::convert(&index, name, &trace, start, &exit);
        let (before, after) = (convert(&plain), convert(&assumed));
        for f in [&before, &after] {
            flowc_ir_checker::check(f).unwrap_or_else(|e| panic!("{e:?}"));
        }
        let text = |f| flowc_ir::print::function(f);
        let (before, after) = (text(&before), text(&after));
        assert!(before.contains("readlist") && before.contains("eq "), "{before}");
        assert!(!after.contains("readlist") && !after.contains("eq "), "{after}");
        assert_eq!(after.matches("guard_value v").count(), 2, "the list's and pc's guards: {after}");
    }
}
