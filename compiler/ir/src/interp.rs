//! The IR interpreter: runs a [`Module`] with the op table's semantics, so
//! every pass can be checked by running the program after it.
//!
//! Values at run time are language values or *unbound* markers (see the
//! crate docs): phis move them, every other use raises `key_not_found`.
//! Specialized forms are promises made by cleanup; the interpreter checks
//! each promise and reports a broken one as the internal error
//! `broken_form(op)`, so a wrong specialization shows up in differential
//! tests instead of silently computing something else.
//!
//! Phis of a block read their inputs for the incoming edge all before any of
//! them is written (parallel copy semantics).

use smallvec::SmallVec;

use flowc_lang::ast::Operator;
use flowc_lang::heap::Layout;
use flowc_lang::interp::objects;
use flowc_lang::interp::{Config, Counts, ErrorKind, Location, Outcome, RuntimeError};
use flowc_lang::ops::{Form, Op};
use flowc_lang::{Symbol, Value};

use crate::function::{BlockId, Function, FunctionKind, InstId, Module};
use crate::inst::{InstKind, Operand, Terminator};
use crate::ix;
use crate::print;
use crate::resume::ResumeId;

/// A value at run time.
#[derive(Clone, Debug)]
enum Rt {
    Val(Value),
    Unbound(Symbol),
}

struct Frame<'m> {
    func: &'m Function,
    values: Vec<Option<Rt>>,
    block: BlockId,
    /// The block control came from into `block`, if any.
    from: Option<BlockId>,
    /// Where the caller continues: its block, the index after the call, and
    /// the call instruction.
    ret: Option<(BlockId, usize, InstId)>,
}

/// Why execution stopped.
#[derive(Clone, Debug)]
pub enum Exit {
    /// The program printed a value.
    Printed(Value),
    /// The function run by [`call`] returned a value.
    Returned(Value),
    /// A guard failed: its resume record and label, and the values bound
    /// at that point (what the record's operands refer to).
    GuardFailed { resume: ResumeId, label: Symbol, values: Vec<(crate::ValueId, Value)> },
    /// A trace ended by jumping to trace `target` with `args` (the caller
    /// holds the traces and goes on there).
    JumpedTo { target: Symbol, args: Vec<Value> },
}

/// Runs the module's main function with the environment `env` (parameters
/// are matched by name; missing ones are unbound).
pub fn run(module: &Module, env: &[(Symbol, Value)], config: &Config) -> Result<Outcome, RuntimeError> {
    run_counted(module, env, config).0
}

/// [`run`], also returning what the run did when it ends in an error.
pub fn run_counted(
    module: &Module,
    env: &[(Symbol, Value)],
    config: &Config,
) -> (Result<Outcome, RuntimeError>, Counts) {
    let Some(main) = module.main() else {
        return (Err(internal("the module has no main function")), Counts::default());
    };
    let mut m = Machine {
        module,
        layout: std::cell::OnceCell::from(module.layout()),
        fuel: config.fuel.unwrap_or(u64::MAX),
        max_depth: config.max_depth,
        functions: std::cell::OnceCell::new(),
        steps: 0,
        allocations: 0,
    };
    let args = main
        .params
        .iter()
        .map(|&p| {
            let name = main.values[p].name.expect("main parameters are named");
            match env.iter().find(|(k, _)| *k == name) {
                Some((_, v)) => Rt::Val(v.clone()),
                None => Rt::Unbound(name),
            }
        })
        .collect();
    let result = match m.execute(main, args) {
        Ok(Exit::Printed(value)) => Ok(Outcome { value, steps: m.steps, allocations: m.allocations }),
        Ok(Exit::Returned(_)) => Err(internal("main returned")),
        Ok(Exit::GuardFailed { .. } | Exit::JumpedTo { .. }) => Err(internal("a trace exit outside a trace")),
        Err(e) => Err(e),
    };
    (result, Counts { steps: m.steps, allocations: m.allocations })
}

/// Runs trace `trace` (a function of kind `trace`, usually not in
/// `module`, which supplies the program's hints) with the values of its
/// parameters, until a guard fails: `Ok(Exit::GuardFailed)`. Objects are
/// laid out by `layout` — the program's, which the interpreter that goes
/// on after the trace uses too — and numbered from `*allocations` on; the
/// count is written back.
pub fn run_trace(
    module: &Module,
    trace: &Function,
    args: Vec<Value>,
    layout: &'static Layout,
    allocations: &mut u64,
    config: &Config,
) -> Result<Exit, RuntimeError> {
    let mut m = Machine {
        module,
        layout: std::cell::OnceCell::from(layout),
        fuel: config.fuel.unwrap_or(u64::MAX),
        max_depth: config.max_depth,
        functions: std::cell::OnceCell::new(),
        steps: 0,
        allocations: *allocations,
    };
    let result = m.execute(trace, args.into_iter().map(Rt::Val).collect());
    *allocations = m.allocations;
    result
}

/// Calls function `name` of the module with `args`: `Ok(Exit::Returned)`
/// when it returns, `Ok(Exit::Printed)` when it prints and stops the
/// program. Used to fold calls of pure functions with constant arguments.
pub fn call(module: &Module, name: Symbol, args: &[Value], config: &Config) -> Result<Exit, RuntimeError> {
    let func = module.function(name).ok_or_else(|| internal("no such function"))?;
    if func.params.len() != args.len() {
        return Err(internal("wrong argument count"));
    }
    let mut m = Machine {
        module,
        layout: std::cell::OnceCell::new(),
        fuel: config.fuel.unwrap_or(u64::MAX),
        max_depth: config.max_depth,
        functions: std::cell::OnceCell::new(),
        steps: 0,
        allocations: 0,
    };
    m.execute(func, args.iter().cloned().map(Rt::Val).collect())
}

fn internal(msg: &str) -> RuntimeError {
    RuntimeError { kind: ErrorKind::User(Symbol::intern(&format!("internal: {msg}"))), at: None }
}

struct Machine<'m> {
    module: &'m Module,
    /// The slots of the objects `new` makes; found on the first `new` when
    /// a call folds at compile time (finding it walks the whole module).
    layout: std::cell::OnceCell<&'static Layout>,
    fuel: u64,
    max_depth: usize,
    /// The module's functions by name, made on the first call.
    functions: std::cell::OnceCell<std::collections::HashMap<Symbol, usize>>,
    steps: u64,
    allocations: u64,
}

impl<'m> Machine<'m> {
    /// Function `name` of the module.
    fn function(&self, name: Symbol) -> Option<&'m Function> {
        let module = self.module;
        let k = *self.functions.get_or_init(|| module.function_index()).get(&name)?;
        Some(&module.functions[k])
    }

    /// An error at instruction `index` of the frame's block (or at its
    /// terminator): at the source statement the instruction comes from
    /// when the front end recorded one (its text left for the caller to
    /// take from the program, [`Location::with_text`]), else at the IR
    /// instruction itself.
    fn error(&self, frame: &Frame, kind: ErrorKind, index: usize) -> RuntimeError {
        let f = frame.func;
        let data = &f.blocks[frame.block];
        let insts = BlockInsts::of(f, frame.block);
        let is_terminator = index >= insts.len();
        let site = if is_terminator { f.sites.term(frame.block) } else { f.sites.inst(insts.at(index)) };
        if let Some(site) = site {
            return RuntimeError { kind, at: Some(site.location()) };
        }
        let text = if is_terminator {
            print::terminator_to_string(&data.term)
        } else {
            print::inst_to_string(f, insts.at(index))
        };
        let block = data.name.unwrap_or_else(|| Symbol::intern(&print::block_ref(frame.block)));
        let function = (f.kind == FunctionKind::Function).then_some(f.name);
        RuntimeError { kind, at: Some(Location { function, block, statement: index + 1, is_terminator, text }) }
    }

    fn tick(&mut self, frame: &Frame, index: usize) -> Result<(), RuntimeError> {
        self.steps += 1;
        if self.steps > self.fuel {
            return Err(self.error(frame, ErrorKind::FuelExhausted { fuel: self.fuel }, index));
        }
        Ok(())
    }

    fn execute(&mut self, func: &'m Function, args: Vec<Rt>) -> Result<Exit, RuntimeError> {
        let mut stack: Vec<Frame<'m>> = Vec::new();
        let mut frame = new_frame(func, args);
        let mut start = 0usize;
        loop {
            let f = frame.func;
            let insts = BlockInsts::of(f, frame.block);
            let mut index = start;
            while index < insts.len() {
                let i = insts.at(index);
                self.tick(&frame, index)?;
                let data = &f.insts[i];
                let result: Option<Rt> = match &data.kind {
                    InstKind::Phi(_) => {
                        index += 1;
                        continue;
                    }
                    InstKind::Op { op, form, args } => {
                        let vals = self.read_all(&frame, args, index)?;
                        let v = match op {
                            Operator::Known(op) => {
                                check_form(*op, *form, &vals).map_err(|k| self.error(&frame, k, index))?;
                                op.eval(&vals).map_err(|e| self.error(&frame, ErrorKind::from_op(e), index))?
                            }
                            other => {
                                let kind = ErrorKind::MissingOp(Symbol::intern(other.name()));
                                return Err(self.error(&frame, kind, index));
                            }
                        };
                        Some(Rt::Val(v))
                    }
                    InstKind::CheckBound(o) => Some(Rt::Val(self.read(&frame, o, index)?)),
                    // Counts for the JIT's clock only: nothing to run (its
                    // operand is not even read, as compiled code does not
                    // check it).
                    InstKind::Iterations(_) => None,
                    InstKind::Unbound(var) => Some(Rt::Unbound(*var)),
                    InstKind::New(class) => {
                        self.allocations += 1;
                        Some(Rt::Val(objects::new_object(
                            self.allocations,
                            *class,
                            self.layout.get_or_init(|| self.module.layout()),
                        )))
                    }
                    InstKind::Walk { obj, field, links } => {
                        // Never fails: 0 where a link is missing.
                        let mut o = self.read(&frame, obj, index).ok();
                        for _ in 0..*links {
                            o = o
                                .filter(|o| matches!(o, Value::Object(_)))
                                .and_then(|o| objects::get(&o, *field).ok())
                                .filter(|l| matches!(l, Value::Object(_)));
                        }
                        Some(Rt::Val(o.filter(|o| matches!(o, Value::Object(_))).unwrap_or(Value::Int(0))))
                    }
                    InstKind::Get { obj, field, proven } => {
                        let o = self.read(&frame, obj, index)?;
                        check_proven_object(*proven, "get", &o).map_err(|k| self.error(&frame, k, index))?;
                        let v = objects::get(&o, *field).map_err(|k| self.error(&frame, k, index))?;
                        Some(Rt::Val(v))
                    }
                    InstKind::Set { obj, field, value, proven } => {
                        let o = self.read(&frame, obj, index)?;
                        check_proven_object(*proven, "set", &o).map_err(|k| self.error(&frame, k, index))?;
                        let v = self.read(&frame, value, index)?;
                        let module = self.module;
                        objects::set(&o, *field, v, |c, f| module.is_immutable(c, f))
                            .map_err(|k| self.error(&frame, k, index))?;
                        None
                    }
                    InstKind::Call { func: name, args } => {
                        let vals = self.read_all(&frame, args, index)?;
                        let Some(callee) = self.function(*name) else {
                            return Err(self.error(&frame, ErrorKind::UnknownFunction(*name), index));
                        };
                        if callee.params.len() != vals.len() {
                            let kind = ErrorKind::ArgumentCount {
                                func: *name,
                                expected: callee.params.len(),
                                got: vals.len(),
                            };
                            return Err(self.error(&frame, kind, index));
                        }
                        if stack.len() + 1 >= self.max_depth {
                            let kind = ErrorKind::StackOverflow { depth: self.max_depth };
                            return Err(self.error(&frame, kind, index));
                        }
                        let mut callee_frame = new_frame(callee, vals.into_iter().map(Rt::Val).collect());
                        callee_frame.ret = Some((frame.block, index + 1, i));
                        stack.push(std::mem::replace(&mut frame, callee_frame));
                        break;
                    }
                    InstKind::Guard { kind, resume, label } => {
                        let v = self.read(&frame, kind.operand(), index)?;
                        let base = match kind.base() {
                            Some(b) => Some(self.read(&frame, b, index)?),
                            None => None,
                        };
                        if let Some(base) = &base {
                            check_laid_out(&v, base).map_err(|k| self.error(&frame, k, index))?;
                        }
                        if !kind.holds(&v, base.as_ref()) {
                            return Ok(Exit::GuardFailed {
                                resume: *resume,
                                label: *label,
                                values: bound_values(&frame),
                            });
                        }
                        // `guard_at`'s result is its link.
                        data.kind.has_result().then_some(Rt::Val(v))
                    }
                };
                if let (Some(v), Some(dst)) = (result, data.result) {
                    frame.values[ix(dst)] = Some(v);
                }
                index += 1;
            }
            if index < insts.len() {
                // A call switched frames: run the callee from its entry.
                let entry = frame.func.entry;
                frame.block = entry;
                start = 0;
                continue;
            }
            self.tick(&frame, insts.len())?;
            let n = insts.len();
            let next = match &f.blocks[frame.block].term {
                Terminator::Jump(b) => *b,
                Terminator::Branch { cond, then_block, else_block } => {
                    if self.read(&frame, cond, n)?.is_truthy() {
                        *then_block
                    } else {
                        *else_block
                    }
                }
                Terminator::IfClass { obj, class, then_block, else_block } => {
                    let v = self.read(&frame, obj, n)?;
                    if objects::is_class(&v, *class) {
                        *then_block
                    } else {
                        *else_block
                    }
                }
                Terminator::Print(o) => return Ok(Exit::Printed(self.read(&frame, o, n)?)),
                Terminator::Return(o) => {
                    let v = self.read(&frame, o, n)?;
                    let Some((block, resume_at, call)) = frame.ret else {
                        if frame.func.kind == FunctionKind::Function {
                            return Ok(Exit::Returned(v));
                        }
                        return Err(self.error(&frame, ErrorKind::ReturnOutsideFunction, n));
                    };
                    frame = stack.pop().expect("a returning frame has a caller");
                    frame.block = block;
                    if let Some(dst) = frame.func.insts[call].result {
                        frame.values[ix(dst)] = Some(Rt::Val(v));
                    }
                    start = resume_at;
                    continue;
                }
                Terminator::Trap(t) => {
                    // The front end's one trap block per missing label has no
                    // place of its own: the error is at the jump into it.
                    let site = frame.from.filter(|_| f.sites.term(frame.block).is_none()).and_then(|b| f.sites.term(b));
                    if let Some(site) = site {
                        return Err(RuntimeError { kind: t.error_kind(), at: Some(site.location()) });
                    }
                    return Err(self.error(&frame, t.error_kind(), n));
                }
                Terminator::Exit { resume, label } => {
                    return Ok(Exit::GuardFailed { resume: *resume, label: *label, values: bound_values(&frame) });
                }
                Terminator::JumpTrace { target, args } => {
                    let mut values = Vec::with_capacity(args.len());
                    for a in args {
                        values.push(self.read(&frame, a, n)?);
                    }
                    return Ok(Exit::JumpedTo { target: *target, args: values });
                }
            };
            self.enter(&mut frame, next);
            start = 0;
        }
    }

    /// Moves to `next`, evaluating its phis for the edge from the current block.
    fn enter(&mut self, frame: &mut Frame, next: BlockId) {
        let f = frame.func;
        let from = frame.block;
        let mut moves: SmallVec<[(Option<crate::ValueId>, Option<Rt>); 4]> = SmallVec::new();
        for &phi in &f.blocks[next].phis {
            if let InstKind::Phi(inputs) = &f.insts[phi].kind {
                let input = inputs.iter().find(|(b, _)| *b == from).map(|(_, o)| o);
                let v = match input {
                    Some(Operand::Const(c)) => Some(Rt::Val(c.clone())),
                    Some(Operand::Value(v)) => frame.values[ix(*v)].clone(),
                    None => None,
                };
                moves.push((f.insts[phi].result, v));
            }
        }
        for (dst, v) in moves {
            if let Some(dst) = dst {
                frame.values[ix(dst)] = v;
            }
        }
        frame.from = Some(frame.block);
        frame.block = next;
    }

    fn read(&self, frame: &Frame, o: &Operand, index: usize) -> Result<Value, RuntimeError> {
        match o {
            Operand::Const(c) => Ok(c.clone()),
            Operand::Value(v) => match &frame.values[ix(*v)] {
                Some(Rt::Val(x)) => Ok(x.clone()),
                Some(Rt::Unbound(name)) => Err(self.error(frame, ErrorKind::Unbound(*name), index)),
                None => {
                    let name = frame.func.values[*v].name.unwrap_or_else(|| Symbol::intern(&print::value_ref(*v)));
                    Err(self.error(frame, ErrorKind::Unbound(name), index))
                }
            },
        }
    }

    fn read_all(&self, frame: &Frame, ops: &[Operand], index: usize) -> Result<SmallVec<[Value; 2]>, RuntimeError> {
        let mut values = SmallVec::with_capacity(ops.len());
        for o in ops {
            values.push(self.read(frame, o, index)?);
        }
        Ok(values)
    }
}

/// The phis then instructions of a block, by position, without copying
/// the two lists.
struct BlockInsts<'f> {
    phis: &'f [InstId],
    insts: &'f [InstId],
}

impl<'f> BlockInsts<'f> {
    fn of(f: &'f Function, b: BlockId) -> BlockInsts<'f> {
        BlockInsts { phis: &f.blocks[b].phis, insts: &f.blocks[b].insts }
    }

    fn len(&self) -> usize {
        self.phis.len() + self.insts.len()
    }

    fn at(&self, k: usize) -> InstId {
        match self.phis.get(k) {
            Some(&i) => i,
            None => self.insts[k - self.phis.len()],
        }
    }
}

fn new_frame<'m>(func: &'m Function, args: Vec<Rt>) -> Frame<'m> {
    let mut values = vec![None; func.values.len()];
    for (&p, a) in func.params.iter().zip(args) {
        values[ix(p)] = Some(a);
    }
    Frame { func, values, block: func.entry, from: None, ret: None }
}

fn bound_values(frame: &Frame) -> Vec<(crate::ValueId, Value)> {
    frame
        .func
        .values
        .iter()
        .filter_map(|(id, _)| match &frame.values[ix(id)] {
            Some(Rt::Val(v)) => Some((id, v.clone())),
            _ => None,
        })
        .collect()
}

/// Checks the promise of a `get.object` or `set.object` (`what`): its
/// operand `obj` is an object.
fn check_proven_object(proven: bool, what: &str, obj: &Value) -> Result<(), ErrorKind> {
    if !proven || matches!(obj, Value::Object(_)) {
        Ok(())
    } else {
        Err(ErrorKind::User(Symbol::intern(&format!("broken_form({what}.object)"))))
    }
}

/// Checks the promise of a `guard_at`: its link and its base are objects
/// (code compares the link's word with an address computed from the
/// base's, which tells an object from nothing else).
fn check_laid_out(link: &Value, base: &Value) -> Result<(), ErrorKind> {
    if matches!((link, base), (Value::Object(_), Value::Object(_))) {
        Ok(())
    } else {
        Err(ErrorKind::User(Symbol::intern("broken_form(guard_at)")))
    }
}

/// Checks the promise a specialized form makes about its operands
/// ([`Op::form_admits`]).
fn check_form(op: Op, form: Form, args: &[Value]) -> Result<(), ErrorKind> {
    if form == Form::Generic || op.form_admits(form, args) {
        Ok(())
    } else {
        Err(ErrorKind::User(Symbol::intern(&format!("broken_form({}{})", op.name(), form.suffix()))))
    }
}
