//! Graphviz output of a function's control-flow graph: one record node per
//! block listing its instructions, edges labelled `then`/`else`.

use std::fmt::Write as _;

use crate::function::Function;
use crate::inst::Terminator;
use crate::print::{block_ref, inst_to_string, terminator_to_string};

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' | '\\' | '{' | '}' | '<' | '>' | '|' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// The CFG of `f` as a Graphviz digraph.
pub fn function(f: &Function) -> String {
    let mut out = String::new();
    writeln!(out, "digraph \"{}\" {{", escape(f.name.as_str())).unwrap();
    out.push_str("    node [shape=record, fontname=\"monospace\"];\n");
    for &b in &f.layout {
        let mut label = block_ref(b);
        if let Some(n) = f.blocks[b].name {
            write!(label, " {}", n).unwrap();
        }
        let mut lines = vec![escape(&label)];
        for i in f.block_insts(b) {
            lines.push(escape(&inst_to_string(f, i)));
        }
        lines.push(escape(&terminator_to_string(&f.blocks[b].term)));
        writeln!(out, "    {} [label=\"{{{}\\l}}\"];", block_ref(b), lines.join("\\l")).unwrap();
    }
    for &b in &f.layout {
        match &f.blocks[b].term {
            Terminator::Jump(t) => writeln!(out, "    {} -> {};", block_ref(b), block_ref(*t)).unwrap(),
            Terminator::Branch { then_block, else_block, .. } | Terminator::IfClass { then_block, else_block, .. } => {
                writeln!(out, "    {} -> {} [label=\"then\"];", block_ref(b), block_ref(*then_block)).unwrap();
                writeln!(out, "    {} -> {} [label=\"else\"];", block_ref(b), block_ref(*else_block)).unwrap();
            }
            _ => {}
        }
    }
    out.push_str("}\n");
    out
}
