//! What the JIT made, for tools that show it (`flowc explore`): every
//! piece of compiled code with its optimized trace IR, its final machine
//! code and the places of that code, and each exit with the times it was
//! taken.

use flowc_codegen::{FunctionCode, TraceCache, TraceId};
use flowc_ir::{BlockId, Function, ResumeId};
use flowc_lang::Symbol;

use super::Jit;

/// One piece of compiled code.
pub struct CodeView<'j> {
    /// `loop`, `entry`, `bridge` or `loop body` (as in the stats).
    pub kind: &'static str,
    /// The label it starts at (for a bridge: the label of the code it
    /// left).
    pub anchor: Symbol,
    /// Where it starts, as the stats say it (`dispatch[pc=2]`, `exit 3 of
    /// dispatch`).
    pub start: String,
    pub function: &'j Function,
    pub machine: FunctionCode,
    pub entries: u64,
    pub iterations: u64,
    pub exits: Vec<ExitView>,
}

/// One exit of compiled code: a guard (found by its resume record) or the
/// `exit` ending a block.
pub struct ExitView {
    pub resume: ResumeId,
    pub block: BlockId,
    pub guard: bool,
    /// Where it resumes.
    pub label: Symbol,
    /// Times it returned to the driver, and times it continued in its
    /// bridge.
    pub to_driver: u64,
    pub linked: u64,
    /// Whether it jumps straight into its bridge, which runs in this
    /// code's frame (those crossings are not counted).
    pub direct: bool,
    /// The bridge attached to it, by name.
    pub bridge: Option<Symbol>,
    /// Why it has none, where it never will.
    pub no_bridge: Option<super::NoBridge>,
}

impl Jit<'_> {
    /// The exits of code `t`, in the order the code made them, with the
    /// times each was taken (what the stats report too).
    pub(super) fn exit_views(&self, cache: &TraceCache, t: TraceId) -> Vec<ExitView> {
        cache
            .exits_of(t)
            .into_iter()
            .map(|e| {
                let (exit, _) = cache.exit(e);
                let state = self.exits.get(e.0 as usize).and_then(Option::as_ref);
                ExitView {
                    resume: exit.resume,
                    block: exit.block,
                    guard: exit.guard,
                    label: exit.label,
                    to_driver: state.map_or(0, |s| s.to_driver),
                    linked: cache.linked_failures(e),
                    direct: cache.linked_directly(e),
                    bridge: state.and_then(|s| s.bridge).map(|b| self.codes[b.0 as usize].function.name),
                    no_bridge: state
                        .filter(|s| s.bridge.is_none())
                        .and_then(|s| s.refused.or(s.exit.cold.then_some(super::NoBridge::Cold))),
                }
            })
            .collect()
    }

    /// Every piece of code compiled so far, in the order made, except
    /// that a loop's body follows its preamble (as in the stats).
    pub fn views(&self) -> Vec<CodeView<'_>> {
        let Some(cache) = &self.cache else { return Vec::new() };
        self.report_order()
            .into_iter()
            .map(|k| {
                let code = &self.codes[k];
                let t = TraceId(k as u32);
                let exits = self.exit_views(cache, t);
                CodeView {
                    kind: code.kind.name(),
                    anchor: code.anchor,
                    start: code.start.clone(),
                    function: &code.function,
                    machine: cache.code(t),
                    entries: code.entries,
                    iterations: code.iterations,
                    exits,
                }
            })
            .collect()
    }
}
