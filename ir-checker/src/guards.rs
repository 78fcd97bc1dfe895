//! Guards, trace exits and their resume data.
//!
//! Rules:
//! - [`Rule::GuardInTrace`] (i): `guard_*` and `iterations` instructions
//!   and `exit` terminators appear only in functions of kind `trace`.
//! - [`Rule::DanglingRef`] (f): a guard's resume record exists; resume
//!   values `@k` name a virtual object of the record; resume operands exist
//!   in the value arena.
//! - [`Rule::ResumeAvailable`] (i): every value the resume data refers to
//!   (frame environments and virtual object fields) is available at the
//!   guard: defined by a parameter or a linked instruction whose definition
//!   dominates the guard's position (strictly earlier in the same block);
//!   for an `exit`, available at the end of its block.
//!   As for other uses, dominance is not required in unreachable blocks.
//! - [`Rule::ResumeShape`]: a record has at least one frame (there is
//!   something to resume); every frame but the innermost has a pending
//!   call (its callee is the next frame), and the innermost has none (it
//!   continues at the guard's label).
//!
//! A record shared by several guards is checked at each of them.

use flowc_ir::print::{block_ref, resume_ref, value_ref};
use flowc_ir::{BlockId, FunctionKind, InstKind, ResumeId, ResumeValue};

use crate::context::{Checker, Linked};
use crate::uses::{check_use, Flow, Problem, UsePoint};
use crate::violation::Rule;

/// The guard rules for one linked instruction.
pub(crate) fn check_inst(c: &mut Checker, flow: &Flow, l: Linked, kind: &InstKind) {
    if let (InstKind::Iterations(_), false) = (kind, c.f.kind == FunctionKind::Trace) {
        let msg = format!("iteration counts are only allowed in traces, not in a {}", c.f.kind.keyword());
        let at = c.at_inst(l.inst);
        c.report(Some(l.block), l.pos, at, Rule::GuardInTrace, msg);
    }
    let InstKind::Guard { resume, .. } = kind else { return };
    let messages = check_record(c, flow, *resume, l.block, l.pos, ("guards", "guard"));
    for (rule, msg) in messages {
        let at = c.at_inst(l.inst);
        c.report(Some(l.block), l.pos, at, rule, msg);
    }
}

/// The guard rules for the terminator of `b` (a block of the cleaned
/// layout): a trace exit's resume record.
pub(crate) fn check_terminator(c: &mut Checker, flow: &Flow, b: BlockId) {
    let Some(resume) = c.f.blocks[b].term.resume() else { return };
    let pos = c.term_pos(b);
    let messages = check_record(c, flow, resume, b, pos, ("trace exits", "exit"));
    for (rule, msg) in messages {
        let at = c.at_term(b);
        c.report(Some(b), pos, at, rule, msg);
    }
}

/// The violations of resume record `resume` used at position `pos` of
/// `block` by a guard or an exit (`what`: plural and singular nouns for
/// messages).
fn check_record(
    c: &Checker,
    flow: &Flow,
    resume: ResumeId,
    block: BlockId,
    pos: u32,
    what: (&str, &str),
) -> Vec<(Rule, String)> {
    let f = c.f;
    let mut messages = Vec::new();
    if f.kind != FunctionKind::Trace {
        let msg = format!("{} are only allowed in traces, not in a {}", what.0, f.kind.keyword());
        messages.push((Rule::GuardInTrace, msg));
    }
    let r = resume_ref(resume);
    if !c.has_resume(resume) {
        messages.push((Rule::DanglingRef, format!("{r} does not exist")));
        return messages;
    }
    let data = &f.resumes[resume];
    let last = data.frames.len().saturating_sub(1);
    if data.frames.is_empty() {
        messages.push((Rule::ResumeShape, format!("{r} has no frames: there is nothing to resume")));
    }
    for (k, frame) in data.frames.iter().enumerate() {
        match (k == last, frame.call.is_some()) {
            (false, false) => messages
                .push((Rule::ResumeShape, format!("frame {k} of {r} has no pending call, but an inner frame follows"))),
            (true, true) => messages.push((
                Rule::ResumeShape,
                format!("the innermost frame of {r} has a pending call, but no frame for the callee follows"),
            )),
            _ => {}
        }
    }
    let values = data
        .frames
        .iter()
        .flat_map(|fr| fr.env.iter().map(|(_, v)| v))
        .chain(data.virtuals.iter().flat_map(|o| o.fields.iter().map(|(_, v)| v)));
    for value in values {
        let v = match value {
            ResumeValue::Virtual(k) => {
                if *k as usize >= data.virtuals.len() {
                    messages.push((Rule::DanglingRef, format!("{r} refers to @{k}, which does not exist")));
                }
                continue;
            }
            ResumeValue::Operand(o) => match o.as_value() {
                Some(v) => v,
                None => continue,
            },
        };
        let val = value_ref(v);
        let problem = match check_use(c, flow, v, UsePoint::At(block, pos)) {
            Ok(()) => continue,
            Err(p) => p,
        };
        messages.push(match problem {
            Problem::Dangling => (Rule::DanglingRef, format!("{r} refers to {val}, which does not exist")),
            Problem::Undefined => (
                Rule::ResumeAvailable,
                format!("{r} refers to {val}, which no parameter or linked instruction defines"),
            ),
            Problem::NotDominated(d) => (
                Rule::ResumeAvailable,
                format!(
                    "{r} refers to {val} but its definition in {} does not dominate {}",
                    block_ref(d),
                    block_ref(block)
                ),
            ),
            Problem::Later(b) => (
                Rule::ResumeAvailable,
                format!("{r} refers to {val}, which is defined after this {} in {}", what.1, block_ref(b)),
            ),
        });
    }
    messages
}
