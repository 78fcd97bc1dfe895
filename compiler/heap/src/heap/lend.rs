//! Object handles lent to another thread.
//!
//! The heap is per thread, and a handle ([`Obj`]) pins its cell by a count
//! in the cell's meta word, which only the heap's own thread may change.
//! The JIT optimizes traces on a second core (flowc_trace's
//! `jit::background`), and a trace of an interpreter whose instructions
//! are objects names objects everywhere: its promoted `pc`, its guards'
//! constants, what immutable fields of those hold.
//!
//! So such a job's handles are *lent*: [`Loan::lend`] turns each into a
//! lent handle (bit 0 of its pointer set), which pins nothing, and moves a
//! pin of the object into the [`Loan`], which stays on the heap's thread.
//! While the loan lives the objects stay alive (the collector keeps
//! pinned cells and what they reach), and they do not move (cells never
//! do). A thread that borrows ([`borrow_here`], the JIT's worker) clones
//! and drops lent handles without touching the heap: a clone of a lent
//! handle is lent, a drop does nothing, and reading an immutable field of
//! a lent object ([`Obj::get`]) gives lent handles too. What a borrower
//! reads of an object is what never changes once set — its class, its
//! layout, its number, its immutable fields, the kind of a cell they point
//! at, a number's digits, a boxed list. A field is set once, from unset,
//! and a cell's kind shares its word with the pin count the heap's thread
//! changes: those words a borrower reads as atomic words, which see
//! either value. (The heap's thread writes them as plain words, which
//! x86-64, the machine flowc generates code for, writes whole.)
//!
//! Lent handles come back in the job's result, and the heap's own thread
//! may keep them in its tables; it keeps the loan as long (the JIT: until
//! its code is dropped). A lent handle never reaches anything else: on a
//! thread that does not borrow, a clone of one is an ordinary, pinned
//! handle, and so is what [`Obj::get`] reads of one.
//!
//! A list that holds objects cannot be lent (its handles are inside a
//! shared list): [`Loan::lend`] leaves it as it is and says so. (A
//! program's lists hold constants only; Rust code can make one.)

use std::cell::Cell;
use std::collections::HashSet;

use super::obj::Obj;
use crate::value::Value;

thread_local! {
    static BORROWING: Cell<bool> = const { Cell::new(false) };
}

/// This thread borrows from now on: lent handles it clones stay lent.
pub fn borrow_here() {
    BORROWING.with(|b| b.set(true));
}

/// Whether this thread borrows ([`borrow_here`]).
pub fn borrowing() -> bool {
    BORROWING.with(|b| b.get())
}

/// The pins that keep the objects of lent handles alive, held on the
/// heap's thread (it is not `Send`): one per object, however many handles
/// of it were lent (an interpreter's instruction object stands in most of
/// a trace's resume records).
#[derive(Default)]
pub struct Loan(HashSet<Obj>);

impl Loan {
    /// Makes `v`, if it is an object, a lent handle, and keeps a pin of
    /// the object here. Anything but an object or a list holding one is
    /// left as it is. A list holding objects is too: `false` says that it
    /// cannot be lent.
    pub fn lend(&mut self, v: &mut Value) -> bool {
        match v {
            Value::Object(o) => {
                if !self.0.contains(o) {
                    self.0.insert(o.pinned());
                }
                *o = o.lent();
                true
            }
            other => !other.holds_objects(),
        }
    }

    /// The objects of `other` too.
    pub fn append(&mut self, other: Loan) {
        self.0.extend(other.0);
    }

    /// How many objects the loan keeps.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
