//! Structured mutants: IR broken on purpose, one [`Class`] per invariant and
//! per operation-form rule, to measure whether the checker catches each
//! kind of breakage (its *kill rate*).
//!
//! A mutation works on the IR data structure, not on text, and is built so
//! that it breaks its invariant whatever else holds: a use is replaced by a
//! value whose definition provably does not dominate it (dominators are
//! computed first), a phi loses the input of a real predecessor, and so on.
//! Where the subject has nothing to break (no phi, no call), the class
//! either inserts what it needs (an instruction of constant operands,
//! valid in itself) or is not applicable to that subject and makes no
//! mutant. A mutant is *killed* when the checker rejects it with the
//! class's expected [`Rule`]; the target is that every class kills every
//! mutant.
//!
//! One class works on text, because the data structure cannot express it:
//! [`Class::MissingTerminator`] deletes a terminator line, and the parser
//! must reject the text.
//!
//! Subjects ([`subjects`]) are the IR the project really makes: the front
//! end's module for a generated program, the module after each of the
//! eight passes, and every trace and bridge the JIT compiles for it (in a
//! module with the program's functions, so calls resolve).

use flowc_ir::cfg::{Cfg, DomTree};
use flowc_ir::{
    BlockId, Function, FunctionKind, GuardKind, InstData, InstId, InstKind, Module, Operand, ResumeData, ResumeFrame,
    ResumeId, ResumeValue, Terminator, ValueData, ValueDef, ValueId,
};
use flowc_ir_checker::Rule;
use flowc_lang::ast::Operator;
use flowc_lang::ops::{Form, Op};
use flowc_lang::{Symbol, Value};
use flowc_tests::rng::Rng;

/// What a mutation breaks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// An operand replaced by a value defined later in the block, or in a
    /// block that does not dominate the use.
    UseNotDominated,
    /// A phi input replaced by a value not available at the end of its
    /// predecessor.
    PhiInputUnavailable,
    /// An operand replaced by a value no parameter or linked instruction
    /// defines (a fresh detached value, or the result of an unlinked one).
    UndefinedValue,
    /// An operand naming a value outside the arena.
    DanglingValue,
    /// An instruction's result set to another instruction's result.
    DefinedTwice,
    /// An instruction's result set to a parameter.
    ParamRedefined,
    /// A value-defining instruction without a result.
    ResultMissing,
    /// A `set` or a guard with a result.
    ResultOnEffect,
    /// A value's `ValueDef` record naming the wrong definition.
    RecordWrong,
    /// A phi's input for a predecessor removed.
    PhiInputMissing,
    /// A phi input from a block that is not a predecessor.
    PhiInputFromNonPredecessor,
    /// A phi input repeated.
    PhiInputDuplicated,
    /// A phi listed among the ordinary instructions, or an ordinary
    /// instruction among the phis.
    PhiOutOfPlace,
    /// A terminator line deleted from the text (the parser must refuse).
    MissingTerminator,
    /// A successor or phi input block outside the arena or the layout.
    DanglingBlock,
    /// A guard or exit naming a resume record outside the arena.
    DanglingResume,
    /// A resume value naming a virtual object the record does not have.
    DanglingVirtual,
    /// A call of a function the module does not have.
    CallUnknownFunction,
    /// A call with one argument too many or too few.
    CallArity,
    /// A function name given twice.
    DuplicateFunction,
    /// A parameter listed twice.
    DuplicateParam,
    /// A jump to the entry block.
    EntryWithPredecessor,
    /// The entry not first in the layout.
    EntryNotFirst,
    /// A block listed twice in the layout.
    BlockListedTwice,
    /// An instruction linked a second time.
    InstLinkedTwice,
    /// A guard, an iteration count or an exit in a function that is not a
    /// trace.
    GuardOutsideTrace,
    /// Resume data naming a value not available at the guard.
    ResumeUnavailable,
    /// A resume record without frames, or with pending calls in the wrong
    /// frames.
    ResumeShape,
    /// A form the operation does not have, a known operation with the wrong
    /// operand count, or a constant operand the form does not admit.
    OpForm,
}

/// How a mutant must be rejected.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    Rule(Rule),
    /// By the parser, with a message containing this text.
    ParseError(&'static str),
}

impl Class {
    pub const ALL: [Class; 29] = [
        Class::UseNotDominated,
        Class::PhiInputUnavailable,
        Class::UndefinedValue,
        Class::DanglingValue,
        Class::DefinedTwice,
        Class::ParamRedefined,
        Class::ResultMissing,
        Class::ResultOnEffect,
        Class::RecordWrong,
        Class::PhiInputMissing,
        Class::PhiInputFromNonPredecessor,
        Class::PhiInputDuplicated,
        Class::PhiOutOfPlace,
        Class::MissingTerminator,
        Class::DanglingBlock,
        Class::DanglingResume,
        Class::DanglingVirtual,
        Class::CallUnknownFunction,
        Class::CallArity,
        Class::DuplicateFunction,
        Class::DuplicateParam,
        Class::EntryWithPredecessor,
        Class::EntryNotFirst,
        Class::BlockListedTwice,
        Class::InstLinkedTwice,
        Class::GuardOutsideTrace,
        Class::ResumeUnavailable,
        Class::ResumeShape,
        Class::OpForm,
    ];

    /// The kebab-case name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Class::UseNotDominated => "use-not-dominated",
            Class::PhiInputUnavailable => "phi-input-unavailable",
            Class::UndefinedValue => "undefined-value",
            Class::DanglingValue => "dangling-value",
            Class::DefinedTwice => "defined-twice",
            Class::ParamRedefined => "param-redefined",
            Class::ResultMissing => "result-missing",
            Class::ResultOnEffect => "result-on-effect",
            Class::RecordWrong => "record-wrong",
            Class::PhiInputMissing => "phi-input-missing",
            Class::PhiInputFromNonPredecessor => "phi-input-from-non-predecessor",
            Class::PhiInputDuplicated => "phi-input-duplicated",
            Class::PhiOutOfPlace => "phi-out-of-place",
            Class::MissingTerminator => "missing-terminator",
            Class::DanglingBlock => "dangling-block",
            Class::DanglingResume => "dangling-resume",
            Class::DanglingVirtual => "dangling-virtual",
            Class::CallUnknownFunction => "call-unknown-function",
            Class::CallArity => "call-arity",
            Class::DuplicateFunction => "duplicate-function",
            Class::DuplicateParam => "duplicate-param",
            Class::EntryWithPredecessor => "entry-with-predecessor",
            Class::EntryNotFirst => "entry-not-first",
            Class::BlockListedTwice => "block-listed-twice",
            Class::InstLinkedTwice => "inst-linked-twice",
            Class::GuardOutsideTrace => "guard-outside-trace",
            Class::ResumeUnavailable => "resume-unavailable",
            Class::ResumeShape => "resume-shape",
            Class::OpForm => "op-form",
        }
    }

    /// The rejection the class must get.
    pub fn expected(self) -> Expected {
        Expected::Rule(match self {
            Class::UseNotDominated | Class::PhiInputUnavailable => Rule::UseDominated,
            Class::UndefinedValue => Rule::UndefinedValue,
            Class::DanglingValue | Class::DanglingBlock | Class::DanglingResume | Class::DanglingVirtual => {
                Rule::DanglingRef
            }
            Class::DefinedTwice
            | Class::ParamRedefined
            | Class::ResultMissing
            | Class::ResultOnEffect
            | Class::RecordWrong => Rule::SingleDef,
            Class::PhiInputMissing | Class::PhiInputFromNonPredecessor | Class::PhiInputDuplicated => Rule::PhiInputs,
            Class::PhiOutOfPlace => Rule::PhisFirst,
            Class::MissingTerminator => return Expected::ParseError("has no terminator"),
            Class::CallUnknownFunction => Rule::CallTarget,
            Class::CallArity => Rule::CallArity,
            Class::DuplicateFunction => Rule::UniqueFunction,
            Class::DuplicateParam => Rule::DistinctParams,
            Class::EntryWithPredecessor | Class::EntryNotFirst => Rule::EntryBlock,
            Class::BlockListedTwice | Class::InstLinkedTwice => Rule::LinkedOnce,
            Class::GuardOutsideTrace => Rule::GuardInTrace,
            Class::ResumeUnavailable => Rule::ResumeAvailable,
            Class::ResumeShape => Rule::ResumeShape,
            Class::OpForm => Rule::OpForm,
        })
    }
}

/// IR to mutate: a valid module and where it comes from.
#[derive(Clone, Debug)]
pub struct Subject {
    pub module: Module,
    /// `front end`, `after <pass>`, `trace` or `bridge`.
    pub origin: String,
    /// The function mutations go to (the trace, for traces); any function
    /// of the module, chosen per mutant, when `None`.
    pub focus: Option<usize>,
}

/// What [`mutate`] made.
pub enum Mutant {
    /// A module to check.
    Module(Module),
    /// A text to parse ([`Class::MissingTerminator`]).
    Text(String),
}

/// Applies class `c` to the focus function of `s` (or, for module-level
/// classes, to the module); `None` when `s` has nothing the class can break.
pub fn mutate(c: Class, s: &Subject, rng: &mut Rng) -> Option<Mutant> {
    let mut m = s.module.clone();
    let focus = s.focus.unwrap_or_else(|| rng.below(m.functions.len()));
    if c == Class::MissingTerminator {
        return missing_terminator(&m.functions[focus], rng).map(Mutant::Text);
    }
    if c == Class::DuplicateFunction {
        let fs: Vec<usize> =
            (0..m.functions.len()).filter(|&k| m.functions[k].kind == FunctionKind::Function).collect();
        let &k = pick(rng, &fs)?;
        let mut copy = m.functions[k].clone();
        copy.name = m.functions[k].name;
        m.functions.push(copy);
        return Some(Mutant::Module(m));
    }
    let callees: Vec<(Symbol, usize)> =
        m.functions.iter().filter(|f| f.kind == FunctionKind::Function).map(|f| (f.name, f.params.len())).collect();
    let f = &mut m.functions[focus];
    let ok = match c {
        Class::UseNotDominated => use_not_dominated(f, rng),
        Class::PhiInputUnavailable => phi_input_unavailable(f, rng),
        Class::UndefinedValue => undefined_value(f, rng),
        Class::DanglingValue => replace_some_operand(f, rng, |f, rng| Operand::Value(outside_value(f, rng))),
        Class::DefinedTwice => defined_twice(f, rng),
        Class::ParamRedefined => {
            let p = pick(rng, &f.params).copied();
            let is = result_insts(f);
            match (p, pick(rng, &is)) {
                (Some(p), Some(&i)) => {
                    f.insts[i].result = Some(p);
                    true
                }
                _ => false,
            }
        }
        Class::ResultMissing => {
            let is = result_insts(f);
            pick(rng, &is).map(|&i| f.insts[i].result = None).is_some()
        }
        Class::ResultOnEffect => result_on_effect(f, rng),
        Class::RecordWrong => record_wrong(f, rng),
        Class::PhiInputMissing => phi_inputs(f, rng, |inputs, _, rng| {
            if inputs.is_empty() {
                return false;
            }
            let k = rng.below(inputs.len());
            inputs.remove(k);
            true
        }),
        Class::PhiInputFromNonPredecessor => phi_input_from_non_predecessor(f, rng),
        Class::PhiInputDuplicated => phi_inputs(f, rng, |inputs, _, rng| {
            if inputs.is_empty() {
                return false;
            }
            let k = rng.below(inputs.len());
            let dup = inputs[k].clone();
            inputs.insert(rng.below(inputs.len() + 1), dup);
            true
        }),
        Class::PhiOutOfPlace => phi_out_of_place(f, rng),
        Class::DanglingBlock => dangling_block(f, rng),
        Class::DanglingResume => dangling_resume(f, rng),
        Class::DanglingVirtual => dangling_virtual(f, rng),
        Class::CallUnknownFunction => {
            let name = Symbol::intern("no_such_function");
            insert_inst(f, rng, InstKind::Call { func: name, args: Default::default() }, true);
            true
        }
        Class::CallArity => call_arity(f, rng, &callees),
        Class::DuplicateParam => match pick(rng, &f.params).copied() {
            Some(p) => {
                let at = rng.below(f.params.len() + 1);
                f.params.insert(at, p);
                true
            }
            None => false,
        },
        Class::EntryWithPredecessor => {
            let &b = pick(rng, &f.layout)?;
            f.blocks[b].term = Terminator::Jump(f.entry);
            true
        }
        Class::EntryNotFirst => {
            if f.layout.len() < 2 {
                false
            } else {
                let k = 1 + rng.below(f.layout.len() - 1);
                f.layout.swap(0, k);
                true
            }
        }
        Class::BlockListedTwice => {
            let &b = pick(rng, &f.layout)?;
            let at = rng.below(f.layout.len() + 1);
            f.layout.insert(at, b);
            true
        }
        Class::InstLinkedTwice => inst_linked_twice(f, rng),
        Class::GuardOutsideTrace => guard_outside_trace(f, rng),
        Class::ResumeUnavailable => resume_unavailable(f, rng),
        Class::ResumeShape => resume_shape(f, rng),
        Class::OpForm => op_form(f, rng),
        Class::MissingTerminator | Class::DuplicateFunction => unreachable!("handled above"),
    };
    ok.then_some(Mutant::Module(m))
}

fn pick<'a, T>(rng: &mut Rng, items: &'a [T]) -> Option<&'a T> {
    (!items.is_empty()).then(|| rng.pick(items))
}

fn idx<T>(n: usize) -> la_arena::Idx<T> {
    la_arena::Idx::from_raw(la_arena::RawIdx::from_u32(n as u32))
}

fn outside_value(f: &Function, rng: &mut Rng) -> ValueId {
    idx(f.values.len() + rng.below(3))
}

/// A fresh value that nothing defines.
fn detached_value(f: &mut Function) -> ValueId {
    f.values.alloc(ValueData { def: ValueDef::Detached, name: None })
}

/// Linked instructions with a result.
fn result_insts(f: &Function) -> Vec<InstId> {
    f.all_insts().filter(|&(_, i)| f.insts[i].result.is_some()).map(|(_, i)| i).collect()
}

/// Where a use sits: an instruction operand or a terminator operand.
#[derive(Copy, Clone)]
enum UseSite {
    Inst { block: BlockId, pos: usize, inst: InstId, k: usize },
    Term { block: BlockId, pos: usize, k: usize },
}

/// Every operand of a non-phi instruction or terminator in a linked block.
fn use_sites(f: &Function) -> Vec<UseSite> {
    let mut out = Vec::new();
    for &b in &f.layout {
        let data = &f.blocks[b];
        let phis = data.phis.len();
        for (n, &i) in data.insts.iter().enumerate() {
            for k in 0..f.insts[i].kind.operands().count() {
                out.push(UseSite::Inst { block: b, pos: phis + n, inst: i, k });
            }
        }
        for k in 0..data.term.operands().count() {
            out.push(UseSite::Term { block: b, pos: phis + data.insts.len(), k });
        }
    }
    out
}

fn set_use(f: &mut Function, site: UseSite, to: Operand) {
    match site {
        UseSite::Inst { inst, k, .. } => *f.insts[inst].kind.operands_mut().nth(k).unwrap() = to,
        UseSite::Term { block, k, .. } => *f.blocks[block].term.operands_mut().nth(k).unwrap() = to,
    }
}

/// Replaces one operand (instruction or terminator) by the one `to`
/// makes; when the function has no operand at all, inserts a `check_bound`
/// to hold it first (so `to` sees the values the insertion made: an id
/// "outside the arena" is outside it after the insertion, not the new
/// instruction's own result).
fn replace_some_operand(f: &mut Function, rng: &mut Rng, to: impl FnOnce(&mut Function, &mut Rng) -> Operand) -> bool {
    let sites = use_sites(f);
    let site = match pick(rng, &sites) {
        Some(&site) => site,
        None => {
            let i = insert_inst(f, rng, InstKind::CheckBound(Operand::int(0)), true);
            let block = *f.layout.iter().find(|&&b| f.blocks[b].insts.contains(&i)).expect("just inserted");
            UseSite::Inst { block, pos: 0, inst: i, k: 0 }
        }
    };
    let o = to(f, rng);
    set_use(f, site, o);
    true
}

/// Where each linked instruction with a result is: (value, block, position).
fn definitions(f: &Function) -> Vec<(ValueId, BlockId, usize)> {
    let mut out = Vec::new();
    for &b in &f.layout {
        for (pos, i) in f.block_insts(b).enumerate() {
            if let Some(v) = f.insts[i].result {
                out.push((v, b, pos));
            }
        }
    }
    out
}

fn use_not_dominated(f: &mut Function, rng: &mut Rng) -> bool {
    let cfg = Cfg::new(f);
    let dom = DomTree::new(f, &cfg);
    let defs = definitions(f);
    let sites: Vec<UseSite> = use_sites(f)
        .into_iter()
        .filter(|s| match *s {
            UseSite::Inst { block, .. } | UseSite::Term { block, .. } => cfg.is_reachable(block),
        })
        .collect();
    let Some(&site) = pick(rng, &sites) else { return false };
    let (UseSite::Inst { block, pos, .. } | UseSite::Term { block, pos, .. }) = site;
    let bad: Vec<ValueId> = defs
        .iter()
        .filter(|(_, b, p)| if *b == block { *p >= pos } else { !dom.dominates(*b, block) })
        .map(|(v, _, _)| *v)
        .collect();
    let Some(&v) = pick(rng, &bad) else { return false };
    set_use(f, site, Operand::Value(v));
    true
}

fn phi_input_unavailable(f: &mut Function, rng: &mut Rng) -> bool {
    let cfg = Cfg::new(f);
    let dom = DomTree::new(f, &cfg);
    let defs = definitions(f);
    // (phi, input index, predecessor) for inputs from reachable predecessors.
    let mut inputs = Vec::new();
    for &b in &f.layout {
        for &i in &f.blocks[b].phis {
            if let InstKind::Phi(ins) = &f.insts[i].kind {
                for (k, (p, _)) in ins.iter().enumerate() {
                    if cfg.is_reachable(*p) {
                        inputs.push((i, k, *p));
                    }
                }
            }
        }
    }
    let Some(&(phi, k, pred)) = pick(rng, &inputs) else { return false };
    let bad: Vec<ValueId> = defs.iter().filter(|(_, b, _)| !dom.dominates(*b, pred)).map(|(v, _, _)| *v).collect();
    let Some(&v) = pick(rng, &bad) else { return false };
    if let InstKind::Phi(ins) = &mut f.insts[phi].kind {
        ins[k].1 = Operand::Value(v);
    }
    true
}

fn undefined_value(f: &mut Function, rng: &mut Rng) -> bool {
    // Either a fresh detached value, or the result of a definition that is
    // then unlinked (not the user itself, which would take the use along).
    let sites = use_sites(f);
    let defs = definitions(f);
    let (Some(&site), Some(&(v, b, _))) = (pick(rng, &sites), pick(rng, &defs)) else {
        return undefined_value_fresh(f, rng);
    };
    let user_is_def = matches!(site, UseSite::Inst { inst, .. } if f.insts[inst].result == Some(v));
    if user_is_def || rng.chance(50) {
        return undefined_value_fresh(f, rng);
    }
    set_use(f, site, Operand::Value(v));
    let ValueDef::Inst(def) = f.values[v].def else { return true };
    let data = &mut f.blocks[b];
    data.phis.retain(|i| *i != def);
    data.insts.retain(|i| *i != def);
    true
}

fn undefined_value_fresh(f: &mut Function, rng: &mut Rng) -> bool {
    replace_some_operand(f, rng, |f, _| Operand::Value(detached_value(f)))
}

fn defined_twice(f: &mut Function, rng: &mut Rng) -> bool {
    let is = result_insts(f);
    if is.len() < 2 {
        return false;
    }
    let a = rng.below(is.len());
    let mut b = rng.below(is.len() - 1);
    if b >= a {
        b += 1;
    }
    f.insts[is[b]].result = f.insts[is[a]].result;
    true
}

fn result_on_effect(f: &mut Function, rng: &mut Rng) -> bool {
    let effects: Vec<InstId> = f.all_insts().filter(|&(_, i)| !f.insts[i].kind.has_result()).map(|(_, i)| i).collect();
    let v = detached_value(f);
    match pick(rng, &effects) {
        Some(&i) => f.insts[i].result = Some(v),
        None => {
            let kind = InstKind::set(Operand::int(0), Symbol::intern("f"), Operand::int(1));
            let i = insert_inst(f, rng, kind, false);
            f.insts[i].result = Some(v);
        }
    }
    true
}

fn record_wrong(f: &mut Function, rng: &mut Rng) -> bool {
    let defined: Vec<ValueId> =
        f.params.iter().copied().chain(f.all_insts().filter_map(|(_, i)| f.insts[i].result)).collect();
    let Some(&v) = pick(rng, &defined) else { return false };
    let wrong = match rng.below(3) {
        0 => ValueDef::Detached,
        1 => ValueDef::Param(f.params.len() as u32 + rng.below(2) as u32),
        _ => {
            // Another linked instruction, or a parameter slot of another value.
            let others: Vec<InstId> =
                f.all_insts().filter(|&(_, i)| f.insts[i].result != Some(v)).map(|(_, i)| i).collect();
            match pick(rng, &others) {
                Some(&i) => ValueDef::Inst(i),
                None => ValueDef::Detached,
            }
        }
    };
    if f.values[v].def == wrong {
        return false;
    }
    f.values[v].def = wrong;
    true
}

/// Applies `edit` to the inputs of a random phi; `false` without phis.
fn phi_inputs(
    f: &mut Function,
    rng: &mut Rng,
    edit: impl FnOnce(&mut Vec<(BlockId, Operand)>, BlockId, &mut Rng) -> bool,
) -> bool {
    let phis: Vec<(BlockId, InstId)> =
        f.layout.iter().flat_map(|&b| f.blocks[b].phis.iter().map(move |&i| (b, i))).collect();
    let Some(&(b, i)) = pick(rng, &phis) else { return false };
    let InstKind::Phi(inputs) = &mut f.insts[i].kind else { return false };
    let mut v = inputs.to_vec();
    let ok = edit(&mut v, b, rng);
    *inputs = v.into_iter().collect();
    ok
}

fn phi_input_from_non_predecessor(f: &mut Function, rng: &mut Rng) -> bool {
    let cfg = Cfg::new(f);
    let layout = f.layout.clone();
    phi_inputs(f, rng, |inputs, b, rng| {
        let others: Vec<BlockId> = layout.iter().copied().filter(|x| !cfg.preds(b).contains(x)).collect();
        let Some(&o) = pick(rng, &others) else { return false };
        inputs.insert(rng.below(inputs.len() + 1), (o, Operand::int(7)));
        true
    })
}

fn phi_out_of_place(f: &mut Function, rng: &mut Rng) -> bool {
    let with_phis: Vec<BlockId> = f.layout.iter().copied().filter(|&b| !f.blocks[b].phis.is_empty()).collect();
    if !with_phis.is_empty() && rng.chance(50) {
        let b = *rng.pick(&with_phis);
        let data = &mut f.blocks[b];
        let k = rng.below(data.phis.len());
        let phi = data.phis.remove(k);
        let at = rng.below(data.insts.len() + 1);
        data.insts.insert(at, phi);
        return true;
    }
    let with_insts: Vec<BlockId> = f.layout.iter().copied().filter(|&b| !f.blocks[b].insts.is_empty()).collect();
    if let Some(&b) = pick(rng, &with_insts) {
        let data = &mut f.blocks[b];
        let k = rng.below(data.insts.len());
        let i = data.insts.remove(k);
        let at = rng.below(data.phis.len() + 1);
        data.phis.insert(at, i);
        return true;
    }
    // Neither: add a non-phi to the phis.
    let &b = rng.pick(&f.layout);
    let v = f.values.alloc(ValueData { def: ValueDef::Detached, name: None });
    let i = f.insts.alloc(InstData { kind: InstKind::New(Symbol::intern("c")), result: Some(v) });
    f.values[v].def = ValueDef::Inst(i);
    f.blocks[b].phis.push(i);
    true
}

fn missing_terminator(f: &Function, rng: &mut Rng) -> Option<String> {
    let text = flowc_ir::print::module(&Module { functions: vec![f.clone()], ..Module::default() });
    let lines: Vec<&str> = text.lines().collect();
    // A terminator line is the last line of a block: followed by a block
    // header, `resume` or the closing brace.
    let is_header = |l: &str| !l.starts_with(' ') && !l.is_empty();
    let terms: Vec<usize> = (1..lines.len())
        .filter(|&k| {
            lines[k].starts_with("    ") && lines.get(k + 1).is_some_and(|n| is_header(n) || n.starts_with("resume"))
        })
        .filter(|&k| !lines[k].starts_with("    frame") && !lines[k].starts_with("    virtual"))
        .collect();
    let &k = pick(rng, &terms)?;
    let mut out = String::new();
    for (n, l) in lines.iter().enumerate() {
        if n != k {
            out.push_str(l);
            out.push('\n');
        }
    }
    Some(out)
}

fn dangling_block(f: &mut Function, rng: &mut Rng) -> bool {
    let outside: BlockId = idx(f.blocks.len() + rng.below(3));
    let with_succs: Vec<BlockId> =
        f.layout.iter().copied().filter(|&b| !f.blocks[b].term.successors().is_empty()).collect();
    match (rng.below(3), pick(rng, &with_succs)) {
        // A successor outside the arena.
        (0, Some(&b)) => {
            let succs = f.blocks[b].term.successors_mut();
            let n = succs.len();
            let k = rng.below(n);
            *succs.into_iter().nth(k).unwrap() = outside;
        }
        // A successor block taken out of the layout.
        (1, Some(&b)) => {
            let succs = f.blocks[b].term.successors();
            let s = succs[rng.below(succs.len())];
            // The entry stays (its own rule), and `b` must stay to refer to `s`.
            if s == f.entry || s == b {
                f.blocks[b].term = Terminator::Jump(outside);
            } else {
                f.layout.retain(|&x| x != s);
            }
        }
        // Any block jumping outside the arena.
        _ => {
            let &b = rng.pick(&f.layout);
            f.blocks[b].term = Terminator::Jump(outside);
        }
    }
    true
}

/// Guards and exits: (block, guard instruction or `None` for the exit).
fn resume_users(f: &Function) -> Vec<(BlockId, Option<InstId>, ResumeId)> {
    let mut out = Vec::new();
    for &b in &f.layout {
        for i in f.block_insts(b) {
            if let InstKind::Guard { resume, .. } = &f.insts[i].kind {
                out.push((b, Some(i), *resume));
            }
        }
        if let Some(r) = f.blocks[b].term.resume() {
            out.push((b, None, r));
        }
    }
    out
}

fn set_resume(f: &mut Function, b: BlockId, guard: Option<InstId>, to: ResumeId) {
    match guard {
        Some(i) => {
            if let InstKind::Guard { resume, .. } = &mut f.insts[i].kind {
                *resume = to;
            }
        }
        None => {
            if let Terminator::Exit { resume, .. } = &mut f.blocks[b].term {
                *resume = to;
            }
        }
    }
}

fn dangling_resume(f: &mut Function, rng: &mut Rng) -> bool {
    let users = resume_users(f);
    let Some(&(b, g, _)) = pick(rng, &users) else { return false };
    let outside: ResumeId = idx(f.resumes.len() + rng.below(3));
    set_resume(f, b, g, outside);
    true
}

fn dangling_virtual(f: &mut Function, rng: &mut Rng) -> bool {
    let users = resume_users(f);
    let Some(&(_, _, r)) = pick(rng, &users) else { return false };
    let data = &mut f.resumes[r];
    let bad = ResumeValue::Virtual((data.virtuals.len() + rng.below(3)) as u32);
    let slots: Vec<(usize, usize)> =
        data.frames.iter().enumerate().flat_map(|(k, fr)| (0..fr.env.len()).map(move |n| (k, n))).collect();
    match pick(rng, &slots) {
        Some(&(k, n)) => data.frames[k].env[n].1 = bad,
        None => match data.frames.last_mut() {
            Some(fr) => fr.env.push((Symbol::intern("dangling"), bad)),
            None => return false,
        },
    }
    true
}

fn call_arity(f: &mut Function, rng: &mut Rng, callees: &[(Symbol, usize)]) -> bool {
    let Some(&(name, arity)) = pick(rng, callees) else { return false };
    let n = if arity == 0 || rng.chance(50) { arity + 1 } else { arity - 1 };
    let args = (0..n).map(|k| Operand::int(k as i64)).collect();
    insert_inst(f, rng, InstKind::Call { func: name, args }, true);
    true
}

fn inst_linked_twice(f: &mut Function, rng: &mut Rng) -> bool {
    let linked: Vec<(BlockId, InstId)> = f.all_insts().collect();
    let Some(&(_, i)) = pick(rng, &linked) else { return false };
    let &b = rng.pick(&f.layout);
    let data = &mut f.blocks[b];
    if matches!(f.insts[i].kind, InstKind::Phi(_)) {
        let at = rng.below(data.phis.len() + 1);
        data.phis.insert(at, i);
    } else {
        let at = rng.below(data.insts.len() + 1);
        data.insts.insert(at, i);
    }
    true
}

fn guard_outside_trace(f: &mut Function, rng: &mut Rng) -> bool {
    if f.kind == FunctionKind::Trace {
        return false;
    }
    let frame = ResumeFrame { function: None, env: Vec::new(), call: None };
    let r = f.resumes.alloc(ResumeData { frames: vec![frame], virtuals: Vec::new() });
    let label = Symbol::intern("l");
    if rng.chance(40) {
        let kind = InstKind::Guard { kind: GuardKind::True(Operand::int(1)), resume: r, label };
        insert_inst(f, rng, kind, false);
    } else if rng.chance(35) {
        // A trace's count of skipped loop iterations.
        insert_inst(f, rng, InstKind::Iterations(Operand::int(1)), false);
    } else {
        let &b = rng.pick(&f.layout);
        f.blocks[b].term = Terminator::Exit { resume: r, label };
    }
    true
}

fn resume_unavailable(f: &mut Function, rng: &mut Rng) -> bool {
    let users = resume_users(f);
    let Some(&(b, g, r)) = pick(rng, &users) else { return false };
    let cfg = Cfg::new(f);
    let dom = DomTree::new(f, &cfg);
    if !cfg.is_reachable(b) {
        return false;
    }
    let pos = match g {
        Some(i) => f.block_insts(b).position(|x| x == i).unwrap(),
        None => f.block_insts(b).count(),
    };
    let bad: Vec<ValueId> = definitions(f)
        .iter()
        .filter(|(_, d, p)| if *d == b { *p >= pos } else { !dom.dominates(*d, b) })
        .map(|(v, _, _)| *v)
        .collect();
    let v = match pick(rng, &bad) {
        Some(&v) if rng.chance(70) => v,
        _ => detached_value(f),
    };
    // A private copy of the record, so the guard at hand is the one the
    // value is unavailable at.
    let mut data = f.resumes[r].clone();
    let slots: Vec<(usize, usize)> =
        data.frames.iter().enumerate().flat_map(|(k, fr)| (0..fr.env.len()).map(move |n| (k, n))).collect();
    match pick(rng, &slots) {
        Some(&(k, n)) => data.frames[k].env[n].1 = ResumeValue::Operand(Operand::Value(v)),
        None => match data.frames.last_mut() {
            Some(fr) => fr.env.push((Symbol::intern("unavailable"), ResumeValue::Operand(Operand::Value(v)))),
            None => return false,
        },
    }
    let copy = f.resumes.alloc(data);
    set_resume(f, b, g, copy);
    true
}

fn resume_shape(f: &mut Function, rng: &mut Rng) -> bool {
    let users = resume_users(f);
    let Some(&(_, _, r)) = pick(rng, &users) else { return false };
    let data = &mut f.resumes[r];
    let n = data.frames.len();
    match rng.below(3) {
        0 if n > 1 => data.frames[rng.below(n - 1)].call = None,
        1 if n > 0 => {
            let call = (Symbol::intern("r"), Symbol::intern("l"));
            data.frames[n - 1].call = Some(call);
        }
        _ => data.frames.clear(),
    }
    true
}

fn op_form(f: &mut Function, rng: &mut Rng) -> bool {
    let ops: Vec<InstId> = f
        .all_insts()
        .filter(|&(_, i)| matches!(f.insts[i].kind, InstKind::Op { op: Operator::Known(_), .. }))
        .map(|(_, i)| i)
        .collect();
    let i = match pick(rng, &ops) {
        Some(&i) => i,
        None => {
            let args = [Operand::int(1), Operand::int(2)].into_iter().collect();
            insert_inst(f, rng, InstKind::Op { op: Operator::Known(Op::Add), form: Form::Generic, args }, true)
        }
    };
    let InstKind::Op { op: Operator::Known(op), form, args } = &mut f.insts[i].kind else { unreachable!() };
    let op = *op;
    let missing: Vec<Form> =
        [Form::Generic, Form::Int, Form::Word].into_iter().filter(|x| !op.info().forms.contains(x)).collect();
    match rng.below(3) {
        // A form the operation does not have.
        0 if !missing.is_empty() => *form = *rng.pick(&missing),
        // The wrong operand count.
        1 => {
            if args.len() > 1 && rng.chance(50) {
                args.pop();
            } else {
                args.push(Operand::int(3));
            }
        }
        // Equality by words of two lists (neither an atom, an object nor
        // a small integer, which alone compare so).
        _ if matches!(op, Op::Eq | Op::Ne) => {
            *form = Form::Word;
            let list = || Operand::Const(Value::list(vec![Value::Int(1)]));
            *args = [list(), list()].into_iter().collect();
        }
        // A constant the form does not admit: an atom where integers or a
        // list are taken, in a specialized form.
        _ => {
            let specialized: Vec<Form> = op.info().forms.iter().copied().filter(|x| *x != Form::Generic).collect();
            match pick(rng, &specialized) {
                Some(&x) => {
                    *form = x;
                    let k = rng.below(args.len());
                    args[k] = Operand::Const(Value::Atom(Symbol::intern("foo")));
                }
                None => *form = *rng.pick(&missing),
            }
        }
    }
    true
}

/// Inserts an instruction (with a fresh result if `result` and the kind
/// defines one) at a random place among the ordinary instructions of a
/// random block; returns it.
fn insert_inst(f: &mut Function, rng: &mut Rng, kind: InstKind, result: bool) -> InstId {
    let has = result && kind.has_result();
    let i = f.insts.alloc(InstData { kind, result: None });
    if has {
        let v = f.values.alloc(ValueData { def: ValueDef::Inst(i), name: None });
        f.insts[i].result = Some(v);
    }
    let &b = rng.pick(&f.layout);
    let data = &mut f.blocks[b];
    let at = rng.below(data.insts.len() + 1);
    data.insts.insert(at, i);
    i
}

/// Whether the checker (or the parser, for text) rejects `mutant` as
/// `expected` says; `Err` with what it said otherwise.
pub fn judge(mutant: &Mutant, expected: Expected) -> Result<(), String> {
    match (mutant, expected) {
        (Mutant::Text(text), Expected::ParseError(what)) => match flowc_ir::parse::module("mutant.ir", text) {
            Err(e) if e.to_string().contains(what) => Ok(()),
            Err(e) => Err(format!("parse error without `{what}`: {e}")),
            Ok(_) => Err("parsed".to_owned()),
        },
        (Mutant::Module(m), Expected::Rule(rule)) => match flowc_ir_checker::check_module(m) {
            Ok(()) => Err("accepted".to_owned()),
            Err(vs) if vs.iter().any(|v| v.rule == rule) => Ok(()),
            Err(vs) => Err(vs.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("\n")),
        },
        _ => Err("mutant and expectation do not match".to_owned()),
    }
}
