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

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, MemFlagsData, Value as ClValue};

use flowc_lang::heap::cell::{self, BOXED_KIND};

use super::Lowerer;
use crate::word;

impl Lowerer<'_, '_> {
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
