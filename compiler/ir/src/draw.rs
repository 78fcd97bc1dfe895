//! A function's control-flow graph drawn as SVG, without Graphviz: a
//! layered (Sugiyama-style) drawing computed here, deterministic, so pages
//! that embed it (`flowc explore`) are byte-identical from run to run.
//!
//! **Layout.** Blocks are taken in reverse postorder (unreachable ones
//! after, in layout order). Edges that go back in that order — the loops'
//! back edges — are reversed for the layout, so the rest is a DAG: each
//! block's layer is one below its lowest predecessor (longest path). Edges
//! spanning several layers pass through invisible *dummy* nodes, one per
//! layer crossed, so they bend around blocks instead of through them.
//! Within a layer, nodes are ordered by a few barycenter sweeps (down,
//! then up) to reduce crossings, then placed: each as near as it can get
//! to the mean of its neighbours in the layer above (below, on upward
//! sweeps) without overlapping the node on its left.
//!
//! **Drawing.** A block is a box listing its header, instructions and
//! terminator; loop blocks are tinted by depth, loop headers outlined,
//! *cold* blocks (every path from them ends in a trap: error paths) grey.
//! Forward edges leave the bottom of a block (a branch's toward the side
//! their targets lie on) and enter the top of their target; back edges
//! leave and enter on the right side, dashed. Elements carry data
//! attributes for pages that script them: `data-block` on a block's
//! group, `data-inst` (instruction arena index) and `data-term` (block
//! index) on its lines.

use std::fmt::Write as _;

use crate::cfg::{Cfg, DomTree};
use crate::function::{BlockId, Function};
use crate::inst::Terminator;
use crate::loops::LoopForest;
use crate::print::{block_ref, inst_to_string, terminator_to_string};

/// Lines of a block shown before the rest is summarized.
pub const MAX_LINES_PER_BLOCK: usize = 40;
/// Characters of a line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 64;

const CHAR_W: f64 = 6.6;
const LINE_H: f64 = 14.0;
const PAD: f64 = 6.0;
const GAP_X: f64 = 24.0;
const GAP_Y: f64 = 36.0;
const MARGIN: f64 = 16.0;
/// Room on the right of the drawing for back edges.
const BACK_ROOM: f64 = 48.0;

/// One line of a block's box: its text and what it shows.
struct Line {
    text: String,
    attr: String,
}

struct Node {
    /// `None` for a dummy.
    block: Option<BlockId>,
    lines: Vec<Line>,
    w: f64,
    h: f64,
    layer: usize,
    x: f64,
    y: f64,
}

/// An edge of the CFG as drawn: its nodes from source to target (dummies
/// between), and how it leaves.
struct Edge {
    chain: Vec<usize>,
    kind: &'static str,
    back: bool,
}

/// The text of a line in a box, cut to [`MAX_LINE_CHARS`].
fn cut(s: String) -> String {
    if s.chars().count() <= MAX_LINE_CHARS {
        s
    } else {
        let mut t: String = s.chars().take(MAX_LINE_CHARS - 1).collect();
        t.push('…');
        t
    }
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The lines of block `b`'s box.
fn lines(f: &Function, b: BlockId) -> Vec<Line> {
    let raw = |b: BlockId| b.into_raw().into_u32();
    let mut header = block_ref(b);
    if let Some(n) = f.blocks[b].name {
        write!(header, " {n}").unwrap();
    }
    let mut out = vec![Line { text: header, attr: String::new() }];
    let insts: Vec<_> = f.block_insts(b).collect();
    let shown = insts.len().min(MAX_LINES_PER_BLOCK);
    for &i in &insts[..shown] {
        out.push(Line { text: cut(inst_to_string(f, i)), attr: format!(" data-inst=\"{}\"", i.into_raw().into_u32()) });
    }
    if shown < insts.len() {
        out.push(Line { text: format!("… {} more", insts.len() - shown), attr: String::new() });
    }
    out.push(Line { text: cut(terminator_to_string(&f.blocks[b].term)), attr: format!(" data-term=\"{}\"", raw(b)) });
    out
}

/// Per block (raw index): whether every path from it ends in a trap.
fn cold_blocks(f: &Function, cfg: &Cfg) -> Vec<bool> {
    let mut cold = vec![false; f.blocks.len()];
    let ix = |b: BlockId| b.into_raw().into_u32() as usize;
    loop {
        let mut changed = false;
        for &b in f.layout.iter().rev() {
            if cold[ix(b)] {
                continue;
            }
            let now = match &f.blocks[b].term {
                Terminator::Trap(_) => true,
                t => {
                    let succs = t.successors();
                    !succs.is_empty() && cfg.succs(b).iter().all(|&s| cold[ix(s)])
                }
            };
            if now {
                cold[ix(b)] = true;
                changed = true;
            }
        }
        if !changed {
            return cold;
        }
    }
}

/// The CFG of `f` as an SVG document fragment (`<svg …>…</svg>`).
pub fn svg(f: &Function) -> String {
    let cfg = Cfg::new(f);
    let loops = LoopForest::with(f, &cfg, &DomTree::new(f, &cfg));
    let cold = cold_blocks(f, &cfg);
    let ix = |b: BlockId| b.into_raw().into_u32() as usize;

    // Nodes in reverse postorder, then the unreachable blocks.
    let mut order: Vec<BlockId> = cfg.rpo.clone();
    order.extend(f.layout.iter().copied().filter(|&b| !cfg.is_reachable(b)));
    let mut node_of = vec![usize::MAX; f.blocks.len()];
    let mut nodes: Vec<Node> = Vec::with_capacity(order.len());
    for &b in &order {
        node_of[ix(b)] = nodes.len();
        let ls = lines(f, b);
        let chars = ls.iter().map(|l| l.text.chars().count()).max().unwrap_or(0);
        let (w, h) = (chars as f64 * CHAR_W + 2.0 * PAD, ls.len() as f64 * LINE_H + 2.0 * PAD);
        nodes.push(Node { block: Some(b), lines: ls, w, h, layer: 0, x: 0.0, y: 0.0 });
    }

    // Edges, back edges marked; self loops drawn apart.
    let mut edges: Vec<(usize, usize, &'static str, bool)> = Vec::new();
    let mut self_loops = Vec::new();
    for &b in &order {
        let term = &f.blocks[b].term;
        let succs = term.successors();
        let two = succs.len() == 2;
        for (k, s) in succs.iter().enumerate() {
            let (u, v) = (node_of[ix(b)], node_of.get(ix(*s)).copied().unwrap_or(usize::MAX));
            if v == usize::MAX {
                continue;
            }
            let kind = match (two, k) {
                (true, 0) => "then",
                (true, _) => "else",
                _ => "jump",
            };
            if u == v {
                self_loops.push(u);
            } else {
                edges.push((u, v, kind, v < u));
            }
        }
    }

    // Layers: longest path over the edges, back edges reversed.
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for &(u, v, _, back) in &edges {
        let (a, b) = if back { (v, u) } else { (u, v) };
        preds[b].push(a);
    }
    for n in 0..nodes.len() {
        nodes[n].layer = preds[n].iter().map(|&p| nodes[p].layer + 1).max().unwrap_or(0);
    }

    // Dummies on long edges; every edge a chain from source to target.
    let mut drawn: Vec<Edge> = Vec::with_capacity(edges.len());
    for &(u, v, kind, back) in &edges {
        let (top, bottom) = if back { (v, u) } else { (u, v) };
        let mut chain = vec![top];
        for layer in nodes[top].layer + 1..nodes[bottom].layer {
            chain.push(nodes.len());
            nodes.push(Node { block: None, lines: Vec::new(), w: 0.0, h: 0.0, layer, x: 0.0, y: 0.0 });
        }
        chain.push(bottom);
        if back {
            chain.reverse();
        }
        drawn.push(Edge { chain, kind, back });
    }

    // Neighbours in the layer above and below, over the chains.
    let mut up: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut down: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for e in &drawn {
        for pair in e.chain.windows(2) {
            let (a, b) =
                if nodes[pair[0]].layer < nodes[pair[1]].layer { (pair[0], pair[1]) } else { (pair[1], pair[0]) };
            down[a].push(b);
            up[b].push(a);
        }
    }

    // Order within layers: barycenter sweeps.
    let layers = nodes.iter().map(|n| n.layer + 1).max().unwrap_or(0);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for (n, node) in nodes.iter().enumerate() {
        rows[node.layer].push(n);
    }
    let mut pos = vec![0usize; nodes.len()];
    let index = |rows: &Vec<Vec<usize>>, pos: &mut Vec<usize>| {
        for row in rows {
            for (k, &n) in row.iter().enumerate() {
                pos[n] = k;
            }
        }
    };
    index(&rows, &mut pos);
    for sweep in 0..8 {
        let downward = sweep % 2 == 0;
        let range: Vec<usize> =
            if downward { (1..layers).collect() } else { (0..layers.saturating_sub(1)).rev().collect() };
        for l in range {
            let neighbours = if downward { &up } else { &down };
            let mut keyed: Vec<(f64, usize)> = rows[l]
                .iter()
                .map(|&n| {
                    let ns = &neighbours[n];
                    let key = if ns.is_empty() {
                        pos[n] as f64
                    } else {
                        ns.iter().map(|&m| pos[m] as f64).sum::<f64>() / ns.len() as f64
                    };
                    (key, n)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            rows[l] = keyed.into_iter().map(|(_, n)| n).collect();
            for (k, &n) in rows[l].iter().enumerate() {
                pos[n] = k;
            }
        }
    }

    // Coordinates: layers stacked; in a layer, left to right, each node
    // pulled toward its neighbours' mean.
    let mut y = MARGIN;
    for row in &rows {
        let h = row.iter().map(|&n| nodes[n].h).fold(0.0, f64::max);
        for &n in row {
            nodes[n].y = y;
        }
        y += h + GAP_Y;
    }
    let height = y - GAP_Y + MARGIN;
    let place = |nodes: &mut Vec<Node>, row: &[usize], want: &dyn Fn(&Vec<Node>, usize) -> Option<f64>| {
        let mut right = f64::NEG_INFINITY;
        for &n in row {
            let half = nodes[n].w / 2.0;
            let gap = if nodes[n].block.is_some() { GAP_X } else { GAP_X / 2.0 };
            let wanted = want(nodes, n).unwrap_or(nodes[n].x);
            let x = wanted.max(right + gap + half);
            nodes[n].x = x;
            right = x + half;
        }
    };
    for row in &rows {
        place(&mut nodes, row, &|_, _| Some(0.0));
    }
    let mean = |nodes: &Vec<Node>, ns: &[usize]| -> Option<f64> {
        (!ns.is_empty()).then(|| ns.iter().map(|&m| nodes[m].x).sum::<f64>() / ns.len() as f64)
    };
    for sweep in 0..6 {
        if sweep % 2 == 0 {
            for row in rows.iter().skip(1) {
                place(&mut nodes, row, &|nodes, n| mean(nodes, &up[n]));
            }
        } else {
            for row in rows.iter().rev().skip(1) {
                place(&mut nodes, row, &|nodes, n| mean(nodes, &down[n]));
            }
        }
    }
    let left = nodes.iter().map(|n| n.x - n.w / 2.0).fold(f64::INFINITY, f64::min);
    let shift = if left.is_finite() { MARGIN - left } else { 0.0 };
    for n in &mut nodes {
        n.x += shift;
    }
    let width = nodes.iter().map(|n| n.x + n.w / 2.0).fold(0.0, f64::max) + MARGIN + BACK_ROOM;

    // The drawing.
    let mut out = String::new();
    writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"cfg\" width=\"{:.0}\" height=\"{:.0}\" viewBox=\"0 0 {:.0} {:.0}\">",
        width, height, width, height
    )
    .unwrap();
    out.push_str(
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\"/></marker></defs>\n",
    );
    for e in &drawn {
        let pts: Vec<(f64, f64)> = e.chain.iter().map(|&n| (nodes[n].x, nodes[n].y)).collect();
        let (s, t) = (&nodes[e.chain[0]], &nodes[*e.chain.last().unwrap()]);
        let mut d = String::new();
        if e.back {
            // Out of the source's right side, up through the dummies, into
            // the target's right side.
            let start = (s.x + s.w / 2.0, s.y + s.h / 2.0);
            let end = (t.x + t.w / 2.0, t.y + t.h / 2.0);
            let mut via: Vec<(f64, f64)> = pts[1..pts.len() - 1].to_vec();
            let reach = via.iter().map(|p| p.0).fold(start.0.max(end.0), f64::max) + 28.0;
            if via.is_empty() {
                via.push((reach, (start.1 + end.1) / 2.0));
            }
            write!(d, "M{:.1},{:.1}", start.0, start.1).unwrap();
            let mut prev = start;
            for p in via.iter().copied().chain(std::iter::once(end)) {
                let c1 = if prev == start { (reach, prev.1) } else { (prev.0, prev.1 - 10.0) };
                let c2 = if p == end { (reach, p.1) } else { (p.0, p.1 + 10.0) };
                write!(d, " C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}", c1.0, c1.1, c2.0, c2.1, p.0, p.1).unwrap();
                prev = p;
            }
        } else {
            // A branch's two edges leave from the side their targets lie
            // on (the first node along each edge), so they do not cross.
            let toward = nodes[e.chain[1]].x - s.x;
            let dx = match e.kind {
                "jump" => 0.0,
                _ => toward.clamp(-s.w / 4.0, s.w / 4.0),
            };
            let start = (s.x + dx, s.y + s.h);
            let end = (t.x, t.y);
            write!(d, "M{:.1},{:.1}", start.0, start.1).unwrap();
            let mut prev = start;
            for &n in &e.chain[1..e.chain.len() - 1] {
                // Through the dummy's layer, straight down.
                let top = (nodes[n].x, nodes[n].y);
                let mid = (prev.1 + top.1) / 2.0;
                write!(d, " C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}", prev.0, mid, top.0, mid, top.0, top.1).unwrap();
                prev = (top.0, top.1 + 1.0);
                write!(d, " L{:.1},{:.1}", prev.0, prev.1).unwrap();
            }
            let mid = (prev.1 + end.1) / 2.0;
            write!(d, " C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}", prev.0, mid, end.0, mid, end.0, end.1).unwrap();
        }
        let class = if e.back { format!("edge back {}", e.kind) } else { format!("edge {}", e.kind) };
        writeln!(out, "<path class=\"{class}\" d=\"{d}\" marker-end=\"url(#arrow)\"/>").unwrap();
    }
    for &n in &self_loops {
        let s = &nodes[n];
        let (x, y0, y1) = (s.x + s.w / 2.0, s.y + s.h * 0.3, s.y + s.h * 0.7);
        writeln!(
            out,
            "<path class=\"edge back self\" d=\"M{x:.1},{y1:.1} C{:.1},{y1:.1} {:.1},{y0:.1} {x:.1},{y0:.1}\" marker-end=\"url(#arrow)\"/>",
            x + 36.0,
            x + 36.0
        )
        .unwrap();
    }
    for node in &nodes {
        let Some(b) = node.block else { continue };
        let mut class = String::from("block");
        let depth = loops.depth(b);
        if depth > 0 {
            write!(class, " loop depth{}", depth.min(3)).unwrap();
        }
        if loops.is_header(b) {
            class.push_str(" header");
        }
        if cold[ix(b)] {
            class.push_str(" cold");
        }
        if !cfg.is_reachable(b) {
            class.push_str(" unreachable");
        }
        let (x0, y0) = (node.x - node.w / 2.0, node.y);
        writeln!(out, "<g class=\"{class}\" data-block=\"{}\">", ix(b)).unwrap();
        writeln!(out, "<rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"4\"/>", node.w, node.h)
            .unwrap();
        for (k, l) in node.lines.iter().enumerate() {
            let ty = y0 + PAD + LINE_H * (k as f64 + 0.8);
            let cls = if k == 0 { "line head" } else { "line" };
            writeln!(
                out,
                "<text class=\"{cls}\"{} x=\"{:.1}\" y=\"{ty:.1}\">{}</text>",
                l.attr,
                x0 + PAD,
                escape(&l.text)
            )
            .unwrap();
        }
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out
}
