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
    /// The IR of each tiered function (by function or by region), by
    /// index.
    pub(super) functions: Vec<Option<Function>>,
    /// Each function tiered region by region as its tier-0 code was
    /// defined, by index.
    pub(super) by_region: Vec<Option<define::RegionTiered>>,
    pub(super) objects: ObjectInfo,
    pub(super) options: Options,
    /// Where optimized tiers are compiled: on a worker thread in the
    /// background of the running code ([`crate::tiers::Tiering::background`]),
    /// else at once.
    pub(super) compiler: RefCell<crate::compile::Compiler>,
    /// The compilations started and not installed yet: function index and
    /// what of it, by id.
    pub(super) pending: RefCell<Vec<(cranelift_module::FuncId, usize, Tier1)>>,
    pub(super) counts: TierUps,
}

/// What of a function an optimized tier is compiled for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Tier1 {
    /// The function, called with its parameters.
    Call,
    /// Its on-stack replacement entries.
    Osr,
    /// One region of a function tiered region by region.
    Region(usize),
}

/// What tiering up did while the code ran.
#[derive(Default)]
pub(super) struct TierUps {
    /// Optimized tiers compiled, and the time it took on the running thread.
    pub tier_ups: Cell<u32>,
    /// How many of them are regions of functions tiered region by region.
    pub regions: Cell<u32>,
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
    /// parameters, as its on-stack replacement entries, or one of its
    /// regions (`what`). Lowers it here; Cranelift compiles it on the
    /// worker, or at once without one ([`Tiers::install`] defines it).
    fn start(&self, k: usize, what: Tier1) -> Result<(), String> {
        let f = self.functions[k].as_ref().ok_or("not a tiered function")?;
        if self.options.fail_tier_ups {
            return Err("asked to fail (Options::fail_tier_ups)".into());
        }
        if self.options.tiering.is_some_and(|t| t.background) && !self.compiler.borrow().has_worker() {
            // The worker starts with the first compilation: code that never
            // tiers up costs no thread.
            *self.compiler.borrow_mut() = crate::compile::Compiler::background();
        }
        let (id, defined) = self.with_env(|env| {
            let sig = match what {
                Tier1::Osr | Tier1::Region(_) => crate::lower::frame::region_signature(&*env.module),
                Tier1::Call => crate::lower::signature_of(&*env.module, f),
            };
            let kind = match what {
                Tier1::Osr => "osr".to_string(),
                Tier1::Region(r) => format!("region{r}.tier1"),
                Tier1::Call => "tier1".to_string(),
            };
            let name = define::unique_name(&format!("{}.{kind}", f.name));
            let id = env
                .module
                .declare_function(&name, cranelift_module::Linkage::Local, &sig)
                .map_err(|e| e.to_string())?;
            if let Tier1::Region(r) = what {
                let tiered = self.by_region[k].as_ref().ok_or("not tiered region by region")?;
                define::define_region_tier1(env, f, tiered, r, id)?;
                return Ok(id);
            }
            let runs = self.tables.tiered[k].ok_or("not a tiered function")?;
            let facts = crate::lower::Facts::new(f).with_runs(f, runs);
            match what {
                Tier1::Osr => define::define_osr(env, f, id, facts)?,
                _ => define::define_function(env, f, id, facts)?,
            }
            Ok(id)
        })?;
        self.pending.borrow_mut().push((id, k, what));
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
                let (id, k, what) = pending.remove(at);
                let address = unit.jit.get_finalized_function(id) as u64;
                match what {
                    Tier1::Osr => t.osr[k].set(address),
                    Tier1::Call => {
                        t.slots[k].set(address);
                        t.optimized[k].set(true);
                    }
                    Tier1::Region(r) => {
                        if let Some(tiered) = &self.by_region[k] {
                            tiered.tables.slots[r].set(address);
                        }
                        self.counts.regions.set(self.counts.regions.get() + 1);
                    }
                }
                self.counts.tier_ups.set(self.counts.tier_ups.get() + 1);
            }
        }
        unit.register(defined);
        Ok(())
    }

    /// The code `what` (see [`Tiers::start`]) of function `k`, if compiled.
    fn compiled(&self, k: usize, what: Tier1) -> u64 {
        let t = &self.tables;
        match what {
            Tier1::Osr => t.osr[k].get(),
            Tier1::Call if t.optimized[k].get() => t.slots[k].get(),
            Tier1::Call => 0,
            Tier1::Region(r) => self.by_region[k].as_ref().map_or(0, |tiered| tiered.tables.slots[r].get()),
        }
    }

    /// Whether `what` of function `k` failed to compile (its tier-0 code
    /// stays): the flag, to read or to set.
    fn failed(&self, k: usize, what: Tier1) -> &Cell<bool> {
        match (what, &self.by_region[k]) {
            (Tier1::Region(r), Some(tiered)) => &tiered.tables.failed[r],
            _ => &self.tables.failed[k],
        }
    }

    /// The counter the tier-0 code of `what` of function `k` counts down,
    /// and what it starts from.
    fn counter(&self, k: usize, what: Tier1) -> (&Cell<u64>, u64) {
        match (what, &self.by_region[k]) {
            (Tier1::Region(r), Some(tiered)) => (&tiered.tables.counters[r], self.tables.region_after),
            _ => (&self.tables.counters[k], self.tables.after),
        }
    }
}

impl Tiers {
    /// [`TierUp::tier_up`] for `what` of function `k`: installs what the
    /// worker finished, starts compiling the code asked for if it is not
    /// on its way (one compilation at a time), and returns it if ready.
    fn tier_up_now(&self, k: usize, what: Tier1) -> u64 {
        let t = &self.tables;
        let fail = |j: usize, what: Tier1| {
            self.failed(j, what).set(true);
            self.counts.failures.set(self.counts.failures.get() + 1);
        };
        if self.install().is_err() {
            // What was on its way failed: its functions keep their tier 0.
            let pending: Vec<_> = self.pending.borrow_mut().drain(..).collect();
            pending.into_iter().for_each(|(_, j, what)| fail(j, what));
        }
        // One compilation on its way at a time: the worker takes one, and
        // another would have this thread wait for it. The others start at
        // a later count.
        let busy = !self.pending.borrow().is_empty();
        // A loop that gets hot in tier 0 again after one has entered the
        // optimized tier (and so left tier 0 for good): another activation,
        // so the function is called hot, and its calls too get the
        // optimized tier (a main graph run again among them).
        let wanted = match what == Tier1::Osr && t.osr_entered[k].get() {
            true => (!t.optimized[k].get()).then_some(Tier1::Call),
            false => (self.compiled(k, what) == 0).then_some(what),
        };
        if let Some(which) = wanted.filter(|&which| !self.failed(k, which).get() && !busy) {
            if self.start(k, which).is_err() {
                self.pending.borrow_mut().retain(|&(_, j, w)| (j, w) != (k, which));
                fail(k, which);
            }
        }
        let address = if self.failed(k, what).get() { 0 } else { self.compiled(k, what) };
        if what == Tier1::Osr && address != 0 {
            t.osr_entered[k].set(true);
        }
        address
    }
}

impl TierUp for Tiers {
    /// `entry`: 0 for a call, a loop header's number plus one for on-stack
    /// replacement, or [`crate::tiers::REGION_ENTRY`] plus a region's
    /// number.
    fn tier_up(&self, ctx: &mut Ctx, function: u64, entry: u64) -> u64 {
        let t = &self.tables;
        let k = function as usize;
        let what = match entry {
            0 => Tier1::Call,
            e if e >= crate::tiers::REGION_ENTRY => Tier1::Region((e - crate::tiers::REGION_ENTRY) as usize),
            _ => Tier1::Osr,
        };
        let known = match (what, self.by_region.get(k)) {
            (Tier1::Region(r), Some(Some(tiered))) => r < tiered.tables.slots.len(),
            (Tier1::Region(_), _) => false,
            _ => k < t.slots.len(),
        };
        if !known || self.failed(k, what).get() {
            return 0;
        }
        let started = std::time::Instant::now();
        // A panic must not unwind into generated code (this is called from
        // it): it counts as a failure of every function not yet compiled,
        // whose tier-0 code stays (correct, only slower).
        let address = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.tier_up_now(k, what)))
            .unwrap_or_else(|_| {
                t.failed.iter().for_each(|f| f.set(true));
                for tiered in self.by_region.iter().flatten() {
                    tiered.tables.failed.iter().for_each(|f| f.set(true));
                }
                self.pending.borrow_mut().clear();
                self.counts.failures.set(self.counts.failures.get() + 1);
                0
            });
        // Counting starts again: tier-0 code still running (other calls,
        // other loops) comes back here for code compiled by then, soon
        // while its compilation is on its way.
        let (counter, after) = self.counter(k, what);
        counter.set(if address == 0 && !self.failed(k, what).get() { (after / 16).max(1) } else { after });
        self.counts.time.set(self.counts.time.get() + started.elapsed());
        ctx.traps = self.unit.borrow().shared_traps();
        address
    }
}
