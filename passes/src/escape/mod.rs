//! Pass `escape`: which allocations of each function never escape.
//!
//! Reads: the IR only (loop information is not needed). Writes:
//! `cx.facts(i).escape` for function `i`; the IR is not changed.
//! [`Escape::analyze`] is also called by `unbox` between its rounds.
//!
//! Allocations are grouped into *webs*: a phi whose inputs are all
//! allocations (or such phis) of one class joins them into one abstract
//! object, found by an optimistic fixpoint over the phis and a union-find.
//! A web escapes if one of its values is printed, returned, passed to a
//! call, used by an operation, by `check_bound`, as a branch condition, by
//! a guard or in resume data; merged at a phi that is not in a web (a
//! constant, another class, anything not an allocation); stored by `set`
//! into an object that is not a web value, or into a web that escapes; or
//! read back by `get` from a field of a web when that get's result escapes
//! in one of these ways. Allowed: being the object of `get`/`set`, the
//! operand of `if_class`, an input of a phi of its own web, being stored
//! into a non-escaping web (then the web is *nested*: unbox takes it once
//! the outer web is gone). Field contents are tracked by a points-to
//! fixpoint (which webs each field of each web may hold), so escape through
//! nested objects is found at any depth.
//!
//! Guarantees: a web reported as not escaping is only ever used in the
//! allowed ways above; output is in layout order (deterministic).

use std::fmt;

use flowc_ir::{Function, InstId, Module, ValueId};
use flowc_lang::syntax::readable_print::name;
use flowc_lang::Symbol;

use crate::edit::ix;
use crate::Context;

/// The index of a web in its function's [`Escape`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WebId(pub u32);

/// Why a web escapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    Printed,
    Returned,
    /// Passed to a call of the function.
    Passed(Symbol),
    /// An operand of an operation (named).
    UsedBy(Symbol),
    CheckBound,
    Branched,
    Guarded,
    InResumeData,
    /// An input of this phi, which is not in a web.
    Merged(ValueId),
    /// Stored into something not known to be a web value.
    StoredUnknown,
    /// Stored into this web value's web, which escapes.
    StoredInto(ValueId),
    /// Read back from a field by this `get`, whose result escapes.
    ReadBack(ValueId, Box<Reason>),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = flowc_ir::print::value_ref;
        match self {
            Reason::Printed => write!(f, "printed"),
            Reason::Returned => write!(f, "returned"),
            Reason::Passed(func) => write!(f, "passed to {func}"),
            Reason::UsedBy(op) => write!(f, "used by {op}"),
            Reason::CheckBound => write!(f, "used by check_bound"),
            Reason::Branched => write!(f, "branched on"),
            Reason::Guarded => write!(f, "guarded"),
            Reason::InResumeData => write!(f, "in resume data"),
            Reason::Merged(phi) => write!(f, "merged at {}", v(*phi)),
            Reason::StoredUnknown => write!(f, "stored into an unknown object"),
            Reason::StoredInto(w) => write!(f, "stored into {}, which escapes", v(*w)),
            Reason::ReadBack(get, r) => write!(f, "read back as {}, {r}", v(*get)),
        }
    }
}

/// Allocations of one class merged by phis: one abstract object.
#[derive(Clone, Debug)]
pub struct Web {
    pub class: Symbol,
    /// The `new` instructions, in layout order.
    pub news: Vec<InstId>,
    /// The phis joining them, in layout order.
    pub phis: Vec<InstId>,
    /// The results of `news` then of `phis`.
    pub values: Vec<ValueId>,
    /// `None` if the web does not escape.
    pub escape: Option<Reason>,
    /// A value of the web is stored into another (non-escaping) web.
    pub nested: bool,
}

/// The webs of one function and which of them escape.
#[derive(Clone, Debug, Default)]
pub struct Escape {
    webs: Vec<Web>,
    /// Web of each value, by raw value index ([`NO_WEB`] for none,
    /// [`GET_RESULT`] for the result of a `get`, which the analysis also
    /// tracks; may be shorter than the function's values).
    web_of: Vec<u32>,
}

/// No web, in [`Escape`]'s table.
const NO_WEB: u32 = u32::MAX;
/// Not a web but the result of a `get`, in [`Escape`]'s table.
const GET_RESULT: u32 = u32::MAX - 1;

/// The web in `table` of value `v`.
fn web_in(table: &[u32], v: ValueId) -> Option<u32> {
    table.get(ix(v)).copied().filter(|&w| w != NO_WEB && w != GET_RESULT)
}

mod solve;
mod webs;

impl Escape {
    /// Analyses `f`.
    pub fn analyze(f: &Function) -> Escape {
        let (webs, web_of) = webs::find(f);
        let mut e = Escape { webs, web_of };
        // Without allocations nothing escapes.
        if !e.webs.is_empty() {
            e.solve(f);
        }
        e
    }

    /// All webs, escaping or not, in layout order of their first value.
    pub fn webs(&self) -> &[Web] {
        &self.webs
    }

    pub fn web(&self, w: WebId) -> &Web {
        &self.webs[w.0 as usize]
    }

    /// The web of a value (a `new` or a web phi).
    pub fn web_of(&self, v: ValueId) -> Option<WebId> {
        web_in(&self.web_of, v).map(WebId)
    }

    /// Whether `v` is a value of a web that escapes (false for values
    /// that are not allocations).
    pub fn escapes(&self, v: ValueId) -> bool {
        self.web_of(v).is_some_and(|w| self.web(w).escape.is_some())
    }

    /// The webs that do not escape.
    pub fn non_escaping(&self) -> impl Iterator<Item = WebId> + '_ {
        (0..self.webs.len() as u32).map(WebId).filter(|&w| self.web(w).escape.is_none())
    }
}

pub fn run(module: &mut Module, cx: &mut Context) {
    for (i, f) in module.functions.iter().enumerate() {
        cx.facts(i).escape = Some(Escape::analyze(f));
    }
}

/// One line per function: `; escape of main: v3 (point) does not escape;
/// v9 (point) escapes: printed`.
pub fn annotate(module: &Module, cx: &Context) -> String {
    let mut out = String::new();
    for (i, f) in module.functions.iter().enumerate() {
        let Some(e) = cx.functions.get(i).and_then(|x| x.escape.as_ref()) else { continue };
        out.push_str("; escape of ");
        name(&mut out, f.name);
        out.push(':');
        if e.webs.is_empty() {
            out.push_str(" no allocations\n");
            continue;
        }
        for (k, web) in e.webs.iter().enumerate() {
            out.push_str(if k == 0 { " " } else { "; " });
            out.push_str(&describe(f, web));
            match &web.escape {
                None if web.nested => out.push_str(" does not escape (nested)"),
                None => out.push_str(" does not escape"),
                Some(why) => out.push_str(&format!(" escapes: {why}")),
            }
        }
        out.push('\n');
    }
    out
}

/// `v3 v5 (point, phi v7)`.
fn describe(f: &Function, web: &Web) -> String {
    let v = |i: &InstId| f.insts[*i].result.map_or(String::from("?"), flowc_ir::print::value_ref);
    let news: Vec<String> = web.news.iter().map(v).collect();
    let mut s = news.join(" ");
    s.push_str(" (");
    name(&mut s, web.class);
    if !web.phis.is_empty() {
        let phis: Vec<String> = web.phis.iter().map(v).collect();
        s.push_str(", phi ");
        s.push_str(&phis.join(" "));
    }
    s.push(')');
    s
}
