//! Running a trace (`runtrace/3`) and resuming the interpreter when a guard
//! fails (`resume_interp/3` of Part 3: the guard's resume data is written
//! into the environment, then the reference interpreter continues at the
//! guard's label).

use flowc_lang::interp::{self, Config, ErrorKind, Machine, Resolved, RuntimeError};
use flowc_lang::{env, Env, Program, Value};

use crate::record::{exec, Heap};
use crate::trace::{Check, Trace, TraceOp};

/// The result of running a trace until the program ends.
pub struct TraceRun {
    /// What the program printed.
    pub value: Value,
    /// Complete passes through the trace.
    pub iterations: u64,
}

/// Runs `trace` from `env` until a guard fails, then interprets to the end.
pub fn run(
    program: &Program,
    trace: &Trace,
    mut env: Env,
    heap: &mut Heap,
    config: &Config,
) -> Result<TraceRun, RuntimeError> {
    let index = flowc_lang::index::ProgramIndex::new(program);
    let immutable = |c, f| index.is_immutable(c, f);
    let fuel = config.fuel.unwrap_or(u64::MAX);
    let mut steps = 0u64;
    let mut iterations = 0u64;
    let fail = |kind: ErrorKind| RuntimeError { kind, at: None };
    if trace.crosses_calls() {
        return Err(fail(ErrorKind::User(flowc_lang::Symbol::intern(
            "internal: the series' trace runner does not follow calls",
        ))));
    }
    loop {
        for op in &trace.ops {
            steps += 1;
            if steps > fuel {
                return Err(fail(ErrorKind::FuelExhausted { fuel }));
            }
            let TraceOp::Guard { check, resume, label } = op else {
                exec(op, &mut env, heap, &immutable).map_err(fail)?;
                continue;
            };
            let holds = match check {
                Check::True(v) | Check::False(v) | Check::Value(v, _) => {
                    let val = env.get(v).ok_or(ErrorKind::Unbound(*v)).map_err(fail)?;
                    match check {
                        Check::True(_) => val.is_truthy(),
                        Check::False(_) => !val.is_truthy(),
                        Check::Value(_, c) => val == c,
                        Check::Class(..) | Check::Cold(_) => unreachable!(),
                    }
                }
                // No dispatch tier here: the position goes on.
                Check::Cold(_) => true,
                Check::Class(a, class, expected) => {
                    let val = crate::record::resolve(a, &env).map_err(fail)?;
                    flowc_lang::interp::objects::is_class(&val, *class) == *expected
                }
            };
            if !holds {
                for (k, v) in resume {
                    env::write(&mut env, *k, v.clone());
                }
                let value = resume_interp(program, *label, &env, heap, config)?;
                return Ok(TraceRun { value, iterations });
            }
        }
        iterations += 1;
    }
}

/// Continues interpreting at main-graph `label` with `env`.
pub fn resume_interp(
    program: &Program,
    label: flowc_lang::Symbol,
    env: &Env,
    heap: &mut Heap,
    config: &Config,
) -> Result<Value, RuntimeError> {
    let pairs: Vec<_> = env.iter().map(|(k, v)| (*k, v.clone())).collect();
    let names: Vec<_> = pairs.iter().map(|(k, _)| *k).collect();
    let resolved = Resolved::new(program, &names);
    let mut m = Machine::new(program, &resolved, config);
    m.set_allocations(heap.allocations);
    let out = m.run(label, &pairs)?;
    heap.allocations = out.allocations;
    Ok(out.value)
}

/// Convenience used by tests: the interpreter's own output from `label`.
pub fn interpret(
    program: &Program,
    label: flowc_lang::Symbol,
    env: &Env,
    config: &Config,
) -> Result<Value, RuntimeError> {
    let pairs: Vec<_> = env.iter().map(|(k, v)| (*k, v.clone())).collect();
    interp::run(program, label, &pairs, config).map(|o| o.value)
}
