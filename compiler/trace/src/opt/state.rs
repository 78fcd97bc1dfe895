//! Objects carried around the loop while they stay virtual (PyPy's
//! virtual state, LuaJIT's allocation sinking across the back edge).
//!
//! When the walk reaches the loop (after the peeled first iteration), a
//! phi whose entry value is a virtual object does not become a real
//! value: the object stays virtual at the loop's head, as a *node* — its
//! class and, per field, a new phi (the field's value) or another node
//! (a field holding a virtual object). Two phis whose entry values are
//! the same object share its node, so identity is kept.
//!
//! At the end of the loop, the back edge must bring the same shape: for
//! each node, a virtual object of the same class with the same fields,
//! the objects of different nodes different, none of them also the value
//! of a real phi or of a field phi. Then the fields' values become the
//! back-edge inputs of the field phis and no object is allocated on the
//! way round. If the shapes differ, [`Opt::close_loop`] names the
//! variables at fault and the optimizer starts over with those variables
//! carried as real objects (materialized before the loop and on the back
//! edge) — each retry makes at least one more variable real, so this ends.

use rustc_hash::FxHashMap as HashMap;

use flowc_ir::{BlockId, InstId, InstKind, Operand, PhiInputs, ValueDef, ValueId};
use flowc_lang::Symbol;
use flowc_passes::edit::ix;
use flowc_passes::lattice::Info;

use super::ranges::phi_ranges;
use super::virtuals::Virtual;
use super::walk::Opt;

/// How the loop's head carries its variables ([`Opt::enter_loop`]).
pub(super) struct Header {
    body: BlockId,
    pred: BlockId,
    carried: Vec<Carried>,
    nodes: Vec<Node>,
    /// Fields of objects the loop does not change, carried in phis.
    pub fields: Vec<CarriedField>,
}

/// A field of an object the loop does not change, carried round the loop
/// in a phi (see the module docs).
pub(super) struct CarriedField {
    pub obj: ValueId,
    pub field: Symbol,
    phi: InstId,
    pub value: ValueId,
}

/// Why the loop could not be closed, and what to carry otherwise on the
/// next try.
pub(super) enum Retry {
    /// Variables to carry as real objects.
    Real(Vec<Symbol>),
    /// Fields whose value the back edge does not know.
    Fields(Vec<(ValueId, Symbol)>),
}

struct Carried {
    phi: InstId,
    value: ValueId,
    /// The phi's back-edge input as the body computes it.
    back: Operand,
    how: How,
}

enum How {
    Real,
    Virtual(usize),
}

/// A virtual object at the loop's head.
struct Node {
    /// The value standing for it in the loop (a removed phi's, or a
    /// placeholder for an object only fields refer to).
    key: ValueId,
    class: Symbol,
    fields: Vec<(Symbol, Field)>,
    /// The variable whose phi reached it first (made real if the shapes
    /// do not match).
    owner: Symbol,
}

enum Field {
    Phi(InstId),
    Node(usize),
}

/// The end-of-loop objects matched to nodes so far.
#[derive(Default)]
struct Matching {
    of_node: HashMap<usize, ValueId>,
    node_of: HashMap<ValueId, usize>,
    /// Field phis and the values they get at the end of the loop, with
    /// the owner of their node.
    fields: Vec<(InstId, Operand, Symbol)>,
}

fn input(inputs: &PhiInputs, from: BlockId) -> Operand {
    inputs.iter().find(|(b, _)| *b == from).map(|(_, o)| o.clone()).expect("an input per predecessor")
}

impl Opt<'_> {
    /// Enters loop block `body` from `pred`, whose instructions the walk
    /// has just produced (not yet installed). Objects the loop refers to
    /// directly that are still virtual are materialized at the end of
    /// `pred` (the loop would change them on every round); each phi whose
    /// entry value is virtual becomes a node unless its variable is in
    /// `real`; the other phis get the facts [`phi_ranges`] finds.
    pub fn enter_loop(
        &mut self,
        body: BlockId,
        pred: BlockId,
        real: &[Symbol],
        dropped: &[(ValueId, Symbol)],
    ) -> Header {
        self.materialize_outside(body);
        let mut h = Header { body, pred, carried: Vec::new(), nodes: Vec::new(), fields: Vec::new() };
        let mut nodes_of: HashMap<ValueId, usize> = HashMap::default();
        let mut removed = Vec::new();
        let phis = self.f.blocks[body].phis.clone();
        for p in phis {
            let value = self.f.insts[p].result.expect("phis have results");
            let InstKind::Phi(inputs) = self.f.insts[p].kind.clone() else { continue };
            let (entry, back) = (input(&inputs, pred), input(&inputs, body));
            let name = self.f.values[value].name.unwrap_or_else(|| Symbol::intern("v"));
            let entry = self.resolve(&entry);
            if back == Operand::Value(value) && self.virtual_of(&entry).is_none() {
                // Passed on unchanged (an object the loop assumes comes
                // back): the loop reads the value it is entered with, so
                // what is known of that, fields included, holds in it.
                self.subst[ix(value)] = Some(entry);
                removed.push(p);
                continue;
            }
            match self.virtual_of(&entry) {
                Some(object) if !real.contains(&name) => {
                    let n = self.node(&mut h, &mut nodes_of, object, Some(value), name);
                    if h.nodes[n].key != value {
                        // Another variable holds the same object.
                        self.subst[ix(value)] = Some(Operand::Value(h.nodes[n].key));
                    }
                    removed.push(p);
                    h.carried.push(Carried { phi: p, value, back, how: How::Virtual(n) });
                }
                _ => {
                    let entry = self.real(&entry);
                    self.set_input(p, pred, entry);
                    h.carried.push(Carried { phi: p, value, back, how: How::Real });
                }
            }
        }
        self.f.blocks[body].phis.retain(|p| !removed.contains(p));
        for p in removed {
            if let Some(v) = self.f.insts[p].result {
                self.f.values[v].def = ValueDef::Detached;
            }
        }
        let entries: Vec<(ValueId, Info)> = h
            .carried
            .iter()
            .filter(|c| matches!(c.how, How::Real))
            .map(|c| {
                let InstKind::Phi(inputs) = &self.f.insts[c.phi].kind else { unreachable!("phis") };
                (c.value, self.info_of(&input(inputs, pred)))
            })
            .collect();
        for (v, info) in phi_ranges(self.f, body, &self.info, &entries, self.fields) {
            if let Some(c) = &info.constant {
                self.subst[ix(v)] = Some(Operand::Const(c.clone()));
            }
            self.info[ix(v)] = info;
        }
        self.carry_fields(&mut h, dropped);
        h
    }

    /// Gives loop `h.body` a phi for each field the heap cache knows at the
    /// end of the block before it, of an object the loop does not change,
    /// when the loop calls nothing and every `set` of that field in it is
    /// of that object (as far as can be told before the walk: the
    /// object's phi passed on unchanged), but those in `dropped`: the
    /// field's value on entry, and on the back edge its value at the end
    /// of an iteration ([`Opt::close_loop`]).
    fn carry_fields(&mut self, h: &mut Header, dropped: &[(ValueId, Symbol)]) {
        let block = &self.f.blocks[h.body];
        // Per field the loop writes, the one object it writes it of.
        let mut written: Vec<(Symbol, Option<ValueId>)> = Vec::new();
        for &i in &block.insts {
            match &self.f.insts[i].kind {
                InstKind::Set { obj, field, .. } => {
                    let o = match self.resolve(obj) {
                        Operand::Value(o) => Some(o),
                        Operand::Const(_) => None,
                    };
                    match written.iter_mut().find(|(f, _)| f == field) {
                        Some((_, w)) if *w != o => *w = None,
                        Some(_) => {}
                        None => written.push((*field, o)),
                    }
                }
                InstKind::Call { .. } => return,
                _ => {}
            }
        }
        let only = |o: ValueId, f: Symbol| written.iter().any(|&(g, w)| g == f && w == Some(o));
        let mut known: Vec<((ValueId, Symbol), Operand)> = self
            .heap
            .objects
            .iter()
            .filter(|((o, f), _)| only(*o, *f) && !dropped.contains(&(*o, *f)))
            .map(|(k, x)| (*k, x.clone()))
            .collect();
        known.sort_by_key(|((o, f), _)| (ix(*o), f.as_str()));
        for ((obj, field), x) in known {
            let kind = InstKind::Phi(PhiInputs::from_iter([(h.pred, x)]));
            let (phi, value) = self.make(kind, Some(field));
            let value = value.expect("phis have results");
            self.f.blocks[h.body].phis.push(phi);
            // Whatever the program stores in the field.
            self.info[ix(value)] = self.field_info_of(&Operand::Value(obj), field);
            h.fields.push(CarriedField { obj, field, phi, value });
        }
    }

    /// Materializes the virtual objects that loop `body` refers to other
    /// than through its phis.
    fn materialize_outside(&mut self, body: BlockId) {
        let block = &self.f.blocks[body];
        let inside: rustc_hash::FxHashSet<ValueId> =
            block.phis.iter().chain(&block.insts).filter_map(|&i| self.f.insts[i].result).collect();
        let mut outside: Vec<ValueId> = Vec::new();
        let mut note = |o: &Operand| {
            if let Operand::Value(v) = o {
                if !inside.contains(v) && !outside.contains(v) {
                    outside.push(*v);
                }
            }
        };
        for &i in &block.insts {
            self.f.insts[i].kind.operands().for_each(&mut note);
            if let InstKind::Guard { resume, .. } = &self.f.insts[i].kind {
                self.f.resumes[*resume].operands().for_each(&mut note);
            }
        }
        for v in outside {
            self.real(&Operand::Value(v));
        }
    }

    /// The node of virtual object `object` (made, with its field phis and
    /// nested nodes, if new), standing as `key` in the loop.
    fn node(
        &mut self,
        h: &mut Header,
        nodes_of: &mut HashMap<ValueId, usize>,
        object: ValueId,
        key: Option<ValueId>,
        owner: Symbol,
    ) -> usize {
        if let Some(&n) = nodes_of.get(&object) {
            return n;
        }
        let virt = self.virtuals[ix(object)].clone().expect("a virtual object");
        let key = key.unwrap_or_else(|| self.placeholder(self.f.values[object].name));
        let n = h.nodes.len();
        h.nodes.push(Node { key, class: virt.class, fields: Vec::new(), owner });
        nodes_of.insert(object, n);
        let (mut fields, mut loop_fields) = (Vec::new(), Vec::new());
        for (field, x) in virt.fields {
            let x = self.resolve(&x);
            match self.virtual_of(&x) {
                Some(inner) => {
                    let c = self.node(h, nodes_of, inner, None, owner);
                    fields.push((field, Field::Node(c)));
                    loop_fields.push((field, Operand::Value(h.nodes[c].key)));
                }
                None => {
                    let kind = InstKind::Phi(PhiInputs::from_iter([(h.pred, x)]));
                    let (q, qv) = self.make(kind, Some(field));
                    let qv = qv.expect("phis have results");
                    self.f.blocks[h.body].phis.push(q);
                    self.info[ix(qv)] = Info::value();
                    fields.push((field, Field::Phi(q)));
                    loop_fields.push((field, Operand::Value(qv)));
                }
            }
        }
        h.nodes[n].fields = fields;
        self.make_virtual(key, Virtual { class: virt.class, fields: loop_fields });
        n
    }

    fn set_input(&mut self, phi: InstId, from: BlockId, o: Operand) {
        if let InstKind::Phi(inputs) = &mut self.f.insts[phi].kind {
            match inputs.iter_mut().find(|(b, _)| *b == from) {
                Some(slot) => slot.1 = o,
                None => inputs.push((from, o)),
            }
        }
    }

    /// Closes the loop the walk has just produced (not yet installed): the
    /// back edge's objects must match the head's nodes. On a mismatch,
    /// the variables to carry as real objects instead.
    pub fn close_loop(&mut self, h: Header) -> Result<(), Retry> {
        // A carried field must be known at the end of the loop.
        let lost: Vec<(ValueId, Symbol)> = h
            .fields
            .iter()
            .filter(|c| !self.heap.objects.contains_key(&(c.obj, c.field)))
            .map(|c| (c.obj, c.field))
            .collect();
        if !lost.is_empty() {
            return Err(Retry::Fields(lost));
        }
        let mut m = Matching::default();
        let mut bad: Vec<Symbol> = Vec::new();
        for c in &h.carried {
            if let How::Virtual(n) = c.how {
                let back = self.resolve(&c.back);
                if !self.matches(&h, n, &back, &mut m) {
                    bad.push(h.nodes[n].owner);
                }
            }
        }
        // An object kept virtual round the loop must not also become real
        // on the way (it would be two objects).
        let conflict = |o: &Operand, m: &Matching| match o {
            Operand::Value(v) => m.node_of.get(v).map(|&n| h.nodes[n].owner),
            _ => None,
        };
        for (_, x, owner) in &m.fields {
            if let Some(other) = conflict(x, &m) {
                bad.extend([*owner, other]);
            }
        }
        for c in &h.carried {
            if let How::Real = c.how {
                if let Some(other) = conflict(&self.resolve(&c.back), &m) {
                    bad.push(other);
                }
            }
        }
        if !bad.is_empty() {
            bad.sort_by_key(|s| s.as_str().to_owned());
            bad.dedup();
            return Err(Retry::Real(bad));
        }
        for c in &h.fields {
            let back = self.heap.objects[&(c.obj, c.field)].clone();
            self.set_input(c.phi, h.body, back);
        }
        // Phis nothing reads any more (their variable is rewritten before
        // any use) go first, so their back-edge objects stay virtual.
        let used = self.used_values(h.body);
        for c in &h.carried {
            if !matches!(c.how, How::Real) {
                continue;
            }
            if used[ix(c.value)] {
                let back = self.real(&c.back);
                self.set_input(c.phi, h.body, back);
            } else {
                self.f.blocks[h.body].phis.retain(|p| *p != c.phi);
                self.f.values[c.value].def = ValueDef::Detached;
            }
        }
        for (q, x, _) in std::mem::take(&mut m.fields) {
            let back = self.real(&x);
            self.set_input(q, h.body, back);
        }
        Ok(())
    }

    /// Whether `o` (at the end of the loop) is a virtual object of node
    /// `n`'s shape, recursively; records the matches and the field phis'
    /// back-edge values.
    fn matches(&self, h: &Header, n: usize, o: &Operand, m: &mut Matching) -> bool {
        let Some(w) = self.virtual_of(o) else { return false };
        if let Some(&already) = m.of_node.get(&n) {
            return already == w;
        }
        if m.node_of.contains_key(&w) {
            return false;
        }
        m.of_node.insert(n, w);
        m.node_of.insert(w, n);
        let node = &h.nodes[n];
        let virt = self.virtuals[ix(w)].as_ref().expect("a virtual object");
        if virt.class != node.class || virt.fields.len() != node.fields.len() {
            return false;
        }
        for (name, field) in &node.fields {
            let Some(x) = virt.field(*name) else { return false };
            let x = self.resolve(x);
            match field {
                Field::Phi(q) => m.fields.push((*q, x, node.owner)),
                Field::Node(c) => {
                    if !self.matches(h, *c, &x, m) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Values read by the kept instructions, their resume records, or the
    /// phis (phi inputs count only when the phi itself is read: a fixpoint).
    fn used_values(&self, body: BlockId) -> Vec<bool> {
        let mut used = vec![false; self.f.values.len()];
        let mark = |o: &Operand, used: &mut Vec<bool>| {
            if let Operand::Value(v) = o {
                used[ix(*v)] = true;
            }
        };
        // Kept instructions and their records already hold final operands.
        for &i in &self.out {
            let kind = &self.f.insts[i].kind;
            for o in kind.operands() {
                mark(o, &mut used);
            }
            if let InstKind::Guard { resume, .. } = kind {
                for o in self.f.resumes[*resume].operands() {
                    mark(o, &mut used);
                }
            }
        }
        // The loop's own virtual objects read their field phis.
        for v in self.virtuals.iter().flatten() {
            for (_, o) in &v.fields {
                mark(o, &mut used);
            }
        }
        loop {
            let mut changed = false;
            for &p in &self.f.blocks[body].phis {
                let Some(v) = self.f.insts[p].result else { continue };
                if !used[ix(v)] {
                    continue;
                }
                if let InstKind::Phi(inputs) = &self.f.insts[p].kind {
                    for (from, o) in inputs {
                        // Back-edge inputs will be resolved; entry inputs not.
                        let o = if *from == body { self.resolve(o) } else { o.clone() };
                        if let Operand::Value(w) = o {
                            if !used[ix(w)] {
                                used[ix(w)] = true;
                                changed = true;
                            }
                        }
                    }
                }
            }
            if !changed {
                return used;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::check::optimized as check;
    use expect_test::expect;

    /// A counter object the loop reads and writes every iteration: its
    /// field is carried round the loop in a phi (its value on entry read
    /// by the peeled first iteration, on the back edge the value just
    /// stored), so the loop no longer reads it; the store stays.
    #[test]
    fn a_field_the_loop_writes_of_one_object_is_carried_in_a_phi() {
        check(
            "trace count(v0:c, v1:n) {
b0:
    guard_class v0, counter, r0 else out
    jump b1
b1 loop:
    v2:n = phi [b0: v1, b1: v5]
    guard_true v2, r1 else done
    v3:x = get v0, x
    v4:x = add v3, v2
    set v0, x, v4
    v5:n = sub v2, 1
    jump b1
resume r0 {
    frame [c = v0, n = v1]
}
resume r1 {
    frame [c = v0, n = v2]
}
}
",
            expect![[r#"
                trace count(v0:c, v1:n) {
                b0:
                    guard_class v0, counter, r0 else out
                    jump b1
                b1 loop:
                    guard_true v1, r1 else done
                    v3:x = get.object v0, x
                    v4:x = add v3, v1
                    set.object v0, x, v4
                    v5:n = sub.int v1, 1
                    jump b2
                b2 loop:
                    v6:n = phi [b1: v5, b2: v9]
                    v10:x = phi [b1: v4, b2: v8]
                    guard_true v6, r2 else done
                    v8:x = add v10, v6
                    set.object v0, x, v8
                    v9:n = sub.int v6, 1
                    jump b2
                resume r0 {
                    frame [c = v0, n = v1]
                }
                resume r1 {
                    frame [c = v0, n = v1]
                }
                resume r2 {
                    frame [c = v0, n = v6]
                }
                }
            "#]],
        );
    }

    /// The same field of two objects of one class, each written every
    /// iteration: either may be the other, so a write of one forgets the
    /// other's, and neither is carried.
    #[test]
    fn a_field_written_of_two_objects_of_a_class_is_not_carried() {
        check(
            "trace two(v0:a, v1:b, v2:n) {
b0:
    guard_class v0, counter, r0 else out
    guard_class v1, counter, r0 else out
    jump b1
b1 loop:
    v3:n = phi [b0: v2, b1: v9]
    guard_true v3, r1 else done
    v4:x = get v0, x
    v5:x = add v4, 1
    set v0, x, v5
    v6:y = get v1, x
    v7:y = add v6, 1
    set v1, x, v7
    v9:n = sub v3, 1
    jump b1
resume r0 {
    frame [a = v0, b = v1, n = v2]
}
resume r1 {
    frame [a = v0, b = v1, n = v3]
}
}
",
            expect![[r#"
                trace two(v0:a, v1:b, v2:n) {
                b0:
                    guard_class v0, counter, r3 else out
                    guard_class v1, counter, r3 else out
                    jump b1
                b1 loop:
                    guard_true v2, r1 else done
                    v4:x = get.object v0, x
                    v5:x = add v4, 1
                    set.object v0, x, v5
                    v6:y = get.object v1, x
                    v7:y = add v6, 1
                    set.object v1, x, v7
                    v9:n = sub v2, 1
                    jump b2
                b2 loop:
                    v10:n = phi [b1: v9, b2: v15]
                    guard_true v10, r2 else done
                    v11:x = get.object v0, x
                    v12:x = add v11, 1
                    set.object v0, x, v12
                    v13:y = get.object v1, x
                    v14:y = add v13, 1
                    set.object v1, x, v14
                    v15:n = sub.int v10, 1
                    jump b2
                resume r1 {
                    frame [a = v0, b = v1, n = v2]
                }
                resume r2 {
                    frame [a = v0, b = v1, n = v10]
                }
                resume r3 {
                    frame [a = v0, b = v1, n = v2]
                }
                }
            "#]],
        );
    }
}
