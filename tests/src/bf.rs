//! Brainfuck programs for the interpreters written in the language: a
//! small macro assembler that writes them, the programs of the JIT and
//! native-code suites, the environment an interpreter takes (the program
//! as a list of character codes, its bracket map, its run-length form)
//! and a reference evaluator that says what each program computes.
//!
//! Real Brainfuck programs are mostly generated, by hand-rolled macros or
//! by compilers from small languages, and have the shapes that follows:
//! hundreds of loops, most of them short (`[-]`, `[->+<]`, copies through
//! a temporary), nested several deep by arithmetic (a multiplication is a
//! loop of additions, a comparison a loop of decrements), and long
//! straight runs of `+`, `-`, `<` and `>` between them. [`Asm`] writes
//! programs that way: cells are addressed by number, the assembler keeps
//! track of where the pointer is and moves it, and every macro leaves the
//! temporaries it used at zero, as compiled Brainfuck does.
//!
//! The programs ([`program`]): `bottles` (a counting song: long straight
//! runs and hundreds of loops, a short run), `nest` (loops nested up to
//! seven deep with `[-]` and `[->+<]` innermost), `fractal` (an escape-time
//! fractal in signed fixed point: thousands of instructions, hundreds of
//! loops, a long run), `primes` (trial division: division loops inside
//! counting loops) and `digits` (Fibonacci numbers digit by digit in
//! records of cells, walked by scans: the way public programs such as
//! mandelbrot.b keep their numbers), `escape` (an escape-time loop on a
//! number kept in binary, a bit per record, every step of every walk
//! branching on the bits it meets: mandelbrot.b's own shape, which gcc
//! cannot summarize as it does the counted nests of the others). Output is
//! folded into a checksum
//! ([`checksum_step`]), which is what the interpreters print.
//! `statements` (a long body of distinct statements, the shape of
//! programs compiled to Brainfuck from a small language) is there by name
//! for running by hand (`bf env tutorial statements N`), not yet in
//! [`PROGRAMS`]: its interpreted runs take seconds.

/// A Brainfuck program under construction.
pub struct Asm {
    code: String,
    /// The cell the pointer is on.
    at: usize,
    /// Cells in use as temporaries above `fixed`.
    used: Vec<bool>,
    /// Cells below this are named by the program; temporaries come after.
    fixed: usize,
}

impl Asm {
    /// An empty program whose first `fixed` cells the caller names.
    pub fn new(fixed: usize) -> Asm {
        Asm { code: String::new(), at: 0, used: Vec::new(), fixed }
    }

    /// The program text.
    pub fn finish(self) -> String {
        self.code
    }

    /// A temporary cell, zero; give it back with [`Asm::free`] at zero.
    pub fn temp(&mut self) -> usize {
        let k = match self.used.iter().position(|u| !u) {
            Some(k) => k,
            None => {
                self.used.push(false);
                self.used.len() - 1
            }
        };
        self.used[k] = true;
        self.fixed + k
    }

    /// Gives temporary `t` back (it must be zero).
    pub fn free(&mut self, t: usize) {
        self.used[t - self.fixed] = false;
    }

    /// Moves the pointer to cell `c`.
    pub fn go(&mut self, c: usize) {
        let step = if c > self.at { '>' } else { '<' };
        for _ in 0..c.abs_diff(self.at) {
            self.code.push(step);
        }
        self.at = c;
    }

    /// Cell `c` += `k` (mod 256), as a run of `+` or `-`.
    pub fn add(&mut self, c: usize, k: i32) {
        self.go(c);
        let k = k.rem_euclid(256);
        let (ch, n) = if k <= 128 { ('+', k) } else { ('-', 256 - k) };
        for _ in 0..n {
            self.code.push(ch);
        }
    }

    /// Cell `c` += `k`, by a multiplication loop when `k` is large (the
    /// `++++++++[>++++++++<-]>+` of hand-written programs).
    pub fn add_big(&mut self, c: usize, k: i32) {
        let k = k.rem_euclid(256);
        if k < 16 {
            return self.add(c, k);
        }
        let f = (k as f64).sqrt() as i32;
        let t = self.temp();
        self.add(t, k / f);
        self.go(t);
        self.code.push('[');
        self.add(c, f);
        self.add(t, -1);
        self.go(t);
        self.code.push(']');
        self.free(t);
        self.add(c, k % f);
    }

    /// `[-]` on cell `c`.
    pub fn zero(&mut self, c: usize) {
        self.go(c);
        self.code.push_str("[-]");
    }

    /// Cell `c` := `k`.
    pub fn set(&mut self, c: usize, k: i32) {
        self.zero(c);
        self.add_big(c, k);
    }

    /// Writes cell `c`.
    pub fn out(&mut self, c: usize) {
        self.go(c);
        self.code.push('.');
    }

    /// A loop on cell `c`: `[`, the body, back to `c`, `]`.
    pub fn while_nz(&mut self, c: usize, body: impl FnOnce(&mut Asm)) {
        self.go(c);
        self.code.push('[');
        body(self);
        self.go(c);
        self.code.push(']');
    }

    /// Empties `src` into each of `dsts`, times its factor (`[->+<]`).
    pub fn spread(&mut self, src: usize, dsts: &[(usize, i32)]) {
        self.while_nz(src, |a| {
            a.add(src, -1);
            for &(d, k) in dsts {
                a.add(d, k);
            }
        });
    }

    /// `dst` += `k` * `src`, `src` kept.
    pub fn add_cell(&mut self, dst: usize, src: usize, k: i32) {
        let t = self.temp();
        self.spread(src, &[(dst, k), (t, 1)]);
        self.spread(t, &[(src, 1)]);
        self.free(t);
    }

    /// `dst` := `src`.
    pub fn copy(&mut self, dst: usize, src: usize) {
        self.zero(dst);
        self.add_cell(dst, src, 1);
    }

    /// Runs `then` once if cell `c` is not zero (`c` kept).
    pub fn if_nz(&mut self, c: usize, then: impl FnOnce(&mut Asm)) {
        let t = self.temp();
        self.add_cell(t, c, 1);
        self.while_nz(t, |a| {
            then(a);
            a.zero(t);
        });
        self.free(t);
    }

    /// `then` if cell `c` is not zero, else `otherwise`.
    pub fn if_else(&mut self, c: usize, then: impl FnOnce(&mut Asm), otherwise: impl FnOnce(&mut Asm)) {
        let (t, e) = (self.temp(), self.temp());
        self.add(e, 1);
        self.add_cell(t, c, 1);
        self.while_nz(t, |a| {
            then(a);
            a.add(e, -1);
            a.zero(t);
        });
        self.while_nz(e, |a| {
            otherwise(a);
            a.add(e, -1);
        });
        self.free(e);
        self.free(t);
    }

    /// Cell `c` (0 or 1) := 1 - `c`.
    pub fn flip(&mut self, c: usize) {
        let t = self.temp();
        self.spread(c, &[(t, 1)]);
        self.add(c, 1);
        self.spread(t, &[(c, -1)]);
        self.free(t);
    }

    /// `dst` := 1 if `a` >= `b` else 0 (cells read as 0..255, kept).
    pub fn ge(&mut self, dst: usize, a: usize, b: usize) {
        let (ta, tb) = (self.temp(), self.temp());
        self.set(dst, 1);
        self.add_cell(ta, a, 1);
        self.add_cell(tb, b, 1);
        self.while_nz(tb, |s| {
            s.if_else(
                ta,
                |s| s.add(ta, -1),
                |s| {
                    s.zero(dst);
                    s.zero(tb);
                    s.add(tb, 1);
                },
            );
            s.add(tb, -1);
        });
        self.zero(ta);
        self.free(tb);
        self.free(ta);
    }

    /// `dst` := `a` * `b` (mod 256; `a`, `b` kept, all distinct).
    pub fn mul(&mut self, dst: usize, a: usize, b: usize) {
        let t = self.temp();
        self.zero(dst);
        self.add_cell(t, a, 1);
        self.while_nz(t, |s| {
            s.add(t, -1);
            s.add_cell(dst, b, 1);
        });
        self.free(t);
    }

    /// `q`, `r` := `n` / `d`, `n` % `d` (`d` not zero; `n`, `d` kept).
    pub fn divmod(&mut self, q: usize, r: usize, n: usize, d: usize) {
        let f = self.temp();
        self.zero(q);
        self.copy(r, n);
        self.ge(f, r, d);
        self.while_nz(f, |s| {
            s.add_cell(r, d, -1);
            s.add(q, 1);
            s.ge(f, r, d);
        });
        self.free(f);
    }

    /// Writes cell `c` (0..99) in decimal, without a leading zero.
    pub fn out_decimal(&mut self, c: usize) {
        let (ten, q, r) = (self.temp(), self.temp(), self.temp());
        self.add(ten, 10);
        self.divmod(q, r, c, ten);
        self.zero(ten);
        self.if_nz(q, |s| {
            s.add_big(q, 48);
            s.out(q);
        });
        self.zero(q);
        self.add_big(r, 48);
        self.out(r);
        self.zero(r);
        self.free(r);
        self.free(q);
        self.free(ten);
    }

    /// Writes `text`, changing one cell from character to character (the
    /// long straight runs of printing programs); leaves it at zero.
    pub fn out_text(&mut self, text: &str) {
        let t = self.temp();
        let mut now = 0i32;
        for ch in text.bytes() {
            let ch = ch as i32;
            if (ch - now).abs() > 20 {
                self.zero(t);
                self.add_big(t, ch);
            } else {
                self.add(t, ch - now);
            }
            self.out(t);
            now = ch;
        }
        self.zero(t);
        self.free(t);
    }
}

/// A signed number in two cells: sign (0 positive, 1 negative) and
/// magnitude.
#[derive(Copy, Clone)]
struct Signed {
    sign: usize,
    mag: usize,
}

impl Asm {
    /// `r` := `a` + `b` (signed; cells of `r` apart from both).
    fn signed_add(&mut self, r: Signed, a: Signed, b: Signed) {
        // same := 1 xor a.sign xor b.sign
        let same = self.temp();
        self.add(same, 1);
        self.if_nz(a.sign, |s| s.flip(same));
        self.if_nz(b.sign, |s| s.flip(same));
        self.if_else(
            same,
            |s| {
                s.copy(r.mag, a.mag);
                s.add_cell(r.mag, b.mag, 1);
                s.copy(r.sign, a.sign);
            },
            |s| {
                let f = s.temp();
                s.ge(f, a.mag, b.mag);
                s.if_else(
                    f,
                    |s| {
                        s.copy(r.mag, a.mag);
                        s.add_cell(r.mag, b.mag, -1);
                        s.copy(r.sign, a.sign);
                    },
                    |s| {
                        s.copy(r.mag, b.mag);
                        s.add_cell(r.mag, a.mag, -1);
                        s.copy(r.sign, b.sign);
                    },
                );
                s.zero(f);
                s.free(f);
            },
        );
        self.zero(same);
        self.free(same);
        // No negative zero.
        let z = self.temp();
        self.add(z, 1);
        self.if_nz(r.mag, |s| s.zero(z));
        self.if_nz(z, |s| s.zero(r.sign));
        self.zero(z);
        self.free(z);
    }

    /// `r` := `a` * `b` / `scale` (signed; `scale` a cell).
    fn signed_mul(&mut self, r: Signed, a: Signed, b: Signed, scale: usize) {
        let (p, rem) = (self.temp(), self.temp());
        self.mul(p, a.mag, b.mag);
        self.divmod(r.mag, rem, p, scale);
        self.zero(rem);
        self.zero(p);
        self.free(rem);
        self.free(p);
        self.copy(r.sign, a.sign);
        self.if_nz(b.sign, |s| s.flip(r.sign));
        let z = self.temp();
        self.add(z, 1);
        self.if_nz(r.mag, |s| s.zero(z));
        self.if_nz(z, |s| s.zero(r.sign));
        self.zero(z);
        self.free(z);
    }
}

/// The counting song from `n` (at most 99) bottles down: text in long
/// straight runs, a number printed in decimal per line (division loops),
/// a loop per verse.
pub fn bottles(n: u8) -> String {
    let mut a = Asm::new(2);
    let (count, flag) = (0, 1);
    a.set(count, n as i32);
    a.while_nz(count, |a| {
        a.out_decimal(count);
        a.out_text(" bottles of beer on the wall, ");
        a.out_decimal(count);
        a.out_text(" bottles of beer.\nTake one down and pass it around, ");
        a.add(count, -1);
        a.copy(flag, count);
        a.if_else(
            flag,
            |a| {
                a.out_decimal(count);
                a.out_text(" bottles of beer on the wall.\n\n");
            },
            |a| a.out_text("no more bottles of beer on the wall.\n\n"),
        );
        a.zero(flag);
    });
    a.out_text("No more bottles of beer on the wall, no more bottles of beer.\n");
    a.finish()
}

/// Loops nested `levels.len()` deep, level `k` running `levels[k]` times,
/// the innermost clearing a cell by `[-]` and moving one by `[->+<]` and
/// back; a character written per outermost iteration.
pub fn nest(levels: &[u8], inner: u8) -> String {
    let d = levels.len();
    let mut a = Asm::new(d + 3);
    let (x, y, ch) = (d, d + 1, d + 2);
    fn level(a: &mut Asm, k: usize, levels: &[u8], inner: u8, x: usize, y: usize) {
        if k == levels.len() {
            a.add(x, inner as i32);
            a.spread(x, &[(y, 1)]);
            a.spread(y, &[(x, 1)]);
            a.zero(x);
            return;
        }
        a.add_big(k, levels[k] as i32);
        a.while_nz(k, |a| {
            level(a, k + 1, levels, inner, x, y);
            a.add(k, -1);
        });
    }
    a.add_big(ch, 64);
    a.add_big(0, levels[0] as i32);
    a.while_nz(0, |a| {
        level(a, 1, levels, inner, x, y);
        a.add(ch, 1);
        a.out(ch);
        a.add(0, -1);
    });
    a.finish()
}

/// The shape of the classic BF loop benchmarks: `depth` levels of counted
/// loops, the outermost running `outer` times and each other `count`
/// times, every level setting the next level's counter with a run of `+`
/// and the innermost clearing a cell set to `count` by `[-]`; a character
/// written per outermost iteration. The innermost loop's hot spot gets
/// hot in whichever of its rounds the counts make it, its last included.
pub fn counters(depth: usize, count: u8, outer: u8) -> String {
    let mut a = Asm::new(depth + 2);
    let ch = depth + 1;
    fn level(a: &mut Asm, k: usize, depth: usize, count: u8) {
        a.add(k, count as i32);
        if k == depth {
            a.zero(k);
            return;
        }
        a.while_nz(k, |a| {
            level(a, k + 1, depth, count);
            a.add(k, -1);
        });
    }
    a.add_big(ch, 64);
    a.add_big(0, outer as i32);
    a.while_nz(0, |a| {
        level(a, 1, depth, count);
        a.add(ch, 1);
        a.out(ch);
        a.add(0, -1);
    });
    a.finish()
}

/// An escape-time fractal (the Mandelbrot set) in signed fixed point of
/// scale 7, drawn `frames` times: `width` x `height` characters, each the
/// iterations (at most `iters`) before the point escaped. Every
/// arithmetic operation is a nest of loops.
pub fn fractal(width: u8, height: u8, iters: u8, frames: u8) -> String {
    // Named cells.
    let names = 24;
    let mut a = Asm::new(names);
    let frame = 0;
    let row = 1;
    let col = 2;
    let cx = Signed { sign: 3, mag: 4 };
    let cy = Signed { sign: 5, mag: 6 };
    let zx = Signed { sign: 7, mag: 8 };
    let zy = Signed { sign: 9, mag: 10 };
    let xx = Signed { sign: 11, mag: 12 };
    let yy = Signed { sign: 13, mag: 14 };
    let t1 = Signed { sign: 15, mag: 16 };
    let t2 = Signed { sign: 17, mag: 18 };
    let (scale, left, going, ch, limit) = (19, 20, 21, 22, 23);
    const S: i32 = 7;
    a.add(scale, S);
    a.add_big(frame, frames as i32);
    a.while_nz(frame, |a| {
        // cy from +S down, one step per row.
        a.add_big(row, height as i32);
        a.while_nz(row, |a| {
            // cy = row - height / 2 (signed), scaled so the picture spans
            // [-1, 1]: one step per row.
            a.zero(cy.sign);
            a.copy(cy.mag, row);
            let half = a.temp();
            a.add(half, (height / 2) as i32);
            let f = a.temp();
            a.ge(f, cy.mag, half);
            a.if_else(
                f,
                |a| a.add_cell(cy.mag, half, -1),
                |a| {
                    // half - row, negative
                    let m = a.temp();
                    a.copy(m, half);
                    a.add_cell(m, cy.mag, -1);
                    a.copy(cy.mag, m);
                    a.zero(m);
                    a.free(m);
                    a.add(cy.sign, 1);
                },
            );
            a.zero(f);
            a.free(f);
            a.zero(half);
            a.free(half);
            a.add_big(col, width as i32);
            a.while_nz(col, |a| {
                // cx = col - 2S (from -2S + 1 up to width - 2S).
                a.zero(cx.sign);
                a.copy(cx.mag, col);
                let two_s = a.temp();
                a.add(two_s, 2 * S);
                let f = a.temp();
                a.ge(f, cx.mag, two_s);
                a.if_else(
                    f,
                    |a| a.add_cell(cx.mag, two_s, -1),
                    |a| {
                        let m = a.temp();
                        a.copy(m, two_s);
                        a.add_cell(m, cx.mag, -1);
                        a.copy(cx.mag, m);
                        a.zero(m);
                        a.free(m);
                        a.add(cx.sign, 1);
                    },
                );
                a.zero(f);
                a.free(f);
                a.zero(two_s);
                a.free(two_s);
                // z = 0; iterate while going and left.
                for c in [zx.sign, zx.mag, zy.sign, zy.mag] {
                    a.zero(c);
                }
                a.set(left, iters as i32);
                a.set(going, 1);
                a.while_nz(going, |a| {
                    // xx = zx^2 / S, yy = zy^2 / S
                    a.signed_mul(xx, zx, zx, scale);
                    a.signed_mul(yy, zy, zy, scale);
                    // escaped when xx + yy > 4S: compare 4S - yy with xx.
                    a.set(limit, 4 * S);
                    let f = a.temp();
                    a.ge(f, limit, yy.mag);
                    a.if_else(
                        f,
                        |a| {
                            a.add_cell(limit, yy.mag, -1);
                            let g = a.temp();
                            a.ge(g, limit, xx.mag);
                            a.if_else(g, |_| {}, |a| a.zero(going));
                            a.zero(g);
                            a.free(g);
                        },
                        |a| a.zero(going),
                    );
                    a.zero(f);
                    a.free(f);
                    a.zero(limit);
                    a.if_nz(going, |a| {
                        // zy = 2 zx zy / S + cy; zx = xx - yy + cx
                        a.signed_mul(t1, zx, zy, scale);
                        let d = a.temp();
                        a.copy(d, t1.mag);
                        a.add_cell(t1.mag, d, 1);
                        a.zero(d);
                        a.free(d);
                        a.signed_add(zy, t1, cy);
                        a.flip(yy.sign);
                        a.signed_add(t2, xx, yy);
                        a.signed_add(zx, t2, cx);
                        // Too far out to square in a cell: escaped.
                        let lim = a.temp();
                        a.add(lim, 2 * S);
                        for m in [zx.mag, zy.mag] {
                            let f = a.temp();
                            a.ge(f, lim, m);
                            a.if_else(f, |_| {}, |a| a.zero(going));
                            a.zero(f);
                            a.free(f);
                        }
                        a.zero(lim);
                        a.free(lim);
                        a.add(left, -1);
                        a.if_else(left, |_| {}, |a| a.zero(going));
                    });
                });
                // The character: 'A' + iterations left.
                a.copy(ch, left);
                a.add_big(ch, 65);
                a.out(ch);
                a.zero(left);
                a.add(col, -1);
            });
            a.set(ch, 10);
            a.out(ch);
            a.add(row, -1);
        });
        a.add(frame, -1);
    });
    a.finish()
}

/// The primes up to `n` (at most 99) by trial division, each written in
/// decimal: a division loop per candidate divisor, inside the loop over
/// candidates, `rounds` times over.
pub fn primes(n: u8, rounds: u8) -> String {
    let mut a = Asm::new(6);
    let (round, cand, div, prime, q, r) = (0, 1, 2, 3, 4, 5);
    a.add_big(round, rounds as i32);
    a.while_nz(round, |a| {
        a.set(cand, 2);
        let more = a.temp();
        let top = a.temp();
        a.add_big(top, n as i32);
        a.ge(more, top, cand);
        a.while_nz(more, |a| {
            a.set(prime, 1);
            a.set(div, 2);
            // while div * div <= cand and prime
            let go = a.temp();
            a.add(go, 1);
            a.while_nz(go, |a| {
                let sq = a.temp();
                a.mul(sq, div, div);
                a.ge(go, cand, sq);
                a.zero(sq);
                a.free(sq);
                a.if_nz(go, |a| {
                    a.divmod(q, r, cand, div);
                    a.zero(q);
                    a.if_else(r, |_| {}, |a| a.zero(prime));
                    a.zero(r);
                    a.add(div, 1);
                });
                // stop on a divisor found
                let np = a.temp();
                a.add(np, 1);
                a.if_nz(prime, |a| a.zero(np));
                a.if_nz(np, |a| a.zero(go));
                a.zero(np);
                a.free(np);
            });
            a.free(go);
            a.if_nz(prime, |a| {
                a.out_decimal(cand);
                a.out_text(" ");
            });
            a.add(cand, 1);
            a.ge(more, top, cand);
        });
        a.zero(top);
        a.free(top);
        a.free(more);
        a.out_text("\n");
        a.add(round, -1);
    });
    a.finish()
}

/// The shape of programs compiled to Brainfuck from a small language
/// (public ones run to tens of kilobytes): a long body of `steps`
/// statements, each its own — arithmetic on a few named cells with its
/// own constants, a comparison and a branch — run `rounds` times, a cell
/// written per round. Thousands of loops, each entered a few times a
/// round: the JIT compiles many pieces of code, and this is the suite's
/// program that shows what they keep.
pub fn statements(steps: u16, rounds: u8) -> String {
    let mut a = Asm::new(5);
    let (round, x, y, z) = (0, 1, 2, 3);
    a.add_big(round, rounds as i32);
    a.while_nz(round, |a| {
        for k in 0..steps {
            let c = (k % 11 + 2) as i32;
            let (t, u) = (a.temp(), a.temp());
            match k % 4 {
                0 => {
                    a.set(t, c + 1);
                    a.mul(u, x, t);
                    a.copy(y, u);
                    a.add(x, c);
                }
                1 => {
                    a.set(t, c);
                    a.divmod(u, z, y, t);
                    a.add_cell(x, u, 1);
                }
                2 => {
                    a.ge(u, x, y);
                    a.if_else(u, |a| a.add(z, c), |a| a.add(y, -c));
                }
                _ => {
                    a.add_cell(z, x, (k % 3 + 1) as i32);
                    a.add(x, -(c / 2));
                }
            }
            a.zero(t);
            a.zero(u);
            a.free(u);
            a.free(t);
        }
        a.out(z);
        a.add(round, -1);
    });
    a.finish()
}

/// Cells of a record of [`digits`]: a flag (1 in a live record, 0 at the
/// two ends), the digits of `a` and `b`, the carry in, the sum and three
/// working cells.
const RECORD: usize = 8;

/// The shape of public programs that keep numbers in records of cells
/// (a fractal's fixed-point numbers, a puzzle's rows) and find their way
/// with scans (`[>>>>>>>>]`, `[<<<<<<<<]`): Fibonacci numbers of `width`
/// decimal digits, one digit per record, least significant first, `a`
/// and `b` stepped to `b` and `a + b` (modulo `10^width`) `100 * hundreds`
/// times. A step walks the records with a loop over the flags, adding
/// digit to digit by counting the sum down into `b` with a test for ten
/// at every unit, the carry sent one record on; a scan back to the first
/// record; the last digit of `b` written per step, and every digit of
/// `b` at the end, least significant first. Nothing here is known before
/// it runs: the walk's length is the flags', the units' the digits'.
pub fn digits(width: u8, hundreds: u8) -> String {
    let r = RECORD;
    // Cell 0 counts hundreds, cell 2 (in the record before the first,
    // whose flag at cell 1 ends the scan back) steps; record `i` starts at
    // cell `1 + r * (i + 1)`.
    let first = 1 + r;
    let mut a = Asm::new(first + r * (width as usize + 1) + r);
    for i in 0..width as usize {
        a.add(first + r * i, 1);
    }
    a.add(first + 2, 1);
    // One record's step, the pointer on its flag: a, b, c := b, (a + b +
    // c) mod 10, and the carry to the next record's c.
    let step = {
        let mut s = Asm::new(2 * r);
        s.spread(1, &[(4, 1)]);
        s.spread(2, &[(1, 1), (4, 1)]);
        s.spread(3, &[(4, 1)]);
        s.while_nz(4, |s| {
            s.add(4, -1);
            s.add(2, 1);
            // Ten when 10 - b is 0: cell 5 says so, cell 6 holds 10 - b.
            s.add(5, 1);
            s.add(6, 10);
            s.spread(2, &[(6, -1), (7, 1)]);
            s.spread(7, &[(2, 1)]);
            s.while_nz(6, |s| {
                s.zero(6);
                s.add(5, -1);
            });
            s.while_nz(5, |s| {
                s.zero(2);
                s.add(r + 3, 1);
                s.add(5, -1);
            });
        });
        s.go(0);
        s.finish()
    };
    a.add_big(0, hundreds as i32);
    a.while_nz(0, |a| {
        a.add_big(2, 100);
        a.while_nz(2, |a| {
            a.go(first);
            // The walk over the records, to the flag after the last.
            a.code.push('[');
            a.code.push_str(&step);
            a.code.push_str(&">".repeat(r));
            a.code.push(']');
            // There: the carry out of the last digit dropped, then the scan
            // back to the flag before the first.
            a.code.push_str(">>>[-]<<<");
            a.code.push_str(&"<".repeat(r));
            a.code.push('[');
            a.code.push_str(&"<".repeat(r));
            a.code.push(']');
            a.at = 1;
            a.add(first + 2, 48);
            a.out(first + 2);
            a.add(first + 2, -48);
            a.add(2, -1);
        });
        a.add(0, -1);
    });
    // b, a digit per record.
    let print = {
        let mut s = Asm::new(2 * r);
        s.add(2, 48);
        s.out(2);
        s.add(2, -48);
        s.go(0);
        s.finish()
    };
    a.go(first);
    a.code.push('[');
    a.code.push_str(&print);
    a.code.push_str(&">".repeat(r));
    a.code.push(']');
    a.finish()
}

/// Cells of a record of [`escape`]: a flag (1 in a live record, 0 at
/// the two ends), a bit of `x`, the bit of the sum being made, the carry
/// in, the bit count of a full adder, and two working cells.
const BIT_RECORD: usize = 7;

/// The shape of mandelbrot.b itself: numbers kept in binary, a bit per
/// record of cells, each operation a walk over the records whose every
/// step branches on the bits it meets (a full adder: bits summed, then
/// each unit of the sum toggles the result bit, sending a carry one record
/// on when the bit falls back to 0), scans back over the flags, and an
/// escape-time loop whose rounds depend on the number. `x` (`width` bits,
/// from 1) is stepped to `x + (x >> 2) + 1` (modulo `2^width`) until its
/// top bit is set; the rounds that took are written as a character
/// (`'A'` plus rounds); then the top `drop` bits are cleared and the next
/// "pixel" begins — `250 * quarters` pixels in all. The sum is made in a
/// second bit of each record and moved into `x` by a second walk, since
/// `x >> 2` reads two records ahead of the one being summed. Branches on
/// data bits, scans of a fixed length set by the flags: gcc cannot
/// summarize it, as it does the suite's counted nests, so its translation
/// to C measures code against code.
pub fn escape(width: u8, drop: u8, quarters: u8) -> String {
    let r = BIT_RECORD;
    let w = width as usize;
    // Cell 0 counts quarters; the record before the first (its flag at
    // cell 1 ends the scans back) holds the pixel count (2), the rounds
    // (3) and whether to go on (4). Record `i` starts at `1 + r * (i +
    // 1)`; two records of zeros after the end flag's are read as the
    // bits above the top.
    let first = 1 + r;
    let bit = |i: usize| first + r * i + 1;
    let mut a = Asm::new(first + r * (w + 3));
    for i in 0..w {
        a.add(first + r * i, 1);
    }
    a.add(bit(0), 1);
    // Walk 1, the pointer on a record's flag: sum := x + (x >> 2) + carry,
    // x taken, the bit two records on kept (through cell 5).
    let adder = {
        let mut s = Asm::new(3 * r);
        s.spread(1, &[(4, 1)]);
        s.spread(2 * r + 1, &[(4, 1), (5, 1)]);
        s.spread(5, &[(2 * r + 1, 1)]);
        s.spread(3, &[(4, 1)]);
        s.while_nz(4, |s| {
            s.add(4, -1);
            // The result bit toggles: a bit that was 1 falls to 0 and
            // carries (cell 5: it was; cell 6: it was not).
            s.add(6, 1);
            s.spread(2, &[(5, 1)]);
            s.while_nz(5, |s| {
                s.add(5, -1);
                s.add(6, -1);
                s.add(r + 3, 1);
            });
            s.while_nz(6, |s| {
                s.add(6, -1);
                s.add(2, 1);
            });
        });
        s.go(0);
        s.finish()
    };
    // Walk 2: x := the sum.
    let settle = {
        let mut s = Asm::new(3 * r);
        s.spread(2, &[(1, 1)]);
        s.go(0);
        s.finish()
    };
    let walk = |a: &mut Asm, body: &str, tail: &str| {
        a.go(first);
        a.code.push('[');
        a.code.push_str(body);
        a.code.push_str(&">".repeat(r));
        a.code.push(']');
        a.code.push_str(tail);
        a.code.push_str(&"<".repeat(r));
        a.code.push('[');
        a.code.push_str(&"<".repeat(r));
        a.code.push(']');
        a.at = 1;
    };
    a.add_big(0, quarters as i32);
    a.while_nz(0, |a| {
        a.add_big(2, 250);
        a.while_nz(2, |a| {
            for i in w - drop as usize..w {
                a.zero(bit(i));
            }
            a.add(4, 1);
            a.while_nz(4, |a| {
                a.add(first + 3, 1);
                // The carry out of the top bit dropped at the end flag.
                walk(a, &adder, ">>>[-]<<<");
                walk(a, &settle, "");
                a.add(3, 1);
                a.if_nz(bit(w - 1), |a| a.zero(4));
            });
            a.add_big(3, 65);
            a.out(3);
            a.zero(3);
            a.add(2, -1);
        });
        a.add(0, -1);
    });
    a.finish()
}

/// A program whose phases differ: `statements` of `rounds` rounds (more
/// loops than the JIT's cache holds), then, on cells past any it used,
/// `fractal` at size `rounds + 1` (a few loops, hot for long). What the
/// JIT compiled for the first phase fills its cache when the second
/// begins.
pub fn phases(rounds: u8) -> String {
    let mut text = statements(400, rounds);
    text.push_str(&">".repeat(1000));
    text.push_str(&fractal(24, 13, 12, rounds.saturating_add(1)));
    text
}

/// The program of suite name `name` at size `size` (1 the smallest): the
/// programs the benchmarks and tests run. `random` is a random program
/// with hot loops ([`crate::bf_random::long_program`] of 120 pieces),
/// `size` its seed: a shape nobody wrote the JIT for.
pub fn program(name: &str, size: u32) -> Option<String> {
    let s = size.clamp(1, 255) as u8;
    Some(match name {
        "bottles" => bottles(s.min(99)),
        "nest" => nest(&[s, 6, 6, 6, 6], 12),
        "nest7" => nest(&[s, 4, 4, 4, 4, 4, 4], 10),
        "counters" => counters(7, 10, s),
        "fractal" => fractal(24, 13, 12, s),
        "primes" => primes(99, s),
        "statements" => statements(400, s),
        "digits" => digits(30, s),
        "escape" => escape(48, 5, s),
        "random" => crate::bf_random::long_program(size.into(), 120),
        "phases" => phases(s),
        _ => return None,
    })
}

/// The suite's program names.
pub const PROGRAMS: [&str; 9] =
    ["bottles", "nest", "nest7", "counters", "fractal", "primes", "digits", "escape", "random"];

/// Instructions of `text` that Brainfuck knows, in order.
pub fn instructions(text: &str) -> Vec<u8> {
    text.bytes().filter(|b| b"+-<>[].,".contains(b)).collect()
}

/// For each instruction, the index of its matching bracket (0 for other
/// instructions); `None` when the brackets do not match.
pub fn bracket_map(code: &[u8]) -> Option<Vec<usize>> {
    let mut map = vec![0; code.len()];
    let mut open = Vec::new();
    for (k, &c) in code.iter().enumerate() {
        match c {
            b'[' => open.push(k),
            b']' => {
                let o = open.pop()?;
                map[o] = k;
                map[k] = o;
            }
            _ => {}
        }
    }
    open.is_empty().then_some(map)
}

/// The checksum after writing byte `v`: what the interpreters print.
pub fn checksum_step(sum: i64, v: i64) -> i64 {
    (sum * 31 + v) % 1_000_000_007
}

/// Runs `text` on a tape of byte cells grown to the right; the checksum of
/// what it writes, and the instructions it ran. Reads (`,`) give 0.
pub fn run(text: &str) -> Option<(i64, u64)> {
    let code = instructions(text);
    let map = bracket_map(&code)?;
    let mut tape = vec![0u8; 1];
    let (mut p, mut pc, mut sum, mut steps) = (0usize, 0usize, 0i64, 0u64);
    while pc < code.len() {
        steps += 1;
        match code[pc] {
            b'+' => tape[p] = tape[p].wrapping_add(1),
            b'-' => tape[p] = tape[p].wrapping_sub(1),
            b'>' => {
                p += 1;
                if p == tape.len() {
                    tape.push(0);
                }
            }
            b'<' => p = p.checked_sub(1)?,
            b'.' => sum = checksum_step(sum, tape[p] as i64),
            b',' => tape[p] = 0,
            b'[' if tape[p] == 0 => pc = map[pc],
            b']' if tape[p] != 0 => pc = map[pc],
            _ => {}
        }
        pc += 1;
    }
    Some((sum, steps))
}

/// The output of `text` as text (for looking at a program).
pub fn output(text: &str) -> Option<String> {
    let code = instructions(text);
    let map = bracket_map(&code)?;
    let mut tape = vec![0u8; 1];
    let (mut p, mut pc, mut out) = (0usize, 0usize, Vec::new());
    while pc < code.len() {
        match code[pc] {
            b'+' => tape[p] = tape[p].wrapping_add(1),
            b'-' => tape[p] = tape[p].wrapping_sub(1),
            b'>' => {
                p += 1;
                if p == tape.len() {
                    tape.push(0);
                }
            }
            b'<' => p = p.checked_sub(1)?,
            b'.' => out.push(tape[p]),
            b'[' if tape[p] == 0 => pc = map[pc],
            b']' if tape[p] != 0 => pc = map[pc],
            _ => {}
        }
        pc += 1;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// The run-length form of `code` for the second interpreter: pairs
/// (operation, argument) flattened, where `+`/`-` runs become `add k`,
/// `<`/`>` runs `move k`, `[-]` becomes `clear`, brackets carry the index
/// of their partner pair, `.` is `out`. Operations are atoms' names.
pub fn run_length(code: &[u8]) -> Vec<(&'static str, i64)> {
    let mut ops: Vec<(&'static str, i64)> = Vec::new();
    let mut k = 0;
    let mut open = Vec::new();
    while k < code.len() {
        let c = code[k];
        if code[k..].starts_with(b"[-]") {
            ops.push(("clear", 0));
            k += 3;
            continue;
        }
        match c {
            b'+' | b'-' => {
                let mut n = 0i64;
                while k < code.len() && matches!(code[k], b'+' | b'-') {
                    n += if code[k] == b'+' { 1 } else { -1 };
                    k += 1;
                }
                ops.push(("add", n.rem_euclid(256)));
                continue;
            }
            b'<' | b'>' => {
                let mut n = 0i64;
                while k < code.len() && matches!(code[k], b'<' | b'>') {
                    n += if code[k] == b'>' { 1 } else { -1 };
                    k += 1;
                }
                ops.push(("move", n));
                continue;
            }
            b'[' => {
                open.push(ops.len());
                ops.push(("open", 0));
            }
            b']' => {
                let o = open.pop().expect("matched brackets");
                let here = ops.len();
                ops[o].1 = here as i64;
                ops.push(("close", o as i64));
            }
            b'.' => ops.push(("out", 0)),
            // `,` (the only instruction left): reads 0.
            _ => ops.push(("in", 0)),
        }
        k += 1;
    }
    ops
}

/// The environment of the tutorial-shaped interpreter: `prog`, the
/// character codes, and `map`, the bracket map, as the language's lists.
pub fn tutorial_env(text: &str) -> String {
    let code = instructions(text);
    let map = bracket_map(&code).expect("matched brackets");
    let prog: Vec<String> = code.iter().map(|c| c.to_string()).collect();
    let map: Vec<String> = map.iter().map(|c| c.to_string()).collect();
    format!("[prog/[{}],map/[{}]]", prog.join(","), map.join(","))
}

/// The environment of the run-length interpreter: `ops`, the operations
/// as atoms, and `args`, their arguments.
pub fn run_length_env(text: &str) -> String {
    let ops = run_length(&instructions(text));
    let names: Vec<&str> = ops.iter().map(|(o, _)| *o).collect();
    let args: Vec<String> = ops.iter().map(|(_, a)| a.to_string()).collect();
    format!("[ops/[{}],args/[{}]]", names.join(","), args.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macros_compute_what_they_say() {
        // divmod, mul and ge through a program that prints their results.
        let mut a = Asm::new(6);
        a.add_big(0, 200);
        a.add(1, 7);
        a.divmod(2, 3, 0, 1);
        a.out(2);
        a.out(3);
        a.mul(4, 1, 3);
        a.out(4);
        a.ge(5, 3, 1);
        a.out(5);
        a.ge(5, 1, 3);
        a.out(5);
        let out = output(&a.finish()).unwrap();
        assert_eq!(out.as_bytes(), &[28, 4, 28, 0, 1]);
    }

    #[test]
    fn statements_compute_their_statements() {
        // The same statements on bytes, in Rust: the checksum of the
        // cells written must be the program's.
        let model = |steps: u16, rounds: u8| {
            let (mut x, mut y, mut z, mut sum) = (0u8, 0u8, 0u8, 0i64);
            for _ in 0..rounds {
                for k in 0..steps {
                    let c = (k % 11 + 2) as u8;
                    match k % 4 {
                        0 => {
                            y = x.wrapping_mul(c + 1);
                            x = x.wrapping_add(c);
                        }
                        1 => {
                            z = y % c;
                            x = x.wrapping_add(y / c);
                        }
                        2 if x >= y => z = z.wrapping_add(c),
                        2 => y = y.wrapping_sub(c),
                        _ => {
                            z = z.wrapping_add(x.wrapping_mul((k % 3 + 1) as u8));
                            x = x.wrapping_sub(c / 2);
                        }
                    }
                }
                sum = checksum_step(sum, z as i64);
            }
            sum
        };
        for (steps, rounds) in [(4, 1), (37, 3), (120, 2)] {
            let (sum, _) = run(&statements(steps, rounds)).unwrap();
            assert_eq!(sum, model(steps, rounds), "{steps} statements, {rounds} rounds");
        }
    }

    #[test]
    fn bottles_sings() {
        let out = output(&bottles(3)).unwrap();
        assert!(out.starts_with("3 bottles of beer on the wall, 3 bottles of beer.\nTake one down"), "{out}");
        assert!(out
            .contains("1 bottles of beer on the wall, 1 bottles of beer.\nTake one down and pass it around, no more"));
        let out = output(&bottles(12)).unwrap();
        assert!(out.starts_with("12 bottles"), "{out}");
    }

    #[test]
    fn fractal_draws_a_fractal() {
        // A small picture: inside the set the iterations run out ('A'),
        // farther out they do not.
        let out = output(&fractal(10, 5, 4, 1)).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(lines.iter().all(|l| l.len() == 10));
        assert!(out.contains('A'), "{out}");
        assert!(out.bytes().any(|b| b > b'A' && b != b'\n'), "{out}");
    }

    #[test]
    fn digits_step_fibonacci_numbers() {
        // The last digit of b per step (F(k + 1)'s), then every digit of
        // b, least significant first: a wrong carry shows there.
        for (width, hundreds) in [(3, 1), (30, 2)] {
            let modulus = 10u128.pow(width as u32);
            let (mut x, mut y, mut sum, mut text) = (0u128, 1u128, 0i64, String::new());
            let mut write = |d: u128| {
                let d = d as u8 + b'0';
                sum = checksum_step(sum, d as i64);
                text.push(d as char);
            };
            for _ in 0..100 * hundreds as u32 {
                (x, y) = (y, (x + y) % modulus);
                write(y % 10);
            }
            for k in 0..width as u32 {
                write(y / 10u128.pow(k) % 10);
            }
            let program = digits(width, hundreds);
            assert_eq!(output(&program).unwrap(), text, "{width} digits");
            assert_eq!(run(&program).unwrap().0, sum);
        }
        assert!(digits(30, 1).contains("[<<<<<<<<]"));
    }

    #[test]
    fn escape_counts_rounds_in_binary() {
        // Each pixel's rounds of x := x + (x >> 2) + 1 until the top bit
        // is set, as a character; then the top bits cleared.
        for (width, drop, quarters) in [(8u32, 3u32, 1u8), (48, 5, 1)] {
            let mask = (1u64 << width) - 1;
            let (mut x, mut sum, mut text) = (1u64, 0i64, Vec::new());
            for _ in 0..250 * quarters as u32 {
                x &= mask >> drop;
                let mut rounds = 0u8;
                loop {
                    x = (x + (x >> 2) + 1) & mask;
                    rounds = rounds.wrapping_add(1);
                    if x >> (width - 1) == 1 {
                        break;
                    }
                }
                let c = b'A'.wrapping_add(rounds);
                sum = checksum_step(sum, c as i64);
                text.push(c);
            }
            let program = escape(width as u8, drop as u8, quarters);
            assert_eq!(output(&program).unwrap(), String::from_utf8_lossy(&text), "{width} bits");
            assert_eq!(run(&program).unwrap().0, sum);
            // More than one count of rounds: the pixels differ.
            assert!(text.iter().any(|&c| c != text[0]), "{width} bits");
        }
    }

    #[test]
    fn primes_lists_primes() {
        let out = output(&primes(20, 1)).unwrap();
        assert_eq!(out, "2 3 5 7 11 13 17 19 \n");
    }

    #[test]
    fn counters_count() {
        // Two levels of 3 under an outer loop of 2: 2 * 3 * 3 innermost
        // clears of a 3, and a character per outer round.
        let text = counters(3, 3, 2);
        assert_eq!(output(&text).unwrap(), "AB");
        let (_, steps) = run(&text).unwrap();
        let (_, more) = run(&counters(3, 3, 4)).unwrap();
        assert!(more > steps * 3 / 2, "{steps} {more}");
        assert!(text.contains("+++[-]"), "{text}");
    }

    #[test]
    fn nest_runs_its_loops() {
        let (_, steps) = run(&nest(&[2, 3, 3], 5)).unwrap();
        let (_, more) = run(&nest(&[4, 3, 3], 5)).unwrap();
        assert!(more > steps * 3 / 2);
        assert_eq!(output(&nest(&[2, 3], 5)).unwrap(), "AB");
    }
}
