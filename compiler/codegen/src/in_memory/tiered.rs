//! The optimized tier of tiered code run in memory ([`crate::tiers`]):
//! compiling it into a unit's JIT module while the unit's code runs (on
//! a worker thread, or at once), and installing it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use flowc_ir::Function;

use super::CodeUnit;
use crate::define::{self, Options};
use crate::lower::ObjectInfo;
use crate::runtime::{Ctx, TierUp};

/// The compiler of a tiered unit's optimized tier ([`crate::tiers`]):
/// what compiling one more function into the unit's JIT module needs.
/// Generated code reaches it through the context ([`TierUp`]).
pub(super) struct Tiers {
    /// The unit the optimized tiers are compiled into (its code running).
    pub(super) unit: Rc<RefCell<CodeUnit>>,
    /// The slots and counters the code uses.
    pub(super) tables: crate::tiers::Tables,
    /// The IR of each tiered function, by index.
    pub(super) functions: Vec<Option<Function>>,
    pub(super) objects: ObjectInfo,
    pub(super) options: Options,
    /// Where optimized tiers are compiled: on a worker thread in the
    /// background of the running code ([`crate::tiers::Tiering::background`]),
    /// else at once.
    pub(super) compiler: RefCell<crate::compile::Compiler>,
    /// The compilations started and not installed yet: function index and
    /// whether it is the on-stack replacement entries, by id.
    pub(super) pending: RefCell<Vec<(cranelift_module::FuncId, usize, bool)>>,
    pub(super) counts: TierUps,
}

/// What tiering up did while the code ran.
#[derive(Default)]
pub(super) struct TierUps {
    /// Optimized tiers compiled, and the time it took on the running thread.
    pub tier_ups: Cell<u32>,
    pub time: Cell<std::time::Duration>,
    /// Optimized tiers that failed to compile (their tier-0 code stayed).
    pub failures: Cell<u32>,
}

impl Tiers {
    /// Runs `work` with an environment for defining code in the unit's
    /// module; returns what it returned and the functions defined.
    fn with_env<T>(
        &self,
        work: impl FnOnce(&mut crate::lower::Building) -> Result<T, String>,
    ) -> Result<(T, Vec<define::DefinedCode>), String> {
        let mut unit = self.unit.borrow_mut();
        let mut compiler = self.compiler.borrow_mut();
        let (mut exits, mut safepoints) = (Vec::new(), Vec::new());
        let mut env = unit.env(&mut exits, &mut safepoints, &self.objects, &mut compiler, self.options.fuel);
        // Calls of tiered functions go through their code slots.
        env.tiers = Some(&self.tables);
        let result = work(&mut env)?;
        Ok((result, safepoints))
    }

    /// Starts compiling tiered function `k` optimized: called with its
    /// parameters (`osr` false), or as its on-stack replacement entries
    /// (true). Lowers it here; Cranelift compiles it on the worker, or at
    /// once without one ([`Tiers::install`] defines it).
    fn start(&self, k: usize, osr: bool) -> Result<(), String> {
        let f = self.functions[k].as_ref().ok_or("not a tiered function")?;
        if self.options.tiering.is_some_and(|t| t.background) && !self.compiler.borrow().has_worker() {
            // The worker starts with the first compilation: code that never
            // tiers up costs no thread.
            *self.compiler.borrow_mut() = crate::compile::Compiler::background();
        }
        let runs = self.tables.tiered[k].ok_or("not a tiered function")?;
        let (id, defined) = self.with_env(|env| {
            let sig = match osr {
                true => crate::lower::frame::region_signature(&*env.module),
                false => crate::lower::signature_of(&*env.module, f),
            };
            let id = env.module.declare_anonymous_function(&sig).map_err(|e| e.to_string())?;
            let facts = crate::lower::Facts::new(f).with_runs(f, runs);
            match osr {
                true => define::define_osr(env, f, id, facts)?,
                false => define::define_function(env, f, id, facts)?,
            }
            Ok(id)
        })?;
        self.pending.borrow_mut().push((id, k, osr));
        self.register(defined)
    }

    /// Defines what the worker has finished compiling, without waiting.
    fn install(&self) -> Result<(), String> {
        if self.pending.borrow().is_empty() {
            return Ok(());
        }
        let ((), defined) = self.with_env(crate::compile::poll)?;
        self.register(defined)
    }

    /// Makes the functions just defined runnable: finalizes them,
    /// registers their safepoints, and points their slots (or on-stack
    /// replacement entries) at them.
    fn register(&self, defined: Vec<define::DefinedCode>) -> Result<(), String> {
        if defined.is_empty() {
            return Ok(());
        }
        let mut unit = self.unit.borrow_mut();
        unit.jit.finalize_definitions().map_err(|e| e.to_string())?;
        let mut pending = self.pending.borrow_mut();
        let t = &self.tables;
        for d in &defined {
            if let Some(at) = pending.iter().position(|&(id, _, _)| id == d.id) {
                let (id, k, osr) = pending.remove(at);
                let address = unit.jit.get_finalized_function(id) as u64;
                match osr {
                    true => t.osr[k].set(address),
                    false => {
                        t.slots[k].set(address);
                        t.optimized[k].set(true);
                    }
                }
                self.counts.tier_ups.set(self.counts.tier_ups.get() + 1);
            }
        }
        unit.register(defined);
        Ok(())
    }

    /// The entry `osr` (see [`Tiers::start`]) of function `k`, if compiled.
    fn compiled(&self, k: usize, osr: bool) -> u64 {
        let t = &self.tables;
        match osr {
            true => t.osr[k].get(),
            false if t.optimized[k].get() => t.slots[k].get(),
            false => 0,
        }
    }
}

impl Tiers {
    /// [`TierUp::tier_up`] for function `k`: installs what the worker
    /// finished, starts compiling the entry asked for if it is not on its
    /// way (one compilation at a time), and returns it if ready.
    fn tier_up_now(&self, k: usize, osr: bool) -> u64 {
        let t = &self.tables;
        let failed = |j: usize| {
            t.failed[j].set(true);
            self.counts.failures.set(self.counts.failures.get() + 1);
        };
        if self.install().is_err() {
            // What was on its way failed: its functions keep their tier 0.
            let pending: Vec<_> = self.pending.borrow_mut().drain(..).collect();
            pending.into_iter().for_each(|(_, j, _)| failed(j));
        }
        // One compilation on its way at a time: the worker takes one, and
        // another would have this thread wait for it. The others start at
        // a later count.
        let busy = !self.pending.borrow().is_empty();
        // A loop that gets hot in tier 0 again after one has entered the
        // optimized tier (and so left tier 0 for good): another activation,
        // so the function is called hot, and its calls too get the
        // optimized tier (a main graph run again among them).
        let wanted = match osr && t.osr_entered[k].get() {
            true => (!t.optimized[k].get()).then_some(false),
            false => (self.compiled(k, osr) == 0).then_some(osr),
        };
        if let Some(which) = wanted.filter(|_| !t.failed[k].get() && !busy) {
            if self.start(k, which).is_err() {
                self.pending.borrow_mut().retain(|&(_, j, _)| j != k);
                failed(k);
            }
        }
        let address = if t.failed[k].get() { 0 } else { self.compiled(k, osr) };
        if osr && address != 0 {
            t.osr_entered[k].set(true);
        }
        address
    }
}

impl TierUp for Tiers {
    fn tier_up(&self, ctx: &mut Ctx, function: u64, entry: u64) -> u64 {
        let t = &self.tables;
        let k = function as usize;
        if k >= t.slots.len() || t.failed[k].get() {
            return 0;
        }
        let started = std::time::Instant::now();
        // A panic must not unwind into generated code (this is called from
        // it): it counts as a failure of every function not yet compiled,
        // whose tier-0 code stays (correct, only slower).
        let address = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.tier_up_now(k, entry != 0)))
            .unwrap_or_else(|_| {
                t.failed.iter().for_each(|f| f.set(true));
                self.pending.borrow_mut().clear();
                self.counts.failures.set(self.counts.failures.get() + 1);
                0
            });
        // Counting starts again: tier-0 code still running (other calls,
        // other loops) comes back here for code compiled by then, soon
        // while its compilation is on its way.
        let soon = if address == 0 && !t.failed[k].get() { (t.after / 16).max(1) } else { t.after };
        t.counters[k].set(soon);
        self.counts.time.set(self.counts.time.get() + started.elapsed());
        ctx.traps = self.unit.borrow().shared_traps();
        address
    }
}
