//! Compiling lowered functions into a module, on two cores.
//!
//! Code generation is two steps per function: lowering the IR to
//! Cranelift IR ([`crate::lower`]), which reads and writes the module (its
//! declarations, constants on the heap, sites, traps), and compiling that
//! to machine code ([`cranelift_codegen::Context::compile`]), which needs
//! nothing but the function and an ISA. So a [`Compiler`] hands each
//! lowered function to a worker thread and goes on lowering the next
//! while the worker compiles. Compiling takes some three times as long as
//! lowering, so while the worker is busy the lowering thread compiles
//! the next function itself rather than wait ([`Compiler::parallel`]; not
//! a [`Compiler::background`], whose lowering thread runs the program).
//! Finished functions are defined in the module in the order they were
//! submitted, whoever compiled them, so the module, the safepoints and
//! everything printed are the same as one thread makes. At most
//! [`IN_FLIGHT`] functions are at the worker at once, and at most
//! [`AHEAD`] compiled ones wait behind it, which bounds the memory held
//! (a split huge function's regions are compiled a few at a time, not
//! all at once).
//!
//! One core, or a [`Compiler::serial`] (the JIT's trace compilations,
//! where latency is what counts): each function is compiled and defined
//! as it comes.

use std::collections::VecDeque;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::Context;
use cranelift_module::{FuncId, Module};
use flowc_lang::Symbol;

use crate::define;
use crate::lower::Building;

use crate::plan::policy::{AHEAD, IN_FLIGHT, PARALLEL_INSTS};

/// Which code generator compiles a function or trace, with which
/// settings (not a tier of [`crate::tiers`]: tier-0 code and optimized
/// tiers are each compiled by one of these).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Codegen {
    /// Cranelift's optimizations and backtracking register allocator.
    Optimized,
    /// Its cheapest settings: no mid-end optimizations, the single-pass
    /// register allocator (huge functions, whose size makes the others
    /// cost more time and memory than they save).
    Cheap,
    /// Traces only: not Cranelift but the baseline compiler
    /// ([`crate::baseline`]), which emits machine code in one pass; a
    /// trace it refuses is compiled [`Codegen::Cheap`].
    Baseline,
}

/// A function on its way: lowered, to be compiled with an ISA.
struct Job {
    ctx: Box<Context>,
    isa: OwnedTargetIsa,
}

/// A function submitted and not yet defined.
enum Pending {
    /// At the worker (their results come back in the order they were sent).
    Worker(FuncId, Symbol),
    /// Compiled by the lowering thread while the worker was busy.
    Here(FuncId, Symbol, Box<Context>, Result<(), String>),
}

/// The worker thread and its queues.
struct Worker {
    jobs: Option<SyncSender<Job>>,
    done: Receiver<(Box<Context>, Result<(), String>)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Compiles lowered functions and defines them in a module, in order (see
/// the module docs).
pub struct Compiler {
    worker: Option<Worker>,
    /// The functions submitted to a compiler with a worker and not yet
    /// defined, oldest first.
    waiting: VecDeque<Pending>,
    /// Contexts given back, to lower the next functions into.
    spare: Vec<Box<Context>>,
    /// Dropping the compiler leaves a function in progress to the worker
    /// instead of waiting for it ([`Compiler::background`]).
    detach: bool,
    /// The Cranelift IR of each function submitted, as lowered (before
    /// Cranelift optimizes it), when asked for ([`Compiler::keep_listing`]).
    listing: Option<String>,
}

impl Compiler {
    /// A compiler that compiles each function as it is submitted.
    pub fn serial() -> Compiler {
        Compiler { worker: None, waiting: VecDeque::new(), spare: Vec::new(), detach: false, listing: None }
    }

    /// A compiler for functions of `insts` IR instructions in all: with a
    /// worker thread when there are at least [`PARALLEL_INSTS`] and the
    /// machine has more than one core, else [`Compiler::serial`].
    pub fn for_work(insts: usize) -> Compiler {
        if insts < PARALLEL_INSTS {
            return Compiler::serial();
        }
        Compiler::parallel()
    }

    /// A compiler with a worker thread when the machine has more than one
    /// core (else [`Compiler::serial`]).
    pub fn parallel() -> Compiler {
        if crate::cores() < 2 {
            return Compiler::serial();
        }
        let (jobs, inbox) = sync_channel::<Job>(IN_FLIGHT);
        let (outbox, done) = sync_channel(IN_FLIGHT + 1);
        let thread = std::thread::Builder::new()
            .name("flowc-codegen".into())
            // Cranelift's passes recurse little, but a function of 4,000
            // IR instructions is big; the stack is only reserved.
            .stack_size(64 << 20)
            .spawn(move || {
                for Job { mut ctx, isa } in inbox {
                    let result = ctx
                        .compile(&*isa, &mut ControlPlane::default())
                        .map(|_| ())
                        .map_err(|e| format!("{:?}", e.inner));
                    if outbox.send((ctx, result)).is_err() {
                        break;
                    }
                }
            });
        match thread {
            Ok(thread) => Compiler {
                worker: Some(Worker { jobs: Some(jobs), done, thread: Some(thread) }),
                waiting: VecDeque::new(),
                spare: Vec::new(),
                detach: false,
                listing: None,
            },
            Err(_) => Compiler::serial(),
        }
    }

    /// A compiler whose worker compiles in the background of running code
    /// (tiered code's optimized tier, [`crate::tiers`]): [`poll`] defines
    /// what it finished without waiting, and dropping it does not wait
    /// for a function in progress (the worker owns all it works on).
    pub fn background() -> Compiler {
        let mut compiler = Compiler::parallel();
        compiler.detach = true;
        compiler
    }

    /// Keeps the Cranelift IR of every function submitted from now on, as
    /// lowered: what [`Compiler::take_listing`] returns.
    pub fn keep_listing(&mut self) {
        self.listing.get_or_insert_with(String::new);
    }

    /// The Cranelift IR kept since [`Compiler::keep_listing`] (empty if it
    /// was not called): per function a `; NAME (CODEGEN)` line, then its
    /// text, in the order they were submitted.
    pub fn take_listing(&mut self) -> String {
        self.listing.take().unwrap_or_default()
    }

    /// Whether functions are compiled on a worker thread (else as they are
    /// submitted).
    pub fn has_worker(&self) -> bool {
        self.worker.is_some()
    }

    /// A context to lower a function into.
    pub fn context(&mut self, module: &dyn Module) -> Box<Context> {
        match self.spare.pop() {
            Some(ctx) => ctx,
            None => Box::new(module.make_context()),
        }
    }
}

impl Drop for Compiler {
    fn drop(&mut self) {
        if let Some(worker) = &mut self.worker {
            // Closing the queue ends the worker's loop.
            worker.jobs.take();
            if let Some(thread) = worker.thread.take().filter(|_| !self.detach) {
                let _ = thread.join();
            }
        }
    }
}

/// Compiles function `name`, lowered into `ctx` and declared as `id`, at
/// `tier`, and defines it in `env`'s module — now, or once it and every
/// function submitted before it are compiled: by the worker, or here
/// while the worker is busy (see the module docs). Before this returns,
/// what is finished is defined, and a full queue waits for its oldest.
pub fn submit(env: &mut Building, id: FuncId, name: Symbol, ctx: Box<Context>, tier: Codegen) -> Result<(), String> {
    let isa = isa_of(&*env.module, tier)?;
    // The Cranelift IR as lowered, before Cranelift optimizes it: kept
    // when asked for, and printed as a debugging aid (`FLOWC_CLIF`).
    let debug = flowc_lang::flags::on("FLOWC_CLIF");
    if env.compiler.listing.is_some() || debug {
        let text = format!("; {name} ({tier:?})\n{}", ctx.func.display());
        if debug {
            eprint!("{text}");
        }
        if let Some(listing) = &mut env.compiler.listing {
            listing.push_str(&text);
        }
    }
    if env.compiler.worker.is_none() {
        let (ctx, result) = compile_here(ctx, isa);
        return define_compiled(env, id, name, ctx, result);
    }
    if !env.compiler.detach {
        // What the worker finished is defined first, so that what is
        // counted at the worker below is what it still has.
        define_ready(env)?;
    }
    let worker = env.compiler.worker.as_ref().expect("checked above");
    let at_worker = env.compiler.waiting.iter().filter(|p| matches!(p, Pending::Worker(..))).count();
    if at_worker < IN_FLIGHT || env.compiler.detach {
        let jobs = worker.jobs.as_ref().expect("the queue is open while the compiler lives");
        jobs.send(Job { ctx, isa }).map_err(|_| "the code generator's worker stopped".to_string())?;
        env.compiler.waiting.push_back(Pending::Worker(id, name));
        // In the background the queue holds only the worker's; else it
        // held fewer than IN_FLIGHT of them before this one.
        while env.compiler.detach && env.compiler.waiting.len() > IN_FLIGHT {
            define_next(env)?;
        }
        return Ok(());
    }
    // The worker is busy: compile this one here, behind at most AHEAD
    // others compiled here.
    let here = |c: &Compiler| c.waiting.iter().filter(|p| matches!(p, Pending::Here(..))).count();
    while here(env.compiler) >= AHEAD {
        define_next(env)?;
    }
    let (ctx, result) = compile_here(ctx, isa);
    env.compiler.waiting.push_back(Pending::Here(id, name, ctx, result));
    define_ready(env)
}

/// Compiles `ctx` with `isa` on this thread.
fn compile_here(mut ctx: Box<Context>, isa: OwnedTargetIsa) -> (Box<Context>, Result<(), String>) {
    let result = ctx.compile(&*isa, &mut ControlPlane::default()).map(|_| ()).map_err(|e| format!("{:?}", e.inner));
    (ctx, result)
}

/// Defines the functions at the front of the queue that are compiled,
/// oldest first, without waiting for the worker.
fn define_ready(env: &mut Building) -> Result<(), String> {
    while let Some(front) = env.compiler.waiting.front() {
        if let Pending::Worker(..) = front {
            let worker = env.compiler.worker.as_ref().expect("only a compiler with a worker queues");
            match worker.done.try_recv() {
                Ok((ctx, result)) => {
                    let Some(Pending::Worker(id, name)) = env.compiler.waiting.pop_front() else {
                        unreachable!("the front was the worker's")
                    };
                    define_compiled(env, id, name, ctx, result)?;
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => return Ok(()),
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    return Err("the code generator's worker stopped".to_string())
                }
            }
        } else {
            define_next(env)?;
        }
    }
    Ok(())
}

/// Defines every function still on its way.
pub fn finish(env: &mut Building) -> Result<(), String> {
    while !env.compiler.waiting.is_empty() {
        define_next(env)?;
    }
    Ok(())
}

/// Defines the functions finished, oldest first, without waiting for
/// the others.
pub fn poll(env: &mut Building) -> Result<(), String> {
    define_ready(env)
}

/// Waits for the oldest function on its way and defines it.
fn define_next(env: &mut Building) -> Result<(), String> {
    match env.compiler.waiting.pop_front().expect("a function on its way") {
        Pending::Here(id, name, ctx, result) => define_compiled(env, id, name, ctx, result),
        Pending::Worker(id, name) => {
            let worker = env.compiler.worker.as_ref().expect("only the worker's functions wait");
            let (ctx, result) = worker.done.recv().map_err(|_| "the code generator's worker stopped".to_string())?;
            define_compiled(env, id, name, ctx, result)
        }
    }
}

/// Defines the function compiled into `ctx` as `id` and records it.
fn define_compiled(
    env: &mut Building,
    id: FuncId,
    name: Symbol,
    mut ctx: Box<Context>,
    result: Result<(), String>,
) -> Result<(), String> {
    result?;
    let module = &mut *env.module;
    let code = ctx.compiled_code().ok_or("no compiled code")?;
    let isa = module.isa();
    let alignment =
        (code.buffer.alignment as u64).max(isa.function_alignment().minimum as u64).max(isa.symbol_alignment());
    let relocs: Vec<cranelift_module::ModuleReloc> =
        code.buffer.relocs().iter().map(|r| cranelift_module::ModuleReloc::from_mach_reloc(r, &ctx.func, id)).collect();
    module.define_function_bytes(id, alignment, code.code_buffer(), &relocs).map_err(|e| format!("{e:?}"))?;
    env.safepoints.push(define::describe(name, id, &ctx));
    module.clear_context(&mut ctx);
    env.compiler.spare.push(ctx);
    Ok(())
}

/// The ISA a function of `module` is compiled with at `tier` (made once
/// per process and kind).
fn isa_of(module: &dyn Module, tier: Codegen) -> Result<OwnedTargetIsa, String> {
    static ISAS: std::sync::OnceLock<[Result<OwnedTargetIsa, String>; 4]> = std::sync::OnceLock::new();
    let isas = ISAS.get_or_init(|| {
        let cheap = [("opt_level", "none"), ("regalloc_algorithm", "single_pass")];
        [
            define::isa_with(false),
            define::isa_with(true),
            define::make_isa_with(false, &cheap),
            define::make_isa_with(true, &cheap),
        ]
    });
    let pic = usize::from(module.isa().flags().is_pic());
    isas[pic + if tier == Codegen::Optimized { 0 } else { 2 }].clone()
}
