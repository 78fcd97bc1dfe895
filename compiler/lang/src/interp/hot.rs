//! Hot spots, as PyPy's JIT finds them: a [`Key`] is a label of a flow
//! graph plus the values of the variables its promote chain reads (the
//! "green" variables: `promote bytecode then b1`, `b1: promote pc then
//! b2` make `bytecode` and `pc` green at the first label). The
//! interpreter counts arrivals per key at the labels a [`Profiler`]
//! watches and stops at a key that is hot (its count reached the
//! threshold) or has compiled code; so a dispatch loop's label is as many
//! hot spots as the interpreted program has positions, and a loop closes
//! only where the interpreted program's own loop does.
//!
//! Greens are compared the way `promote` compares (structurally, objects
//! by identity), and hashed cheaply: a list by its length, not its items,
//! since a green list is usually the interpreted program itself.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use smallvec::SmallVec;

use super::resolve::{Resolved, Slot};
use crate::value::Value;

/// The value of a green variable where a key is taken (`None`: unbound,
/// which `promote` does not guard).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Green(pub Option<Value>);

impl Hash for Green {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.0 {
            None => 0u8.hash(state),
            Some(Value::Int(i)) => (1u8, i).hash(state),
            Some(Value::Big(b)) => (2u8, b).hash(state),
            Some(Value::Atom(a)) => (3u8, a).hash(state),
            Some(Value::List(items)) => (4u8, items.len()).hash(state),
            Some(Value::Object(o)) => (5u8, o.id()).hash(state),
        }
    }
}

/// A hot spot: block `block` of flow graph `graph` (0 is the main graph,
/// `k + 1` the `k`-th function, as in [`Resolved`]) with the values of its
/// green variables, in promote-chain order — or, with `block` [`CALL`], a
/// call of function `graph` (its frame is new: nothing ran in it yet).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub graph: u32,
    pub block: u32,
    pub greens: SmallVec<[Green; 2]>,
}

/// The `block` of a [`Key`] that stands for calls of its function.
pub const CALL: u32 = u32::MAX;

/// What the interpreter does at a call ([`Profiler::arrive_call`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CallArrival {
    /// Goes on into the callee.
    Pass,
    /// Stops: the call's key is hot.
    Stop,
    /// Hands the call to compiled code ([`super::CallCode`]), or stops
    /// where the machine has none.
    Compiled,
}

/// What the profiler does when the interpreter reaches a key.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum KeyState {
    /// Count; stop at the threshold.
    Counting,
    /// Stop at once: the key has compiled code.
    Enter,
    /// Never stop again (its traces kept aborting, or did not pay).
    Ignored,
}

#[derive(Clone, Debug)]
struct Entry {
    count: u32,
    state: KeyState,
    /// Whether the key was arrived at or set (a dense entry exists
    /// before either).
    seen: bool,
    /// Thresholds a counting key lets pass before it stops
    /// ([`Profiler::defer`]).
    skips: u8,
    /// Times the key was deferred ([`Profiler::defer`]).
    deferrals: u8,
    /// The clock at the first arrival of the count in progress
    /// ([`Profiler::since`]).
    since: u64,
}

impl Entry {
    /// Whether the interpreter stops at the key, as its last arrival
    /// found (not counting another).
    fn stops(&self, threshold: u32) -> bool {
        match self.state {
            KeyState::Enter => true,
            KeyState::Ignored => false,
            KeyState::Counting => self.count >= threshold,
        }
    }

    /// Counts an arrival at clock `now`; whether the interpreter should
    /// stop.
    #[inline]
    fn arrive(&mut self, threshold: u32, now: u64) -> bool {
        self.seen = true;
        match self.state {
            KeyState::Enter => true,
            KeyState::Ignored => false,
            KeyState::Counting => {
                if self.count == 0 {
                    self.since = now;
                }
                self.count += 1;
                self.count >= threshold && self.stops_now()
            }
        }
    }

    /// At the threshold: whether the key stops, or lets it pass (one of
    /// its skips) and counts again from zero.
    #[cold]
    fn stops_now(&mut self) -> bool {
        if self.skips == 0 {
            return true;
        }
        self.skips -= 1;
        self.count = 0;
        false
    }
}

/// The `since` of a count [`Profiler::ask_after`] set part-way: it has no
/// first arrival, so [`Profiler::since`] gives none.
const NO_CLOCK: u64 = u64::MAX;

/// The most times longer than doubling ([`Profiler::defer`]) a key waits
/// for the arrivals the JIT says it is short of
/// ([`Profiler::defer_at_least`]). What it is short of assumes it goes on
/// arriving as densely as over its last count, and arrivals come in
/// bursts: 2,000 functions each looping 400 rounds per call, called in
/// turn, counted 50 arrivals across two calls 4 million statements apart
/// now and then, and waited for 12,800 (as many as the run has left)
/// rather than compiling at the next call (0.69 of the interpreter's time
/// against 0.59).
const DEFER_AHEAD: u16 = 4;

/// The hasher of the key table: the interpreter looks a key up at every
/// arrival at a watched label, and keys are a few small integers (rustc's
/// "Fx" mix: multiply and rotate per word; SipHash cost more than the
/// arrival itself).
#[derive(Default, Clone, Copy)]
pub struct KeyHasher(u64);

/// A map keyed by [`Key`]s, hashed with [`KeyHasher`].
pub type KeyMap<V> = HashMap<Key, V, BuildHasherDefault<KeyHasher>>;

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The labels a JIT watches, and the count and state of every key seen
/// there.
///
/// Keys live in one of two stores, always the same one for a given key:
/// a label whose promote chain is one variable holding a small
/// non-negative integer (an interpreter's `pc`) counts in a vector indexed
/// by that integer (an arrival is an index, no key built or hashed), and
/// so does a label with no promote chain (a program without hints: its
/// one key is index 0); every other key is in the hash map.
///
/// Calls are counted per function, in a vector indexed by graph: a
/// function's calls are watched once it has an entry there, from the
/// start (a JIT's recursive functions) or from any point of the run on
/// ([`Profiler::watch_calls`]: a JIT that compiles a function's calls
/// instead of its loop); an unwatched call costs the interpreter one
/// load.
#[derive(Clone, Debug)]
pub struct Profiler {
    /// Per graph, per block: its green slots when the block is watched.
    /// Boxed: a word per block that is not (a residual main graph of
    /// 39,000 blocks and 5,000 loops had 8 MB of empty slots to fault in,
    /// 2 ms of the JIT's take-over; the box is one more load per arrival).
    watched: Vec<Vec<Option<Box<Watched>>>>,
    /// Per graph: the entry of its calls' key, when they are watched.
    calls: Vec<Option<Entry>>,
    keys: KeyMap<Entry>,
    /// The most keys `keys` holds ([`MOST_SPARSE_KEYS`]).
    most_sparse: usize,
    /// Blocks held in reserve ([`Profiler::reserve`]), with their promote
    /// chains.
    reserved: HashMap<(u32, u32), Vec<Slot>>,
    threshold: u32,
    /// The JIT's clock, as last told ([`Profiler::set_clock`]).
    clock: u64,
    /// The labels counted ahead ([`Watched::arm`]) since the threshold
    /// was last lowered, each once: what lowering it takes back, in time
    /// proportional to the counts ahead that put them here (the JIT
    /// raises and lowers the threshold as its compile budget closes and
    /// opens, thousands of times in a run of thousands of loops).
    armed: Vec<(u32, u32)>,
}

/// The most keys the profiler counts apart from its labels' dense ones
/// (integers from 0 to [`DENSE_KEYS`], objects by allocation number,
/// labels without greens: bounded tables). A label whose promotion keeps
/// taking new values it counts no dense key for — a counter past
/// `DENSE_KEYS`, fresh atoms or lists — would otherwise fill the map
/// without end, each key arrived at once and never hot, and its loop would
/// never be compiled. The label that finds the map full, if it has no
/// dispatch tier, counts one key from then on ([`Profiler::drop_greens`]):
/// that key gets hot, and a trace guarding the promoted value fills its
/// chain of bridges, which gives the promotion up.
pub const MOST_SPARSE_KEYS: usize = 1 << 16;

/// A watched label: its promote chain, and the entries of its dense keys.
#[derive(Clone, Debug)]
struct Watched {
    chain: Box<[Slot]>,
    /// The chain's one slot, when it has one (its keys may be dense).
    single: Option<Slot>,
    dense: Vec<Entry>,
    /// The entries of dense keys whose green is an object, by its
    /// allocation number, and the object each stands for.
    objects: Vec<Entry>,
    held: Vec<Option<Value>>,
    /// For a label with a dispatch tier ([`Profiler::dispatch`]): its
    /// tables of positions. The interpreter stops at every arrival at such
    /// a label, for the driver to run the tier.
    positions: Option<Positions>,
    /// For a label without greens (one key): arrivals the interpreter
    /// lets pass with no more than a decrement, already counted in the
    /// key's entry ([`Watched::arm`]).
    ticks: u32,
    /// Whether the label is in [`Profiler::armed`].
    listed: bool,
}

/// A dispatch tier's tables ([`Profiler::dispatch`]): per dense key, two
/// words ([`Position`]), for the integer keys (as many as `dense` has
/// entries) and for the object keys by allocation number (as many as
/// `objects` has). Compiled code counts the first down between the
/// interpreter's stops; the entries are the truth, written here whenever
/// one changes.
#[derive(Clone, Debug)]
struct Positions {
    ints: Vec<Position>,
    objects: Vec<Position>,
    /// Per word, the JIT's clock ([`Profiler::set_clock`]) when it was
    /// last written: since when compiled code counts it down
    /// ([`Profiler::found_hot`]).
    ints_since: Vec<u64>,
    objects_since: Vec<u64>,
    /// The word of a key not arrived at yet (the threshold when the tier
    /// began), for the positions the tables grow past.
    unseen: u64,
    /// The JIT's clock, as last told.
    clock: u64,
}

/// A position's words in a dispatch tier's table: the arrivals compiled
/// code may take there before it leaves ([`Entry::remaining`]; 0 at a
/// key with code, and where the position's code is ready:
/// [`Profiler::ready`]), and its *link*: 0, or the address of the code
/// slot of the position's code, which the tier enters directly where the
/// count is 0 rather than leaving for the driver ([`Profiler::link`]; set
/// only while the key has code, cleared whenever its entry changes).
pub type Position = [u64; 2];

/// The index of a [`Position`]'s count.
pub const POSITION_COUNT: usize = 0;
/// The index of a [`Position`]'s link.
pub const POSITION_LINK: usize = 1;

/// Where a dense key is counted: at the integer a one-green label's
/// variable holds (0 for a label without a promote chain), or at the
/// allocation number of the object it holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Dense {
    Int(usize),
    Object(usize),
}

impl Watched {
    /// A label watched with promote chain `chain`, no key arrived at yet.
    fn new(chain: Vec<Slot>) -> Watched {
        let single = match chain[..] {
            [s] => Some(s),
            _ => None,
        };
        Watched {
            chain: chain.into_boxed_slice(),
            single,
            dense: Vec::new(),
            objects: Vec::new(),
            held: Vec::new(),
            positions: None,
            ticks: 0,
            listed: false,
        }
    }

    /// Counts ahead, at a label without greens whose key is counting
    /// (`count` arrivals so far, its last one just counted): the arrivals
    /// short of the one that reaches `threshold` are added to the count
    /// at once, and the interpreter lets that many pass with a decrement
    /// of [`Watched::ticks`] (2,000 functions' loops arrived at 1.3
    /// million times: some 35 instructions an arrival where the count is
    /// looked up and counted, a third of what the JIT's interpreter did
    /// more than the interpreter). So the key stops on the arrival it
    /// would have stopped on. A count just begun (0: its thresholds let
    /// pass, [`Entry::stops_now`]) is not counted ahead, so that its next
    /// arrival sets its clock ([`Profiler::since`]). Whoever reads the
    /// count subtracts the ticks left ([`Watched::counted`]), and whoever
    /// changes the entry takes them back first ([`Watched::disarm`]).
    /// Whether the label is to be listed as armed ([`Profiler::armed`]).
    #[cold]
    #[inline(never)]
    fn arm(&mut self, threshold: u32) -> bool {
        let Some(e) = self.dense.first_mut() else { return false };
        if e.state != KeyState::Counting || e.count == 0 || e.count >= threshold {
            return false;
        }
        let ahead = threshold - 1 - e.count;
        if ahead == 0 {
            return false;
        }
        e.count += ahead;
        self.ticks = ahead;
        !std::mem::replace(&mut self.listed, true)
    }

    /// Takes back the arrivals counted ahead and not arrived at
    /// ([`Watched::arm`]): the entry's count is the arrivals counted.
    #[inline]
    fn disarm(&mut self) {
        if self.ticks > 0 {
            self.dense[0].count -= self.ticks;
            self.ticks = 0;
        }
    }

    /// The arrivals counted at dense key `k` whose entry is `e`: its
    /// count, less what was counted ahead ([`Watched::arm`]).
    fn counted(&self, k: Dense, e: &Entry) -> u32 {
        match k {
            Dense::Int(0) if self.chain.is_empty() => e.count - self.ticks,
            _ => e.count,
        }
    }

    /// Writes dense key `k`'s words of the positions table, if the label
    /// has one, from its entry: its count, and its link kept while it has
    /// code, else cleared (set again by [`Profiler::link`] once the driver
    /// enters the key's code).
    #[inline]
    fn sync(&mut self, k: Dense, threshold: u32) {
        let Some(p) = &mut self.positions else { return };
        let (words, since, entry) = match k {
            Dense::Int(i) => (p.ints.get_mut(i), p.ints_since.get_mut(i), self.dense.get(i)),
            Dense::Object(i) => (p.objects.get_mut(i), p.objects_since.get_mut(i), self.objects.get(i)),
        };
        if let (Some(w), Some(since), Some(e)) = (words, since, entry) {
            let link = if e.state == KeyState::Enter { w[POSITION_LINK] } else { 0 };
            *w = [e.remaining(threshold), link];
            *since = p.clock;
        }
    }

    /// Dense key `k`'s words in the positions table and its entry, if the
    /// label has a table reaching it.
    fn position_mut(&mut self, k: Dense) -> Option<(&mut Position, &mut Entry)> {
        let p = self.positions.as_mut()?;
        match k {
            Dense::Int(i) => Some((p.ints.get_mut(i)?, self.dense.get_mut(i)?)),
            Dense::Object(i) => Some((p.objects.get_mut(i)?, self.objects.get_mut(i)?)),
        }
    }

    /// The dense key of arriving here with variables `slots`, if it is
    /// one: 0 for a label without a promote chain; for a one-variable
    /// chain, the integer its variable holds when in `0..DENSE_KEYS`, or
    /// the object, when its allocation number is.
    #[inline(always)]
    fn dense_index(&self, slots: &[Option<Value>]) -> Option<Dense> {
        match self.single {
            Some(s) => dense_green(slots.get(s as usize).and_then(Option::as_ref)),
            None => self.chain.is_empty().then_some(Dense::Int(0)),
        }
    }

    /// The entry of dense key `k`, if it has one.
    #[inline(always)]
    fn get(&self, k: Dense) -> Option<&Entry> {
        match k {
            Dense::Int(i) => self.dense.get(i),
            Dense::Object(i) => self.objects.get(i),
        }
    }

    /// [`Watched::get`], to count on: an object's entry only once it
    /// holds the object (the vectors grow past entries not arrived at,
    /// and a key is made of the object its entry holds).
    #[inline(always)]
    fn get_mut(&mut self, k: Dense) -> Option<&mut Entry> {
        match k {
            Dense::Int(i) => self.dense.get_mut(i),
            Dense::Object(i) => match self.held.get(i) {
                Some(Some(_)) => self.objects.get_mut(i),
                _ => None,
            },
        }
    }

    /// The greens of dense key `k`: none, the integer, or the object.
    fn greens(&self, k: Dense) -> SmallVec<[Green; 2]> {
        match (k, self.single) {
            (Dense::Int(i), Some(_)) => smallvec::smallvec![Green(Some(Value::Int(i as i64)))],
            (Dense::Int(_), None) => SmallVec::new(),
            (Dense::Object(i), _) => smallvec::smallvec![Green(self.held.get(i).cloned().flatten())],
        }
    }

    /// The entry of dense key `k`, whose green is `green` (the vectors
    /// grown to it, the object kept).
    #[inline]
    fn entry(&mut self, k: Dense, green: Option<&Value>) -> &mut Entry {
        match k {
            Dense::Int(i) => {
                if i >= self.dense.len() {
                    self.grow(i);
                }
                &mut self.dense[i]
            }
            Dense::Object(i) => {
                if i >= self.objects.len() {
                    self.grow_objects(i);
                }
                if self.held[i].is_none() {
                    self.held[i] = green.cloned();
                }
                &mut self.objects[i]
            }
        }
    }

    /// Grows the dense entries to `k` (out of line: once per new key, and
    /// the arrival path stays small enough to inline).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, k: usize) {
        grow_to(&mut self.dense, k + 1, Entry::UNSEEN);
        if let Some(p) = &mut self.positions {
            grow_to(&mut p.ints, k + 1, [p.unseen, 0]);
            grow_to(&mut p.ints_since, k + 1, p.clock);
        }
    }

    /// [`Watched::grow`] for keys of objects.
    #[cold]
    #[inline(never)]
    fn grow_objects(&mut self, k: usize) {
        grow_to(&mut self.objects, k + 1, Entry::UNSEEN);
        grow_to(&mut self.held, k + 1, None);
        if let Some(p) = &mut self.positions {
            grow_to(&mut p.objects, k + 1, [p.unseen, 0]);
            grow_to(&mut p.objects_since, k + 1, p.clock);
        }
    }
}

/// Lengthens `v` to `len` with `fill`, its room growing by a quarter at
/// least ([`REACH_GROWTH`]) rather than doubling: still a constant number
/// of copies per element, and at most a fifth of the room unused.
fn grow_to<T: Clone>(v: &mut Vec<T>, len: usize, fill: T) {
    if len > v.capacity() {
        let room = len.max(v.capacity() + v.capacity() / REACH_GROWTH);
        v.reserve_exact(room - v.len());
    }
    v.resize(len, fill);
}

/// A positions table reached past its end ([`Profiler::reach`]) grows
/// by one part in this many of its length, at least. Every position
/// takes 40 bytes of the label's tables (its entry, 16; its words, 16;
/// its clock, 8), 56 for an object (the object too), grown all together;
/// doubling
/// left up to half of them unused: the objects BF interpreter running
/// a program of 96,700 instructions had them at 160,700 positions (9 MB)
/// for some 100,000 used. Grown by a quarter, a program's positions
/// reached in order grow the tables about 30 times from the first
/// thousand to 100,000 (each time one more trip from the tier to the
/// driver, and a copy).
const REACH_GROWTH: usize = 4;

/// Integers from 0 up to this (excluded) are dense keys of a one-green
/// label, and so are objects whose allocation number is; others are
/// hashed. A label's vectors grow to its largest dense key reached: at
/// most 256 Ki entries of 16 bytes (4 MB, and 6 MB more for a dispatch
/// tier's table), however sparse, and for objects as many of the objects
/// held. (An interpreter promoting its instruction objects spent a third
/// of its run hashing their keys; a BF program of 96,000 instructions has
/// as many positions, which a dispatch tier runs only where they are
/// dense.)
const DENSE_KEYS: i64 = 1 << 18;

/// The dense key of a one-green label whose green holds `v`, if it is
/// one ([`DENSE_KEYS`]).
#[inline(always)]
fn dense_green(v: Option<&Value>) -> Option<Dense> {
    match v {
        Some(Value::Int(i)) if (0..DENSE_KEYS).contains(i) => Some(Dense::Int(*i as usize)),
        Some(Value::Object(o)) if o.id() < DENSE_KEYS as u64 => Some(Dense::Object(o.id() as usize)),
        _ => None,
    }
}

/// What one arrival the interpreter counts is worth in arrivals compiled
/// code counts in a dispatch tier's table ([`Profiler::dispatch`]): a
/// position there runs at the speed of compiled code, ten to twenty times
/// the interpreter's, and leaving the tier for the driver (to record the
/// position, to be deferred by the compile budget, to ask again for code
/// still being optimized) costs a round trip each time. So a position in
/// the tier is hot after `threshold` times this many arrivals, and so on
/// for its deferrals and asks. Measured on the BF interpreters of
/// `jit_bf` (best of three, 2026-12-03; tutorial shape, statements 1,
/// bottles 10, fractal 5): 1: 0.70 s, 21 ms, 0.38 s; 4: 0.36 s, 13 ms,
/// 0.29 s; 16: 0.24 s, 11 ms, 0.31 s; 64: 0.22 s, 10 ms, 0.43 s (a hot
/// loop found later); without the tier, 0.99 s, 31 ms, 0.36 s.
pub const TIER_ARRIVALS: u64 = 16;

impl Entry {
    /// A dense key not arrived at yet.
    const UNSEEN: Entry = Entry { count: 0, state: KeyState::Counting, seen: false, skips: 0, deferrals: 0, since: 0 };

    /// The arrivals compiled code may take at the key before it must
    /// stop ([`Watched::positions`]): none at a key with code, any number
    /// at one given up, else what is left of the count and the
    /// thresholds it lets pass (at least one: an arrival that finds the
    /// count done stops the interpreter, not the code), [`TIER_ARRIVALS`]
    /// each.
    fn remaining(&self, threshold: u32) -> u64 {
        match self.state {
            KeyState::Enter => 0,
            KeyState::Ignored => u64::MAX,
            KeyState::Counting => {
                let left = u64::from(threshold.saturating_sub(self.count)).max(1);
                (left + u64::from(self.skips) * u64::from(threshold)) * TIER_ARRIVALS
            }
        }
    }
}

impl Profiler {
    /// Watches `labels` (per graph, block indices of `resolved`, or
    /// [`CALL`] for the graph's calls), marking the blocks in `resolved`
    /// ([`Graph::watch`](super::resolve::Graph::watch)): the interpreter
    /// asks the profiler only on jumps to a
    /// [`Target::Watched`](super::resolve::Target::Watched), and on calls.
    /// A key gets hot at its `threshold`-th arrival.
    pub fn new(resolved: &mut Resolved, labels: &[(u32, u32)], threshold: u32) -> Profiler {
        let mut watched: Vec<Vec<Option<Box<Watched>>>> =
            resolved.graphs.iter().map(|g| vec![None; g.blocks.len()]).collect();
        let mut calls: Vec<Option<Entry>> = vec![None; resolved.graphs.len()];
        let mut blocks: Vec<Vec<u32>> = vec![Vec::new(); resolved.graphs.len()];
        for &(g, b) in labels {
            if b == CALL {
                if let Some(call) = calls.get_mut(g as usize) {
                    *call = Some(Entry::UNSEEN);
                }
            } else if let Some(slot) = watched.get_mut(g as usize).and_then(|blocks| blocks.get_mut(b as usize)) {
                *slot = Some(Box::new(Watched::new(resolved.graphs[g as usize].promote_chain(b))));
                blocks[g as usize].push(b);
            }
        }
        for (graph, blocks) in resolved.graphs.iter_mut().zip(&blocks) {
            if !blocks.is_empty() {
                graph.watch(blocks);
            }
        }
        Profiler {
            watched,
            calls,
            keys: HashMap::default(),
            most_sparse: MOST_SPARSE_KEYS,
            reserved: HashMap::default(),
            threshold: threshold.max(1),
            clock: 0,
            armed: Vec::new(),
        }
    }

    /// Holds block `block` of graph `graph` in reserve: the interpreter's
    /// jumps there ask the profiler from now on (they are marked in
    /// `resolved`), which counts nothing there until
    /// [`Profiler::watch_reserved`] — a label a JIT may come to watch
    /// after the run has begun, which marking alone cannot do (the
    /// program is marked before it runs). Until then a jump there costs
    /// the interpreter the test that the block is not watched.
    pub fn reserve(&mut self, resolved: &mut Resolved, graph: u32, block: u32) {
        let Some(g) = resolved.graphs.get_mut(graph as usize) else { return };
        if self.watches(graph, block) || block as usize >= g.blocks.len() {
            return;
        }
        g.watch(&[block]);
        self.reserved.insert((graph, block), g.promote_chain(block));
    }

    /// Watches block `block` of graph `graph`, held in reserve
    /// ([`Profiler::reserve`]), from now on, its keys the values of its
    /// promote chain; whether it was in reserve.
    pub fn watch_reserved(&mut self, graph: u32, block: u32) -> bool {
        let Some(chain) = self.reserved.remove(&(graph, block)) else { return false };
        if let Some(slot) = self.watched.get_mut(graph as usize).and_then(|blocks| blocks.get_mut(block as usize)) {
            *slot = Some(Box::new(Watched::new(chain)));
        }
        true
    }

    /// Stops watching block `block` of graph `graph`: nothing is counted
    /// there from now on, and those who ask find it unwatched (a JIT's
    /// recordings go on through it). What was counted there is forgotten.
    pub fn unwatch(&mut self, graph: u32, block: u32) {
        if let Some(slot) = self.watched.get_mut(graph as usize).and_then(|blocks| blocks.get_mut(block as usize)) {
            *slot = None;
        }
        self.keys.retain(|k, _| !(k.graph == graph && k.block == block));
    }

    /// Sets the most keys counted apart from the dense ones (the tests'
    /// small maps; [`MOST_SPARSE_KEYS`] otherwise).
    pub fn set_most_sparse_keys(&mut self, most: usize) {
        self.most_sparse = most.max(1);
    }

    /// Watches the calls of graph `graph` from now on (its key is
    /// [`CALL`]'s), counting from zero.
    pub fn watch_calls(&mut self, graph: u32) {
        if let Some(call @ None) = self.calls.get_mut(graph as usize) {
            *call = Some(Entry::UNSEEN);
        }
    }

    /// Whether the calls of graph `graph` are watched.
    pub fn watches_calls(&self, graph: u32) -> bool {
        matches!(self.calls.get(graph as usize), Some(Some(_)))
    }

    /// Counts a call of graph `graph` at clock `now`, if its calls are
    /// watched: whether the interpreter goes on into the callee, stops
    /// there (the key is hot), or hands the call to compiled code (the key
    /// has code). Inline: the interpreter asks at every call.
    #[inline(always)]
    pub fn arrive_call(&mut self, graph: u32, now: u64) -> CallArrival {
        let threshold = self.threshold;
        match self.calls.get_mut(graph as usize) {
            Some(Some(e)) if e.state == KeyState::Enter => CallArrival::Compiled,
            Some(Some(e)) => match e.arrive(threshold, now) {
                true => CallArrival::Stop,
                false => CallArrival::Pass,
            },
            _ => CallArrival::Pass,
        }
    }

    /// Watches block `block` of graph `graph` from now on, as a label
    /// without greens (one key), for those who ask the profiler about a
    /// block ([`Profiler::watches`], [`Profiler::key_with`]): a JIT's
    /// recordings and exits. The interpreter's own jumps there are not
    /// counted: the program it runs was marked when the profiler was made.
    pub fn watch_later(&mut self, graph: u32, block: u32) {
        let Some(slot) = self.watched.get_mut(graph as usize).and_then(|blocks| blocks.get_mut(block as usize)) else {
            return;
        };
        if slot.is_none() {
            *slot = Some(Box::new(Watched::new(Vec::new())));
        }
    }

    /// Counts arrivals at block `block` of graph `graph` as one key from
    /// now on, whatever its promoted variables hold (a JIT that gave up
    /// promoting there: the promotion is megamorphic); what was counted
    /// per value there is forgotten.
    pub fn drop_greens(&mut self, graph: u32, block: u32) {
        let Some(Some(w)) = self.watched.get_mut(graph as usize).and_then(|g| g.get_mut(block as usize)) else {
            return;
        };
        **w = Watched::new(Vec::new());
        self.keys.retain(|k, _| !(k.graph == graph && k.block == block));
    }

    /// Sets the arrivals at which counting keys stop, from now on (a key
    /// already past it stops at its next arrival).
    pub fn set_threshold(&mut self, threshold: u32) {
        let threshold = threshold.max(1);
        // Counted ahead for a higher threshold, a key would stop late.
        // (Raised, it stops short and counts on, as if counted one by one.)
        if threshold < self.threshold {
            for (graph, block) in std::mem::take(&mut self.armed) {
                if let Some(Some(w)) = self.watched.get_mut(graph as usize).and_then(|g| g.get_mut(block as usize)) {
                    w.disarm();
                    w.listed = false;
                }
            }
        }
        self.threshold = threshold;
    }

    /// Whether block `block` of graph `graph` is watched.
    #[inline]
    pub fn watches(&self, graph: u32, block: u32) -> bool {
        matches!(self.watched.get(graph as usize).and_then(|g| g.get(block as usize)), Some(Some(_)))
    }

    /// The key of arriving at `block` of `graph` with variables `slots`.
    #[inline]
    pub fn key(&self, graph: u32, block: u32, slots: &[Option<Value>]) -> Key {
        self.key_with(graph, block, |s| slots.get(s as usize).cloned().flatten())
    }

    /// The key of arriving at `block` of `graph` where `read` gives the
    /// value of a slot.
    pub fn key_with(&self, graph: u32, block: u32, read: impl Fn(Slot) -> Option<Value>) -> Key {
        let greens = match self.watched.get(graph as usize).and_then(|g| g.get(block as usize)) {
            Some(Some(w)) => w.chain.iter().map(|&s| Green(read(s))).collect(),
            _ => SmallVec::new(),
        };
        Key { graph, block, greens }
    }

    /// Counts an arrival at block `block` of `graph` with variables
    /// `slots`; the key, when the block is watched and the interpreter
    /// should stop there (the key is hot or has code). The interpreter
    /// calls this at every jump, so what most jumps take is inline: the
    /// test that the block is not watched, an arrival counted ahead
    /// ([`Watched::arm`]: a decrement), and the count of a dense key
    /// already seen (no key built); the rest is out of line.
    #[inline(always)]
    pub fn arrive_at(&mut self, graph: u32, block: u32, slots: &[Option<Value>], now: u64) -> Option<Key> {
        let threshold = self.threshold;
        let w = self.watched.get_mut(graph as usize)?.get_mut(block as usize)?.as_mut()?;
        if w.ticks > 0 {
            w.ticks -= 1;
            return None;
        }
        if let Some(e) = w.dense_index(slots).and_then(|k| w.get_mut(k)) {
            if !e.arrive(threshold, now) && w.positions.is_none() {
                if w.chain.is_empty() && w.arm(threshold) {
                    self.armed.push((graph, block));
                }
                return None;
            }
        }
        self.arrive_slow(graph, block, slots, now)
    }

    /// [`Profiler::arrive_at`] past its inline path: a dense key without
    /// an entry yet (counted here), one the inline path counted and found
    /// stopping (not counted again), or any other key.
    #[inline(never)]
    fn arrive_slow(&mut self, graph: u32, block: u32, slots: &[Option<Value>], now: u64) -> Option<Key> {
        let threshold = self.threshold;
        let w = self.watched.get_mut(graph as usize)?.get_mut(block as usize)?.as_mut()?;
        if let Some(k) = w.dense_index(slots) {
            let stop = match w.get(k) {
                // Counted on the inline path, which only comes here for
                // an entry that stops, or at a label with a dispatch tier.
                Some(e) if e.seen => e.stops(threshold),
                _ => {
                    let green = w.single.and_then(|s| slots.get(s as usize)).and_then(Option::as_ref);
                    w.entry(k, green).arrive(threshold, now)
                }
            };
            // A dispatch tier's label stops at every position it counts.
            let tier = w.positions.is_some();
            if tier {
                w.sync(k, threshold);
            }
            return (stop || tier).then(|| Key { graph, block, greens: w.greens(k) });
        }
        let key = self.key(graph, block, slots);
        self.arrive(&key, now).then_some(key)
    }

    /// Counts an arrival at `key` at clock `now`; whether the interpreter
    /// should stop there (the key is hot or has code).
    pub fn arrive(&mut self, key: &Key, now: u64) -> bool {
        let threshold = self.threshold;
        if key.block == CALL {
            return self.arrive_call(key.graph, now) != CallArrival::Pass;
        }
        if self.dense(key).is_none() {
            if let Some(e) = self.keys.get_mut(key) {
                return e.arrive(threshold, now);
            }
            if self.keys.len() >= self.most_sparse && !key.greens.is_empty() && !self.has_tier(key) {
                // Full ([`MOST_SPARSE_KEYS`]): one key here from now on.
                self.drop_greens(key.graph, key.block);
                return false;
            }
        }
        self.entry_or_insert(key).arrive(threshold, now)
    }

    /// Whether `key`'s label has a dispatch tier's tables.
    fn has_tier(&self, key: &Key) -> bool {
        let w = self.watched.get(key.graph as usize).and_then(|g| g.get(key.block as usize));
        matches!(w, Some(Some(w)) if w.positions.is_some())
    }

    /// Where dense key `key` is counted, if it is one: its label's dense
    /// entries and its index.
    fn dense(&self, key: &Key) -> Option<(&Watched, Dense)> {
        let w = self.watched.get(key.graph as usize)?.get(key.block as usize)?.as_deref()?;
        match (&*w.chain, &key.greens[..]) {
            ([], []) => Some((w, Dense::Int(0))),
            ([_], [Green(g)]) => dense_green(g.as_ref()).map(|k| (w, k)),
            _ => None,
        }
    }

    /// The entry of `key`, made unseen if it has none (for a [`CALL`]
    /// key, watching the calls).
    fn entry_or_insert(&mut self, key: &Key) -> &mut Entry {
        if key.block == CALL && (key.graph as usize) < self.calls.len() {
            return self.calls[key.graph as usize].get_or_insert(Entry::UNSEEN);
        }
        let Some((_, k)) = self.dense(key) else {
            return self.keys.entry(key.clone()).or_insert(Entry::UNSEEN);
        };
        let green = key.greens.first().and_then(|g| g.0.as_ref());
        let w = self.watched[key.graph as usize][key.block as usize].as_mut().expect("a watched label");
        w.disarm();
        w.entry(k, green)
    }

    /// The entry of `key`, if it was seen.
    fn entry(&self, key: &Key) -> Option<&Entry> {
        if key.block == CALL && (key.graph as usize) < self.calls.len() {
            return self.calls[key.graph as usize].as_ref().filter(|e| e.seen);
        }
        match self.dense(key) {
            Some((w, k)) => w.get(k).filter(|e| e.seen),
            None => self.keys.get(key),
        }
    }

    /// From now on, `key` behaves as `state` says; a key set back to
    /// counting starts from zero.
    pub fn set(&mut self, key: &Key, state: KeyState) {
        let e = self.entry_or_insert(key);
        e.seen = true;
        e.state = state;
        if state == KeyState::Counting {
            e.count = 0;
            e.skips = 0;
        }
        self.sync(key);
    }

    /// Writes `key`'s word of its label's positions table, if it has one
    /// ([`Profiler::dispatch`]), from its entry.
    fn sync(&mut self, key: &Key) {
        let threshold = self.threshold;
        let Some((_, k)) = self.dense(key) else { return };
        if let Some(w) = self.watched[key.graph as usize][key.block as usize].as_mut() {
            w.sync(k, threshold);
        }
    }

    /// Gives block `block` of graph `graph` a dispatch tier, if it is a
    /// watched label of one green (an interpreter's `pc`, an integer or
    /// an instruction object): tables of its positions, two words per
    /// dense key, that compiled code reads and counts down
    /// ([`Profiler::positions`]), and from now on the interpreter stops at
    /// every arrival there (the driver runs the tier's code for positions
    /// with none of their own). Whether it has one now.
    pub fn dispatch(&mut self, graph: u32, block: u32) -> bool {
        let threshold = self.threshold;
        let Some(Some(w)) = self.watched.get_mut(graph as usize).and_then(|g| g.get_mut(block as usize)) else {
            return false;
        };
        if w.single.is_none() {
            return false;
        }
        if w.positions.is_none() {
            w.positions = Some(Positions {
                ints: w.dense.iter().map(|e| [e.remaining(threshold), 0]).collect(),
                objects: w.objects.iter().map(|e| [e.remaining(threshold), 0]).collect(),
                ints_since: vec![self.clock; w.dense.len()],
                objects_since: vec![self.clock; w.objects.len()],
                unseen: Entry::UNSEEN.remaining(threshold),
                clock: self.clock,
            });
        }
        true
    }

    /// Takes the dispatch tier of block `block` of graph `graph` away: its
    /// table goes, and the interpreter stops there only at keys that are
    /// hot or have code, as before.
    pub fn end_dispatch(&mut self, graph: u32, block: u32) {
        if let Some(Some(w)) = self.watched.get_mut(graph as usize).and_then(|g| g.get_mut(block as usize)) {
            w.positions = None;
        }
    }

    /// Whether block `block` of graph `graph` has a dispatch tier.
    pub fn dispatches(&self, graph: u32, block: u32) -> bool {
        matches!(self.watched.get(graph as usize).and_then(|g| g.get(block as usize)), Some(Some(w)) if w.positions.is_some())
    }

    /// The positions tables of a label with a dispatch tier, for its
    /// integer keys and its object keys: each table's first word and its
    /// length in positions ([`Position`], two words each). They stay where
    /// they are until the profiler next counts an arrival there or is told
    /// of a key's change (which may grow them or drop them).
    pub fn positions(&mut self, graph: u32, block: u32) -> Option<[(std::ptr::NonNull<u64>, usize); 2]> {
        let w = self.watched.get_mut(graph as usize)?.get_mut(block as usize)?.as_mut()?;
        let p = w.positions.as_mut()?;
        let table = |words: &mut Vec<Position>| {
            (std::ptr::NonNull::new(words.as_mut_ptr().cast::<u64>()).expect("a vector"), words.len())
        };
        Some([table(&mut p.ints), table(&mut p.objects)])
    }

    /// The count of dense key `key` in its label's positions tables.
    pub fn position(&self, key: &Key) -> Option<u64> {
        self.position_words(key).map(|w| w[POSITION_COUNT])
    }

    /// The link of dense key `key` in its label's positions tables
    /// ([`Position`]).
    pub fn position_link(&self, key: &Key) -> Option<u64> {
        self.position_words(key).map(|w| w[POSITION_LINK])
    }

    fn position_words(&self, key: &Key) -> Option<Position> {
        let (w, k) = self.dense(key)?;
        let p = w.positions.as_ref()?;
        match k {
            Dense::Int(i) => p.ints.get(i).copied(),
            Dense::Object(i) => p.objects.get(i).copied(),
        }
    }

    /// Links dense key `key`, which has code, to the code slot at address
    /// `slot` (the driver enters that code there now): a dispatch tier
    /// arriving at the position enters it directly ([`Position`]). Not for
    /// a key without code, nor past the table. Whether it is linked now.
    pub fn link(&mut self, key: &Key, slot: u64) -> bool {
        match self.position_mut(key) {
            Some((words, e)) if e.state == KeyState::Enter => {
                words[POSITION_LINK] = slot;
                true
            }
            _ => false,
        }
    }

    /// Clears dense key `key`'s link ([`Profiler::link`]): the code the
    /// driver enters there changed.
    pub fn unlink(&mut self, key: &Key) {
        if let Some((words, _)) = self.position_mut(key) {
            words[POSITION_LINK] = 0;
        }
    }

    /// Dense key `key`'s words in its label's positions table and its
    /// entry, if the label has a table reaching it.
    fn position_mut(&mut self, key: &Key) -> Option<(&mut Position, &mut Entry)> {
        let (_, k) = self.dense(key)?;
        self.watched[key.graph as usize][key.block as usize].as_mut()?.position_mut(k)
    }

    /// The code of `key` is ready to be installed (made on the worker): a
    /// dispatch tier running its position leaves at its next arrival
    /// there (its word 0), and so does the interpreter, for the driver to
    /// install and enter it — not after the arrivals it was asked for
    /// again ([`Profiler::ask_after`]), which in the tier are each worth
    /// [`TIER_ARRIVALS`] of the interpreter's.
    pub fn ready(&mut self, key: &Key) {
        let threshold = self.threshold;
        if let Some((words, e)) = self.position_mut(key) {
            if e.state == KeyState::Counting {
                // Hot now, without a first arrival to judge density by.
                (e.count, e.skips, e.since) = (threshold, 0, NO_CLOCK);
                words[POSITION_COUNT] = 0;
            }
        }
    }

    /// Makes the positions table of `key`'s label (which has a dispatch
    /// tier) reach `key`, a dense integer key past its end: the table and
    /// the entries grow by a quarter of their length or to the key,
    /// whichever is more (the keys there not arrived at yet), so that a
    /// program's positions, first reached by compiled code in order, grow
    /// it a logarithmic number of times ([`REACH_GROWTH`]). Whether it
    /// reaches `key` now.
    pub fn reach(&mut self, key: &Key) -> bool {
        let threshold = self.threshold;
        let Some((w, k)) = self.dense(key) else { return false };
        if w.positions.is_none() {
            return false;
        }
        let w = self.watched[key.graph as usize][key.block as usize].as_mut().expect("a watched label");
        let past = |i: usize, len: usize| i.max(len + len / REACH_GROWTH).min(DENSE_KEYS as usize - 1);
        match k {
            Dense::Int(i) if i >= w.dense.len() => w.grow(past(i, w.dense.len())),
            Dense::Int(_) => {}
            Dense::Object(i) => {
                if i >= w.objects.len() {
                    w.grow_objects(past(i, w.objects.len()));
                }
                // The entry holds its object (a key is made of it).
                let green = key.greens.first().and_then(|g| g.0.as_ref());
                w.entry(k, green);
            }
        }
        w.sync(k, threshold);
        true
    }

    /// Whether the interpreter stops at `key` for itself (hot, or with
    /// code), as its last arrival found: not only because its label has a
    /// dispatch tier.
    pub fn stops(&self, key: &Key) -> bool {
        self.entry(key).is_some_and(|e| e.stops(self.threshold))
    }

    /// Compiled code of a dispatch tier counted `key`'s remaining arrivals
    /// away (its word reached 0), the interpreter's clock being `now`: the
    /// key is hot, as if the interpreter had counted its threshold over
    /// the work the JIT's clock counted since its word was last written
    /// ([`Profiler::since`] says so much before `now`), which judges how
    /// densely it was arrived at in the tier.
    pub fn found_hot(&mut self, key: &Key, now: u64) {
        let threshold = self.threshold;
        let span = self.dense(key).and_then(|(w, k)| {
            let p = w.positions.as_ref()?;
            let since = match k {
                Dense::Int(i) => p.ints_since.get(i),
                Dense::Object(i) => p.objects_since.get(i),
            };
            since.map(|&s| p.clock.saturating_sub(s))
        });
        let e = self.entry_or_insert(key);
        e.seen = true;
        if e.state == KeyState::Counting {
            e.count = threshold;
            e.skips = 0;
            e.since = span.map_or(NO_CLOCK, |span| now.saturating_sub(span));
        }
        self.sync(key);
    }

    /// The JIT's clock now (the work its compile budget counts: statements
    /// interpreted, and those compiled code replaced), by which the
    /// dispatch tier of block `block` of graph `graph` times its positions
    /// ([`Profiler::found_hot`]).
    pub fn set_clock(&mut self, graph: u32, block: u32, clock: u64) {
        self.clock = clock;
        let w = self.watched.get_mut(graph as usize).and_then(|g| g.get_mut(block as usize));
        if let Some(p) = w.and_then(Option::as_mut).and_then(|w| w.positions.as_mut()) {
            p.clock = clock;
        }
    }

    /// Sets `key` counting again after it was found hot but not compiled
    /// (over the JIT's compile budget, or its loop arrived at too sparsely
    /// to pay back), to stop after twice as many
    /// thresholds of arrivals as the last time it was deferred (one, two,
    /// four... at most 128): a key that keeps arriving earns its compile,
    /// one that is short-lived stops asking (thousands of short loops
    /// asked every threshold, and were compiled when they had little left
    /// to run). Returns how many times the key was deferred.
    pub fn defer(&mut self, key: &Key) -> u32 {
        self.defer_at_least(key, 0)
    }

    /// [`Profiler::defer`], to stop no sooner than after `arrivals` more
    /// arrivals (in whole thresholds, at most [`DEFER_AHEAD`] times as
    /// many as doubling says, and 256): the JIT knows
    /// how many more a loop arrived at as sparsely as this one needs
    /// before it could pay back, and a key that asked every threshold,
    /// then twice as late and so on, asked up to four times for nothing
    /// (2,000 functions' 20-round loops: 8,000 trips from the interpreter
    /// to the JIT and back, now 4,000).
    pub fn defer_at_least(&mut self, key: &Key, arrivals: u64) -> u32 {
        let threshold = u64::from(self.threshold.max(1));
        let e = self.entry_or_insert(key);
        e.seen = true;
        e.state = KeyState::Counting;
        e.count = 0;
        let doubling = (1u16 << e.deferrals.min(7)) - 1;
        let wanted = arrivals.div_ceil(threshold).saturating_sub(1).min(u64::from(u8::MAX)) as u16;
        let most = ((doubling + 1) * DEFER_AHEAD - 1).min(u16::from(u8::MAX));
        e.skips = doubling.max(wanted.min(most)) as u8;
        e.deferrals = e.deferrals.saturating_add(1);
        let deferrals = u32::from(e.deferrals);
        self.sync(key);
        deferrals
    }

    /// Sets `key` counting, to stop after `arrivals` more arrivals (at
    /// least one) instead of the threshold's.
    pub fn ask_after(&mut self, key: &Key, arrivals: u32) {
        let threshold = self.threshold;
        let e = self.entry_or_insert(key);
        e.seen = true;
        e.state = KeyState::Counting;
        e.count = threshold.saturating_sub(arrivals.max(1));
        // A count that starts part-way has no first arrival: no clock.
        e.since = NO_CLOCK;
        self.sync(key);
    }

    /// Sets every key that has code ([`KeyState::Enter`]) counting from
    /// zero, and lets every counting key stop at its next threshold (one
    /// deferred while the cache was full, the thresholds it was to let
    /// pass forgotten): a JIT that dropped all its code compiles again
    /// what comes round. Keys given up stay so.
    pub fn forget_code(&mut self) {
        let forget = |e: &mut Entry| match e.state {
            KeyState::Enter => {
                e.state = KeyState::Counting;
                e.count = 0;
                e.skips = 0;
            }
            KeyState::Counting => e.skips = 0,
            KeyState::Ignored => {}
        };
        for w in self.watched.iter_mut().flatten().flatten() {
            w.disarm();
            w.dense.iter_mut().chain(w.objects.iter_mut()).for_each(forget);
            // The dispatch tiers' code is gone too.
            w.positions = None;
        }
        self.calls.iter_mut().flatten().for_each(forget);
        self.keys.values_mut().for_each(forget);
    }

    /// What `key` does now ([`KeyState::Counting`] for keys not seen).
    pub fn state(&self, key: &Key) -> KeyState {
        self.entry(key).map_or(KeyState::Counting, |e| e.state)
    }

    /// Arrivals counted at `key` (since it was last set back to counting).
    pub fn count(&self, key: &Key) -> u32 {
        match self.dense(key) {
            Some((w, k)) => w.get(k).filter(|e| e.seen).map_or(0, |e| w.counted(k, e)),
            None => self.entry(key).map_or(0, |e| e.count),
        }
    }

    /// The clock (the `now` of [`Profiler::arrive_at`]: the interpreter's
    /// statements) at the first of the arrivals [`Profiler::count`] counts:
    /// with the clock now, how densely the key was arrived at, which says
    /// how soon a loop there comes round again ([`Profiler::defer`] and its
    /// skips count from zero again, and so start it again).
    pub fn since(&self, key: &Key) -> Option<u64> {
        self.entry(key).filter(|e| e.count > 0 && e.since != NO_CLOCK).map(|e| e.since)
    }

    /// Every key seen, with its count and state, in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = (Key, u32, KeyState)> + '_ {
        let dense = self.watched.iter().enumerate().flat_map(|(g, blocks)| {
            blocks.iter().enumerate().filter_map(|(b, w)| Some((b, w.as_ref()?))).flat_map(move |(b, w)| {
                let ints = w.dense.iter().enumerate().map(|(i, e)| (Dense::Int(i), e));
                let objects = w.objects.iter().enumerate().map(|(i, e)| (Dense::Object(i), e));
                ints.chain(objects).filter(|(_, e)| e.seen).map(move |(k, e)| {
                    (Key { graph: g as u32, block: b as u32, greens: w.greens(k) }, w.counted(k, e), e.state)
                })
            })
        });
        let calls =
            self.calls.iter().enumerate().filter_map(|(g, e)| Some((g as u32, e.as_ref()?))).filter(|(_, e)| e.seen);
        let calls = calls.map(|(graph, e)| (Key { graph, block: CALL, greens: SmallVec::new() }, e.count, e.state));
        dense.chain(calls).chain(self.keys.iter().map(|(k, e)| (k.clone(), e.count, e.state)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax;
    use crate::Symbol;

    /// A dispatch label with one green (`loop`: `pc`) and one with two
    /// (`pair`: `pc`, `op`).
    const PROGRAM: &str = "
loop:
    promote pc then fetch
fetch:
    pc = pc + 1
    goto pair
pair:
    promote pc then second
second:
    promote op then again
again:
    goto loop
";

    fn profiler() -> (Resolved, Profiler, Vec<u32>) {
        let p = syntax::parse("test", PROGRAM).unwrap_or_else(|e| panic!("{e}"));
        let mut resolved = Resolved::new(&p, &[]);
        let main = &resolved.graphs[0];
        let blocks: Vec<u32> = ["loop", "pair"].iter().map(|l| main.labels[&Symbol::intern(l)]).collect();
        let labels: Vec<(u32, u32)> = blocks.iter().map(|&b| (0, b)).collect();
        let profiler = Profiler::new(&mut resolved, &labels, 3);
        (resolved, profiler, blocks)
    }

    fn slots(resolved: &Resolved, vars: &[(&str, Value)]) -> Vec<Option<Value>> {
        let main = &resolved.graphs[0];
        let mut slots = vec![None; main.slot_names.len()];
        for (name, v) in vars {
            slots[main.slot_of(Symbol::intern(name)).expect("a slot") as usize] = Some(v.clone());
        }
        slots
    }

    /// A block held in reserve is marked (the interpreter's jumps there
    /// ask) but counts nothing; watched from reserve it counts a key per
    /// value of its promote chain, once; unwatched, nothing again.
    #[test]
    fn a_reserved_block_counts_once_watched_and_not_after_unwatched() {
        let p = syntax::parse("test", PROGRAM).unwrap_or_else(|e| panic!("{e}"));
        let mut resolved = Resolved::new(&p, &[]);
        let main = &resolved.graphs[0];
        let (looped, fetch) = (main.labels[&Symbol::intern("loop")], main.labels[&Symbol::intern("fetch")]);
        let mut p = Profiler::new(&mut resolved, &[(0, fetch)], 3);
        p.reserve(&mut resolved, 0, looped);
        let marked = |r: &Resolved| {
            let again = r.graphs[0].labels[&Symbol::intern("again")];
            matches!(r.graphs[0].blocks[again as usize].term, super::super::resolve::CTerm::Jump(super::super::resolve::Target::Watched(b)) if b == looped)
        };
        assert!(marked(&resolved), "the jump to the reserved block asks the profiler");
        let at = |pc: i64| slots(&resolved, &[("pc", Value::Int(pc))]);
        let until_stop = |p: &mut Profiler, pc: i64| (1..=10).find(|_| p.arrive_at(0, looped, &at(pc), 0).is_some());
        assert!(!p.watches(0, looped));
        assert_eq!(until_stop(&mut p, 4), None, "in reserve: nothing counted");
        assert!(p.watch_reserved(0, looped));
        assert!(!p.watch_reserved(0, looped), "taken from reserve once");
        assert_eq!(p.key(0, looped, &at(4)).greens.len(), 1, "keyed by its promote chain");
        assert_eq!(until_stop(&mut p, 4), Some(3));
        assert_eq!(until_stop(&mut p, 5), Some(3), "another value, another key");
        p.unwatch(0, looped);
        assert!(!p.watches(0, looped));
        assert_eq!(until_stop(&mut p, 6), None);
    }

    /// A deferred key stops again after one threshold of arrivals, then
    /// after two, four...: dense and hashed keys alike; set back to
    /// counting, it stops at the next threshold again.
    #[test]
    fn a_deferred_key_asks_twice_as_late_each_time() {
        let (resolved, mut p, blocks) = profiler();
        let looped = blocks[0];
        let big = Value::from_big(num_bigint::BigInt::from(1u64 << 62) * 4);
        for pc in [Value::Int(5), big] {
            let s = slots(&resolved, &[("pc", pc)]);
            // Arrivals until the key stops (the threshold is 3).
            let until_stop = |p: &mut Profiler| (1..=1000).find(|_| p.arrive_at(0, looped, &s, 0).is_some());
            let key = p.key(0, looped, &s);
            assert_eq!(until_stop(&mut p), Some(3));
            for (deferrals, wait) in [(1, 3), (2, 6), (3, 12), (4, 24)] {
                assert_eq!(p.defer(&key), deferrals);
                assert_eq!(until_stop(&mut p), Some(wait), "after {deferrals} deferrals");
            }
            p.set(&key, KeyState::Counting);
            assert_eq!(until_stop(&mut p), Some(3), "counting again from the threshold");
        }
    }

    /// A key deferred for at least some arrivals stops after the whole
    /// thresholds that cover them, unless doubling says later; at most
    /// [`DEFER_AHEAD`] times as many as doubling says.
    #[test]
    fn a_key_deferred_for_arrivals_asks_no_sooner() {
        let (resolved, mut p, blocks) = profiler();
        let s = slots(&resolved, &[("pc", Value::Int(5))]);
        let until_stop = |p: &mut Profiler| (1..=10_000).find(|_| p.arrive_at(0, blocks[0], &s, 0).is_some());
        let key = p.key(0, blocks[0], &s);
        assert_eq!(until_stop(&mut p), Some(3));
        // Ten arrivals: four thresholds of 3 (doubling alone: one).
        assert_eq!(p.defer_at_least(&key, 10), 1);
        assert_eq!(until_stop(&mut p), Some(12));
        // Fewer than doubling asks for (two thresholds): doubling.
        assert_eq!(p.defer_at_least(&key, 1), 2);
        assert_eq!(until_stop(&mut p), Some(6));
        // At most four times what doubling says (four thresholds: 16).
        assert_eq!(p.defer_at_least(&key, u64::MAX), 3);
        assert_eq!(until_stop(&mut p), Some(3 * 16));
    }

    /// A dispatch tier's table of positions follows the keys' entries:
    /// what is left of a counting key's threshold, [`TIER_ARRIVALS`] to an
    /// arrival; 0 at a key with code; no end at one given up. The label
    /// then stops at every arrival; the table grows to positions compiled
    /// code reaches first, and goes with the code.
    #[test]
    fn a_dispatch_tier_keeps_its_positions_in_step_with_the_keys() {
        let (resolved, mut p, blocks) = profiler();
        let (looped, pair) = (blocks[0], blocks[1]);
        let at = |pc: i64| slots(&resolved, &[("pc", Value::Int(pc))]);
        let key = |pc: i64| p.key(0, looped, &at(pc));
        let (two, nine) = (key(2), key(9));
        assert!(p.arrive_at(0, looped, &at(2), 0).is_none(), "below the threshold (3)");
        assert!(!p.dispatch(0, pair), "a label of two greens has no tier");
        assert!(p.dispatch(0, looped));
        assert!(p.dispatches(0, looped));
        assert_eq!(p.position(&two), Some(2 * TIER_ARRIVALS), "one arrival of three counted");
        assert_eq!(p.arrive_at(0, looped, &at(2), 1), Some(two.clone()), "the tier's label stops at every arrival");
        assert!(!p.stops(&two), "not for itself");
        assert_eq!(p.position(&two), Some(TIER_ARRIVALS));
        p.set(&two, KeyState::Enter);
        assert_eq!(p.position(&two), Some(0));
        p.set(&two, KeyState::Ignored);
        assert_eq!(p.position(&two), Some(u64::MAX));
        // A position past the table: grown to it (and by a quarter of
        // its length), counting from the threshold.
        assert_eq!(p.position(&nine), None);
        assert!(p.reach(&nine));
        assert_eq!(p.position(&nine), Some(3 * TIER_ARRIVALS));
        assert_eq!(p.positions(0, looped).map(|[(_, n), _]| n), Some(10));
        // Counted away by compiled code: hot; deferred: asks a threshold later.
        p.found_hot(&nine, 0);
        assert!(p.stops(&nine));
        assert_eq!(p.defer(&nine), 1);
        assert_eq!(p.position(&nine), Some(3 * TIER_ARRIVALS));
        p.forget_code();
        assert!(!p.dispatches(0, looped));
        assert_eq!(p.position(&nine), None);
    }

    /// Positions compiled code reaches one after another past the end of
    /// a dispatch tier's table grow it by a quarter at a time
    /// ([`REACH_GROWTH`]): a logarithmic number of times, and never to
    /// more than a quarter past the last position reached.
    #[test]
    fn a_positions_table_grows_by_a_quarter() {
        let (resolved, mut p, blocks) = profiler();
        let looped = blocks[0];
        let at = |pc: i64| slots(&resolved, &[("pc", Value::Int(pc))]);
        assert!(p.arrive_at(0, looped, &at(2), 0).is_none());
        assert!(p.dispatch(0, looped));
        let len = |p: &mut Profiler| p.positions(0, looped).map_or(0, |[(_, n), _]| n);
        let (mut grown, mut last) = (0, len(&mut p));
        for pc in 3..=20_000 {
            let key = p.key(0, looped, &at(pc));
            if p.position(&key).is_none() {
                assert!(p.reach(&key));
                grown += 1;
            }
            assert_eq!(p.position(&key), Some(3 * TIER_ARRIVALS), "position {pc} counts from the threshold");
            let n = len(&mut p);
            assert!(n > pc as usize && n <= pc as usize + pc as usize / REACH_GROWTH + 1, "{n} for {pc}");
            last = last.max(n);
        }
        assert!((30..=45).contains(&grown), "grown {grown} times to {last}");
    }

    /// A position's link is set only while its key has code, stays while
    /// it does (arrivals there rewrite its count), and goes when the key
    /// stops having code or the JIT says its code changed.
    #[test]
    fn a_positions_link_lasts_while_its_key_has_code() {
        let (resolved, mut p, blocks) = profiler();
        let looped = blocks[0];
        let at = |pc: i64| slots(&resolved, &[("pc", Value::Int(pc))]);
        let two = p.key(0, looped, &at(2));
        assert!(p.arrive_at(0, looped, &at(2), 0).is_none(), "below the threshold (3)");
        assert!(p.dispatch(0, looped));
        assert!(!p.link(&two, 0x1000), "no code, no link");
        assert_eq!(p.position_link(&two), Some(0));
        p.set(&two, KeyState::Enter);
        assert!(p.link(&two, 0x1000));
        assert_eq!(p.arrive_at(0, looped, &at(2), 1), Some(two.clone()));
        assert_eq!((p.position(&two), p.position_link(&two)), (Some(0), Some(0x1000)), "kept by an arrival");
        p.unlink(&two);
        assert_eq!(p.position_link(&two), Some(0));
        assert!(p.link(&two, 0x2000));
        p.set(&two, KeyState::Counting);
        assert_eq!(p.position_link(&two), Some(0), "gone with the code");
        assert_ne!(p.position(&two), Some(0));
    }

    /// A key whose code is ready (made on the worker while the tier ran
    /// its position, asked again for after some arrivals) stops at its
    /// next arrival, in the tier (its word 0) and in the interpreter; a
    /// key with code or given up is left as it is.
    #[test]
    fn a_position_whose_code_is_ready_stops_at_its_next_arrival() {
        let (resolved, mut p, blocks) = profiler();
        let looped = blocks[0];
        let at = |pc: i64| slots(&resolved, &[("pc", Value::Int(pc))]);
        let key = |pc: i64| p.key(0, looped, &at(pc));
        let (two, three, four) = (key(2), key(3), key(4));
        assert!(p.dispatch(0, looped));
        p.ask_after(&two, 2);
        assert_eq!(p.position(&two), Some(2 * TIER_ARRIVALS), "asked for again two arrivals later");
        assert!(!p.stops(&two));
        p.ready(&two);
        assert_eq!(p.position(&two), Some(0), "the tier leaves at its next arrival");
        assert!(p.stops(&two), "and so does the interpreter");
        p.set(&three, KeyState::Enter);
        p.ready(&three);
        assert_eq!(p.state(&three), KeyState::Enter);
        assert_eq!(p.position(&three), Some(0));
        p.set(&four, KeyState::Ignored);
        p.ready(&four);
        assert_eq!(p.position(&four), Some(u64::MAX), "a key given up is not asked for");
        assert!(!p.stops(&four));
    }

    /// Forgetting code (a JIT that flushed its cache): a key that had
    /// code counts from zero to its threshold again, a deferred key stops
    /// at its next threshold, a key given up stays so — dense keys (small
    /// integers) and hashed ones (a big integer) alike.
    #[test]
    fn forgetting_code_sets_keys_counting_again() {
        let (resolved, mut p, blocks) = profiler();
        let looped = blocks[0];
        let big = Value::from_big(num_bigint::BigInt::from(1u64 << 62) * 4);
        let keys: Vec<Vec<Option<Value>>> = [Value::Int(1), Value::Int(2), Value::Int(3), big]
            .into_iter()
            .map(|pc| slots(&resolved, &[("pc", pc)]))
            .collect();
        let until_stop =
            |p: &mut Profiler, s: &[Option<Value>]| (1..=100).find(|_| p.arrive_at(0, looped, s, 0).is_some());
        let [compiled, deferred, ignored, hashed] = [0, 1, 2, 3].map(|k| p.key(0, looped, &keys[k]));
        p.set(&compiled, KeyState::Enter);
        p.set(&hashed, KeyState::Enter);
        p.set(&ignored, KeyState::Ignored);
        for _ in 0..4 {
            p.defer(&deferred);
        }
        assert_eq!(until_stop(&mut p, &keys[0]), Some(1), "a key with code stops at once");
        p.forget_code();
        for (k, key) in [(0, &compiled), (3, &hashed)] {
            assert_eq!(p.state(key), KeyState::Counting);
            assert_eq!(until_stop(&mut p, &keys[k]), Some(3), "key {k} counts to its threshold again");
        }
        assert_eq!(until_stop(&mut p, &keys[1]), Some(3), "the deferred key's skips are forgotten");
        assert_eq!(p.state(&ignored), KeyState::Ignored);
        assert_eq!(until_stop(&mut p, &keys[2]), None);
    }

    /// A key's count keeps the clock of its first arrival: how densely
    /// the key is arrived at, from the first counted arrival to the stop;
    /// counting from zero again (a deferral, one of its skips) starts it
    /// again.
    /// A label whose greens are dropped (a megamorphic promotion) counts
    /// every arrival as one key, without greens, whatever its variable
    /// holds; what was counted per value there is forgotten.
    #[test]
    fn a_label_without_its_greens_counts_one_key() {
        let (resolved, mut p, blocks) = profiler();
        let looped = blocks[0];
        let big = Value::from_big(num_bigint::BigInt::from(1u64 << 62) * 4);
        let values = [Value::Int(1), Value::Int(2), big];
        let all: Vec<Vec<Option<Value>>> = values.iter().map(|v| slots(&resolved, &[("pc", v.clone())])).collect();
        for s in &all {
            assert_eq!(p.arrive_at(0, looped, s, 0), None, "one arrival per value: none hot");
        }
        assert_eq!(p.keys().count(), 3);
        p.drop_greens(0, looped);
        assert_eq!(p.keys().count(), 0, "the counts per value are forgotten");
        let one = Key { graph: 0, block: looped, greens: SmallVec::new() };
        assert_eq!(p.key(0, looped, &all[2]), one);
        assert_eq!(p.arrive_at(0, looped, &all[0], 0), None);
        assert_eq!(p.arrive_at(0, looped, &all[1], 0), None);
        assert_eq!(p.arrive_at(0, looped, &all[2], 0), Some(one), "three values, one key: hot at the threshold");
    }

    #[test]
    fn a_count_keeps_the_clock_of_its_first_arrival() {
        let (resolved, mut p, blocks) = profiler();
        let looped = blocks[0];
        let s = slots(&resolved, &[("pc", Value::Int(4))]);
        let key = p.key(0, looped, &s);
        assert_eq!(p.since(&key), None, "nothing counted");
        assert_eq!(p.arrive_at(0, looped, &s, 10), None);
        assert_eq!(p.since(&key), Some(10));
        assert_eq!(p.arrive_at(0, looped, &s, 20), None);
        assert!(p.arrive_at(0, looped, &s, 30).is_some(), "hot at the threshold");
        assert_eq!(p.since(&key), Some(10));
        p.defer(&key);
        assert_eq!(p.since(&key), None, "deferred: counting from zero");
        for now in [100, 110] {
            assert_eq!(p.arrive_at(0, looped, &s, now), None);
        }
        assert!(p.arrive_at(0, looped, &s, 120).is_some());
        assert_eq!(p.since(&key), Some(100));
        // Deferred twice, the key lets one threshold pass: its count
        // starts again after it.
        p.defer(&key);
        for now in [200, 210, 220, 300, 310] {
            assert_eq!(p.arrive_at(0, looped, &s, now), None);
        }
        assert!(p.arrive_at(0, looped, &s, 320).is_some());
        assert_eq!(p.since(&key), Some(300));
        // Asked for after one more arrival: a count set part-way, with no
        // first arrival, has no clock until it starts from zero again.
        p.ask_after(&key, 1);
        assert_eq!(p.since(&key), None);
        assert!(p.arrive_at(0, looped, &s, 400).is_some());
        assert_eq!(p.since(&key), None);
        p.defer(&key);
        assert_eq!(p.arrive_at(0, looped, &s, 500), None);
        assert_eq!(p.since(&key), Some(500));
    }

    /// A label without greens counts ahead ([`Watched::arm`]), which no
    /// one may notice: driven through the same arrivals, deferrals,
    /// resets, asks, threshold changes, code and code forgotten as a
    /// profiler that counts each arrival as it comes
    /// ([`Profiler::arrive`], which never counts ahead), it stops on the
    /// same arrivals and reports the same counts, clocks and states at
    /// every step.
    #[test]
    fn counting_ahead_at_a_label_without_greens_is_not_seen() {
        let program = syntax::parse("test", "start:\n    goto head\nhead:\n    i = i + 1\n    goto head\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let mut resolved = Resolved::new(&program, &[]);
        let head = resolved.graphs[0].labels[&Symbol::intern("head")];
        let mut ahead = Profiler::new(&mut resolved, &[(0, head)], 10);
        let mut one_by_one = ahead.clone();
        let s = vec![None; resolved.graphs[0].slot_names.len()];
        let key = ahead.key(0, head, &s);
        // A fixed pseudo-random walk over what a JIT does to a key.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let (mut stops, mut counted_ahead) = (0, 0);
        for now in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match x % 100 {
                0 => {
                    assert_eq!(ahead.defer(&key), one_by_one.defer(&key), "at {now}");
                }
                1 => {
                    ahead.set(&key, KeyState::Counting);
                    one_by_one.set(&key, KeyState::Counting);
                }
                2 => {
                    let n = (x >> 8) as u32 % 12;
                    ahead.ask_after(&key, n);
                    one_by_one.ask_after(&key, n);
                }
                3 => {
                    let t = 2 + (x >> 8) as u32 % 20;
                    ahead.set_threshold(t);
                    one_by_one.set_threshold(t);
                }
                // Code for the key, and all code forgotten.
                4 => {
                    ahead.set(&key, KeyState::Enter);
                    one_by_one.set(&key, KeyState::Enter);
                }
                5 | 6 => {
                    ahead.forget_code();
                    one_by_one.forget_code();
                }
                _ => {
                    let stop = ahead.arrive_at(0, head, &s, now).is_some();
                    assert_eq!(stop, one_by_one.arrive(&key, now), "arrival at {now}");
                    stops += usize::from(stop);
                    counted_ahead += usize::from(ahead.watched[0][head as usize].as_ref().unwrap().ticks > 0);
                    if stop {
                        // What the JIT does with a key it finds hot and does
                        // not compile.
                        ahead.defer(&key);
                        one_by_one.defer(&key);
                    }
                }
            }
            assert_eq!(ahead.count(&key), one_by_one.count(&key), "count at {now}");
            assert_eq!(ahead.since(&key), one_by_one.since(&key), "clock at {now}");
            assert_eq!(ahead.stops(&key), one_by_one.stops(&key), "stops at {now}");
            assert_eq!(ahead.state(&key), one_by_one.state(&key), "state at {now}");
        }
        let counts = |p: &Profiler| p.keys().collect::<Vec<_>>();
        assert_eq!(counts(&ahead), counts(&one_by_one));
        assert!(stops > 100, "the walk stopped {stops} times");
        assert!(counted_ahead > 10_000, "counted ahead on only {counted_ahead} arrivals");
    }

    #[test]
    fn dense_and_hashed_keys_count_alike() {
        let (resolved, mut p, blocks) = profiler();
        let (looped, pair) = (blocks[0], blocks[1]);
        // `pc` 7 is a dense key, -7 and a big integer are hashed: each
        // gets hot at its third arrival, and not before.
        let big = Value::from_big(num_bigint::BigInt::from(1u64 << 62) * 4);
        for pc in [Value::Int(7), Value::Int(-7), big] {
            let s = slots(&resolved, &[("pc", pc.clone())]);
            assert_eq!(p.arrive_at(0, looped, &s, 0), None);
            assert_eq!(p.arrive_at(0, looped, &s, 0), None);
            let key = p.arrive_at(0, looped, &s, 0).expect("hot at the threshold");
            assert_eq!(key, p.key(0, looped, &s));
            assert_eq!((p.count(&key), p.state(&key)), (3, KeyState::Counting));
            p.set(&key, KeyState::Ignored);
            assert_eq!(p.arrive_at(0, looped, &s, 0), None, "an ignored key never stops");
            p.set(&key, KeyState::Enter);
            assert!(p.arrive(&key, 0), "a key with code stops at once");
        }
        // Two greens: always hashed.
        let s = slots(&resolved, &[("pc", Value::Int(1)), ("op", Value::Int(2))]);
        for _ in 0..2 {
            assert_eq!(p.arrive_at(0, pair, &s, 0), None);
        }
        // A block not watched counts nothing and never stops.
        let fetch = resolved.graphs[0].labels[&Symbol::intern("fetch")];
        for _ in 0..5 {
            assert_eq!(p.arrive_at(0, fetch, &s, 0), None);
        }
        // A key set before any arrival is seen; one never reached is not.
        let unseen = p.key(0, looped, &slots(&resolved, &[("pc", Value::Int(3))]));
        assert_eq!((p.count(&unseen), p.state(&unseen)), (0, KeyState::Counting));
        let set = p.key(0, looped, &slots(&resolved, &[("pc", Value::Int(2))]));
        p.set(&set, KeyState::Ignored);
        let mut seen: Vec<(String, u32, KeyState)> =
            p.keys().map(|(k, n, state)| (format!("{}/{}/{:?}", k.graph, k.block, k.greens), n, state)).collect();
        seen.sort_by(|a, b| a.0.cmp(&b.0));
        let expected = [
            (pair, "[Green(Some(1)), Green(Some(2))]", 2, KeyState::Counting),
            (looped, "[Green(Some(18446744073709551616))]", 3, KeyState::Enter),
            (looped, "[Green(Some(-7))]", 3, KeyState::Enter),
            (looped, "[Green(Some(2))]", 0, KeyState::Ignored),
            (looped, "[Green(Some(7))]", 3, KeyState::Enter),
        ];
        let mut expected: Vec<(String, u32, KeyState)> =
            expected.iter().map(|&(b, g, n, s)| (format!("0/{b}/{g}"), n, s)).collect();
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(seen, expected);
    }

    /// An object held in a one-green label's variable (an interpreter's
    /// promoted instruction object) is a dense key by its allocation
    /// number, counted as integers are, and the key made when it stops is
    /// that object — also for an entry the vectors grew past before it
    /// was arrived at (object 9 first, then 5). An object numbered past
    /// the dense range is hashed, and counts alike.
    #[test]
    fn objects_are_dense_keys_and_their_keys_hold_them() {
        let (resolved, mut p, blocks) = profiler();
        let looped = blocks[0];
        let layout = crate::heap::layout::Layout::of([Symbol::intern("next")]);
        let class = Symbol::intern("inc");
        let objects: Vec<Value> =
            [9, 5, 1 << 20].iter().map(|&id| crate::interp::objects::new_object(id, class, layout)).collect();
        for (k, o) in objects.iter().enumerate() {
            let s = slots(&resolved, &[("pc", o.clone())]);
            assert_eq!(p.arrive_at(0, looped, &s, 0), None);
            assert_eq!(p.arrive_at(0, looped, &s, 0), None);
            let key = p.arrive_at(0, looped, &s, 0).expect("hot at the threshold");
            assert_eq!(key, p.key(0, looped, &s), "object {k}");
            assert_eq!(key.greens[0].0.as_ref(), Some(o), "object {k}");
            assert_eq!(p.count(&key), 3);
            p.set(&key, KeyState::Enter);
            assert!(p.arrive_at(0, looped, &s, 0).is_some(), "a key with code stops at once");
        }
        let mut held: Vec<u64> = p
            .keys()
            .filter_map(|(k, _, state)| match (&k.greens[0].0, state) {
                (Some(Value::Object(o)), KeyState::Enter) => Some(o.id()),
                _ => None,
            })
            .collect();
        held.sort_unstable();
        assert_eq!(held, [5, 9, 1 << 20]);
    }

    /// Watching a label makes every jump there a [`Target::Watched`] — a
    /// `goto`, either side of an `if`, a call's return — and no other;
    /// the interpreter counts an arrival on each and stops at the key's
    /// threshold, with the frames about to run the label.
    #[test]
    fn every_way_into_a_watched_label_is_counted() {
        use super::super::resolve::{CTerm, Target};
        use super::super::run::{Config, Machine, Step};
        let p = syntax::parse(
            "test",
            "
function id(x):
    s:
        return x
start:
    i = 0
    goto head
head:
    i = i + 1
    c = i % 2
    if c goto odd else goto head
odd:
    y = call id(i) then head
",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut resolved = Resolved::new(&p, &[]);
        let label = |c: &Resolved, l: &str| c.graphs[0].labels[&Symbol::intern(l)];
        let head = label(&resolved, "head");
        let profiler = Profiler::new(&mut resolved, &[(0, head)], 4);
        let watched = |t: &Target| matches!(t, Target::Watched(b) if *b == head);
        let main = &resolved.graphs[0];
        let terms: Vec<&CTerm> =
            ["start", "head", "odd"].iter().map(|l| &main.blocks[label(&resolved, l) as usize].term).collect();
        assert!(matches!(terms[0], CTerm::Jump(t) if watched(t)), "{:?}", terms[0]);
        assert!(
            matches!(terms[1], CTerm::If { then_t: Target::Block(_), else_t, .. } if watched(else_t)),
            "{:?}",
            terms[1]
        );
        assert!(matches!(terms[2], CTerm::Call { next, .. } if watched(next)), "{:?}", terms[2]);
        assert!(main.blocks[head as usize].watched && !main.blocks[label(&resolved, "odd") as usize].watched);
        assert!(matches!(resolved.graphs[0].target(Symbol::intern("head")), Target::Watched(b) if b == head));
        // Arrivals: the goto from start (i = 0), the return after i = 1,
        // the else side after i = 2, the return after i = 3: hot.
        let mut machine = Machine::new(&p, &resolved, &Config::default());
        machine.set_profiler(profiler);
        match machine.run_hot(Symbol::intern("start"), &[]) {
            Ok(Step::Hot { key, block, stack }) => {
                assert_eq!((key.graph, key.block, block), (0, head, head));
                let main = &resolved.graphs[0];
                let i = stack.last().expect("a frame").slots[main.slot_of(Symbol::intern("i")).expect("i") as usize]
                    .clone();
                assert_eq!(i, Some(Value::Int(3)));
            }
            other => panic!("not hot at the fourth arrival: {other:?}"),
        }
    }

    /// A promotion that keeps taking values no dense key counts (here
    /// atoms) fills the map of other keys to its bound; the label then
    /// counts one key, which gets hot like any.
    #[test]
    fn a_label_whose_keys_fill_the_map_counts_one_key() {
        let (resolved, mut p, blocks) = profiler();
        p.set_most_sparse_keys(4);
        let at = |k: usize| slots(&resolved, &[("pc", Value::atom(&format!("v{k}")))]);
        for k in 0..4 {
            assert_eq!(p.arrive_at(0, blocks[0], &at(k), 0), None);
        }
        assert_eq!(p.keys.len(), 4);
        assert!(!p.key(0, blocks[0], &at(0)).greens.is_empty());
        assert_eq!(p.arrive_at(0, blocks[0], &at(4), 0), None, "the fifth key finds the map full");
        assert!(p.keys.is_empty(), "the label's keys are dropped");
        let one = p.key(0, blocks[0], &at(5));
        assert!(one.greens.is_empty());
        assert_eq!(p.arrive_at(0, blocks[0], &at(6), 0), None);
        assert_eq!(p.arrive_at(0, blocks[0], &at(7), 0), None);
        assert_eq!(p.arrive_at(0, blocks[0], &at(8), 0), Some(one), "one key, hot at the threshold");
    }

    #[test]
    fn a_label_without_promotes_has_one_key_counted_in_place() {
        let p = syntax::parse("test", PROGRAM).unwrap_or_else(|e| panic!("{e}"));
        let mut resolved = Resolved::new(&p, &[]);
        let fetch = resolved.graphs[0].labels[&Symbol::intern("fetch")];
        let mut p = Profiler::new(&mut resolved, &[(0, fetch)], 3);
        // Whatever the variables hold, the label is one key, with no
        // greens; it is not hashed.
        let a = slots(&resolved, &[("pc", Value::Int(1))]);
        let b = slots(&resolved, &[("pc", Value::atom("x"))]);
        assert_eq!(p.arrive_at(0, fetch, &a, 0), None);
        assert_eq!(p.arrive_at(0, fetch, &b, 0), None);
        let key = p.arrive_at(0, fetch, &a, 0).expect("hot at the threshold");
        assert_eq!(key, Key { graph: 0, block: fetch, greens: SmallVec::new() });
        assert_eq!(key, p.key(0, fetch, &b));
        assert!(p.keys.is_empty(), "counted in the label's own entry");
        assert_eq!((p.count(&key), p.state(&key)), (3, KeyState::Counting));
        p.set(&key, KeyState::Ignored);
        assert_eq!(p.arrive_at(0, fetch, &a, 0), None, "an ignored key never stops");
        p.set(&key, KeyState::Enter);
        assert!(p.arrive_at(0, fetch, &b, 0).is_some(), "a key with code stops at once");
        let seen: Vec<(Key, u32, KeyState)> = p.keys().collect();
        assert_eq!(seen, [(key, 3, KeyState::Enter)]);
    }

    /// A function's calls are watched from the start (a [`CALL`] label)
    /// or from any point on ([`Profiler::watch_calls`]); unwatched calls
    /// pass, watched ones count to the threshold, and a key with code
    /// hands its calls to compiled code. They are counted per graph, not
    /// hashed, and listed with the other keys.
    #[test]
    fn calls_are_watched_from_the_start_or_later() {
        let text = "function f(x):\n    s:\n        return x\n\nfunction g(x):\n    s:\n        return x\n\nstart:\n    goto start\n";
        let p = syntax::parse("test", text).unwrap_or_else(|e| panic!("{e}"));
        let mut resolved = Resolved::new(&p, &[]);
        let (f, g) = (resolved.functions[&Symbol::intern("f")], resolved.functions[&Symbol::intern("g")]);
        let mut p = Profiler::new(&mut resolved, &[(f, CALL)], 3);
        let calls = |p: &mut Profiler, graph| -> Vec<CallArrival> { (0..3).map(|_| p.arrive_call(graph, 0)).collect() };
        use CallArrival::{Compiled, Pass, Stop};
        assert_eq!(calls(&mut p, f), [Pass, Pass, Stop]);
        assert!(!p.watches_calls(g));
        assert_eq!(calls(&mut p, g), [Pass, Pass, Pass], "unwatched");
        p.watch_calls(g);
        assert_eq!(calls(&mut p, g), [Pass, Pass, Stop], "counted from zero once watched");
        let key = Key { graph: g, block: CALL, greens: SmallVec::new() };
        p.set(&key, KeyState::Enter);
        assert_eq!(calls(&mut p, g), [Compiled, Compiled, Compiled]);
        assert!(p.arrive(&key, 0), "a key with code stops a run that asks by key");
        p.set(&key, KeyState::Ignored);
        assert_eq!(calls(&mut p, g), [Pass, Pass, Pass]);
        assert!(p.keys.is_empty(), "counted per graph");
        let mut seen: Vec<(u32, u32, KeyState)> = p.keys().map(|(k, n, s)| (k.graph, n, s)).collect();
        seen.sort_by_key(|s| s.0);
        assert_eq!(seen, [(f, 3, KeyState::Counting), (g, 3, KeyState::Ignored)]);
        p.forget_code();
        p.watch_calls(g);
        assert_eq!(p.state(&key), KeyState::Ignored, "watching again keeps what was decided");
    }
}
