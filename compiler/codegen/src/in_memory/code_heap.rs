//! Executable memory for code the JIT assembles itself (baseline traces,
//! [`crate::baseline`]): installing a trace is a copy, no system call.
//!
//! Cranelift's JIT module makes each compile's memory writable, then
//! executable: two `mprotect`s, a fresh page-aligned segment per compile,
//! and the kernel's TLB work with them, and a JIT run compiles thousands
//! of small traces (docs/architecture.md, "The baseline tier", has what
//! it cost). Here the memory is mapped
//! twice from one anonymous file ([`memfd_create`]): a writable view the
//! code is copied into and an executable view it runs from, at the same
//! offset. No page is ever writable and executable at one address, and
//! traces are packed one after another (16-byte aligned) instead of a page
//! each.
//!
//! The heap is a list of chunks of [`CHUNK`] bytes (more for a trace that
//! does not fit one), mapped as needed; the file is sparse, so only pages
//! written take memory. Code never moves and is never freed before the
//! heap: it is dropped with the trace cache that owns it, after every run
//! that could execute its code.
//!
//! Baseline code is position-independent within itself (its jumps are
//! relative; calls and constants are absolute addresses), so it runs
//! wherever it is copied. x86-64 processors check stores against fetched
//! instructions by physical address, and code is entered only after it
//! was copied, by a jump through its code slot. The one write where code
//! has run is a link: an exit stub's first instruction overwritten with a
//! jump into its bridge ([`CodeHeap::patch_jump`]), or put back when the
//! link is undone ([`CodeHeap::patch`]), done on the thread
//! that runs the code, between runs of it, so no instruction is being
//! fetched from those bytes as they change; the processor's physical
//! address check makes the next fetch see them.
//!
//! Where the system refuses an executable mapping of a memfd (Linux's
//! `vm.memfd_noexec`, or not Linux), a chunk is one anonymous mapping,
//! writable and executable, as for perf. The heap has no size limit of
//! its own: the JIT's bounds on traces bound it.
//!
//! Resident memory would count the code twice, since both views map its
//! pages (5.7 MB of baseline code was 11.4 MB of a JIT run's peak on a
//! 54 KB BF program). The writable view lets go of the pages code was
//! installed past, a megabyte at a time (`madvise(MADV_DONTNEED)`, which
//! for a shared mapping of a file only unmaps: the code stays in the file
//! and the executable view); a later patch there maps the page again,
//! until the view lets go of the patched pages too ([`REPATCHED`]). So
//! resident memory counts each page of code about once (a page of code
//! not run since it was written counts not at all, though the file
//! holds it). The JIT's worker maps in the writable view's pages the
//! code it makes will be copied to, past the code installed by then
//! ([`Ahead`]): the copy would map them anyway, and the view lets them
//! go as it lets go of the rest.
//!
//! When perf profiles the run (`PERF_BUILDID_DIR` set, as Cranelift's
//! module checks), each trace is named in `/tmp/perf-<pid>.map`. perf
//! reads that file only for anonymous memory, and a file's mapping is not:
//! while it profiles, each chunk is one anonymous mapping, writable and
//! executable.
//!
//! [`memfd_create`]: https://man7.org/linux/man-pages/man2/memfd_create.2.html

use std::io::Write as _;

/// Bytes mapped per chunk (address space; pages are taken when written).
pub const CHUNK: usize = 16 << 20;

/// Code is placed at multiples of this.
const ALIGN: usize = 16;

/// The size of the pages the writable view lets go of: x86-64's, whose
/// code the heap holds (`madvise` wants a page-aligned start).
const PAGE: usize = 4096;

/// The writable view lets go of its pages this many bytes at a time: each
/// `madvise` flushes the other threads' TLBs, and a page at a time made
/// the running thread's compiles of the tutorial BF fractal 1 half as
/// dear again (18 -> 27 ms).
const RELEASE: usize = 256 * PAGE;

/// Patches into pages the writable view let go of, each of which maps a
/// page back, after which it lets them go again: a patch links an exit to
/// its bridge, and public BF hanoi.b's 1,300 pieces of code kept 1 MB of
/// code mapped twice by them. (Each `madvise` flushes the other threads'
/// TLBs, as above.)
const REPATCHED: usize = 64;

/// One region mapped twice.
struct Chunk {
    write: *mut u8,
    exec: *const u8,
    len: usize,
    used: usize,
    /// Bytes at the start of the writable view whose pages it let go of
    /// (a multiple of the page size; see the module docs).
    released: usize,
    /// Patches written into those pages since the view last let them go
    /// ([`Chunk::release_patched`]).
    patched: usize,
}

fn failed(what: &str) -> String {
    format!("making executable memory ({what}): {}", std::io::Error::last_os_error())
}

impl Chunk {
    /// A chunk of `len` bytes, mapped twice, or `once` (for perf, and
    /// where the system refuses executable mappings of a memfd: Linux's
    /// `vm.memfd_noexec`, other systems).
    fn new(len: usize, once: bool) -> Result<Chunk, String> {
        if once {
            return Chunk::once(len);
        }
        Chunk::twice(len).or_else(|_| Chunk::once(len))
    }

    /// One anonymous mapping, writable and executable.
    fn once(len: usize) -> Result<Chunk, String> {
        let prot = libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC;
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // SAFETY: a fresh anonymous mapping; the result is checked.
        let at = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, -1, 0) };
        if at == libc::MAP_FAILED {
            return Err(failed("anonymous mmap"));
        }
        Ok(Chunk { write: at.cast(), exec: at.cast_const().cast(), len, used: 0, released: 0, patched: 0 })
    }

    /// One memfd mapped writable and, elsewhere, executable.
    #[cfg(not(target_os = "linux"))]
    fn twice(_len: usize) -> Result<Chunk, String> {
        Err("no memfd here".into())
    }

    /// One memfd mapped writable and, elsewhere, executable.
    #[cfg(target_os = "linux")]
    fn twice(len: usize) -> Result<Chunk, String> {
        // SAFETY: plain system calls on a descriptor this function owns;
        // every result is checked before it is used, and the descriptor
        // is closed on every path (the mappings keep the file alive).
        unsafe {
            let fd = libc::memfd_create(c"flowc-code".as_ptr(), libc::MFD_CLOEXEC);
            if fd < 0 {
                return Err(failed("memfd_create"));
            }
            let close = |e: String| {
                libc::close(fd);
                e
            };
            if libc::ftruncate(fd, len as libc::off_t) != 0 {
                return Err(close(failed("ftruncate")));
            }
            let map = |prot| libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0);
            let write = map(libc::PROT_READ | libc::PROT_WRITE);
            if write == libc::MAP_FAILED {
                return Err(close(failed("mmap of the writable view")));
            }
            let exec = map(libc::PROT_READ | libc::PROT_EXEC);
            if exec == libc::MAP_FAILED {
                libc::munmap(write, len);
                return Err(close(failed("mmap of the executable view")));
            }
            libc::close(fd);
            Ok(Chunk { write: write.cast(), exec: exec.cast_const().cast(), len, used: 0, released: 0, patched: 0 })
        }
    }

    /// Lets the writable view go of the pages code was installed past,
    /// when there are two views (module docs), [`RELEASE`] bytes at a
    /// time.
    fn release_written(&mut self) {
        if self.write.cast_const() == self.exec {
            return;
        }
        let done = self.used / PAGE * PAGE;
        if done >= self.released + RELEASE {
            // SAFETY: the range lies within the writable view, a shared
            // mapping of the chunk's file: unmapping its pages keeps their
            // contents in the file, which the executable view maps, and
            // touching them again maps them back (madvise(2)).
            unsafe { libc::madvise(self.write.add(self.released).cast(), done - self.released, libc::MADV_DONTNEED) };
            self.released = done;
        }
    }

    /// Notes a patch at `offset`; after [`REPATCHED`] of them into pages
    /// the writable view had let go of, which each mapped back, it lets
    /// them all go again (module docs).
    fn release_patched(&mut self, offset: usize) {
        if self.write.cast_const() == self.exec || offset >= self.released {
            return;
        }
        self.patched += 1;
        if self.patched >= REPATCHED {
            // SAFETY: as in `release_written`, over pages it let go of
            // before.
            unsafe { libc::madvise(self.write.cast(), self.released, libc::MADV_DONTNEED) };
            self.patched = 0;
        }
    }

    /// Whether the `n` bytes at address `at` are all code installed in
    /// this chunk.
    fn installed(&self, at: u64, n: usize) -> bool {
        let start = self.exec as u64;
        at >= start && at.saturating_add(n as u64) <= start + self.used as u64
    }

    /// Where `n` bytes would go, if they fit.
    fn room(&self, n: usize) -> Option<usize> {
        let at = self.used.next_multiple_of(ALIGN);
        (at.checked_add(n)? <= self.len).then_some(at)
    }
}

impl Drop for CodeHeap {
    /// Its chunks go after this: no worker's [`Ahead`] reaches them from
    /// now on (one that read the end before may still advise on their
    /// range, which changes nothing there).
    fn drop(&mut self) {
        self.end.store(0, std::sync::atomic::Ordering::Release);
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: both views (or the one) were mapped by `Chunk::new` with
        // this length and are unmapped once, here; the heap's owner
        // guarantees no code in them runs any more (see the module docs).
        unsafe {
            libc::munmap(self.write.cast(), self.len);
            if self.exec != self.write.cast_const() {
                libc::munmap(self.exec.cast_mut().cast(), self.len);
            }
        }
    }
}

/// Where the code a heap installs next will go ([`CodeHeap::ahead`]), for
/// another thread to fault its pages in before the copy: the code the
/// JIT's worker makes is copied in by the running thread, and a loop of
/// 900 operations, 185 KB of code, took that thread some 0.25 ms to
/// install, most of it a page fault per fresh page of the heap.
#[derive(Clone, Debug)]
pub struct Ahead {
    /// The writable view's address where the code would go, when this was
    /// taken.
    write: usize,
    /// The chunk's writable view: its start and end.
    chunk: (usize, usize),
    /// Where the heap's installed code ends now ([`CodeHeap::end`]).
    end: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Ahead {
    /// Maps in the writable view's pages of the next `n` bytes, from where
    /// the heap's installed code ends by now (code installed since this was
    /// taken moved it on, and the copy goes there), or from where this was
    /// taken if that is later (Linux's
    /// `MADV_POPULATE_WRITE`, since 5.14): the copy into them then faults
    /// no page on the running thread. Nothing once the heap has moved to
    /// another chunk or is gone (its end then lies outside this chunk),
    /// and never a page below that end: the pages the writable view let go
    /// of stay let go. The executable view is left alone (code that never
    /// runs maps no page there). Whether the pages were mapped in (false
    /// where the system refused, or nothing was asked).
    pub fn fault_in(&self, n: usize) -> bool {
        use std::sync::atomic::Ordering;
        let (start, end) = self.chunk;
        let now = self.end.load(Ordering::Acquire);
        if now < start || now > end {
            return false;
        }
        let from = self.write.max(now);
        let to = from.saturating_add(n).min(end);
        if to <= from {
            return false;
        }
        let first = from / PAGE * PAGE;
        let len = to.next_multiple_of(PAGE) - first;
        #[cfg(target_os = "linux")]
        {
            // SAFETY: advice on an address range, which reads and writes
            // none of its bytes: populating maps pages in and never changes
            // what memory holds. The range lies in the chunk (checked above)
            // unless the heap dropped it since, when the call fails or maps
            // in pages of whatever is there now, unchanged.
            unsafe { libc::madvise(first as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE) == 0 }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = len;
            false
        }
    }
}

/// Executable memory that code is copied into (see the module docs).
#[derive(Default)]
pub struct CodeHeap {
    chunks: Vec<Chunk>,
    /// `/tmp/perf-<pid>.map`, when perf profiles the run.
    perf_map: Option<std::fs::File>,
    /// Bytes of code installed.
    size: usize,
    /// Where the installed code ends (the writable view's address past
    /// the last chunk's code; 0 once the heap is gone), for the worker's
    /// [`Ahead`]s.
    end: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl CodeHeap {
    /// An empty heap (nothing is mapped until code is installed).
    pub fn new() -> CodeHeap {
        let perf_map = std::env::var_os("PERF_BUILDID_DIR").and_then(|_| {
            let path = format!("/tmp/perf-{}.map", std::process::id());
            std::fs::OpenOptions::new().create(true).append(true).open(path).ok()
        });
        CodeHeap { chunks: Vec::new(), perf_map, size: 0, end: Default::default() }
    }

    /// Where code installed next goes unless it needs a chunk of its own
    /// (nothing before the first chunk).
    pub fn ahead(&self) -> Option<Ahead> {
        let c = self.chunks.last()?;
        let start = c.write as usize;
        let write = start + c.used.next_multiple_of(ALIGN);
        Some(Ahead { write, chunk: (start, start + c.len), end: self.end.clone() })
    }

    /// Copies `code` (named `name`) into the heap; returns the address it
    /// runs at, which stays valid as long as the heap.
    pub fn install(&mut self, name: &str, code: &[u8]) -> Result<*const u8, String> {
        let fits = self.chunks.last().and_then(|c| c.room(code.len()));
        let at = match fits {
            Some(at) => at,
            None => {
                let len = code.len().next_multiple_of(CHUNK).max(CHUNK);
                self.chunks.push(Chunk::new(len, self.perf_map.is_some())?);
                0
            }
        };
        let chunk = self.chunks.last_mut().expect("a chunk was just made");
        // SAFETY: `at + code.len()` is within the chunk (`room`), the
        // writable view is mapped for the chunk's length, and no code runs
        // from these bytes yet (they lie past every installed trace).
        unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), chunk.write.add(at), code.len()) };
        chunk.used = at + code.len();
        chunk.release_written();
        self.size += code.len();
        self.end.store(chunk.write as usize + chunk.used, std::sync::atomic::Ordering::Release);
        // SAFETY: the same offset in the executable view, mapped as long.
        let address = unsafe { chunk.exec.add(at) };
        if let Some(map) = &mut self.perf_map {
            let _ = writeln!(map, "{:x} {:x} {name}", address as usize, code.len());
        }
        Ok(address)
    }

    /// Overwrites the instruction of at least five bytes at `at` (an
    /// address `install` returned, plus an offset within that code) with
    /// a jump to `to`; false, writing nothing, when `to` is out of a
    /// 32-bit displacement's reach or `at` is not in the heap.
    pub fn patch_jump(&mut self, at: u64, to: u64) -> bool {
        let Ok(rel) = i32::try_from(to as i64 - (at as i64 + 5)) else { return false };
        let mut jump = [0xe9u8, 0, 0, 0, 0];
        jump[1..].copy_from_slice(&rel.to_le_bytes());
        self.patch(at, &jump)
    }

    /// Overwrites the bytes at `at` (an address `install` returned, plus
    /// an offset within that code) with `bytes`, whole instructions where
    /// code has run (what [`CodeHeap::read`] read there before a patch,
    /// to undo it); false, writing nothing, when they are not all in the
    /// heap's installed code.
    pub fn patch(&mut self, at: u64, bytes: &[u8]) -> bool {
        let Some(chunk) = self.chunks.iter_mut().find(|c| c.installed(at, bytes.len())) else {
            return false;
        };
        let offset = at as usize - chunk.exec as usize;
        // SAFETY: the bytes lie in the chunk's installed code (checked
        // above); the writable view maps the same bytes at the same
        // offset. No code runs meanwhile (code runs on this thread only),
        // and the processor sees the store before it next fetches there
        // (module docs).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), chunk.write.add(offset), bytes.len());
        }
        chunk.release_patched(offset);
        true
    }

    /// The `N` bytes of installed code at `at`, if they are all in the
    /// heap.
    pub fn read<const N: usize>(&self, at: u64) -> Option<[u8; N]> {
        let chunk = self.chunks.iter().find(|c| c.installed(at, N))?;
        let mut bytes = [0u8; N];
        // SAFETY: the bytes lie in the chunk's installed code (checked
        // above), mapped readable in its executable view.
        unsafe {
            let offset = at as usize - chunk.exec as usize;
            std::ptr::copy_nonoverlapping(chunk.exec.add(offset), bytes.as_mut_ptr(), N);
        }
        Some(bytes)
    }

    /// Bytes of code installed so far.
    pub fn size(&self) -> usize {
        self.size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pages the next code goes to, faulted in from where that code
    /// is made ([`Ahead::fault_in`]): resident afterwards, and not before
    /// (a fresh chunk's file has no page until one is touched); nothing
    /// once the heap has moved on to another chunk, or is gone. Where the
    /// system cannot populate, `fault_in` says it did nothing.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_pages_ahead_are_faulted_in() {
        let resident = |at: usize, len: usize| -> Vec<bool> {
            let mut v = vec![0u8; len.div_ceil(PAGE)];
            // SAFETY: `at` is page-aligned and `len` bytes from it are
            // mapped (inside the chunk); `v` has a byte per page.
            let ok = unsafe { libc::mincore(at as *mut libc::c_void, len, v.as_mut_ptr()) };
            assert_eq!(ok, 0, "mincore: {}", std::io::Error::last_os_error());
            v.iter().map(|b| b & 1 == 1).collect()
        };
        let mut heap = CodeHeap::new();
        heap.install("answer", &[0xb8, 42, 0, 0, 0, 0xc3]).unwrap();
        let ahead = heap.ahead().expect("a chunk");
        let page = |k: usize| (ahead.write / PAGE + k) * PAGE;
        // (One anonymous mapping may be backed by huge pages at the first
        // write: only a file's pages are surely untouched.)
        let two_views = heap.chunks[0].write.cast_const() != heap.chunks[0].exec;
        if two_views {
            assert_eq!(resident(page(1), 4 * PAGE), vec![false; 4], "untouched");
        }
        // SAFETY: advice on the page the code was installed in.
        let populates = unsafe { libc::madvise(page(0) as *mut libc::c_void, PAGE, libc::MADV_POPULATE_WRITE) } == 0;
        // Three pages from a few bytes into the first: into the fourth.
        assert_eq!(ahead.fault_in(3 * PAGE), populates);
        if populates {
            assert_eq!(resident(page(1), 4 * PAGE), vec![true, true, true, false]);
        }
        // Code installed since: the next goes past it, and so do the pages
        // faulted in for it, as many as asked.
        heap.install("more", &vec![0xc3; 4 * PAGE]).unwrap();
        assert_eq!(ahead.fault_in(3 * PAGE), populates);
        if populates {
            assert_eq!(resident(page(5), 4 * PAGE), vec![true, true, true, false]);
        }
        // Code that fills the chunk: the next goes to a chunk of its own.
        let rest = CHUNK - heap.chunks[0].used.next_multiple_of(ALIGN);
        heap.install("filler", &vec![0xc3; rest]).unwrap();
        heap.install("after", &[0xc3]).unwrap();
        assert_eq!(heap.chunks.len(), 2);
        assert!(!ahead.fault_in(PAGE), "the heap moved on");
        let second = heap.ahead().expect("the second chunk");
        drop(heap);
        assert!(!second.fault_in(PAGE), "the heap is gone");
    }

    #[test]
    fn installed_code_runs_where_it_was_copied() {
        let mut heap = CodeHeap::new();
        // mov eax, 42; ret — then a second function, mov eax, 7; ret.
        let first = heap.install("answer", &[0xb8, 42, 0, 0, 0, 0xc3]).unwrap();
        let second = heap.install("seven", &[0xb8, 7, 0, 0, 0, 0xc3]).unwrap();
        assert_eq!(second as usize - first as usize, ALIGN, "code is packed, 16-byte aligned");
        // SAFETY: both addresses hold the complete functions just copied,
        // which take nothing and return an i32 in eax.
        let (a, b) = unsafe {
            let a: extern "C" fn() -> i32 = std::mem::transmute(first);
            let b: extern "C" fn() -> i32 = std::mem::transmute(second);
            (a(), b())
        };
        assert_eq!((a, b), (42, 7));
        assert_eq!(heap.size(), 12);
    }

    /// Code that has run, patched: its first instruction a jump to other
    /// code, which runs instead; an address outside the heap is refused.
    #[test]
    fn a_patched_instruction_jumps_where_it_was_told() {
        let mut heap = CodeHeap::new();
        let first = heap.install("answer", &[0xb8, 42, 0, 0, 0, 0xc3]).unwrap();
        let second = heap.install("seven", &[0xb8, 7, 0, 0, 0, 0xc3]).unwrap();
        // SAFETY: as above; after the patch `first` is a jump to `second`.
        let call = |f: *const u8| unsafe { std::mem::transmute::<*const u8, extern "C" fn() -> i32>(f)() };
        assert_eq!(call(first), 42);
        assert!(heap.patch_jump(first as u64, second as u64));
        assert_eq!((call(first), call(second)), (7, 7));
        let elsewhere = [0u8; 8];
        assert!(!heap.patch_jump(elsewhere.as_ptr() as u64, second as u64));
    }

    /// Code installed pages before the end of the writable view, which
    /// has let those pages go, still runs and can still be patched.
    #[test]
    fn code_whose_writable_pages_were_let_go_runs_and_is_patched() {
        let mut heap = CodeHeap::new();
        let first = heap.install("answer", &[0xb8, 42, 0, 0, 0, 0xc3]).unwrap();
        let filler = vec![0xc3u8; RELEASE + PAGE];
        heap.install("filler", &filler).unwrap();
        let last = heap.install("seven", &[0xb8, 7, 0, 0, 0, 0xc3]).unwrap();
        let chunk = &heap.chunks[0];
        if chunk.write.cast_const() != chunk.exec {
            assert!(chunk.released >= RELEASE, "{} bytes let go", chunk.released);
        }
        // SAFETY: as above.
        let call = |f: *const u8| unsafe { std::mem::transmute::<*const u8, extern "C" fn() -> i32>(f)() };
        assert_eq!((call(first), call(last)), (42, 7));
        assert!(heap.patch_jump(first as u64, last as u64));
        assert_eq!(call(first), 7);
        // Patched often enough that the view lets the patched pages go
        // again, the code runs as last patched.
        let middle = heap.install("middle", &[0xb8, 9, 0, 0, 0, 0xc3]).unwrap();
        for k in 0..=REPATCHED {
            let to = if k % 2 == 0 { middle } else { last };
            assert!(heap.patch_jump(first as u64, to as u64));
            assert_eq!(call(first), call(to));
        }
        let chunk = &heap.chunks[0];
        if chunk.write.cast_const() != chunk.exec {
            // 1 + REPATCHED + 1 patches: the view let go after the
            // REPATCHED-th, and counts the two since.
            assert_eq!(chunk.patched, 2);
        }
    }

    #[test]
    fn a_chunk_mapped_once_for_perf_runs_its_code_too() {
        let chunk = Chunk::new(CHUNK, true).unwrap();
        assert_eq!(chunk.write.cast_const(), chunk.exec);
        let code = [0xb8, 5, 0, 0, 0, 0xc3]; // mov eax, 5; ret
                                             // SAFETY: the chunk is writable and executable, `CHUNK` bytes
                                             // long; the function copied takes nothing and returns an i32.
        let five = unsafe {
            std::ptr::copy_nonoverlapping(code.as_ptr(), chunk.write, code.len());
            std::mem::transmute::<*const u8, extern "C" fn() -> i32>(chunk.exec)()
        };
        assert_eq!(five, 5);
    }

    #[test]
    fn code_larger_than_a_chunk_gets_its_own() {
        let mut heap = CodeHeap::new();
        let mut big = vec![0x90u8; CHUNK + 1]; // nops, then ret
        *big.last_mut().unwrap() = 0xc3;
        heap.install("small", &[0xc3]).unwrap();
        let at = heap.install("big", &big).unwrap();
        assert_eq!(heap.chunks.len(), 2);
        // SAFETY: `at` holds `big`: nops sliding into a `ret`.
        unsafe { std::mem::transmute::<*const u8, extern "C" fn()>(at)() };
    }
}
