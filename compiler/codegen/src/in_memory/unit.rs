//! [`CodeUnit`]: one JIT module and everything its code needs while it
//! runs — the constants it points at, the errors its traps raise, the
//! sites of its runtime calls, the safepoints the collector reads, a
//! record of each function placed — and the contexts runs of it use.
//!
//! A program compiled ahead of time ([`super::Native`], with the
//! optimized tiers compiled into it while it runs) and the traces and
//! bridges of a JIT run ([`super::TraceCache`]) each have one unit. Code
//! is added to a unit in two steps: lowering and defining it through an
//! environment ([`CodeUnit::env`]), then registering what was placed
//! ([`CodeUnit::register`] for Cranelift's code, [`CodeUnit::register_at`]
//! for code copied in elsewhere, the baseline compiler's), which makes
//! its safepoints and traps known to every context of the unit.
//!
//! Contexts ([`CodeUnit::context`]) point at the unit's safepoints and
//! share its traps; the unit outlives them (they are made per run, or
//! kept beside the unit by its owner), and a context kept for another run
//! is brought up to date by [`CodeUnit::refresh`].

use std::mem::ManuallyDrop;
use std::rc::Rc;

use cranelift_jit::{ArenaMemoryProvider, JITBuilder, JITModule};
use rustc_hash::FxHashMap as HashMap;

use flowc_ir::{Function, Module};
use flowc_lang::heap::{Layout, Root};
use flowc_lang::interp::{ErrorKind, Location};
use flowc_lang::Symbol;
use flowc_runtime::frames::StackMaps;

use crate::code_map::PlaceRange;
use crate::define::{self, isa};
use crate::lower::{Constants, ObjectInfo, SiteTable, TraceExit};
use crate::runtime::{self, Ctx};

/// A JIT builder for code of about `insts` IR instructions, with the
/// runtime's symbols.
///
/// All code and data of one module go in one reserved region of address
/// space ([`ArenaMemoryProvider`]; only what is used is committed). Calls
/// between a module's functions are PC-relative with 32-bit offsets, so the
/// functions must lie within 2 GiB of each other: cranelift-jit's default
/// provider maps each function separately, and another thread's 1 GiB stack
/// (see [`crate::with_stack`]) mapped in between made such a call
/// unencodable. The region is 512 bytes per instruction plus 4 MiB, at most
/// 1 GiB; code that does not fit is a compile error, not a crash.
pub(super) fn builder(insts: usize) -> Result<JITBuilder, String> {
    const MIB: usize = 1 << 20;
    let reserve = insts.saturating_mul(512).saturating_add(4 * MIB).min(1024 * MIB);
    let memory = ArenaMemoryProvider::new_with_size(reserve).map_err(|e| format!("reserving JIT memory: {e}"))?;
    let mut builder = JITBuilder::with_isa(isa()?, cranelift_module::default_libcall_names());
    builder.memory_provider(Box::new(memory));
    for (name, ptr) in runtime::symbols() {
        builder.symbol(name, ptr);
    }
    Ok(builder)
}

/// The instructions and blocks of `functions`, for [`builder`].
pub(super) fn size<'f>(functions: impl IntoIterator<Item = &'f Function>) -> usize {
    functions.into_iter().map(|f| f.insts.len() + f.blocks.len()).sum()
}

/// A JIT module that unmaps its code and data when dropped. cranelift-jit
/// itself never unmaps finalized code (a stray function pointer would stay
/// valid); here the module lives in a [`CodeUnit`], and every pointer into
/// its memory is held by the unit's owner, so none outlives it. Without
/// this, every compilation left its mappings behind, and a long run (the
/// engine fuzzer compiles tens of thousands of programs) reached the
/// kernel's limit on mappings.
pub(super) struct Code(ManuallyDrop<JITModule>);

impl Code {
    pub(super) fn new(builder: JITBuilder) -> Code {
        Code(ManuallyDrop::new(JITModule::new(builder)))
    }
}

impl std::ops::Deref for Code {
    type Target = JITModule;
    fn deref(&self) -> &JITModule {
        &self.0
    }
}

impl std::ops::DerefMut for Code {
    fn deref_mut(&mut self) -> &mut JITModule {
        &mut self.0
    }
}

impl Drop for Code {
    fn drop(&mut self) {
        // SAFETY: the module is taken once, here, and never used again; no
        // pointer into its memory outlives the owner (see the type's docs).
        unsafe { ManuallyDrop::take(&mut self.0).free_memory() }
    }
}

/// One function's code placed in a unit: its IR name, address, size and
/// places ([`crate::code_map`]).
pub(super) struct Placed {
    pub name: Symbol,
    pub address: usize,
    pub size: usize,
    pub places: Vec<PlaceRange>,
}

/// A JIT module and what its code needs while it runs (see the module
/// docs).
pub(super) struct CodeUnit {
    pub jit: Code,
    /// The runtime's functions and the program's, as declared in `jit`.
    pub runtime: define::RuntimeImports,
    pub funcs: HashMap<Symbol, (cranelift_module::FuncId, usize)>,
    /// Constants the code points at (lists, big integers), kept alive.
    pub pool: Vec<Root>,
    /// Errors raised by `trap`, by index.
    pub traps: Vec<ErrorKind>,
    /// `traps` as contexts share it: remade when code added traps.
    shared_traps: Rc<[ErrorKind]>,
    /// The sites of the code's runtime calls that can fail.
    pub sites: SiteTable,
    /// The code's safepoints, for the collector: allocated once, read and
    /// written only through this pointer, since contexts keep it while
    /// code is added (a reference would be invalidated by the writes).
    /// Freed on drop.
    stack_maps: *mut StackMaps,
    /// The functions registered, in order.
    placed: Vec<Placed>,
    /// The slots of the objects the code makes.
    layout: &'static Layout,
    /// The immutable fields of the program, as contexts check them.
    immutable: Rc<[(Symbol, Symbol)]>,
}

impl CodeUnit {
    /// A unit of module `jit`, with its declarations `runtime` and
    /// `funcs`, for code whose objects have `layout` and whose program
    /// declares `hints.immutable`.
    pub fn new(
        jit: Code,
        runtime: define::RuntimeImports,
        funcs: HashMap<Symbol, (cranelift_module::FuncId, usize)>,
        layout: &'static Layout,
        hints: &Module,
    ) -> CodeUnit {
        let immutable: Vec<(Symbol, Symbol)> =
            hints.immutable.iter().flat_map(|(c, fs)| fs.iter().map(move |f| (*c, *f))).collect();
        CodeUnit {
            jit,
            runtime,
            funcs,
            pool: Vec::new(),
            traps: Vec::new(),
            shared_traps: Rc::from(Vec::new()),
            sites: SiteTable::default(),
            stack_maps: Box::into_raw(Box::<StackMaps>::default()),
            placed: Vec::new(),
            layout,
            immutable: immutable.into(),
        }
    }

    /// An environment for lowering code into the unit: its exits go to
    /// `exits`, what it defines to `safepoints` (for [`CodeUnit::register`]).
    /// Nothing is split, linked or tiered unless the caller sets it.
    pub fn env<'u>(
        &'u mut self,
        exits: &'u mut Vec<TraceExit>,
        safepoints: &'u mut Vec<define::DefinedCode>,
        objects: &'u ObjectInfo,
        compiler: &'u mut crate::compile::Compiler,
        fuel: bool,
    ) -> crate::lower::Building<'u> {
        crate::lower::Building {
            module: &mut *self.jit,
            funcs: &self.funcs,
            runtime: &self.runtime,
            constants: Constants::Rooted(&mut self.pool),
            traps: &mut self.traps,
            exits,
            sites: &mut self.sites,
            fuel,
            split: None,
            links: None,
            safepoints,
            objects,
            compiler,
            tiers: None,
        }
    }

    /// Registers the functions just defined (and finalized) in the
    /// module: their code and safepoints, and the traps they added.
    pub fn register(&mut self, defined: Vec<define::DefinedCode>) {
        let mut points = Vec::with_capacity(defined.len());
        for d in defined {
            let address = self.jit.get_finalized_function(d.id) as usize;
            self.placed.push(Placed { name: d.name, address, size: d.size as usize, places: d.places });
            points.push((address, d.safepoints));
        }
        self.stack_maps().add(points);
        self.share_traps();
    }

    /// Registers function `name`'s code, `size` bytes placed outside the
    /// module at `address`: its record, its safepoints (the offsets of its
    /// calls' returns, each with the same root words `slots`), and the
    /// traps it added. Returns its record's index in [`CodeUnit::placed`].
    pub fn register_at(
        &mut self,
        name: Symbol,
        address: usize,
        size: usize,
        returns: &[u32],
        slots: std::sync::Arc<[u32]>,
    ) -> usize {
        self.placed.push(Placed { name, address, size, places: Vec::new() });
        self.stack_maps().add_shared(address, returns, slots);
        self.share_traps();
        self.placed.len() - 1
    }

    /// The functions registered, in order.
    pub fn placed(&self) -> &[Placed] {
        &self.placed
    }

    /// The safepoints, to add to.
    fn stack_maps(&mut self) -> &mut StackMaps {
        // SAFETY: `stack_maps` is the live allocation the unit owns (made
        // in `new`, freed in `drop`); no collection reads it while code is
        // registered (collections run inside allocations, not during
        // this), and `&mut self` keeps any other borrow of it out.
        unsafe { &mut *self.stack_maps }
    }

    /// Shares the traps with contexts made from now on, if code added any.
    fn share_traps(&mut self) {
        if self.shared_traps.len() != self.traps.len() {
            self.shared_traps = self.traps.clone().into();
        }
    }

    /// A context for a run of the unit's code, at most `max_depth` calls
    /// deep.
    pub fn context(&self, max_depth: usize) -> Ctx {
        let mut ctx = Ctx::new(max_depth as u64, self.layout, self.immutable.clone(), self.shared_traps.clone());
        // SAFETY: the maps are those of every function of this unit, the
        // only code the context runs (code added later adds to them in
        // place), and live (boxed, unmoved) as long as the unit; contexts
        // do not outlive it (see the module docs).
        unsafe { ctx.set_stack_maps_ptr(self.stack_maps) };
        ctx
    }

    /// Context `ctx`, made by [`CodeUnit::context`] for an earlier run,
    /// ready for another at most `max_depth` calls deep; `None` if code
    /// added since raised traps it does not know (make a new one).
    pub fn refresh(&self, mut ctx: Box<Ctx>, max_depth: usize) -> Option<Box<Ctx>> {
        if !Rc::ptr_eq(&ctx.traps, &self.shared_traps) {
            return None;
        }
        ctx.reset();
        ctx.max_depth = max_depth as u64;
        Some(ctx)
    }

    /// The traps as contexts share them now (a running context is given
    /// them again when code added while it runs raised more).
    pub fn shared_traps(&self) -> Rc<[ErrorKind]> {
        self.shared_traps.clone()
    }

    /// Where the failing runtime call numbered `site` is (without the
    /// statement's text: see `Location::with_text`).
    pub fn location(&self, site: u64) -> Option<Location> {
        self.sites.location(site)
    }
}

impl Drop for CodeUnit {
    fn drop(&mut self) {
        // SAFETY: made by `Box::into_raw` in `new`, freed once, here;
        // contexts pointing at it do not outlive the unit.
        drop(unsafe { Box::from_raw(self.stack_maps) });
    }
}
