//! A function's resume records packed into one array of words, for code
//! that keeps them long after it was compiled.
//!
//! The JIT keeps every compiled trace's records for the whole run: a
//! guard that fails rebuilds the interpreter's frames from its record,
//! and a bridge starts from it. As [`ResumeData`] they cost a vector per
//! frame and per virtual object and 24 bytes per variable; a BF
//! interpreter's run of public hanoi.b kept 33,000 of them, 10 MB. Packed
//! they cost 8 bytes per variable and no allocation of their own, and a
//! record is unpacked only when it is read — once per exit and run for
//! the interpreter's plan, once per bridge recorded.
//!
//! # Layout
//!
//! Record `k`'s words are `words[starts[k]..starts[k + 1]]`:
//!
//! ```text
//! frames  virtuals
//! per frame:   function  call.var  call.label  len  (name value) × len
//! per virtual: class  len  (field value) × len
//! ```
//!
//! A name is its symbol's index plus one, 0 for none. A value is tagged
//! in its top two bits: an SSA value's index, a constant's position in
//! `consts`, or a virtual object's number in the record.

use la_arena::{Arena, RawIdx};

use flowc_lang::{Symbol, Value};

use super::{ResumeData, ResumeFrame, ResumeId, ResumeValue, VirtualObject};
use crate::inst::Operand;
use crate::ValueId;

const TAG_SHIFT: u32 = 30;
const INDEX: u32 = (1 << TAG_SHIFT) - 1;
const VALUE: u32 = 0;
const CONST: u32 = 1;
const VIRTUAL: u32 = 2;

/// Resume records packed ([module docs](self)), read back by
/// [`PackedRecords::get`] in the arena's order.
#[derive(Clone, Debug, Default)]
pub struct PackedRecords {
    starts: Box<[u32]>,
    words: Box<[u32]>,
    consts: Box<[Value]>,
}

impl PackedRecords {
    /// Packs every record of `records`, in order.
    ///
    /// # Panics
    ///
    /// If an index does not fit in 30 bits (a value, constant or virtual
    /// object past the billionth): no trace comes near.
    pub fn pack(records: &Arena<ResumeData>) -> PackedRecords {
        let mut starts = Vec::with_capacity(records.len() + 1);
        let mut words = Vec::new();
        let mut consts = Vec::new();
        for (_, r) in records.iter() {
            starts.push(words.len() as u32);
            words.push(r.frames.len() as u32);
            words.push(r.virtuals.len() as u32);
            for f in &r.frames {
                let (var, label) = f.call.unzip();
                words.extend([name(f.function), name(var), name(label), f.env.len() as u32]);
                for (n, v) in &f.env {
                    words.extend([name(Some(*n)), value(v, &mut consts)]);
                }
            }
            for o in &r.virtuals {
                words.extend([name(Some(o.class)), o.fields.len() as u32]);
                for (n, v) in &o.fields {
                    words.extend([name(Some(*n)), value(v, &mut consts)]);
                }
            }
        }
        starts.push(words.len() as u32);
        PackedRecords { starts: starts.into(), words: words.into(), consts: consts.into() }
    }

    /// How many records there are.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Record `r`, unpacked.
    pub fn get(&self, r: ResumeId) -> ResumeData {
        let mut w = self.record(r);
        let (frames, virtuals) = (w.next(), w.next());
        let frames = (0..frames)
            .map(|_| {
                let function = symbol(w.next());
                let call = symbol(w.next()).zip(symbol(w.next()));
                let len = w.next();
                let env = (0..len).map(|_| w.pair(&self.consts)).collect();
                ResumeFrame { function, env, call }
            })
            .collect();
        let virtuals = (0..virtuals)
            .map(|_| {
                let class = symbol(w.next()).expect("a class");
                let len = w.next();
                VirtualObject { class, fields: (0..len).map(|_| w.pair(&self.consts)).collect() }
            })
            .collect();
        ResumeData { frames, virtuals }
    }

    /// The function record `r`'s innermost frame runs (`None` for the
    /// main graph; the outer `None` for a record of no frame), read
    /// without unpacking the record.
    pub fn innermost_function(&self, r: ResumeId) -> Option<Option<Symbol>> {
        let mut w = self.record(r);
        let frames = w.next();
        let _virtuals = w.next();
        let mut function = None;
        for _ in 0..frames {
            function = Some(symbol(w.next()));
            w.skip(2);
            let len = w.next();
            w.skip(2 * len as usize);
        }
        function
    }

    /// The heap bytes the packed records take.
    pub fn heap_bytes(&self) -> usize {
        4 * (self.starts.len() + self.words.len()) + std::mem::size_of::<Value>() * self.consts.len()
    }

    fn record(&self, r: ResumeId) -> Words<'_> {
        let k = u32::from(r.into_raw()) as usize;
        let (from, to) = (self.starts[k] as usize, self.starts[k + 1] as usize);
        Words { words: &self.words[from..to], at: 0 }
    }
}

/// A record's words, read in order.
struct Words<'a> {
    words: &'a [u32],
    at: usize,
}

impl Words<'_> {
    fn next(&mut self) -> u32 {
        self.at += 1;
        self.words[self.at - 1]
    }

    fn skip(&mut self, n: usize) {
        self.at += n;
    }

    fn pair(&mut self, consts: &[Value]) -> (Symbol, ResumeValue) {
        let name = symbol(self.next()).expect("a name");
        let w = self.next();
        let index = w & INDEX;
        let value = match w >> TAG_SHIFT {
            VALUE => ResumeValue::Operand(Operand::Value(ValueId::from_raw(RawIdx::from(index)))),
            CONST => ResumeValue::Operand(Operand::Const(consts[index as usize].clone())),
            _ => ResumeValue::Virtual(index),
        };
        (name, value)
    }
}

fn name(s: Option<Symbol>) -> u32 {
    s.map_or(0, |s| s.index() + 1)
}

fn symbol(w: u32) -> Option<Symbol> {
    w.checked_sub(1).map(Symbol::from_index)
}

fn value(v: &ResumeValue, consts: &mut Vec<Value>) -> u32 {
    let (tag, index) = match v {
        ResumeValue::Operand(Operand::Value(id)) => (VALUE, u32::from(id.into_raw())),
        ResumeValue::Operand(Operand::Const(c)) => {
            consts.push(c.clone());
            (CONST, (consts.len() - 1) as u32)
        }
        ResumeValue::Virtual(k) => (VIRTUAL, *k),
    };
    assert!(index <= INDEX, "a resume record's index past 2^30");
    tag << TAG_SHIFT | index
}
