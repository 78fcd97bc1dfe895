//! A recorded trace as SSA IR (DESIGN.md "Traces"): one loop whose
//! loop-carried variables are phis, so nothing like Part 3's "superfluous
//! assignments" is needed before `loop`.
//!
//! Shape: block `b0` (the preheader) holds nothing but the `unbound` values
//! of variables the trace creates; it jumps to `b1`, the loop, which holds
//! one phi per variable the main frame writes, the trace's operations in
//! order, and a jump back to itself. Parameters are the variables of the
//! environment the trace starts with, in its order.
//!
//! Guards carry resume data: for each frame from the main graph inwards,
//! its variables in the interpreter's order (the start environment, then
//! new variables in the order the trace first writes them; a variable not
//! yet written in the first iteration is unbound there and is not
//! restored) and, for callers, the pending call. Calls the trace followed
//! leave no call instruction: their operations are inlined, in a frame of
//! their own.

use indexmap::IndexMap;

use flowc_ir::{
    BlockId, Builder, Function, FunctionKind, GuardKind, InstKind, Operand, ResumeData, ResumeFrame, ResumeValue,
    Terminator, ValueId,
};
use flowc_lang::ast::{Arg, Operator};
use flowc_lang::{Env, Program, Symbol};

use crate::trace::{Check, Trace, TraceOp};

/// One frame's variables while converting.
struct Frame {
    function: Option<Symbol>,
    vars: IndexMap<Symbol, Operand>,
    call: Option<(Symbol, Symbol)>,
}

impl Frame {
    fn read(&self, a: &Arg) -> Operand {
        match a {
            Arg::Var(v) => self.vars.get(v).cloned().unwrap_or_else(|| panic!("the trace reads {v} after writing it")),
            Arg::Const(c) => Operand::Const(c.clone()),
        }
    }

    fn write(&mut self, var: Symbol, value: Operand) {
        self.vars.insert(var, value);
    }
}

/// Variables the main frame writes, in the order of their first write.
fn main_writes(trace: &Trace) -> Vec<Symbol> {
    let mut depth = 0usize;
    let mut out: Vec<Symbol> = Vec::new();
    for op in &trace.ops {
        let dst = match op {
            TraceOp::Enter { .. } => {
                depth += 1;
                None
            }
            TraceOp::Leave { .. } => {
                depth -= 1;
                // The result lands in the caller.
                None
            }
            TraceOp::Op1 { dst, .. }
            | TraceOp::Op2 { dst, .. }
            | TraceOp::New { dst, .. }
            | TraceOp::Get { dst, .. } => Some(*dst),
            TraceOp::Set { .. } | TraceOp::Guard { .. } => None,
        };
        if let Some(d) = dst.filter(|_| depth == 0) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    // Results of calls made from the main frame are main-frame writes too.
    let mut depth = 0usize;
    for op in &trace.ops {
        match op {
            TraceOp::Enter { dst, .. } => {
                if depth == 0 && !out.contains(dst) {
                    out.push(*dst);
                }
                depth += 1;
            }
            TraceOp::Leave { .. } => depth -= 1,
            _ => {}
        }
    }
    out
}

/// Converts `trace` of `program`, recorded from an environment with the
/// variables `start` (in order), into a trace function. Calls of `pure`
/// functions stay calls (their recorded operations are skipped): the
/// optimizer folds them when their arguments are constants, and nothing
/// inside them needs guarding.
pub fn to_ir(program: &Program, trace: &Trace, start: &Env) -> Function {
    let mut b = Builder::new(FunctionKind::Trace, trace.anchor);
    let pre = b.entry();
    let body = b.block(Some(trace.anchor));
    let mut main = Frame { function: None, vars: IndexMap::new(), call: None };
    for (name, _) in start {
        let p = b.param(Some(*name));
        main.write(*name, Operand::Value(p));
    }
    // Loop-carried variables get phis; new ones start unbound.
    let mut phis: Vec<(Symbol, ValueId)> = Vec::new();
    for var in main_writes(trace) {
        let entry = match main.vars.get(&var) {
            Some(o) => o.clone(),
            None => Operand::Value(b.inst(pre, InstKind::Unbound(var), Some(var)).expect("unbound has a result")),
        };
        let phi = b.phi(body, vec![(pre, entry)], Some(var));
        main.write(var, Operand::Value(phi));
        phis.push((var, phi));
    }
    b.terminate(pre, Terminator::Jump(body));
    let mut frames = vec![main];
    let mut skipping = 0usize;
    for (k, op) in trace.ops.iter().enumerate() {
        let before = b.func.blocks[body].insts.len();
        match op {
            _ if skipping > 0 => match op {
                TraceOp::Enter { .. } => skipping += 1,
                TraceOp::Leave { .. } => skipping -= 1,
                _ => {}
            },
            TraceOp::Enter { dst, func, args, .. } if program.is_pure(*func) => {
                let top = frames.len() - 1;
                let args = args.iter().map(|a| frames[top].read(a)).collect();
                let v = b.inst(body, InstKind::Call { func: *func, args }, Some(*dst)).unwrap();
                frames[top].write(*dst, Operand::Value(v));
                skipping = 1;
            }
            _ => emit(program, &mut b, body, &mut frames, op),
        }
        if let Some(&site) = trace.sites.get(k) {
            for n in before..b.func.blocks[body].insts.len() {
                let i = b.func.blocks[body].insts[n];
                b.func.sites.set_inst(i, site);
            }
        }
    }
    let main = &frames[0];
    for (var, phi) in phis {
        let end = main.vars[&var].clone();
        let ValueDefInst(i) = def_inst(&b, phi);
        if let InstKind::Phi(inputs) = &mut b.func.insts[i].kind {
            inputs.push((body, end));
        }
    }
    b.terminate(body, Terminator::Jump(body));
    b.finish()
}

/// Converts a bridge — `trace`, recorded from the environment `start`
/// (its variables become the parameters) until control reached main-graph
/// label `end` — into straight-line trace code: one block with the
/// operations and guards, ending with an exit to `end` whose record holds
/// the main frame's variables.
pub fn bridge(program: &Program, trace: &Trace, start: &Env, end: Symbol) -> Function {
    let mut b = Builder::new(FunctionKind::Trace, trace.anchor);
    let body = b.entry();
    let mut main = Frame { function: None, vars: IndexMap::new(), call: None };
    for (name, _) in start {
        let p = b.param(Some(*name));
        main.write(*name, Operand::Value(p));
    }
    let mut frames = vec![main];
    let mut skipping = 0usize;
    for (k, op) in trace.ops.iter().enumerate() {
        let before = b.func.blocks[body].insts.len();
        match op {
            _ if skipping > 0 => match op {
                TraceOp::Enter { .. } => skipping += 1,
                TraceOp::Leave { .. } => skipping -= 1,
                _ => {}
            },
            TraceOp::Enter { dst, func, args, .. } if program.is_pure(*func) => {
                let top = frames.len() - 1;
                let args = args.iter().map(|a| frames[top].read(a)).collect();
                let v = b.inst(body, InstKind::Call { func: *func, args }, Some(*dst)).unwrap();
                frames[top].write(*dst, Operand::Value(v));
                skipping = 1;
            }
            _ => emit(program, &mut b, body, &mut frames, op),
        }
        if let Some(&site) = trace.sites.get(k) {
            for n in before..b.func.blocks[body].insts.len() {
                let i = b.func.blocks[body].insts[n];
                b.func.sites.set_inst(i, site);
            }
        }
    }
    let resume = b.resume(snapshot(&frames));
    b.terminate(body, Terminator::Exit { resume, label: end });
    b.finish()
}

struct ValueDefInst(flowc_ir::InstId);

fn def_inst(b: &Builder, v: ValueId) -> ValueDefInst {
    match b.func.values[v].def {
        flowc_ir::ValueDef::Inst(i) => ValueDefInst(i),
        _ => unreachable!("phis are instructions"),
    }
}

fn emit(program: &Program, b: &mut Builder, body: BlockId, frames: &mut Vec<Frame>, op: &TraceOp) {
    let top = frames.len() - 1;
    match op {
        TraceOp::Op1 { dst, op: Operator::Known(flowc_lang::ops::Op::Same), arg } => {
            let o = frames[top].read(arg);
            frames[top].write(*dst, o);
        }
        TraceOp::Op1 { dst, op, arg } => {
            let args = flowc_ir::Args::from_iter([frames[top].read(arg)]);
            let v = b.inst(body, InstKind::generic_op(*op, args), Some(*dst)).unwrap();
            frames[top].write(*dst, Operand::Value(v));
        }
        TraceOp::Op2 { dst, op, lhs, rhs } => {
            let args = [frames[top].read(lhs), frames[top].read(rhs)];
            let v = b.inst(body, InstKind::generic_op(*op, args), Some(*dst)).unwrap();
            frames[top].write(*dst, Operand::Value(v));
        }
        TraceOp::New { dst, class } => {
            let v = b.inst(body, InstKind::New(*class), Some(*dst)).unwrap();
            frames[top].write(*dst, Operand::Value(v));
        }
        TraceOp::Get { dst, obj, field } => {
            let obj = frames[top].read(obj);
            let v = b.inst(body, InstKind::Get { obj, field: *field }, Some(*dst)).unwrap();
            frames[top].write(*dst, Operand::Value(v));
        }
        TraceOp::Set { obj, field, value } => {
            let (obj, value) = (frames[top].read(obj), frames[top].read(value));
            b.inst(body, InstKind::Set { obj, field: *field, value }, None);
        }
        TraceOp::Guard { check, label, .. } => {
            let f = &frames[top];
            let kind = match check {
                Check::True(v) => GuardKind::True(f.read(&Arg::Var(*v))),
                Check::False(v) => GuardKind::False(f.read(&Arg::Var(*v))),
                Check::Value(v, c) => GuardKind::Value(f.read(&Arg::Var(*v)), c.clone()),
                Check::Class(a, class, true) => GuardKind::Class(f.read(a), *class),
                Check::Class(a, class, false) => GuardKind::NotClass(f.read(a), *class),
            };
            let resume = b.resume(snapshot(frames));
            b.inst(body, InstKind::Guard { kind, resume, label: *label }, None);
        }
        TraceOp::Enter { dst, func, args, next } => {
            let values: Vec<Operand> = args.iter().map(|a| frames[top].read(a)).collect();
            frames[top].call = Some((*dst, *next));
            let params = &program.function(*func).expect("the tracer found the function").params;
            let vars = params.iter().copied().zip(values).collect();
            frames.push(Frame { function: Some(*func), vars, call: None });
        }
        TraceOp::Leave { value } => {
            let v = frames[top].read(value);
            frames.pop();
            let caller = frames.last_mut().expect("a caller");
            let (dst, _) = caller.call.take().expect("the caller waits");
            caller.write(dst, v);
        }
    }
}

fn snapshot(frames: &[Frame]) -> ResumeData {
    let frames = frames
        .iter()
        .enumerate()
        .map(|(k, f)| ResumeFrame {
            function: f.function,
            env: f.vars.iter().map(|(n, o)| (*n, ResumeValue::Operand(o.clone()))).collect(),
            call: if k + 1 < frames.len() { f.call } else { None },
        })
        .collect();
    ResumeData { frames, virtuals: Vec::new() }
}
