//! Which IR instruction each stretch of machine code came from: the code
//! generator marks every instruction and terminator it lowers with a
//! Cranelift source location ([`IrPlace::srcloc`]), and Cranelift hands
//! back, with the final code, the ranges of offsets each location covers.
//! The explorer (`flowc explore`) links IR lines and machine code with
//! them. Code no IR instruction asked for (prologues, fuel checks, moves
//! between blocks) has no place.

use cranelift_codegen::ir::SourceLoc;
use flowc_ir::{BlockId, InstId};
use flowc_lang::Symbol;
use la_arena::{Idx, RawIdx};

/// An instruction or a block's terminator of the IR function compiled.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum IrPlace {
    Inst(InstId),
    Term(BlockId),
}

impl IrPlace {
    /// The source location that stands for this place: the arena index
    /// times two, plus one for a terminator.
    pub fn srcloc(self) -> SourceLoc {
        SourceLoc::new(match self {
            IrPlace::Inst(i) => i.into_raw().into_u32() * 2,
            IrPlace::Term(b) => b.into_raw().into_u32() * 2 + 1,
        })
    }

    /// The place a source location stands for (`None` for the default
    /// location: code of no instruction).
    pub fn of(loc: SourceLoc) -> Option<IrPlace> {
        if loc.is_default() {
            return None;
        }
        let bits = loc.bits();
        let index = RawIdx::from_u32(bits / 2);
        Some(if bits.is_multiple_of(2) {
            IrPlace::Inst(Idx::from_raw(index))
        } else {
            IrPlace::Term(Idx::from_raw(index))
        })
    }
}

/// Machine code at offsets `start..end` of a function came from `place`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PlaceRange {
    pub start: u32,
    pub end: u32,
    pub place: IrPlace,
}

/// The places of a function's final code, in code order.
pub fn places(code: &cranelift_codegen::CompiledCode) -> Vec<PlaceRange> {
    code.buffer
        .get_srclocs_sorted()
        .iter()
        .filter_map(|s| IrPlace::of(s.loc).map(|place| PlaceRange { start: s.start, end: s.end, place }))
        .collect()
}

/// One compiled function's final machine code: the IR function's name,
/// where the code lives, its bytes and the places of its ranges.
#[derive(Clone, Debug)]
pub struct FunctionCode {
    pub name: Symbol,
    pub address: u64,
    pub bytes: Vec<u8>,
    pub places: Vec<PlaceRange>,
}
