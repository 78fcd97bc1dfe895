//! Tiered compilation of whole programs run in memory
//! (docs/architecture.md "Tiered compilation").
//!
//! Compiling hot code with Cranelift's optimizations and the inline paths
//! of [`crate::lower`] costs some 2 µs and 1.3 KB of peak memory per
//! Cranelift instruction, about ten times what the same code costs
//! lowered for compile time (runtime calls, regions, Cranelift's cheap
//! settings). Static run bounds ([`flowc_ir::frequency`]) tell cold code
//! from code that may be hot, but not how hot: a function called from a
//! loop counted from the input may run five times or five million. So a
//! function that may be hot starts in *tier 0*, lowered like cold code,
//! and is compiled optimized (*tier 1*) only once it has proved hot:
//!
//! - Each tiered function has a *code slot*, a word holding the address
//!   of its current code, and a *counter*. Every call of a tiered
//!   function loads its slot and calls what it holds; the slot starts at
//!   the tier-0 code.
//! - Tier-0 code is a split function ([`crate::lower::frame`]) whose
//!   driver counts the calls down; at zero it calls the runtime
//!   (`flowc_rt_tier_up`), which compiles the function optimized into the
//!   same JIT module, registers its safepoints, points the slot at it and
//!   returns its address, which the driver then calls for the call in
//!   progress. From then on every call runs the optimized code.
//! - A tier-up that fails leaves the tier-0 code in place: it is correct,
//!   only slower.
//!
//! `flowc build` compiles everything ahead of time (an executable carries
//! no compiler), and traces are compiled only once hot: neither is tiered.
//! The tables live as long as the code ([`Tables`]); the compiler that
//! tiers up is [`crate::in_memory`]'s.

use std::cell::Cell;

use rustc_hash::FxHashMap as HashMap;

use flowc_lang::Symbol;

/// When functions are tiered ([`crate::define::Options::tiering`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tiering {
    /// Calls of a function, and iterations of its hot loops, before it is
    /// compiled optimized.
    pub after: u32,
}

/// How many calls a tiered function runs in tier 0 ([`Tiering::after`]):
/// the bound below which code counts as cold
/// ([`crate::lower::COLD_RUNS`]), for the same reason.
pub const TIER_UP_AFTER: u32 = crate::lower::COLD_RUNS;

impl Default for Tiering {
    fn default() -> Tiering {
        Tiering { after: TIER_UP_AFTER }
    }
}

/// The words tiered code reads and writes, one per function of the
/// program (by its index in what [`crate::define::define`] compiles);
/// boxed, so their addresses, which the code holds, stay put.
pub struct Tables {
    /// Each function's code slot: the address its calls go to (0 for a
    /// function that is not tiered, which is called directly).
    pub slots: Box<[Cell<u64>]>,
    /// Each function's counter: calls left before it tiers up.
    pub counters: Box<[Cell<u64>]>,
    /// Which functions' slots hold their optimized code.
    pub optimized: Box<[Cell<bool>]>,
    /// Each function's on-stack replacement entries into its optimized
    /// tier, once compiled (0: not yet).
    pub osr: Box<[Cell<u64>]>,
    /// Functions whose optimized tier failed to compile: their tier-0
    /// code stays.
    pub failed: Box<[Cell<bool>]>,
    /// What counters start from.
    pub after: u64,
    /// For each tiered function, its runs per run of the program
    /// ([`flowc_ir::frequency::function_runs`]), which its optimized tier
    /// is compiled with; `None` for the others.
    pub tiered: Vec<Option<Option<u32>>>,
    /// The tiered functions' indices, by name.
    pub index: HashMap<Symbol, usize>,
}

impl Tables {
    /// Tables for `n` functions, none tiered yet, counters at `after`.
    pub fn new(n: usize, after: u32) -> Tables {
        Tables {
            slots: (0..n).map(|_| Cell::new(0)).collect(),
            counters: (0..n).map(|_| Cell::new(u64::from(after.max(1)))).collect(),
            optimized: (0..n).map(|_| Cell::new(false)).collect(),
            osr: (0..n).map(|_| Cell::new(0)).collect(),
            failed: (0..n).map(|_| Cell::new(false)).collect(),
            after: u64::from(after.max(1)),
            tiered: vec![None; n],
            index: HashMap::default(),
        }
    }

    /// The address of function `name`'s code slot, if it is tiered.
    pub fn slot_of(&self, name: Symbol) -> Option<u64> {
        self.index.get(&name).map(|&k| self.slots[k].as_ptr() as u64)
    }

    /// The address of function `k`'s counter.
    pub fn counter(&self, k: usize) -> u64 {
        self.counters[k].as_ptr() as u64
    }
}
