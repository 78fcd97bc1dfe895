//! Counts of a trace: operations, guards and the bytes of resume data.

use flowc_ir::{Function, InstKind, ResumeData, ResumeId};

/// Operation and guard counts, and resume data size, of a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    pub operations: usize,
    pub guards: usize,
    /// Bytes of resume data (a 16-byte header per record, frame and virtual
    /// object, 8 bytes per variable and field), each record counted once.
    pub resume_bytes: usize,
    /// Operations and guards of one iteration of the loop (the block that
    /// jumps to itself; the whole trace when there is none).
    pub loop_operations: usize,
    pub loop_guards: usize,
}

impl TraceStats {
    pub fn of(f: &Function) -> TraceStats {
        let mut s = TraceStats::default();
        let mut seen: Vec<ResumeId> = Vec::new();
        let looping = f.layout.iter().copied().find(|&b| f.blocks[b].term == flowc_ir::Terminator::Jump(b));
        for (b, i) in f.all_insts() {
            let in_loop = looping.is_none_or(|l| l == b);
            match &f.insts[i].kind {
                InstKind::Guard { resume, .. } => {
                    s.guards += 1;
                    s.loop_guards += usize::from(in_loop);
                    if !seen.contains(resume) {
                        seen.push(*resume);
                        s.resume_bytes += record_bytes(&f.resumes[*resume]);
                    }
                }
                InstKind::Phi(_) | InstKind::Unbound(_) => {}
                _ => {
                    s.operations += 1;
                    s.loop_operations += usize::from(in_loop);
                }
            }
        }
        s
    }

    /// Resume data per guard, in bytes.
    pub fn bytes_per_guard(&self) -> f64 {
        if self.guards == 0 {
            0.0
        } else {
            self.resume_bytes as f64 / self.guards as f64
        }
    }
}

fn record_bytes(r: &ResumeData) -> usize {
    16 + r.frames.iter().map(|f| 16 + 8 * f.env.len()).sum::<usize>()
        + r.virtuals.iter().map(|v| 16 + 8 * v.fields.len()).sum::<usize>()
}
