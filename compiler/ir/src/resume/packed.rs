//! A function's resume records packed into one array of words, for code
//! that keeps them long after it was compiled.
//!
//! The JIT keeps every compiled trace's records for the whole run: a
//! guard that fails rebuilds the interpreter's frames from its record,
//! and a bridge starts from it. As [`ResumeData`] they cost a vector per
//! frame and per virtual object and 24 bytes per variable; a BF
//! interpreter's run of public hanoi.b kept 33,000 of them, 10 MB.
//! Packed, a variable costs 4 bytes, and the records of a trace share
//! what repeats: the lists of variable names (a frame of one function
//! lists the same names at every guard) and the constants (the
//! interpreted program, its opcodes); hanoi.b's took 3.3 MB. A record is
//! unpacked only when it is read: once per exit and run for the
//! interpreter's plan, and for an exit hot enough for a bridge.
//!
//! # Layout
//!
//! Record `k`'s words are `words[starts[k]..starts[k + 1]]`:
//!
//! ```text
//! frames  virtuals
//! per frame:   function  call.var  call.label  names  value × len(names)
//! per virtual: class  names  value × len(names)
//! ```
//!
//! A name is its symbol's index plus one, 0 for none. `names` is where a
//! list of names starts in `names`: its length, then its names. A value
//! is tagged in its top two bits: an SSA value's index, a constant's
//! position in `consts`, or a virtual object's number in the record.

use std::sync::Arc;

use la_arena::{Arena, RawIdx};
use rustc_hash::FxHashMap as HashMap;

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
    names: Box<[u32]>,
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
        let size = |r: &ResumeData| {
            let frames = r.frames.iter().map(|f| 4 + f.env.len()).sum::<usize>();
            2 + frames + r.virtuals.iter().map(|o| 2 + o.fields.len()).sum::<usize>()
        };
        let mut words = Vec::with_capacity(records.values().map(size).sum());
        let mut pool = Pool::default();
        for (_, r) in records.iter() {
            starts.push(words.len() as u32);
            words.push(r.frames.len() as u32);
            words.push(r.virtuals.len() as u32);
            for f in &r.frames {
                let (var, label) = f.call.unzip();
                words.extend([name(f.function), name(var), name(label), pool.names(&f.env)]);
                words.extend(f.env.iter().map(|(_, v)| pool.value(v)));
            }
            for o in &r.virtuals {
                words.extend([name(Some(o.class)), pool.names(&o.fields)]);
                words.extend(o.fields.iter().map(|(_, v)| pool.value(v)));
            }
        }
        starts.push(words.len() as u32);
        PackedRecords {
            starts: starts.into(),
            words: words.into(),
            names: pool.names.into(),
            consts: pool.consts.into(),
        }
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
                ResumeFrame { function, env: self.vars(&mut w), call }
            })
            .collect();
        let virtuals = (0..virtuals)
            .map(|_| {
                let class = symbol(w.next()).expect("a class");
                VirtualObject { class, fields: self.vars(&mut w) }
            })
            .collect();
        ResumeData { frames, virtuals }
    }

    /// How many frames and virtual objects record `r` has, read without
    /// unpacking it.
    pub fn shape(&self, r: ResumeId) -> (usize, usize) {
        let mut w = self.record(r);
        (w.next() as usize, w.next() as usize)
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
            let len = self.names(w.next()).len();
            w.skip(len);
        }
        function
    }

    /// The heap bytes the packed records take.
    pub fn heap_bytes(&self) -> usize {
        4 * (self.starts.len() + self.words.len() + self.names.len()) + std::mem::size_of::<Value>() * self.consts.len()
    }

    /// A frame's variables or an object's fields, next in `w`: their
    /// list of names, then their values.
    fn vars(&self, w: &mut Words<'_>) -> Vec<(Symbol, ResumeValue)> {
        let names = self.names(w.next());
        names.iter().map(|&n| (name_at(n), w.value(&self.consts))).collect()
    }

    /// The list of names starting at `at` in `names`.
    fn names(&self, at: u32) -> &[u32] {
        let at = at as usize;
        &self.names[at + 1..at + 1 + self.names[at] as usize]
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

    fn value(&mut self, consts: &[Value]) -> ResumeValue {
        let w = self.next();
        let index = w & INDEX;
        match w >> TAG_SHIFT {
            VALUE => ResumeValue::Operand(Operand::Value(ValueId::from_raw(RawIdx::from(index)))),
            CONST => ResumeValue::Operand(Operand::Const(consts[index as usize].clone())),
            _ => ResumeValue::Virtual(index),
        }
    }
}

fn name(s: Option<Symbol>) -> u32 {
    s.map_or(0, |s| s.index() + 1)
}

fn symbol(w: u32) -> Option<Symbol> {
    w.checked_sub(1).map(Symbol::from_index)
}

fn name_at(w: u32) -> Symbol {
    symbol(w).expect("a name")
}

/// What the records being packed share: lists of names, each kept once,
/// and constants, each kept once where it can be told apart cheaply. A
/// trace's records name the same few constants again and again (the
/// interpreted program, the bracket map, opcodes): public BF hanoi.b's
/// named 220,000, 3.5 MB of pool, before they were shared; and their
/// names were half their words.
#[derive(Default)]
struct Pool {
    names: Vec<u32>,
    lists: HashMap<Vec<u32>, u32>,
    /// The list given last: the next frame mostly lists the same names.
    last: Option<u32>,
    consts: Vec<Value>,
    index: HashMap<Same, u32>,
}

/// What makes two constants the same for the pool: integers and atoms
/// by value, big integers and lists by identity (comparing their
/// contents could cost as much as a list is long). Objects are not
/// shared.
#[derive(PartialEq, Eq, Hash)]
enum Same {
    Int(i64),
    Atom(Symbol),
    Shared(usize),
}

impl Pool {
    /// Where the list of `vars`' names starts in `names`.
    fn names(&mut self, vars: &[(Symbol, ResumeValue)]) -> u32 {
        let same = |at: u32| {
            let at = at as usize;
            self.names[at] as usize == vars.len()
                && self.names[at + 1..].iter().zip(vars).all(|(&n, (v, _))| n == name(Some(*v)))
        };
        if let Some(at) = self.last.filter(|&at| same(at)) {
            return at;
        }
        let list: Vec<u32> = vars.iter().map(|(n, _)| name(Some(*n))).collect();
        let at = match self.lists.get(&list) {
            Some(&at) => at,
            None => {
                let at = self.names.len() as u32;
                self.names.push(list.len() as u32);
                self.names.extend(&list);
                self.lists.insert(list, at);
                at
            }
        };
        self.last = Some(at);
        at
    }

    fn value(&mut self, v: &ResumeValue) -> u32 {
        let (tag, index) = match v {
            ResumeValue::Operand(Operand::Value(id)) => (VALUE, u32::from(id.into_raw())),
            ResumeValue::Operand(Operand::Const(c)) => (CONST, self.constant(c)),
            ResumeValue::Virtual(k) => (VIRTUAL, *k),
        };
        assert!(index <= INDEX, "a resume record's index past 2^30");
        tag << TAG_SHIFT | index
    }

    fn constant(&mut self, c: &Value) -> u32 {
        let same = match c {
            Value::Int(i) => Some(Same::Int(*i)),
            Value::Atom(a) => Some(Same::Atom(*a)),
            Value::Big(b) => Some(Same::Shared(Arc::as_ptr(b) as usize)),
            Value::List(l) => Some(Same::Shared(Arc::as_ptr(l) as usize)),
            Value::Object(_) => None,
        };
        if let Some(&k) = same.as_ref().and_then(|s| self.index.get(s)) {
            return k;
        }
        let k = self.consts.len() as u32;
        self.consts.push(c.clone());
        if let Some(s) = same {
            self.index.insert(s, k);
        }
        k
    }
}
