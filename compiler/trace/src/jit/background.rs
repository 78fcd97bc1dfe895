//! Optimizing on the second core.
//!
//! A compile is four steps: recording (on the running thread: it runs
//! the program), optimizing ([`super::optimizing`]: conversion to IR,
//! speculation, the optimizer, compaction — about three fifths of the
//! compile time, and needing only the program and the recording), code
//! generation, and installing (on the running thread: it writes the
//! code cache and the JIT's tables). With `Options::background`, a run
//! has a *worker* thread that optimizes what the running thread records,
//! and generates its code, while the running thread goes on
//! interpreting.
//!
//! **Code made on the worker.** Where traces are baseline code (the
//! JIT's tier, `Options::tier`), a job is handed over with what
//! generating its code needs of the cache (made then if it is not yet)
//! ([`flowc_codegen::Apart`]: the traces its code may jump to — a loop's
//! preamble jumps to its body, made with it; a straight trace to where
//! its recording ended, or into that loop's body — and for a bridge the
//! frame of its exit's trace, which it runs in). The worker generates
//! the code after optimizing it, and the running thread only installs
//! it ([`flowc_codegen::TraceCache::install_emitted`]: constants rooted
//! and filled in, exits numbered, a copy into the code heap). Code the
//! worker cannot make (a trace that traps or calls a function of the
//! program, a jump to a trace it was not given) is generated on the
//! running thread, as is the code of jobs optimized there.
//!
//! **When code arrives.** The worker starts with the run's first job
//! and takes jobs in the order submitted.
//! The running thread installs a loop's code at the first
//! arrival at its hot spot after the worker is done with it, and a
//! bridge at its exit's first return to the driver after that: at once
//! for code still needed, and never for a loop that ended meanwhile (a
//! main graph of thousands of short loops in sequence). It never waits
//! for the worker while the program runs: a run that ends first drops
//! what is left (and waits only for the job in hand, which gives up at
//! its next stage: [`Wanted`]; `flowc run` does not wait for that
//! either: [`Worker::spawn_detached`]). So which
//! code exists when depends on how fast the worker is, and runs differ in
//! what the JIT did (never in what the program prints). Without a worker
//! (`FLOWC_JIT_BACKGROUND=0`, one core, the tests but those of the worker)
//! the JIT's decisions depend on the program alone. A due point on the
//! work clock would have kept them deterministic, but the clock runs far
//! faster than the worker once loops run compiled (each iteration counts
//! the statements it replaced): on tutorial BF fractal 5 the running thread waited 77 of
//! the worker's 79 ms.
//!
//! **What may cross.** Values are shared by atomic counts, except
//! objects, whose handles pin cells of the running thread's heap. A job
//! whose recording names objects (an interpreter's promoted instruction
//! objects, on every trace) crosses with its handles *lent*
//! ([`flowc_lang::heap::lend`]): they pin nothing, and the job's loan keeps
//! the objects on the running thread, then the JIT's ([`super::Jit`]'s
//! `loans`, let go when its code is) once the result is installed, whose
//! lent handles may be in its tables. Only a job naming a list that
//! holds objects, whose handles cannot be lent, is optimized on the
//! running thread, at once, as without the worker. The program and its
//! lowered functions ([`Shared`]) hold only constants of the program text.
//!
//! While a hot spot's loop is being optimized the interpreter asks for
//! it after 1, 2, 4... arrivals ([`Worker::next_ask`]), so a loop still
//! running is entered soon after the worker is done; an exit whose bridge is being optimized goes on returning
//! to the driver, and records no other. The hot spots a recording
//! passed are not recorded until its code is installed; one that comes
//! round to its threshold meanwhile installs the finished code that holds
//! it back ([`Worker::take_holding`]), so a loop left for good does not
//! hold them back forever. An inner loop cut from a recording
//! ("Inner loops first") is sent here as any loop, and the outer
//! recording abandoned, without counting against its hot spot; so is a
//! recording that goes round a loop being optimized (the inner loop
//! would be compiled twice). The outer hot spot is recorded again at its
//! next arrival once the inner loop's code is installed
//! ([`super::Jit::inner_arrived`]). Pending and ready jobs count against
//! the budget and `max_traces` as compiled ones do; when the cache is
//! full, the ready ones not taken and stale are dropped first
//! ([`Worker::drop_ready`], [`READY_PATIENCE`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use flowc_codegen::ExitId;
use flowc_ir::{Function, Module};
use flowc_lang::heap::lend::Loan;
use flowc_lang::index::ProgramIndex;
use flowc_lang::interp::Key;
use flowc_lang::Value;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::optimizing::{self, LoopJob, Optimized, StraightJob, Wanted};

/// What optimizing needs of the program, shared by the running thread
/// and the worker.
pub(super) struct Shared<'p> {
    /// The program.
    pub program: &'p flowc_lang::Program,
    /// Its blocks, functions and declarations by name, for the recorder
    /// and the conversion to IR ([`Shared::index`]): made at the first
    /// recording, as a run that records nothing (a big program whose
    /// loops are too sparse to compile) does not need it.
    index: std::sync::OnceLock<ProgramIndex<'p>>,
    /// The program's functions and declarations ([`crate::run_ir::hints`]),
    /// shared with the trace cache, and whether objects may be virtual
    /// (the program cannot observe allocation numbers): known when the JIT
    /// is made, or — after a light start — once it adopts the rest, before
    /// anything is recorded ([`Shared::know`]).
    functions: std::sync::OnceLock<(Arc<Module>, bool)>,
    /// The JIT's `inspect` hook.
    pub inspect: Option<fn(&Function, &str)>,
    /// `Options::worker_delay`.
    pub delay: Option<std::time::Duration>,
}

// SAFETY: `Shared` holds the program and its lowered functions, whose
// values are the constants of the program text: integers, atoms, lists of
// those — no object, so no handle into a thread's heap. Lists and big
// integers are shared by atomic counts (`Arc`). Its only interior
// mutability is through `OnceLock`s, which synchronise their own
// initialisation: the program's index (`Shared::index`, references into
// the program and maps of them, made by whichever thread asks first), the
// loops the index finds per function, and the program's functions (set
// by the running thread before any job reads them); otherwise both
// threads only read it.
#[allow(unsafe_code)]
unsafe impl Send for Shared<'_> {}
// SAFETY: as for `Send` above.
#[allow(unsafe_code)]
unsafe impl Sync for Shared<'_> {}

impl<'p> Shared<'p> {
    /// What optimizing needs of `program` ([`Shared`]'s fields), the
    /// program's functions to be known ([`Shared::know`]).
    pub fn new(
        program: &'p flowc_lang::Program,
        inspect: Option<fn(&Function, &str)>,
        delay: Option<std::time::Duration>,
    ) -> Shared<'p> {
        Shared { program, index: std::sync::OnceLock::new(), functions: std::sync::OnceLock::new(), inspect, delay }
    }

    /// Sets the program's functions (`hints`) and whether objects may be
    /// virtual: once.
    pub fn know(&self, hints: Arc<Module>, remove_allocations: bool) {
        let set = self.functions.set((hints, remove_allocations));
        debug_assert!(set.is_ok(), "the program's functions are known once");
    }

    /// The program's functions and declarations.
    pub fn hints(&self) -> &Arc<Module> {
        &self.known().0
    }

    /// Whether objects may be virtual.
    pub fn remove_allocations(&self) -> bool {
        self.known().1
    }

    fn known(&self) -> &(Arc<Module>, bool) {
        self.functions.get().expect("the program's functions are known before anything is recorded")
    }

    /// The program's index, made on first use.
    pub fn index(&self) -> &ProgramIndex<'p> {
        self.index.get_or_init(|| ProgramIndex::new(self.program))
    }
}

impl Shared<'_> {
    /// Runs the `inspect` hook on `f`.
    pub fn inspect(&self, f: &Function, after: &str) {
        if let Some(inspect) = self.inspect {
            inspect(f, after);
        }
    }
}

/// How long the worker looks for its next job before it sleeps until one
/// comes: jobs come in bursts while a program warms up, and a job sent to
/// a sleeping worker costs the running thread a system call to wake it
/// (some 5 µs on a virtual machine; tutorial BF fractal 5 sent 584).
const SPIN: std::time::Duration = std::time::Duration::from_micros(200);

/// The worker's next job from `inbox`, or `None` once the running thread
/// is gone: looked for for [`SPIN`], then waited for.
fn next_job<T>(inbox: &mpsc::Receiver<T>) -> Option<T> {
    let started = std::time::Instant::now();
    loop {
        match inbox.try_recv() {
            Ok(job) => return Some(job),
            Err(mpsc::TryRecvError::Disconnected) => return None,
            Err(mpsc::TryRecvError::Empty) if started.elapsed() < SPIN => std::hint::spin_loop(),
            Err(mpsc::TryRecvError::Empty) => return inbox.recv().ok(),
        }
    }
}

/// The most arrivals between two asks for a hot spot's code
/// ([`Worker::next_ask`]).
pub const MOST_ASKS: u32 = 64;

/// The most jobs sent and not yet done: past it, a job is optimized on
/// the running thread, at once. A program warming up records in bursts;
/// a worker that far behind delivers code late (each job is about 0.2 ms
/// on tutorial BF), and what waits costs memory — the objects
/// interpreter's recordings carry an environment of some twenty
/// variables at every guard, and on BF fractal 5 up to 300 jobs waited
/// (59 MB at its peak, against 52 with this bound, 6 runs each; 44 with
/// every job on the running thread). The tutorial interpreter's rows
/// rarely reach it (statements, hanoi: the same time and peak).
pub const MOST_QUEUED: usize = 16;

/// A job for the worker.
pub(super) enum Job {
    Loop(Box<LoopJob>),
    Straight(Box<StraightJob>),
}

impl Job {
    /// Calls `f` on every value the job names.
    fn each_value_mut(&mut self, f: &mut impl FnMut(&mut Value)) {
        match self {
            Job::Loop(j) => j.each_value_mut(f),
            Job::Straight(j) => j.each_value_mut(f),
        }
    }

    /// Lends the job's objects ([`flowc_lang::heap::lend`]): its handles
    /// become lent ones, and `loan` keeps their objects. `false`, and
    /// nothing lent, when a value is a list holding objects (whose
    /// handles cannot be lent). Every job is walked (once where it names
    /// no object), so what crosses never depends on a summary of it.
    fn lend(&mut self, loan: &mut Loan) -> bool {
        let (mut objects, mut lists) = (false, false);
        self.each_value_mut(&mut |v| match v {
            Value::Object(_) => objects = true,
            Value::List(_) => lists |= v.holds_objects(),
            _ => {}
        });
        if lists {
            return false;
        }
        if objects {
            self.each_value_mut(&mut |v| {
                loan.lend(v);
            });
        }
        true
    }
}

/// A job or its result crossing to the other thread.
struct Crossing<T>(T);

/// A job for the worker, how the worker generates its code too, when it
/// is to, and the flushes there had been when it was sent
/// ([`Wanted`]).
type Handed = (Job, Option<Emit>, u64);

/// How the worker generates a job's code: with what the code generator
/// needs of the trace cache (`apart`), and whether it then reduces the
/// pieces to what their exits read (`reduce`; see "Leftovers on the
/// worker" below).
pub(super) struct Emit {
    pub apart: flowc_codegen::Apart,
    pub reduce: bool,
}

// SAFETY: a job crosses only from `Worker::submit`, with its objects lent
// (`Job::lend`): its values are integers, atoms, big integers and lists
// of those, shared by atomic counts, and lent object handles, which the
// worker (a thread that borrows) clones and drops without touching the
// running thread's heap, and reads only for what never changes once set
// (`flowc_lang::heap::lend`). The job's `Pending` keeps the objects on the
// running thread until its result is back and, once installed, the JIT
// keeps them while its tables may hold the result's handles (a detached
// worker's are kept to the process's exit, with the heap:
// `Worker::spawn_detached`). A result is
// made from the job and the program (the optimizer folds only calls whose
// result is a constant, never an object; it reads immutable fields of
// lent objects as lent handles), so it holds nothing else; the worker
// stops before its next job when the run ends (`Worker`'s `Drop`).
#[allow(unsafe_code)]
unsafe impl<T> Send for Crossing<T> {}

/// What the JIT does with a job's result once it is installed.
pub(super) enum Then {
    /// Code of a hot spot: its loop, or an entry trace.
    Key(super::recording::KeyDone),
    /// The bridge of an exit.
    Bridge(super::recording::BridgeDone),
}

impl Then {
    /// The hot spot whose code it is, if it is one's.
    fn key(&self) -> Option<&Key> {
        match self {
            Then::Key(k) => Some(&k.key),
            Then::Bridge(_) => None,
        }
    }
}

/// A job submitted and not yet installed.
pub(super) struct Pending {
    /// Operations recorded.
    pub recorded: usize,
    /// Where it starts, for reports.
    pub what: String,
    pub then: Then,
    /// The hot spots its recording passed on the way: the interpreter,
    /// running that path until the code is installed, records none of
    /// them (each would be the same loop again, rotated, or a piece of
    /// the bridge).
    pub passed: Vec<Key>,
    /// What keeps the objects the job names while the worker has them
    /// (lent, [`flowc_lang::heap::lend`]), and then while the JIT keeps
    /// its result ([`super::Jit::install`]).
    pub loan: Loan,
    /// Until when (on the JIT's clock, [`super::Jit::work`]) its result,
    /// ready and not taken, is kept through a full cache rather than
    /// dropped ([`Worker::drop_ready`], [`READY_PATIENCE`]).
    pub keep_until: u64,
}

/// How long a ready result not taken is kept through a full cache: until
/// the run's work (the JIT's clock, [`super::Jit::work`]) is this many
/// times more than when its job was submitted. A loop arrived at again
/// once per round of the program comes back within that, however long
/// the round; one that ended does not, and its room in the cache is given
/// up after a time that grows with the run, as the phases of a program
/// do. Each full cache used to drop every result not taken: on BF
/// `statements 12` (96,700 positions, each loop arrived at again once per
/// round of the program) the cache was full from a fifth of the run on,
/// each deferred hot spot dropped what had come back since, and 1,745
/// loops and bridges were recorded, optimized and dropped, to be recorded
/// again (4,125 on the objects interpreter). Kept 1, 3 or 10 times as
/// long again: 717, 267 and 77 dropped, the run 1.12, 0.78 and 0.69 s
/// (one run each; never dropped but at flushes, 0.69 s).
pub const READY_PATIENCE: u64 = 10;

/// Whose code a ready result is: a hot spot's loop, or an exit's bridge.
#[derive(Clone, PartialEq)]
enum Holder {
    Key(Key),
    Exit(ExitId),
}

/// The worker of one run, and the jobs it was given.
pub(super) struct Worker {
    /// `None` when no thread could be started.
    jobs: Option<mpsc::Sender<Crossing<Handed>>>,
    done: mpsc::Receiver<Crossing<Option<Optimized>>>,
    /// In the order submitted (the order the worker does them).
    pending: VecDeque<Pending>,
    /// The hot spots and exits whose code is being optimized.
    keys: HashSet<Key>,
    exits: HashSet<ExitId>,
    /// The hot spots pending recordings passed, and by how many.
    passed: HashMap<Key, u32>,
    /// Per hot spot being optimized: after how many arrivals the
    /// interpreter asks for its code again ([`Worker::next_ask`]).
    asks: HashMap<Key, u32>,
    /// Jobs the worker is done with, by the hot spot or exit whose code
    /// they are: its code is generated and installed at the hot spot's
    /// next arrival or the exit's next return to the driver — right away
    /// for a loop still running, never for one that ended meanwhile.
    ready_keys: HashMap<Key, (Pending, Option<Optimized>)>,
    /// Keys whose results [`Worker::collect`] took since the driver last
    /// looked ([`Jit::collect_done`]).
    fresh: Vec<Key>,
    ready_exits: HashMap<ExitId, (Pending, Option<Optimized>)>,
    /// The ready results by the hot spots their recordings passed
    /// ([`Worker::take_holding`]; a result taken meanwhile is skipped).
    holding: HashMap<Key, Vec<Holder>>,
    /// Operations recorded by the pending jobs.
    ops: usize,
    /// The most jobs pending or ready at once, counted at each submit
    /// (the backlog `--stats` reports).
    pub most_pending: usize,
    /// Jobs sent with objects lent.
    pub lent: usize,
    /// Results still to come of jobs forgotten ([`Worker::forget_all`]):
    /// dropped as they come, before those of `pending`.
    discard: usize,
    /// The loans of those jobs, in order: each kept until its job's
    /// result is back.
    discarded_loans: VecDeque<Loan>,
    /// Set when the run ends: the worker takes no further job, and gives
    /// up the one in hand ([`Wanted`]).
    stop: Arc<AtomicBool>,
    /// Whether the worker's thread is not the run's to wait for
    /// ([`Worker::spawn_detached`]).
    detached: bool,
    /// The flushes so far ([`Worker::forget_all`]): a job sent before the
    /// last is no longer wanted.
    flushes: Arc<AtomicU64>,
}

/// A worker's thread: its name and stack, as much as the running
/// thread's (the optimizer runs here what it runs there; the stack is
/// only reserved).
fn worker_thread() -> std::thread::Builder {
    std::thread::Builder::new().name("flowc-jit-worker".into()).stack_size(1 << 30)
}

/// What a worker's thread runs: each job from `inbox` optimized (and its
/// code generated, where it comes with the means) into `outbox`, until
/// the inbox closes or `stopped` is set.
fn work(
    inbox: mpsc::Receiver<Crossing<Handed>>,
    outbox: mpsc::Sender<Crossing<Option<Optimized>>>,
    stopped: Arc<AtomicBool>,
    flushed: Arc<AtomicU64>,
    shared: Arc<Shared<'_>>,
) {
    // Jobs naming objects come with their handles lent.
    flowc_lang::heap::lend::borrow_here();
    let mut jobs_done: u64 = 0;
    while let Some(Crossing((job, apart, submitted))) = next_job(&inbox) {
        if stopped.load(Ordering::Relaxed) {
            break;
        }
        if let Some(delay) = shared.delay {
            std::thread::sleep(delay);
        }
        let wanted = Wanted::until(&stopped, &flushed, submitted);
        // (A job sent before a flush comes back empty at once,
        // not converted first: one result per job, in order.)
        let mut result = match job {
            _ if wanted.gone() => None,
            Job::Loop(job) => optimizing::optimize_loop(&shared, *job, wanted),
            Job::Straight(job) => optimizing::optimize_straight(&shared, *job, wanted),
        };
        if let (Some(o), Some(how), false) = (result.as_mut(), apart, wanted.gone()) {
            emit(o, &how.apart, wanted);
            if how.reduce {
                reduce(o);
            }
        }
        if outbox.send(Crossing(result)).is_err() {
            break;
        }
        // The allocator keeps each thread's freed pages in that
        // thread's heap: the worker gives back what its jobs
        // freed as the running thread does
        // ([`super::compiling::RELEASE_EVERY`]), once the job's
        // result is on its way.
        jobs_done += 1;
        if jobs_done.is_multiple_of(super::compiling::RELEASE_EVERY) {
            flowc_codegen::release_freed_memory();
        }
    }
    // What it shares let go of before the outbox closes: a run waiting
    // for the worker finds it done with the program.
    drop(shared);
    drop(outbox);
}

impl Worker {
    /// Starts a worker in `scope`, optimizing with `shared`.
    pub fn spawn<'scope, 'p: 'scope>(scope: &'scope std::thread::Scope<'scope, '_>, shared: Arc<Shared<'p>>) -> Worker {
        let (worker, thread) = Worker::parts(shared, false);
        worker.started(worker_thread().spawn_scoped(scope, thread).is_ok())
    }

    /// Starts a worker whose thread the run does not wait for: when the
    /// run ends, the worker is told to stop, and the job in hand is left
    /// to give up (or finish) on its own while the process exits. A
    /// `flowc run` that ended while a big loop was being optimized had
    /// waited for it: 0.6-2.7 ms of the 10 ms run of a function with a
    /// hot loop of 900 statements (`jit_short`'s big function hot loop at
    /// n = 500), a fifth of the JIT's loss there against the interpreter.
    ///
    /// The job in hand may read the objects it was lent until the process
    /// exits: dropping the worker keeps their loans, and the running
    /// thread's heap is kept past its thread-locals' drop
    /// ([`flowc_lang::heap::keep_to_exit`], which this calls: libc's
    /// `exit`, which `flowc run`'s thread ends with, drops them).
    ///
    /// # Safety
    ///
    /// The thread may run until the process exits: the program `shared`
    /// borrows must not be freed before then (`Options::leave_to_exit`'s
    /// promise). Jobs generate code into memory of their own, which the
    /// running thread copies into the cache.
    #[allow(unsafe_code)]
    pub unsafe fn spawn_detached(shared: Arc<Shared<'_>>) -> Worker {
        let (worker, thread) = Worker::parts(shared, true);
        flowc_lang::heap::keep_to_exit();
        // SAFETY: what the closure holds it owns (channels, counts) but
        // `Shared`'s borrow of the program, which the caller keeps until
        // the process exits, and what jobs lend, which the heap and the
        // loans kept keep (see above).
        worker.started(unsafe { worker_thread().spawn_unchecked(thread) }.is_ok())
    }

    /// A new worker, and what its thread is to run ([`work`]) with the
    /// other ends of its channels and flags.
    fn parts<'p>(shared: Arc<Shared<'p>>, detached: bool) -> (Worker, impl FnOnce() + Send + 'p) {
        let (jobs, inbox) = mpsc::channel::<Crossing<Handed>>();
        let (outbox, done) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let flushes = Arc::new(AtomicU64::new(0));
        let (stopped, flushed) = (stop.clone(), flushes.clone());
        let worker = Worker {
            jobs: Some(jobs),
            done,
            pending: VecDeque::new(),
            keys: HashSet::default(),
            exits: HashSet::default(),
            passed: HashMap::default(),
            asks: HashMap::default(),
            ready_keys: HashMap::default(),
            fresh: Vec::new(),
            ready_exits: HashMap::default(),
            holding: HashMap::default(),
            ops: 0,
            most_pending: 0,
            lent: 0,
            discard: 0,
            discarded_loans: VecDeque::new(),
            stop,
            flushes,
            detached,
        };
        (worker, move || work(inbox, outbox, stopped, flushed, shared))
    }

    /// The worker, its thread `spawned` or not: with no thread to be had
    /// the jobs go nowhere, and the running thread optimizes everything
    /// itself (`submit` hands them back).
    fn started(mut self, spawned: bool) -> Worker {
        if !spawned {
            self.jobs = None;
        }
        self
    }

    /// Gives the worker `job` (and, to generate its code too, what
    /// `apart` makes of it), its objects lent (kept by `pending`'s loan);
    /// handed back when there is no worker, when [`MOST_QUEUED`] jobs are
    /// not done yet, or when a value is a list holding objects, which
    /// cannot be lent.
    pub fn submit(
        &mut self,
        mut job: Job,
        apart: impl FnOnce(&Job) -> Option<Emit>,
        mut pending: Pending,
    ) -> Result<(), Job> {
        let Some(jobs) = self.jobs.as_ref().filter(|_| self.pending.len() < MOST_QUEUED) else { return Err(job) };
        if !job.lend(&mut pending.loan) {
            return Err(job);
        }
        self.lent += usize::from(!pending.loan.is_empty());
        let apart = apart(&job);
        let submitted = self.flushes.load(Ordering::Relaxed);
        if let Err(mpsc::SendError(Crossing((job, ..)))) = jobs.send(Crossing((job, apart, submitted))) {
            // The worker is gone (it panicked): `collect` says so.
            return Err(job);
        }
        match &pending.then {
            Then::Key(k) => {
                self.keys.insert(k.key.clone());
            }
            Then::Bridge(b) => {
                self.exits.insert(b.exit);
            }
        }
        for k in &pending.passed {
            *self.passed.entry(k.clone()).or_default() += 1;
        }
        self.ops += pending.recorded;
        self.pending.push_back(pending);
        self.most_pending = self.most_pending.max(self.pending_jobs());
        Ok(())
    }

    /// Whether hot spot `key`'s loop is being optimized.
    pub fn has_key(&self, key: &Key) -> bool {
        self.keys.contains(key)
    }

    /// Whether a recording being optimized passed hot spot `key`.
    pub fn passed(&self, key: &Key) -> bool {
        self.passed.contains_key(key)
    }

    /// Whether the recording of a hot spot's loop being optimized, or done
    /// and not yet taken, passed hot spot `key`: code that stands in for
    /// a loop at `key` once installed (that loop, rotated), which a
    /// bridge or an entry trace that passed `key` is not.
    pub fn loop_passed(&self, key: &Key) -> bool {
        let mut jobs = self.pending.iter().chain(self.ready_keys.values().map(|(p, _)| p));
        jobs.any(|p| matches!(&p.then, Then::Key(k) if matches!(k.kind, super::Kind::Loop)) && p.passed.contains(key))
    }

    /// Whether exit `exit`'s bridge is being optimized.
    pub fn has_exit(&self, exit: ExitId) -> bool {
        self.exits.contains(&exit)
    }

    /// Jobs not yet installed.
    /// Whether jobs are being optimized: code whose bridges are on the
    /// way is not what it will be, and is not judged meanwhile. (A bridge
    /// done is installed at its exit's next failure.)
    pub fn busy(&self) -> bool {
        !self.pending.is_empty()
    }

    pub fn pending_jobs(&self) -> usize {
        self.pending.len() + self.ready_keys.len() + self.ready_exits.len()
    }

    /// Operations recorded by the jobs not yet installed.
    pub fn pending_ops(&self) -> usize {
        self.ops
    }

    /// Takes the results the worker is done with, in order, into the
    /// ready tables.
    pub fn collect(&mut self) {
        while self.discard > 0 || !self.pending.is_empty() {
            let Crossing(result) = match self.done.try_recv() {
                Ok(result) => result,
                Err(mpsc::TryRecvError::Empty) => return,
                Err(mpsc::TryRecvError::Disconnected) => panic!("the compile worker ended before its jobs"),
            };
            if self.discard > 0 {
                // A forgotten job's: its code was made for a cache that
                // is gone. Its objects are let go with it.
                self.discard -= 1;
                drop(result);
                self.discarded_loans.pop_front();
                continue;
            }
            let pending = self.pending.pop_front().expect("looked at");
            let holder = match &pending.then {
                Then::Key(k) => Holder::Key(k.key.clone()),
                Then::Bridge(b) => Holder::Exit(b.exit),
            };
            for k in &pending.passed {
                self.holding.entry(k.clone()).or_default().push(holder.clone());
            }
            match holder {
                Holder::Key(k) => {
                    self.fresh.push(k.clone());
                    self.ready_keys.insert(k, (pending, result));
                }
                Holder::Exit(e) => {
                    self.ready_exits.insert(e, (pending, result));
                }
            }
        }
    }

    /// After how many arrivals the interpreter asks again for the code of
    /// hot spot `key`, being optimized: 1, 2, 4... up to [`MOST_ASKS`],
    /// doubling at each ask. A loop still running is entered within
    /// about as many iterations as it ran since it was recorded (the
    /// worker's time); one that ended costs a few trips through the
    /// driver. (Stopping at every arrival cost a main graph of thousands
    /// of short loops a trip per iteration, twice the interpreter's time;
    /// asking every `threshold` arrivals, tutorial BF fractal 5 twice the
    /// statements interpreted.)
    pub fn next_ask(&mut self, key: &Key) -> u32 {
        let n = self.asks.entry(key.clone()).or_insert(1);
        *n = (*n * 2).min(MOST_ASKS);
        *n
    }

    /// The optimized code of hot spot `key`, if the worker is done with it.
    pub fn take_key(&mut self, key: &Key) -> Option<(Pending, Option<Optimized>)> {
        let ready = self.ready_keys.remove(key)?;
        self.keys.remove(key);
        self.asks.remove(key);
        self.taken(&ready.0);
        Some(ready)
    }

    /// The optimized bridge of exit `exit`, if the worker is done with it.
    pub fn take_exit(&mut self, exit: ExitId) -> Option<(Pending, Option<Optimized>)> {
        let ready = self.ready_exits.remove(&exit)?;
        self.exits.remove(&exit);
        self.taken(&ready.0);
        Some(ready)
    }

    /// The results the worker is done with whose recordings passed hot
    /// spot `key`, taken. (Their own hot spot or exit has not come round
    /// since, while `key` has: installed now, they no longer hold `key`
    /// back — else a loop left for good would hold back forever the hot
    /// spots its recording passed.)
    pub fn take_holding(&mut self, key: &Key) -> Vec<(Pending, Option<Optimized>)> {
        let holders = self.holding.remove(key).unwrap_or_default();
        // A holder may name a result taken since, or a later one of the
        // same hot spot or exit: only one that passed `key` is taken.
        let holds = |ready: Option<&(Pending, Option<Optimized>)>| ready.is_some_and(|(p, _)| p.passed.contains(key));
        holders
            .into_iter()
            .filter_map(|h| match h {
                Holder::Key(k) => holds(self.ready_keys.get(&k)).then(|| self.take_key(&k)).flatten(),
                Holder::Exit(e) => holds(self.ready_exits.get(&e)).then(|| self.take_exit(e)).flatten(),
            })
            .collect()
    }

    /// Drops the results the worker is done with that were not taken
    /// (their hot spot has not been arrived at, nor their exit failed,
    /// since they came back: mostly loops that ended first) and are stale
    /// by the JIT's clock `now` (kept until [`Pending::keep_until`]), and
    /// returns how many there were. The cache was full, and they counted
    /// as code in it ([`super::Jit::cache_full`]).
    pub fn drop_ready(&mut self, now: u64) -> usize {
        let stale = |p: &Pending| p.keep_until < now;
        let keys: Vec<Key> = self.ready_keys.iter().filter(|(_, (p, _))| stale(p)).map(|(k, _)| k.clone()).collect();
        let exits: Vec<ExitId> = self.ready_exits.iter().filter(|(_, (p, _))| stale(p)).map(|(e, _)| *e).collect();
        let n = keys.len() + exits.len();
        for k in keys {
            drop(self.take_key(&k));
        }
        for e in exits {
            drop(self.take_exit(e));
        }
        n
    }

    /// Forgets every job, pending or ready, and returns how many there
    /// were: the JIT dropped all its code ([`super::Jit::flush`]), and
    /// theirs would go into a cache that is gone. The worker gives up the
    /// jobs it has ([`Wanted`]: one past its last look still finishes);
    /// their results are dropped as they come back (`discard`).
    pub fn forget_all(&mut self) -> usize {
        self.flushes.fetch_add(1, Ordering::Relaxed);
        let forgotten = self.pending_jobs();
        self.discard += self.pending.len();
        self.discarded_loans.extend(self.pending.drain(..).map(|p| p.loan));
        self.keys.clear();
        self.exits.clear();
        self.passed.clear();
        self.asks.clear();
        self.ready_keys.clear();
        self.fresh.clear();
        self.ready_exits.clear();
        self.holding.clear();
        self.ops = 0;
        forgotten
    }

    /// Forgets `pending`, taken to be installed: its operations, and the
    /// hot spots its recording passed (kept from recording until its code
    /// is there: released when the worker was done, they recorded the
    /// same loop again, rotated, before the loop's own hot spot came
    /// round to install it).
    ///
    /// Its result no longer holds those hot spots: its entry in their
    /// `holding` lists goes (one entry each: a later result of the same
    /// hot spot or exit that passed one has its own). Left there, the
    /// lists of hot spots never arrived at again kept growing with every
    /// result (public BF hanoi.b: 6.6 MB of the run's peak).
    fn taken(&mut self, pending: &Pending) {
        self.ops -= pending.recorded;
        let holder = match &pending.then {
            Then::Key(k) => Holder::Key(k.key.clone()),
            Then::Bridge(b) => Holder::Exit(b.exit),
        };
        for k in &pending.passed {
            match self.passed.get_mut(k) {
                Some(n) if *n > 1 => *n -= 1,
                _ => {
                    self.passed.remove(k);
                }
            }
            if let Some(holders) = self.holding.get_mut(k) {
                if let Some(i) = holders.iter().position(|h| *h == holder) {
                    holders.remove(i);
                }
                if holders.is_empty() {
                    self.holding.remove(k);
                }
            }
        }
    }
}

impl Drop for Worker {
    /// Ends the worker's loop, and waits for the job in hand (the run's
    /// scope would wait for it too; a detached worker's is not waited
    /// for, and its jobs' loans are kept:
    /// scope would wait for it too): the objects the jobs name are kept
    /// until the worker is done with them. The job in hand is no longer
    /// wanted ([`Wanted`]): it gives up at its next stage rather than
    /// finish work nobody will install.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.jobs = None;
        if self.detached {
            // The job in hand may still read its lent objects: their
            // loans are kept, as the heap is ([`Worker::spawn_detached`]).
            std::mem::forget(std::mem::take(&mut self.pending));
            std::mem::forget(std::mem::take(&mut self.discarded_loans));
            return;
        }
        while self.done.recv().is_ok() {}
    }
}

impl super::Jit<'_> {
    /// Gives `job` (of code starting at `what`, to become `then`, whose
    /// recording passed the hot spots `passed`) to the run's worker.
    /// Handed back when the run has no worker or the job may hold
    /// objects: the caller optimizes it at once.
    pub(super) fn submit(
        &mut self,
        machine: &mut super::Machine,
        run: &mut super::Run,
        job: Job,
        what: String,
        passed: Vec<Key>,
        then: impl FnOnce() -> Then,
    ) -> Result<(), Job> {
        if run.worker.is_none() {
            // Started by the first job, which it takes too. (That job was
            // optimized here while the worker started, when the worker
            // only optimized: its cold compile then cost a short run's
            // running thread 1-2 ms, and now that the worker makes the
            // code too, a lone loop of 3,000 by 3,000 rounds and the stack
            // VM of `jit_bf` at 2,000 run as fast with it there: 0.96 and
            // 1.00 of the time, 15 runs each, alternated; BF bottles 10
            // 0.88-0.93, the shapes corpus's ledger 0.83.)
            run.worker = run.start_worker.map(|start| start());
        }
        let Some(worker) = run.worker.as_mut() else { return Err(job) };
        let recorded = match &job {
            Job::Loop(j) => j.trace.ops.len(),
            Job::Straight(j) => j.recorded,
        };
        let then = then();
        let key = then.key().cloned();
        // A bridge runs in its exit's trace's frame (but where trees are
        // grown: `Jit::finish`).
        let from = match &then {
            Then::Bridge(b) if !self.options.trees => Some(b.exit),
            _ => None,
        };
        let keep_until = self.keep_until(machine);
        let pending = Pending { recorded, what, then, passed, loan: Loan::default(), keep_until };
        // Reduced on the worker where the running thread would reduce
        // them at once ([`Jit::compile_pieces`]) and the log does not
        // print them.
        let reduce = !(self.options.keep_ir || self.options.trees) && self.log.is_none();
        worker.submit(job, |job| Some(Emit { apart: self.apart(job, from)?, reduce }), pending)?;
        if let (Some(key), Some(p)) = (key, machine.profiler_mut()) {
            p.ask_after(&key, 1);
        }
        self.log(format_args!("optimizing in the background"));
        Ok(())
    }

    /// Until when a result submitted now, ready and not taken, is kept
    /// through a full cache ([`READY_PATIENCE`]).
    fn keep_until(&self, machine: &super::Machine) -> u64 {
        let now = self.work(machine.steps());
        now.saturating_add(now.saturating_mul(READY_PATIENCE))
    }

    /// What the worker needs to generate `job`'s code too (a bridge of
    /// exit `from` runs in the frame of the exit's trace), when its code is
    /// baseline code (see "Code made on the worker"); the cache is made if
    /// it is not yet.
    fn apart(&mut self, job: &Job, from: Option<ExitId>) -> Option<flowc_codegen::Apart> {
        if self.options.tier != flowc_codegen::compile::Codegen::Baseline {
            return None;
        }
        // What its code may jump to: a loop's preamble jumps to its body,
        // made with it; a straight trace to where its recording ended, or
        // into that loop's body.
        let mut targets = Vec::new();
        if let Job::Straight(j) = job {
            if let crate::to_ir::End::Jump { target, .. } = &j.source.end {
                targets.push(*target);
            }
            targets.extend(j.into.as_ref().map(|(_, body)| *body));
        }
        Some(self.made_cache()?.apart(&targets, from))
    }

    /// Takes what the worker is done with ([`Worker::collect`]). A hot
    /// spot's code waits there until the interpreter arrives at it, but
    /// an inner loop that outer recordings were dropped for ("Inner loops
    /// first") is installed at once: the outer hot spots are then asked
    /// again ([`super::Jit::inner_arrived`]), and the code that bypasses
    /// the new loop gives way to it ([`super::Jit::key_compiled`]).
    /// Left waiting, it may never be installed: once bridges link the
    /// nest's other loops up round it, the interpreter never arrives at
    /// its head (`digits 200`'s slow mode: the divmod loop at BF position
    /// 2705 stayed a job in hand to the end, and its copy loops ran round
    /// by round, 300-470 ms against 120-190).
    pub(super) fn collect_done(&mut self, machine: &mut super::Machine, run: &mut super::Run) {
        let Some(worker) = run.worker.as_mut() else { return };
        worker.collect();
        if worker.fresh.is_empty() {
            return;
        }
        let fresh = std::mem::take(&mut worker.fresh);
        // A dispatch tier running a position whose code is ready leaves
        // there at once, for the driver to install it.
        if let Some(p) = machine.profiler_mut() {
            for key in &fresh {
                p.ready(key);
            }
        }
        for key in &fresh {
            if !self.outer_waiting.contains_key(key) {
                continue;
            }
            if let Some((pending, result)) = run.worker.as_mut().and_then(|w| w.take_key(key)) {
                self.stats.inner_installed += 1;
                self.install(machine, pending, result);
            }
        }
    }

    /// Installs the result of a job (`None`: the preamble defined no
    /// entry for its loop).
    pub(super) fn install(&mut self, machine: &mut super::Machine, pending: Pending, mut result: Option<Optimized>) {
        let Pending { what, then, loan, .. } = pending;
        let then = match then {
            Then::Key(done) => Then::Key(done.pinned(result.as_mut())),
            bridge => bridge,
        };
        let from = match &then {
            Then::Key(_) => None,
            Then::Bridge(b) => Some(b.exit),
        };
        let compiled = result.and_then(|o| self.finish(o, &what, from, true));
        // The result's lent handles may be in the JIT's tables now: their
        // objects are kept as long as those are.
        self.loans.append(loan);
        match then {
            Then::Key(done) => {
                let key = done.key.clone();
                let made = self.key_compiled(machine, done, compiled, &what).is_some();
                self.inner_arrived(machine, &key, made);
            }
            Then::Bridge(done) => {
                self.bridge_compiled(&done, compiled);
            }
        }
    }
}

/// Generates `optimized`'s baseline code with `apart` (see "Code made on
/// the worker"); left to the running thread where baseline code refuses
/// it here.
fn emit(optimized: &mut Optimized, apart: &flowc_codegen::Apart, wanted: Wanted) {
    let started = std::time::Instant::now();
    let functions: Vec<&Function> = optimized.pieces.iter().map(|(f, ..)| f).collect();
    optimized.emitted = apart.emit_while(&functions, &optimized.shapes, &|| !wanted.gone()).ok();
    if optimized.emitted.is_some() {
        // Only code generated on the running thread reads them (should
        // this code not be installable there, they are made again:
        // `Jit::compile_pieces`), and
        // the result may wait a while: the objects interpreter on BF
        // fractal 5 had up to 300 results waiting, and in a DHAT profile
        // of its peak their shapes held 2 MB.
        optimized.shapes = Vec::new();
    }
    optimized.emit_time = started.elapsed();
}

/// Leftovers on the worker: once their code is made, `optimized`'s pieces
/// are reduced to their names, and each to what its exits read and the
/// operations it counts ([`super::without_body`]), as the running thread
/// would do as it installs them. The packing of a piece's resume records
/// and the freeing of its IR took the running thread of tutorial BF
/// fractal 5 some 16 ms of its 270 (a `perf` profile), there on the
/// thread that runs the program, here on the one that has time.
fn reduce(optimized: &mut Optimized) {
    if optimized.emitted.is_none() {
        return;
    }
    let started = std::time::Instant::now();
    let kept = optimized
        .pieces
        .iter_mut()
        .map(|(f, ..)| {
            let ops = super::instructions(f);
            (super::without_body(f), ops)
        })
        .collect();
    optimized.kept = Some(kept);
    optimized.emit_time += started.elapsed();
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use flowc_codegen::{ExitId, TraceId};
    use flowc_lang::{Symbol, Value};

    use super::*;
    use crate::jit::optimizing::{Pins, Source};
    use crate::jit::recording::{BridgeDone, KeyDone};
    use crate::jit::{Kind, Passed};
    use crate::record::{record, Heap, Recorded};
    use crate::to_ir::{End, Start};
    use crate::trace::{Check, TraceOp};

    const PROGRAM: &str = "start:
    i = 0
    goto head
head:
    c = i < 10
    if c goto body else goto done
body:
    i = i + 1
    goto head
done:
    print_and_stop(i)
";

    fn key(block: u32) -> Key {
        Key { graph: 0, block, greens: Default::default() }
    }

    /// The bridge of exit `exit`, as a job's result becomes.
    fn bridge(exit: u32, label: Symbol) -> Then {
        Then::Bridge(BridgeDone {
            exit: ExitId(exit),
            root: TraceId(0),
            values: 0,
            graph: 0,
            label,
            closes: false,
            passed: Passed::default(),
            jumps_to: None,
            short: false,
        })
    }

    /// Code of `kind` of hot spot `k`, as a job's result becomes.
    fn hot_spot(k: Key, kind: Kind) -> Then {
        Then::Key(KeyDone {
            key: k,
            kind,
            g: 0,
            label: Symbol::intern("head"),
            params: Vec::new(),
            unbound: Vec::new(),
            pins: Vec::new(),
            into: None,
            passed_keys: true,
            passed: Passed::default(),
            into_inner: false,
            at_once: false,
        })
    }

    /// Only a hot spot's loop on the worker stands in for a loop at the
    /// hot spots its recording passed (the same loop, rotated), pending
    /// and done alike; a bridge or an entry trace that passed one holds it
    /// back from being recorded at its own threshold, but is not the loop
    /// there that a hot spot inside it finds on its way.
    #[test]
    fn a_loop_on_the_worker_is_on_its_way_where_it_passed_and_a_bridge_is_not() {
        let head = Symbol::intern("head");
        on_a_worker(|mut w, trace| {
            assert!(w.submit(job(trace.clone()), |_| None, pending(bridge(3, head), vec![key(1)])).is_ok());
            assert!(w
                .submit(job(trace.clone()), |_| None, pending(hot_spot(key(5), Kind::Loop), vec![key(2)]))
                .is_ok());
            let entry = pending(hot_spot(key(6), Kind::Entry), vec![key(8)]);
            assert!(w.submit(job(trace.clone()), |_| None, entry).is_ok());
            assert!(w.passed(&key(1)) && !w.loop_passed(&key(1)));
            assert!(w.passed(&key(2)) && w.loop_passed(&key(2)));
            assert!(w.passed(&key(8)) && !w.loop_passed(&key(8)));
            wait_until(
                &mut w,
                |w| w.ready_keys.len() >= 2 && !w.ready_exits.is_empty(),
                "the worker did not finish three three-operation jobs",
            );
            // Done, not taken: the loop still stands in.
            assert!(!w.loop_passed(&key(1)) && w.loop_passed(&key(2)));
            assert!(w.take_key(&key(5)).is_some());
            assert!(!w.loop_passed(&key(2)));
        });
    }

    /// A full cache drops only the ready results that are stale on the
    /// JIT's clock: one whose holder may still come back (kept until 100)
    /// stays ready, and is taken as before; one kept until 10 goes at 50.
    #[test]
    fn a_full_cache_drops_only_stale_results() {
        let head = Symbol::intern("head");
        on_a_worker(|mut w, trace| {
            let kept = |then, until| Pending { keep_until: until, ..pending(then, vec![]) };
            assert!(w.submit(job(trace.clone()), |_| None, kept(bridge(3, head), 10)).is_ok());
            assert!(w.submit(job(trace.clone()), |_| None, kept(bridge(4, head), 100)).is_ok());
            assert!(w.submit(job(trace.clone()), |_| None, kept(hot_spot(key(5), Kind::Loop), 10)).is_ok());
            assert!(w.submit(job(trace.clone()), |_| None, kept(hot_spot(key(6), Kind::Loop), 100)).is_ok());
            wait_until(
                &mut w,
                |w| w.ready_keys.len() == 2 && w.ready_exits.len() == 2,
                "the worker did not finish four three-operation jobs",
            );
            assert_eq!(w.drop_ready(10), 0, "none is stale yet");
            assert_eq!(w.drop_ready(50), 2);
            assert!(w.take_exit(ExitId(3)).is_none() && w.take_key(&key(5)).is_none());
            assert!(w.take_exit(ExitId(4)).is_some() && w.take_key(&key(6)).is_some());
            assert_eq!(w.pending_jobs(), 0);
        });
    }

    /// A job no longer wanted gives up: the same bridge job optimizes
    /// while its stop is not set, and comes to nothing once it is (the
    /// run it was for has ended, and the running thread waits for the
    /// worker's job in hand) or once the JIT flushed its code after the
    /// job was sent. On the running thread jobs are always wanted.
    #[test]
    fn a_job_no_longer_wanted_gives_up() {
        let p = flowc_lang::syntax::parse("test", PROGRAM).expect("it parses");
        let (trace, shared) = fixture(&p, None);
        let straight = |trace| match job(trace) {
            Job::Straight(j) => *j,
            Job::Loop(_) => unreachable!("a bridge job"),
        };
        let (stop, flushes) = (AtomicBool::new(false), AtomicU64::new(0));
        let wanted = Wanted::until(&stop, &flushes, 0);
        assert!(!wanted.gone() && !Wanted::ALWAYS.gone());
        let done = optimizing::optimize_straight(&shared, straight(trace.clone()), wanted);
        assert!(done.is_some_and(|o| !o.pieces.is_empty()));
        flushes.fetch_add(1, Ordering::Relaxed);
        assert!(wanted.gone(), "sent before a flush");
        assert!(optimizing::optimize_straight(&shared, straight(trace.clone()), wanted).is_none());
        let after = Wanted::until(&stop, &flushes, 1);
        assert!(!after.gone(), "sent after it");
        assert!(optimizing::optimize_straight(&shared, straight(trace.clone()), after).is_some());
        stop.store(true, Ordering::Relaxed);
        assert!(after.gone());
        assert!(wanted.gone());
        assert!(optimizing::optimize_straight(&shared, straight(trace.clone()), wanted).is_none());
        assert!(optimizing::optimize_straight(&shared, straight(trace), Wanted::ALWAYS).is_some());
    }

    /// Through the worker: a job sent before a flush is given up and its
    /// result dropped, and one sent after it is wanted, optimized and
    /// taken as its own exit's (the results still one per job, in
    /// order).
    #[test]
    fn a_flush_gives_up_the_jobs_sent_before_it() {
        let p = flowc_lang::syntax::parse("test", PROGRAM).expect("it parses");
        let head = Symbol::intern("head");
        // Each job waits 20 ms before it starts: the flush comes first.
        let (trace, shared) = fixture(&p, Some(Duration::from_millis(20)));
        std::thread::scope(|scope| {
            let mut w = Worker::spawn(scope, shared.clone());
            assert!(w.submit(job(trace.clone()), |_| None, pending(bridge(3, head), vec![])).is_ok());
            assert_eq!(w.forget_all(), 1);
            assert!(w.submit(job(trace.clone()), |_| None, pending(bridge(4, head), vec![])).is_ok());
            wait_until(&mut w, |w| !w.ready_exits.is_empty(), "the worker did not finish the job after the flush");
            assert_eq!(w.discard, 0, "the first job's result came back first and was dropped");
            assert!(!w.ready_exits.contains_key(&ExitId(3)));
            let (_, result) = w.take_exit(ExitId(4)).expect("the second job is its exit's");
            assert!(result.is_some_and(|o| !o.pieces.is_empty()), "sent after the flush, it is wanted");
        });
    }

    /// `PROGRAM`'s loop, recorded, and what the worker needs to optimize
    /// it (each job held up by `delay`).
    fn fixture(p: &flowc_lang::Program, delay: Option<Duration>) -> (crate::trace::Trace, Arc<Shared<'_>>) {
        let module = flowc_frontend::lower(p, Symbol::intern("start")).expect("it lowers");
        let env: flowc_lang::Env = [(Symbol::intern("i"), Value::Int(0))].into_iter().collect();
        let Ok(Recorded::Loop { trace, .. }) = record(p, Symbol::intern("head"), env, &mut Heap::new(p), 1000) else {
            panic!("the loop records")
        };
        let shared = Shared::new(p, None, delay);
        shared.know(Arc::new(crate::run_ir::hints(&module)), true);
        let shared = Arc::new(shared);
        (*trace, shared)
    }

    /// A bridge job from `trace`, exiting at `head`.
    fn job(trace: crate::trace::Trace) -> Job {
        let head = Symbol::intern("head");
        let start = Start::frame(None, &[Symbol::intern("i")]);
        let source = Source { name: head, trace, start, end: End::Exit(head), pins: None };
        Job::Straight(Box::new(StraightJob {
            source,
            recorded: 3,
            into: None,
            fields: None,
            facts: Vec::new(),
            rows: Vec::new(),
        }))
    }

    /// Collects `w`'s results until `done` holds, failing with `what` the
    /// worker did not finish if a minute goes by first.
    /// Runs `f` with a worker for [`PROGRAM`] and a trace of its loop
    /// ([`fixture`]).
    fn on_a_worker(f: impl FnOnce(Worker, &crate::trace::Trace)) {
        let p = flowc_lang::syntax::parse("test", PROGRAM).expect("it parses");
        let (trace, shared) = fixture(&p, None);
        std::thread::scope(|scope| f(Worker::spawn(scope, shared), &trace));
    }

    fn wait_until(w: &mut Worker, done: impl Fn(&Worker) -> bool, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done(w) {
            assert!(Instant::now() < deadline, "{what}");
            w.collect();
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn pending(then: Then, passed: Vec<Key>) -> Pending {
        Pending { recorded: 3, what: "test".into(), then, passed, loan: Loan::default(), keep_until: 0 }
    }

    /// The worker's bookkeeping on a real job: a bridge optimized on the
    /// worker holds back the hot spots its recording passed until it is
    /// taken — also once the worker is done with it — and a passed hot
    /// spot coming round takes it, and then no hot spot is held. A job
    /// that names an object crosses with it lent; one naming a list that
    /// holds an object is handed back, never sent.
    #[test]
    fn a_job_holds_its_passed_hot_spots_back_until_taken_and_objects_cross_lent() {
        let p = flowc_lang::syntax::parse("test", PROGRAM).expect("it parses");
        let head = Symbol::intern("head");
        let (trace, shared) = fixture(&p, None);
        std::thread::scope(|scope| {
            let mut w = Worker::spawn(scope, shared.clone());
            assert!(w.submit(job(trace.clone()), |_| None, pending(bridge(3, head), vec![key(1), key(2)])).is_ok());
            assert!(w.has_exit(ExitId(3)) && w.passed(&key(1)) && w.passed(&key(2)));
            wait_until(&mut w, |w| !w.ready_exits.is_empty(), "the worker did not finish a three-operation bridge");
            // Done, not taken: still held back, still counted.
            assert!(w.passed(&key(1)) && w.has_exit(ExitId(3)));
            assert_eq!((w.pending_jobs(), w.pending_ops()), (1, 3));
            assert!(w.take_holding(&key(7)).is_empty());
            let taken = w.take_holding(&key(2));
            assert_eq!(taken.len(), 1);
            let optimized = taken[0].1.as_ref().expect("a bridge always optimizes");
            assert!(!optimized.pieces.is_empty());
            assert!(!w.passed(&key(1)) && !w.passed(&key(2)) && !w.has_exit(ExitId(3)));
            assert_eq!((w.pending_jobs(), w.pending_ops()), (0, 0));
            // Taken, it holds back nothing: not `key(1)` either, which
            // never came round (its list would grow with every result).
            assert!(w.holding.is_empty(), "{} hot spots still held", w.holding.len());
            // An object crosses lent, and the job's loan keeps it; it
            // comes back lent in the result. A list holding one cannot be
            // lent: that job is handed back.
            let layout = p.layout();
            let cell = flowc_lang::heap::Obj::new(1, Symbol::intern("cell"), layout);
            let promoted = |v: Value| {
                let mut t = trace.clone();
                t.ops.insert(
                    0,
                    TraceOp::Guard { check: Check::Value(Symbol::intern("i"), v), resume: Vec::new(), label: head },
                );
                job(t)
            };
            let listed = Value::list(vec![Value::Int(1), Value::list(vec![Value::Object(cell.clone())])]);
            assert!(w.submit(promoted(listed), |_| None, pending(bridge(4, head), vec![key(1)])).is_err());
            assert!(!w.has_exit(ExitId(4)) && !w.passed(&key(1)));
            assert!(w
                .submit(promoted(Value::Object(cell.clone())), |_| None, pending(bridge(5, head), vec![]))
                .is_ok());
            assert_eq!(w.pending.back().map(|p| p.loan.len()), Some(1));
            wait_until(&mut w, |w| !w.ready_exits.is_empty(), "the worker did not finish a four-operation bridge");
            let (done, result) = w.take_exit(ExitId(5)).expect("the bridge is ready");
            assert_eq!(done.loan.len(), 1);
            let f = &result.expect("a bridge always optimizes").pieces[0].0;
            let lent = f.insts.values().find_map(|i| match &i.kind {
                flowc_ir::InstKind::Guard { kind: flowc_ir::GuardKind::Value(_, Value::Object(o)), .. } => Some(o),
                _ => None,
            });
            assert!(lent.is_some_and(|o| o.is_lent() && *o == cell), "the guard's object, lent: {lent:?}");
            assert_eq!(w.pending_jobs(), 0);
            // An entry trace's pins read only integers: an object among
            // the values they are made from crosses as an atom, and the
            // job lends nothing (nor does its result keep the object).
            let mut pinned = job(trace.clone());
            if let Job::Straight(j) = &mut pinned {
                let pins = Pins::new(&[Symbol::intern("i")], &[Value::Object(cell.clone())], head, None, false);
                assert_eq!(pins.args, vec![Value::atom("object")]);
                j.source.pins = Some(pins);
            }
            assert!(w.submit(pinned, |_| None, pending(bridge(6, head), vec![])).is_ok());
            assert_eq!(w.pending.back().map(|p| p.loan.len()), Some(0));
            let ready = |w: &Worker| w.ready_exits.contains_key(&ExitId(6));
            wait_until(&mut w, ready, "the worker did not finish a four-operation bridge");
            assert!(w.take_exit(ExitId(6)).is_some());
        });
    }

    /// A run that leaves what it holds to the exit does not wait for its
    /// worker ([`Worker::spawn_detached`]): dropping the worker returns
    /// while its job in hand is still on it (held up here by the worker's
    /// delay), the thread still holding what it shares; a worker of the
    /// run's scope is waited for, and has let go of it when dropped.
    #[test]
    fn a_detached_worker_is_not_waited_for() {
        // Kept until the process exits, as `flowc run` keeps its program.
        let p: &'static flowc_lang::Program =
            Box::leak(Box::new(flowc_lang::syntax::parse("test", PROGRAM).expect("it parses")));
        let head = Symbol::intern("head");
        let (trace, shared) = fixture(p, Some(Duration::from_secs(60)));
        // SAFETY: the program is never freed; the job lends no object
        // and generates no code.
        #[allow(unsafe_code)]
        let mut w = unsafe { Worker::spawn_detached(shared.clone()) };
        assert!(w.submit(job(trace.clone()), |_| None, pending(bridge(1, head), Vec::new())).is_ok());
        drop(w);
        assert_eq!(Arc::strong_count(&shared), 2, "the worker's thread still holds what it shares");

        let (_, quick) = fixture(p, Some(Duration::from_millis(20)));
        std::thread::scope(|scope| {
            let mut w = Worker::spawn(scope, quick.clone());
            assert!(w.submit(job(trace), |_| None, pending(bridge(2, head), Vec::new())).is_ok());
            drop(w);
            assert_eq!(Arc::strong_count(&quick), 1, "the scoped worker was waited for");
        });
    }

    /// A worker [`MOST_QUEUED`] jobs behind is handed the next job back
    /// (the running thread optimizes it), and takes jobs again once it
    /// has done one.
    #[test]
    fn a_worker_far_behind_hands_jobs_back() {
        let p = flowc_lang::syntax::parse("test", PROGRAM).expect("it parses");
        let head = Symbol::intern("head");
        let (trace, shared) = fixture(&p, Some(Duration::from_millis(20)));
        std::thread::scope(|scope| {
            let mut w = Worker::spawn(scope, shared.clone());
            for e in 0..MOST_QUEUED as u32 {
                assert!(w.submit(job(trace.clone()), |_| None, pending(bridge(e, head), Vec::new())).is_ok());
            }
            let last = MOST_QUEUED as u32;
            assert!(w.submit(job(trace.clone()), |_| None, pending(bridge(last, head), Vec::new())).is_err());
            assert!(!w.has_exit(ExitId(last)));
            wait_until(&mut w, |w| !w.ready_exits.is_empty(), "the worker did not finish a job");
            assert!(w.submit(job(trace.clone()), |_| None, pending(bridge(last, head), Vec::new())).is_ok());
        });
    }

    /// Results not taken are dropped when the cache is full
    /// ([`Worker::drop_ready`]): done ones only, with all they held back
    /// and counted; a job still in hand stays.
    #[test]
    fn results_not_taken_are_dropped_and_jobs_in_hand_stay() {
        let p = flowc_lang::syntax::parse("test", PROGRAM).expect("it parses");
        let head = Symbol::intern("head");
        let (trace, shared) = fixture(&p, None);
        let (_, slow) = fixture(&p, Some(Duration::from_millis(200)));
        std::thread::scope(|scope| {
            let mut w = Worker::spawn(scope, shared.clone());
            assert!(w.submit(job(trace.clone()), |_| None, pending(bridge(1, head), vec![key(1)])).is_ok());
            wait_until(&mut w, |w| !w.ready_exits.is_empty(), "the worker did not finish a three-operation bridge");
            // A second job, held up: in hand while the first is dropped.
            let mut held = Worker::spawn(scope, slow);
            assert!(held.submit(job(trace.clone()), |_| None, pending(bridge(2, head), vec![key(2)])).is_ok());
            assert_eq!(held.drop_ready(1), 0);
            assert!(held.has_exit(ExitId(2)) && held.passed(&key(2)));
            assert_eq!(held.pending_jobs(), 1);
            assert_eq!(w.drop_ready(1), 1);
            assert!(!w.has_exit(ExitId(1)) && !w.passed(&key(1)) && w.holding.is_empty());
            assert_eq!((w.pending_jobs(), w.pending_ops()), (0, 0));
        });
    }

    /// The worker takes every job in the order sent, those sent while it
    /// looks for one and those sent after it has gone to sleep
    /// ([`SPIN`]), and stops once the running thread is gone.
    #[test]
    fn the_worker_takes_jobs_sent_while_it_spins_and_after_it_sleeps() {
        let (jobs, inbox) = mpsc::channel::<u32>();
        let sender = std::thread::spawn(move || {
            jobs.send(1).unwrap();
            jobs.send(2).unwrap();
            // Well past the spin: the worker is asleep when this comes.
            std::thread::sleep(SPIN * 20);
            jobs.send(3).unwrap();
        });
        let taken: Vec<u32> = std::iter::from_fn(|| next_job(&inbox)).collect();
        sender.join().unwrap();
        assert_eq!(taken, [1, 2, 3]);
    }
}
