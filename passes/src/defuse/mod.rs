//! Pass `def-use` (Factor's "def-use chain computation"): for every value
//! of every function, where it is defined and where it is used.
//!
//! Reads: the IR only (any function kind; no earlier analysis).
//! Writes: [`DefUse`] in `cx.facts(i).defuse` for each function `i`; the IR
//! is not changed. The table describes the function as it was when the
//! pass ran: a pass that edits the IR afterwards must clear or recompute it.
//!
//! Guarantees:
//! - [`DefUse::def_of`] is [`Def::Param`] for parameters, [`Def::Inst`]
//!   (block and instruction) for results of instructions linked into a block
//!   of the layout, and [`Def::None`] for every other value (detached values,
//!   results of unlinked instructions).
//! - [`DefUse::uses_of`] lists every operand occurrence of the value in
//!   linked code, in program order: blocks in layout order; in a block its
//!   phis, its instructions (each followed by the operands of its resume
//!   record if it is a guard), then its terminator; operands left to right.
//!   A value used twice by one instruction has two uses. A phi input is a use
//!   in the phi's block, tagged with the predecessor it comes from.
//! - Linear time and space: two sweeps over the function, uses stored in
//!   one flat array indexed by raw value number (compressed rows).
//!
//! Other passes call [`DefUse::compute`] directly when they need uses and
//! the context has none. [`surely_bound`] (`flowc_ir::bound`) finds which
//! values can never be unbound, from the function alone; [`PhiUsers`]
//! (`flowc_ir::phi_users`) lists the phis that use each value. Both are
//! analyses of the IR alone and live in flowc-ir, where code generation uses
//! them too; they are re-exported here.

use flowc_ir::{BlockId, Function, InstId, InstKind, Module, Operand, ResumeId, Terminator, ValueId};

use crate::edit::ix;
use crate::Context;

pub use flowc_ir::bound::{bound_by_definition, surely_bound, BoundQuery};
pub use flowc_ir::phi_users::PhiUsers;

/// Where a value is defined.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Def {
    /// The `n`-th parameter of the function.
    Param(u32),
    /// The result of `inst`, linked into `block`.
    Inst { block: BlockId, inst: InstId },
    /// Not defined by linked code (detached, or its instruction unlinked).
    None,
}

/// One occurrence of a value as an operand.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Use {
    /// Operand number `index` of the non-phi instruction `inst` in `block`.
    Inst { block: BlockId, inst: InstId, index: u32 },
    /// The input of phi `inst` (in `block`) for the edge from `pred`.
    Phi { block: BlockId, inst: InstId, pred: BlockId },
    /// The operand of `block`'s terminator (terminators have at most one).
    Term { block: BlockId },
    /// An operand of resume record `resume`, read when guard `inst` fails.
    Resume { block: BlockId, inst: InstId, resume: ResumeId },
}

impl Use {
    /// The block the use is in (a phi input's is the phi's block).
    pub fn block(&self) -> BlockId {
        match *self {
            Use::Inst { block, .. } | Use::Phi { block, .. } | Use::Term { block } | Use::Resume { block, .. } => block,
        }
    }

    /// The using instruction, unless the use is a terminator's.
    pub fn inst(&self) -> Option<InstId> {
        match *self {
            Use::Inst { inst, .. } | Use::Phi { inst, .. } | Use::Resume { inst, .. } => Some(inst),
            Use::Term { .. } => None,
        }
    }
}

/// Definitions and uses of the values of one function.
#[derive(Clone, Debug, Default)]
pub struct DefUse {
    defs: Vec<Def>,
    /// Uses of value `v` are `uses[start[v]..start[v + 1]]`.
    start: Vec<u32>,
    uses: Vec<Use>,
}

impl DefUse {
    /// Computes the table of `f` (linear in the size of `f`).
    pub fn compute(f: &Function) -> DefUse {
        let DefUse { defs, .. } = DefUse::definitions(f);
        let n = defs.len();
        // First sweep: use counts.
        let mut count = vec![0u32; n + 1];
        visit_uses(f, |v, _| {
            if ix(v) < n {
                count[ix(v)] += 1;
            }
        });
        // Prefix sums, then the second sweep fills the rows in order.
        let mut start = vec![0u32; n + 1];
        for k in 0..n {
            start[k + 1] = start[k] + count[k];
        }
        let mut next: Vec<u32> = start[..n].to_vec();
        let placeholder = Use::Term { block: f.entry };
        let mut uses = vec![placeholder; start[n] as usize];
        visit_uses(f, |v, u| {
            if ix(v) < n {
                uses[next[ix(v)] as usize] = u;
                next[ix(v)] += 1;
            }
        });
        DefUse { defs, start, uses }
    }

    /// The definitions of `f`'s values only, without their uses (one sweep
    /// of the instructions, no use table): for a caller that asks
    /// [`DefUse::def_of`] and nothing else ([`crate::dce::function`] on a
    /// function with no allocation to remove). Asking it
    /// [`DefUse::uses_of`] is a bug.
    pub fn definitions(f: &Function) -> DefUse {
        let n = f.values.len();
        let mut defs = vec![Def::None; n];
        for (k, &p) in f.params.iter().enumerate() {
            if ix(p) < n {
                defs[ix(p)] = Def::Param(k as u32);
            }
        }
        for (b, i) in f.all_insts() {
            if let Some(v) = f.insts[i].result {
                if ix(v) < n {
                    defs[ix(v)] = Def::Inst { block: b, inst: i };
                }
            }
        }
        DefUse { defs, start: Vec::new(), uses: Vec::new() }
    }

    /// How many values the table covers (the function's value count when it
    /// was computed).
    pub fn num_values(&self) -> usize {
        self.defs.len()
    }

    /// Where `v` is defined.
    pub fn def_of(&self, v: ValueId) -> Def {
        self.defs.get(ix(v)).copied().unwrap_or(Def::None)
    }

    /// The uses of `v`, in program order.
    pub fn uses_of(&self, v: ValueId) -> &[Use] {
        debug_assert!(
            self.defs.is_empty() || !self.start.is_empty(),
            "the uses of a table of definitions only (DefUse::definitions)"
        );
        match (self.start.get(ix(v)), self.start.get(ix(v) + 1)) {
            (Some(&s), Some(&e)) => &self.uses[s as usize..e as usize],
            _ => &[],
        }
    }

    pub fn num_uses(&self, v: ValueId) -> usize {
        self.uses_of(v).len()
    }

    pub fn is_used(&self, v: ValueId) -> bool {
        !self.uses_of(v).is_empty()
    }
}

/// Calls `visit(value, use)` for every value operand of linked code, in
/// program order. Matches the kinds directly rather than through
/// `InstKind::operands` (same order) so the sweep allocates nothing.
fn visit_uses(f: &Function, mut visit: impl FnMut(ValueId, Use)) {
    for &block in &f.layout {
        let data = &f.blocks[block];
        for &inst in &data.phis {
            if let InstKind::Phi(inputs) = &f.insts[inst].kind {
                for (pred, o) in inputs {
                    if let Operand::Value(v) = o {
                        visit(*v, Use::Phi { block, inst, pred: *pred });
                    }
                }
            }
        }
        for &inst in &data.insts {
            let kind = &f.insts[inst].kind;
            let mut index = 0u32;
            let mut operand = |o: &Operand| {
                if let Operand::Value(v) = o {
                    visit(*v, Use::Inst { block, inst, index });
                }
                index += 1;
            };
            match kind {
                InstKind::Phi(inputs) => inputs.iter().for_each(|(_, o)| operand(o)),
                InstKind::Op { args, .. } | InstKind::Call { args, .. } => args.iter().for_each(operand),
                InstKind::CheckBound(o)
                | InstKind::Get { obj: o, .. }
                | InstKind::Walk { obj: o, .. }
                | InstKind::Iterations(o) => operand(o),
                InstKind::Set { obj, value, .. } => {
                    operand(obj);
                    operand(value);
                }
                InstKind::Guard { kind: guard, .. } => {
                    operand(guard.operand());
                    guard.base().into_iter().for_each(operand);
                }
                InstKind::Unbound(_) | InstKind::New(_) => {}
            }
            if let InstKind::Guard { resume, .. } = kind {
                if ix(*resume) < f.resumes.len() {
                    for o in f.resumes[*resume].operands() {
                        if let Operand::Value(v) = o {
                            visit(*v, Use::Resume { block, inst, resume: *resume });
                        }
                    }
                }
            }
        }
        match &data.term {
            Terminator::Branch { cond: o, .. }
            | Terminator::IfClass { obj: o, .. }
            | Terminator::Print(o)
            | Terminator::Return(o) => {
                if let Operand::Value(v) = o {
                    visit(*v, Use::Term { block });
                }
            }
            Terminator::Exit { resume, .. } => {
                if ix(*resume) < f.resumes.len() {
                    for o in f.resumes[*resume].operands() {
                        if let Operand::Value(v) = o {
                            visit(*v, Use::Term { block });
                        }
                    }
                }
            }
            Terminator::JumpTrace { args, .. } => {
                for o in args {
                    if let Operand::Value(v) = o {
                        visit(*v, Use::Term { block });
                    }
                }
            }
            Terminator::Jump(_) | Terminator::Trap(_) => {}
        }
    }
}

pub fn run(module: &mut Module, cx: &mut Context) {
    for (i, f) in module.functions.iter().enumerate() {
        cx.facts(i).defuse = Some(DefUse::compute(f));
    }
}

/// One line per defined value: `;   v2 (b1 phi): v4 (b1), v7 (b2 phi from b1)`.
pub fn annotate(module: &Module, cx: &Context) -> String {
    let mut out = String::new();
    for (i, f) in module.functions.iter().enumerate() {
        let Some(du) = cx.functions.get(i).and_then(|facts| facts.defuse.as_ref()) else { continue };
        out.push_str("; def-use of ");
        out.push_str(f.kind.keyword());
        out.push(' ');
        flowc_lang::syntax::readable_print::name(&mut out, f.name);
        out.push('\n');
        for k in 0..du.num_values() {
            let v: ValueId = crate::edit::id(k);
            let def = match du.def_of(v) {
                Def::Param(n) => format!("param {n}"),
                Def::Inst { block, inst } if matches!(f.insts[inst].kind, InstKind::Phi(_)) => {
                    format!("{} phi", flowc_ir::print::block_ref(block))
                }
                Def::Inst { block, .. } => flowc_ir::print::block_ref(block),
                Def::None => continue,
            };
            let uses: Vec<String> = du.uses_of(v).iter().map(|u| use_to_string(f, u)).collect();
            let uses = if uses.is_empty() { "unused".to_string() } else { uses.join(", ") };
            out.push_str(&format!(";   {} ({def}): {uses}\n", flowc_ir::print::value_ref(v)));
        }
    }
    out
}

fn use_to_string(f: &Function, u: &Use) -> String {
    use flowc_ir::print::{block_ref, resume_ref, value_ref};
    let user = |inst: InstId| match f.insts[inst].result {
        Some(r) => value_ref(r),
        None => match f.insts[inst].kind {
            InstKind::Set { .. } => "set".to_string(),
            _ => "guard".to_string(),
        },
    };
    match *u {
        Use::Inst { block, inst, .. } => format!("{} ({})", user(inst), block_ref(block)),
        Use::Phi { block, inst, pred } => format!("{} ({} phi from {})", user(inst), block_ref(block), block_ref(pred)),
        Use::Term { block } => {
            let term = flowc_ir::print::terminator_to_string(&f.blocks[block].term);
            let word = term.split(' ').next().unwrap_or("").to_string();
            format!("{word} ({})", block_ref(block))
        }
        Use::Resume { block, resume, .. } => format!("{} ({} guard)", resume_ref(resume), block_ref(block)),
    }
}
