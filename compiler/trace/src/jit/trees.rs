//! Growing trees ([`crate::tree`]): when a linked exit checks in with the
//! driver (every [`super::LINK_CHECK`]-th crossing), the
//! loop body its code grew from gets a tree — the body and every bridge
//! hanging off it (and off those bridges) whose link was crossed at
//! least `graft_crossings` ([`Options`]) times, up to [`TREE_INSTS`] instructions —
//! compiled optimized and installed in the body's code slot, so that
//! whatever jumps to the body runs the tree. The tree's own exits take
//! over the links of the exits they come from. A link of the tree's own
//! that gets hot rebuilds it, at most [`TREE_BUILDS`] times.

use super::*;
use crate::tree::{ExitKey, Tree};

/// Most instructions a tree grows to: past it, bridges stay linked.
pub(super) const TREE_INSTS: usize = 6_000;

/// Most instructions the dispatch tier's tree may have: its loop and its
/// instructions' paths (the tutorial BF interpreter's, 73 operations
/// after optimization). Every bridge of the tier is grafted, however
/// rarely crossed, or no tree is made; without a bound of its own the
/// scanning interpreter's tier took 150 bridges of scans (848
/// operations), 64 ms of Cranelift on the running thread.
pub(super) const TIER_TREE_INSTS: usize = 300;

/// The dispatch tier becomes a tree only while its bridges' work is at
/// least this fraction (1 / it) of all the work compiled code stood in
/// for so far. Where it was made past 64 million statements, the tier's
/// share was 24-49% on `statements` 1 and 12, tutorial `escape 20` and
/// the hint in a called function, but 1.6-4.5% on `fractal 5` in every
/// shape (tutorial, hint moved, hinted, objects), which made it past
/// half their run and ran 0-10% slower for it.
pub(super) const TIER_TREE_SHARE: u64 = 10;

/// Most times one loop's tree is built.
pub(super) const TREE_BUILDS: u32 = 4;

/// What the JIT knows of trees.
#[derive(Default)]
pub(super) struct Trees {
    /// Per loop body: the trees built of it so far, the last one's code.
    built: HashMap<TraceId, (u32, TraceId)>,
    /// Per tree's code: its loop body.
    root_of: HashMap<TraceId, TraceId>,
    /// The exit of a piece each exit of a tree comes from, and the other
    /// way round.
    origin_of: HashMap<ExitId, ExitId>,
    aliases: HashMap<ExitId, Vec<ExitId>>,
    /// The dispatch tier's straight work when its tree was last tried.
    tier_tried: u64,
}

impl<'p> Jit<'p> {
    /// The dispatch tier's bridges have run `after` statements, enough
    /// for its tree to pay ([`Options::tier_tree`]), a tenth or more of
    /// the code's work ([`TIER_TREE_SHARE`]), and it has none: its
    /// loop and the bridges grown from it become one, if they fit in
    /// [`TIER_TREE_INSTS`] instructions. Every bridge, however often
    /// crossed (baseline code's direct links count no crossings, and each
    /// is an instruction's path of the dispatch loop); built once (rebuilt
    /// as other trees are, with the scanning interpreter's scans, it took
    /// a sixth of the run).
    pub(super) fn grow_tier_tree(&mut self, after: u64) {
        let Some(code) = self.tier.as_ref().filter(|t| !t.refused).and_then(|t| t.code) else { return };
        let c = &self.codes[code.0 as usize];
        // (Tried again, when no bridge could be grafted, once the work
        // doubled.) Only while the tier's bridges are a share of all the
        // code's work worth speeding up ([`TIER_TREE_SHARE`]).
        let due = c.straight >= after.max(2 * self.trees.tier_tried)
            && c.straight.saturating_mul(TIER_TREE_SHARE) >= self.compiled_work;
        let Some(body) = c.body.filter(|_| due) else { return };
        if !self.trees.built.contains_key(&body) {
            let (straight, entries, all) = (c.straight, c.entries, self.compiled_work);
            self.trees.tier_tried = straight;
            self.log(format_args!(
                "the dispatch tier becomes a tree: its bridges ran {straight} statements in {entries} entries, of {all} the code ran"
            ));
            self.build_tree(body, None);
        }
    }

    /// The loop body whose tree code `c` belongs to.
    fn tree_root(&self, c: TraceId) -> Option<TraceId> {
        let code = &self.codes[c.0 as usize];
        match code.kind {
            Kind::Tree => self.trees.root_of.get(&c).copied(),
            Kind::Body => Some(c),
            _ => self.codes[code.root.0 as usize].body,
        }
    }

    /// Linked exit `exit` checked in: builds (or rebuilds) the tree of its
    /// loop, if that is still to do.
    pub(super) fn grow_tree(&mut self, exit: ExitId) {
        let parent = self.exit_state(exit).parent;
        let Some(root) = self.tree_root(parent) else { return };
        match self.trees.built.get(&root) {
            None => {}
            // A link of the tree's own (its bridge is not in the tree).
            Some(&(builds, code)) if builds < TREE_BUILDS && code == parent => {}
            Some(_) => return,
        }
        self.build_tree(root, Some(self.options.graft_crossings));
    }

    /// The bridge hanging off exit `e` of a piece, or off an exit of a
    /// tree that comes from it, and the crossings of their links.
    fn bridge_of(&mut self, e: ExitId) -> (Option<TraceId>, u64) {
        let cache = self.cache.as_ref().expect("code exists");
        let mut crossings = cache.linked_failures(e);
        let mut bridge = self.exits.get(e.0 as usize).and_then(|s| s.as_ref()).and_then(|s| s.bridge);
        for &a in self.trees.aliases.get(&e).map(Vec::as_slice).unwrap_or(&[]) {
            crossings += cache.linked_failures(a);
            if bridge.is_none() {
                bridge = self.exits.get(a.0 as usize).and_then(|s| s.as_ref()).and_then(|s| s.bridge);
            }
        }
        (bridge, crossings)
    }

    /// Builds the tree of loop body `root` and installs it: with
    /// `Some(graft)`, of the bridges crossed that many times, up to
    /// [`TREE_INSTS`] instructions; with `None` (the dispatch tier's,
    /// [`Jit::grow_tier_tree`]), of every bridge, within
    /// [`TIER_TREE_INSTS`], or not at all.
    fn build_tree(&mut self, root: TraceId, graft: Option<u64>) {
        let whole = graft.is_none();
        let (graft, most) = match graft {
            Some(g) => (g, TREE_INSTS),
            None => (0, TIER_TREE_INSTS),
        };
        let started = Instant::now();
        let base = self.codes[root.0 as usize].function.name;
        let name = self.fresh_name(Symbol::intern(&format!("{base}.tree")));
        let mut tree = Tree::new(&self.codes[root.0 as usize].function, name);
        let mut pieces: Vec<TraceId> = vec![root];
        let mut size = instructions(&self.codes[root.0 as usize].function);
        let mut work = vec![0usize];
        while let Some(p) = work.pop() {
            let exits = self.cache.as_ref().expect("code exists").exits_of(pieces[p]);
            for e in exits {
                let (Some(b), crossings) = self.bridge_of(e) else { continue };
                let bridge = &self.codes[b.0 as usize];
                if crossings < graft || !matches!(bridge.kind, Kind::Bridge) || pieces.contains(&b) {
                    continue;
                }
                let grown = instructions(&bridge.function);
                if size + grown > most {
                    // The tier's tree is made whole or not at all: its
                    // exits reach the bridges left out through the exit
                    // buffer, where its baseline code jumped straight in
                    // (the scanning interpreter's tree of 46 of its
                    // bridges ran 10% slower than its baseline code).
                    if whole {
                        return;
                    }
                    continue;
                }
                let texit = self.exit_state(e).exit.clone();
                let key = ExitKey {
                    block: texit.block,
                    resume: texit.resume,
                    label: texit.label,
                    key: texit.key.map(|k| texit.values[k as usize]),
                    guard: texit.guard,
                    values: texit.values.to_vec(),
                };
                if let Some(np) = tree.graft(p, &key, &self.codes[b.0 as usize].function) {
                    debug_assert_eq!(np, pieces.len());
                    pieces.push(b);
                    work.push(np);
                    size += grown;
                }
            }
        }
        let builds = self.trees.built.get(&root).map_or(0, |&(n, _)| n) + 1;
        if pieces.len() == 1 {
            return;
        }
        self.inspect(&tree.f, "tree");
        let what = format!("the tree of {base} ({} bridges)", pieces.len() - 1);
        let tier = self.options.tree_tier;
        let (compacted, _, _) = super::optimizing::compact_pieces(
            vec![(tree.f.clone(), Kind::Tree, 0)],
            Vec::new(),
            Vec::new(),
            self.options.inspect,
        );
        let here = super::compiling::Here { shapes: Vec::new(), tier, from: None };
        let Some((ids, _)) = self.compile_pieces(compacted, here, None, Vec::new(), &what, started.elapsed()) else {
            // Not compiled: the pieces stay as they are, and no other try.
            self.trees.built.insert(root, (TREE_BUILDS, root));
            return;
        };
        let code = ids[0];
        let cache = self.cache.as_ref().expect("code exists");
        if cache.install(root, code).is_err() {
            self.trees.built.insert(root, (TREE_BUILDS, root));
            return;
        }
        self.trees.built.insert(root, (builds, code));
        self.trees.root_of.insert(code, root);
        let (params, graph, anchor, tree_root) = {
            let r = &self.codes[root.0 as usize];
            (r.params.clone(), r.graph, r.anchor, r.root)
        };
        let c = &mut self.codes[code.0 as usize];
        (c.params, c.graph, c.anchor, c.root) = (params, graph, anchor, tree_root);
        self.stats.trees += 1;
        self.stats.grafted += pieces.len() - 1;
        self.adopt_exits(code, &tree, &pieces);
    }

    /// The exits of tree `code` (built as `tree` of `pieces`) take over the
    /// links of the exits they come from.
    fn adopt_exits(&mut self, code: TraceId, tree: &Tree, pieces: &[TraceId]) {
        let exits = self.cache.as_ref().expect("code exists").exits_of(code);
        for e in exits {
            let cache = self.cache.as_ref().expect("code exists");
            let (texit, _) = cache.exit(e);
            let Some(origin) = tree.origin(texit.block, texit.resume) else { continue };
            let piece = pieces[origin.piece];
            let values: Option<Vec<ValueId>> =
                texit.values.iter().map(|&v| tree.piece_value(origin.piece, v)).collect();
            let Some(values) = values else { continue };
            let found = cache.exits_of(piece).into_iter().find(|&o| {
                let (x, _) = cache.exit(o);
                x.block == origin.block
                    && x.resume == origin.resume
                    && x.label == texit.label
                    && x.guard == texit.guard
                    && x.check == texit.check
                    && x.at == texit.at
                    && *x.values == *values
            });
            let Some(orig) = found else { continue };
            self.trees.origin_of.insert(e, orig);
            self.trees.aliases.entry(orig).or_default().push(e);
            let (bridge, _) = self.bridge_of(orig);
            if let Some(b) = bridge {
                let cache = self.cache.as_ref().expect("code exists");
                if cache.link(e, b).is_ok() {
                    self.exit_state(e).linked(b);
                }
            }
        }
    }
}
