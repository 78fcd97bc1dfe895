//! Tiered compilation of whole programs run in memory
//! (docs/architecture.md "Code generation").
//!
//! Compiling hot code with Cranelift's optimizations and the inline paths
//! of [`crate::lower`] costs about ten times what the same code costs
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
//!   driver counts calls down, and whose hot loop headers count
//!   iterations down; each such header is an entry of its region, so that
//!   every value live there is in the frame.
//! - At zero the code calls the runtime (`flowc_rt_tier_up`, function
//!   number, entry: 0 for a call, else the header's number plus one),
//!   which has the optimized tier compiled — lowered on the running
//!   thread, compiled by Cranelift on a worker thread while the tier-0
//!   code runs on ([`Tiering::background`]), one function at a time — and
//!   installs what is ready at a later count (the counter then restarts
//!   low, so the code asks again soon): its safepoints, traps and sites
//!   registered, the slot pointed at it. Without a worker it is compiled
//!   at once.
//! - A call counted at zero calls the optimized code if it is ready. A
//!   loop header continues in the optimized tier's *on-stack replacement
//!   entries* ([`crate::lower::lower_osr`]): the whole function compiled
//!   optimized, entered at that header with the values of the tier-0
//!   frame. From then on the loop runs optimized; calls run the optimized
//!   code once its call count has compiled it.
//! - A tier-up that fails leaves the tier-0 code in place: it is correct,
//!   only slower.
//!
//! - A huge function is tiered *region by region* instead
//!   ([`crate::plan::Plan::by_region`]): compiling all of it optimized
//!   is what lowering it for compile time avoids. Its tier-0 code is its
//!   regions as huge functions get them (with its hot loop headers made
//!   entries of their regions); each region has a slot (0 until its
//!   optimized tier is installed) and a counter ([`RegionTables`]),
//!   counted down on every entry into the region and at its hot loop
//!   headers. At zero the region asks the runtime for its optimized tier
//!   (entry [`REGION_ENTRY`] plus the region's number): the same region
//!   — same frame, same entries — lowered for speed
//!   ([`crate::plan::Plan::region_tier1`]) and compiled like a function's
//!   optimized tier. A region whose slot holds code continues there at
//!   every entry; a loop running in the region's tier 0 moves over at its
//!   header, the next time its count there reaches zero (the header is
//!   an entry: the frame is all either tier needs). The optimized region
//!   continues in the other regions' optimized tiers where their slots
//!   hold them, else in their tier-0 code.
//!
//! `flowc build` compiles everything ahead of time (an executable carries
//! no compiler), and traces are compiled only once hot: neither is tiered.
//! What never tiers up gets a huge function's hot regions compiled as
//! their optimized tier from the start ([`crate::plan::Plan::hot_region`]).
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
    /// Entries of a region of a function tiered region by region, and
    /// iterations of its hot loops, before it is compiled optimized.
    pub region_after: u32,
    /// Compile the optimized tier on a second core while tier-0 code runs
    /// on (if the machine has one), instead of at once.
    pub background: bool,
}

pub use crate::plan::policy::{
    REGION_TIER_UP_AFTER, REGION_TIER_UP_AFTER_IN_BACKGROUND, TIER_UP_AFTER, TIER_UP_AFTER_IN_BACKGROUND,
};

impl Default for Tiering {
    /// Tier up in the background if the machine has a second core, else
    /// at once.
    fn default() -> Tiering {
        match crate::cores() > 1 {
            true => Tiering {
                after: TIER_UP_AFTER_IN_BACKGROUND,
                region_after: REGION_TIER_UP_AFTER_IN_BACKGROUND,
                background: true,
            },
            false => Tiering { after: TIER_UP_AFTER, region_after: REGION_TIER_UP_AFTER, background: false },
        }
    }
}

/// The entry number `flowc_rt_tier_up` is given by a region of a function
/// tiered region by region, plus the region's number (function entries
/// are 0 for a call and small numbers for loop headers).
pub const REGION_ENTRY: u64 = 1 << 32;

/// The words the tier-0 code of a function tiered region by region reads
/// and writes, one per region; boxed, so their addresses, which the code
/// holds, stay put.
pub struct RegionTables {
    /// Each region's optimized tier, once installed (0: not yet).
    pub slots: Box<[Cell<u64>]>,
    /// Each region's counter: entries and iterations left before it
    /// tiers up.
    pub counters: Box<[Cell<u64>]>,
    /// Regions whose optimized tier failed to compile: their tier-0 code
    /// stays.
    pub failed: Box<[Cell<bool>]>,
}

impl RegionTables {
    /// Tables for `n` regions, none optimized, counters at `after`.
    pub fn new(n: usize, after: u64) -> RegionTables {
        RegionTables {
            slots: (0..n).map(|_| Cell::new(0)).collect(),
            counters: (0..n).map(|_| Cell::new(after)).collect(),
            failed: (0..n).map(|_| Cell::new(false)).collect(),
        }
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
    /// Functions a tier-0 loop has left for their on-stack replacement
    /// entries: a loop that comes back to ask is in another activation.
    pub osr_entered: Box<[Cell<bool>]>,
    /// What counters start from.
    pub after: u64,
    /// What the counters of regions of functions tiered region by region
    /// start from ([`RegionTables`]).
    pub region_after: u64,
    /// For each tiered function, its runs per run of the program
    /// ([`flowc_ir::frequency::function_runs`]), which its optimized tier
    /// is compiled with; `None` for the others.
    pub tiered: Vec<Option<Option<u32>>>,
    /// The tiered functions' indices, by name.
    pub index: HashMap<Symbol, usize>,
}

impl Tables {
    /// Tables for `n` functions, none tiered yet, counters at `tiering`'s
    /// thresholds.
    pub fn new(n: usize, tiering: Tiering) -> Tables {
        let after = tiering.after;
        Tables {
            slots: (0..n).map(|_| Cell::new(0)).collect(),
            counters: (0..n).map(|_| Cell::new(u64::from(after.max(1)))).collect(),
            optimized: (0..n).map(|_| Cell::new(false)).collect(),
            osr: (0..n).map(|_| Cell::new(0)).collect(),
            failed: (0..n).map(|_| Cell::new(false)).collect(),
            osr_entered: (0..n).map(|_| Cell::new(false)).collect(),
            after: u64::from(after.max(1)),
            region_after: u64::from(tiering.region_after.max(1)),
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
