//! Objects in compiled code: `new`, `get`, `set` and the class tests of
//! `if_class` and `guard_class`, inline on the heap's cells
//! ([`flowc_lang::heap::cell`]), with a runtime call as the slow path.
//!
//! - `get obj.f`: when `obj` points at an object cell of the code's layout
//!   and the field is set, one load at the field's slot; otherwise the
//!   runtime reads it (or raises the error: not an object, unset field).
//!   `get.object` (the optimizer proved `obj` an object, of the one layout
//!   every object of the program has) tests only that the field is set,
//!   and not even that for a field every object has set before anything
//!   can read it ([`fields_always_set`]): then it is one load.
//! - `set obj.f = v`: the same checks, then one store — unless the field
//!   is immutable for some class and already set, or `v` is unbound: the
//!   runtime decides. `set.object` skips the test of `obj`, a value
//!   surely bound the test of `v`.
//! - `new C`: the allocation bumps the pointer of the size class's run
//!   ([`flowc_lang::heap::FreeRun`]) and writes the header and unset slots;
//!   when the run is used up, the runtime allocates (and may collect).
//! - class tests: a pointer to an object cell whose class word is `C`; an
//!   unbound operand goes to the runtime, which raises its error.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, BlockArg, InstBuilder, MemFlagsData, Value as ClValue};

use flowc_lang::heap::block::MAX_WORDS;
use flowc_lang::heap::cell::{self, OBJECT, UNSET};
use flowc_lang::heap::{run_offset, Layout};
use flowc_lang::Symbol;

use super::Lowerer;
use crate::runtime::{offsets, RuntimeFn};
use crate::word;

/// What compiled code knows of the objects it meets.
#[derive(Clone, Debug)]
pub struct ObjectInfo {
    /// Their layout: every object a piece of code meets is laid out by
    /// the program it was compiled from.
    pub layout: &'static Layout,
    /// Whether the layout's address can be a constant of the code (in
    /// memory), else it is read from the context (object files).
    pub embed_layout: bool,
    /// Fields declared immutable for some class.
    pub immutable: Vec<Symbol>,
    /// Fields that no read finds unset ([`fields_always_set`]), sorted;
    /// empty where the code does not see every `new` of the program.
    pub always_set: Vec<Symbol>,
    /// Whether the code may run while the heap watches its row's links
    /// ([`flowc_lang::heap::rows`]): the JIT's (traces, and the functions
    /// its traces call), and a whole program's with walks
    /// (`crate::walks`). A `set` of a slot the rows' mask names then
    /// stores in line and calls the runtime's `row_write`, which shows the
    /// rows the write (but a set of an object new in its block,
    /// `lower/links.rs` `fresh_sets`).
    pub watch_rows: bool,
    /// The fields that may hold an object ([`fields_holding_objects`]),
    /// sorted; `None`: any may. Only they can be links of the heap's row,
    /// so only their `set`s test its mask.
    pub links: Option<Vec<Symbol>>,
}

impl ObjectInfo {
    /// Whether a `set` of `field` shows the heap's row the write
    /// ([`ObjectInfo::watch_rows`]).
    pub fn watches(&self, field: Symbol) -> bool {
        self.watch_rows && self.links.as_ref().is_none_or(|l| l.binary_search(&field).is_ok())
    }

    /// Objects of `layout` with the `immutable` declarations of a module.
    pub fn new(layout: &'static Layout, immutable: &[(Symbol, Vec<Symbol>)], embed_layout: bool) -> ObjectInfo {
        let mut fields: Vec<Symbol> = immutable.iter().flat_map(|(_, fs)| fs.iter().copied()).collect();
        fields.sort_unstable();
        fields.dedup();
        ObjectInfo { layout, embed_layout, immutable: fields, always_set: Vec::new(), watch_rows: false, links: None }
    }

    /// Objects of a whole program, `running` every function that may run
    /// (so every `new` there is): its fields always set
    /// ([`fields_always_set`]) are read without the unset test. A program
    /// with walks (`crate::walks`) may have the heap's rows found while
    /// it runs, so its `set`s of fields that may hold objects show them
    /// the write.
    pub fn of_program<'f>(
        layout: &'static Layout,
        immutable: &[(Symbol, Vec<Symbol>)],
        embed_layout: bool,
        running: impl IntoIterator<Item = &'f flowc_ir::Function>,
    ) -> ObjectInfo {
        let running: Vec<&flowc_ir::Function> = running.into_iter().collect();
        let walks = running
            .iter()
            .any(|f| f.all_insts().any(|(_, i)| matches!(f.insts[i].kind, flowc_ir::InstKind::Walk { .. })));
        ObjectInfo {
            always_set: fields_always_set(running.iter().copied()),
            watch_rows: walks,
            links: walks.then(|| fields_holding_objects(running.iter().copied())),
            ..ObjectInfo::new(layout, immutable, embed_layout)
        }
    }
}

/// The fields of `functions` (every function that may run) that may
/// hold an object: those some `set` writes a value that may be one —
/// a parameter, a `get`'s result, a call's, a `new`'s, a list's element,
/// an unknown operation's, or a phi, `check_bound` or `same` of one —
/// where no other operation's result or constant is (objects have no
/// literals, and no operation makes one). Sorted.
pub fn fields_holding_objects<'f>(functions: impl IntoIterator<Item = &'f flowc_ir::Function>) -> Vec<Symbol> {
    use flowc_ir::{InstKind, Operand, ValueDef};
    let mut out = Vec::new();
    for f in functions {
        // Values that may be objects, to a fixpoint over phis.
        let mut may = vec![false; f.values.len()];
        loop {
            let mut changed = false;
            for (v, data) in f.values.iter() {
                let k = flowc_ir::ix(v);
                if may[k] {
                    continue;
                }
                let obj = |o: &Operand| match o {
                    Operand::Value(x) => may[flowc_ir::ix(*x)],
                    Operand::Const(c) => matches!(c, flowc_lang::Value::Object(_)),
                };
                let now = match data.def {
                    ValueDef::Param(_) | ValueDef::Detached => true,
                    ValueDef::Inst(i) => match &f.insts[i].kind {
                        // `same` passes its operand on, and a list's
                        // element may be anything (no program builds a
                        // list of objects, but IR text may).
                        InstKind::Op { op: flowc_lang::ast::Operator::Known(op), args, .. } => match op {
                            flowc_lang::ops::Op::Same => args.first().is_some_and(obj),
                            flowc_lang::ops::Op::ReadList => true,
                            _ => false,
                        },
                        InstKind::Unbound(_) | InstKind::Iterations(_) => false,
                        InstKind::Phi(inputs) => inputs.iter().any(|(_, o)| obj(o)),
                        InstKind::CheckBound(o) => obj(o),
                        _ => true,
                    },
                };
                if now {
                    may[k] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for (_, i) in f.all_insts() {
            if let InstKind::Set { field, value, .. } = &f.insts[i].kind {
                let obj = match value {
                    Operand::Value(x) => may[flowc_ir::ix(*x)],
                    Operand::Const(c) => matches!(c, flowc_lang::Value::Object(_)),
                };
                if obj {
                    out.push(*field);
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The fields that every object of a program has set before anything can
/// read it: those that each `new` of `functions` (every function that may
/// run: objects have no literals, and no builtin makes one) is followed
/// by a `set` of, in its block, before any instruction that may read a
/// field. A `get` of such a field never fails as unset, so compiled code
/// loads it without testing it. Sorted.
///
/// Between the `new` and the `set` only instructions that read no field
/// may come: operations, other `new`s and `set`s (a `set` of an
/// immutable field tests whether it is set, an error of its own, never
/// an unset read), `check_bound`, `unbound`. A `get`, a call, a guard or
/// the block's end before it and the field is not always set. Sound for
/// every engine that runs `functions` as they are: the object exists
/// only in that block until the `set`, and any error on the way stops the
/// run. The JIT's traces run the program's source, and a guard may leave
/// one between its `new` and its `set`; whatever continues there (the
/// interpreter, a bridge recorded from there) runs the rest of that
/// block, its `set`s first, so the facts hold for traces too
/// (`TraceCache::assume_always_set`, given these facts over the lowered
/// main graph and every function).
///
/// One pass over each block: the `new`s still open (no instruction that
/// may read a field since), each with the fields set so far, are closed
/// together at the first such instruction or the block's end.
pub fn fields_always_set<'f>(functions: impl IntoIterator<Item = &'f flowc_ir::Function>) -> Vec<Symbol> {
    use flowc_ir::{InstKind, Operand};
    let mut all: Vec<Symbol> = Vec::new();
    // The meet, over the `new`s closed so far, of the fields each set.
    let mut always: Option<Vec<Symbol>> = None;
    let mut close = |set: &mut Vec<Symbol>| {
        set.sort_unstable();
        set.dedup();
        always = Some(match always.take() {
            None => std::mem::take(set),
            Some(a) => a.into_iter().filter(|x| set.binary_search(x).is_ok()).collect(),
        });
    };
    // The open `new`s of the block: their objects, and what each set.
    let mut open: Vec<(flowc_ir::ValueId, Vec<Symbol>)> = Vec::new();
    for f in functions {
        for &b in &f.layout {
            for &i in &f.blocks[b].insts {
                match &f.insts[i].kind {
                    InstKind::Set { obj, field, .. } => {
                        all.push(*field);
                        if let Some((_, set)) = open.iter_mut().find(|(o, _)| Operand::Value(*o) == *obj) {
                            set.push(*field);
                        }
                    }
                    InstKind::New(_) => open.extend(f.insts[i].result.map(|o| (o, Vec::new()))),
                    InstKind::Op { .. } | InstKind::CheckBound(_) | InstKind::Unbound(_) => {}
                    other => {
                        if let InstKind::Get { field, .. } = other {
                            all.push(*field);
                        }
                        open.drain(..).for_each(|(_, mut set)| close(&mut set));
                    }
                }
            }
            open.drain(..).for_each(|(_, mut set)| close(&mut set));
        }
    }
    match always {
        Some(a) => a,
        // No object is ever made: no read finds one.
        None => {
            all.sort_unstable();
            all.dedup();
            all
        }
    }
}

impl Lowerer<'_, '_> {
    /// A block that takes one word: where the fast and slow paths meet.
    pub(super) fn join_block(&mut self) -> Block {
        let join = self.b.create_block();
        self.b.append_block_param(join, types::I64);
        join
    }

    /// Branches to `yes` when word `w` points at an object cell of the
    /// code's layout, else to `no`.
    fn if_object_of_layout(&mut self, w: ClValue, yes: Block, no: Block) {
        let pointer = self.is_pointer(w);
        let is_cell = self.b.create_block();
        self.b.ins().brif(pointer, is_cell, &[], no, &[]);
        self.b.switch_to_block(is_cell);
        let object = self.cell_is(w, OBJECT);
        let laid_out = self.b.ins().load(types::I64, MemFlagsData::trusted(), w, cell::LAYOUT as i32);
        let expected = self.layout_word();
        let same = self.b.ins().icmp(IntCC::Equal, laid_out, expected);
        let both = self.b.ins().band(object, same);
        self.b.ins().brif(both, yes, &[], no, &[]);
    }

    /// The address of the code's layout, as a word.
    fn layout_word(&mut self) -> ClValue {
        let objects = self.env.objects;
        if objects.embed_layout {
            self.konst(objects.layout as *const Layout as i64)
        } else {
            self.b.ins().load(types::I64, MemFlagsData::trusted(), self.ctx, offsets::LAYOUT)
        }
    }

    /// The byte offset of `field`'s slot, if the layout has one and the
    /// block reads and writes fields in line ([`crate::plan::Plan::inline_objects`];
    /// of an object proven one, `proven`: [`crate::plan::Plan::inline_proven_fields`]).
    fn slot_offset(&self, field: Symbol, proven: bool) -> Option<i32> {
        let cold = self.is_cold();
        if !(self.plan.inline_objects(cold) || proven && self.plan.inline_proven_fields(cold, self.on_hot_cycle())) {
            return None;
        }
        let k = self.env.objects.layout.slot(field)?;
        Some((cell::SLOTS + 8 * k) as i32)
    }

    /// Before a field is read or written in line: where stops are tested
    /// once per block ([`Lowerer::flush_stop`]), a stop some runtime call
    /// before it in the block may have left is tested now. After a stop
    /// the runtime returns the stop word, 0, for an object it was asked
    /// for (a `get` of an unset link, a `new`), and the access would load
    /// from or store to near address 0.
    fn before_inline_access(&mut self) {
        self.flush_stop();
    }

    /// `get obj.field`; `walked`: the function walks the result as a
    /// link, whose load predicts the next object in a row
    /// ([`super::links`]). A predicted hit goes with the address computed
    /// to `hit_target` where one is given (a link tested for 0 right
    /// after, [`Lowerer::link_and_branch`]), else to where the result is
    /// returned.
    pub(super) fn get_field(
        &mut self,
        obj: ClValue,
        field: Symbol,
        proven: bool,
        walked: bool,
        hit_target: Option<Block>,
    ) -> ClValue {
        let offset = self.slot_offset(field, proven);
        // Never unset ([`fields_always_set`]): no test of the word loaded.
        let always_set = self.env.objects.always_set.binary_search(&field).is_ok();
        let predict = walked && !self.is_cold();
        if let (Some(offset), true, true, false) = (offset, proven, always_set, predict) {
            self.before_inline_access();
            return self.b.ins().load(types::I64, MemFlagsData::trusted(), obj, offset);
        }
        let join = self.join_block();
        // The runtime's `get`: where `obj` may not be an object, or the
        // field unset, or nothing is in line.
        let slow = (offset.is_none() || !proven || !always_set).then(|| self.cold_block());
        if let Some(offset) = offset {
            self.before_inline_access();
            if let (false, Some(slow)) = (proven, slow) {
                let fast = self.b.create_block();
                self.if_object_of_layout(obj, fast, slow);
                self.b.switch_to_block(fast);
            }
            let v = self.b.ins().load(types::I64, MemFlagsData::trusted(), obj, offset);
            if predict {
                // The next object in a row, then the one before: where
                // the word is one of them, the result is the address
                // computed, which the processor need not wait for the
                // load to know.
                let size = (self.env.objects.layout.words() * 8) as i64;
                for step in [size, -size] {
                    let predicted = self.b.ins().iadd_imm_s(obj, step);
                    let hit = self.b.ins().icmp(IntCC::Equal, v, predicted);
                    let miss = self.b.create_block();
                    let to = hit_target.unwrap_or(join);
                    self.b.ins().brif(hit, to, &[BlockArg::Value(predicted)], miss, &[]);
                    self.b.switch_to_block(miss);
                }
            }
            match slow {
                Some(slow) if !always_set => {
                    let set = self.b.ins().icmp_imm_s(IntCC::NotEqual, v, UNSET.as_i64());
                    self.b.ins().brif(set, join, &[BlockArg::Value(v)], slow, &[]);
                }
                _ => {
                    self.b.ins().jump(join, &[BlockArg::Value(v)]);
                }
            }
        } else if let Some(slow) = slow {
            self.b.ins().jump(slow, &[]);
        }
        if let Some(slow) = slow {
            self.b.switch_to_block(slow);
            let fld = self.konst(field.index() as i64);
            let r = self.call_rt(RuntimeFn::Get, &[obj, fld]);
            self.check_stop(r);
            self.b.ins().jump(join, &[BlockArg::Value(r)]);
        }
        self.b.switch_to_block(join);
        self.b.block_params(join)[0]
    }

    /// `set obj.field = value`; `proven`: `obj` is an object (`set.object`);
    /// `may_be_unbound`: `value` may be unbound; `watch`: the write is
    /// shown to the heap's rows where their mask names the slot
    /// ([`ObjectInfo::watches`]).
    pub(super) fn set_field(
        &mut self,
        obj: ClValue,
        field: Symbol,
        value: ClValue,
        proven: bool,
        may_be_unbound: bool,
        watch: bool,
    ) {
        let flags = MemFlagsData::trusted();
        let done = self.b.create_block();
        let slow = self.cold_block();
        // Whether anything goes to the runtime's `set`.
        let mut slow_used = true;
        if let Some(offset) = self.slot_offset(field, proven) {
            self.before_inline_access();
            if !proven {
                let checked = self.b.create_block();
                self.if_object_of_layout(obj, checked, slow);
                self.b.switch_to_block(checked);
            }
            slow_used = !proven;
            // An unbound value raises its error in the runtime.
            let mut ok = may_be_unbound.then(|| {
                let tag = self.b.ins().band_imm_s(value, word::TAG_MASK as i64);
                self.b.ins().icmp_imm_s(IntCC::NotEqual, tag, word::UNBOUND_TAG as i64)
            });
            if self.env.objects.immutable.contains(&field) {
                // Set once for some class: the runtime checks a second set.
                let old = self.b.ins().load(types::I64, flags, obj, offset);
                let unset = self.b.ins().icmp_imm_s(IntCC::Equal, old, UNSET.as_i64());
                ok = Some(match ok {
                    Some(ok) => self.b.ins().band(ok, unset),
                    None => unset,
                });
            }
            if let Some(ok) = ok {
                let store = self.b.create_block();
                self.b.ins().brif(ok, store, &[], slow, &[]);
                self.b.switch_to_block(store);
                slow_used = true;
            }
            self.b.ins().store(flags, value, obj, offset);
            let k = (offset - cell::SLOTS as i32) / 8;
            if watch && k < flowc_lang::heap::rows::MASK_SLOTS as i32 {
                // A link of the heap's rows: shown to them once written
                // (no row links through a slot past the mask's).
                let heap = self.b.ins().load(types::I64, flags, self.ctx, offsets::HEAP);
                let at = (flowc_lang::heap::rows_offset() as i32) + flowc_lang::heap::rows::MASK;
                let mask = self.b.ins().load(types::I64, flags, heap, at);
                let watched = self.b.ins().band_imm_s(mask, 1i64 << k);
                let show = self.cold_block();
                self.b.ins().brif(watched, show, &[], done, &[]);
                self.b.switch_to_block(show);
                let slot = self.konst(i64::from(k));
                self.call_rt_leaf(RuntimeFn::RowWrite, &[obj, slot]);
            }
            self.b.ins().jump(done, &[]);
        } else {
            self.b.ins().jump(slow, &[]);
        }
        // A proven object's field written with a bound value has no slow
        // path: its block is left out (never switched to, it is not in
        // the function).
        if slow_used {
            self.b.switch_to_block(slow);
            let fld = self.konst(field.index() as i64);
            let r = self.call_rt(RuntimeFn::Set, &[obj, fld, value]);
            self.check_stop(r);
            self.b.ins().jump(done, &[]);
        }
        self.b.switch_to_block(done);
    }

    /// `new class`.
    pub(super) fn new_object(&mut self, class: Symbol) -> ClValue {
        let flags = MemFlagsData::trusted();
        let layout = self.env.objects.layout;
        let words = layout.words();
        let join = self.join_block();
        let slow = self.cold_block();
        // Inline bump allocation where objects are in line (see
        // `slot_offset`).
        if words <= MAX_WORDS && self.plan.inline_objects(self.is_cold()) {
            let heap = self.b.ins().load(types::I64, flags, self.ctx, offsets::HEAP);
            let run = run_offset(words) as i32;
            let ptr = self.b.ins().load(types::I64, flags, heap, run);
            let limit = self.b.ins().load(types::I64, flags, heap, run + 8);
            let end = self.b.ins().iadd_imm_s(ptr, (words * 8) as i64);
            let fits = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, limit);
            let fast = self.b.create_block();
            self.b.ins().brif(fits, fast, &[], slow, &[]);
            self.b.switch_to_block(fast);
            self.b.ins().store(flags, end, heap, run);
            let n = self.b.ins().load(types::I64, flags, self.ctx, offsets::ALLOCATIONS);
            let id = self.b.ins().iadd_imm_s(n, 1);
            self.b.ins().store(flags, id, self.ctx, offsets::ALLOCATIONS);
            let kind = self.konst(OBJECT as i64);
            self.b.ins().store(flags, kind, ptr, cell::META as i32);
            let laid_out = self.layout_word();
            self.b.ins().store(flags, laid_out, ptr, cell::LAYOUT as i32);
            let c = self.konst(class.index() as i64);
            self.b.ins().store(flags, c, ptr, cell::CLASS as i32);
            self.b.ins().store(flags, id, ptr, cell::ID as i32);
            let unset = self.konst(UNSET.as_i64());
            for k in 0..layout.fields().len() {
                self.b.ins().store(flags, unset, ptr, (cell::SLOTS + 8 * k) as i32);
            }
            self.b.ins().jump(join, &[BlockArg::Value(ptr)]);
        } else {
            self.b.ins().jump(slow, &[]);
        }
        self.b.switch_to_block(slow);
        let c = self.konst(class.index() as i64);
        let r = self.call_rt(RuntimeFn::New, &[c]);
        self.b.ins().jump(join, &[BlockArg::Value(r)]);
        self.b.switch_to_block(join);
        self.b.block_params(join)[0]
    }

    /// Whether word `obj` is an object of `class`, as a condition; an
    /// unbound word leaves for the runtime, which raises its error.
    pub(super) fn is_class(&mut self, obj: ClValue, class: Symbol) -> ClValue {
        let join = self.b.create_block();
        self.b.append_block_param(join, types::I8);
        let is_cell = self.b.create_block();
        let other = self.b.create_block();
        let pointer = self.is_pointer(obj);
        self.b.ins().brif(pointer, is_cell, &[], other, &[]);
        self.b.switch_to_block(is_cell);
        let object = self.cell_is(obj, OBJECT);
        let c = self.b.ins().uload32(MemFlagsData::trusted(), obj, cell::CLASS as i32);
        let same = self.b.ins().icmp_imm_s(IntCC::Equal, c, class.index() as i64);
        let is = self.b.ins().band(object, same);
        self.b.ins().jump(join, &[BlockArg::Value(is)]);
        self.b.switch_to_block(other);
        self.fail_if_unbound(obj);
        let no = self.b.ins().iconst(types::I8, 0);
        self.b.ins().jump(join, &[BlockArg::Value(no)]);
        self.b.switch_to_block(join);
        self.b.block_params(join)[0]
    }
}
