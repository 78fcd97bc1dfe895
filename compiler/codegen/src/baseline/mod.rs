//! The baseline trace compiler: trace IR straight to x86-64 machine code,
//! one instruction at a time, for code the JIT has just recorded and whose
//! worth is not known yet.
//!
//! Cranelift compiles a trace of a few dozen operations in milliseconds
//! even at its cheapest settings (some 200,000 host instructions per trace
//! operation, most of it register allocation and instruction selection
//! over the tens of Cranelift instructions each operation becomes): more
//! than a short run of the program gains from the trace. This compiler
//! does what V8's Sparkplug and LuaJIT's assembler do for their first
//! tier: no IR of its own, no register allocation, one pass.
//!
//! **Frame.** Every IR value has a word of the frame, where its defining
//! instruction stores it and its users load it (but a comparison fused
//! with its guard, whose word only that guard's exit reads and writes:
//! [`fused_compares`], and a link whose checks are one comparison with
//! the address its `guard_at` computes, or with the cell a walk came
//! from, whose word only their exits write: [`fused_links`],
//! [`fused_returns`]; and a link checked to be the address a distance
//! past its base's, read as that address wherever it is read, whose
//! word only the exit stubs whose records hold it write:
//! [`rematerialized`]); `rbx` holds the context.
//! The words of values that may point into the heap come first, and are
//! zeroed on entry (but the parameters', which the entry loads from the
//! exit buffer before anything can read them; and none where the code
//! cannot collect, a trace's on its entry or a bridge's on its direct
//! entry: below), so every safepoint lists
//! all of them for the collector (a word not yet written is 0, which the
//! collector skips; one written earlier is a value the code computed);
//! the words of values
//! certainly small integers ([`crate::small`]) follow, never zeroed nor
//! listed: the collector has nothing to find there.
//! The prologue and epilogue follow Cranelift's `tail` convention (`rdi`
//! the context, `rbx` callee-saved, frame pointers kept): baseline and
//! Cranelift traces call, enter and leave one another freely.
//!
//! **Operations.** Each has an inline path for its common case — small
//! integers for arithmetic and comparisons (skipped tests where
//! [`crate::small`] proves operands small), an object of the program's
//! layout for `get` and `set` (the object tests skipped for a value
//! already tested earlier in the trace), an immediate or the same list for
//! `guard_value`, a list's table for `len` and `l[i]`, a small divisor of
//! any value for `//` and `%`, a bump of the heap's run for `new` — and a
//! slow path, out of line after the trace, that calls the runtime with
//! the operands reloaded from their words. Any operation without an
//! inline path goes to the runtime directly. Each result is stored to its
//! word but one only the next instruction reads ([`unstored_results`]).
//!
//! **Loop variables in registers.** The phis of a trace's loop block (up
//! to four: r8-r11, which nothing else in a loop without calls uses) live
//! in registers while the loop runs, so a value carried round the loop
//! (a counter, a cell's value the optimizer carries in a phi) is not a
//! store and a load, through its frame word, on every iteration's
//! critical path. Their words are written (*spilled*) wherever code reads
//! words instead: before every runtime call (whose safepoint lists the
//! words for the collector, which never moves cells, so the registers are
//! read back after it unchanged) and on the way out of every exit. The
//! registers they leave hold the loop's iteration count, then the values
//! defined before the loop block that it reads most ([`loop_invariants`]:
//! the tape cell a BF loop's reads and writes are counted from), loaded
//! where the block is entered and read back after calls, never spilled
//! (their words hold them already). Not where the loop block is the
//! trace's entry block (no edge enters it to load them) or calls a
//! function of the program.
//!
//! **Exits** store the values their resume record needs in the exit
//! buffer and go to one shared tail: a linked exit continues in its
//! bridge (a tail jump), else the code returns the exit's number. Loop
//! headers count iterations in the context; the loop block counts them
//! in a register of its own where one is free ([`Emit::counter`]),
//! written back with its variables.
//!
//! **Bridges in their parent's frame** (as LuaJIT's side traces inherit
//! their parent's spill slots). A bridge compiled for one exit of a
//! baseline trace ([`Inherit`]) runs on top of that trace's frame: its
//! parameters are the words where the parent keeps the exit's values,
//! and its own values get words below them (`sub rsp`). Its *direct
//! entry* is what the exit jumps to once linked — the link overwrites
//! the first instruction of the exit's stubs with a jump there
//! ([`Compiled::stubs`]) — so a crossing costs a jump and zeroing the
//! bridge's own words; a bridge that cannot collect ([`may_collect`]:
//! reads, writes, guards and word operations only) zeroes none, since no
//! safepoint of it can read a word before it is written, and one on top
//! of it that can collect zeroes what it left ([`Frame::stale`])
//! (mandelbrot.b, whose bridges are crossed some 60 million times:
//! 3.72 -> 3.41 s).
//! **Register entries.** A trace of at most six parameters (not a bridge
//! in its parent's frame) has a second entry after its standard one,
//! which takes the arguments in [`ARG_REGS`] instead of the exit buffer
//! ([`Compiled::regs_entry`]); a `jump_trace` into another trace passes
//! them there and jumps through the second word of the target's code
//! slot (`crate::lower::CodeSlot`), which holds that entry, or for code
//! without one [`regs_adapter`].
//!
//! A `jump_trace` back to the trace at the bottom of the frame (the
//! *root*: a loop whose guards' bridges come back to it) moves the
//! arguments into the root's parameter words, pops the bridges' words
//! and jumps to the root's first block: the loop goes on without leaving
//! its frame. Every safepoint of a bridge lists its own words and its
//! parent's ([`Frame`]). The bridge also has a standard entry, which
//! builds the whole frame from the exit buffer (zeroed, the parameters
//! in their words), for the driver to enter it as any trace.
//!
//! **Fuel**, when counted, is one step at every loop header (a trace's
//! entry too), as in the Cranelift lowering.
//!
//! **Calls** of the program's functions (compiled by Cranelift with the
//! cache, the system convention: the arguments, then the context, in
//! registers) count the depth as the interpreter does, and are
//! safepoints listing every word of the frame; the callee keeps the
//! frame and stack pointers of its own frame in the context, so they are
//! stored again after it returns.
//!
//! A trace the compiler does not handle — one that calls a function
//! with more than five arguments, a control flow that is not a chain of
//! blocks with back edges — is refused ([`compile`] says why), and the caller
//! compiles it with Cranelift instead.

mod asm;

use rustc_hash::FxHashMap as HashMap;

use flowc_ir::{BlockId, Function, GuardKind, InstKind, Operand, Terminator, ValueId};
use flowc_lang::ast::Operator;
use flowc_lang::heap::cell;
use flowc_lang::ops::range::{WORD_MAX, WORD_MIN};
use flowc_lang::ops::{Condition, Form, Op};
use flowc_lang::{Symbol, Value};

use crate::lower::exits::{exit_of_values, exit_record, ExitAt, Leaving};
use crate::lower::{ExitSlot, ObjectInfo, Shape, SiteTable, TraceExit, TraceRef};
use crate::runtime::{offsets, RuntimeFn};
use crate::small::Small;
use crate::word::{self, ONE, ZERO};
use asm::{Alu, Asm, Cond, Label, Reg, R10, R11, R8, R9, RAX, RBP, RBX, RCX, RDI, RDX, RSI, RSP};

/// What baseline code is generated for: the tables and settings of the
/// trace cache it will be installed in, as far as the code refers to them.
/// It needs no code generator state (no Cranelift module), so a worker
/// thread can generate code for the cache while the running thread runs
/// ([`crate::in_memory::Apart`]).
pub struct Target<'a> {
    /// The objects the code meets.
    pub objects: &'a ObjectInfo,
    /// The traces a `jump_trace` may name, by name (parameter count, code
    /// slot).
    pub traces: &'a HashMap<Symbol, TraceRef>,
    /// Where the sites of runtime calls that can fail are numbered.
    pub sites: &'a mut SiteTable,
    /// Errors raised by `trap`, by index: `None` away from the running
    /// thread, where a trace that traps is refused.
    pub traps: Option<&'a mut Vec<flowc_lang::interp::ErrorKind>>,
    /// Whether loop headers count fuel.
    pub fuel: bool,
    /// Every how many crossings a linked exit checks in with the driver.
    pub link_check: Option<u64>,
}

/// A trace compiled by the baseline compiler: its code, its safepoints
/// (return-address offsets; every one lists all of `frame.slots`), its
/// exits and their link slots. The code refers to runtime functions, its
/// link slots and other traces' code slots by absolute address; it refers
/// to the constants that are not immediate words (lists, big integers)
/// through `fills`, which installing it fills in (they become cells
/// of the running thread's heap, pinned while the code lives).
pub struct Compiled {
    pub code: Vec<u8>,
    /// The trace's exits, in order: exit `k` is the cache's exit
    /// `first + k`, where installing the code puts them.
    pub exits: Vec<TraceExit>,
    /// Exit `k`'s link slot, which the code holds the address of.
    pub slots: Vec<Box<ExitSlot>>,
    /// The constants the code wants the words of, and where: the offset
    /// of a 64-bit immediate, and the constant's index.
    pub constants: Vec<Value>,
    pub fills: Vec<(u32, usize)>,
    pub safepoints: Vec<u32>,
    /// The frame the code runs in.
    pub frame: Frame,
    /// Offset of the direct entry of a bridge compiled to inherit its
    /// parent's frame.
    pub direct: Option<u32>,
    /// Offset of the code of the first block, which a bridge jumping back
    /// to the root enters with the parameters in their words.
    pub body: u32,
    /// Offset of the *register entry* of a trace of at most
    /// [`ARG_REGS`]`.len()` parameters (not a bridge in its parent's
    /// frame): what a baseline `jump_trace` enters with the arguments in
    /// [`ARG_REGS`] rather than in the exit buffer.
    pub regs_entry: Option<u32>,
    /// For each exit (of `exits`, in order), the words of the values
    /// it stores: offsets from the stack pointer.
    pub exit_words: Vec<Vec<i32>>,
    /// Where the code leaves by each exit (one stub per guard, and the
    /// end's): the exit's number (as `exit_words`) and the offset of its
    /// stub, whose first instruction a link into a bridge in this frame
    /// overwrites with a jump there ([`crate::in_memory::TraceCache::link`]).
    pub stubs: Vec<(u32, u32)>,
}

/// A baseline trace's frame as the code running in it sees it: its own
/// words and, for a bridge, those of every trace below it down to the
/// root.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    /// Bytes from the stack pointer up to the saved `rbx` (at `rbp - 8`).
    pub below: i32,
    /// Offsets from the stack pointer of the words every safepoint lists
    /// (shared with the safepoints' stack map: `StackMaps::add_shared`).
    pub slots: std::sync::Arc<[u32]>,
    /// Bytes from the stack pointer up to the root's stack pointer.
    pub root_depth: i32,
    /// The root's parameters' words: offsets from the root's stack pointer.
    pub root_params: Vec<i32>,
    /// Offsets from the stack pointer of the words of `slots` that may
    /// still hold what was there before the code wrote them: the words of
    /// a trace and of bridges that cannot collect, which their entry (a
    /// bridge's direct entry) does not zero ([`may_collect`]). A bridge on
    /// top that can collect zeroes them (but its parameters') before
    /// anything else.
    pub stale: Vec<u32>,
}

/// What a bridge compiled to run in its parent's frame knows of it.
pub struct Inherit<'i> {
    /// The parent's frame.
    pub parent: &'i Frame,
    /// The words of the exit's values (offsets from the parent's stack
    /// pointer), one per parameter of the bridge.
    pub params: &'i [i32],
    /// The root, for a `jump_trace` back to it: its name, and the address
    /// of its first block.
    pub root: Option<(Symbol, u64)>,
}

/// The program's functions a trace may call: their code's addresses.
pub type Functions = HashMap<Symbol, i64>;

/// The one entry wrapper of a trace cache, `extern "C" fn(target, ctx)
/// -> word`: calls the trace at address `target` with the context, in
/// the `tail` convention (the context in `rdi`, the result in `rax`, the
/// system convention's callee-saved registers kept), and returns what it
/// returns. Seven instructions, emitted here rather than by Cranelift:
/// compiling them was a JIT run's first use of Cranelift, whose cold
/// start a short run paid even when all its traces compile here. It
/// keeps a frame pointer, so a walk of
/// compiled frames ([`flowc_runtime::frames`]) stops at its return
/// address, which is no safepoint, as at Cranelift's wrapper.
pub fn trace_entry() -> Vec<u8> {
    let mut a = Asm::with_capacity(16);
    a.push(RBP);
    a.mov(RBP, RSP);
    a.mov(RAX, RDI);
    a.mov(RDI, RSI);
    a.call(RAX);
    a.pop(RBP);
    a.ret();
    a.finish().expect("no labels")
}

/// The registers a baseline `jump_trace` passes its arguments in, in
/// order, to the target's register entry ([`Compiled::regs_entry`]), the
/// context in `rdi` as for any entry. Not `rax` (the slot), `rcx` and
/// `rdi` (what zeroing a frame uses, and the adapter's scratch), nor
/// `rbx`, `rbp`, `rsp` (restored on the way out).
pub(crate) const ARG_REGS: [Reg; 6] = [RSI, RDX, R8, R9, R10, R11];

/// The code a trace's register entry word points at when its code has
/// no register entry (Cranelift's, a bridge in its parent's frame, a
/// trace of more parameters): the arguments from [`ARG_REGS`] to the exit
/// buffer, then on to the code in the slot's first word (the slot's
/// address in `rax`: the jumper's).
pub fn regs_adapter() -> Vec<u8> {
    let mut a = Asm::with_capacity(48);
    a.load(RCX, RDI, offsets::EXIT_VALUES);
    for (k, &r) in ARG_REGS.iter().enumerate() {
        a.store(RCX, 8 * k as i32, r);
    }
    a.jmp_mem(RAX, 0);
    a.finish().expect("no labels")
}

/// Compiles trace `f` (with `facts`) for the trace cache `env` describes,
/// whose functions are at `functions`, or says why it does not; a bridge
/// with `inherit` runs in its parent's frame.
pub fn compile(
    env: &mut Target,
    f: &Function,
    facts: &Shape,
    functions: &Functions,
    inherit: Option<Inherit>,
) -> Result<Compiled, &'static str> {
    if !cfg!(target_arch = "x86_64") {
        return Err("baseline code is x86-64 code");
    }
    if f.kind != flowc_ir::FunctionKind::Trace {
        return Err("not a trace");
    }
    check_shape(f, functions)?;
    if inherit.as_ref().is_some_and(|i| i.params.len() != f.params.len()) {
        return Err("a bridge taking other values than its exit stores");
    }
    compile_with(env, f, facts, functions, inherit, true)
}

/// [`compile`], with results left unstored ([`unstored_results`]) or not.
fn compile_with(
    env: &mut Target,
    f: &Function,
    facts: &Shape,
    functions: &Functions,
    inherit: Option<Inherit>,
    leave_unstored: bool,
) -> Result<Compiled, &'static str> {
    let traps_before = env.traps.as_ref().map(|t| t.len());
    let (words, scanned) = word_layout(f, &facts.small);
    // Room for the code of a typical operation and its cold paths.
    let insts = f.layout.iter().map(|&b| f.blocks[b].insts.len()).sum::<usize>();
    let mut a = Asm::with_capacity(insts * 128 + 512);
    let (stop, leave, store_values, exit_common) = (a.label(), a.label(), a.label(), a.label());
    let mut e = Emit {
        a,
        env,
        f,
        facts,
        functions,
        frame: 0,
        scratch: 0,
        inherit,
        words,
        scanned,
        own: Frame::default(),
        direct: None,
        body: 0,
        regs_entry: None,
        exit_words: Vec::new(),
        stubs: Vec::new(),
        stop,
        leave,
        store_values,
        exit_common,
        blocks: HashMap::default(),
        cold: Vec::new(),
        objects: Vec::new(),
        objects_before: 0,
        exit_numbers: HashMap::default(),
        exits: Vec::new(),
        slots: Vec::new(),
        constants: Vec::new(),
        fills: Vec::new(),
        safepoints: Vec::new(),
        site: None,
        current: f.entry,
        loop_in_registers: false,
        regs: Vec::new(),
        invariants: 0,
        counter: None,
        to_regs: Vec::new(),
        clobbered: Vec::new(),
        in_loop: false,
        fused: Vec::new(),
        guard_chains: HashMap::default(),
        fused_links: Vec::new(),
        fused_returns: Vec::new(),
        row_covered: Vec::new(),
        remat: HashMap::default(),
        leave_unstored,
        unstored: Vec::new(),
        unstored_now: None,
    };
    e.run()?;
    if e.a.loaded_unwritten() {
        // Some code loads a word left unwritten: every result stored.
        debug_assert!(leave_unstored, "no word is left unwritten when every result is stored");
        let inherit = e.inherit.take();
        drop(e);
        // The traps this attempt numbered are numbered again.
        if let (Some(traps), Some(n)) = (env.traps.as_mut(), traps_before) {
            traps.truncate(n);
        }
        return compile_with(env, f, facts, functions, inherit, false);
    }
    let Emit {
        a,
        safepoints,
        own: frame,
        direct,
        body,
        regs_entry,
        exit_words,
        stubs,
        exits,
        slots,
        constants,
        fills,
        ..
    } = e;
    let code = a.finish().ok_or("a jump to nowhere")?;
    Ok(Compiled {
        code,
        exits,
        slots,
        constants,
        fills,
        safepoints,
        frame,
        direct,
        body,
        regs_entry,
        exit_words,
        stubs,
    })
}

/// Whether `f`'s blocks form a chain in layout order: the entry first,
/// every edge to the next block or back to one at or before its source.
/// Then code at a later place in the layout runs only after code at every
/// earlier place has run (since the values it uses were defined), which is
/// what the inline paths' "tested earlier" facts rest on.
fn check_shape(f: &Function, functions: &Functions) -> Result<(), &'static str> {
    if f.layout.first() != Some(&f.entry) {
        return Err("the entry is not the first block");
    }
    for (k, &b) in f.layout.iter().enumerate() {
        for s in f.blocks[b].term.successors() {
            let at = f.layout.iter().position(|&x| x == s).ok_or("an edge to a block not laid out")?;
            if at != k + 1 && at > k {
                return Err("a forward edge past the next block");
            }
        }
        for &i in &f.blocks[b].insts {
            match &f.insts[i].kind {
                InstKind::Call { args, .. } if args.len() > CALL_ARGS => return Err("a call with many arguments"),
                InstKind::Call { func, .. } if !functions.contains_key(func) => return Err("a call of no function"),
                InstKind::Guard { kind: GuardKind::At(_, _, d), .. } if i32::try_from(*d).is_err() => {
                    return Err("a guard_at beyond 2 GB")
                }
                _ => {}
            }
        }
        match &f.blocks[b].term {
            Terminator::Jump(_) | Terminator::Exit { .. } | Terminator::JumpTrace { .. } | Terminator::Trap(_) => {}
            _ => return Err("a terminator traces do not have"),
        }
    }
    Ok(())
}

/// `f`'s loop block: the first that jumps to itself.
fn loop_block(f: &Function) -> Option<BlockId> {
    f.layout.iter().copied().find(|&b| f.blocks[b].term == Terminator::Jump(b))
}

/// The variables of `f`'s loop block (one that jumps to itself) that live
/// in [`LOOP_REGS`], with their registers: its first phis, when the loop
/// calls none of the program's functions (a call passes arguments in r8
/// and r9); `None` when there is no loop block, it calls a function, or
/// it is the entry block (no edge enters it, where its registers would be
/// loaded).
fn loop_registers(f: &Function) -> Option<Vec<(ValueId, Reg)>> {
    let lp = loop_block(f).filter(|&lp| lp != f.entry)?;
    if f.blocks[lp].insts.iter().any(|&i| matches!(f.insts[i].kind, InstKind::Call { .. })) {
        return None;
    }
    Some(f.blocks[lp].phis.iter().filter_map(|&p| f.insts[p].result).zip(LOOP_REGS).collect())
}

/// The values `f`'s loop block reads that are defined before it (the
/// parameters, the preamble's results: the tape cell a BF loop's moves
/// start from), most read first, with the registers of `free` they live
/// in while the loop runs: each is loaded there where the loop is
/// entered, never changes, and is read back after every call as the
/// variables are. Only values whose word holds them on the way in (not
/// one that only exits write: `exit_written`); a link read as the address
/// past its base ([`rematerialized`]) counts as a read of its base.
fn loop_invariants(
    f: &Function,
    free: &[Reg],
    remat: &HashMap<ValueId, (ValueId, i32)>,
    exit_written: impl Fn(ValueId) -> bool,
) -> Vec<(ValueId, Reg)> {
    let Some(lp) = loop_block(f) else { return Vec::new() };
    if free.is_empty() {
        return Vec::new();
    }
    let block = &f.blocks[lp];
    let defined: rustc_hash::FxHashSet<ValueId> =
        block.phis.iter().chain(&block.insts).filter_map(|&i| f.insts[i].result).collect();
    let mut reads: HashMap<ValueId, u32> = HashMap::default();
    let mut read = |o: &Operand| {
        let Some(v) = o.as_value() else { return };
        // (A base is no rematerialized link itself: `rematerialized`.)
        let v = remat.get(&v).map_or(v, |&(base, _)| base);
        if !defined.contains(&v) && !exit_written(v) {
            *reads.entry(v).or_insert(0) += 1;
        }
    };
    for &i in &block.insts {
        f.insts[i].kind.operands().for_each(&mut read);
    }
    for &p in &block.phis {
        if let InstKind::Phi(inputs) = &f.insts[p].kind {
            inputs.iter().filter(|(from, _)| *from == lp).for_each(|(_, o)| read(o));
        }
    }
    let mut most: Vec<(ValueId, u32)> = reads.into_iter().collect();
    most.sort_unstable_by_key(|&(v, n)| (std::cmp::Reverse(n), flowc_ir::ix(v)));
    most.into_iter().map(|(v, _)| v).zip(free.iter().copied()).collect()
}

/// The instructions of `f`'s loop block whose result is the back-edge
/// value of a loop variable in a register (`regs`) and that come at or
/// after the last use of the variable's current value in the block (its
/// operands, the records of its guards) — an operation or a field read,
/// which leave their result in rax — when no other variable of the block
/// takes that variable, or that result, on the back edge: their result
/// can go to the register at once, and the back edge moves nothing into
/// it.
fn direct_results(f: &Function, regs: &[(ValueId, Reg)]) -> Vec<(flowc_ir::InstId, Reg)> {
    let Some(lp) = loop_block(f) else {
        return Vec::new();
    };
    let insts = &f.blocks[lp].insts;
    let back = |phi: ValueId| -> Option<Operand> {
        let i = match f.values[phi].def {
            flowc_ir::ValueDef::Inst(i) => i,
            _ => return None,
        };
        match &f.insts[i].kind {
            InstKind::Phi(inputs) => inputs.iter().find(|(b, _)| *b == lp).map(|(_, o)| o.clone()),
            _ => None,
        }
    };
    let phis: Vec<ValueId> = f.blocks[lp].phis.iter().filter_map(|&p| f.insts[p].result).collect();
    let mut out = Vec::new();
    for &(q, r) in regs {
        let Some(Operand::Value(v)) = back(q) else { continue };
        // Another variable (in a register or not) that takes this one's
        // current value on the back edge, or the same next value (the
        // result goes to one register only).
        let read_by_another =
            phis.iter().any(|&p| p != q && matches!(back(p), Some(Operand::Value(x)) if x == q || x == v));
        let Some(at) = insts.iter().position(|&i| f.insts[i].result == Some(v)) else { continue };
        let direct = matches!(
            f.insts[insts[at]].kind,
            InstKind::Op { .. } | InstKind::Get { .. } | InstKind::Guard { kind: GuardKind::At(..), .. }
        );
        if read_by_another || !direct {
            continue;
        }
        let uses = |i: flowc_ir::InstId| {
            let kind = &f.insts[i].kind;
            let record = match kind {
                InstKind::Guard { resume, .. } => f.resumes[*resume].operands().any(|o| *o == Operand::Value(q)),
                _ => false,
            };
            record || kind.operands().any(|o| *o == Operand::Value(q))
        };
        let last = insts.iter().rposition(|&i| uses(i));
        if last.is_none_or(|l| l <= at) {
            out.push((insts[at], r));
        }
    }
    out
}

/// Whether running `f` may collect: whether it has an instruction whose
/// runtime path may allocate in the heap — `new`, a call, and any
/// operation but those whose results are immediate words: arithmetic on
/// words (proven to fit), orderings and equalities of words or integers,
/// and the length of a list. (An element read from a list may be a value
/// the runtime boxes, and a sum of integers may become a big integer.)
/// Reads, writes and guards only read the heap, and their runtime paths
/// only stop the run with an error.
fn may_collect(f: &Function) -> bool {
    use flowc_lang::ops::Class;
    f.layout.iter().flat_map(|&b| f.blocks[b].phis.iter().chain(&f.blocks[b].insts)).any(|&i| match &f.insts[i].kind {
        InstKind::Op { op: Operator::Known(op), form, .. } => {
            let words = matches!(form, Form::Word | Form::Int);
            let immediate = match op.class() {
                Class::Arith => *form == Form::Word,
                Class::Ordering | Class::Equality => words,
                Class::List => *op == Op::Len && words,
                Class::Copy => false,
            };
            !immediate
        }
        InstKind::Op { .. } | InstKind::New(_) | InstKind::Call { .. } => true,
        InstKind::Phi(_)
        | InstKind::Get { .. }
        | InstKind::Walk { .. }
        | InstKind::Set { .. }
        | InstKind::Guard { .. }
        | InstKind::Iterations(_)
        | InstKind::Unbound(_)
        | InstKind::CheckBound(_) => false,
    })
}

/// Most arguments of a call the compiler makes: with the context, the
/// system convention's six argument registers.
const CALL_ARGS: usize = 5;

/// Where an operand comes from: a word of the frame, a register (a loop
/// variable's), an address computed from a register (a `guard_at`'s
/// result, `d` bytes past its base in a loop variable's register:
/// [`Emit::link_src`]), an immediate, or a constant's word, which the
/// code is given when it is installed (by its index in `Emit::constants`).
#[derive(Copy, Clone, Debug)]
enum Src {
    Slot(i32),
    Reg(Reg),
    At(Reg, i32),
    /// The word at this displacement plus a distance: a link computed
    /// from a base in a word ([`rematerialized`]).
    SlotAt(i32, i32),
    Imm(i64),
    Constant(usize),
}

/// Where a phi move goes: a word of the frame, or a loop variable's
/// register.
#[derive(Copy, Clone, Debug)]
enum Dst {
    Slot(i32),
    Reg(Reg),
}

/// The flags under which comparison `op` of two words of small integers
/// (or of immediates, for equality) holds, and under which it does not.
fn conditions(op: Op) -> (Cond, Cond) {
    match op.condition().expect("a comparison") {
        Condition::Less => (Cond::Less, Cond::GreaterEqual),
        Condition::LessEqual => (Cond::LessEqual, Cond::Greater),
        Condition::Greater => (Cond::Greater, Cond::LessEqual),
        Condition::GreaterEqual => (Cond::GreaterEqual, Cond::Less),
        Condition::Equal => (Cond::Equal, Cond::NotEqual),
        Condition::NotEqual => (Cond::NotEqual, Cond::Equal),
    }
}

/// The comparisons of `f` (sorted) whose result only the next instruction
/// reads: a `guard_true` or `guard_false` on it, whose record may hold it
/// too when no other record does (`d = i < n; if d ...`, the commonest
/// loop test, keeps `d` in the guard's record). The comparison then sets
/// the flags the guard jumps on ([`Emit::fused_compare`]) instead of
/// making a word of 0 or 1 for the guard to test, and the result's word
/// is written only where the guard leaves, with the value its failing
/// implies.
fn fused_compares(f: &Function) -> Vec<flowc_ir::InstId> {
    let is_compare = |i: flowc_ir::InstId| {
        matches!(f.insts[i].kind.known_op(), Some((op, _)) if op.condition().is_some()) && f.insts[i].result.is_some()
    };
    // Reads of each compared value (by value index; others stay at
    // `u32::MAX`): operands (phi inputs too), and each time a record
    // holds it (a value twice in a record counts twice: it is then not
    // fused, which is only a missed chance).
    let mut reads: Vec<u32> = vec![u32::MAX; f.values.len()];
    let mut any = false;
    for &i in f.layout.iter().flat_map(|&b| &f.blocks[b].insts) {
        if let Some(v) = f.insts[i].result.filter(|_| is_compare(i)) {
            reads[flowc_ir::ix(v)] = 0;
            any = true;
        }
    }
    if !any {
        return Vec::new();
    }
    let mut count = |o: &Operand| {
        if let Operand::Value(v) = o {
            // (Values not compared stay at `u32::MAX`.)
            let n = &mut reads[flowc_ir::ix(*v)];
            *n = n.saturating_add(1);
        }
    };
    each_read(f, &mut count);
    let mut out = Vec::new();
    for &b in &f.layout {
        for pair in f.blocks[b].insts.windows(2) {
            let (i, g) = (pair[0], pair[1]);
            let Some(c) = f.insts[i].result.filter(|_| is_compare(i)) else { continue };
            let InstKind::Guard { kind: GuardKind::True(o) | GuardKind::False(o), resume, .. } = &f.insts[g].kind
            else {
                continue;
            };
            let held = f.resumes[*resume].operands().any(|x| *x == Operand::Value(c));
            if *o == Operand::Value(c) && reads[flowc_ir::ix(c)] == 1 + held as u32 {
                out.push(i);
            }
        }
    }
    out.sort_unstable();
    out
}

/// Every read of a value's word in `f`: operands (phi inputs too), and
/// each time a guard or an exit leaves by a record holding it (a value
/// twice in a record is read twice).
fn each_read(f: &Function, read: &mut impl FnMut(&Operand)) {
    for &b in &f.layout {
        for &i in f.blocks[b].phis.iter().chain(&f.blocks[b].insts) {
            f.insts[i].kind.operands().for_each(&mut *read);
            if let InstKind::Guard { resume, .. } = &f.insts[i].kind {
                f.resumes[*resume].operands().for_each(&mut *read);
            }
        }
        f.blocks[b].term.operands().for_each(&mut *read);
        if let Terminator::Exit { resume, .. } = &f.blocks[b].term {
            f.resumes[*resume].operands().for_each(&mut *read);
        }
    }
}

/// [`word_reads`] of the trace being compiled, counted when first needed.
type WordReads = std::cell::OnceCell<Vec<u32>>;

/// How many times each value's word is read in `f` ([`each_read`]), by
/// value index.
fn word_reads(f: &Function) -> Vec<u32> {
    let mut reads: Vec<u32> = vec![0; f.values.len()];
    each_read(f, &mut |o: &Operand| {
        if let Operand::Value(v) = o {
            reads[flowc_ir::ix(*v)] += 1;
        }
    });
    reads
}

/// The results never written to their words (*unstored*): a value
/// certainly a small integer (no collector reads its word) whose one
/// read, in the whole trace, its records included, is an operand of the
/// next instruction, computed by a word operation or a `get` and not a
/// loop variable's next value. It is left in the register it was
/// computed in, which the register cache then says holds its word, so
/// the next instruction's load of it is left out: `v = get c, v; w =
/// add.word v, 1; x = mod.word w, 256; set c, v, x` stored three words
/// no one read (a BF `+`: 10 instructions, 3 of them those stores). The
/// emitter checks that no code loads such a word from memory (a slow
/// path reloading its operands, a label between); where one does,
/// [`compile`] writes the trace again with every result stored. Sorted.
fn unstored_results(
    f: &Function,
    reads: &WordReads,
    small: &Small,
    to_regs: &[(flowc_ir::InstId, Reg)],
) -> Vec<flowc_ir::InstId> {
    let reads = reads.get_or_init(|| word_reads(f));
    let mut out = Vec::new();
    for &b in &f.layout {
        for w in f.blocks[b].insts.windows(2) {
            let Some(v) = f.insts[w[0]].result else { continue };
            let computed = matches!(
                f.insts[w[0]].kind,
                InstKind::Op { op: Operator::Known(_), form: Form::Word, .. } | InstKind::Get { .. }
            );
            // Read first: an operation loads its first operand into rax
            // before the others, a `set` its value into rcx first.
            let value = Operand::Value(v);
            let read_next = match &f.insts[w[1]].kind {
                // An operation whose result may leave the small integers
                // has a slow path, which reloads its operands from their
                // words: a chain `a + 0`, `a + 1` had its whole trace
                // written twice for it. One whose result is small mostly
                // has none (word arithmetic, a `mod` by a constant); where
                // it still has (a comparison with an operand of unknown
                // kind, a division by a variable), the emitter finds the
                // reload and the trace is written again, as before.
                InstKind::Op { args, .. } => {
                    args.first() == Some(&value)
                        && f.insts[w[1]].result.is_some_and(|r| small.operand(&Operand::Value(r)))
                }
                InstKind::Set { value: x, .. } => *x == value,
                InstKind::Guard { kind: GuardKind::True(x) | GuardKind::False(x), .. } => *x == value,
                InstKind::Iterations(x) => *x == value,
                _ => false,
            };
            if computed
                && read_next
                && reads[flowc_ir::ix(v)] == 1
                && small.operand(&Operand::Value(v))
                && !to_regs.iter().any(|&(i, _)| i == w[0])
            {
                out.push(w[0]);
            }
        }
    }
    out.sort_unstable();
    out
}

/// The links whose checks are fused ([`Emit::fused_link`]): a
/// `get.object` (the first of the three instructions, listed here, sorted)
/// whose result only the `guard_link` and the `guard_at` right after it
/// read, and their records. Where the `guard_at` holds, the link is set,
/// not 0, and the object it says: its one comparison stands for all three
/// tests, and the link's word is written only on the way out.
fn fused_links(f: &Function, reads: &WordReads) -> Vec<flowc_ir::InstId> {
    let mut candidates: Vec<(flowc_ir::InstId, ValueId, u32)> = Vec::new();
    for &b in &f.layout {
        for w in f.blocks[b].insts.windows(3) {
            let (InstKind::Get { proven: true, .. }, Some(v)) = (&f.insts[w[0]].kind, f.insts[w[0]].result) else {
                continue;
            };
            let (
                InstKind::Guard { kind: GuardKind::Link(l, _), resume: r1, .. },
                InstKind::Guard { kind, resume: r2, .. },
            ) = (&f.insts[w[1]].kind, &f.insts[w[2]].kind)
            else {
                continue;
            };
            let GuardKind::At(a, _, d) = kind else { continue };
            if *l != Operand::Value(v) || *a != Operand::Value(v) || i32::try_from(*d).is_err() {
                continue;
            }
            let held = |r: &flowc_ir::ResumeId| f.resumes[*r].operands().filter(|x| **x == Operand::Value(v)).count();
            // Each guard reads its record (counted per guard below).
            let expected = 2 + held(r1) + held(r2);
            candidates.push((w[0], v, expected as u32));
        }
    }
    if candidates.is_empty() {
        return Vec::new();
    }
    // Records per guard or exit that leaves by them: one another guard
    // shares, holding the link, reads its word too.
    let reads = reads.get_or_init(|| word_reads(f));
    let mut out: Vec<flowc_ir::InstId> =
        candidates.into_iter().filter(|&(_, v, n)| reads[flowc_ir::ix(v)] == n).map(|(i, _, _)| i).collect();
    out.sort_unstable();
    out
}

/// The `guard_at` results whose words are written only on the way out
/// (LuaJIT's snapshots restore such values from what they were computed
/// of): a link checked to be the cell `d` bytes past its base's is that
/// address wherever it is read — a register plus `d`, or the base's word
/// loaded plus `d` — and an exit stub computes it into its word before
/// leaving, for the exit's record and a bridge in the frame. A BF `>` is
/// then a load, a compare and a branch; the store of every link on the
/// way was a fifth of a scan's instructions.
///
/// Not where the base is itself such a link, nor where the loop block
/// reads the link after its base's register got the base's next value
/// ([`direct_results`]): the base is gone then. The map gives each one's
/// base and distance.
fn rematerialized(
    f: &Function,
    regs: &[(ValueId, Reg)],
    to_regs: &[(flowc_ir::InstId, Reg)],
) -> HashMap<ValueId, (ValueId, i32)> {
    let mut links: HashMap<ValueId, (ValueId, i32)> = HashMap::default();
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            let InstKind::Guard { kind: GuardKind::At(_, Operand::Value(base), d), .. } = &f.insts[i].kind else {
                continue;
            };
            if let (Some(v), Ok(d)) = (f.insts[i].result, i32::try_from(*d)) {
                links.insert(v, (*base, d));
            }
        }
    }
    let chained: Vec<ValueId> = links.iter().filter(|(_, (b, _))| links.contains_key(b)).map(|(v, _)| *v).collect();
    for v in chained {
        links.remove(&v);
    }
    let Some(lp) = loop_block(f) else { return links };
    // Where in the loop block each register base gets its next value.
    let insts = &f.blocks[lp].insts;
    let gone: Vec<(ValueId, usize)> = regs
        .iter()
        .filter_map(|&(x, r)| {
            let &(i, _) = to_regs.iter().find(|&&(_, q)| q == r)?;
            Some((x, insts.iter().position(|&y| y == i)?))
        })
        .collect();
    if links.is_empty() || gone.is_empty() {
        return links;
    }
    let mut late: Vec<ValueId> = Vec::new();
    let mut read_at = |o: &Operand, at: usize| {
        if let Some(&(base, _)) = o.as_value().and_then(|v| links.get(&v)) {
            // The instruction that moves the base's next value into the
            // register reads (and leaves) before it writes.
            if gone.iter().any(|&(x, g)| x == base && at > g) {
                late.extend(o.as_value());
            }
        }
    };
    for (at, &i) in insts.iter().enumerate() {
        f.insts[i].kind.operands().for_each(|o| read_at(o, at));
        if let InstKind::Guard { resume, .. } = &f.insts[i].kind {
            f.resumes[*resume].operands().for_each(|o| read_at(o, at));
        }
    }
    // The back edge's moves read at the block's end; but a variable's
    // next value computed into its register is not moved.
    for &p in &f.blocks[lp].phis {
        let InstKind::Phi(inputs) = &f.insts[p].kind else { continue };
        let reg = regs.iter().find(|&&(x, _)| Some(x) == f.insts[p].result).map(|&(_, r)| r);
        for (_, o) in inputs.iter().filter(|(from, _)| *from == lp) {
            let computed = to_regs.iter().any(|&(i, r)| Some(r) == reg && f.insts[i].result == o.as_value());
            if !computed {
                read_at(o, insts.len());
            }
        }
    }
    for v in late {
        links.remove(&v);
    }
    links
}

/// The links that come back whose checks are fused ([`Emit::fused_return`]):
/// a `get.object` (the first of four instructions, listed here, sorted)
/// whose result `v` only the `guard_link` right after it and the
/// `c = eq.word v, x` after that read, then `guard_true c` — and their
/// records (`c` in none). A `guard_link`'s operand is an object of its
/// class or 0; where `v` is `x`, an object, it is set, not 0, and the
/// guards hold: one comparison stands for the four instructions, and the
/// link's word is written only on the way out (a BF `>` then `<`: the
/// straight code a recording makes of it checks that the way back lands
/// where the way out started).
fn fused_returns(f: &Function, reads: &WordReads) -> Vec<flowc_ir::InstId> {
    let mut candidates: Vec<(flowc_ir::InstId, ValueId, u32, ValueId)> = Vec::new();
    for &b in &f.layout {
        for w in f.blocks[b].insts.windows(4) {
            let (InstKind::Get { proven: true, .. }, Some(v)) = (&f.insts[w[0]].kind, f.insts[w[0]].result) else {
                continue;
            };
            let InstKind::Guard { kind: GuardKind::Link(l, _), resume: r1, .. } = &f.insts[w[1]].kind else { continue };
            let (Some((Op::Eq, Form::Word)), Some(c)) = (f.insts[w[2]].kind.known_op(), f.insts[w[2]].result) else {
                continue;
            };
            let InstKind::Op { args, .. } = &f.insts[w[2]].kind else { continue };
            let InstKind::Guard { kind: GuardKind::True(t), resume: r3, .. } = &f.insts[w[3]].kind else { continue };
            let v_op = Operand::Value(v);
            let compares_v = args.len() == 2 && (args[0] == v_op) != (args[1] == v_op);
            if *l != v_op || *t != Operand::Value(c) || !compares_v {
                continue;
            }
            let held = |r: &flowc_ir::ResumeId, x: ValueId| {
                f.resumes[*r].operands().filter(|o| **o == Operand::Value(x)).count()
            };
            if held(r1, c) + held(r3, c) > 0 {
                continue;
            }
            // Each guard reads its record (counted per guard below).
            let expected = 2 + held(r1, v) + held(r3, v);
            candidates.push((w[0], v, expected as u32, c));
        }
    }
    if candidates.is_empty() {
        return Vec::new();
    }
    let reads = reads.get_or_init(|| word_reads(f));
    let mut out: Vec<flowc_ir::InstId> = candidates
        .into_iter()
        .filter(|&(_, v, n, c)| reads[flowc_ir::ix(v)] == n && reads[flowc_ir::ix(c)] == 1)
        .map(|(i, ..)| i)
        .collect();
    out.sort_unstable();
    out
}

/// The links whose checks a `guard_row` earlier in their block made
/// (`flowc_ir::GuardKind::Row`; docs/architecture.md, "The heap's row"):
/// fused links ([`fused_links`]: `get.object` of a link field, its
/// `guard_link` of the row's class, its `guard_at`) and fused returns
/// ([`fused_returns`]: the link compared with an object) whose object and
/// link both lie in the span of a `guard_row` on their walk's base, the
/// link the row's one from that object; and lone `guard_at`s of such a
/// link read before in the block, with no such instruction since.
/// Listed by the first instruction (the `get.object`,
/// or the `guard_at`), sorted. A `set` of a link field, a call or a `new`
/// ends what the guards before it vouch for.
fn row_covered(f: &Function) -> Vec<flowc_ir::InstId> {
    let get_of = |o: &Operand| -> Option<(Operand, Symbol)> {
        let flowc_ir::ValueDef::Inst(i) = f.values[o.as_value()?].def else { return None };
        match &f.insts[i].kind {
            InstKind::Get { obj, field, proven: true } => Some((obj.clone(), *field)),
            _ => None,
        }
    };
    let mut out = Vec::new();
    for &b in &f.layout {
        let insts = &f.blocks[b].insts;
        let mut rows: Vec<(ValueId, flowc_ir::RowSpan)> = Vec::new();
        // The links read in the block since the last `set`, call or
        // `new` (what the guards after them vouch for).
        let mut fresh: Vec<ValueId> = Vec::new();
        // Whether some row's span holds the link `field` of `obj` leading
        // to `to`, of class `class` where a fused `guard_link` checks one.
        let vouched = |rows: &[(ValueId, flowc_ir::RowSpan)],
                       obj: &Operand,
                       field: Symbol,
                       to: &Operand,
                       class: Option<Symbol>| {
            let (Some((x, dx)), Some((y, dy))) = (f.walk_place(obj), f.walk_place(to)) else { return false };
            x == y
                && rows.iter().any(|(r, span)| {
                    *r == x
                        && class.is_none_or(|c| c == span.class)
                        && span.links(dx, field, dy)
                        && i32::try_from(dy).is_ok()
                })
        };
        for (k, &i) in insts.iter().enumerate() {
            match &f.insts[i].kind {
                // Only a span that holds its object says that object is
                // one of the row's.
                InstKind::Guard { kind: GuardKind::Row(Operand::Value(o), span), .. }
                    if span.lo <= 0 && 0 <= span.hi =>
                {
                    rows.push((*o, *span))
                }
                // Any `set` ends what a link read before it says (no row
                // may name its field yet); one that may write a link ends
                // what the rows' guards say too.
                kind @ (InstKind::Set { .. } | InstKind::Call { .. } | InstKind::New(_)) => {
                    fresh.clear();
                    if kind.may_write_link(|x| rows.iter().any(|(_, s)| x == s.next || x == s.prev)) {
                        rows.clear();
                    }
                }
                InstKind::Get { proven: true, .. } if rows.is_empty() => fresh.extend(f.insts[i].result),
                InstKind::Get { obj, field, proven: true } => {
                    fresh.extend(f.insts[i].result);
                    let (Some(v), Some(&g), Some(&t)) = (f.insts[i].result, insts.get(k + 1), insts.get(k + 2)) else {
                        continue;
                    };
                    let InstKind::Guard { kind: GuardKind::Link(l, class), .. } = &f.insts[g].kind else { continue };
                    if *l != Operand::Value(v) {
                        continue;
                    }
                    match &f.insts[t].kind {
                        // A fused link: the `guard_at`'s result is where it lies.
                        InstKind::Guard { kind: GuardKind::At(..), .. } => {
                            if let Some(r) = f.insts[t].result {
                                if vouched(&rows, obj, *field, &Operand::Value(r), Some(*class)) {
                                    out.push(i);
                                }
                            }
                        }
                        // A fused return: the link compared with `x`.
                        InstKind::Op { args, .. } if args.len() == 2 => {
                            let x = if args[0] == Operand::Value(v) { &args[1] } else { &args[0] };
                            if vouched(&rows, obj, *field, x, Some(*class)) {
                                out.push(i);
                            }
                        }
                        _ => {}
                    }
                }
                InstKind::Guard { kind: GuardKind::At(link, ..), .. } if !rows.is_empty() => {
                    let (Some(r), Some((obj, field))) = (f.insts[i].result, get_of(link)) else { continue };
                    if !link.as_value().is_some_and(|v| fresh.contains(&v)) {
                        continue;
                    }
                    // The link's class guard came before, as code ran it.
                    if vouched(&rows, &obj, field, &Operand::Value(r), None) {
                        out.push(i);
                    }
                }
                _ => {}
            }
        }
    }
    out.sort_unstable();
    out
}

/// The words of `f`'s values, as offsets from the stack pointer, and how
/// many come first, those of values that may point into the heap: the
/// rest hold values `small` proves small integers.
fn word_layout(f: &Function, small: &Small) -> (Vec<i32>, i32) {
    let (mut scanned, mut certain): (Vec<ValueId>, Vec<ValueId>) =
        f.values.iter().map(|(v, _)| v).partition(|&v| !small.operand(&Operand::Value(v)));
    let first = scanned.len() as i32;
    scanned.append(&mut certain);
    let mut words = vec![0; f.values.len()];
    for (w, v) in scanned.into_iter().enumerate() {
        words[flowc_ir::ix(v)] = 8 * w as i32;
    }
    (words, first)
}

/// Most words a frame zeroes with a store of `rax` each.
const SCALAR_ZEROES: i32 = 4;

/// Most words a frame zeroes with stores of sixteen bytes (5 bytes of
/// code apiece, 8 past the 16th word), not by `rep stosq`.
const UNROLLED_ZEROES: i32 = 96;

/// The registers loop variables, the loop's count and the values defined
/// before the loop block live in (see the module docs).
const LOOP_REGS: [Reg; 4] = [R8, R9, R10, R11];

/// A runtime call on a slow path.
#[derive(Clone, Debug)]
enum Call {
    /// `flowc_rt_op(ctx, desc, a, b)`.
    Op { desc: i64, a: Src, b: Src },
    /// `flowc_rt_get(ctx, obj, field)`.
    Get { obj: Src, field: i64 },
    /// `flowc_rt_set(ctx, obj, field, value)`.
    Set { obj: Src, field: i64, value: Src },
}

/// Code out of line, after the trace.
#[derive(Clone, Debug)]
enum Cold {
    /// A slow path: the call (at `site`, if any), its result to `result`,
    /// then back.
    Slow { at: Label, back: Label, call: Call, site: Option<u64>, result: Option<i32>, in_loop: bool },
    /// An unbound word in `value`: the runtime raises `key_not_found`.
    Unbound { at: Label, value: Src, site: Option<u64>, in_loop: bool },
    /// Where a fused comparison's slow path comes back
    /// ([`Emit::fused_compare`]): rax, the runtime's result, tested; to
    /// `exit` if the guard fails (`fails`: the flags that say so against
    /// the word of 0), else on at `then`.
    Test { at: Label, fails: Cond, exit: Label, then: Label, in_loop: bool },
    /// Exit number `exit` (of this trace's exits); `set`: a word to write
    /// first (the value of a comparison fused with its guard, which only
    /// the guard's exit reads: [`fused_compares`]).
    Exit { at: Label, exit: usize, in_loop: bool, set: Option<(i32, i64)> },
    /// An error the runtime's `function` raises at `site`, taking only
    /// the context: the fuel ran out at a loop header, or a call would go
    /// deeper than the interpreter may.
    Raise { at: Label, function: RuntimeFn, site: Option<u64>, in_loop: bool },
    /// Where a `guard_cold` finds its position's count 0, rcx pointing at
    /// the position's words: with a link there, `values` (the dispatch
    /// loop's parameters, in order) go to the exit buffer and the code
    /// in the link's code slot is entered as a `jump_trace` enters a
    /// trace; without one, to `exit`.
    Link { at: Label, exit: Label, values: Vec<Operand>, in_loop: bool },
    /// Where a link's fused checks fail ([`Emit::fused_link`],
    /// [`Emit::fused_return`]): the link, in rax, to its word `word`;
    /// tested as its `get` would (0, unset: the slow path `slow`, which
    /// comes back at `back`) and its `guard_link` (the word of 0:
    /// `link_exit`); anything else is another object than the one
    /// compared, and fails the `guard_at` or the equality (`other_exit`).
    Split {
        at: Label,
        word: i32,
        slow: Label,
        back: Label,
        link_exit: Label,
        other_exit: Label,
        in_loop: bool,
        /// Where the link is read again into rax (`[reg + disp]`), when
        /// the hot path compared it in memory and kept no copy.
        reload: Option<(Reg, i32)>,
    },
}

struct Emit<'e, 'a, 'i> {
    a: Asm,
    env: &'e mut Target<'a>,
    f: &'e Function,
    facts: &'e Shape,
    functions: &'e Functions,
    /// Bytes `sub rsp` reserves.
    frame: i32,
    /// The first of the scratch words above the values' (phi moves).
    scratch: i32,
    /// A bridge's parent frame.
    inherit: Option<Inherit<'i>>,
    /// By value: its word (offset from the stack pointer): its own, or for
    /// a parameter a bridge inherits, its parent's ([`word_layout`]).
    words: Vec<i32>,
    /// How many of the frame's own words, the first, may hold pointers
    /// (zeroed on entry but for the parameters' words, which are loaded
    /// first; listed at safepoints).
    scanned: i32,
    /// The frame this code runs in ([`Compiled::frame`]).
    own: Frame,
    direct: Option<u32>,
    body: u32,
    /// [`Compiled::regs_entry`].
    regs_entry: Option<u32>,
    exit_words: Vec<Vec<i32>>,
    stubs: Vec<(u32, u32)>,
    stop: Label,
    leave: Label,
    /// The tail exits jump to that store their values
    /// ([`Emit::store_values_tail`]).
    store_values: Label,
    /// The code every exit stub goes on with ([`Emit::exit_common_tail`]).
    exit_common: Label,
    blocks: HashMap<BlockId, Label>,
    cold: Vec<Cold>,
    /// Values known to be objects of the layout (tested earlier).
    objects: Vec<ValueId>,
    /// How many of `objects` were known before the instructions being
    /// compiled: what holds where their guards leave.
    objects_before: usize,
    exit_numbers: HashMap<ExitAt, usize>,
    /// The trace's exits ([`Compiled::exits`]) and their link slots.
    exits: Vec<TraceExit>,
    // Boxed: code holds each one's address, which growing the list
    // must not move.
    #[allow(clippy::vec_box)]
    slots: Vec<Box<ExitSlot>>,
    /// The constants the code wants the words of, and where
    /// ([`Compiled::fills`]).
    constants: Vec<Value>,
    fills: Vec<(u32, usize)>,
    safepoints: Vec<u32>,
    /// The site of the instruction being compiled, numbered.
    site: Option<u64>,
    current: BlockId,
    /// Whether the trace has a loop block that keeps values in registers
    /// ([`loop_registers`]: one that calls none of the program's functions
    /// and is not the entry block).
    loop_in_registers: bool,
    /// The loop block's values that live in registers, by value: its
    /// variables first, then the last [`Emit::invariants`] of them, values
    /// defined before it ([`loop_invariants`]).
    regs: Vec<(ValueId, Reg)>,
    /// How many of [`Emit::regs`] are values defined before the loop
    /// block, loaded where it is entered.
    invariants: usize,
    /// The register the loop block counts its iterations in, the first of
    /// [`LOOP_REGS`] its variables leave free (none when they take all):
    /// read from the context where the loop is entered, written back
    /// wherever its variables are ([`Emit::spill`]). An add to the
    /// context's word at every round made each round wait for the one
    /// before's store: a loop of three operations ran 375 ms, against 338
    /// with the register.
    counter: Option<Reg>,
    /// Instructions of the loop block whose result is a variable's next
    /// value, computed after the last use of its current one: the result
    /// goes to the variable's register at once ([`direct_results`]).
    to_regs: Vec<(flowc_ir::InstId, Reg)>,
    /// Whether code being written runs in the loop block (its variables
    /// in their registers).
    in_loop: bool,
    /// The loop variables' registers that got their next value earlier
    /// in the loop block ([`Emit::result_to_variable`]): no longer a
    /// base to compute addresses from ([`Emit::link_src`]).
    clobbered: Vec<Reg>,
    /// The comparisons that may set the flags their guard jumps on
    /// ([`fused_compares`]).
    fused: Vec<flowc_ir::InstId>,
    /// The runs of guards of one value against constants, by their first
    /// instruction ([`Emit::guard_search`]).
    guard_chains: HashMap<flowc_ir::InstId, crate::lower::switch::GuardChain>,
    /// The links whose checks are one comparison ([`fused_links`]).
    fused_links: Vec<flowc_ir::InstId>,
    /// The links that come back whose checks are one comparison
    /// ([`fused_returns`]).
    fused_returns: Vec<flowc_ir::InstId>,
    /// The links a `guard_row` before them vouches for ([`row_covered`]):
    /// the `get.object`s of fused links and returns, and lone `guard_at`s.
    row_covered: Vec<flowc_ir::InstId>,
    /// The `guard_at` results whose words only exits write, by value:
    /// their base and distance ([`rematerialized`]).
    remat: HashMap<ValueId, (ValueId, i32)>,
    /// Whether results may stay unstored ([`unstored_results`]): not
    /// when writing a trace again after a load of such a word.
    leave_unstored: bool,
    /// The results left unstored ([`unstored_results`]).
    unstored: Vec<flowc_ir::InstId>,
    /// The word of the instruction being written's result, if it was
    /// left unstored (in rax): for [`Emit::bind_back`].
    unstored_now: Option<i32>,
}

impl Emit<'_, '_, '_> {
    fn slot(&self, v: ValueId) -> i32 {
        self.words[flowc_ir::ix(v)]
    }

    /// The base and distance of `v`, a link read as its address
    /// ([`rematerialized`]), if it is one.
    fn remat_of(&self, v: ValueId) -> Option<(ValueId, i32)> {
        if self.remat.is_empty() {
            return None;
        }
        self.remat.get(&v).copied()
    }

    /// A register holding frame word `k`: one the register cache knows
    /// still holds it, else `into`, loaded.
    fn word_in(&mut self, k: i32, into: Reg) -> Reg {
        self.a.holder(k).unwrap_or_else(|| {
            self.a.load(into, RSP, k);
            into
        })
    }

    fn run(&mut self) -> Result<(), &'static str> {
        for &b in &self.f.layout {
            let l = self.a.label();
            self.blocks.insert(b, l);
        }
        let loop_regs = loop_registers(self.f);
        self.loop_in_registers = loop_regs.is_some();
        self.regs = loop_regs.unwrap_or_default();
        self.counter = if self.loop_in_registers { LOOP_REGS.get(self.regs.len()).copied() } else { None };
        self.to_regs = direct_results(self.f, &self.regs);
        self.fused = fused_compares(self.f);
        self.guard_chains = crate::lower::switch::guard_chains(self.f, &crate::lower::count_uses(self.f));
        // Counted once for the three that read it, and only if one does.
        let reads = WordReads::new();
        self.fused_links = fused_links(self.f, &reads);
        self.fused_returns = fused_returns(self.f, &reads);
        self.row_covered = row_covered(self.f);
        self.remat = rematerialized(self.f, &self.regs, &self.to_regs);
        if self.leave_unstored {
            self.unstored = unstored_results(self.f, &reads, &self.facts.small, &self.to_regs);
            for &i in &self.unstored {
                let v = self.f.insts[i].result.expect("an unstored result");
                self.a.leave_unwritten(self.words[flowc_ir::ix(v)]);
            }
        }
        if self.loop_in_registers {
            let f = self.f;
            let exit_written: rustc_hash::FxHashSet<ValueId> = (self.fused.iter())
                .chain(&self.fused_links)
                .chain(&self.fused_returns)
                .chain(&self.unstored)
                .filter_map(|&i| f.insts[i].result)
                .collect();
            let free = &LOOP_REGS[(self.regs.len() + 1).min(LOOP_REGS.len())..];
            let invariants = loop_invariants(f, free, &self.remat, |v| exit_written.contains(&v));
            self.invariants = invariants.len();
            self.regs.extend(invariants);
        }
        self.prologue();
        let f = self.f;
        for &b in &f.layout {
            self.block(b)?;
        }
        self.cold_code();
        Ok(())
    }

    /// `push rbp; mov rbp, rsp; push rbx; sub rsp, frame`, the context to
    /// `rbx`, the frame zeroed, the frame and stack pointer stored for the
    /// collector, the parameters loaded from the exit buffer. A bridge
    /// that inherits its parent's frame builds all of it this way (its
    /// standard entry), and has a direct entry after it.
    fn prologue(&mut self) {
        let words = self.f.values.len() as i32;
        // Scratch words for a parallel copy of the most phis of a block,
        // or of the arguments of a jump back to the root.
        let phis = self.f.layout.iter().map(|&b| self.f.blocks[b].phis.len()).max().unwrap_or(0) as i32;
        let back = self.inherit.as_ref().filter(|i| i.root.is_some()).map_or(0, |i| i.parent.root_params.len());
        self.scratch = 8 * words;
        let all = words + phis.max(back as i32);
        let Some((parent, params)) = self.inherit.as_ref().map(|i| (i.parent, i.params)) else {
            // rsp is 8 mod 16 after the call; push rbp, push rbx: 8 mod 16
            // again, so the frame is 8 mod 16 for calls to be aligned.
            self.frame = 8 * all + if all % 2 == 0 { 8 } else { 0 };
            // The parameters' words come first (`word_layout`) and are
            // loaded before anything can read them: not zeroed. A trace
            // that cannot collect zeroes none (as a bridge that cannot):
            // no safepoint of its own reads a word before it is written,
            // and a bridge on top that can collect zeroes them first
            // (`Frame::stale`). A loop body entered at every round of an
            // outer loop zeroed its dozens of words each time.
            let loaded = self.f.params.iter().enumerate().take_while(|&(k, &p)| self.slot(p) == 8 * k as i32).count();
            let lazy = !may_collect(self.f);
            let from = if lazy { self.scanned } else { (loaded as i32).min(self.scanned) };
            self.enter(self.frame, from, self.scanned);
            self.load_params();
            if self.f.params.len() <= ARG_REGS.len() {
                // The register entry, which a baseline `jump_trace` takes
                // (the arguments in `ARG_REGS`): the frame as above, the
                // parameters stored from their registers once the words
                // are zeroed (which uses none of them).
                let body = self.a.label();
                self.a.jmp(body);
                self.regs_entry = Some(self.a.offset());
                self.enter(self.frame, from, self.scanned);
                for (k, &p) in self.f.params.iter().enumerate() {
                    let s = self.slot(p);
                    self.a.store(RSP, s, ARG_REGS[k]);
                }
                self.a.bind(body);
            }
            self.body = self.a.offset();
            let slots: Vec<u32> = (0..self.scanned as u32).map(|k| 8 * k).collect();
            self.own = Frame {
                below: self.frame,
                stale: if lazy { slots.clone() } else { Vec::new() },
                slots: slots.into(),
                root_depth: 0,
                root_params: self.f.params.iter().map(|&p| self.slot(p)).collect(),
            };
            return;
        };
        // A bridge's own words keep the stack pointer 16-aligned.
        self.frame = 8 * (all + all % 2);
        let own = self.frame;
        for (&p, &word) in self.f.params.iter().zip(params) {
            self.words[flowc_ir::ix(p)] = own + word;
        }
        let mut slots: Vec<u32> = (0..self.scanned as u32).map(|k| 8 * k).collect();
        slots.extend(parent.slots.iter().map(|&s| s + own as u32));
        // A bridge that cannot collect leaves its words as they are on
        // the way in (no safepoint reads them before they are written);
        // one that can zeroes its own, and the inherited words a bridge
        // below left so, but the exit's values, which its parent wrote.
        let lazy = !may_collect(self.f);
        let inherited: Vec<u32> =
            parent.stale.iter().filter(|&&s| !params.contains(&(s as i32))).map(|&s| s + own as u32).collect();
        let stale = match lazy {
            true => (0..self.scanned as u32).map(|k| 8 * k).chain(inherited.iter().copied()).collect(),
            false => Vec::new(),
        };
        self.own = Frame {
            below: own + parent.below,
            slots: slots.into(),
            root_depth: own + parent.root_depth,
            root_params: parent.root_params.clone(),
            stale,
        };
        // The standard entry: the whole frame, every word of it zeroed.
        let below = self.own.below;
        self.enter(below, 0, below / 8);
        self.load_params();
        let body = self.a.label();
        self.a.jmp(body);
        // The direct entry, from the parent's exit: its frame is in place.
        self.direct = Some(self.a.offset());
        self.a.alu_imm(Alu::Sub, RSP, own);
        if !lazy {
            self.zero(0, self.scanned);
            if !inherited.is_empty() {
                self.a.alu(Alu::Xor, RAX, RAX);
                for &s in &inherited {
                    self.a.store(RSP, s as i32, RAX);
                }
            }
        }
        self.a.store(RBX, offsets::LAST_FP, RBP);
        self.a.store(RBX, offsets::LAST_SP, RSP);
        self.a.bind(body);
        self.body = self.a.offset();
    }

    /// Pushes `rbp` and `rbx`, reserves `frame` bytes, takes the context
    /// from `rdi`, zeroes words `from..words` and stores the frame and
    /// stack pointers for the collector.
    fn enter(&mut self, frame: i32, from: i32, words: i32) {
        let a = &mut self.a;
        a.push(RBP);
        a.mov(RBP, RSP);
        a.push(RBX);
        a.alu_imm(Alu::Sub, RSP, frame);
        a.mov(RBX, RDI);
        self.zero(from, words);
        // The stack pointer stays put until the epilogue (or a bridge's
        // own words are popped): the collector walks from here during
        // any runtime call.
        self.a.store(RBX, offsets::LAST_FP, RBP);
        self.a.store(RBX, offsets::LAST_SP, RSP);
    }

    /// Zeroes words `from..words` above the stack pointer: a store of
    /// `rax` each for a few (a bridge's words, zeroed at every crossing
    /// into it), sixteen bytes of `xmm0` a store for more, and `rep stosq`
    /// for a frame past [`UNROLLED_ZEROES`] words, whose start-up costs
    /// less than the stores then. (Against a loop of stores, `rep stosq`
    /// made the BF fractal's runs 2-3% faster; the stores of `xmm0`,
    /// against `rep stosq` for up to 96 words, tutorial fractal 20's
    /// 0.92.)
    fn zero(&mut self, from: i32, words: i32) {
        let n = words - from;
        if n <= 0 {
            return;
        }
        let a = &mut self.a;
        if n <= SCALAR_ZEROES {
            a.alu(Alu::Xor, RAX, RAX);
            for k in from..words {
                a.store(RSP, 8 * k, RAX);
            }
            return;
        }
        if n <= UNROLLED_ZEROES {
            a.zero_xmm0();
            let mut k = from;
            while k + 2 <= words {
                a.store_xmm0(8 * k);
                k += 2;
            }
            if k < words {
                // The odd word: the pair that ends at it (its first word
                // zeroed twice).
                a.store_xmm0(8 * (k - 1));
            }
            return;
        }
        // `rep stosq`, rcx words from rdi (free: the context is in rbx).
        a.alu(Alu::Xor, RAX, RAX);
        a.mov_imm(RCX, n as i64);
        if from == 0 {
            a.mov(RDI, RSP);
        } else {
            a.lea(RDI, RSP, 8 * from);
        }
        a.rep_stosq();
    }

    /// The parameters from the exit buffer to their words.
    fn load_params(&mut self) {
        self.a.load(RCX, RBX, offsets::EXIT_VALUES);
        for (k, &p) in self.f.params.iter().enumerate() {
            self.a.load(RAX, RCX, 8 * k as i32);
            let s = self.slot(p);
            self.a.store(RSP, s, RAX);
        }
    }

    /// Restores `rbx`, `rsp` and `rbp` as they were on entry.
    fn epilogue(&mut self) {
        self.a.load(RBX, RBP, -8);
        self.a.mov(RSP, RBP);
        self.a.pop(RBP);
    }

    fn block(&mut self, b: BlockId) -> Result<(), &'static str> {
        self.current = b;
        self.in_loop = self.loop_in_registers && self.f.blocks[b].term == Terminator::Jump(b);
        self.clobbered.clear();
        let l = self.blocks[&b];
        self.a.bind(l);
        if self.facts.is_header(b) && b != self.f.entry {
            match self.counter.filter(|_| self.in_loop) {
                Some(c) => self.a.alu_imm(Alu::Add, c, 1),
                None => self.a.alu_mem_imm(Alu::Add, RBX, offsets::ITERATIONS, 1),
            }
        }
        if b == self.f.entry && self.facts.work > 0 && self.facts.cfg.preds(b).is_empty() {
            // The statements this piece stands in for, once per run of it
            // (both entries, a bridge's direct one too, come here).
            let work = i32::try_from(self.facts.work).unwrap_or(i32::MAX);
            // (`Shape::work` is at most `i32::MAX` as the JIT sets it.)
            self.a.alu_mem_imm(Alu::Add, RBX, offsets::WORK, work);
        }
        if self.env.fuel && self.facts.is_header(b) {
            // One step; at 0 the run stops with `fuel_exhausted`, raised
            // at the header's first statement.
            self.a.alu_mem_imm(Alu::Sub, RBX, offsets::FUEL, 1);
            let at = self.a.label();
            self.a.jcc(Cond::Equal, at);
            let site = crate::lower::header_site(self.f, b).map(|s| self.env.sites.number(s));
            self.cold.push(Cold::Raise { at, function: RuntimeFn::OutOfFuel, site, in_loop: self.in_loop });
        }
        let f = self.f;
        let insts = &f.blocks[b].insts;
        let mut k = 0;
        while k < insts.len() {
            let i = insts[k];
            self.objects_before = self.objects.len();
            self.site = self.f.sites.inst(i).map(|s| self.env.sites.number(s));
            self.unstored_now = None;
            if self.row_covered.binary_search(&i).is_ok() {
                if self.fused_returns.binary_search(&i).is_ok() {
                    // The link comes back to the object it must: nothing
                    // to do.
                    k += 4;
                    continue;
                }
                if self.fused_links.binary_search(&i).is_ok() {
                    self.link_in_row(insts[k + 2]);
                    k += 3;
                    continue;
                }
                if matches!(f.insts[i].kind, InstKind::Guard { .. }) {
                    // A lone `guard_at` (its link read before).
                    self.link_in_row(i);
                    k += 1;
                    continue;
                }
            }
            if self.fused_returns.binary_search(&i).is_ok()
                && self.fused_return(i, insts[k + 1], insts[k + 2], insts[k + 3])
            {
                k += 4;
                continue;
            }
            if let Some(chain) = self.guard_chains.remove(&i) {
                self.guard_search(&chain);
                k += chain.len;
                continue;
            }
            if self.fused.binary_search(&i).is_ok() && self.fused_compare(i, insts[k + 1]) {
                k += 2;
                continue;
            }
            if self.fused_links.binary_search(&i).is_ok() && self.fused_link(i, insts[k + 1], insts[k + 2]) {
                k += 3;
                continue;
            }
            self.inst(i)?;
            k += 1;
        }
        self.site = self.f.sites.term(b).map(|s| self.env.sites.number(s));
        self.objects_before = self.objects.len();
        self.terminator(b)
    }

    /// The word of operand `o`: its slot, or an immediate (a constant that
    /// is not immediate is rooted in the cache's pool).
    fn src(&mut self, o: &Operand) -> Src {
        match o {
            Operand::Value(v) => match (self.remat_of(*v), self.reg(*v)) {
                (Some((base, d)), _) => match self.src(&Operand::Value(base)) {
                    Src::Reg(q) => Src::At(q, d),
                    Src::Slot(k) => Src::SlotAt(k, d),
                    _ => unreachable!("a base is a value, itself no link rematerialized"),
                },
                (None, Some(r)) => Src::Reg(r),
                (None, None) => Src::Slot(self.slot(*v)),
            },
            Operand::Const(c) => self.constant(c),
        }
    }

    /// Constant `c` as an operand: an immediate word, or one that
    /// installing the code fills in ([`Compiled::constants`]).
    fn constant(&mut self, c: &Value) -> Src {
        match word::immediate(c) {
            Some(w) => Src::Imm(w.as_i64()),
            None => {
                self.constants.push(c.clone());
                Src::Constant(self.constants.len() - 1)
            }
        }
    }

    fn load_src(&mut self, r: Reg, s: Src) {
        match s {
            Src::Slot(k) => self.a.load(r, RSP, k),
            Src::Reg(q) if q == r => {}
            Src::Reg(q) => self.a.mov(r, q),
            Src::At(q, d) => self.a.lea(r, q, d),
            Src::SlotAt(k, d) => {
                let base = self.word_in(k, r);
                self.a.lea(r, base, d);
            }
            Src::Imm(w) => self.a.mov_imm(r, w),
            Src::Constant(k) => {
                // Each load of it its own immediate, filled in when the
                // code is installed.
                let at = self.a.mov_imm64(r, 0);
                self.fills.push((at, k));
            }
        }
    }

    /// Operand `o` as an object a field is read from or written to: a
    /// `guard_at`'s result whose base lives in a loop variable's register
    /// (and still holds it: no next value went there yet) is that
    /// register plus the distance ([`Src::At`]), not its word — the word
    /// was just written, and reading it back would put a store and a load
    /// on the way from one link to the next. Anything else is [`Emit::src`].
    fn link_src(&mut self, o: &Operand) -> Src {
        if let Some((base, d)) = self.walked_from(o) {
            if let Src::Reg(q) = self.src(&base) {
                if !self.clobbered.contains(&q) {
                    return Src::At(q, d);
                }
            }
        }
        self.src(o)
    }

    /// The base and distance of `o`, a `guard_at`'s result (a distance
    /// that fits an instruction's displacement).
    fn walked_from(&self, o: &Operand) -> Option<(Operand, i32)> {
        let v = o.as_value()?;
        let flowc_ir::ValueDef::Inst(i) = self.f.values[v].def else { return None };
        match &self.f.insts[i].kind {
            InstKind::Guard { kind: GuardKind::At(_, base, d), .. } => Some((base.clone(), i32::try_from(*d).ok()?)),
            _ => None,
        }
    }

    /// The word `offset` bytes into object `o` (known to be an object of
    /// the layout) into `r`: one load where `o` is in a register or an
    /// address computed from one.
    fn load_field(&mut self, r: Reg, o: Src, offset: i32) {
        let (q, d) = self.field_place(o, offset, r);
        self.a.load(r, q, d)
    }

    /// Where field `offset` of the object `o` lies, as a register and a
    /// distance: `o` loaded into `scratch` unless a register holds it (a
    /// base in a word goes to rdx instead — no caller keeps anything
    /// there — so that the link's check and the walk's next read find it).
    fn field_place(&mut self, o: Src, offset: i32, scratch: Reg) -> (Reg, i32) {
        match o {
            Src::At(q, d) => (q, d + offset),
            Src::SlotAt(k, d) => (self.word_in(k, RDX), d + offset),
            Src::Reg(q) => {
                // A loop variable's register holds its current value
                // until its next value goes there (`direct_results`).
                debug_assert!(!self.clobbered.contains(&q), "{q:?} read after its next value went there");
                (q, offset)
            }
            Src::Slot(k) => (self.word_in(k, scratch), offset),
            o => {
                self.load_src(scratch, o);
                (scratch, offset)
            }
        }
    }

    /// The register loop value `v` (a variable, or a value defined before
    /// the loop block) lives in, where code runs in the loop.
    fn reg(&self, v: ValueId) -> Option<Reg> {
        if !self.in_loop {
            return None;
        }
        self.regs.iter().find(|&&(x, _)| x == v).map(|&(_, r)| r)
    }

    /// Copies the result of instruction `i` (in rax, on its inline path as
    /// on its slow path) to the register of the loop variable whose next
    /// value it is, if it goes there at once.
    fn result_to_variable(&mut self, i: flowc_ir::InstId) {
        self.result_to_variable_from(i, RAX);
    }

    /// [`Emit::result_to_variable`] for a result in `from`.
    fn result_to_variable_from(&mut self, i: flowc_ir::InstId, from: Reg) {
        if let Some(&(_, r)) = self.to_regs.iter().find(|&&(d, _)| d == i).filter(|_| self.in_loop) {
            self.a.mov(r, from);
            self.clobbered.push(r);
        }
    }

    /// Writes the loop variables in registers to their words (where code
    /// runs in the loop).
    fn spill(&mut self) {
        if self.in_loop {
            // (Values defined before the loop are in their words already.)
            for k in 0..self.regs.len() - self.invariants {
                let (v, r) = self.regs[k];
                let s = self.slot(v);
                self.a.store(RSP, s, r);
            }
            self.store_counter();
        }
    }

    /// Writes the loop's iteration count back to the context (where code
    /// runs in the loop and counts in a register).
    fn store_counter(&mut self) {
        if let Some(c) = self.counter.filter(|_| self.in_loop) {
            self.a.store(RBX, offsets::ITERATIONS, c);
        }
    }

    /// Reads the loop's values back into their registers (its variables,
    /// count and values defined before it), after a call that may have
    /// clobbered them.
    fn reload(&mut self) {
        if self.in_loop {
            for k in 0..self.regs.len() {
                let (v, r) = self.regs[k];
                let s = self.slot(v);
                self.a.load(r, RSP, s);
            }
            if let Some(c) = self.counter {
                self.a.load(c, RBX, offsets::ITERATIONS);
            }
        }
    }

    fn load(&mut self, r: Reg, o: &Operand) {
        let s = self.src(o);
        self.load_src(r, s);
    }

    /// `d` bytes past the word of `o` into `r` (a `guard_at`'s address):
    /// one `lea` from a loop variable's register.
    fn address(&mut self, r: Reg, o: &Operand, d: i32) {
        match self.src(o) {
            Src::Reg(q) => self.a.lea(r, q, d),
            Src::Slot(k) => {
                let q = self.word_in(k, r);
                self.a.lea(r, q, d)
            }
            s => {
                self.load_src(r, s);
                if d != 0 {
                    self.a.alu_imm(Alu::Add, r, d);
                }
            }
        }
    }

    fn store_result(&mut self, i: flowc_ir::InstId, r: Reg) {
        if let Some(v) = self.f.insts[i].result.filter(|&v| self.remat_of(v).is_none()) {
            let s = self.slot(v);
            if self.unstored.binary_search(&i).is_ok() {
                self.a.holds_unwritten(r, s);
                self.unstored_now = Some(s).filter(|_| r == RAX);
                return;
            }
            self.a.store(RSP, s, r);
        }
    }

    fn small(&self, o: &Operand) -> bool {
        self.facts.small.operand(o)
    }

    /// A guard that `rax`, operand `o`'s word, is the word `w` gives (an
    /// immediate — a small integer, an atom — or an object constant's
    /// word, filled in when the code is installed): the comparison first,
    /// and only where it fails the test for the unbound word, whose error
    /// the guard raises rather than leaving. (Tested first, the unbound
    /// word cost four instructions on the way that holds; `guard_int v,
    /// k, k` tested the tag and both bounds, eight.)
    fn guard_equal(&mut self, w: Src, o: &Operand, exit: Label) {
        let fails = self.failing(o, exit);
        match w {
            Src::Imm(w) if i32::try_from(w).is_ok() => self.a.alu_imm(Alu::Cmp, RAX, w as i32),
            w => {
                self.load_src(RCX, w);
                self.a.alu(Alu::Cmp, RAX, RCX);
            }
        }
        self.a.jcc(Cond::NotEqual, fails);
        self.unbound_tail(fails, o, exit);
    }

    /// Where a guard on operand `o` (in `rax`) goes when its test fails:
    /// straight to `exit` where `o` cannot be unbound, else to a label of
    /// its own ([`Emit::unbound_tail`]), which raises the unbound word's
    /// error and otherwise leaves by `exit`.
    fn failing(&mut self, o: &Operand, exit: Label) -> Label {
        if self.facts.may_be_unbound(o) && !self.small(o) {
            self.a.label()
        } else {
            exit
        }
    }

    /// The code of `fails` ([`Emit::failing`]), jumped over by the way
    /// that holds; nothing where `fails` is `exit` itself.
    fn unbound_tail(&mut self, fails: Label, o: &Operand, exit: Label) {
        if fails == exit {
            return;
        }
        let cont = self.a.label();
        self.a.jmp(cont);
        self.a.bind(fails);
        self.fail_if_unbound(RAX, o);
        self.a.jmp(exit);
        self.a.bind(cont);
    }

    /// Jumps to a cold call of the runtime's `key_not_found` if the word
    /// in `r` (the operand `o`) is unbound.
    fn fail_if_unbound(&mut self, r: Reg, o: &Operand) {
        if !self.facts.may_be_unbound(o) || self.small(o) {
            return;
        }
        self.a.mov(RDX, r);
        self.a.alu_imm(Alu::And, RDX, word::TAG_MASK as i32);
        self.a.alu_imm(Alu::Cmp, RDX, word::UNBOUND_TAG as i32);
        let at = self.a.label();
        self.a.jcc(Cond::Equal, at);
        let value = self.src(o);
        self.cold.push(Cold::Unbound { at, value, site: self.site, in_loop: self.in_loop });
    }

    /// A slow path for `call`, reached by a jump to the label returned,
    /// whose result goes to `result`'s word; it comes back to `back`.
    fn slow(&mut self, call: Call, result: Option<ValueId>, back: Label) -> Label {
        let at = self.a.label();
        let result = result.map(|v| self.slot(v));
        self.cold.push(Cold::Slow { at, back, call, site: self.site, result, in_loop: self.in_loop });
        at
    }

    fn inst(&mut self, i: flowc_ir::InstId) -> Result<(), &'static str> {
        let f = self.f;
        let result = f.insts[i].result;
        match &f.insts[i].kind {
            InstKind::Phi(_) => {}
            InstKind::Op { op: Operator::Known(op), args, form } => {
                self.op(i, *op, args, *form);
                self.result_to_variable(i);
            }
            InstKind::Op { op, args, .. } => {
                // An unknown operation: the runtime raises `missing_op`
                // through the generic call, with the operands read.
                let _ = (op, args);
                return Err("an unknown operation");
            }
            InstKind::CheckBound(o) => {
                self.load(RAX, o);
                self.fail_if_unbound(RAX, o);
                self.store_result(i, RAX);
            }
            InstKind::Unbound(var) => {
                self.a.mov_imm(RAX, word::unbound(*var).as_i64());
                self.store_result(i, RAX);
            }
            InstKind::New(class) => {
                self.new_object(*class);
                self.store_result(i, RAX);
                if let Some(r) = result {
                    self.objects.push(r);
                }
            }
            InstKind::Get { obj, field, proven } => {
                self.get(i, obj, *field, *proven);
                self.result_to_variable(i);
            }
            InstKind::Set { obj, field, value, proven } => self.set(obj, *field, value, *proven),
            // Made for whole programs only (`crate::walks`), never in a trace.
            InstKind::Walk { .. } => return Err("a walk"),
            InstKind::Call { func, args } => self.call(i, *func, args),
            InstKind::Guard { kind, resume, label } => {
                self.guard(kind, *resume, *label);
                if let GuardKind::At(..) = kind {
                    // Its result, the link's word computed from the base's,
                    // is in rax.
                    self.store_result(i, RAX);
                    self.objects.extend(result);
                    self.result_to_variable(i);
                }
            }
            InstKind::Iterations(o) => {
                // The count is a small integer: its word is `n << 1 | 1`.
                self.load(RAX, o);
                self.a.sar(RAX, 1);
                match self.counter.filter(|_| self.in_loop) {
                    Some(c) => self.a.alu(Alu::Add, c, RAX),
                    None => {
                        self.a.load(RCX, RBX, offsets::ITERATIONS);
                        self.a.alu(Alu::Add, RCX, RAX);
                        self.a.store(RBX, offsets::ITERATIONS, RCX);
                    }
                }
            }
        }
        Ok(())
    }

    /// `new class` into rax: a bump of the heap's run of the layout's
    /// size when it has room (the object numbered, its header written, its
    /// fields unset; as native code does it), else the runtime allocates
    /// (and collects when due).
    fn new_object(&mut self, class: Symbol) {
        let layout = self.env.objects.layout;
        let words = layout.words();
        let (slow, done) = (self.a.label(), self.a.label());
        if words <= flowc_lang::heap::block::MAX_WORDS {
            let run = flowc_lang::heap::run_offset(words) as i32;
            let a = &mut self.a;
            a.load(RCX, RBX, offsets::HEAP);
            a.load(RAX, RCX, run);
            a.lea(RDX, RAX, (words * 8) as i32);
            a.load(RSI, RCX, run + 8);
            a.alu(Alu::Cmp, RDX, RSI);
            a.jcc(Cond::Above, slow);
            a.store(RCX, run, RDX);
            a.load(RDX, RBX, offsets::ALLOCATIONS);
            a.alu_imm(Alu::Add, RDX, 1);
            a.store(RBX, offsets::ALLOCATIONS, RDX);
            a.store(RAX, cell::ID as i32, RDX);
            a.mov_imm(RSI, cell::OBJECT as i64);
            a.store(RAX, cell::META as i32, RSI);
            a.mov_imm64(RSI, layout as *const flowc_lang::heap::Layout as i64);
            a.store(RAX, cell::LAYOUT as i32, RSI);
            a.mov_imm(RSI, class.index() as i64);
            a.store(RAX, cell::CLASS as i32, RSI);
            a.mov_imm(RSI, cell::UNSET.as_i64());
            for k in 0..layout.fields().len() {
                a.store(RAX, (cell::SLOTS + 8 * k) as i32, RSI);
            }
            a.jmp(done);
        }
        self.a.bind(slow);
        self.runtime_call(RuntimeFn::New, &[Src::Imm(class.index() as i64)], None);
        self.check_stop();
        self.a.bind(done);
    }

    /// Calls runtime function `name` with the context and `args` (at most
    /// three), recording the safepoint; the result in rax.
    fn runtime_call(&mut self, f: RuntimeFn, args: &[Src], site: Option<u64>) {
        debug_assert_eq!(args.len(), f.arity(), "{}'s arguments", f.name());
        debug_assert!(site.is_none() || f.stops(), "a site for {}, which cannot fail", f.name());
        self.spill();
        if let Some(site) = site {
            self.a.mov_imm(RAX, site as i64);
            self.a.store(RBX, offsets::SITE, RAX);
        }
        self.a.mov(RDI, RBX);
        for (&r, &s) in [RSI, RDX, RCX].iter().zip(args) {
            self.load_src(r, s);
        }
        self.a.mov_imm64(RAX, f.address() as i64);
        let ret = self.a.call(RAX);
        self.safepoints.push(ret);
        self.reload();
    }

    /// A call of the program's function `func` with `args` (checked
    /// bound), one frame deeper; its result to `i`'s word.
    fn call(&mut self, i: flowc_ir::InstId, func: Symbol, args: &[Operand]) {
        for o in args {
            self.load(RAX, o);
            self.fail_if_unbound(RAX, o);
        }
        // The interpreter's depth limit.
        let overflow = self.a.label();
        self.a.load(RAX, RBX, offsets::DEPTH);
        self.a.alu_imm(Alu::Add, RAX, 1);
        self.a.load(RCX, RBX, offsets::MAX_DEPTH);
        self.a.alu(Alu::Cmp, RAX, RCX);
        self.a.jcc(Cond::AboveEqual, overflow);
        self.a.store(RBX, offsets::DEPTH, RAX);
        let in_loop = self.in_loop;
        self.cold.push(Cold::Raise { at: overflow, function: RuntimeFn::StackOverflow, site: self.site, in_loop });
        let registers = [RDI, RSI, RDX, RCX, R8, R9];
        for (o, &r) in args.iter().zip(&registers) {
            self.load(r, o);
        }
        self.a.mov(registers[args.len()], RBX);
        self.a.mov_imm64(RAX, self.functions[&func]);
        let ret = self.a.call(RAX);
        self.safepoints.push(ret);
        self.a.alu_mem_imm(Alu::Sub, RBX, offsets::DEPTH, 1);
        // The callee's frame and stack pointers were the collector's.
        self.a.store(RBX, offsets::LAST_FP, RBP);
        self.a.store(RBX, offsets::LAST_SP, RSP);
        self.check_stop();
        self.store_result(i, RAX);
    }

    /// Binds `back`, where the slow paths of an operation come back: as a
    /// label no jump reaches when none of them is taken (none will be
    /// written, [`Emit::cold_code`]), so what the registers hold stays
    /// known past it.
    fn bind_back(&mut self, back: Label) {
        // This operation's slow paths: the last ones made (an earlier
        // operation's end the search, which stays linear in the trace).
        let mine = |cold: &[Cold]| -> smallvec::SmallVec<[(Label, Option<i32>); 2]> {
            cold.iter()
                .rev()
                .take_while(|c| !matches!(c, Cold::Slow { back: b, .. } if *b != back))
                .filter_map(|c| match c {
                    Cold::Slow { at, result, .. } => Some((*at, *result)),
                    _ => None,
                })
                .collect()
        };
        let slow = mine(&self.cold);
        let taken = slow.iter().any(|&(at, _)| self.a.jumped_to(at));
        if !taken {
            self.a.bind_unreached(back);
            return;
        }
        // The inline path ends storing its result from rax; a slow path
        // stores the runtime's result from rax to the same word and jumps
        // back with it there: rax holds the word on both.
        // Or the inline path left its result unstored in rax.
        let inline = match self.a.last_store() {
            Some((base, disp, reg)) if base == RSP && reg == RAX => Some(disp),
            _ => self.unstored_now.filter(|&disp| self.a.holder(disp) == Some(RAX)),
        };
        match inline.filter(|&disp| slow.iter().all(|&(at, result)| !self.a.jumped_to(at) || result == Some(disp))) {
            Some(disp) => self.a.bind_holding(back, RAX, disp),
            None => self.a.bind(back),
        }
    }

    /// Goes to the stop block if rax is the stop word.
    fn check_stop(&mut self) {
        self.a.test(RAX, RAX);
        self.a.jcc(Cond::Equal, self.stop);
    }

    fn op(&mut self, i: flowc_ir::InstId, op: Op, args: &[Operand], form: Form) {
        let result = self.f.insts[i].result;
        let srcs: Vec<Src> = args.iter().map(|a| self.src(a)).collect();
        let desc = flowc_runtime::runtime::op_desc(op as usize, args.len(), self.site) as i64;
        let call = Call::Op { desc, a: srcs[0], b: srcs.get(1).copied().unwrap_or(Src::Imm(desc)) };
        // Known small: proven so ([`crate::small`]), or everything proven
        // (`.word`). An `.int` operand is an integer, maybe a bignum.
        let known = [0, 1].map(|k| form == Form::Word || args.get(k).is_some_and(|o| self.small(o)));
        let back = self.a.label();
        match op {
            Op::Same => {
                self.load_src(RAX, srcs[0]);
                self.fail_if_unbound(RAX, &args[0]);
            }
            Op::Add | Op::Sub | Op::Mul => {
                let slow = self.slow(call, result, back);
                self.load_src(RAX, srcs[0]);
                // A small constant second operand: its untagged double as
                // an immediate (the words of n and m add to n + m's plus 1).
                let imm = match (op, srcs[1]) {
                    (Op::Add | Op::Sub, Src::Imm(w)) if self.small(&args[1]) => i32::try_from(w - 1).ok(),
                    _ => None,
                };
                if let Some(k) = imm {
                    self.int_test([known[0], true], slow);
                    self.a.alu_imm(if op == Op::Add { Alu::Add } else { Alu::Sub }, RAX, k);
                } else {
                    self.load_src(RCX, srcs[1]);
                    self.int_test(known, slow);
                    self.a.lea(RCX, RCX, -1);
                    match op {
                        Op::Add => self.a.alu(Alu::Add, RAX, RCX),
                        Op::Sub => self.a.alu(Alu::Sub, RAX, RCX),
                        _ => {
                            self.a.sar(RAX, 1);
                            self.a.imul(RAX, RCX);
                        }
                    }
                }
                if form != Form::Word {
                    self.a.jcc(Cond::Overflow, slow);
                }
                if op == Op::Mul {
                    self.a.alu_imm(Alu::Or, RAX, 1);
                }
            }
            Op::Lt | Op::Le | Op::Gt | Op::Ge => {
                let slow = self.slow(call, result, back);
                self.load_src(RAX, srcs[0]);
                self.load_src(RCX, srcs[1]);
                self.int_test(known, slow);
                self.compare(op);
            }
            Op::Eq | Op::Ne => {
                let slow = self.slow(call, result, back);
                self.load_src(RAX, srcs[0]);
                self.load_src(RCX, srcs[1]);
                // Immediate words (integers, atoms) are equal exactly when
                // their words are; pointers and unbound words go slow.
                for (k, r) in [RAX, RCX].into_iter().enumerate() {
                    if !known[k] {
                        self.a.mov(RDX, r);
                        self.a.alu_imm(Alu::And, RDX, word::TAG_MASK as i32);
                        self.a.jcc(Cond::Equal, slow);
                        self.a.alu_imm(Alu::Cmp, RDX, word::UNBOUND_TAG as i32);
                        self.a.jcc(Cond::Equal, slow);
                    }
                }
                self.compare(op);
            }
            Op::Mod | Op::Div if matches!(args[1], Operand::Const(Value::Int(k)) if k > 0 && (k as u64).is_power_of_two() && k < 1 << 30) =>
            {
                // By 2^m, floored, of n (word 2n + 1), on the word: the
                // remainder's word is the low m + 1 bits (the lowest the
                // tag), the quotient's the word shifted right by m with
                // the tag set again (as the Cranelift lowering's
                // `by_power_of_two`).
                let Operand::Const(Value::Int(k)) = args[1] else { unreachable!() };
                let slow = self.slow(call, result, back);
                self.load_src(RAX, srcs[0]);
                self.int_test([known[0], true], slow);
                if op == Op::Mod {
                    self.a.alu_imm(Alu::And, RAX, (2 * k - 1) as i32);
                } else {
                    self.a.sar(RAX, k.trailing_zeros() as u8);
                    self.a.alu_imm(Alu::Or, RAX, 1);
                }
            }
            Op::Mod | Op::Div if matches!(args[1], Operand::Const(Value::Int(k)) if k > 0 && k < 1 << 30) => {
                // Any other constant: from 3 on (the powers of two above).
                let Operand::Const(Value::Int(k)) = args[1] else { unreachable!() };
                let slow = self.slow(call, result, back);
                self.load_src(RAX, srcs[0]);
                self.int_test([known[0], true], slow);
                self.a.sar(RAX, 1);
                self.divide_floored_by_constant(op, k);
            }
            Op::Mod | Op::Div => {
                // Any divisor: small integers both, not 0 (the runtime
                // raises the error) and, for a quotient, not -1 (the
                // quotient of the least small integer would not be one).
                let slow = self.slow(call, result, back);
                self.load_src(RAX, srcs[0]);
                self.load_src(RCX, srcs[1]);
                self.int_test(known, slow);
                self.a.alu_imm(Alu::Cmp, RCX, ZERO.as_i64() as i32);
                self.a.jcc(Cond::Equal, slow);
                if op == Op::Div {
                    self.a.alu_imm(Alu::Cmp, RCX, -1);
                    self.a.jcc(Cond::Equal, slow);
                }
                self.a.sar(RAX, 1);
                self.a.sar(RCX, 1);
                self.divide_floored(op);
            }
            Op::Len => {
                // The table's first word.
                let slow = self.slow(call, result, back);
                self.load_src(RAX, srcs[0]);
                self.list_table(slow);
                self.a.load(RAX, RDX, 0);
                self.a.alu(Alu::Add, RAX, RAX);
                self.a.alu_imm(Alu::Or, RAX, word::INT_TAG as i32);
            }
            Op::ReadList => {
                // A list's cell points at its table `[len, w0, w1, ...]`,
                // where an element that is not immediate is 0
                // (`crate::lower::lists`). A constant list's table is
                // known (the code holds the list, which holds it); a list
                // its form proves one needs no kind tests; `.word` proves
                // the index inside it too.
                let slow = self.slow(call, result, back);
                self.load_src(RCX, srcs[1]);
                if !known[1] {
                    self.a.test_imm(RCX, word::INT_TAG as i32);
                    self.a.jcc(Cond::Equal, slow);
                }
                match &args[0] {
                    Operand::Const(Value::List(l)) => self.a.mov_imm(RDX, l.words() as i64),
                    _ if form != Form::Generic => {
                        self.load_src(RAX, srcs[0]);
                        self.a.load(RDX, RAX, cell::ITEMS as i32);
                        self.a.test(RDX, RDX);
                        self.a.jcc(Cond::Equal, slow);
                    }
                    _ => {
                        self.load_src(RAX, srcs[0]);
                        self.list_table(slow);
                    }
                }
                self.a.sar(RCX, 1);
                if form != Form::Word {
                    // Unsigned: a negative index is out of range too.
                    self.a.load(RSI, RDX, 0);
                    self.a.alu(Alu::Cmp, RCX, RSI);
                    self.a.jcc(Cond::AboveEqual, slow);
                }
                self.a.load_indexed(RAX, RDX, RCX);
                self.a.test(RAX, RAX);
                self.a.jcc(Cond::Equal, slow);
            }
            _ => {
                // No inline path: the runtime computes it.
                let (a, b) = match call {
                    Call::Op { a, b, .. } => (a, b),
                    _ => unreachable!(),
                };
                self.runtime_call(RuntimeFn::Op, &[Src::Imm(desc), a, b], None);
                self.check_stop();
            }
        }
        self.store_result(i, RAX);
        self.bind_back(back);
    }

    /// rdx := the word table (`[len, w0, w1, ...]`) of the list in rax,
    /// else a jump to `slow`: a list's cell points at it
    /// (`crate::lower::lists`).
    fn list_table(&mut self, slow: Label) {
        let a = &mut self.a;
        a.test_imm(RAX, word::TAG_MASK as i32);
        a.jcc(Cond::NotEqual, slow);
        a.test(RAX, RAX);
        a.jcc(Cond::Equal, slow);
        a.load(RDX, RAX, cell::META as i32);
        a.alu_imm(Alu::And, RDX, cell::KIND_MASK as i32);
        a.alu_imm(Alu::Cmp, RDX, cell::BOXED_KIND as i32);
        a.jcc(Cond::NotEqual, slow);
        a.load(RDX, RAX, cell::ITEMS as i32);
        a.test(RDX, RDX);
        a.jcc(Cond::Equal, slow);
    }

    /// Jumps to `slow` unless rax and rcx (those not `known` small) are
    /// small integers.
    fn int_test(&mut self, known: [bool; 2], slow: Label) {
        match known {
            [true, true] => {}
            [false, true] => {
                self.a.test_imm(RAX, 1);
                self.a.jcc(Cond::Equal, slow);
            }
            [true, false] => {
                self.a.test_imm(RCX, 1);
                self.a.jcc(Cond::Equal, slow);
            }
            [false, false] => {
                self.a.mov(RDX, RAX);
                self.a.alu(Alu::And, RDX, RCX);
                self.a.test_imm(RDX, 1);
                self.a.jcc(Cond::Equal, slow);
            }
        }
    }

    /// rax := the word of the floored quotient (`div`) or remainder (`mod`)
    /// of the integers in rax and rcx (untagged; rcx not 0, and not -1
    /// for a quotient). Clobbers rdx and rsi. (Constant divisors do not
    /// divide: `divide_floored_by_constant`, and powers of two on the
    /// word.)
    fn divide_floored(&mut self, op: Op) {
        self.a.cqo();
        self.a.idiv(RCX);
        // Truncated to floored: a remainder other than 0 whose sign is not
        // the divisor's moves by the divisor, the quotient one less with
        // it.
        let done = self.a.label();
        self.a.test(RDX, RDX);
        self.a.jcc(Cond::Equal, done);
        self.a.mov(RSI, RDX);
        self.a.alu(Alu::Xor, RSI, RCX);
        self.a.jcc(Cond::GreaterEqual, done);
        self.a.alu(Alu::Add, RDX, RCX);
        self.a.alu_imm(Alu::Sub, RAX, 1);
        self.a.bind(done);
        if op == Op::Mod {
            self.a.mov(RAX, RDX);
        }
        self.a.alu(Alu::Add, RAX, RAX);
        self.a.alu_imm(Alu::Or, RAX, 1);
    }

    /// rax := the word of the floored quotient (`div`) or remainder (`mod`)
    /// of the integer in rax (untagged) by the constant `k` in `3..2^30`,
    /// by a multiplication instead of a division (some 4 cycles against
    /// 40). Clobbers rcx, rdx and rsi.
    ///
    /// For `y` in `0..2^62` and `l` the least with `2^l >= k`,
    /// `floor(y / k)` is the top bits of `y * m` past bit `62 + l`, where
    /// `m = ceil(2^(62 + l) / k)` (below `2^63`): Granlund and
    /// Montgomery's "Division by invariant integers using multiplication",
    /// theorem 4.2, with `N = 62`. A small integer `x` lies in
    /// `-2^62..2^62`, and `y = x ^ (x >> 63)` (`x`, or `!x = -x - 1` for a
    /// negative one) in `0..2^62`; `floor(x / k)` is then `q ^ (x >> 63)`
    /// for `q = floor(y / k)` (for a negative `x`, `-x - 1 = qk + r` gives
    /// `x = (-q - 1)k + (k - 1 - r)`), and the remainder `x - k floor(x / k)`.
    fn divide_floored_by_constant(&mut self, op: Op, k: i64) {
        let (magic, shift) = floor_magic(k);
        let a = &mut self.a;
        a.mov(RCX, RAX);
        a.mov(RSI, RAX);
        a.sar(RSI, 63);
        a.alu(Alu::Xor, RAX, RSI);
        a.mov_imm(RDX, magic as i64);
        a.mul(RDX);
        if shift > 0 {
            a.shr(RDX, shift);
        }
        a.alu(Alu::Xor, RDX, RSI);
        if op == Op::Mod {
            a.mov_imm(RAX, k);
            a.imul(RAX, RDX);
            a.alu(Alu::Sub, RCX, RAX);
            a.mov(RAX, RCX);
        } else {
            a.mov(RAX, RDX);
        }
        a.alu(Alu::Add, RAX, RAX);
        a.alu_imm(Alu::Or, RAX, 1);
    }

    /// rax := the word of `rax OP rcx` (1 or 0) for a comparison `op`.
    fn compare(&mut self, op: Op) {
        let (c, _) = conditions(op);
        self.a.alu(Alu::Cmp, RAX, RCX);
        self.a.set(c, RAX);
        // 0 or 1 as a word: 2n + 1.
        self.a.alu(Alu::Add, RAX, RAX);
        self.a.alu_imm(Alu::Or, RAX, ZERO.as_i64() as i32);
    }

    /// Jumps to `no` unless rax is a pointer to an object's cell (of any
    /// layout; rdx is overwritten).
    fn object_cell_test(&mut self, no: Label) {
        self.object_cell_test_to(no, no);
    }

    /// [`Emit::object_cell_test`], to `not_pointer` where the word is no
    /// pointer (or 0) and to `not_object` where its cell is no object.
    fn object_cell_test_to(&mut self, not_pointer: Label, not_object: Label) {
        self.a.test_imm(RAX, word::TAG_MASK as i32);
        self.a.jcc(Cond::NotEqual, not_pointer);
        self.a.test(RAX, RAX);
        self.a.jcc(Cond::Equal, not_pointer);
        self.a.load(RDX, RAX, cell::META as i32);
        self.a.alu_imm(Alu::And, RDX, cell::KIND_MASK as i32);
        self.a.alu_imm(Alu::Cmp, RDX, cell::OBJECT as i32);
        self.a.jcc(Cond::NotEqual, not_object);
    }

    /// Jumps to `no` unless the word in rax is an object of the layout
    /// (skipped for a value tested before, or `proven` one by the
    /// optimizer: `get.object`); the value `o` is then known to be one.
    fn object_test(&mut self, o: &Operand, proven: bool, no: Label) {
        if self.known_object(o, proven) {
            return;
        }
        self.object_cell_test(no);
        self.a.load(RDX, RAX, cell::LAYOUT as i32);
        let layout = self.env.objects.layout as *const flowc_lang::heap::Layout as i64;
        self.a.mov_imm64(RSI, layout);
        self.a.alu(Alu::Cmp, RDX, RSI);
        self.a.jcc(Cond::NotEqual, no);
        if let Some(v) = o.as_value() {
            self.objects.push(v);
        }
    }

    /// Which of `values` (the first 32) are known to be objects of the
    /// layout before the instructions being compiled — on the way out of
    /// their guards, what they test does not hold — as bits
    /// ([`TraceExit::objects`]).
    fn known_objects(&self, values: &[ValueId]) -> u32 {
        let before = &self.objects[..self.objects_before];
        let known = values.iter().take(32).enumerate().filter(|(_, v)| before.contains(v));
        known.fold(0, |bits, (k, _)| bits | 1 << k)
    }

    /// Whether `o` is known to be an object of the layout: `proven` by
    /// the optimizer, or tested earlier in the trace.
    fn known_object(&self, o: &Operand, proven: bool) -> bool {
        proven || o.as_value().is_some_and(|v| self.objects.contains(&v))
    }

    fn slot_offset(&self, field: Symbol) -> Option<i32> {
        let k = self.env.objects.layout.slot(field)?;
        Some((cell::SLOTS + 8 * k) as i32)
    }

    fn get(&mut self, i: flowc_ir::InstId, obj: &Operand, field: Symbol, proven: bool) {
        let result = self.f.insts[i].result;
        let o = self.link_src(obj);
        // An object's field that no read finds unset
        // (`ObjectInfo::always_set`): a load.
        let always_set = self.env.objects.always_set.binary_search(&field).is_ok();
        if let Some(offset) = self.slot_offset(field).filter(|_| always_set && self.known_object(obj, proven)) {
            self.load_field(RAX, o, offset);
            self.store_result(i, RAX);
            return;
        }
        let call = Call::Get { obj: o, field: field.index() as i64 };
        let back = self.a.label();
        let slow = self.slow(call, result, back);
        let Some(offset) = self.slot_offset(field) else {
            self.a.jmp(slow);
            self.bind_back(back);
            return;
        };
        if self.known_object(obj, proven) {
            self.load_field(RAX, o, offset);
        } else {
            self.load_src(RAX, o);
            self.object_test(obj, proven, slow);
            self.a.load(RAX, RAX, offset);
        }
        // An unset field (the 0 word) is the runtime's error.
        self.a.test(RAX, RAX);
        self.a.jcc(Cond::Equal, slow);
        self.store_result(i, RAX);
        self.bind_back(back);
    }

    fn set(&mut self, obj: &Operand, field: Symbol, value: &Operand, proven: bool) {
        let (o, v) = (self.link_src(obj), self.src(value));
        let call = Call::Set { obj: o, field: field.index() as i64, value: v };
        let back = self.a.label();
        let slow = self.slow(call, None, back);
        let immutable = self.env.objects.immutable.contains(&field);
        let Some(slot_offset) = self.slot_offset(field).filter(|_| !immutable) else {
            // A field immutable for some class: the runtime checks a
            // second set.
            self.a.jmp(slow);
            self.bind_back(back);
            return;
        };
        let offset = slot_offset;
        // The value first: the operation before often left it in rax,
        // and a copy from there is not a round trip through its word on
        // the path from its computation to the store.
        self.load_src(RCX, v);
        // The object's address: a register plus a distance, or rax.
        let checks_unbound = self.facts.may_be_unbound(value) && !self.small(value);
        let (base, offset) = match o {
            Src::At(q, d) if self.known_object(obj, proven) => (q, d + offset),
            // A link computed from a word: from a register still holding
            // the word (not rdx where the unbound test below takes it).
            Src::SlotAt(k, d) if self.known_object(obj, proven) => {
                match self.a.holder(k).filter(|&q| q != RCX && !(checks_unbound && q == RDX)) {
                    Some(q) => (q, d + offset),
                    None => {
                        self.a.load(RAX, RSP, k);
                        (RAX, d + offset)
                    }
                }
            }
            o => {
                self.load_src(RAX, o);
                self.object_test(obj, proven, slow);
                (RAX, offset)
            }
        };
        if checks_unbound {
            // An unbound value raises its error in the runtime.
            self.a.mov(RDX, RCX);
            self.a.alu_imm(Alu::And, RDX, word::TAG_MASK as i32);
            self.a.alu_imm(Alu::Cmp, RDX, word::UNBOUND_TAG as i32);
            self.a.jcc(Cond::Equal, slow);
        }
        if self.env.objects.watches(field) {
            // A link of the heap's row (its mask has the slot): the
            // runtime's `set` shows the row the write.
            let scratch = if base == RDX { RSI } else { RDX };
            let slot = (slot_offset - cell::SLOTS as i32) / 8;
            if slot < flowc_lang::heap::rows::MASK_SLOTS as i32 {
                self.a.load(scratch, RBX, offsets::HEAP);
                self.a.load(scratch, scratch, flowc_lang::heap::rows_offset() as i32 + flowc_lang::heap::rows::MASK);
                self.a.test_imm(scratch, 1 << slot);
                self.a.jcc(Cond::NotEqual, slow);
            }
        }
        self.a.store(base, offset, RCX);
        self.bind_back(back);
    }

    fn guard(&mut self, kind: &GuardKind, resume: flowc_ir::ResumeId, label: Symbol) {
        let o = kind.operand().clone();
        let s = self.src(&o);
        self.load_src(RAX, s);
        let exit = self.a.label();
        let key = match kind {
            GuardKind::Value(Operand::Value(v), _) => Some(*v),
            _ => None,
        };
        let how = Leaving::of(kind);
        match kind {
            GuardKind::True(_) | GuardKind::False(_) => {
                self.fail_if_unbound(RAX, &o);
                self.a.alu_imm(Alu::Cmp, RAX, ZERO.as_i64() as i32);
                let fails = if matches!(kind, GuardKind::True(_)) { Cond::Equal } else { Cond::NotEqual };
                self.a.jcc(fails, exit);
            }
            GuardKind::Value(_, c) => match word::immediate(c) {
                Some(w) => self.guard_equal(Src::Imm(w.as_i64()), &o, exit),
                None if matches!(c, Value::Object(_)) => {
                    // Objects are equal only to themselves: one word, a
                    // pointer that never moves. (Through the runtime's
                    // `eq`, an interpreter promoting its instruction
                    // objects spent 70% of its run there.)
                    let cw = self.constant(c);
                    self.guard_equal(cw, &o, exit);
                }
                None => {
                    let cw = self.constant(c);
                    let holds = self.a.label();
                    if let Value::List(l) = c {
                        // The same list holds at once (every box of it
                        // points at its one table).
                        let compare = self.a.label();
                        self.a.test_imm(RAX, word::TAG_MASK as i32);
                        self.a.jcc(Cond::NotEqual, compare);
                        self.a.test(RAX, RAX);
                        self.a.jcc(Cond::Equal, compare);
                        self.a.load(RCX, RAX, cell::ITEMS as i32);
                        self.a.mov_imm64(RDX, l.words() as i64);
                        self.a.alu(Alu::Cmp, RCX, RDX);
                        self.a.jcc(Cond::Equal, holds);
                        self.a.bind(compare);
                    }
                    self.fail_if_unbound(RAX, &o);
                    let desc = flowc_runtime::runtime::op_desc(Op::Eq as usize, 2, self.site) as i64;
                    self.runtime_call(RuntimeFn::Op, &[Src::Imm(desc), s, cw], None);
                    self.check_stop();
                    self.a.alu_imm(Alu::Cmp, RAX, ONE.as_i64() as i32);
                    self.a.jcc(Cond::NotEqual, exit);
                    self.a.bind(holds);
                }
            },
            GuardKind::Class(_, class) | GuardKind::NotClass(_, class) => {
                // Where an object of the class goes and where anything else
                // does: one of them is the exit, the other falls through.
                let positive = matches!(kind, GuardKind::Class(..));
                let cont = self.a.label();
                let (is, isnt) = if positive { (cont, exit) } else { (exit, cont) };
                // Not a pointer: unbound is an error (cold), else not one.
                let unbound = self.facts.may_be_unbound(&o) && !self.small(&o);
                let not_pointer = if unbound { self.a.label() } else { isnt };
                self.class_of_object(not_pointer, isnt);
                self.a.alu_imm(Alu::Cmp, RDX, class.index() as i32);
                if positive {
                    self.a.jcc(Cond::NotEqual, isnt);
                } else {
                    self.a.jcc(Cond::Equal, is);
                }
                if unbound {
                    self.a.jmp(cont);
                    self.a.bind(not_pointer);
                    self.fail_if_unbound(RAX, &o);
                    self.a.jmp(isnt);
                }
                self.a.bind_forward(cont);
                if positive {
                    // Objects of the program all have its layout.
                    if let Some(v) = o.as_value() {
                        self.objects.push(v);
                    }
                }
            }
            GuardKind::Link(..) => {
                // Proven an object of the class or 0: not 0 is the class,
                // and an object of the program's layout.
                self.a.alu_imm(Alu::Cmp, RAX, ZERO.as_i64() as i32);
                self.a.jcc(Cond::Equal, exit);
                if let Some(v) = o.as_value() {
                    self.objects.push(v);
                }
            }
            GuardKind::Int(_, lo, hi) if lo == hi && word::small(*lo).is_some() => {
                // One integer: its word (an entry trace's key).
                let w = word::small(*lo).expect("small");
                self.guard_equal(Src::Imm(w.as_i64()), &o, exit);
            }
            GuardKind::Int(_, lo, hi) => {
                // Not an integer: an unbound word raises its error, else
                // the guard leaves (straight to its exit where the word
                // cannot be unbound: no jump over that path).
                let fails = self.failing(&o, exit);
                self.a.test_imm(RAX, word::INT_TAG as i32);
                self.a.jcc(Cond::Equal, fails);
                // A bound at the end of the small integers holds for
                // every tagged word (`guard_int v, -2^62, 2^62 - 1` is the
                // tag test alone).
                let (least, greatest) = (word::small(WORD_MIN as i64), word::small(WORD_MAX as i64));
                if let Some(w) = word::small(*lo).filter(|&w| Some(w) != least) {
                    self.a.mov_imm(RCX, w.as_i64());
                    self.a.alu(Alu::Cmp, RAX, RCX);
                    self.a.jcc(Cond::Less, exit);
                }
                if let Some(w) = word::small(*hi).filter(|&w| Some(w) != greatest) {
                    self.a.mov_imm(RCX, w.as_i64());
                    self.a.alu(Alu::Cmp, RAX, RCX);
                    self.a.jcc(Cond::Greater, exit);
                }
                self.unbound_tail(fails, &o, exit);
            }
            GuardKind::At(_, base, delta) => {
                // The link must be the word of the cell `delta` bytes past
                // the base's: rax leaves with that word, computed from the
                // base rather than loaded.
                // (A distance that fits no 32 bits is refused up front.)
                self.address(RCX, base, i32::try_from(*delta).unwrap_or(0));
                self.a.alu(Alu::Cmp, RAX, RCX);
                self.a.jcc(Cond::NotEqual, exit);
                self.a.mov(RAX, RCX);
            }
            GuardKind::Row(_, span) => {
                // Both ends of the span within the heap's row (rax is the
                // object's word, its cell's address), read from the heap
                // the context points at; the shape is the heap's (the
                // JIT writes the guard only once the heap fixed it).
                let rows = flowc_lang::heap::rows_offset() as i32;
                match (i32::try_from(span.lo), i32::try_from(span.hi)) {
                    (Ok(lo), Ok(hi)) if (span.row as usize) < flowc_lang::heap::rows::ROWS => {
                        self.a.load(RCX, RBX, offsets::HEAP);
                        self.a.lea(RDX, RAX, lo);
                        // `cmp [first], rdx`: above is the row's first
                        // object past the span's start.
                        let r = span.row as usize;
                        self.a.cmp_mem(RCX, rows + flowc_lang::heap::rows::lo(r), RDX);
                        self.a.jcc(Cond::Above, exit);
                        self.a.lea(RDX, RAX, hi);
                        self.a.load(RCX, RCX, rows + flowc_lang::heap::rows::hi(r));
                        self.a.alu(Alu::Cmp, RDX, RCX);
                        self.a.jcc(Cond::Above, exit);
                        if let Some(v) = o.as_value() {
                            self.objects.push(v);
                        }
                    }
                    // A span beyond 2 GB holds no row of a 64 KB block,
                    // and there is no such row.
                    _ => self.a.jmp(exit),
                }
            }
            GuardKind::Cold(o) => {
                // A tagged integer n below the integer table's length
                // (unsigned: not negative), or an object whose allocation
                // number is below the object table's (any other word
                // leaves), whose word is not 0: counted down. (Known a
                // small integer, no other kind is tested for.)
                let (object, found) = (self.a.label(), self.a.label());
                let int = self.small(o);
                if !int {
                    self.a.test_imm(RAX, word::INT_TAG as i32);
                    self.a.jcc(Cond::Equal, object);
                }
                self.a.sar(RAX, 1);
                self.a.load(RCX, RBX, offsets::POSITIONS_LEN);
                self.a.alu(Alu::Cmp, RAX, RCX);
                self.a.jcc(Cond::AboveEqual, exit);
                self.a.load(RCX, RBX, offsets::POSITIONS);
                if !int {
                    self.a.jmp(found);
                    self.a.bind(object);
                    self.object_cell_test(exit);
                    self.a.load(RAX, RAX, cell::ID as i32);
                    self.a.load(RCX, RBX, offsets::OBJECT_POSITIONS_LEN);
                    self.a.alu(Alu::Cmp, RAX, RCX);
                    self.a.jcc(Cond::AboveEqual, exit);
                    self.a.load(RCX, RBX, offsets::OBJECT_POSITIONS);
                }
                self.a.bind(found);
                // Two words a position: its count, and its link.
                self.a.shl(RAX, 4);
                self.a.alu(Alu::Add, RCX, RAX);
                self.a.load(RAX, RCX, 0);
                self.a.test(RAX, RAX);
                // A count of 0: into the position's code where it has a
                // link and the frame is the loop's, else out.
                match self.link_values(resume) {
                    Some(values) => {
                        let zero = self.a.label();
                        self.a.jcc(Cond::Equal, zero);
                        self.cold.push(Cold::Link { at: zero, exit, values, in_loop: self.in_loop });
                    }
                    None => self.a.jcc(Cond::Equal, exit),
                }
                self.a.alu_mem_imm(Alu::Sub, RCX, 0, 1);
            }
        }
        let n = self.exit_number(resume, label, key, how);
        self.cold.push(Cold::Exit { at: exit, exit: n, in_loop: self.in_loop, set: None });
    }

    /// A run of guards of one value against constants
    /// ([`crate::lower::switch::GuardChain`]) as a binary search on the
    /// value's word, which orders as the integers do: each failing guard's
    /// constant to its exit, the holding guard's on, any other value to
    /// the holding guard's exit (or on where the run has none). A register
    /// VM's chain of 13 opcode tests is 4 comparisons deep. A run of class
    /// guards searches the class of an object (tested an object once),
    /// anything else going where no class is its. The exits are
    /// numbered in the guards' order, as one by one.
    fn guard_search(&mut self, chain: &crate::lower::switch::GuardChain) {
        let cont = self.a.label();
        let exits: Vec<(flowc_ir::InstId, Label)> = chain.guards().map(|g| (g, self.a.label())).collect();
        let (cases, otherwise) = chain.targets();
        let to = |j: Option<usize>| j.map_or(cont, |j| exits[j].1);
        let otherwise = to(otherwise);
        let cases: Vec<(i64, Label)> = cases.into_iter().map(|(k, j)| (k, to(j))).collect();
        let src = self.src(&Operand::Value(chain.value));
        self.load_src(RAX, src);
        // (The class in rdx, the integer's word in rax.)
        let searched = if chain.classes { RDX } else { RAX };
        let mut words: Vec<(i32, Label)> = if chain.classes {
            // An unbound value raises its error, where the first guard
            // would (the site is its); an object's class: not a pointer, or
            // no object, is no class.
            self.fail_if_unbound(RAX, &Operand::Value(chain.value));
            self.class_of_object(otherwise, otherwise);
            // (Symbol indices are below 2^31: the classes' are the
            // program's.)
            cases.into_iter().map(|(k, l)| (i32::try_from(k).expect("a symbol's index in 32 bits"), l)).collect()
        } else {
            // Only an integer's word equals an integer's: any other value
            // (an `eq.word` compares words of any kind) goes where no
            // guard fails. (The integer tag's bit: an atom's is 0.)
            self.a.test_imm(RAX, word::INT_TAG as i32);
            self.a.jcc(Cond::Equal, otherwise);
            let word = |k: i64| i32::try_from(word::small(k).expect("a small constant").as_i64());
            cases.into_iter().map(|(k, l)| (word(k).expect("a word in 32 bits"), l)).collect()
        };
        words.sort_by_key(|&(w, _)| w);
        self.search(searched, &words, otherwise);
        self.a.bind(cont);
        if chain.classes && chain.holds.is_some() {
            // Past the run, an object of the last guard's class, of the
            // program's layout.
            self.objects.push(chain.value);
        }
        for (g, exit) in exits {
            let InstKind::Guard { resume, label, .. } = &self.f.insts[g].kind else {
                unreachable!("a chain of guards")
            };
            let n = self.exit_number(*resume, *label, None, Leaving::Guard);
            self.cold.push(Cold::Exit { at: exit, exit: n, in_loop: self.in_loop, set: None });
        }
    }

    /// rdx := the class index of the object whose word is in rax; to
    /// `not_pointer` if the word is no pointer (or 0), to `not_object` if
    /// its cell is no object. (A class guard's test, and a run's.)
    fn class_of_object(&mut self, not_pointer: Label, not_object: Label) {
        self.object_cell_test_to(not_pointer, not_object);
        self.a.load32(RDX, RAX, cell::CLASS as i32);
    }

    /// The binary search of [`Emit::guard_search`] over `cases` (words in
    /// order, each with where it goes) for the word in `r`; `otherwise`
    /// where none is it.
    fn search(&mut self, r: Reg, cases: &[(i32, Label)], otherwise: Label) {
        if cases.len() <= 3 {
            for &(w, l) in cases {
                self.a.alu_imm(Alu::Cmp, r, w);
                self.a.jcc(Cond::Equal, l);
            }
            self.a.jmp(otherwise);
            return;
        }
        let mid = cases.len() / 2;
        let (w, l) = cases[mid];
        let above = self.a.label();
        self.a.alu_imm(Alu::Cmp, r, w);
        self.a.jcc(Cond::Equal, l);
        self.a.jcc(Cond::Greater, above);
        self.search(r, &cases[..mid], otherwise);
        self.a.bind(above);
        self.search(r, &cases[mid + 1..], otherwise);
    }

    /// Comparison `i` and guard `g` on its result ([`fused_compares`]):
    /// the comparison of two integers sets the flags the guard jumps on;
    /// one that is not certainly of two small integers goes to the
    /// runtime, whose result the guard then tests. The result's word is
    /// written where the guard leaves (0 for `guard_true`, 1 for
    /// `guard_false`) and by the slow path. False, writing nothing, for an
    /// equality that is not of two words known immediate (its inline path
    /// is the general one's).
    fn fused_compare(&mut self, i: flowc_ir::InstId, g: flowc_ir::InstId) -> bool {
        let f = self.f;
        let (InstKind::Op { op: Operator::Known(op), args, form }, Some(c)) = (&f.insts[i].kind, f.insts[i].result)
        else {
            return false;
        };
        let InstKind::Guard { kind, resume, label } = &f.insts[g].kind else { return false };
        let (op, form) = (*op, *form);
        let known = [0, 1].map(|k| form == Form::Word || self.small(&args[k]));
        if matches!(op, Op::Eq | Op::Ne) && !(known[0] && known[1]) {
            return false;
        }
        let when_true = matches!(kind, GuardKind::True(_));
        let srcs: Vec<Src> = args.iter().map(|a| self.src(a)).collect();
        let desc = flowc_runtime::runtime::op_desc(op as usize, 2, self.site) as i64;
        let call = Call::Op { desc, a: srcs[0], b: srcs[1] };
        let (exit, back, cont) = (self.a.label(), self.a.label(), self.a.label());
        let slow = self.slow(call, Some(c), back);
        self.load_src(RAX, srcs[0]);
        self.load_src(RCX, srcs[1]);
        self.int_test(known, slow);
        self.a.alu(Alu::Cmp, RAX, RCX);
        let (holds, fails) = conditions(op);
        self.a.jcc(if when_true { fails } else { holds }, exit);
        if self.a.jumped_to(slow) {
            // The runtime's result (a word of 0 or 1), tested out of line.
            let fails = if when_true { Cond::Equal } else { Cond::NotEqual };
            self.cold.push(Cold::Test { at: back, fails, exit, then: cont, in_loop: self.in_loop });
            self.a.bind(cont);
        } else {
            self.a.bind_unreached(back);
            self.a.bind_unreached(cont);
        }
        // What the failing guard implies of the comparison: 0, or 1.
        let implied = if when_true { ZERO } else { ONE };
        let n = self.exit_number(*resume, *label, None, Leaving::Guard);
        let set = Some((self.slot(c), implied.as_i64()));
        self.cold.push(Cold::Exit { at: exit, exit: n, in_loop: self.in_loop, set });
        true
    }

    /// A link's `get.object` `i`, its `guard_link` `g` and its `guard_at`
    /// `at` ([`fused_links`]): the field read, then one comparison with
    /// the address the `guard_at` computes; the result is that address.
    /// The link's word, and its two other tests, are written out of line
    /// ([`Cold::Split`]). False, writing nothing, for a field without a
    /// slot in the layout.
    fn fused_link(&mut self, i: flowc_ir::InstId, g: flowc_ir::InstId, at: flowc_ir::InstId) -> bool {
        let f = self.f;
        let (InstKind::Get { obj, field, .. }, Some(v)) = (&f.insts[i].kind, f.insts[i].result) else { return false };
        let InstKind::Guard { resume: r1, label: l1, .. } = &f.insts[g].kind else { return false };
        let InstKind::Guard { kind: GuardKind::At(_, base, d), resume: r2, label: l2 } = &f.insts[at].kind else {
            return false;
        };
        let (Some(offset), Ok(d)) = (self.slot_offset(*field), i32::try_from(*d)) else { return false };
        let o = self.link_src(obj);
        let call = Call::Get { obj: o, field: field.index() as i64 };
        let split = self.a.label();
        // The link is compared where it lies (`cmp [q + disp], rcx`: a
        // BF `>` one load-and-compare fused with its branch, and the
        // address), and read into rax only on the way out.
        let field = match (self.walked_from(obj), self.src(base)) {
            // Read from a link counted from the same base, in a word:
            // the base's word once, the link and the address from it —
            // not the word of the link before (written just now, so
            // each link would wait for the one before). The base stays
            // in rdx, so the next link of the walk finds it there.
            (Some((b, d0)), Src::Slot(k)) if b == *base => {
                self.a.load(RDX, RSP, k);
                self.a.lea(RCX, RDX, d);
                (RDX, d0 + offset)
            }
            _ => {
                // Out of rcx, which the address goes to: rax is free then.
                let field = match self.field_place(o, offset, RAX) {
                    (RCX, disp) => {
                        self.a.mov(RAX, RCX);
                        (RAX, disp)
                    }
                    field => field,
                };
                self.address(RCX, base, d);
                field
            }
        };
        self.a.cmp_mem(field.0, field.1, RCX);
        self.a.jcc(Cond::NotEqual, split);
        self.store_result(at, RCX);
        self.objects.extend(f.insts[at].result);
        self.result_to_variable_from(at, RCX);
        self.split_paths(split, v, call, (*r1, *l1, Some(field)), (*r2, *l2, Leaving::At), None);
        true
    }

    /// The result of `guard_at` `at`, whose check a `guard_row` made
    /// ([`row_covered`]): the address its base plus its distance, as
    /// where the check holds.
    fn link_in_row(&mut self, at: flowc_ir::InstId) {
        let f = self.f;
        let InstKind::Guard { kind: GuardKind::At(_, base, d), .. } = &f.insts[at].kind else {
            unreachable!("a covered link ends in a guard_at")
        };
        let result = f.insts[at].result;
        let to_register = self.in_loop && self.to_regs.iter().any(|&(d, _)| d == at);
        if !to_register && result.is_some_and(|v| self.remat_of(v).is_some()) {
            // Computed where it is read ([`rematerialized`]).
            self.objects.extend(result);
            return;
        }
        self.address(RCX, base, i32::try_from(*d).expect("a covered distance fits 32 bits"));
        self.store_result(at, RCX);
        self.objects.extend(f.insts[at].result);
        self.result_to_variable_from(at, RCX);
        self.a.mov(RAX, RCX);
    }

    /// A link's `get.object` `i`, its `guard_link` `g`, `c = eq.word` of
    /// the link and `x` (`e`) and `guard_true c` (`t`) ([`fused_returns`]):
    /// the field read, then one comparison with `x`. The link's word, and
    /// its tests, are written out of line ([`Cold::Split`]); `c` is
    /// written where the last guard leaves, with the 0 its failing
    /// implies. False, writing nothing, where `x` is not known to be an
    /// object here or the field has no slot in the layout.
    fn fused_return(
        &mut self,
        i: flowc_ir::InstId,
        g: flowc_ir::InstId,
        e: flowc_ir::InstId,
        t: flowc_ir::InstId,
    ) -> bool {
        let f = self.f;
        let (InstKind::Get { obj, field, .. }, Some(v)) = (&f.insts[i].kind, f.insts[i].result) else { return false };
        let InstKind::Guard { resume: r1, label: l1, .. } = &f.insts[g].kind else { return false };
        let (InstKind::Op { args, .. }, Some(c)) = (&f.insts[e].kind, f.insts[e].result) else { return false };
        let InstKind::Guard { resume: r3, label: l3, .. } = &f.insts[t].kind else { return false };
        let x = if args[0] == Operand::Value(v) { &args[1] } else { &args[0] };
        let known = x.as_value().is_some_and(|x| self.objects.contains(&x));
        let Some(offset) = self.slot_offset(*field).filter(|_| known) else { return false };
        let o = self.link_src(obj);
        let call = Call::Get { obj: o, field: field.index() as i64 };
        let split = self.a.label();
        self.load_field(RAX, o, offset);
        let xs = self.link_src(x);
        self.load_src(RCX, xs);
        self.a.alu(Alu::Cmp, RAX, RCX);
        self.a.jcc(Cond::NotEqual, split);
        let set = Some((self.slot(c), ZERO.as_i64()));
        self.split_paths(split, v, call, (*r1, *l1, None), (*r3, *l3, Leaving::Guard), set);
        true
    }

    /// The out-of-line paths of a fused link or return, where the link
    /// `v` just loaded is not the one compared with (jumped to at
    /// `split`; in rax, or read again from where `link`'s third part
    /// says): its word written, the runtime's read `call` where it is
    /// not set, then the exit of its `guard_link` (`link`) where it is 0,
    /// else `other`'s — the last fused guard's, leaving with `set`
    /// written. In this order, so that the slow path the split jumps to
    /// is written; the two exits numbered in that order too.
    fn split_paths(
        &mut self,
        split: Label,
        v: ValueId,
        call: Call,
        link: (flowc_ir::ResumeId, Symbol, Option<(Reg, i32)>),
        other: (flowc_ir::ResumeId, Symbol, Leaving),
        set: Option<(i32, i64)>,
    ) {
        let (link_resume, link_label, reload) = link;
        let (slow, back, link_exit, other_exit) = (self.a.label(), self.a.label(), self.a.label(), self.a.label());
        let (word, in_loop, site) = (self.slot(v), self.in_loop, self.site);
        self.cold.push(Cold::Split { at: split, word, slow, back, link_exit, other_exit, in_loop, reload });
        self.cold.push(Cold::Slow { at: slow, back, call, site, result: Some(word), in_loop });
        let n = self.exit_number(link_resume, link_label, None, Leaving::Guard);
        self.cold.push(Cold::Exit { at: link_exit, exit: n, in_loop, set: None });
        let n = self.exit_number(other.0, other.1, None, other.2);
        self.cold.push(Cold::Exit { at: other_exit, exit: n, in_loop, set });
    }

    /// The number (in this trace) of the exit leaving by `resume` at
    /// `label`, made on first use (as the Cranelift lowering numbers them).
    fn exit_number(&mut self, resume: flowc_ir::ResumeId, label: Symbol, key: Option<ValueId>, how: Leaving) -> usize {
        let at = (self.current, resume, label, key, how);
        if let Some(&n) = self.exit_numbers.get(&at) {
            // What holds wherever the code leaves by it.
            let objects = self.known_objects(&self.exits[n].values);
            self.exits[n].objects &= objects;
            return n;
        }
        let n = self.exits.len();
        self.exit_numbers.insert(at, n);
        let mut exit = match self.facts.record_values(resume) {
            Some(values) => exit_of_values(values.clone(), self.current, resume, label, key, how),
            None => exit_record(self.f, self.current, resume, label, key, how),
        };
        exit.objects = self.known_objects(&exit.values);
        self.exit_words.push(exit.values.iter().map(|&v| self.slot(v)).collect());
        self.exits.push(exit);
        self.slots.push(Box::default());
        n
    }

    /// What a `guard_cold` resuming by record `resume` passes to a
    /// position's code it enters through a link
    /// ([`crate::lower::exits::link_operands`]): each a value or constant
    /// whose word or immediate holds it here (not a comparison fused with
    /// its guard, nor a link whose word only exits write).
    fn link_values(&self, resume: flowc_ir::ResumeId) -> Option<Vec<Operand>> {
        let written_by_exits = |v: ValueId| match self.f.values[v].def {
            flowc_ir::ValueDef::Inst(i) => {
                self.fused.contains(&i) || self.fused_links.contains(&i) || self.fused_returns.contains(&i)
            }
            _ => false,
        };
        crate::lower::exits::link_operands(self.f, resume, |o| o.as_value().is_none_or(|v| !written_by_exits(v)))
    }

    fn terminator(&mut self, b: BlockId) -> Result<(), &'static str> {
        match self.f.blocks[b].term.clone() {
            Terminator::Jump(t) => {
                let before = self.a.offset();
                self.phi_moves(b, t);
                let l = self.blocks[&t];
                // A loop ending in a guard with no moves to make goes
                // round on the guard's branch.
                if !(self.a.offset() == before && self.a.branch_back_unless(l)) {
                    self.a.jmp(l);
                }
            }
            Terminator::Exit { resume, label } => {
                let n = self.exit_number(resume, label, None, Leaving::End);
                self.exit_code(n);
            }
            Terminator::JumpTrace { target, args } => {
                let trace = *self.env.traces.get(&target).ok_or("a jump to an unknown trace")?;
                if trace.params != args.len() {
                    return Err("a jump with the wrong number of arguments");
                }
                let root = self.inherit.as_ref().and_then(|i| i.root);
                if let Some((_, body)) = root.filter(|&(name, _)| name == target) {
                    // Back into the root, in its frame: the arguments to
                    // its parameters' words, the bridges' words popped.
                    let depth = self.own.root_depth;
                    if self.own.root_params.len() != args.len() {
                        return Err("a jump back with the wrong number of arguments");
                    }
                    let moves: Vec<(Dst, Src)> = self
                        .own
                        .root_params
                        .clone()
                        .iter()
                        .zip(&args)
                        .map(|(&p, o)| (Dst::Slot(depth + p), self.src(o)))
                        .collect();
                    self.parallel_copy(&moves);
                    self.a.alu_imm(Alu::Add, RSP, depth);
                    self.a.store(RBX, offsets::LAST_SP, RSP);
                    self.a.mov_imm64(RAX, body as i64);
                    self.a.jmp_reg(RAX);
                    return Ok(());
                }
                if args.len() <= ARG_REGS.len() {
                    // The arguments in registers, to the register entry of
                    // the code in the trace's slot (the slot's second
                    // word: `CodeSlots`), with the slot in rax for code
                    // without one (`regs_adapter`).
                    let moves: Vec<(Dst, Src)> =
                        args.iter().enumerate().map(|(k, o)| (Dst::Reg(ARG_REGS[k]), self.src(o))).collect();
                    self.parallel_copy(&moves);
                    self.a.mov_imm64(RAX, trace.slot as i64);
                    self.a.mov(RDI, RBX);
                    self.epilogue();
                    self.a.jmp_mem(RAX, 8);
                    return Ok(());
                }
                self.a.load(RCX, RBX, offsets::EXIT_VALUES);
                for (k, o) in args.iter().enumerate() {
                    self.load(RAX, o);
                    self.a.store(RCX, 8 * k as i32, RAX);
                }
                // The code in the trace's code slot.
                self.a.mov_imm64(RAX, trace.slot as i64);
                self.a.load(RAX, RAX, 0);
                self.a.mov(RDI, RBX);
                self.epilogue();
                self.a.jmp_reg(RAX);
            }
            Terminator::Trap(t) => {
                let traps = self.env.traps.as_mut().ok_or("a trap, away from the running thread")?;
                let index = traps.len() as i64;
                traps.push(t.error_kind());
                self.runtime_call(RuntimeFn::Trap, &[Src::Imm(index)], self.site);
                self.a.jmp(self.stop);
            }
            _ => return Err("a terminator traces do not have"),
        }
        Ok(())
    }

    /// The moves of the phi inputs of `to` along the edge from `from`: in
    /// two steps, through the scratch words, when one phi reads another
    /// of the same block (a parallel copy).
    fn phi_moves(&mut self, from: BlockId, to: BlockId) {
        let f = self.f;
        let phis = &f.blocks[to].phis;
        let mut moves: Vec<(Dst, Src)> = Vec::new();
        for &phi in phis {
            let (InstKind::Phi(inputs), Some(r)) = (&self.f.insts[phi].kind, self.f.insts[phi].result) else {
                continue;
            };
            let o = inputs.iter().find(|(p, _)| *p == from).map(|(_, o)| o.clone()).expect("an input per edge");
            // A loop variable in a register gets its value there, on the
            // way in as on the way round.
            let in_reg = self.regs.iter().find(|&&(x, _)| x == r).map(|&(_, q)| q);
            // Already there: computed into the register (`result_to_variable`).
            let computed = from == to
                && in_reg.is_some_and(|q| {
                    self.to_regs.iter().any(|&(d, dq)| dq == q && self.f.insts[d].result == o.as_value())
                });
            if computed {
                continue;
            }
            if o != Operand::Value(r) || (in_reg.is_some() && from != to) {
                let t = match in_reg {
                    Some(q) => Dst::Reg(q),
                    None => Dst::Slot(self.slot(r)),
                };
                moves.push((t, self.src(&o)));
            }
        }
        self.parallel_copy(&moves);
        // Into the loop block: its iteration count and the values defined
        // before it that it keeps to their registers.
        if from != to && self.f.blocks[to].term == Terminator::Jump(to) {
            if let Some(c) = self.counter {
                self.a.load(c, RBX, offsets::ITERATIONS);
            }
            for k in self.regs.len() - self.invariants..self.regs.len() {
                let (v, r) = self.regs[k];
                let s = self.slot(v);
                self.a.load(r, RSP, s);
            }
        }
    }

    /// Stores every source of `moves` in its word or register as if all at
    /// once. A move of a word or register to itself is none; the others go
    /// one at a time, each once no move left reads its target; where every
    /// move left has its target read by another (a cycle: two phis that
    /// swap), one target's value goes to a scratch word first and its
    /// readers read it there. (All of them through the scratch words, as
    /// before, made a bridge's jump back to its loop eight moves where the
    /// one argument that changed needed two.)
    fn parallel_copy(&mut self, moves: &[(Dst, Src)]) {
        let reads = |s: &Src, t: &Dst| match (t, s) {
            (Dst::Slot(t), Src::Slot(w) | Src::SlotAt(w, _)) => t == w,
            (Dst::Reg(t), Src::Reg(q) | Src::At(q, _)) => t == q,
            _ => false,
        };
        let itself = |(t, s): &(Dst, Src)| match (t, s) {
            (Dst::Slot(t), Src::Slot(w)) => t == w,
            (Dst::Reg(t), Src::Reg(q)) => t == q,
            _ => false,
        };
        let mut pending: Vec<(Dst, Src)> = moves.iter().copied().filter(|m| !itself(m)).collect();
        let mut scratch = self.scratch;
        while !pending.is_empty() {
            let free = (0..pending.len())
                .find(|&k| !pending.iter().enumerate().any(|(j, (_, s))| j != k && reads(s, &pending[k].0)));
            if let Some(k) = free {
                match pending.remove(k) {
                    (Dst::Reg(q), s) => self.load_src(q, s),
                    (Dst::Slot(w), s) => {
                        self.load_src(RAX, s);
                        self.a.store(RSP, w, RAX);
                    }
                }
                continue;
            }
            // A cycle: the first move's target saved, its readers sent
            // to the copy.
            let t = pending[0].0;
            let held = match t {
                Dst::Slot(w) => Src::Slot(w),
                Dst::Reg(q) => Src::Reg(q),
            };
            self.load_src(RAX, held);
            self.a.store(RSP, scratch, RAX);
            for (_, s) in pending.iter_mut().filter(|(_, s)| reads(s, &t)) {
                *s = match *s {
                    Src::At(_, d) | Src::SlotAt(_, d) => Src::SlotAt(scratch, d),
                    _ => Src::Slot(scratch),
                };
            }
            scratch += 8;
        }
    }

    /// A stub of exit `n`: its spills, then its link slot in rdx and on to
    /// the trace's shared [`Emit::exit_common_tail`], which goes to the
    /// direct entry of the exit's bridge if it has one, else stores the
    /// exit's values.
    fn exit_code(&mut self, n: usize) {
        // The links the code computed and did not store: their words, for
        // the exit's record and a bridge in this frame.
        let values = std::sync::Arc::clone(&self.exits[n].values);
        for &v in values.iter() {
            if self.remat_of(v).is_none() {
                continue;
            }
            let s = self.src(&Operand::Value(v));
            self.load_src(RAX, s);
            let w = self.slot(v);
            self.a.store(RSP, w, RAX);
        }
        let slot = &*self.slots[n] as *const ExitSlot as i64;
        // A direct link overwrites this instruction (10 bytes) with a jump.
        self.stubs.push((n as u32, self.a.offset()));
        self.a.mov_imm64(RDX, slot);
        self.a.jmp(self.exit_common);
    }

    /// What every exit stub goes on with once its link slot is in rdx
    /// ([`Emit::exit_code`]), written once per trace: an exit's own code
    /// is its spills, the slot's address and a jump here (15 bytes against
    /// 34 with this in every stub: tutorial BF fractal 5 has some 43,000
    /// exits). Goes to the direct entry of the exit's bridge if it has
    /// one, else to the tail that stores the exit's values in the exit
    /// buffer ([`Emit::store_values_tail`]) with its number.
    fn exit_common_tail(&mut self) {
        use std::mem::offset_of;
        self.a.bind(self.exit_common);
        self.a.load(RCX, RDX, offset_of!(ExitSlot, direct) as i32);
        let stores = self.a.label();
        self.a.test(RCX, RCX);
        self.a.jcc(Cond::Equal, stores);
        self.a.jmp_reg(RCX);
        self.a.bind(stores);
        // The values go to the exit buffer in the shared tail, from the
        // words the slot lists; the exit's number (plus one) is the slot's.
        self.a.load(RAX, RDX, offset_of!(ExitSlot, number) as i32);
        self.a.jmp(self.store_values);
    }

    /// The shared tail of exits that return: rax the exit's number plus
    /// one, rdx its link slot. Copies the exit's values from the words
    /// its slot lists ([`crate::lower::ExitSlot::words`]) to the exit
    /// buffer, then leaves. The words hold every value (the exit stubs
    /// spill first), so r8 is free.
    fn store_values_tail(&mut self) {
        use crate::lower::ExitSlot;
        use std::mem::offset_of;
        self.a.bind(self.store_values);
        self.a.load(RCX, RBX, offsets::EXIT_VALUES);
        self.a.load(RSI, RDX, offset_of!(ExitSlot, words) as i32);
        self.a.load(RDI, RDX, offset_of!(ExitSlot, word_count) as i32);
        self.a.test(RDI, RDI);
        self.a.jcc(Cond::Equal, self.leave);
        let top = self.a.label();
        self.a.bind(top);
        self.a.load32(R8, RSI, 0);
        self.a.alu(Alu::Add, R8, RSP);
        self.a.load(R8, R8, 0);
        self.a.store(RCX, 0, R8);
        self.a.alu_imm(Alu::Add, RSI, 4);
        self.a.alu_imm(Alu::Add, RCX, 8);
        self.a.alu_imm(Alu::Sub, RDI, 1);
        self.a.jcc(Cond::NotEqual, top);
        self.a.jmp(self.leave);
    }

    /// The slow paths, exits, the shared tail of exits and the stop block.
    fn cold_code(&mut self) {
        let cold = std::mem::take(&mut self.cold);
        for c in cold {
            match c {
                // A slow path no inline code jumps to (its operands were
                // proven fit for the inline path) is not written.
                Cold::Slow { at, .. } if !self.a.jumped_to(at) => {}
                Cold::Slow { at, back, call, site, result, in_loop } => {
                    self.in_loop = in_loop;
                    self.a.bind(at);
                    match call {
                        Call::Op { desc, a, b } => self.runtime_call(RuntimeFn::Op, &[Src::Imm(desc), a, b], None),
                        Call::Get { obj, field } => self.runtime_call(RuntimeFn::Get, &[obj, Src::Imm(field)], site),
                        Call::Set { obj, field, value } => {
                            self.runtime_call(RuntimeFn::Set, &[obj, Src::Imm(field), value], site)
                        }
                    }
                    self.check_stop();
                    if let Some(r) = result {
                        self.a.store(RSP, r, RAX);
                    }
                    self.a.jmp(back);
                }
                Cold::Unbound { at, value, site, in_loop } => {
                    self.in_loop = in_loop;
                    self.a.bind(at);
                    self.runtime_call(RuntimeFn::CheckBound, &[value], site);
                    self.a.jmp(self.stop);
                }
                Cold::Test { at, fails, exit, then, in_loop } => {
                    self.in_loop = in_loop;
                    self.a.bind(at);
                    self.a.alu_imm(Alu::Cmp, RAX, ZERO.as_i64() as i32);
                    self.a.jcc(fails, exit);
                    self.a.jmp(then);
                }
                Cold::Exit { at, exit, in_loop, set } => {
                    self.in_loop = in_loop;
                    self.a.bind(at);
                    if let Some((disp, word)) = set {
                        self.a.mov_imm(RAX, word);
                        self.a.store(RSP, disp, RAX);
                    }
                    // The exit's values from their words (a bridge in
                    // this frame reads them there too).
                    self.spill();
                    self.exit_code(exit);
                }
                Cold::Link { at, exit, values, in_loop } => {
                    self.in_loop = in_loop;
                    self.a.bind(at);
                    self.a.load(RSI, RCX, 8);
                    self.a.test(RSI, RSI);
                    self.a.jcc(Cond::Equal, exit);
                    self.a.load(RCX, RBX, offsets::EXIT_VALUES);
                    for (k, o) in values.iter().enumerate() {
                        self.load(RAX, o);
                        self.a.store(RCX, 8 * k as i32, RAX);
                    }
                    // The values the linked code was specialized to.
                    let (pins, go) = (self.a.label(), self.a.label());
                    self.a.load(RDX, RBX, offsets::LINK_PINS);
                    self.a.test(RDX, RDX);
                    self.a.jcc(Cond::Equal, go);
                    self.a.bind(pins);
                    self.a.load(RAX, RDX, 0);
                    self.a.alu_imm(Alu::Cmp, RAX, -1);
                    self.a.jcc(Cond::Equal, go);
                    self.a.alu(Alu::Add, RAX, RCX);
                    self.a.load(RAX, RAX, 0);
                    self.a.load(RDI, RDX, 8);
                    self.a.alu(Alu::Cmp, RAX, RDI);
                    self.a.jcc(Cond::NotEqual, exit);
                    self.a.alu_imm(Alu::Add, RDX, 16);
                    self.a.jmp(pins);
                    self.a.bind(go);
                    // Where it went, and after how many of the loop's
                    // iterations: the driver's accounts.
                    self.a.store(RBX, offsets::LINKED_SLOT, RSI);
                    self.a.alu_mem_imm(Alu::Add, RBX, offsets::LINKS, 1);
                    self.store_counter();
                    self.a.load(RAX, RBX, offsets::ITERATIONS);
                    self.a.store(RBX, offsets::LINKED_ITERATIONS, RAX);
                    self.a.load(RAX, RSI, 0);
                    self.a.mov(RDI, RBX);
                    self.epilogue();
                    self.a.jmp_reg(RAX);
                }
                Cold::Raise { at, function, site, in_loop } => {
                    self.in_loop = in_loop;
                    self.a.bind(at);
                    self.runtime_call(function, &[], site);
                    self.a.jmp(self.stop);
                }
                // The slow path returns only with the link set (the
                // runtime stops the run on an unset field): at `back` the
                // link is 0, or another object than the one compared.
                Cold::Split { at, word, slow, back, link_exit, other_exit, in_loop, reload } => {
                    self.in_loop = in_loop;
                    self.a.bind(at);
                    if let Some((q, d)) = reload {
                        self.a.load(RAX, q, d);
                    }
                    self.a.store(RSP, word, RAX);
                    // An unset field (the 0 word) is the runtime's error.
                    self.a.test(RAX, RAX);
                    self.a.jcc(Cond::Equal, slow);
                    self.a.bind(back);
                    self.a.alu_imm(Alu::Cmp, RAX, ZERO.as_i64() as i32);
                    self.a.jcc(Cond::Equal, link_exit);
                    self.a.jmp(other_exit);
                }
            }
        }
        self.in_loop = false;
        if self.a.jumped_to(self.exit_common) {
            self.exit_common_tail();
        }
        if self.a.jumped_to(self.store_values) {
            self.store_values_tail();
        }
        // The shared tail: rax the exit's number plus one, rdx its link
        // slot. A linked exit counts and continues in its bridge.
        self.a.bind(self.leave);
        let unlinked = self.a.label();
        self.a.load(RCX, RDX, std::mem::offset_of!(crate::lower::ExitSlot, target) as i32);
        self.a.test(RCX, RCX);
        self.a.jcc(Cond::Equal, unlinked);
        let count = std::mem::offset_of!(crate::lower::ExitSlot, count) as i32;
        self.a.alu_mem_imm(Alu::Add, RDX, count, 1);
        // Every `link_check`-th crossing returns to the driver instead.
        if let Some(every) = self.env.link_check {
            self.a.load(RSI, RDX, count);
            self.a.test_imm(RSI, every as i32 - 1);
            self.a.jcc(Cond::Equal, unlinked);
        }
        self.a.mov(RDI, RBX);
        self.epilogue();
        self.a.jmp_reg(RCX);
        self.a.bind(unlinked);
        self.epilogue();
        self.a.ret();
        // The run stopped: the stop word back to the caller.
        self.a.bind(self.stop);
        self.a.alu(Alu::Xor, RAX, RAX);
        self.epilogue();
        self.a.ret();
    }
}

/// The multiplier `m` and the shift past the product's high word that
/// divide any `y` in `0..2^62` by `k` in `3..2^30`, rounding down
/// (`floor(y / k) = (y * m) >> 64 >> shift`; see
/// `Emit::divide_floored_by_constant`).
fn floor_magic(k: i64) -> (u64, u8) {
    debug_assert!((3..1 << 30).contains(&k));
    let l = 64 - (k as u64 - 1).leading_zeros();
    let m = (1u128 << (62 + l)).div_ceil(k as u128);
    debug_assert!(m <= 1 << 63);
    (m as u64, (l - 2) as u8)
}

#[cfg(test)]
mod tests {
    /// What a `guard_row` vouches for ([`super::row_covered`]), listed by
    /// the first instruction of each link it covers: the walk's fused
    /// links three cells out and the one back (a fused return, the link
    /// compared with the cell it came from), and the lone `guard_at`
    /// right after the guard, whose link was read before it — not the
    /// link past the span, nor any after a `set` of a link field.
    #[test]
    fn a_guard_row_covers_the_links_of_its_span_until_a_link_is_written() {
        let text = "trace 't'(v0:tape, v9:x) {
b0:
    v1:r = get.object v0, r
    guard_link v1, cell, r0 else grow
    guard_row v0, 0, 168, cell, r, l, 56, row 0, r1 else right
    v2:r = guard_at v1, v0, 56, r1 else right
    v3:r = get.object v2, r
    guard_link v3, cell, r0 else grow
    v4:r = guard_at v3, v0, 112, r1 else right
    v5:l = get.object v4, l
    guard_link v5, cell, r0 else grow
    v6 = eq.word v5, v2
    guard_true v6, r0 else left
    v7:r = get.object v4, r
    guard_link v7, cell, r0 else grow
    v8:r = guard_at v7, v0, 168, r1 else right
    v10:r = get.object v8, r
    guard_link v10, cell, r0 else grow
    v11:r = guard_at v10, v0, 224, r1 else right
    set.object v2, l, v9
    v12:l = get.object v4, l
    guard_link v12, cell, r0 else grow
    v13 = eq.word v12, v2
    guard_true v13, r0 else left
    exit r2 to out
resume r0 {
    frame [tape = v0]
}
resume r1 {
    frame [r = v1]
}
resume r2 {
    frame [tape = v11]
}
}
";
        let m = flowc_ir::parse::module("trace", text).unwrap();
        let f = &m.functions[0];
        let mut out = String::new();
        for i in super::row_covered(f) {
            flowc_ir::print::inst(&mut out, f, i);
            out.push('\n');
        }
        expect_test::expect![[r#"
            v2:r = guard_at v1, v0, 56, r1 else right
            v3:r = get.object v2, r
            v4:r = guard_at v3, v0, 112, r1 else right
            v5:l = get.object v4, l
            v7:r = get.object v4, r
            v8:r = guard_at v7, v0, 168, r1 else right
        "#]]
        .assert_eq(&out);
    }

    /// A link read before a `set` of a link field is not vouched for by a
    /// `guard_row` after it: the set may have changed the row (it stays
    /// one only as far as the heap saw), and the link read is not what
    /// the row now says.
    #[test]
    fn a_guard_row_does_not_cover_a_link_read_before_a_link_was_written() {
        let text = "trace 't'(v0:tape, v9:x) {
b0:
    v1:r = get.object v0, r
    guard_link v1, cell, r0 else grow
    set.object v0, r, v9
    guard_row v0, 0, 112, cell, r, l, 56, row 0, r1 else right
    v2:r = guard_at v1, v0, 56, r1 else right
    v3:r = get.object v2, r
    guard_link v3, cell, r0 else grow
    v4:r = guard_at v3, v0, 112, r1 else right
    exit r2 to out
resume r0 {
    frame [tape = v0]
}
resume r1 {
    frame [r = v1]
}
resume r2 {
    frame [tape = v4]
}
}
";
        let m = flowc_ir::parse::module("trace", text).unwrap();
        let f = &m.functions[0];
        let mut out = String::new();
        for i in super::row_covered(f) {
            flowc_ir::print::inst(&mut out, f, i);
            out.push('\n');
        }
        // Only the link read after the guard.
        expect_test::expect![[r#"
            v3:r = get.object v2, r
            v4:r = guard_at v3, v0, 112, r1 else right
        "#]]
        .assert_eq(&out);
    }

    /// The values a loop block keeps in registers besides its variables
    /// ([`super::loop_invariants`]): those defined before it, most read
    /// first — the cell a link is rematerialized from counts that link's
    /// reads (`v2`, `v3`: `v0`'s), and a value defined in the block
    /// (`v4`, `v6`) is none — in the registers the variables leave.
    #[test]
    fn a_loop_block_keeps_the_values_defined_before_it_in_registers() {
        let text = "trace 't'(v0:tape, v9:x) {
b0:
    v1:r = get.object v0, r
    guard_link v1, cell, r0 else grow
    v2:r = guard_at v1, v0, 56, r0 else right
    v8:l = get.object v0, l
    guard_link v8, cell, r0 else grow
    v3:l = guard_at v8, v0, -56, r0 else left
    jump b1
b1:
    v4:v = get.object v2, v
    v5:v = add.word v4, v9
    set.object v3, v, v5
    v6:v = get.object v0, v
    guard_true v6, r0 else out
    jump b1
resume r0 {
    frame [tape = v0]
}
}
";
        let m = flowc_ir::parse::module("trace", text).unwrap();
        let f = &m.functions[0];
        let remat = super::rematerialized(f, &[], &[]);
        let kept = super::loop_invariants(f, &super::LOOP_REGS[1..], &remat, |_| false);
        let out: Vec<String> = kept.iter().map(|(v, r)| format!("v{} {r:?}", flowc_ir::ix(*v))).collect();
        expect_test::expect![[r#"
            [
                "v0 Reg(9)",
                "v9 Reg(10)",
            ]
        "#]]
        .assert_debug_eq(&out);
    }

    /// The results left unstored ([`super::unstored_results`]): a BF
    /// `+`'s `get` and `add.word`, each read by the next instruction only,
    /// and not the first of a chain `a + 0`, `a + 1` whose second step may
    /// leave the small integers (its slow path reloads its operand from
    /// the word, which the trace would then have been written again to
    /// store).
    #[test]
    fn a_result_is_left_unstored_only_for_an_instruction_with_no_slow_path() {
        let text = "trace 't'(v0:tape, v9:a) {
b0:
    v1:v = get.object v0, v
    v2:v = add.word v1, 1
    v3:v = mod.word v2, 256
    set.object v0, v, v3
    v4:a = add.word v9, 0
    v5:a = add v4, 1
    exit r0 to out
resume r0 {
    frame [tape = v0, a = v5]
}
}
";
        let m = flowc_ir::parse::module("trace", text).unwrap();
        let f = &m.functions[0];
        let reads = super::WordReads::new();
        let small = crate::small::Small::of(f);
        let mut out = String::new();
        for i in super::unstored_results(f, &reads, &small, &[]) {
            flowc_ir::print::inst(&mut out, f, i);
            out.push('\n');
        }
        expect_test::expect![[r#"
            v1:v = get.object v0, v
            v2:v = add.word v1, 1
            v3:v = mod.word v2, 256
        "#]]
        .assert_eq(&out);
    }

    /// The entry wrapper moves the target out of the first argument
    /// register and the context into it (the `tail` convention's), calls
    /// with the stack aligned (the return address and `rbp` pushed), and
    /// returns the callee's `rax`.
    #[test]
    fn the_trace_entry_calls_its_target_with_the_context() {
        let code = super::trace_entry();
        let listing = crate::disasm::listing(&[(flowc_lang::Symbol::intern("flowc_trace_entry"), 0, &code)]);
        expect_test::expect![[r#"
            ; function flowc_trace_entry: 14 bytes at 0x0
                   0:  55                             push    rbp
                   1:  48 89 e5                       mov     rbp,rsp
                   4:  48 89 f8                       mov     rax,rdi
                   7:  48 89 f7                       mov     rdi,rsi
                   a:  ff d0                          call    rax
                   c:  5d                             pop     rbp
                   d:  c3                             ret

        "#]]
        .assert_eq(&listing);
    }
}
