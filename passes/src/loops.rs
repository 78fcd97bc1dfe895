//! Pass `loops`: the dominator tree, natural loops and the loop nesting
//! forest of every function ([`flowc_ir::loops::LoopForest`], whose docs
//! state what a loop is).
//!
//! Reads: the IR only (no earlier analysis). Writes: `cx.facts(i).loops`
//! for function `i`; the IR is not changed.

use flowc_ir::loops::{LoopForest, LoopId};
use flowc_ir::{BlockId, Module};
use flowc_lang::syntax::readable_print::name;

use crate::Context;

pub fn run(module: &mut Module, cx: &mut Context) {
    for (i, f) in module.functions.iter().enumerate() {
        cx.facts(i).loops = Some(LoopForest::new(f));
    }
}

/// One line per loop: `; loops of power: b1 (depth 1): b1 b2`, nested
/// loops indented under their parent and naming it; `none` for functions
/// without loops.
pub fn annotate(module: &Module, cx: &Context) -> String {
    let mut out = String::new();
    for (i, f) in module.functions.iter().enumerate() {
        let Some(forest) = cx.functions.get(i).and_then(|x| x.loops.as_ref()) else { continue };
        let mut title = String::from("; loops of ");
        name(&mut title, f.name);
        title.push(':');
        if forest.is_empty() {
            out.push_str(&title);
            out.push_str(" none\n");
            continue;
        }
        let mut stack: Vec<LoopId> = forest.roots().collect();
        stack.reverse();
        while let Some(l) = stack.pop() {
            let lp = forest.get(l);
            out.push_str(&title);
            for _ in 1..lp.depth {
                out.push_str("  ");
            }
            out.push_str(&format!(" {} (depth {}", block(lp.header), lp.depth));
            if let Some(p) = lp.parent {
                out.push_str(&format!(", in {}", block(forest.header(p))));
            }
            out.push_str("):");
            for &b in &lp.blocks {
                out.push(' ');
                out.push_str(&block(b));
            }
            out.push('\n');
            stack.extend(lp.children.iter().rev());
        }
    }
    out
}

fn block(b: BlockId) -> String {
    flowc_ir::print::block_ref(b)
}
