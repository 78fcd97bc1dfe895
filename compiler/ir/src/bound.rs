//! Which values can never be unbound (flowc-ir crate docs, "Semantics of
//! unbound variables"): reading such a value can never raise
//! `key_not_found`, so reordering or removing the read cannot change which
//! error a program raises.
//!
//! A value is surely bound if it is a parameter of a `function` (callers
//! pass bound values), or the result of a linked instruction other than a
//! phi or `unbound` (every other instruction yields a bound value or
//! fails), or a phi all of whose inputs are constants or surely bound
//! values. Phis are solved optimistically: all start bound and a worklist
//! knocks out those with a possibly-unbound input, so phi cycles fed only by
//! bound values stay bound. Parameters of the main graph and of traces may
//! be unbound; detached values count as possibly unbound. Linear time.

use bitvec::vec::BitVec;

use crate::ix;
use crate::phi_users::PhiUsers;
use crate::{Function, FunctionKind, InstId, InstKind, Operand, ValueDef, ValueId};

/// Whether operand `o` may be unbound, by `bound` ([`surely_bound`] of
/// its function): a value whose bit is not set (constants are bound).
pub fn may_be_unbound(bound: &BitVec, o: &Operand) -> bool {
    o.as_value().is_some_and(|v| !bound.get(ix(v)).is_some_and(|b| *b))
}

/// Bit `ix(v)` is set iff value `v` of `f` is surely bound. Needs only the
/// function: the worklist follows phi-to-phi edges ([`PhiUsers`]), so
/// callers without a def-use table (normalize) do not build one.
pub fn surely_bound(f: &Function) -> BitVec {
    let n = f.values.len();
    let mut bound: BitVec = BitVec::repeat(false, n);
    if let FunctionKind::Function = f.kind {
        for &p in &f.params {
            if ix(p) < n {
                bound.set(ix(p), true);
            }
        }
    }
    // Results of linked instructions; phis start bound (optimistic).
    let mut phis = Vec::new();
    for (_, i) in f.all_insts() {
        let Some(r) = f.insts[i].result.filter(|r| ix(*r) < n) else { continue };
        match f.insts[i].kind {
            InstKind::Phi(_) => {
                phis.push(i);
                bound.set(ix(r), true);
            }
            InstKind::Unbound(_) => {}
            _ => bound.set(ix(r), true),
        }
    }
    let users = PhiUsers::new(f, &phis);
    // Knock out phis with a possibly-unbound input, then the phis they feed.
    let mut work = Vec::new();
    let knock = |phi: InstId, bound: &mut BitVec, work: &mut Vec<ValueId>| {
        if let Some(r) = f.insts[phi].result {
            if bound[ix(r)] {
                bound.set(ix(r), false);
                work.push(r);
            }
        }
    };
    for &phi in &phis {
        let InstKind::Phi(inputs) = &f.insts[phi].kind else { continue };
        let unbound_input = inputs.iter().any(|(_, o)| may_be_unbound(&bound, o));
        if unbound_input {
            knock(phi, &mut bound, &mut work);
        }
    }
    while let Some(v) = work.pop() {
        for &u in users.of(v) {
            knock(u, &mut bound, &mut work);
        }
    }
    bound
}

/// Answers "is `v` surely bound?" one value at a time, for callers that
/// ask about some values only (normalize's operand ordering, dce's roots).
/// A value that is not a phi is decided by its definition; for a phi, the
/// question searches backwards through phi inputs for a value that may be
/// unbound, so it costs the phi web behind `v`, not the function. The
/// answers are those of [`surely_bound`]: a search that meets no such value
/// has visited every value its phis can take, all of them bound (and
/// remembered as such). Once the searches together have visited more phis
/// than a budget (an eighth of the function's instructions, plus 64), the
/// query runs
/// [`surely_bound`] once and reads it from then on, so many questions still
/// cost linear time.
pub struct BoundQuery {
    full: Option<BitVec>,
    budget: usize,
    /// Per value (raw index; made, and grown, as questions come): what is
    /// known.
    state: Vec<State>,
    /// The values met by the current search.
    seen: Vec<ValueId>,
    stack: Vec<ValueId>,
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum State {
    Unknown,
    Bound,
    MaybeUnbound,
    /// Met by the current search.
    Seen,
}

impl BoundQuery {
    pub fn new(f: &Function) -> BoundQuery {
        BoundQuery::with_budget(f.insts.len() / 8 + 64)
    }

    /// A query that answers `budget` questions by search before it falls
    /// back to the whole analysis.
    pub fn with_budget(budget: usize) -> BoundQuery {
        BoundQuery { full: None, budget, state: Vec::new(), seen: Vec::new(), stack: Vec::new() }
    }

    /// Whether the budget ran out and the whole analysis answers now.
    pub fn fell_back(&self) -> bool {
        self.full.is_some()
    }

    pub fn is_bound(&mut self, f: &Function, v: ValueId) -> bool {
        match local(f, v) {
            Local::Bound => return true,
            Local::MaybeUnbound => return false,
            Local::Phi(_) => {}
        }
        if let Some(full) = &self.full {
            return full.get(ix(v)).is_some_and(|b| *b);
        }
        // Values may have been added since the last question.
        let n = f.values.len();
        if self.state.len() < n {
            self.state.resize(n, State::Unknown);
        }
        match self.state[ix(v)] {
            State::Bound => return true,
            State::MaybeUnbound => return false,
            _ => {}
        }
        self.seen.clear();
        self.stack.clear();
        self.visit(v);
        while let Some(x) = self.stack.pop() {
            let inputs = match local(f, x) {
                Local::Bound => continue,
                Local::MaybeUnbound => return self.maybe_unbound(v),
                Local::Phi(inputs) => inputs,
            };
            if self.budget == 0 {
                let full = surely_bound(f);
                let b = full.get(ix(v)).is_some_and(|b| *b);
                self.full = Some(full);
                return b;
            }
            self.budget -= 1;
            for (_, o) in inputs {
                let Operand::Value(u) = o else { continue };
                match self.state.get(ix(*u)) {
                    Some(State::Unknown) => self.visit(*u),
                    Some(State::Bound | State::Seen) => {}
                    // Known to be maybe unbound, or not a value of `f`.
                    Some(State::MaybeUnbound) | None => return self.maybe_unbound(v),
                }
            }
        }
        // Everything the search met is bound.
        for &y in &self.seen {
            self.state[ix(y)] = State::Bound;
        }
        true
    }

    /// Ends a search from `v` that met a value that may be unbound: `v`
    /// may be too; what else the search met is left unknown.
    fn maybe_unbound(&mut self, v: ValueId) -> bool {
        for &y in &self.seen {
            self.state[ix(y)] = State::Unknown;
        }
        self.state[ix(v)] = State::MaybeUnbound;
        false
    }

    fn visit(&mut self, v: ValueId) {
        self.state[ix(v)] = State::Seen;
        self.seen.push(v);
        self.stack.push(v);
    }
}

/// Whether `o` is bound by its definition alone: a constant, a parameter of
/// a `function`, or the result of an instruction other than a phi or
/// `unbound` (phis need [`surely_bound`] or a [`BoundQuery`]).
pub fn bound_by_definition(f: &Function, o: &Operand) -> bool {
    match o {
        Operand::Const(_) => true,
        Operand::Value(v) => matches!(local(f, *v), Local::Bound),
    }
}

/// What a value's definition alone says (the rules of [`surely_bound`]).
enum Local<'f> {
    Bound,
    MaybeUnbound,
    /// A phi: bound if its inputs are.
    Phi(&'f crate::PhiInputs),
}

fn local(f: &Function, v: ValueId) -> Local<'_> {
    if ix(v) >= f.values.len() {
        return Local::MaybeUnbound;
    }
    match f.values[v].def {
        ValueDef::Param(_) if f.kind == FunctionKind::Function => Local::Bound,
        ValueDef::Param(_) | ValueDef::Detached => Local::MaybeUnbound,
        ValueDef::Inst(i) => match &f.insts[i].kind {
            InstKind::Phi(inputs) => Local::Phi(inputs),
            InstKind::Unbound(_) => Local::MaybeUnbound,
            _ => Local::Bound,
        },
    }
}
