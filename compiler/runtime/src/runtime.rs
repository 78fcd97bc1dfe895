//! The runtime generated code calls: slow paths of operations, objects,
//! printing, errors. Every function takes the run's [`Ctx`] and returns a
//! [`Word`]; [`STOP`] means the program stopped (an error was recorded, or
//! it printed), and generated code then returns [`STOP`] up the call chain.
//!
//! Objects, big integers and lists live in the heap ([`flowc_heap::heap`]);
//! words point at their cells.

use flowc_heap::error::ErrorKind;
use flowc_heap::heap::{self, Layout};
use flowc_heap::objects;
use flowc_heap::ops::Op;
use flowc_heap::{Symbol, Value};
use std::rc::Rc;

use crate::frames::StackMaps;
use crate::word::{self, Word, ONE, STOP, ZERO};

/// The state of one run of generated code. The fields generated code
/// reads and writes are at the offsets [`offsets`] gives (computed here,
/// read by the code generator).
#[repr(C)]
pub struct Ctx {
    /// Current call depth (offset 0).
    pub depth: u64,
    /// Maximum call depth (offset 8).
    pub max_depth: u64,
    /// Where a compiled trace leaving at a guard stores the values its
    /// resume record needs (offset 16); see [`Ctx::exit_buffer`]. Private:
    /// only this module points it (at `exit`), and generated code reads it.
    exit_values: *mut Word,
    /// The source site (an index into the code's site table) of the
    /// runtime call in progress, stored by generated code before calls
    /// that can fail; `u64::MAX` for none.
    pub site: u64,
    /// The site of the call that recorded [`Ctx::error`] (code may go on
    /// storing sites for calls after the stop: see [`Ctx::stopped`]).
    pub error_site: u64,
    /// Steps left before the run is out of fuel (offset 32): code compiled
    /// with fuel checks takes one per loop iteration and stops at 0.
    /// `u64::MAX` when unlimited.
    pub fuel: u64,
    /// The `--fuel` the run started with, for the error message.
    pub fuel_limit: u64,
    /// Loop iterations compiled traces ran (each trace adds what it ran
    /// when it leaves): how the JIT tells code that pays from code that
    /// is left as soon as it is entered.
    pub iterations: u64,
    /// The frame pointer and stack pointer of the compiled frame that made
    /// the runtime call in progress, stored by functions on entry and
    /// after each call they make, by traces before every runtime call:
    /// where a collection starts walking compiled frames for roots
    /// ([`crate::frames`]).
    pub last_fp: u64,
    pub last_sp: u64,
    /// The safepoints of the code running (null: frames cannot be walked,
    /// and no collection starts while it runs); set by
    /// [`Ctx::set_stack_maps`].
    stack_maps: *const StackMaps,
    /// This thread's heap, where compiled code allocates inline (its runs,
    /// [`heap::run_offset`]); generated code reads it.
    heap: *mut heap::Heap,
    exit: Vec<Word>,
    /// The slots of the objects the code makes.
    pub layout: &'static Layout,
    /// Objects made so far in the run: the last one's number.
    pub allocations: u64,
    pub error: Option<ErrorKind>,
    pub output: Option<Value>,
    /// Nonzero once the program stopped (an error was recorded, or it
    /// printed). From then on every runtime function returns [`STOP`] at
    /// once and does nothing, so the straight-line code of a huge
    /// function may make several calls and test this once, at the end of
    /// its block, instead of testing each call's result (what it
    /// computes after the stop is never used).
    pub stopped: u64,
    immutable: Rc<[(Symbol, Symbol)]>,
    /// Errors the generated code raises by index (`trap` terminators).
    pub traps: Rc<[ErrorKind]>,
    /// What compiles a function's optimized tier when its tier-0 code
    /// finds it hot ([`flowc_rt_tier_up`]); `None`: code that is not
    /// tiered. Set by [`Ctx::set_tiers`].
    tiers: Option<std::ptr::NonNull<dyn TierUp>>,
    /// The JIT's tables of a dispatch label's positions, which
    /// `guard_cold` reads and counts down (null and 0 without one): per
    /// position two words, the arrivals compiled code may still take
    /// there before it leaves (0: it leaves at once), and the address of
    /// the code slot of the position's own code, which baseline code
    /// enters directly where the count is 0 (0: none; see the profiler's
    /// `Position`); for integer positions by their value, for objects by
    /// their allocation number; the lengths in positions. Set for each
    /// run of traces. (Last: the offsets of the fields before them are in
    /// the code generator's file tests.)
    pub positions: *mut u64,
    pub positions_len: u64,
    pub object_positions: *mut u64,
    pub object_positions_len: u64,
    /// Where `guard_cold` last entered a position's code through its link
    /// in this run of traces: the link's code slot (0: nowhere), the loop
    /// iterations counted before (after it, the position's code's), and
    /// how many times it did in the run (a position's bridge may go back
    /// into the dispatch loop, which links again).
    pub linked_slot: u64,
    pub linked_iterations: u64,
    pub links: u64,
    /// What the values a link passes must hold (null: nothing): pairs of
    /// words, a value's byte offset in the exit buffer and the word it
    /// must be, ended by an offset of `u64::MAX` — the values the code
    /// behind the links was specialized to (an interpreter's program
    /// length). Where one differs, `guard_cold` leaves instead.
    pub link_pins: *const u64,
    /// Interpreter statements that straight code (bridges, entry traces,
    /// a loop's first, peeled iteration) stood in for: each piece adds
    /// what it was recorded from every time it is entered (an upper bound:
    /// whichever exit it leaves by). With `iterations`,
    /// the JIT's clock of the work compiled code did; without it, work
    /// done on linked paths that pass no loop header went unseen.
    /// (Last, as the fields above.)
    pub work: u64,
}

/// Compiles the optimized tier of functions whose tier-0 code found them
/// hot (see `flowc_codegen`'s `tiers` module). Generated code reaches it
/// through [`flowc_rt_tier_up`].
pub trait TierUp {
    /// Compiles the optimized tier of function `function` (if it is not
    /// compiled yet) and returns its entry for `entry`: `0` for the
    /// function called with its parameters, else the on-stack
    /// replacement entry numbered `entry` (see the code generator);
    /// `0` when there is none.
    fn tier_up(&self, ctx: &mut Ctx, function: u64, entry: u64) -> u64;
}

/// Byte offsets of the [`Ctx`] fields generated code reads and writes.
pub mod offsets {
    use super::Ctx;
    use std::mem::offset_of;

    pub const DEPTH: i32 = offset_of!(Ctx, depth) as i32;
    pub const MAX_DEPTH: i32 = offset_of!(Ctx, max_depth) as i32;
    pub const EXIT_VALUES: i32 = offset_of!(Ctx, exit_values) as i32;
    pub const SITE: i32 = offset_of!(Ctx, site) as i32;
    pub const FUEL: i32 = offset_of!(Ctx, fuel) as i32;
    pub const ITERATIONS: i32 = offset_of!(Ctx, iterations) as i32;
    pub const WORK: i32 = offset_of!(Ctx, work) as i32;
    pub const POSITIONS: i32 = offset_of!(Ctx, positions) as i32;
    pub const POSITIONS_LEN: i32 = offset_of!(Ctx, positions_len) as i32;
    pub const OBJECT_POSITIONS: i32 = offset_of!(Ctx, object_positions) as i32;
    pub const OBJECT_POSITIONS_LEN: i32 = offset_of!(Ctx, object_positions_len) as i32;
    pub const LINKED_SLOT: i32 = offset_of!(Ctx, linked_slot) as i32;
    pub const LINKED_ITERATIONS: i32 = offset_of!(Ctx, linked_iterations) as i32;
    pub const LINKS: i32 = offset_of!(Ctx, links) as i32;
    pub const LINK_PINS: i32 = offset_of!(Ctx, link_pins) as i32;
    pub const STOPPED: i32 = offset_of!(Ctx, stopped) as i32;
    pub const LAST_FP: i32 = offset_of!(Ctx, last_fp) as i32;
    pub const LAST_SP: i32 = offset_of!(Ctx, last_sp) as i32;
    pub const HEAP: i32 = offset_of!(Ctx, heap) as i32;
    pub const LAYOUT: i32 = offset_of!(Ctx, layout) as i32;
    pub const ALLOCATIONS: i32 = offset_of!(Ctx, allocations) as i32;
}

impl Ctx {
    /// A context for code whose `immutable` fields and `trap` errors are
    /// given (shared with the code, not copied per run).
    pub fn new(
        max_depth: u64,
        layout: &'static Layout,
        immutable: impl Into<Rc<[(Symbol, Symbol)]>>,
        traps: impl Into<Rc<[ErrorKind]>>,
    ) -> Ctx {
        Ctx {
            depth: 0,
            max_depth,
            exit_values: std::ptr::null_mut(),
            site: u64::MAX,
            error_site: u64::MAX,
            fuel: u64::MAX,
            fuel_limit: u64::MAX,
            iterations: 0,
            work: 0,
            positions: std::ptr::null_mut(),
            positions_len: 0,
            object_positions: std::ptr::null_mut(),
            object_positions_len: 0,
            linked_slot: 0,
            linked_iterations: 0,
            links: 0,
            link_pins: std::ptr::null(),
            last_fp: 0,
            last_sp: 0,
            stack_maps: std::ptr::null(),
            heap: heap::current(),
            exit: Vec::new(),
            layout,
            allocations: 0,
            error: None,
            output: None,
            stopped: 0,
            immutable: immutable.into(),
            traps: traps.into(),
            tiers: None,
        }
    }

    /// Gives tiered code what compiles its optimized tier
    /// ([`flowc_rt_tier_up`]).
    ///
    /// # Safety
    /// `tiers` outlives every run of this context.
    pub unsafe fn set_tiers(&mut self, tiers: &dyn TierUp) {
        // SAFETY: the caller keeps `tiers` alive for every run (the later
        // dereferences rely on it); the lifetime is erased for the raw
        // pointer only.
        let tiers: &'static dyn TierUp = unsafe { std::mem::transmute::<&dyn TierUp, &'static dyn TierUp>(tiers) };
        self.tiers = Some(std::ptr::NonNull::from(tiers));
    }

    /// Makes the context ready for another run of the same code: its
    /// error and output cleared; the exit buffer is kept.
    pub fn reset(&mut self) {
        self.error = None;
        self.output = None;
        self.stopped = 0;
        self.site = u64::MAX;
        self.error_site = u64::MAX;
        self.depth = 0;
        self.fuel = u64::MAX;
        self.fuel_limit = u64::MAX;
        self.iterations = 0;
        self.work = 0;
        self.last_fp = 0;
        self.last_sp = 0;
    }

    /// Makes room for `n` exit values and points `exit_values` at it.
    pub fn exit_buffer(&mut self, n: usize) {
        if self.exit.len() < n {
            self.exit.resize(n, STOP);
        }
        self.exit_values = self.exit.as_mut_ptr();
    }

    /// Stores `words` at the start of the exit buffer (which must hold as
    /// many): a trace's arguments, where the trace reads its parameters.
    pub fn set_exit_values(&mut self, words: &[Word]) {
        self.exit[..words.len()].copy_from_slice(words);
    }

    /// The exit values a trace stored.
    pub fn exit_values(&self, n: usize) -> &[Word] {
        &self.exit[..n]
    }

    /// The word for `v`, boxing it in the heap if needed.
    pub fn word(&mut self, v: Value) -> Word {
        heap::to_word(&v)
    }

    /// Gives the collector the safepoints of the code this context runs,
    /// so that it can walk compiled frames for roots.
    ///
    /// # Safety
    /// `maps` describes every piece of compiled code that runs with this
    /// context, and outlives every run of it (the collector reads it
    /// during runs).
    pub unsafe fn set_stack_maps(&mut self, maps: &StackMaps) {
        self.stack_maps = maps;
    }

    /// [`Ctx::set_stack_maps`] through a raw pointer: for maps that grow
    /// while the context lives (tiered code adds the safepoints of code it
    /// compiles while running), written through the same pointer, so that
    /// no reference's borrow is invalidated by the writes.
    ///
    /// # Safety
    /// As [`Ctx::set_stack_maps`]; nothing writes to the maps while a
    /// collection reads them.
    pub unsafe fn set_stack_maps_ptr(&mut self, maps: *const StackMaps) {
        self.stack_maps = maps;
    }

    /// The value of a word; unbound words are `Err`.
    ///
    /// # Safety
    /// `w` is a word of this run: an argument or result of compiled code,
    /// a value it stored for an exit, or a slot of a live object — an
    /// immediate or a pointer to a live cell (`heap::to_value`).
    pub unsafe fn value(&self, w: Word) -> Result<Value, ErrorKind> {
        heap::to_value(w).map_err(ErrorKind::Unbound)
    }

    fn fail(&mut self, e: ErrorKind) -> Word {
        if self.error.is_none() {
            self.error = Some(e);
            self.error_site = self.site;
        }
        self.stopped = 1;
        STOP
    }

    /// [`Ctx::value`], recording an unbound word's error.
    ///
    /// # Safety
    /// As for [`Ctx::value`].
    unsafe fn read(&mut self, w: Word) -> Result<Value, Word> {
        self.value(w).map_err(|e| self.fail(e))
    }

    /// The object word `obj` and field number `field` of a `get` or `set`
    /// (the field's symbol index), an unbound word's error recorded; a
    /// stop if the program already stopped.
    ///
    /// # Safety
    /// As for [`Ctx::value`], for `obj`.
    unsafe fn object_field(&mut self, obj: Word, field: u64) -> Result<(Value, Symbol), Word> {
        if self.stopped != 0 {
            return Err(STOP);
        }
        // SAFETY: the caller's contract.
        let o = unsafe { self.read(obj) }?;
        Ok((o, Symbol::from_index(field as u32)))
    }
}

/// Compiled code running with context `ctx`: while it does, a collection
/// marks what its frames hold ([`crate::frames`]). Code whose safepoints
/// are not known (no stack maps) runs with collection paused instead.
pub struct Activation {
    previous: Option<(heap::RootsFn, *mut ())>,
    paused: bool,
}

impl Activation {
    /// # Safety
    /// `ctx` is the context the code runs with, and lives (unmoved) until
    /// the activation is dropped.
    pub unsafe fn enter(ctx: *mut Ctx) -> Activation {
        // SAFETY: the caller's contract. The frame walk knows x86-64's
        // frames only (the return address below the stack pointer at a
        // call); elsewhere compiled code runs with collection paused.
        let walkable = cfg!(target_arch = "x86_64") && unsafe { !(*ctx).stack_maps.is_null() };
        if walkable {
            let previous = heap::with(|h| h.set_roots(Some((mark_compiled_frames, ctx as *mut ()))));
            Activation { previous, paused: false }
        } else {
            heap::with(|h| h.pause());
            Activation { previous: None, paused: true }
        }
    }
}

impl Drop for Activation {
    fn drop(&mut self) {
        if self.paused {
            heap::with(|h| h.resume());
        } else {
            let previous = self.previous.take();
            heap::with(|h| h.set_roots(previous));
        }
    }
}

/// The roots hook of a running activation: its compiled frames.
///
/// # Safety
/// `data` is the context of an activation in progress, called (by the
/// heap) from a runtime call compiled code made after storing its frame
/// and stack pointers.
unsafe fn mark_compiled_frames(data: *mut (), marker: &mut heap::Marker) {
    // SAFETY: the caller's contract.
    unsafe {
        let ctx = &*(data as *const Ctx);
        if ctx.last_sp != 0 {
            crate::frames::mark_frames(&*ctx.stack_maps, ctx.last_fp as usize, ctx.last_sp as usize, marker);
        }
    }
}

/// Turns the raw context pointer generated code passes back into a reference.
macro_rules! ctx {
    ($p:expr) => {
        // SAFETY: every runtime function requires (see their `# Safety`
        // sections) that `ctx` is the pointer `Native::run` handed to the
        // generated code: a live context, not otherwise borrowed while the
        // generated code runs.
        unsafe { &mut *$p }
    };
}

/// What generated code tells [`flowc_rt_op`] in one constant: the
/// operation (its index in `Op::ALL`), its operand count, and the site an
/// error is reported at plus one (0: none). One argument instead of three
/// and a store: the runtime calls of cold code are most of its
/// instructions, and Cranelift's time and memory grow with them.
pub fn op_desc(op: usize, nargs: usize, site: Option<u64>) -> u64 {
    op as u64 | (nargs as u64) << 8 | site.map_or(0, |s| s + 1) << 16
}

/// An operation of the op table on one or two words (the slow path of
/// every operation), described by `desc` ([`op_desc`]); `b` is ignored
/// for one operand.
///
/// # Safety
/// `ctx` must be the context pointer of a running `Native::run`. Its word
/// arguments are words of that run: immediates, or pointers to cells
/// the run keeps alive (what generated code passes).
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_op(ctx: *mut Ctx, desc: u64, a: Word, b: Word) -> Word {
    let ctx = ctx!(ctx);
    if ctx.stopped != 0 {
        return STOP;
    }
    let (op, nargs, site) = (desc & 0xff, (desc >> 8) & 0xff, desc >> 16);
    if site != 0 {
        ctx.site = site - 1;
    }
    let op = Op::ALL[op as usize];
    // SAFETY: the caller's contract: `a` and `b` are words of the run.
    if let Some(w) = unsafe { heap::num::op_words(op, nargs, a, b) } {
        return w;
    }
    let x = match ctx.read(a) {
        Ok(v) => v,
        Err(w) => return w,
    };
    let result = if nargs == 1 {
        op.eval1(&x)
    } else {
        let y = match ctx.read(b) {
            Ok(v) => v,
            Err(w) => return w,
        };
        op.eval2(&x, &y)
    };
    match result {
        Ok(v) => ctx.word(v),
        Err(e) => ctx.fail(ErrorKind::from_op(e)),
    }
}

/// An operation the op table does not have: its operands are read (an
/// unbound one fails first), then `missing_op`.
///
/// # Safety
/// `ctx` must be the context pointer of a running `Native::run`. Its word
/// arguments are words of that run: immediates, or pointers to cells
/// the run keeps alive (what generated code passes).
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_missing_op(ctx: *mut Ctx, name: u64, nargs: u64, a: Word, b: Word) -> Word {
    let ctx = ctx!(ctx);
    if ctx.stopped != 0 {
        return STOP;
    }
    for w in [a, b].into_iter().take(nargs as usize) {
        if let Err(stop) = ctx.read(w) {
            return stop;
        }
    }
    ctx.fail(ErrorKind::MissingOp(Symbol::from_index(name as u32)))
}

/// `check_bound`: the word itself, or a stop if it is unbound.
///
/// # Safety
/// `ctx` must be the context pointer of a running `Native::run`. Its word
/// arguments are words of that run: immediates, or pointers to cells
/// the run keeps alive (what generated code passes).
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_check_bound(ctx: *mut Ctx, a: Word) -> Word {
    let ctx = ctx!(ctx);
    if ctx.stopped != 0 {
        return STOP;
    }
    match ctx.read(a) {
        Ok(_) => a,
        Err(w) => w,
    }
}

/// `new`: a fresh object of `class`, numbered on from the run's count (the
/// slow path of compiled code's inline allocation).
///
/// # Safety
/// `ctx` must be the context pointer of a running `Native::run`.
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_new(ctx: *mut Ctx, class: u64) -> Word {
    let ctx = ctx!(ctx);
    if ctx.stopped != 0 {
        return STOP;
    }
    ctx.allocations += 1;
    let obj = objects::new_object(ctx.allocations, Symbol::from_index(class as u32), ctx.layout);
    ctx.word(obj)
}

/// `get`: the word in the field's slot, or a stop on error.
///
/// # Safety
/// `ctx` must be the context pointer of a running `Native::run`. Its word
/// arguments are words of that run: immediates, or pointers to cells
/// the run keeps alive (what generated code passes).
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_get(ctx: *mut Ctx, obj: Word, field: u64) -> Word {
    let ctx = ctx!(ctx);
    if ctx.stopped == 0 {
        // An object with the field set: its word, with no handle made
        // (code lowered without inline paths reads every field here).
        // SAFETY: the caller's contract: `obj` is a word of the run.
        if let Some(w) = unsafe { heap::field_word(obj, Symbol::from_index(field as u32)) } {
            return w;
        }
    }
    let (o, field) = match ctx.object_field(obj, field) {
        Ok(of) => of,
        Err(w) => return w,
    };
    // The slot holds the value's word: returned as it is.
    if let Some(w) = match &o {
        Value::Object(ob) => ob.slot_word(field).filter(|&w| w != heap::cell::UNSET),
        _ => None,
    } {
        return w;
    }
    ctx.fail(objects::get_error(&o, field))
}

/// `walk`: the object `links` links along `field` from `obj`, or 0's
/// word (`flowc_lang::heap::rows::walk_word`): what native code does not
/// find in the heap's rows. Never stops.
///
/// # Safety
/// `ctx` must be the context pointer of a running `Native::run`. Its word
/// arguments are words of that run: immediates, or pointers to cells
/// the run keeps alive (what generated code passes).
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_walk(ctx: *mut Ctx, obj: Word, field: u64, links: u64) -> Word {
    let ctx = ctx!(ctx);
    if ctx.stopped != 0 {
        return ZERO;
    }
    // SAFETY: the caller's contract: `obj` is a word of the run.
    unsafe { heap::rows::walk_word(obj, Symbol::from_index(field as u32), links as u32) }
}

/// After compiled code wrote a word to slot `slot` of object `obj` that
/// the heap's rows' mask names: shows the rows the write
/// (`flowc_lang::heap::rows::after_write`). Returns ONE; never stops.
///
/// # Safety
/// `ctx` must be the context pointer of a running `Native::run`, and
/// `obj` an object's word of that run with a slot `slot`, written a
/// value's word.
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_row_write(ctx: *mut Ctx, obj: Word, slot: u64) -> Word {
    let _ = ctx!(ctx);
    // SAFETY: the caller's contract.
    unsafe { heap::rows::after_write(obj.cell(), slot as u32) };
    ONE
}

/// `set`: ONE, or a stop on error.
///
/// # Safety
/// `ctx` must be the context pointer of a running `Native::run`. Its word
/// arguments are words of that run: immediates, or pointers to cells
/// the run keeps alive (what generated code passes).
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_set(ctx: *mut Ctx, obj: Word, field: u64, value: Word) -> Word {
    let ctx = ctx!(ctx);
    // A program that makes no field immutable, a bound value: an object
    // with the field takes the word at once (as `get` reads it).
    if ctx.stopped == 0 && ctx.immutable.is_empty() && !word::is_unbound(value) {
        // SAFETY: the caller's contract: `obj` and `value` are words of
        // the run, `value` not unbound.
        if unsafe { heap::set_field_word(obj, Symbol::from_index(field as u32), value) } {
            return ONE;
        }
    }
    let (o, field) = match ctx.object_field(obj, field) {
        Ok(of) => of,
        Err(w) => return w,
    };
    if word::is_unbound(value) {
        return ctx.fail(ErrorKind::Unbound(word::symbol(value)));
    }
    let immutable = &ctx.immutable;
    let written = objects::settable(&o, field, |c, f| immutable.contains(&(c, f)))
        // The value's word goes into the slot as it is (no boxing again).
        // SAFETY: the caller's contract: `value` is a word of the run, and
        // it is not unbound (tested above).
        .and_then(|ob| unsafe { ob.set_word(field, value) }.map_err(objects::no_slot));
    match written {
        Ok(_) => ONE,
        Err(e) => ctx.fail(e),
    }
}

/// `print`: records the output; always stops the program.
///
/// # Safety
/// `ctx` must be the context pointer of a running `Native::run`. Its word
/// arguments are words of that run: immediates, or pointers to cells
/// the run keeps alive (what generated code passes).
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_print(ctx: *mut Ctx, a: Word) -> Word {
    let ctx = ctx!(ctx);
    if ctx.stopped != 0 {
        return STOP;
    }
    if let Ok(v) = ctx.read(a) {
        ctx.output = Some(v);
    }
    ctx.stopped = 1;
    STOP
}

/// A `trap` terminator: raises error number `index` of the module.
///
/// # Safety
/// `ctx` must be the context pointer of a running `Native::run`.
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_trap(ctx: *mut Ctx, index: u64) -> Word {
    let ctx = ctx!(ctx);
    if ctx.stopped != 0 {
        return STOP;
    }
    let e = ctx.traps[index as usize].clone();
    ctx.fail(e)
}

/// Raised when a call would exceed the maximum depth.
///
/// # Safety
/// `ctx` must be the context pointer of a running `Native::run`.
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_stack_overflow(ctx: *mut Ctx) -> Word {
    let ctx = ctx!(ctx);
    if ctx.stopped != 0 {
        return STOP;
    }
    let depth = ctx.max_depth as usize;
    ctx.fail(ErrorKind::StackOverflow { depth })
}

/// Code compiled with fuel checks ran out of fuel.
///
/// # Safety
/// `ctx` must be the live context of the run calling it.
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_out_of_fuel(ctx: *mut Ctx) -> Word {
    let ctx = ctx!(ctx);
    if ctx.stopped != 0 {
        return STOP;
    }
    let fuel = ctx.fuel_limit;
    ctx.fail(ErrorKind::FuelExhausted { fuel })
}

/// Tier-0 code found function `function` hot: compiles its optimized
/// tier, and returns the address of its entry `entry` ([`TierUp`]), or 0
/// (none: the tier-0 code goes on).
///
/// # Safety
/// `ctx` must be the live context of the run calling it.
#[no_mangle]
pub unsafe extern "C" fn flowc_rt_tier_up(ctx: *mut Ctx, function: u64, entry: u64) -> u64 {
    let ctx = ctx!(ctx);
    let Some(tiers) = ctx.tiers else { return 0 };
    // SAFETY: `set_tiers` requires the compiler to outlive the run.
    let tiers = unsafe { tiers.as_ref() };
    tiers.tier_up(ctx, function, entry)
}

/// Declares the runtime's functions, one line each: the variant that
/// names it in the code generator, the `extern "C"` function, its word
/// arguments besides the context, and whether it may return [`STOP`] (code
/// that calls it then checks). The code generator derives from these
/// lines its imports and their signatures, the JIT's symbol table and
/// the baseline code's call targets: adding a runtime function is a
/// function above and a line below.
macro_rules! runtime_functions {
    ($($variant:ident = $function:ident($arity:literal) $stops:ident;)*) => {
        /// A function of the runtime that generated code calls.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        pub enum RuntimeFn {
            $($variant,)*
        }

        impl RuntimeFn {
            /// Every runtime function, in the order of the table.
            pub const ALL: &'static [RuntimeFn] = &[$(RuntimeFn::$variant,)*];

            /// Its symbol (`flowc_rt_op`).
            pub fn name(self) -> &'static str {
                match self {
                    $(RuntimeFn::$variant => stringify!($function),)*
                }
            }

            /// Its word arguments, the context not counted.
            pub fn arity(self) -> usize {
                match self {
                    $(RuntimeFn::$variant => $arity,)*
                }
            }

            /// Whether it may return [`STOP`]: the program stopped, with an
            /// error recorded or its output printed.
            pub fn stops(self) -> bool {
                match self {
                    $(RuntimeFn::$variant => runtime_functions!(@stops $stops),)*
                }
            }

            /// Its address in this process.
            pub fn address(self) -> *const u8 {
                match self {
                    $(RuntimeFn::$variant => $function as *const u8,)*
                }
            }
        }
    };
    (@stops stops) => { true };
    (@stops returns) => { false };
}

runtime_functions! {
    Op = flowc_rt_op(3) stops;
    MissingOp = flowc_rt_missing_op(4) stops;
    CheckBound = flowc_rt_check_bound(1) stops;
    New = flowc_rt_new(1) stops;
    Get = flowc_rt_get(2) stops;
    Set = flowc_rt_set(3) stops;
    Print = flowc_rt_print(1) stops;
    Trap = flowc_rt_trap(1) stops;
    StackOverflow = flowc_rt_stack_overflow(0) stops;
    OutOfFuel = flowc_rt_out_of_fuel(0) stops;
    TierUp = flowc_rt_tier_up(2) returns;
    Walk = flowc_rt_walk(3) returns;
    RowWrite = flowc_rt_row_write(2) returns;
}

/// The runtime's symbols, for the JIT's symbol table.
pub fn symbols() -> impl Iterator<Item = (&'static str, *const u8)> {
    RuntimeFn::ALL.iter().map(|f| (f.name(), f.address()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_runtime_function_has_its_own_symbol_and_address() {
        let mut names: Vec<&str> = RuntimeFn::ALL.iter().map(|f| f.name()).collect();
        let mut addresses: Vec<usize> = RuntimeFn::ALL.iter().map(|f| f.address() as usize).collect();
        names.sort_unstable();
        names.dedup();
        addresses.sort_unstable();
        addresses.dedup();
        assert_eq!(names.len(), RuntimeFn::ALL.len());
        assert_eq!(addresses.len(), RuntimeFn::ALL.len());
        assert!(names.iter().all(|n| n.starts_with("flowc_rt_")), "{names:?}");
        // Numbered as they are listed: the code generator indexes by it.
        assert!(RuntimeFn::ALL.iter().enumerate().all(|(k, &f)| f as usize == k));
    }
}
