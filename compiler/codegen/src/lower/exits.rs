//! Traces: guards and exits. A guard branches to an exit stub that stores
//! the values its resume record needs in the context's exit buffer and
//! returns the exit's number, or, when the exit's link slot holds a
//! bridge, continues there; a bridge's `exit` terminator does the same,
//! and `jump_trace` continues in another trace by a tail call.

use rustc_hash::FxHashMap as HashMap;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, BlockArg, InstBuilder, MemFlagsData, Value as ClValue};

use flowc_ir::{BlockId, Function, InstKind, Operand, ValueId};
use flowc_lang::ops::Op;
use flowc_lang::Value;

use super::{trace_signature, Lowerer, Position};
use crate::runtime::{offsets, RuntimeFn};
use crate::word::{self, ONE, ZERO};
use crate::IrPlace;

/// What a trace links to: the slots of its exits and the other traces.
pub struct Links<'a> {
    pub slots: &'a mut ExitSlots,
    pub traces: &'a HashMap<flowc_lang::Symbol, TraceRef>,
    /// The cache-wide number of the function's first exit: exit `k` of
    /// `Building::exits` is exit `first_exit + k` of the cache, whose number
    /// plus one it returns.
    pub first_exit: usize,
    /// How the trace is compiled: [`crate::compile::Codegen::Baseline`] (by
    /// [`crate::baseline`], else as [`crate::compile::Codegen::Cheap`]) or [`crate::compile::Codegen::Cheap`]
    /// (Cranelift's cheapest settings, no optimistic copy of its loop)
    /// for code just recorded, whose worth is not known yet;
    /// [`crate::compile::Codegen::Optimized`] for code that has proved hot.
    pub tier: crate::compile::Codegen,
    /// Every how many crossings (a power of two) a linked exit checks in
    /// with the driver, as the JIT asks (`flowc_trace::jit::LINK_CHECK`);
    /// `None`: never.
    pub link_check: Option<u64>,
}

/// A compiled trace as others jump to it: its number of
/// parameters, and its code slot ([`CodeSlots`]), which a `jump_trace`
/// reads: the trace's code, or the code that replaced it (an optimized
/// version, a tree it is the root of). `slot` is the slot's first word;
/// its second ([`CodeSlot`]) is 8 bytes on.
#[derive(Copy, Clone, Debug)]
pub struct TraceRef {
    pub params: usize,
    pub slot: *const std::cell::Cell<u64>,
}

/// A trace's code slot: the address of the code that runs when something
/// jumps to the trace (its standard entry, which takes the arguments in
/// the exit buffer), and the address of that code's *register entry*
/// (baseline code's, which takes them in registers:
/// `crate::baseline::Compiled::regs_entry`) or, for code without one, of
/// the cache's adapter to the first (`crate::baseline::regs_adapter`).
/// The two are set together ([`CodeSlots::set`]).
pub type CodeSlot = [std::cell::Cell<u64>; 2];

/// The code slots of every trace of a trace cache, by trace number, each
/// boxed where it never moves (code holds their addresses). Code generated
/// away from the cache ([`crate::in_memory::Apart`]) makes its own traces'
/// slots, which the cache adopts when it installs them
/// ([`CodeSlots::adopt`]).
#[derive(Default)]
pub struct CodeSlots {
    // Boxed: code holds each one's address, which growing the list
    // must not move.
    #[allow(clippy::vec_box)]
    slots: Vec<Box<CodeSlot>>,
    /// Slots another took the place of ([`CodeSlots::adopt`]): kept, so
    /// that nothing a failed compile left pointing at one points at
    /// freed memory.
    #[allow(clippy::vec_box)]
    retired: Vec<Box<CodeSlot>>,
    /// What a register entry word holds for code without one.
    pub adapter: u64,
}

impl CodeSlots {
    /// The first word of the slot of trace `n` (the code's address), made
    /// if needed.
    pub fn slot(&mut self, n: usize) -> &std::cell::Cell<u64> {
        while self.slots.len() <= n {
            self.slots.push(Box::default());
        }
        &self.slots[n][0]
    }

    /// Makes code at `code`, with its register entry at `regs` if it has
    /// one, what runs when something jumps to trace `n`.
    pub fn set(&mut self, n: usize, code: u64, regs: Option<u64>) {
        let adapter = self.adapter;
        self.slot(n);
        let slot = &self.slots[n];
        slot[0].set(code);
        slot[1].set(regs.unwrap_or(adapter));
    }

    /// Makes `slot` (which code made elsewhere refers to) the slot of
    /// trace `n`, in place of one made for `n` by a compile that failed.
    pub fn adopt(&mut self, n: usize, slot: Box<CodeSlot>) {
        self.slot(n);
        let old = std::mem::replace(&mut self.slots[n], slot);
        self.retired.push(old);
    }
}

/// One exit's link: `target`, when not 0, is the address of a bridge
/// ([`trace_signature`]: its parameters are the values the exit stores in
/// the exit buffer) the exit continues in instead of returning;
/// `count` counts the failures that went there (the others return to
/// the caller, which counts them). Generated code reads and writes both.
/// `direct`, when not 0, is where a baseline exit jumps first, storing
/// nothing: the direct entry of a bridge compiled to run in the frame of
/// the exit's trace ([`crate::baseline`]'s frame inheritance); such
/// crossings are not counted.
/// `words` and `word_count`, set when a baseline trace is installed, are
/// where the exit's values are in that trace's frame (byte offsets from
/// its stack pointer, `i32`s, in the order of [`TraceExit::values`]): the
/// trace's one shared exit tail copies them into the exit buffer from
/// there, so that an exit stub is a few instructions, not a load and a
/// store per value.
/// `number`, set when baseline code is installed, is the exit's number
/// plus one, what its trace returns when it leaves by it (its code reads
/// it here: code generated away from the cache does not know it).
#[repr(C)]
#[derive(Default)]
pub struct ExitSlot {
    pub target: std::cell::Cell<u64>,
    pub count: std::cell::Cell<u64>,
    pub direct: std::cell::Cell<u64>,
    pub words: std::cell::Cell<u64>,
    pub word_count: std::cell::Cell<u64>,
    pub number: std::cell::Cell<u64>,
}

/// The [`ExitSlot`]s of every exit of a trace cache, by exit number, each
/// boxed where it never moves (code holds their addresses). Baseline code
/// makes its exits' slots as it is generated (anywhere: see
/// [`crate::in_memory::Apart`]); the cache adopts them when it installs
/// the code ([`ExitSlots::adopt`]).
#[derive(Default)]
pub struct ExitSlots {
    // Boxed: code holds each one's address, which growing the list
    // must not move.
    #[allow(clippy::vec_box)]
    slots: Vec<Box<ExitSlot>>,
    /// Slots others took the place of ([`ExitSlots::adopt`]), kept as
    /// [`CodeSlots`] keeps its.
    #[allow(clippy::vec_box)]
    retired: Vec<Box<ExitSlot>>,
}

impl ExitSlots {
    /// The slot of exit `n`, made if needed.
    pub fn slot(&mut self, n: usize) -> &ExitSlot {
        while self.slots.len() <= n {
            self.slots.push(Box::default());
        }
        &self.slots[n]
    }

    /// The slot of exit `n`, if made.
    pub fn get(&self, n: usize) -> Option<&ExitSlot> {
        self.slots.get(n).map(|s| &**s)
    }

    /// Makes `slots` the slots of exits `first`, `first + 1`..., in place
    /// of those made from `first` on by a compile that failed.
    pub fn adopt(&mut self, first: usize, slots: Vec<Box<ExitSlot>>) {
        while self.slots.len() < first {
            self.slots.push(Box::default());
        }
        self.retired.extend(self.slots.drain(first..));
        self.slots.extend(slots);
    }
}

/// How a compiled trace leaves at a guard: it stores `values` (the values
/// its resume record refers to) into the context's exit buffer, in order,
/// and returns the exit's number plus one — or, when the exit's link slot
/// holds code, continues there with `values` as its arguments.
#[derive(Clone, Debug)]
pub struct TraceExit {
    pub resume: flowc_ir::ResumeId,
    pub label: flowc_lang::Symbol,
    /// Shared: the JIT keeps a copy of every exit it has seen fail.
    pub values: std::sync::Arc<[ValueId]>,
    /// For a `guard_value` on a value: its index in `values` (the value
    /// seen, by which bridges are chosen).
    pub key: Option<u32>,
    /// A failing guard, not the `exit` that ends a bridge.
    pub guard: bool,
    /// A failing `guard_int`: one of the assumptions a loop trace checks
    /// on entry (the JIT retraces the loop when they fail often).
    pub check: bool,
    /// A failing `guard_at`: a link laid out otherwise than the trace
    /// assumed (the JIT stops assuming it when one fails often).
    pub at: bool,
    /// A failing `guard_cold`: a dispatch label's position that has code
    /// of its own or became hot (the JIT never bridges it).
    pub cold: bool,
    /// The IR block of the guard or `exit`.
    pub block: BlockId,
    /// Bit `k`: `values[k]` (`k` < 32) is known to be an object of the
    /// program's layout wherever the trace leaves by this exit — tested
    /// before every guard that leaves by it, in the baseline tier's code
    /// (0 from Cranelift's). A bridge starts knowing it
    /// ([`TraceExit::object_param`]).
    pub objects: u32,
}

impl TraceExit {
    /// Whether the exit's value `k` (a bridge's parameter `k`) is known to
    /// be an object ([`TraceExit::objects`]).
    pub fn object_param(&self, k: usize) -> bool {
        k < 32 && self.objects & (1 << k) != 0
    }
}

/// How a trace leaves at an exit.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Leaving {
    /// A guard fails.
    Guard,
    /// A speculation check (`guard_int`) fails.
    Check,
    /// A link's place (`guard_at`) is not the one assumed, or a walk
    /// leaves the heap's row (`guard_row`).
    At,
    /// A position leaves the dispatch tier (`guard_cold`).
    Cold,
    /// The `exit` that ends a bridge.
    End,
}

impl Leaving {
    /// How a guard of `kind` leaves when it fails.
    pub(crate) fn of(kind: &flowc_ir::GuardKind) -> Leaving {
        match kind {
            flowc_ir::GuardKind::Int(..) => Leaving::Check,
            flowc_ir::GuardKind::At(..) | flowc_ir::GuardKind::Row(..) => Leaving::At,
            flowc_ir::GuardKind::Cold(..) => Leaving::Cold,
            _ => Leaving::Guard,
        }
    }
}

/// What a `guard_cold` whose position has a link passes the linked code
/// (the dispatch tier's, [`crate::baseline`]'s and this lowering's): per
/// parameter of trace `f`, in order, the operand its variable has in
/// resume record `resume`, a record of one frame at the promoting block
/// (the JIT's records, `trace::ResumeLive`, which are the parameters, but
/// one holding more — what the block computes before its promotion,
/// `op = code[pc]`, which the position's code computes again — is read
/// the same). `None` where the record is another, or an operand is not
/// one `usable` takes (baseline code's values its exits write).
pub(crate) fn link_operands(
    f: &Function,
    resume: flowc_ir::ResumeId,
    usable: impl Fn(&Operand) -> bool,
) -> Option<Vec<Operand>> {
    let record = &f.resumes[resume];
    let [frame] = &record.frames[..] else { return None };
    f.params
        .iter()
        .map(|&p| {
            let name = f.values[p].name?;
            match &frame.env.iter().find(|(n, _)| *n == name)?.1 {
                flowc_ir::ResumeValue::Operand(o) if usable(o) => Some(o.clone()),
                _ => None,
            }
        })
        .collect()
}

/// What makes two exits of a trace one: the block, the record, the label,
/// the guarded value, and how the trace leaves.
pub(crate) type ExitAt = (BlockId, flowc_ir::ResumeId, flowc_lang::Symbol, Option<ValueId>, Leaving);

/// The exit of resume record `resume`: the distinct values it refers to,
/// then `key` (a guarded value) if it is not among them.
pub(crate) fn exit_record(
    f: &Function,
    block: BlockId,
    resume: flowc_ir::ResumeId,
    label: flowc_lang::Symbol,
    key: Option<ValueId>,
    how: Leaving,
) -> TraceExit {
    exit_of_values(record_values(f, resume).into(), block, resume, label, key, how)
}

/// The distinct values resume record `resume` of `f` refers to, in
/// first-use order: what an exit by it stores.
pub(crate) fn record_values(f: &Function, resume: flowc_ir::ResumeId) -> Vec<ValueId> {
    // Each value once, in first-use order: searched for in the list while
    // it is short, in a set beyond (a residual program's resume records
    // carry hundreds of variables, and searching the list for each was a
    // tenth of a JIT run on one).
    const SHORT: usize = 16;
    let mut values: Vec<ValueId> = Vec::new();
    let mut seen: rustc_hash::FxHashSet<ValueId> = rustc_hash::FxHashSet::default();
    for op in f.resumes[resume].operands() {
        let Operand::Value(v) = op else { continue };
        let new = if values.len() < SHORT {
            !values.contains(v)
        } else {
            if seen.is_empty() {
                seen.extend(values.iter().copied());
            }
            seen.insert(*v)
        };
        if new {
            values.push(*v);
        }
    }
    values
}

/// [`exit_record`] of the record's values, made ahead
/// ([`crate::lower::Shape::record_values`]).
pub(crate) fn exit_of_values(
    values: std::sync::Arc<[ValueId]>,
    block: BlockId,
    resume: flowc_ir::ResumeId,
    label: flowc_lang::Symbol,
    key: Option<ValueId>,
    how: Leaving,
) -> TraceExit {
    let (guard, check, at, cold) =
        (how != Leaving::End, how == Leaving::Check, how == Leaving::At, how == Leaving::Cold);
    let (values, key) = match key {
        None => (values, None),
        Some(k) => match values.iter().position(|v| *v == k) {
            Some(i) => (values, Some(i as u32)),
            None => {
                let mut more = values.to_vec();
                more.push(k);
                let i = more.len() - 1;
                (more.into(), Some(i as u32))
            }
        },
    };
    TraceExit { resume, label, values, key, guard, check, at, cold, block, objects: 0 }
}

impl Lowerer<'_, '_> {
    /// A guard: continue when it holds, else store the exit values and
    /// return the exit's number. `guard_at` has a result: the word its link must be, computed from
    /// its base, returned.
    pub(super) fn guard(
        &mut self,
        kind: &flowc_ir::GuardKind,
        resume: flowc_ir::ResumeId,
        label: flowc_lang::Symbol,
    ) -> Option<ClValue> {
        use flowc_ir::GuardKind;
        let o = self.operand(kind.operand());
        if let GuardKind::Cold(x) = kind {
            let small = self.small.operand(x);
            self.guard_cold(o, small, resume, label);
            return None;
        }
        let mut result = None;
        let holds = match kind {
            GuardKind::True(x) | GuardKind::False(x) => {
                let truth = match x.as_value().and_then(|v| self.cond(v)) {
                    Some(c) => c,
                    None => {
                        if !self.small.operand(x) {
                            self.fail_if_unbound(o);
                        }
                        self.b.ins().icmp_imm_s(IntCC::NotEqual, o, ZERO.as_i64())
                    }
                };
                match kind {
                    GuardKind::True(_) => truth,
                    _ => self.b.ins().icmp_imm_s(IntCC::Equal, truth, 0),
                }
            }
            GuardKind::Value(_, c) => match word::immediate(c) {
                Some(w) => {
                    self.fail_if_unbound(o);
                    self.b.ins().icmp_imm_s(IntCC::Equal, o, w.as_i64())
                }
                None => {
                    if let Value::List(l) = c {
                        // The same list (boxed for this run or another:
                        // every box of it points at its one table) holds
                        // at once; another list is compared by the runtime.
                        let table = l.words() as i64;
                        let c = self.operand(&Operand::Const(c.clone()));
                        let key = kind.operand().as_value();
                        self.guard_list(o, c, table, (resume, label, key));
                        return None;
                    }
                    let object = matches!(c, Value::Object(_));
                    let c = self.operand(&Operand::Const(c.clone()));
                    if object {
                        // Objects are equal only to themselves: one word,
                        // a pointer that never moves.
                        self.fail_if_unbound(o);
                        self.b.ins().icmp(IntCC::Equal, o, c)
                    } else {
                        let r = self.runtime_op(Op::Eq, &[o, c]);
                        self.b.ins().icmp_imm_s(IntCC::Equal, r, ONE.as_i64())
                    }
                }
            },
            GuardKind::Class(_, class) => self.is_class(o, *class),
            // Proven an object of the class or 0: not 0 is the class.
            GuardKind::Link(..) => self.b.ins().icmp_imm_s(IntCC::NotEqual, o, ZERO.as_i64()),
            GuardKind::NotClass(_, class) => {
                let is = self.is_class(o, *class);
                self.b.ins().bxor_imm_u(is, 1)
            }
            GuardKind::Int(_, lo, hi) => {
                // Tagged integers compare like the integers; a word of
                // another kind fails the tag test (an unbound one raises
                // its error on the way out).
                let tagged = self.b.ins().band_imm_s(o, word::INT_TAG as i64);
                let mut holds = self.b.ins().icmp_imm_s(IntCC::NotEqual, tagged, 0);
                if let Some(w) = word::small(*lo) {
                    let above = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, o, w.as_i64());
                    holds = self.b.ins().band(holds, above);
                }
                if let Some(w) = word::small(*hi) {
                    let below = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, o, w.as_i64());
                    holds = self.b.ins().band(holds, below);
                }
                holds
            }
            GuardKind::At(_, base, delta) => {
                // The link the base's cell says is next, by its address:
                // computed without waiting for the link's load, which only
                // this comparison reads (the link and the base are proven
                // objects, and an object's word is its cell's address).
                let base = self.operand(base);
                let at = self.b.ins().iadd_imm_s(base, *delta);
                result = Some(at);
                self.b.ins().icmp(IntCC::Equal, o, at)
            }
            GuardKind::Row(_, span) if span.row as usize >= flowc_lang::heap::rows::ROWS => {
                // No such row holds anything.
                self.b.ins().iconst(types::I8, 0)
            }
            GuardKind::Row(_, span) => {
                // The heap's row holds both ends of the span (the operand
                // is a proven object: its word is its cell's address).
                let flags = MemFlagsData::trusted();
                let heap = self.b.ins().load(types::I64, flags, self.ctx, offsets::HEAP);
                let rows = flowc_lang::heap::rows_offset() as i32;
                let r = span.row as usize;
                let first = self.b.ins().load(types::I64, flags, heap, rows + flowc_lang::heap::rows::lo(r));
                let last = self.b.ins().load(types::I64, flags, heap, rows + flowc_lang::heap::rows::hi(r));
                let from = self.b.ins().iadd_imm_s(o, span.lo);
                let to = self.b.ins().iadd_imm_s(o, span.hi);
                let above = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, from, first);
                let below = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, to, last);
                self.b.ins().band(above, below)
            }
            GuardKind::Cold(_) => unreachable!("lowered by guard_cold above"),
        };
        let exit = self.cold_block();
        let cont = self.b.create_block();
        self.b.ins().brif(holds, cont, &[], exit, &[]);
        self.b.switch_to_block(exit);
        if matches!(kind, GuardKind::Int(..)) {
            self.fail_if_unbound(o);
        }
        let key = match kind {
            GuardKind::Value(Operand::Value(v), _) => Some(*v),
            _ => None,
        };
        self.leave(resume, label, key, Leaving::of(kind));
        self.b.switch_to_block(cont);
        result
    }

    /// A run of guards of one value against constants as one switch
    /// ([`super::switch::GuardChain`]): each failing guard's constant to
    /// its exit, the holding guard's constant on, any other value to the
    /// holding guard's exit, or on where the run has none; for a run of
    /// class guards, on the object's class. The exits are made in the
    /// guards' order, as one by one.
    pub(super) fn guard_switch(&mut self, chain: &super::switch::GuardChain) {
        let x = self.operand(&Operand::Value(chain.value));
        let cont = self.b.create_block();
        let exits: Vec<(flowc_ir::InstId, cranelift_codegen::ir::Block)> =
            chain.guards().map(|g| (g, self.cold_block())).collect();
        let (cases, otherwise) = chain.targets();
        let to = |j: Option<usize>| j.map_or(cont, |j| exits[j].1);
        let otherwise = to(otherwise);
        let first = exits[0].0;
        self.at(self.f.sites.inst(first));
        self.b.set_srcloc(IrPlace::Inst(first).srcloc());
        // (What lives across the unbound test's runtime call: as at the
        // first guard.)
        self.position = Position::Inst(first);
        let n = if chain.classes {
            // An object's class (an unbound value raises its error, at the
            // first guard's site): not a pointer, or no object, is no
            // class, as `is_class` says.
            let (cell_block, other, object) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
            let pointer = self.is_pointer(x);
            self.b.ins().brif(pointer, cell_block, &[], other, &[]);
            self.b.switch_to_block(other);
            self.fail_if_unbound(x);
            self.b.ins().jump(otherwise, &[]);
            self.b.switch_to_block(cell_block);
            let is_object = self.cell_is(x, flowc_lang::heap::cell::OBJECT);
            self.b.ins().brif(is_object, object, &[], otherwise, &[]);
            self.b.switch_to_block(object);
            self.b.ins().uload32(MemFlagsData::trusted(), x, flowc_lang::heap::cell::CLASS as i32)
        } else {
            // Only an integer's word equals an integer's: any other value
            // (an `eq.word` compares words of any kind) goes where no
            // guard fails. (The integer tag's bit alone: an atom's or an
            // unbound word's low bits are not 0 either, and shifted they
            // would be some integer's.)
            let int = self.b.create_block();
            let tag = self.b.ins().band_imm_s(x, word::INT_TAG as i64);
            self.b.ins().brif(tag, int, &[], otherwise, &[]);
            self.b.switch_to_block(int);
            self.b.ins().sshr_imm_s(x, 1)
        };
        let mut switch = cranelift_frontend::Switch::new();
        for (k, j) in cases {
            switch.set_entry(k as u64 as u128, to(j));
        }
        switch.emit(&mut self.b, n, otherwise);
        for (g, exit) in exits {
            let InstKind::Guard { kind, resume, label } = &self.f.insts[g].kind else {
                unreachable!("a chain of guards")
            };
            let (resume, label, how) = (*resume, *label, Leaving::of(kind));
            self.b.switch_to_block(exit);
            self.position = Position::Inst(g);
            self.b.set_srcloc(IrPlace::Inst(g).srcloc());
            self.leave(resume, label, None, how);
        }
        self.b.switch_to_block(cont);
    }

    /// `guard_cold o`: `o` a tagged integer `n` within the run's table of
    /// integer positions, or an object whose allocation number `n` is
    /// within the table of object positions, whose word there is not 0,
    /// that word counted down; else the trace leaves.
    /// `guard_cold o` (the dispatch tier's promotion): `o`'s word in the
    /// table of positions counted down; at 0, into the code the position's
    /// link names where it has one and the values the code was
    /// specialized to hold (as baseline code does, [`link_operands`]),
    /// else out. A known small integer is tested for no other kind.
    fn guard_cold(&mut self, o: ClValue, small: bool, resume: flowc_ir::ResumeId, label: flowc_lang::Symbol) {
        let flags = MemFlagsData::trusted();
        // Where the tables are and how long: set by the driver before
        // each run of compiled code and not changed while it runs, so
        // read once for a loop, not at every round (the dispatch tier's
        // tree ran these loads at every BF instruction).
        let fixed = MemFlagsData::trusted().with_readonly().with_can_move();
        let int_block = self.b.create_block();
        let (inside, counted, exit) = (self.b.create_block(), self.b.create_block(), self.cold_block());
        let cont = self.b.create_block();
        self.b.append_block_param(inside, types::I64);
        self.b.append_block_param(inside, types::I64);
        if small {
            self.b.ins().jump(int_block, &[]);
        } else {
            let (object, cell_block, id_block) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
            let tag = self.b.ins().band_imm_s(o, word::INT_TAG as i64);
            self.b.ins().brif(tag, int_block, &[], object, &[]);
            self.b.switch_to_block(object);
            let pointer = self.is_pointer(o);
            self.b.ins().brif(pointer, cell_block, &[], exit, &[]);
            self.b.switch_to_block(cell_block);
            let is_object = self.cell_is(o, flowc_lang::heap::cell::OBJECT);
            self.b.ins().brif(is_object, id_block, &[], exit, &[]);
            self.b.switch_to_block(id_block);
            let id = self.b.ins().load(types::I64, flags, o, flowc_lang::heap::cell::ID as i32);
            let len = self.b.ins().load(types::I64, fixed, self.ctx, offsets::OBJECT_POSITIONS_LEN);
            let below = self.b.ins().icmp(IntCC::UnsignedLessThan, id, len);
            let table = self.b.ins().load(types::I64, fixed, self.ctx, offsets::OBJECT_POSITIONS);
            self.b.ins().brif(below, inside, &[id.into(), table.into()], exit, &[]);
        }
        self.b.switch_to_block(int_block);
        let n = self.b.ins().sshr_imm_u(o, 1);
        let len = self.b.ins().load(types::I64, fixed, self.ctx, offsets::POSITIONS_LEN);
        // Unsigned: a negative integer is no position either.
        let below = self.b.ins().icmp(IntCC::UnsignedLessThan, n, len);
        let table = self.b.ins().load(types::I64, fixed, self.ctx, offsets::POSITIONS);
        self.b.ins().brif(below, inside, &[n.into(), table.into()], exit, &[]);
        self.b.switch_to_block(inside);
        let (n, table) = (self.b.block_params(inside)[0], self.b.block_params(inside)[1]);
        // Two words a position: its count, and its link.
        let offset = self.b.ins().ishl_imm_u(n, 4);
        let at = self.b.ins().iadd(table, offset);
        let w = self.b.ins().load(types::I64, flags, at, 0);
        match link_operands(self.f, resume, |_| true) {
            Some(values) if self.env.links.is_some() => {
                let zero = self.cold_block();
                self.b.ins().brif(w, counted, &[], zero, &[]);
                self.b.switch_to_block(zero);
                self.link(at, &values, exit);
            }
            _ => {
                self.b.ins().brif(w, counted, &[], exit, &[]);
            }
        }
        self.b.switch_to_block(counted);
        let less = self.b.ins().iadd_imm_s(w, -1);
        self.b.ins().store(flags, less, at, 0);
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(exit);
        self.leave(resume, label, None, Leaving::Cold);
        self.b.switch_to_block(cont);
    }

    /// A position whose count is 0, its table words at `at`: where its
    /// second word (its link) names a code slot, the values `values` are
    /// passed to that code as a `jump_trace` passes them, once the values
    /// the code was specialized to (`Ctx::link_pins`: pairs of an offset
    /// in the values and the word there, ended by -1) are found; else, or
    /// where one differs, on to `exit`. The run says where it went, and
    /// after how many iterations.
    fn link(&mut self, at: ClValue, values: &[Operand], exit: cranelift_codegen::ir::Block) {
        let flags = MemFlagsData::trusted();
        let go = self.cold_block();
        let link = self.b.ins().load(types::I64, flags, at, 8);
        self.b.ins().brif(link, go, &[], exit, &[]);
        self.b.switch_to_block(go);
        let vals: Vec<ClValue> = values.iter().map(|a| self.operand(a)).collect();
        let buf = self.b.ins().load(types::I64, flags, self.ctx, offsets::EXIT_VALUES);
        for (k, &w) in vals.iter().enumerate() {
            self.b.ins().store(flags, w, buf, (8 * k) as i32);
        }
        let (check, next, step, enter) = (self.cold_block(), self.cold_block(), self.cold_block(), self.cold_block());
        self.b.append_block_param(check, types::I64);
        let pins = self.b.ins().load(types::I64, flags, self.ctx, offsets::LINK_PINS);
        self.b.ins().brif(pins, check, &[pins.into()], enter, &[]);
        self.b.switch_to_block(check);
        let p = self.b.block_params(check)[0];
        let off = self.b.ins().load(types::I64, flags, p, 0);
        let end = self.b.ins().icmp_imm_s(IntCC::Equal, off, -1);
        self.b.ins().brif(end, enter, &[], next, &[]);
        self.b.switch_to_block(next);
        let place = self.b.ins().iadd(buf, off);
        let got = self.b.ins().load(types::I64, flags, place, 0);
        let want = self.b.ins().load(types::I64, flags, p, 8);
        let differs = self.b.ins().icmp(IntCC::NotEqual, got, want);
        self.b.ins().brif(differs, exit, &[], step, &[]);
        self.b.switch_to_block(step);
        let p2 = self.b.ins().iadd_imm_s(p, 16);
        self.b.ins().jump(check, &[p2.into()]);
        self.b.switch_to_block(enter);
        self.b.ins().store(flags, link, self.ctx, offsets::LINKED_SLOT);
        let links = self.b.ins().load(types::I64, flags, self.ctx, offsets::LINKS);
        let links = self.b.ins().iadd_imm_s(links, 1);
        self.b.ins().store(flags, links, self.ctx, offsets::LINKS);
        self.store_iterations();
        let iterations = self.b.ins().load(types::I64, flags, self.ctx, offsets::ITERATIONS);
        self.b.ins().store(flags, iterations, self.ctx, offsets::LINKED_ITERATIONS);
        let code = self.b.ins().load(types::I64, flags, link, 0);
        let sig = trace_signature(&*self.env.module);
        let sig = self.b.import_signature(sig);
        self.b.ins().return_call_indirect(sig, code, &[self.ctx]);
    }

    /// `guard_value o, c` for a list `c` whose word table is `table`: a
    /// boxed cell with that table holds at once; anything else is compared
    /// with `c` by the runtime, and the trace leaves when they differ.
    fn guard_list(
        &mut self,
        o: ClValue,
        c: ClValue,
        table: i64,
        (resume, label, key): (flowc_ir::ResumeId, flowc_lang::Symbol, Option<ValueId>),
    ) {
        let flags = MemFlagsData::trusted();
        let (cell, compare, cont) = (self.b.create_block(), self.cold_block(), self.b.create_block());
        let pointer = self.is_pointer(o);
        self.b.ins().brif(pointer, cell, &[], compare, &[]);
        self.b.switch_to_block(cell);
        let items = self.b.ins().load(types::I64, flags, o, flowc_lang::heap::cell::ITEMS as i32);
        let same = self.b.ins().icmp_imm_s(IntCC::Equal, items, table);
        self.b.ins().brif(same, cont, &[], compare, &[]);
        self.b.switch_to_block(compare);
        self.fail_if_unbound(o);
        let r = self.runtime_op(Op::Eq, &[o, c]);
        let holds = self.b.ins().icmp_imm_s(IntCC::Equal, r, ONE.as_i64());
        let exit = self.cold_block();
        self.b.ins().brif(holds, cont, &[], exit, &[]);
        self.b.switch_to_block(exit);
        self.leave(resume, label, key, Leaving::Guard);
        self.b.switch_to_block(cont);
    }

    /// Leaves the trace: stores the values resume record `resume` refers
    /// to (and `key`, a guarded value) in the exit buffer and returns the
    /// exit's number (from 1).
    pub(super) fn leave(
        &mut self,
        resume: flowc_ir::ResumeId,
        label: flowc_lang::Symbol,
        key: Option<ValueId>,
        how: Leaving,
    ) {
        // Both copies of a guard leave by one exit: the second stores the
        // same values in the same order and returns the same number.
        let at = (self.current, resume, label, key, how);
        let n = match self.exit_numbers.get(&at) {
            Some(&n) => n,
            None => {
                let n = self.env.exits.len();
                self.exit_numbers.insert(at, n);
                self.env.exits.push(exit_record(self.f, self.current, resume, label, key, how));
                n
            }
        };
        let words: Vec<ClValue> =
            self.env.exits[n].values.clone().iter().map(|v| self.operand(&Operand::Value(*v))).collect();
        let number = self.env.links.as_ref().map_or(n, |l| l.first_exit + n);
        let buf = self.b.ins().load(types::I64, MemFlagsData::trusted(), self.ctx, offsets::EXIT_VALUES);
        for (k, &w) in words.iter().enumerate() {
            self.b.ins().store(MemFlagsData::trusted(), w, buf, (8 * k) as i32);
        }
        self.store_iterations();
        let code = self.konst(number as i64 + 1);
        let Some(links) = &mut self.env.links else {
            self.b.ins().return_(&[code]);
            return;
        };
        let slot = links.slots.slot(number) as *const ExitSlot as i64;
        let addr = self.konst(slot);
        let leave = self.leave_block();
        self.b.ins().jump(leave, &[BlockArg::Value(addr), BlockArg::Value(code)]);
    }

    /// The shared end of a trace's exits ([`Lowerer::leave`]): a linked
    /// exit continues in its bridge (which reads the values the exit just
    /// stored), counting the failure; an exit without a link returns its
    /// number.
    pub(super) fn leave_block(&mut self) -> cranelift_codegen::ir::Block {
        if let Some(b) = self.leave {
            return b;
        }
        let leave = self.cold_block();
        self.b.append_block_param(leave, types::I64);
        self.b.append_block_param(leave, types::I64);
        self.leave = Some(leave);
        leave
    }

    /// Fills the shared end of the exits, if some exit jumps there (after
    /// every other block: a block is filled before the next one starts).
    pub(super) fn finish_leave(&mut self) {
        let Some(leave) = self.leave else { return };
        let (addr, code) = (self.b.block_params(leave)[0], self.b.block_params(leave)[1]);
        self.b.switch_to_block(leave);
        let flags = MemFlagsData::trusted();
        let target = self.b.ins().load(types::I64, flags, addr, std::mem::offset_of!(ExitSlot, target) as i32);
        let (link, out) = (self.cold_block(), self.cold_block());
        self.b.ins().brif(target, link, &[], out, &[]);
        self.b.switch_to_block(link);
        let at = std::mem::offset_of!(ExitSlot, count) as i32;
        let count = self.b.ins().load(types::I64, flags, addr, at);
        let count = self.b.ins().iadd_imm_s(count, 1);
        self.b.ins().store(flags, count, addr, at);
        // Every `link_check`-th crossing returns to the driver instead.
        if let Some(every) = self.env.links.as_ref().and_then(|l| l.link_check) {
            let check = self.b.ins().band_imm_s(count, every as i64 - 1);
            let go = self.cold_block();
            self.b.ins().brif(check, go, &[], out, &[]);
            self.b.switch_to_block(go);
        }
        let sig = trace_signature(&*self.env.module);
        let sig = self.b.import_signature(sig);
        self.b.ins().return_call_indirect(sig, target, &[self.ctx]);
        self.b.switch_to_block(out);
        self.b.ins().return_(&[code]);
    }

    /// `jump_trace target(args)`: a tail call of the code in the trace's
    /// code slot.
    pub(super) fn jump_trace(&mut self, target: flowc_lang::Symbol, args: &[Operand]) {
        let found = self.env.links.as_ref().and_then(|l| l.traces.get(&target)).copied();
        let Some(trace) = found.filter(|t| t.params == args.len()) else {
            // Checked before lowering (`TraceCache::compile`); unreachable.
            let index = self.env.traps.len() as i64;
            let msg = format!("internal: jump to an unknown trace {target}");
            self.env.traps.push(flowc_lang::interp::ErrorKind::User(flowc_lang::Symbol::intern(&msg)));
            let k = self.konst(index);
            self.call_rt(RuntimeFn::Trap, &[k]);
            self.b.ins().jump(self.stop, &[]);
            return;
        };
        let vals: Vec<ClValue> = args.iter().map(|a| self.operand(a)).collect();
        let buf = self.b.ins().load(types::I64, MemFlagsData::trusted(), self.ctx, offsets::EXIT_VALUES);
        for (k, &w) in vals.iter().enumerate() {
            self.b.ins().store(MemFlagsData::trusted(), w, buf, (8 * k) as i32);
        }
        self.store_iterations();
        let slot = self.konst(trace.slot as i64);
        let code = self.b.ins().load(types::I64, MemFlagsData::trusted(), slot, 0);
        let sig = trace_signature(&*self.env.module);
        let sig = self.b.import_signature(sig);
        self.b.ins().return_call_indirect(sig, code, &[self.ctx]);
    }

    /// A trace leaving (by returning or continuing elsewhere): the loop
    /// iterations it ran go back to the context.
    pub(super) fn store_iterations(&mut self) {
        if let Some(var) = self.iterations {
            let n = self.b.use_var(var);
            self.b.ins().store(MemFlagsData::trusted(), n, self.ctx, offsets::ITERATIONS);
        }
    }
}
