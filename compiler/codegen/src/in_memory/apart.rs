//! Baseline code generated away from the running thread.
//!
//! A JIT run optimizes traces on a worker thread while the program runs
//! on; generating their machine code there too leaves the running thread
//! only installing it (a copy into the code heap and some bookkeeping).
//! Code needs of the cache it goes into only what an [`Apart`] carries,
//! taken on the running thread when the job is handed over:
//! - the traces it may jump to, with their code slots (which never move);
//! - for a bridge, the frame of the exit's trace it runs in;
//! - the objects' layout, whether it counts fuel, how often linked exits
//!   check in.
//!
//! What only the running thread can give, the code does without until it
//! is installed ([`super::TraceCache::install_emitted`]):
//! - exits are numbered by the trace; each has a link slot the code makes
//!   and holds the address of, which the cache adopts and tells the
//!   exit's number;
//! - each trace's code slot is made here too, so that the pieces of one
//!   job jump to one another (a loop's preamble into its body);
//! - constants that are not immediate words (lists, big integers) become
//!   cells of the running thread's heap: the code's immediates for them
//!   are filled in when it is installed;
//! - sites of runtime calls that can fail are numbered in a table of
//!   their own, shared with the cache, whose numbers start at [`SITES`];
//! - a trace that traps, or calls a function of the program, is refused
//!   here, and compiled on the running thread as before.

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap as HashMap;

use flowc_ir::Function;
use flowc_lang::Symbol;

use super::{inherited, install_baseline_batch, Inherited, Piece, TraceCache, TraceId};
use crate::lower::{ObjectInfo, Shape, SiteTable, TraceRef};
use crate::ExitId;

/// The first site number of code generated away from the running thread
/// (the cache's own numbers stay far below it).
pub const SITES: u64 = 1 << 40;

/// What generating a job's baseline code needs of the trace cache it
/// goes into (see the module docs), taken on the running thread.
pub struct Apart {
    objects: ObjectInfo,
    /// The traces the job's code may jump to, by name.
    traces: HashMap<Symbol, TraceRef>,
    /// For a bridge of one piece, the frame it runs in.
    inherit: Option<Inherited>,
    fuel: bool,
    link_check: Option<u64>,
    sites: Arc<Mutex<SiteTable>>,
    /// Where the running thread will copy the code in, faulted in here
    /// once it is made ([`super::code_heap::Ahead`]: from where the
    /// heap's installed code ends by then, in the chunk it ends in then,
    /// if that is still this one).
    ahead: Option<super::code_heap::Ahead>,
}

// SAFETY: the raw pointers an `Apart` holds (the code slots of
// `traces`) point at boxed slots the cache owns and never frees while it
// lives; the worker that uses it only takes their addresses, never reads
// through them (the code reads them when it runs, on the running
// thread). A cache dropped while the worker still has a job made for it
// (the JIT flushing a full cache) leaves only code that is never
// installed: `install_emitted` refuses code made for another cache (by
// its site table, which the `Emitted` keeps alive, so no later cache can
// have its address), and the JIT drops such results unopened. Its
// `Ahead` holds addresses too, which it only advises the kernel on
// (see `Ahead::fault_in`), never reads or writes through. The rest
// is plain data, and the site table is behind a lock.
#[allow(unsafe_code)]
unsafe impl Send for Apart {}

/// A job's baseline code, generated away from the running thread, to
/// install in order ([`TraceCache::install_emitted`]).
pub struct Emitted {
    pieces: Vec<Piece>,
    inherit: Option<Inherited>,
    /// The site table of the cache it was made for, which names that
    /// cache (its code holds that cache's slots).
    sites: Arc<Mutex<SiteTable>>,
}

// SAFETY: the code's constants are values of a job: integers, atoms, big
// integers and lists of those, shared by atomic counts, and object handles
// lent by the running thread (`flowc_lang::heap::lend`: they pin nothing,
// and the job's loan keeps their objects; the JIT roots them where it
// installs the code). Its exits' and code slots are boxes no one else
// refers to yet but the code itself.
#[allow(unsafe_code)]
unsafe impl Send for Emitted {}

impl Emitted {
    /// How many pieces of code it holds.
    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }
}

/// Where site `n` is, if code generated away from the running thread
/// numbered it in `sites`.
pub(super) fn location(sites: &Mutex<SiteTable>, n: u64) -> Option<flowc_lang::interp::Location> {
    if n < SITES {
        return None;
    }
    // A worker that panicked while numbering left the lock poisoned: the
    // sites numbered before are still right.
    sites.lock().unwrap_or_else(|e| e.into_inner()).location(n)
}

impl Apart {
    /// Generates the baseline code of traces `fs` (each may jump to those
    /// before it, and to the traces this was made with), whose shapes are
    /// `shapes`; says why not when baseline code refuses one, or it traps
    /// or calls a function (the running thread compiles those).
    pub fn emit(&self, fs: &[&Function], shapes: &[Shape]) -> Result<Emitted, &'static str> {
        self.emit_while(fs, shapes, &|| true)
    }

    /// As [`Apart::emit`], giving up before each trace once `wanted` says
    /// the code is no longer wanted (the run it was for has ended, and the
    /// running thread waits for the worker's job in hand; or the JIT
    /// dropped the cache it was for). Code still wanted once made has the
    /// pages it will be copied to faulted in here
    /// ([`super::code_heap::Ahead::fault_in`]).
    pub fn emit_while(
        &self,
        fs: &[&Function],
        shapes: &[Shape],
        wanted: &dyn Fn() -> bool,
    ) -> Result<Emitted, &'static str> {
        if shapes.len() != fs.len() {
            return Err("a shape for each trace");
        }
        let mut traces = self.traces.clone();
        let mut sites = self.sites.lock().unwrap_or_else(|e| e.into_inner());
        let functions = crate::baseline::Functions::default();
        let mut pieces = Vec::with_capacity(fs.len());
        for (k, (f, shape)) in fs.iter().zip(shapes).enumerate() {
            if traces.contains_key(&f.name) {
                return Err("a trace named as another");
            }
            if !wanted() {
                return Err("no longer wanted");
            }
            let mut target = crate::baseline::Target {
                objects: &self.objects,
                traces: &traces,
                sites: &mut sites,
                traps: None,
                fuel: self.fuel,
                link_check: self.link_check,
            };
            // A bridge is one piece (as on the running thread).
            let parent = self.inherit.as_ref().filter(|_| k == 0 && fs.len() == 1).map(Inherited::as_parent);
            let mut code = crate::baseline::compile(&mut target, f, shape, &functions, parent)?;
            // The code waits, held by its result, until the running thread
            // installs it (a hot spot's may wait for its next arrival):
            // without the assembler's room to spare, about half of it
            // (public BF hanoi.b: 2.1 MB of the run's peak).
            code.code.shrink_to_fit();
            let code_slot: Box<crate::lower::CodeSlot> = Box::default();
            traces.insert(f.name, TraceRef { params: f.params.len(), slot: &code_slot[0] });
            let params = crate::define::params(f);
            pieces.push(Piece { name: f.name, params, code, code_slot: Some(code_slot) });
        }
        drop(sites);
        // (The pages the code will be copied to: not for code nobody waits
        // for.)
        if let (Some(ahead), true) = (&self.ahead, wanted()) {
            ahead.fault_in(pieces.iter().map(|p| p.code.code.len().next_multiple_of(16)).sum());
        }
        let inherit = self.inherit.clone().filter(|_| fs.len() == 1);
        Ok(Emitted { pieces, inherit, sites: self.sites.clone() })
    }
}

impl TraceCache {
    /// What a worker needs to generate baseline code for this cache
    /// ([`Apart`]): code that may jump to the traces named `targets`
    /// (those not compiled are left out: code that jumps to one is
    /// refused), and for a bridge of exit `from`, of one piece, to run in
    /// the frame of the exit's trace.
    pub fn apart(&self, targets: &[Symbol], from: Option<ExitId>) -> Apart {
        let inner = self.inner.borrow();
        let traces = targets.iter().filter_map(|t| Some((*t, *inner.names.get(t)?))).collect();
        Apart {
            objects: inner.objects.clone(),
            traces,
            inherit: from.and_then(|e| inherited(&inner, e)),
            fuel: inner.options.fuel,
            link_check: inner.options.link_check.map(u64::next_power_of_two),
            sites: inner.apart_sites.clone(),
            ahead: inner.code_heap.ahead(),
        }
    }

    /// Installs code generated away from the running thread ([`Apart`]),
    /// its pieces in order; their numbers. Nothing is installed when the
    /// code was made for another cache (it jumps through that cache's
    /// slots) or a name is taken; when installing one fails, those before
    /// it are.
    pub fn install_emitted(&self, emitted: Emitted) -> Result<Vec<TraceId>, String> {
        let mut guard = self.inner.borrow_mut();
        let inner = &mut *guard;
        if !Arc::ptr_eq(&emitted.sites, &inner.apart_sites) {
            return Err("code made for another trace cache".to_string());
        }
        for p in &emitted.pieces {
            if inner.names.contains_key(&p.name) {
                return Err(format!("a trace named {} is compiled already", p.name));
            }
        }
        let Emitted { pieces, inherit, .. } = emitted;
        install_baseline_batch(inner, pieces, inherit.as_ref())
    }
}
