//! Jump threading through jump-only blocks, and critical-edge splitting
//! (normal forms 3 and 4; the module docs of `normalize` explain how the
//! two interact).

use flowc_ir::rows::Rows;
use flowc_ir::{BlockId, Function, Terminator};

use super::{alloc_jump_block, pred_counts, rekey_phis, relayout};
use crate::edit::{self, ix};

/// Makes every edge into a chain of jump-only blocks go to the chain's
/// final target, keeping (or making) a splitter where the edge would be
/// critical or would reach the target twice. Expects reachable blocks only
/// and no two-way terminator naming one block twice.
pub(super) fn thread_jumps(f: &mut Function) {
    let nb = f.blocks.len();
    let mut jump_only = vec![false; nb];
    for &b in &f.layout {
        let d = &f.blocks[b];
        jump_only[ix(b)] =
            b != f.entry && d.phis.is_empty() && d.insts.is_empty() && matches!(d.term, Terminator::Jump(t) if t != b);
    }
    if !jump_only.iter().any(|&j| j) {
        return;
    }
    let dest = resolve_chains(f, &mut jump_only);
    let fin = |s: BlockId| if jump_only[ix(s)] { dest[ix(s)].map_or(s, |(u, _)| u) } else { s };

    let kept: Vec<BlockId> = f.layout.iter().copied().filter(|&b| !jump_only[ix(b)]).collect();
    let mut npreds = vec![0u32; nb];
    for &p in &kept {
        match *f.blocks[p].term.successors() {
            [a, b] if fin(a) != fin(b) => {
                npreds[ix(fin(a))] += 1;
                npreds[ix(fin(b))] += 1;
            }
            [a, ..] => npreds[ix(fin(a))] += 1,
            [] => {}
        }
    }

    // For each last block L of a chain: the blocks that now reach L's target
    // in its place (their phi inputs are L's), as `(L, block)` pairs.
    let mut via: Vec<(BlockId, BlockId)> = Vec::new();
    let mut claimed = vec![false; nb];
    let mut placed = Vec::new();
    for &p in &kept {
        let succs = f.blocks[p].term.successors();
        let two_way = succs.len() == 2 && succs[0] != succs[1];
        for (slot, &s) in succs.iter().enumerate() {
            let Some((u, last)) = dest[ix(s)].filter(|_| jump_only[ix(s)]) else { continue };
            let direct = !two_way || (fin(succs[1 - slot]) != u && npreds[ix(u)] == 1);
            let key = if direct {
                edit::retarget(f, p, s, u);
                p
            } else if !claimed[ix(s)] {
                claimed[ix(s)] = true;
                f.blocks[s].term = Terminator::Jump(u);
                s
            } else {
                let n = alloc_jump_block(f, u);
                edit::retarget(f, p, s, n);
                placed.push((p, n));
                n
            };
            via.push((last, key));
        }
    }

    // Only the final target of a chain can have phi inputs keyed by a
    // jump-only block (the chain's last block is its predecessor), and only
    // those whose last block is now replaced — by another block, or by
    // several — need re-keying. The common case, a one-block chain kept as
    // its own predecessor's splitter, keeps its key: the target's phis are
    // not even read.
    let keys = Rows::group(nb, via.iter().map(|&(last, key)| (ix(last), key)));
    let mut rekey: Vec<BlockId> = via
        .iter()
        .filter(|&&(last, _)| keys.of(ix(last)) != [last])
        .filter_map(|&(last, _)| dest[ix(last)].map(|(u, _)| u))
        .collect();
    rekey.sort_unstable_by_key(|&u| ix(u));
    rekey.dedup();
    for u in rekey {
        rekey_phis(f, u, |p, out| {
            if jump_only[ix(p)] {
                out.extend_from_slice(keys.of(ix(p)));
            } else {
                out.push(p);
            }
        });
    }
    let removed: Vec<bool> = (0..nb).map(|k| jump_only[k] && !claimed[k]).collect();
    relayout(f, &removed, placed);
}

/// The final target `U` of each jump-only block's chain and the chain's
/// last block `L` (the one jumping to `U`). In a cycle of jump-only blocks
/// the first one met stops being jump-only (it is the kept infinite loop).
fn resolve_chains(f: &Function, jump_only: &mut [bool]) -> Vec<Option<(BlockId, BlockId)>> {
    let nb = f.blocks.len();
    let mut dest: Vec<Option<(BlockId, BlockId)>> = vec![None; nb];
    let mut on_path = vec![false; nb];
    let mut path = Vec::new();
    for &b in &f.layout {
        if !jump_only[ix(b)] || dest[ix(b)].is_some() {
            continue;
        }
        path.clear();
        let mut cur = b;
        let result = loop {
            on_path[ix(cur)] = true;
            path.push(cur);
            let Terminator::Jump(t) = f.blocks[cur].term else { break (cur, cur) };
            if !jump_only[ix(t)] {
                break (t, cur);
            }
            if let Some(d) = dest[ix(t)] {
                break d;
            }
            if on_path[ix(t)] {
                jump_only[ix(t)] = false;
                break (t, cur);
            }
            cur = t;
        };
        for &p in &path {
            on_path[ix(p)] = false;
            if jump_only[ix(p)] {
                dest[ix(p)] = Some(result);
            }
        }
    }
    dest
}

/// Splits every edge from a block with two successors to a block with
/// several predecessors with a new jump-only block.
pub(super) fn split_critical_edges(f: &mut Function) {
    let npreds = pred_counts(f);
    let mut splits: Vec<(BlockId, BlockId, BlockId)> = Vec::new();
    let mut placed = Vec::new();
    for p in f.layout.clone() {
        let succs = f.blocks[p].term.successors();
        if succs.len() != 2 || succs[0] == succs[1] {
            continue;
        }
        for t in succs {
            if npreds[ix(t)] >= 2 {
                let n = alloc_jump_block(f, t);
                edit::retarget(f, p, t, n);
                placed.push((p, n));
                if !f.blocks[t].phis.is_empty() {
                    splits.push((t, p, n));
                }
            }
        }
    }
    // Re-key the phis of each target once, whatever its number of splits.
    splits.sort_by_key(|&(t, _, _)| ix(t));
    let mut new_key: Vec<Option<BlockId>> = vec![None; f.blocks.len()];
    for group in splits.chunk_by(|a, b| a.0 == b.0) {
        for &(_, p, n) in group {
            new_key[ix(p)] = Some(n);
        }
        rekey_phis(f, group[0].0, |p, out| out.push(new_key[ix(p)].unwrap_or(p)));
        for &(_, p, _) in group {
            new_key[ix(p)] = None;
        }
    }
    relayout(f, &[], placed);
}
