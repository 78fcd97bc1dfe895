//! List reads in compiled code: `l[i]` inline when `l` is a list whose
//! element `i` is an immediate word (an integer of 63 bits or an atom),
//! and `len(l)` inline when `l` is a list.
//!
//! A list's heap cell holds the address of the list's word table,
//! `[len, w0, w1, ...]`, at [`cell::ITEMS`] ([`flowc_lang::value::List`]);
//! an element that is not immediate has the word 0 there. The inline path
//! tests that `l` points at a boxed cell with a table and that `i` is a
//! small integer in range, and loads the element: five loads and compares
//! instead of a runtime call, which the loop's values would have to be
//! kept safe across (callee-saved registers, or spills). Every other case — an element that
//! must be boxed, an index out of range, an operand of another kind —
//! goes to the runtime, which reads it or raises the error.
//!
//! A constant list, in code run in memory, is read through its table
//! directly ([`KnownTable`]): the list is immutable and the code's root
//! keeps it alive, so the table's address and length are constants of the
//! code. The read tests the index against the length and, when some
//! element is not immediate, the element; `readlist.word` of a list of
//! immediates (the index proven in range) is one load. An interpreter's
//! program and jump table are such lists where `flowc run` compiles for
//! its environment (`known_lists`).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, MemFlagsData, Value as ClValue};

use flowc_lang::heap::cell::{self, BOXED_KIND};

use super::Lowerer;
use crate::word;

/// The word table of a constant list, as code run in memory reads it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KnownTable {
    /// The address of `[len, w0, w1, ...]` ([`flowc_lang::value::List::words`]).
    words: i64,
    len: i64,
    /// Whether every element is immediate (no word is
    /// [`flowc_lang::heap::word::STOP`]).
    pub immediate: bool,
}

impl Lowerer<'_, '_> {
    /// The table of constant list `l`, when code may hold its address: in
    /// memory, where the code's roots keep the list (and its table) alive;
    /// not in an object file.
    pub(super) fn known_table(&self, l: &std::sync::Arc<flowc_lang::value::List>) -> Option<KnownTable> {
        if !matches!(self.env.constants, super::Constants::Rooted(_)) {
            return None;
        }
        let immediate = l.iter().all(|v| word::immediate(v).is_some());
        Some(KnownTable { words: l.words() as i64, len: l.len() as i64, immediate })
    }

    /// Element `index` (a small integer in range) of a list of immediates.
    pub(super) fn read_known_table(&mut self, t: KnownTable, index: ClValue) -> ClValue {
        let i = self.b.ins().sshr_imm_u(index, 1);
        self.table_word(t, i)
    }

    /// The word at position `i` (untagged, in range) of table `t`.
    fn table_word(&mut self, t: KnownTable, i: ClValue) -> ClValue {
        let offset = self.b.ins().ishl_imm_u(i, 3);
        let base = self.konst(t.words);
        let at = self.b.ins().iadd(base, offset);
        self.b.ins().load(types::I64, MemFlagsData::trusted().with_readonly(), at, 8)
    }

    /// [`Lowerer::read_list_inline`] of a constant list whose table is
    /// known: the index tested (a small integer when `index_small` does
    /// not say so, below the length), the element when it may not be
    /// immediate.
    pub(super) fn read_known_list_inline(
        &mut self,
        t: KnownTable,
        index: ClValue,
        index_small: bool,
        slow: Block,
    ) -> ClValue {
        let i = self.b.ins().sshr_imm_u(index, 1);
        // Unsigned: a negative index is out of range too.
        let mut go = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, i, t.len);
        if !index_small {
            let tag = self.b.ins().band_imm_s(index, word::INT_TAG as i64);
            let int = self.b.ins().icmp_imm_s(IntCC::NotEqual, tag, 0);
            go = self.b.ins().band(go, int);
        }
        let read = self.b.create_block();
        self.b.ins().brif(go, read, &[], slow, &[]);
        self.b.switch_to_block(read);
        let w = self.table_word(t, i);
        if !t.immediate {
            let immediate = self.b.create_block();
            self.b.ins().brif(w, immediate, &[], slow, &[]);
            self.b.switch_to_block(immediate);
        }
        w
    }

    /// The address of `list`'s word table when `list` is a list (the
    /// current block then continues with it), else a jump to `slow`;
    /// `also`, when given, is a further condition for going on, tested in
    /// the same branch as the pointer's.
    fn list_table(&mut self, list: ClValue, also: Option<ClValue>, slow: Block) -> ClValue {
        let mut go = self.is_pointer(list);
        if let Some(also) = also {
            go = self.b.ins().band(go, also);
        }
        let is_cell = self.b.create_block();
        self.b.ins().brif(go, is_cell, &[], slow, &[]);

        self.b.switch_to_block(is_cell);
        let boxed = self.cell_is(list, BOXED_KIND);
        let is_boxed = self.b.create_block();
        self.b.ins().brif(boxed, is_boxed, &[], slow, &[]);

        self.b.switch_to_block(is_boxed);
        let table = self.b.ins().load(types::I64, MemFlagsData::trusted(), list, cell::ITEMS as i32);
        let has_table = self.b.create_block();
        self.b.ins().brif(table, has_table, &[], slow, &[]);
        self.b.switch_to_block(has_table);
        table
    }

    /// The element of `list` at `index` when it can be read inline (the
    /// current block then continues with it), else a jump to `slow`.
    /// `index_small`: the index is known to be a small integer.
    pub(super) fn read_list_inline(
        &mut self,
        list: ClValue,
        index: ClValue,
        index_small: bool,
        slow: Block,
    ) -> ClValue {
        let flags = MemFlagsData::trusted();
        let int = (!index_small).then(|| {
            let tag = self.b.ins().band_imm_s(index, word::INT_TAG as i64);
            self.b.ins().icmp_imm_s(IntCC::NotEqual, tag, 0)
        });
        let table = self.list_table(list, int, slow);
        let len = self.b.ins().load(types::I64, flags, table, 0);
        let i = self.b.ins().sshr_imm_u(index, 1);
        // Unsigned: a negative index is out of range too.
        let in_range = self.b.ins().icmp(IntCC::UnsignedLessThan, i, len);
        let read = self.b.create_block();
        self.b.ins().brif(in_range, read, &[], slow, &[]);

        self.b.switch_to_block(read);
        let offset = self.b.ins().ishl_imm_u(i, 3);
        let at = self.b.ins().iadd(table, offset);
        let w = self.b.ins().load(types::I64, flags, at, 8);
        let immediate = self.b.create_block();
        self.b.ins().brif(w, immediate, &[], slow, &[]);
        self.b.switch_to_block(immediate);
        w
    }

    /// The length of `list`, as a word, when it is a list (the current
    /// block then continues with it), else a jump to `slow` (the runtime
    /// raises the error): the table's first word.
    pub(super) fn list_len_inline(&mut self, list: ClValue, slow: Block) -> ClValue {
        let table = self.list_table(list, None, slow);
        let len = self.b.ins().load(types::I64, MemFlagsData::trusted(), table, 0);
        // The word of n: 2n + 1 (a list's length is far below 2^62).
        let twice = self.b.ins().iadd(len, len);
        self.b.ins().bor_imm_u(twice, word::INT_TAG as i64)
    }
}
