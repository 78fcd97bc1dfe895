//! A small x86-64 assembler: the instructions the baseline trace compiler
//! emits, encoded directly, with labels for jumps.
//!
//! Every instruction works on 64-bit registers (REX.W) except the
//! byte-sized `setcc`; memory operands are a base register and a 32-bit
//! displacement (shortened to 8 bits when it fits). Jumps take a
//! [`Label`] and are encoded with 32-bit displacements, patched when the
//! label is bound ([`Asm::bind`]) or at [`Asm::finish`].

/// A general-purpose register, by its hardware number.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Reg(pub u8);

pub const RAX: Reg = Reg(0);
pub const RCX: Reg = Reg(1);
pub const RDX: Reg = Reg(2);
pub const RBX: Reg = Reg(3);
pub const RSP: Reg = Reg(4);
pub const RBP: Reg = Reg(5);
pub const RSI: Reg = Reg(6);
pub const RDI: Reg = Reg(7);
pub const R8: Reg = Reg(8);
pub const R9: Reg = Reg(9);
pub const R10: Reg = Reg(10);
pub const R11: Reg = Reg(11);

/// A two-operand ALU operation (its opcode's `/r` form and its `/digit`
/// for immediates).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Alu {
    Add,
    Or,
    And,
    Sub,
    Xor,
    Cmp,
}

impl Alu {
    fn opcode(self) -> u8 {
        match self {
            Alu::Add => 0x01,
            Alu::Or => 0x09,
            Alu::And => 0x21,
            Alu::Sub => 0x29,
            Alu::Xor => 0x31,
            Alu::Cmp => 0x39,
        }
    }

    fn digit(self) -> u8 {
        match self {
            Alu::Add => 0,
            Alu::Or => 1,
            Alu::And => 4,
            Alu::Sub => 5,
            Alu::Xor => 6,
            Alu::Cmp => 7,
        }
    }
}

/// A condition code (the low nibble of `jcc`, `setcc`, `cmovcc`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Cond {
    Overflow = 0x0,
    AboveEqual = 0x3,
    Above = 0x7,
    Equal = 0x4,
    NotEqual = 0x5,
    Less = 0xc,
    GreaterEqual = 0xd,
    LessEqual = 0xe,
    Greater = 0xf,
}

/// A place in the code, bound once.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Label(u32);

/// Machine code being written.
#[derive(Default)]
pub struct Asm {
    pub code: Vec<u8>,
    /// Per label, where it is bound.
    labels: Vec<Option<u32>>,
    /// Per label, whether a jump to it was written.
    jumped_to: Vec<bool>,
    /// 32-bit displacements to patch: where, and the label they reach.
    fixups: Vec<(u32, Label)>,
    /// The last instruction, if it stored a register: where it ended, the
    /// base, the displacement and the register ([`Asm::last_store`]).
    stored: Option<(u32, Reg, i32, Reg)>,
    /// Per register, the frame word (`[rsp + disp]`) it is known to hold:
    /// a load of that word into it is left out. Each operation stores its
    /// result to its word and the next ones read their operands back, so
    /// most such loads find the word still in the register. Known from a
    /// load or store of the word; forgotten when the register is written
    /// otherwise, when the word is stored from another register, at a
    /// label a jump may reach, and at a call (the callee clobbers
    /// registers and the collector may rewrite frame words).
    holds: [Option<i32>; 16],
    /// Frame words some results are never written to (the emitter's
    /// unstored results), sorted: a load of one from memory reads
    /// nothing the code wrote ([`Asm::loaded_unwritten`]).
    unwritten: Vec<i32>,
    /// Whether a load of such a word was written.
    loaded_unwritten: bool,
    /// Where the last `jcc` written ends ([`Asm::branch_back_unless`]).
    last_jcc: Option<u32>,
}

impl Asm {
    /// An assembler with room for `bytes` of code.
    pub fn with_capacity(bytes: usize) -> Asm {
        Asm { code: Vec::with_capacity(bytes), ..Asm::default() }
    }

    /// Where the next instruction goes.
    pub fn offset(&self) -> u32 {
        self.code.len() as u32
    }

    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        self.jumped_to.push(false);
        Label(self.labels.len() as u32 - 1)
    }

    /// Whether a jump to `l` was written.
    pub fn jumped_to(&self, l: Label) -> bool {
        self.jumped_to[l.0 as usize]
    }

    /// Binds `l` here, where the caller knows no jump will ever arrive
    /// (what the registers hold stays known).
    pub fn bind_unreached(&mut self, l: Label) {
        debug_assert!(!self.jumped_to(l), "a label jumped to is reached");
        debug_assert!(self.labels[l.0 as usize].is_none(), "a label is bound once");
        self.labels[l.0 as usize] = Some(self.offset());
    }

    /// Binds `l` here, past every jump to it (none is written later):
    /// when no jump was written, only the code before falls through to
    /// it, and what the registers hold stays known.
    pub fn bind_forward(&mut self, l: Label) {
        if self.jumped_to(l) {
            self.bind(l);
        } else {
            self.bind_unreached(l);
        }
    }

    /// Binds `l` here.
    pub fn bind(&mut self, l: Label) {
        // A jump may arrive here with other values in the registers.
        self.stored = None;
        self.holds = [None; 16];
        debug_assert!(self.labels[l.0 as usize].is_none(), "a label is bound once");
        self.labels[l.0 as usize] = Some(self.offset());
    }

    /// Binds `l` here, where every jump arrives with frame word `disp`
    /// in `reg` (the caller knows: the last instruction stored it from
    /// there, or left it unwritten there): a reload of that word right
    /// after stays left out.
    pub fn bind_holding(&mut self, l: Label, reg: Reg, disp: i32) {
        debug_assert!(self.labels[l.0 as usize].is_none(), "a label is bound once");
        self.labels[l.0 as usize] = Some(self.offset());
        // Only that register's word is known on every path.
        self.stored = None;
        self.holds = [None; 16];
        self.holds[reg.0 as usize] = Some(disp);
    }

    /// Frame word `disp` is one no code writes: a load of it from memory
    /// is noted ([`Asm::loaded_unwritten`]).
    pub fn leave_unwritten(&mut self, disp: i32) {
        if let Err(k) = self.unwritten.binary_search(&disp) {
            self.unwritten.insert(k, disp);
        }
    }

    /// Register `r` holds frame word `disp`'s value, which is not
    /// written there ([`Asm::leave_unwritten`]).
    pub fn holds_unwritten(&mut self, r: Reg, disp: i32) {
        self.written(disp);
        self.holds[r.0 as usize] = Some(disp);
    }

    /// Notes a read of `[base + disp]` from memory.
    fn note_load(&mut self, base: Reg, disp: i32) {
        if base == RSP && self.unwritten.binary_search(&disp).is_ok() {
            self.loaded_unwritten = true;
        }
    }

    /// Whether code loads a word no code writes: the code is wrong then.
    pub fn loaded_unwritten(&self) -> bool {
        self.loaded_unwritten
    }

    /// A register known to hold frame word `[rsp + disp]`, if any.
    pub fn holder(&self, disp: i32) -> Option<Reg> {
        self.holds.iter().position(|&h| h == Some(disp)).map(|r| Reg(r as u8))
    }

    /// Register `r` is written with something else than a frame word.
    fn clobber(&mut self, r: Reg) {
        if r == RSP {
            // Every known word is rsp-relative.
            self.holds = [None; 16];
        } else {
            self.holds[r.0 as usize] = None;
        }
    }

    /// Word `[rsp + disp]` is written: no other register holds it.
    fn written(&mut self, disp: i32) {
        for h in &mut self.holds {
            if *h == Some(disp) {
                *h = None;
            }
        }
    }

    /// The last instruction, if it stored a register: the base, the
    /// displacement and the register.
    pub fn last_store(&self) -> Option<(Reg, i32, Reg)> {
        self.stored.filter(|s| s.0 == self.offset()).map(|(_, base, disp, reg)| (base, disp, reg))
    }

    /// The code, every jump patched; `None` if a label was never bound.
    pub fn finish(mut self) -> Option<Vec<u8>> {
        for &(at, l) in &self.fixups {
            let target = self.labels[l.0 as usize]?;
            let rel = target as i64 - (at as i64 + 4);
            self.code[at as usize..at as usize + 4].copy_from_slice(&(rel as i32).to_le_bytes());
        }
        // Made with room for a typical operation's code per instruction:
        // code made on the worker waits for its install with it.
        self.code.shrink_to_fit();
        Some(self.code)
    }

    fn byte(&mut self, b: u8) {
        self.code.push(b);
    }

    fn u32(&mut self, v: u32) {
        self.code.extend_from_slice(&v.to_le_bytes());
    }

    /// REX with W set and the high bits of `reg` (ModRM.reg) and `rm`
    /// (ModRM.rm or the base).
    fn rex_w(&mut self, reg: Reg, rm: Reg) {
        self.byte(0x48 | ((reg.0 >> 3) << 2) | (rm.0 >> 3));
    }

    /// ModRM (and SIB, displacement) for `reg` and the memory operand
    /// `[base + disp]`.
    fn mem(&mut self, reg: u8, base: Reg, disp: i32) {
        let (r, b) = (reg & 7, base.0 & 7);
        let short = i8::try_from(disp).is_ok();
        // [rbp]/[r13] have no form without a displacement: always give one.
        let md = if short { 0x40 } else { 0x80 };
        self.byte(md | (r << 3) | b);
        if b == 4 {
            // rsp/r12 as base: a SIB byte with no index.
            self.byte(0x24);
        }
        if short {
            self.byte(disp as i8 as u8);
        } else {
            self.u32(disp as u32);
        }
    }

    /// `mov dst, [base + disp]`.
    pub fn load(&mut self, dst: Reg, base: Reg, disp: i32) {
        if base == RSP {
            if self.holds[dst.0 as usize] == Some(disp) {
                return;
            }
            // Another register holds the word: a copy, not a load.
            if let Some(r) = self.holds.iter().position(|&h| h == Some(disp)) {
                self.mov(dst, Reg(r as u8));
                return;
            }
        }
        self.note_load(base, disp);
        self.rex_w(dst, base);
        self.byte(0x8b);
        self.mem(dst.0, base, disp);
        self.clobber(dst);
        if base == RSP {
            self.holds[dst.0 as usize] = Some(disp);
        }
    }

    /// `mov dst32, dword [base + disp]` (zero-extended).
    pub fn load32(&mut self, dst: Reg, base: Reg, disp: i32) {
        self.note_load(base, disp);
        if dst.0 >= 8 || base.0 >= 8 {
            self.byte(0x40 | ((dst.0 >> 3) << 2) | (base.0 >> 3));
        }
        self.byte(0x8b);
        self.mem(dst.0, base, disp);
        self.clobber(dst);
    }

    /// `mov [base + disp], src`.
    pub fn store(&mut self, base: Reg, disp: i32, src: Reg) {
        self.rex_w(src, base);
        self.byte(0x89);
        self.mem(src.0, base, disp);
        self.stored = Some((self.offset(), base, disp, src));
        if base == RSP {
            self.written(disp);
            self.holds[src.0 as usize] = Some(disp);
        }
    }

    /// `mov dst, src`.
    pub fn mov(&mut self, dst: Reg, src: Reg) {
        self.rex_w(src, dst);
        self.byte(0x89);
        self.byte(0xc0 | ((src.0 & 7) << 3) | (dst.0 & 7));
        let held = self.holds[src.0 as usize];
        self.clobber(dst);
        self.holds[dst.0 as usize] = held;
    }

    /// `mov dst, imm` (the shortest form for the value).
    pub fn mov_imm(&mut self, dst: Reg, imm: i64) {
        self.clobber(dst);
        if let Ok(v) = u32::try_from(imm) {
            // mov r32, imm32 zero-extends.
            if dst.0 >= 8 {
                self.byte(0x41);
            }
            self.byte(0xb8 + (dst.0 & 7));
            self.u32(v);
        } else if let Ok(v) = i32::try_from(imm) {
            self.rex_w(Reg(0), dst);
            self.byte(0xc7);
            self.byte(0xc0 | (dst.0 & 7));
            self.u32(v as u32);
        } else {
            self.mov_imm64(dst, imm);
        }
    }

    /// `movabs dst, imm64`; the immediate's offset in the code (for a
    /// relocation).
    pub fn mov_imm64(&mut self, dst: Reg, imm: i64) -> u32 {
        self.clobber(dst);
        self.rex_w(Reg(0), dst);
        self.byte(0xb8 + (dst.0 & 7));
        let at = self.offset();
        self.code.extend_from_slice(&imm.to_le_bytes());
        at
    }

    /// `op dst, src`.
    pub fn alu(&mut self, op: Alu, dst: Reg, src: Reg) {
        if op != Alu::Cmp {
            self.clobber(dst);
        }
        self.rex_w(src, dst);
        self.byte(op.opcode());
        self.byte(0xc0 | ((src.0 & 7) << 3) | (dst.0 & 7));
    }

    /// `cmp [base + disp], r`: a load and a comparison in one
    /// instruction (one macro-op, fused with the branch after it).
    pub fn cmp_mem(&mut self, base: Reg, disp: i32, r: Reg) {
        self.note_load(base, disp);
        self.rex_w(r, base);
        self.byte(Alu::Cmp.opcode());
        self.mem(r.0, base, disp);
    }

    /// `op dst, imm` (a sign-extended 8- or 32-bit immediate).
    pub fn alu_imm(&mut self, op: Alu, dst: Reg, imm: i32) {
        if op != Alu::Cmp {
            self.clobber(dst);
        }
        self.rex_w(Reg(0), dst);
        if let Ok(b) = i8::try_from(imm) {
            self.byte(0x83);
            self.byte(0xc0 | (op.digit() << 3) | (dst.0 & 7));
            self.byte(b as u8);
        } else {
            self.byte(0x81);
            self.byte(0xc0 | (op.digit() << 3) | (dst.0 & 7));
            self.u32(imm as u32);
        }
    }

    /// `op qword [base + disp], imm`: the immediate in a byte where it
    /// fits one (as [`Asm::alu_imm`]), else in four.
    pub fn alu_mem_imm(&mut self, op: Alu, base: Reg, disp: i32, imm: i32) {
        self.note_load(base, disp);
        if base == RSP && op != Alu::Cmp {
            self.written(disp);
        }
        self.rex_w(Reg(0), base);
        let short = i8::try_from(imm).ok();
        self.byte(if short.is_some() { 0x83 } else { 0x81 });
        self.mem(op.digit(), base, disp);
        match short {
            Some(b) => self.byte(b as u8),
            None => self.u32(imm as u32),
        }
    }

    /// `rep stosq`: rcx words of rax from rdi up (rdi and rcx consumed).
    pub fn rep_stosq(&mut self) {
        // Any word of the frame, maybe.
        self.holds = [None; 16];
        self.byte(0xf3);
        self.byte(0x48);
        self.byte(0xab);
    }

    /// `xorps xmm0, xmm0`: sixteen zero bytes to store
    /// ([`Asm::store_xmm0`]). Nothing else in baseline code uses `xmm0`,
    /// which every calling convention lets a callee change.
    pub fn zero_xmm0(&mut self) {
        self.byte(0x0f);
        self.byte(0x57);
        self.byte(0xc0);
    }

    /// `movups [rsp + disp], xmm0`: two words of the frame from `xmm0`.
    pub fn store_xmm0(&mut self, disp: i32) {
        self.byte(0x0f);
        self.byte(0x11);
        self.mem(0, RSP, disp);
        self.written(disp);
        self.written(disp + 8);
    }

    /// `mov dst, [base + index*8 + 8]`.
    pub fn load_indexed(&mut self, dst: Reg, base: Reg, index: Reg) {
        self.clobber(dst);
        self.byte(0x48 | ((dst.0 >> 3) << 2) | ((index.0 >> 3) << 1) | (base.0 >> 3));
        self.byte(0x8b);
        self.byte(0x44 | ((dst.0 & 7) << 3));
        self.byte(0xc0 | ((index.0 & 7) << 3) | (base.0 & 7));
        self.byte(0x08);
    }

    /// `test r, imm` (a sign-extended 32-bit immediate).
    pub fn test_imm(&mut self, r: Reg, imm: i32) {
        self.rex_w(Reg(0), r);
        self.byte(0xf7);
        self.byte(0xc0 | (r.0 & 7));
        self.u32(imm as u32);
    }

    /// `test a, b`.
    pub fn test(&mut self, a: Reg, b: Reg) {
        self.rex_w(b, a);
        self.byte(0x85);
        self.byte(0xc0 | ((b.0 & 7) << 3) | (a.0 & 7));
    }

    /// `imul dst, src`.
    pub fn imul(&mut self, dst: Reg, src: Reg) {
        self.clobber(dst);
        self.rex_w(dst, src);
        self.byte(0x0f);
        self.byte(0xaf);
        self.byte(0xc0 | ((dst.0 & 7) << 3) | (src.0 & 7));
    }

    /// `sar dst, n`.
    pub fn sar(&mut self, dst: Reg, n: u8) {
        self.clobber(dst);
        self.rex_w(Reg(0), dst);
        self.byte(0xc1);
        self.byte(0xc0 | (7 << 3) | (dst.0 & 7));
        self.byte(n);
    }

    /// `shl dst, n`.
    pub fn shl(&mut self, dst: Reg, n: u8) {
        self.clobber(dst);
        self.rex_w(Reg(0), dst);
        self.byte(0xc1);
        self.byte(0xc0 | (4 << 3) | (dst.0 & 7));
        self.byte(n);
    }

    /// `shr dst, n` (logical).
    pub fn shr(&mut self, dst: Reg, n: u8) {
        self.clobber(dst);
        self.rex_w(Reg(0), dst);
        self.byte(0xc1);
        self.byte(0xc0 | (5 << 3) | (dst.0 & 7));
        self.byte(n);
    }

    /// `mul src` (rdx:rax := rax * src, unsigned).
    pub fn mul(&mut self, src: Reg) {
        self.clobber(RAX);
        self.clobber(RDX);
        self.rex_w(Reg(0), src);
        self.byte(0xf7);
        self.byte(0xc0 | (4 << 3) | (src.0 & 7));
    }

    /// `cqo` (rdx:rax := sign-extended rax).
    pub fn cqo(&mut self) {
        self.clobber(RDX);
        self.byte(0x48);
        self.byte(0x99);
    }

    /// `idiv src` (rax, rdx := rdx:rax / src, rdx:rax % src).
    pub fn idiv(&mut self, src: Reg) {
        self.clobber(RAX);
        self.clobber(RDX);
        self.rex_w(Reg(0), src);
        self.byte(0xf7);
        self.byte(0xc0 | (7 << 3) | (src.0 & 7));
    }

    /// `lea dst, [base + disp]`.
    pub fn lea(&mut self, dst: Reg, base: Reg, disp: i32) {
        // No distance: a copy, or nothing (the register keeps the word it
        // holds).
        if disp == 0 {
            if dst != base {
                self.mov(dst, base);
            }
            return;
        }
        self.clobber(dst);
        self.rex_w(dst, base);
        self.byte(0x8d);
        self.mem(dst.0, base, disp);
    }

    /// `setcc dst8; movzx dst, dst8`: 1 if `c` holds, else 0.
    pub fn set(&mut self, c: Cond, dst: Reg) {
        self.clobber(dst);
        // A REX prefix makes the low byte of rsi/rdi/... addressable.
        self.byte(0x40 | (dst.0 >> 3));
        self.byte(0x0f);
        self.byte(0x90 | c as u8);
        self.byte(0xc0 | (dst.0 & 7));
        self.rex_w(dst, dst);
        self.byte(0x0f);
        self.byte(0xb6);
        self.byte(0xc0 | ((dst.0 & 7) << 3) | (dst.0 & 7));
    }

    /// `jcc l`.
    pub fn jcc(&mut self, c: Cond, l: Label) {
        self.byte(0x0f);
        self.byte(0x80 | c as u8);
        self.fixup(l);
        self.last_jcc = Some(self.offset());
    }

    /// A jump to `back`, a loop's head, where the code so far ends with
    /// `jcc l` (a guard's exit) that no label is bound after: that
    /// becomes `jcc` the other way to `back`, then `jmp l` — the round
    /// takes one branch, not a branch not taken and a jump. False (and
    /// nothing written) elsewhere.
    pub fn branch_back_unless(&mut self, back: Label) -> bool {
        let end = self.offset();
        if self.last_jcc != Some(end) || self.labels.contains(&Some(end)) {
            return false;
        }
        let Some(&(at, exit)) = self.fixups.last() else { return false };
        if at + 4 != end {
            return false;
        }
        // x86 conditions come in pairs that differ in the lowest bit.
        self.code[end as usize - 5] ^= 1;
        self.fixups.pop();
        self.fixups.push((at, back));
        self.jumped_to[back.0 as usize] = true;
        self.last_jcc = None;
        self.jmp(exit);
        true
    }

    /// `jmp l`.
    pub fn jmp(&mut self, l: Label) {
        self.byte(0xe9);
        self.fixup(l);
    }

    fn fixup(&mut self, l: Label) {
        self.jumped_to[l.0 as usize] = true;
        let at = self.offset();
        self.fixups.push((at, l));
        self.u32(0);
    }

    /// `call r`; the offset of the return address.
    pub fn call(&mut self, r: Reg) -> u32 {
        self.holds = [None; 16];
        if r.0 >= 8 {
            self.byte(0x41);
        }
        self.byte(0xff);
        self.byte(0xc0 | (2 << 3) | (r.0 & 7));
        self.offset()
    }

    /// `jmp r`.
    pub fn jmp_reg(&mut self, r: Reg) {
        if r.0 >= 8 {
            self.byte(0x41);
        }
        self.byte(0xff);
        self.byte(0xc0 | (4 << 3) | (r.0 & 7));
    }

    /// `jmp qword [base + disp]`.
    pub fn jmp_mem(&mut self, base: Reg, disp: i32) {
        if base.0 >= 8 {
            self.byte(0x41);
        }
        self.byte(0xff);
        self.mem(4, base, disp);
    }

    pub fn push(&mut self, r: Reg) {
        self.clobber(RSP);
        if r.0 >= 8 {
            self.byte(0x41);
        }
        self.byte(0x50 + (r.0 & 7));
    }

    pub fn pop(&mut self, r: Reg) {
        self.clobber(r);
        self.clobber(RSP);
        if r.0 >= 8 {
            self.byte(0x41);
        }
        self.byte(0x58 + (r.0 & 7));
    }

    pub fn ret(&mut self) {
        self.byte(0xc3);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes `f` writes, as hex.
    fn hex(f: impl FnOnce(&mut Asm)) -> String {
        let mut a = Asm::default();
        f(&mut a);
        a.finish().unwrap().iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
    }

    /// A load of the word just stored from the same register is left out,
    /// unless a label (which a jump may reach) comes between, or the word
    /// differs, or the register was written since; a label bound as
    /// unreached keeps it out.
    #[test]
    fn a_reload_right_after_its_store_is_left_out() {
        assert_eq!(
            hex(|a| {
                a.store(RSP, 16, RAX);
                a.load(RAX, RSP, 16)
            }),
            "48 89 44 24 10"
        );
        assert_eq!(
            hex(|a| {
                a.store(RSP, 16, RAX);
                let l = a.label();
                a.bind(l);
                a.load(RAX, RSP, 16)
            }),
            "48 89 44 24 10 48 8b 44 24 10"
        );
        assert_eq!(
            hex(|a| {
                a.store(RSP, 16, RAX);
                a.load(RAX, RSP, 8)
            }),
            "48 89 44 24 10 48 8b 44 24 08"
        );
        assert_eq!(
            hex(|a| {
                a.store(RSP, 16, RAX);
                a.mov_imm(RAX, 1);
                a.load(RAX, RSP, 16)
            }),
            "48 89 44 24 10 b8 01 00 00 00 48 8b 44 24 10"
        );
        assert_eq!(
            hex(|a| {
                a.store(RSP, 16, RAX);
                let l = a.label();
                a.bind_unreached(l);
                a.load(RAX, RSP, 16)
            }),
            "48 89 44 24 10"
        );
    }

    /// A register keeps the frame word it loaded or stored until it is
    /// written otherwise, the word is stored from another register, a
    /// label a jump reaches is bound, or a call is made; a word is only
    /// ever known rsp-relative, and moving rsp forgets every one.
    #[test]
    fn a_register_holds_its_word_until_either_changes() {
        // Loaded, then read again after a test and a compare: one load.
        assert_eq!(
            hex(|a| {
                a.load(RAX, RSP, 8);
                a.test(RAX, RAX);
                a.alu_imm(Alu::Cmp, RAX, 1);
                a.load(RAX, RSP, 8)
            }),
            "48 8b 44 24 08 48 85 c0 48 83 f8 01"
        );
        // Written by an add: loaded again.
        assert_eq!(
            hex(|a| {
                a.load(RAX, RSP, 8);
                a.alu_imm(Alu::Add, RAX, 1);
                a.load(RAX, RSP, 8)
            }),
            "48 8b 44 24 08 48 83 c0 01 48 8b 44 24 08"
        );
        // The word stored from another register: rax no longer holds it,
        // rcx does (rax gets a copy).
        assert_eq!(
            hex(|a| {
                a.load(RAX, RSP, 8);
                a.store(RSP, 8, RCX);
                a.load(RAX, RSP, 8);
                a.load(RCX, RSP, 8)
            }),
            "48 8b 44 24 08 48 89 4c 24 08 48 89 c8"
        );
        // A word another register holds is copied from it.
        assert_eq!(
            hex(|a| {
                a.store(RSP, 16, RAX);
                a.load(RCX, RSP, 16)
            }),
            "48 89 44 24 10 48 89 c1"
        );
        // A copy holds what its source held; a call forgets everything.
        assert_eq!(
            hex(|a| {
                a.load(RAX, RSP, 8);
                a.mov(RDX, RAX);
                a.load(RDX, RSP, 8);
                a.call(RAX);
                a.load(RDX, RSP, 8)
            }),
            "48 8b 44 24 08 48 89 c2 ff d0 48 8b 54 24 08"
        );
        // A heap word is not remembered; rsp moving forgets frame words.
        assert_eq!(
            hex(|a| {
                a.load(RAX, RCX, 8);
                a.load(RAX, RCX, 8);
                a.load(RDX, RSP, 8);
                a.push(RBX);
                a.load(RDX, RSP, 8)
            }),
            "48 8b 41 08 48 8b 41 08 48 8b 54 24 08 53 48 8b 54 24 08"
        );
        // A label bound past its jumps, none written: still known.
        assert_eq!(
            hex(|a| {
                a.load(RAX, RSP, 8);
                let l = a.label();
                a.bind_forward(l);
                a.load(RAX, RSP, 8)
            }),
            "48 8b 44 24 08"
        );
    }

    /// A loop ending in a guard goes round on the guard's branch turned
    /// the other way, the exit a jump after it; not where a label is
    /// bound after the guard, nor after anything but a `jcc`.
    #[test]
    fn a_loop_goes_round_on_its_last_guards_branch() {
        let round = |bind_after: bool| {
            hex(|a| {
                let (head, exit) = (a.label(), a.label());
                a.bind(head);
                a.alu_imm(Alu::Cmp, RAX, 1);
                a.jcc(Cond::Equal, exit);
                if bind_after {
                    let l = a.label();
                    a.bind(l);
                }
                if !a.branch_back_unless(head) {
                    a.jmp(head);
                }
                a.bind(exit);
            })
        };
        // cmp rax, 1; jne head (-10); jmp exit (+0)
        assert_eq!(round(false), "48 83 f8 01 0f 85 f6 ff ff ff e9 00 00 00 00");
        // cmp rax, 1; je exit (+5); jmp head (-15)
        assert_eq!(round(true), "48 83 f8 01 0f 84 05 00 00 00 e9 f1 ff ff ff");
        let mut a = Asm::default();
        let head = a.label();
        a.bind(head);
        a.alu_imm(Alu::Cmp, RAX, 1);
        assert!(!a.branch_back_unless(head), "no guard's branch to turn");
    }

    #[test]
    fn encodings_match_the_manual() {
        // Checked against an assembler (objdump of `as` output).
        assert_eq!(hex(|a| a.load(RAX, RSP, 8)), "48 8b 44 24 08");
        assert_eq!(hex(|a| a.cmp_mem(Reg(8), -0x18, RCX)), "49 39 48 e8");
        assert_eq!(hex(|a| a.cmp_mem(RDX, 0x200, RCX)), "48 39 8a 00 02 00 00");
        assert_eq!(hex(|a| a.load(Reg(10), RBX, 0x200)), "4c 8b 93 00 02 00 00");
        assert_eq!(hex(|a| a.store(RSP, 16, RCX)), "48 89 4c 24 10");
        assert_eq!(hex(|a| a.load32(RAX, RAX, 16)), "8b 40 10");
        assert_eq!(hex(|a| a.store(RBP, 0, RDX)), "48 89 55 00");
        assert_eq!(hex(|a| a.mov(RDI, RBX)), "48 89 df");
        assert_eq!(hex(|a| a.mov(Reg(8), RAX)), "49 89 c0");
        assert_eq!(hex(|a| a.mov_imm(RAX, 1)), "b8 01 00 00 00");
        assert_eq!(hex(|a| a.mov_imm(RCX, -1)), "48 c7 c1 ff ff ff ff");
        assert_eq!(hex(|a| a.mov_imm(RDX, 1 << 40)), "48 ba 00 00 00 00 00 01 00 00");
        assert_eq!(hex(|a| a.alu(Alu::Add, RAX, RCX)), "48 01 c8");
        assert_eq!(hex(|a| a.alu(Alu::Cmp, Reg(9), RAX)), "49 39 c1");
        assert_eq!(hex(|a| a.alu_imm(Alu::And, RCX, 7)), "48 83 e1 07");
        assert_eq!(hex(|a| a.alu_imm(Alu::Cmp, RAX, 1000)), "48 81 f8 e8 03 00 00");
        assert_eq!(hex(|a| a.alu_mem_imm(Alu::Add, RBX, 0x38, 1)), "48 83 43 38 01");
        assert_eq!(hex(|a| a.alu_mem_imm(Alu::Add, RBX, 0x200, 1000)), "48 81 83 00 02 00 00 e8 03 00 00");
        assert_eq!(hex(|a| a.test(RAX, RAX)), "48 85 c0");
        assert_eq!(hex(|a| a.test_imm(RCX, 7)), "48 f7 c1 07 00 00 00");
        assert_eq!(hex(|a| a.rep_stosq()), "f3 48 ab");
        assert_eq!(hex(|a| a.zero_xmm0()), "0f 57 c0");
        assert_eq!(hex(|a| a.store_xmm0(0x10)), "0f 11 44 24 10");
        assert_eq!(hex(|a| a.store_xmm0(0x200)), "0f 11 84 24 00 02 00 00");
        assert_eq!(hex(|a| a.load_indexed(RAX, RDX, RCX)), "48 8b 44 ca 08");
        assert_eq!(hex(|a| a.imul(RAX, RCX)), "48 0f af c1");
        assert_eq!(hex(|a| a.sar(RAX, 1)), "48 c1 f8 01");
        assert_eq!(hex(|a| a.idiv(RCX)), "48 f7 f9");
        assert_eq!(hex(|a| a.mul(RDX)), "48 f7 e2");
        assert_eq!(hex(|a| a.shr(RDX, 3)), "48 c1 ea 03");
        assert_eq!(hex(|a| a.lea(RCX, RCX, -1)), "48 8d 49 ff");
        assert_eq!(hex(|a| a.set(Cond::Less, RAX)), "40 0f 9c c0 48 0f b6 c0");
        assert_eq!(
            hex(|a| {
                a.call(RAX);
            }),
            "ff d0"
        );
        assert_eq!(hex(|a| a.jmp_reg(Reg(11))), "41 ff e3");
        assert_eq!(hex(|a| a.push(RBX)), "53");
        assert_eq!(hex(|a| a.pop(RBP)), "5d");
    }

    #[test]
    fn jumps_reach_their_labels() {
        let bytes = hex(|a| {
            let l = a.label();
            a.jcc(Cond::Equal, l);
            a.ret();
            a.bind(l);
            a.jmp(l);
        });
        // je +1 (over the ret), then jmp -5 (to itself).
        assert_eq!(bytes, "0f 84 01 00 00 00 c3 e9 fb ff ff ff");
    }
}
