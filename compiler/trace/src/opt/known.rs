//! What the optimizer knew of the values an exit stores, for the bridge
//! that starts there.
//!
//! A bridge is a trace of its own, optimized from what it is told of its
//! parameters: before this, only which of them its exit's code had tested
//! to be objects ([`flowc_codegen::TraceExit::objects`]). So a bridge of an
//! interpreter's dispatch loop tested the class of the tape's cell again,
//! read `pc` as a value of any kind, and added to it with a tag test and
//! an overflow path, though the loop it left had proved all of that (as
//! PyPy's bridges start knowing the classes their guard knew:
//! `bridgeopt.py`).
//!
//! Now the walk notes, where each guard it keeps takes its record
//! (`Opt::guard_record`), what it knows there of each value of the record
//! (before it learns what the guard itself proves, which does not hold
//! where the guard fails): its kinds, its
//! class, its integer range, where those say more than "a bound value"
//! ([`Known`]). Notes are kept by record, and within a record by the
//! place of the value in its frames ([`ExitFacts`]): compaction renumbers
//! records and values ([`compact`]) but keeps each record's frames as
//! they are, and a value that stands in several places is found at the
//! first. A record a guard right after another reuses keeps the first
//! guard's notes: along a trace, knowledge only grows, so what held there
//! holds at the later guard. Guards of equal records share one
//! (`Opt::share_records`) only where their notes are equal too.
//!
//! The JIT keeps the notes with each piece of code and gives a bridge the
//! facts of its exit's values ([`facts_of`]).

use flowc_ir::{Function, Operand, ResumeData, ResumeId, ResumeValue, ValueId};
use flowc_lang::ops::range::Interval;
use flowc_lang::Symbol;
use flowc_passes::lattice::{Info, Kinds};

/// What was known of one value: kinds (never unbound), a class for
/// objects, a range for integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    kinds: Kinds,
    class: Option<Symbol>,
    range: Interval,
}

impl Known {
    /// What `info` says beyond "a bound value", if anything. (Constants
    /// stand as constants in records; the allocation that made an object
    /// is the trace's own.)
    pub fn of(info: &Info) -> Option<Known> {
        let kinds = info.kinds.without(Kinds::UNBOUND);
        if info.may_be_unbound() || kinds.is_empty() {
            return None;
        }
        let class = info.class.filter(|_| kinds.has(Kinds::OBJECT));
        let range = if kinds.has(Kinds::INT) { info.range } else { Interval::EMPTY };
        let says = kinds != Kinds::VALUE || class.is_some() || (kinds.has(Kinds::INT) && range != Interval::FULL);
        says.then_some(Known { kinds, class, range })
    }

    /// As the optimizer's fact of a parameter.
    pub fn info(&self) -> Info {
        let mut info = Info::of_kinds(self.kinds);
        if self.kinds.has(Kinds::INT) {
            info = info.restrict_range(self.range);
        }
        if self.kinds.has(Kinds::OBJECT) {
            info.class = self.class;
        }
        info
    }
}

/// A note: the place of a value among its record's frames' entries, and
/// what was known of it.
pub type Note = (u32, Known);

/// The notes of a function's records, in two boxed slices whatever their
/// number: the records noted, sorted, each with where its notes start
/// (they end where the next record's start); and the notes. (A box per
/// record cost some 30 bytes more for each of a run's tens of thousands
/// of exits.)
#[derive(Clone, Debug, Default)]
pub struct ExitFacts {
    records: Box<[(ResumeId, u32)]>,
    notes: Box<[Note]>,
}

impl ExitFacts {
    /// Of the records `records` (any order; no record twice) with their
    /// notes.
    fn of(mut records: Vec<(ResumeId, &[Note])>) -> ExitFacts {
        records.sort_unstable_by_key(|(r, _)| u32::from(r.into_raw()));
        let mut notes = Vec::with_capacity(records.iter().map(|(_, n)| n.len()).sum());
        let records = records
            .into_iter()
            .map(|(r, n)| {
                let start = notes.len() as u32;
                notes.extend_from_slice(n);
                (r, start)
            })
            .collect();
        ExitFacts { records, notes: notes.into_boxed_slice() }
    }

    /// The notes of record `r`, if it was noted.
    pub fn of_record(&self, r: ResumeId) -> Option<&[Note]> {
        let k = self.records.binary_search_by_key(&u32::from(r.into_raw()), |(x, _)| u32::from(x.into_raw())).ok()?;
        Some(self.notes_at(k))
    }

    /// The notes of the `k`-th record.
    fn notes_at(&self, k: usize) -> &[Note] {
        let start = self.records[k].1 as usize;
        let end = self.records.get(k + 1).map_or(self.notes.len(), |&(_, s)| s as usize);
        &self.notes[start..end]
    }

    /// The records noted.
    fn records(&self) -> impl Iterator<Item = (ResumeId, &[Note])> {
        (0..self.records.len()).map(|k| (self.records[k].0, self.notes_at(k)))
    }
}

/// Notes taken during a walk, record by record, in one buffer: a walk
/// notes at every guard it keeps (tens of thousands in a long run), so no
/// allocation or lookup of its own per guard.
#[derive(Default)]
pub struct Notebook {
    /// By record's index: its place in `records`, if noted.
    noted: Vec<Option<u32>>,
    /// Each noted record, and where its notes start in `notes`.
    records: Vec<(ResumeId, u32)>,
    notes: Vec<Note>,
}

impl Notebook {
    /// Notes `record` (record `r`), what is known of each value by
    /// `known`, unless `r` was noted before. A value that stands at
    /// several places is noted at each: lookups find the first.
    pub fn note(&mut self, r: ResumeId, record: &ResumeData, mut known: impl FnMut(ValueId) -> Option<Known>) {
        let k = u32::from(r.into_raw()) as usize;
        if self.noted.len() <= k {
            self.noted.resize(k + 1, None);
        }
        if self.noted[k].is_some() {
            return;
        }
        self.noted[k] = Some(self.records.len() as u32);
        self.records.push((r, self.notes.len() as u32));
        for (place, (_, v)) in record.frames.iter().flat_map(|f| f.env.iter()).enumerate() {
            let ResumeValue::Operand(Operand::Value(v)) = v else { continue };
            if let Some(k) = known(*v) {
                self.notes.push((place as u32, k));
            }
        }
    }

    /// The notes of record `r`, if it was noted.
    pub fn notes_of(&self, r: ResumeId) -> Option<&[Note]> {
        let k = (*self.noted.get(u32::from(r.into_raw()) as usize)?)? as usize;
        let start = self.records[k].1 as usize;
        let end = self.records.get(k + 1).map_or(self.notes.len(), |&(_, s)| s as usize);
        Some(&self.notes[start..end])
    }

    /// The notes, by record.
    pub fn facts(&self) -> ExitFacts {
        ExitFacts::of(self.records.iter().map(|&(r, _)| (r, self.notes_of(r).unwrap_or_default())).collect())
    }
}

/// What the notes `facts` of `record` say of `v`, if anything: the note
/// of the first place it stands at.
pub fn facts_of(record: &ResumeData, facts: &[Note], v: ValueId) -> Option<Info> {
    let wanted = ResumeValue::Operand(Operand::Value(v));
    let place = record.frames.iter().flat_map(|f| f.env.iter()).position(|(_, x)| *x == wanted)? as u32;
    facts.iter().find(|(p, _)| *p == place).map(|(_, k)| k.info())
}

/// `f` compacted ([`flowc_ir::compact::compact_owned`]), the records
/// `restarts` names and the notes `facts` renumbered with it (those of
/// records it no longer has dropped).
pub fn compact(f: Function, restarts: &mut Vec<ResumeId>, facts: ExitFacts) -> (Function, ExitFacts) {
    let used: rustc_hash::FxHashSet<ResumeId> = f.used_resumes().into_iter().collect();
    restarts.retain(|r| used.contains(r));
    let (ids, notes): (Vec<ResumeId>, Vec<&[Note]>) = facts.records().filter(|(r, _)| used.contains(r)).unzip();
    let split = restarts.len();
    let mut all = std::mem::take(restarts);
    all.extend(ids);
    let f = flowc_ir::compact::compact_owned(f, &mut all);
    debug_assert_eq!(all.len(), split + notes.len(), "every record named is kept");
    let facts = ExitFacts::of(all.split_off(split).into_iter().zip(notes).collect());
    *restarts = all;
    (f, facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Notes taken on a trace stay with their record and their value once
    /// compaction renumbers both: a record no guard names and an
    /// instruction no longer linked go, and what was known of the value
    /// at the exit is found under its new number.
    #[test]
    fn notes_follow_their_record_and_value_through_compaction() {
        let text = "trace t(v0:a, v1:b) {\nb0:\n    v2:x = add v0, 1\n    v3:c = add v0, 2\n    \
                    guard_true v1, r1 else t\n    exit r1 to t\nresume r0 {\n    frame [a = v0]\n}\n\
                    resume r1 {\n    frame [a = v3, b = v1, c = v3]\n}\n}\n";
        let m = flowc_ir::parse::module("known", text).unwrap();
        let mut f = m.functions[0].clone();
        let ids: Vec<ResumeId> = f.resumes.iter().map(|(r, _)| r).collect();
        let (r1, c) = (ids[1], f.params.len() + 1);
        let c: ValueId = f.values.iter().map(|(v, _)| v).nth(c).unwrap();
        let small = Info::int(Interval::new(0, 9));
        let mut book = Notebook::default();
        book.note(r1, &f.resumes[r1], |v| if v == c { Known::of(&small) } else { None });
        // Noted once: a second guard leaving by the record knows more.
        book.note(r1, &f.resumes[r1], |_| Known::of(&small));
        let facts = book.facts();
        let noted: Vec<(ResumeId, &[Note])> = facts.records().collect();
        assert_eq!(noted.len(), 1);
        // `c` stands twice in the record: noted at both places.
        assert_eq!(noted[0].1.len(), 2);
        // The `add` of `x` is no longer linked: compaction drops it.
        let entry = f.entry;
        let x = f.blocks[entry].insts.remove(0);
        assert!(f.insts[x].result.is_some());
        let (g, facts) = compact(f, &mut Vec::new(), facts);
        assert_eq!(g.resumes.len(), 1, "the record no guard names is gone");
        let (r, notes) = facts.records().next().unwrap();
        let record = &g.resumes[r];
        let ResumeValue::Operand(Operand::Value(c)) = record.frames[0].env[0].1 else { panic!("c is a value") };
        assert_ne!(u32::from(c.into_raw()), 3, "renumbered");
        assert_eq!(facts_of(record, notes, c), Some(small));
        let ResumeValue::Operand(Operand::Value(b)) = record.frames[0].env[1].1 else { panic!("b is a value") };
        assert_eq!(facts_of(record, notes, b), None, "nothing noted of b");
        assert_eq!(facts.of_record(r), Some(notes));
        assert_eq!(facts.of_record(r1), None, "r1 was renumbered to r0");
    }

    /// A note says something beyond "a bound value", and gives back what
    /// it says.
    #[test]
    fn a_note_keeps_kinds_class_and_range() {
        assert_eq!(Known::of(&Info::value()), None);
        assert_eq!(Known::of(&Info::any()), None);
        let int = Info::of_kinds(Kinds::INT);
        assert_eq!(Known::of(&int).map(|k| k.info()), Some(int));
        let cell = Info::object(Symbol::intern("cell"), None);
        assert_eq!(Known::of(&cell).map(|k| k.info()), Some(cell));
        let byte = Info::int(Interval::new(0, 255));
        assert_eq!(Known::of(&byte).map(|k| k.info()), Some(byte));
    }
}
