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

use super::compile::{Compiled, Slot};
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
/// `k + 1` the `k`-th function, as in [`Compiled`]) with the values of its
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
}

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
#[derive(Clone, Debug)]
pub struct Profiler {
    /// Per graph, per block: its green slots when the block is watched.
    watched: Vec<Vec<Option<Box<[Slot]>>>>,
    /// Per graph: whether its calls are watched.
    calls: Vec<bool>,
    keys: KeyMap<Entry>,
    threshold: u32,
}

impl Profiler {
    /// Watches `labels` (per graph, block indices of `compiled`, or
    /// [`CALL`] for the graph's calls); a key gets hot at its
    /// `threshold`-th arrival.
    pub fn new(compiled: &Compiled, labels: &[(u32, u32)], threshold: u32) -> Profiler {
        let mut watched: Vec<Vec<Option<Box<[Slot]>>>> =
            compiled.graphs.iter().map(|g| vec![None; g.blocks.len()]).collect();
        let mut calls = vec![false; compiled.graphs.len()];
        for &(g, b) in labels {
            if b == CALL {
                if let Some(c) = calls.get_mut(g as usize) {
                    *c = true;
                }
            } else if let Some(slot) = watched.get_mut(g as usize).and_then(|blocks| blocks.get_mut(b as usize)) {
                *slot = Some(compiled.graphs[g as usize].promote_chain(b).into_boxed_slice());
            }
        }
        Profiler { watched, calls, keys: HashMap::default(), threshold: threshold.max(1) }
    }

    /// Whether calls of graph `graph` are watched.
    #[inline]
    pub fn watches_calls(&self, graph: u32) -> bool {
        self.calls.get(graph as usize).copied().unwrap_or(false)
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
            Some(Some(chain)) => chain.iter().map(|&s| Green(read(s))).collect(),
            _ => SmallVec::new(),
        };
        Key { graph, block, greens }
    }

    /// Counts an arrival at `key`; whether the interpreter should stop
    /// there (the key is hot or has code).
    pub fn arrive(&mut self, key: &Key) -> bool {
        if let Some(e) = self.keys.get_mut(key) {
            return match e.state {
                KeyState::Enter => true,
                KeyState::Ignored => false,
                KeyState::Counting => {
                    e.count += 1;
                    e.count >= self.threshold
                }
            };
        }
        self.keys.insert(key.clone(), Entry { count: 1, state: KeyState::Counting });
        self.threshold <= 1
    }

    /// From now on, `key` behaves as `state` says; a key set back to
    /// counting starts from zero.
    pub fn set(&mut self, key: &Key, state: KeyState) {
        let e = self.keys.entry(key.clone()).or_insert(Entry { count: 0, state });
        e.state = state;
        if state == KeyState::Counting {
            e.count = 0;
        }
    }

    /// What `key` does now ([`KeyState::Counting`] for keys not seen).
    pub fn state(&self, key: &Key) -> KeyState {
        self.keys.get(key).map_or(KeyState::Counting, |e| e.state)
    }

    /// Arrivals counted at `key` (since it was last set back to counting).
    pub fn count(&self, key: &Key) -> u32 {
        self.keys.get(key).map_or(0, |e| e.count)
    }

    /// Every key seen, with its count and state, in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = (&Key, u32, KeyState)> {
        self.keys.iter().map(|(k, e)| (k, e.count, e.state))
    }
}
