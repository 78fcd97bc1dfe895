//! IR functions to Cranelift IR (docs/architecture.md "Code generation").
//!
//! Every IR block becomes a Cranelift block whose parameters are the IR
//! block's phis; edges pass the phi inputs. Every function takes its
//! parameters and the run's context pointer as 64-bit words and returns a
//! word, [`STOP`] when the program stopped (an error or `print`), which
//! callers pass up. Integer `add`, `sub`, `mul`, floored `//` and `%`
//! (in 32 bits when both operands fit) and comparisons run inline on tagged
//! words when both operands are small integers, with overflow checks; a
//! comparison that only feeds its block's branch becomes a compare-and-
//! branch. List reads of immediate elements run inline too ([`lists`]).
//! Everything else, and every slow path, calls the runtime.
//!
//! Optimistic copy: the blocks on cycles of a function or trace whose
//! loops' arithmetic is not all known to stay small are lowered twice in
//! one Cranelift function ([`optimistic`]). The optimistic copy assumes
//! every `add`, `sub`, `mul`, `//` and `%` result is a small integer
//! ([`Small::optimistic`]), so values those results flow into need no tag
//! tests; where an operation finds an operand that is not a small
//! integer, or overflows, the runtime computes it and execution continues
//! in the generic copy right after that operation. The parameters it
//! reads as numbers are assumed small too. The function starts in the
//! generic copy, which enters the optimistic one where an edge enters a
//! cycle, when the values live there that it assumes small are (else the
//! loop runs in the generic copy). IR values then live in Cranelift
//! variables, which the SSA builder merges where the copies meet
//! ([`home`]: where the lowerer keeps values, one strategy per function). A guard
//! lowered in both copies leaves by one exit number.
//! What code each function gets is its plan's to say ([`crate::plan`]).
//! Huge functions (`flowc_ir::HUGE_INSTS`) get one copy, and are lowered
//! for compile time: cut into regions compiled as functions of their own
//! ([`frame`]: values that cross regions, and every value the collector
//! must see, live in words of a frame their driver holds), no inline paths
//! outside loops ([`Lowerer::is_cold`]), one stop test per block
//! ([`Lowerer::flush_stop`]), no cold blocks (see [`Lowerer::mark_cold`]).
//! In a whole program, blocks that run at most [`crate::plan::policy::COLD_RUNS`] times per run
//! in all ([`flowc_ir::frequency`]: the main graph's blocks on no cycle or
//! in counted loops, and those of functions it calls a bounded number of
//! times) are cold: lowered like a huge function's outside loops; a
//! function with no hot block is compiled like a huge function
//! ([`crate::plan::Plan::of`]).
//!
//! Tiered code ([`crate::tiers`]): tier 0 is lowered like a cold function
//! split into regions, its hot loop headers entries of their regions that
//! count iterations ([`Lowerer::count_iteration`]); the optimized tier is
//! lowered whole, and its on-stack replacement entries ([`osr`]) as the
//! whole function entered at those headers. Calls of tiered functions go
//! through their code slots. A huge function tiered region by region
//! ([`crate::plan::Plan::by_region`]) is lowered as huge functions are,
//! its regions counting their entries and hot loop iterations and
//! hopping to their optimized tiers ([`region`]); a region's optimized
//! tier is the same region lowered with the plan
//! [`crate::plan::Plan::region_tier1`].
//!
//! Roots: a function compiled whole stores each value that may point into
//! the heap in a word of a frame of its own before each call it lives
//! across ([`Lowerer::store_across`]), and every call lists those words in
//! its stack map ([`frame::Roots`]); the code itself keeps the value in a
//! register, as cells never move.
//!
//! Block order: Cranelift lowers blocks in the reverse postorder of a
//! search that takes a branch's first target first, which puts that
//! target's region after the other's. Every loop header therefore
//! branches to its exit first and its body second ([`Lowerer::branch`]):
//! the body follows its header, and the rest of the function follows the
//! loop, instead of the rest of the function coming between a loop's
//! header and its body (which made values of outer loops live across
//! everything that followed, for the register allocator).
//!
//! Traces: a guard branches to an exit stub that stores the values its
//! resume record needs in the context's exit buffer and returns the exit's
//! number; a bridge's `exit` terminator does the same.
//!
//! Errors: before a runtime call that can fail, the code stores the source
//! site of the instruction (numbered in a [`SiteTable`]) in the context, so
//! an error names its statement like the interpreter's (the runtime keeps
//! the site of the first error). Functions store their frame and stack
//! pointers in the context on entry and after each call (traces before
//! every runtime call), where a collection starts walking frames.

use rustc_hash::FxHashMap as HashMap;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, BlockArg, FuncRef, InstBuilder, MemFlagsData, Signature, Value as ClValue,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_module::{FuncId, Module as _};

use flowc_ir::{BlockId, Function, InstKind, Operand, Terminator, ValueId};
use flowc_lang::ast::Operator;
use flowc_lang::ops::{Form, Op};
use flowc_lang::Value;

use crate::code_map::IrPlace;
use crate::plan::Plan;
use crate::runtime::{offsets, RuntimeFn};

pub(crate) mod exits;
pub mod frame;
mod home;
mod ints;
mod links;
mod lists;
mod objects;
mod optimistic;
mod osr;
mod region;
pub(crate) mod switch;
use crate::small::Small;
use crate::word::{self, ONE, STOP, ZERO};
pub use exits::{CodeSlot, CodeSlots, ExitSlot, ExitSlots, Links, TraceExit, TraceRef};
use exits::{ExitAt, Leaving};
use flowc_ir::ix;
use frame::Roots;
use home::Home;
pub(crate) use ints::inline_word;
use ints::int_cc;
pub use objects::{fields_always_set, fields_holding_objects, ObjectInfo};
use optimistic::{optimistic_exits, LoopEntries};
pub use osr::lower_osr;
pub use region::lower_region;
use region::Region;

/// What lowering needs from the module being built (a function's code
/// goes into it; callers name it `env`).
pub struct Building<'a> {
    /// The module functions are defined in: in memory (JIT) or an object file.
    pub module: &'a mut dyn cranelift_module::Module,
    /// Declared functions of the IR module, by name.
    pub funcs: &'a HashMap<flowc_lang::Symbol, (FuncId, usize)>,
    /// Declared runtime functions, by name.
    pub runtime: &'a crate::define::RuntimeImports,
    /// Where constants that are not immediate words (lists, big integers)
    /// live.
    pub constants: Constants<'a>,
    /// Errors raised by `trap`, by index.
    pub traps: &'a mut Vec<flowc_lang::interp::ErrorKind>,
    /// The exits of a trace, by index: guard `k` returns `k + 1`.
    pub exits: &'a mut Vec<TraceExit>,
    /// Source sites of runtime calls that can fail.
    pub sites: &'a mut SiteTable,
    /// Whether code counts fuel: one step per loop iteration (at every
    /// loop header), stopping with `fuel_exhausted` at 0 — so a runaway
    /// loop under `--fuel` ends in compiled code too.
    pub fuel: bool,
    /// Split every function but traces into regions of this many
    /// instructions at most (`crate::define::Options::split`).
    pub split: Option<usize>,
    /// Traces only: the link slots of their exits ([`ExitSlots`]), and the
    /// traces a `jump_trace` may name, by name (each with its parameter
    /// count). `None` outside a trace cache.
    pub links: Option<Links<'a>>,
    /// Every function defined: size and safepoints ([`crate::define::DefinedCode`]).
    pub safepoints: &'a mut Vec<crate::define::DefinedCode>,
    /// The layout of the objects the code meets.
    pub objects: &'a ObjectInfo,
    /// Where lowered functions are compiled and defined.
    pub compiler: &'a mut crate::compile::Compiler,
    /// Tiered code's slots and counters ([`crate::tiers`]): calls of a
    /// tiered function go through its slot. `None`: nothing is tiered.
    pub tiers: Option<&'a crate::tiers::Tables>,
}

/// The source sites of a unit's runtime calls, numbered: the code stores a
/// site's number in the context before a call that can fail. A table's
/// numbers start at its `base` (0 but for a table that numbers the sites
/// of code generated away from the cache's own, [`SiteTable::starting_at`],
/// so that the two never give the same number).
#[derive(Clone, Debug, Default)]
pub struct SiteTable {
    pub sites: Vec<flowc_ir::Site>,
    numbers: HashMap<flowc_ir::Site, u64>,
    base: u64,
}

impl SiteTable {
    /// An empty table whose numbers start at `base`.
    pub fn starting_at(base: u64) -> SiteTable {
        SiteTable { base, ..SiteTable::default() }
    }

    /// The number of `site`, adding it if new.
    pub fn number(&mut self, site: flowc_ir::Site) -> u64 {
        let base = self.base;
        *self.numbers.entry(site).or_insert_with(|| {
            self.sites.push(site);
            base + (self.sites.len() - 1) as u64
        })
    }

    /// The site numbered `n` (what a context's `site` field holds).
    pub fn get(&self, n: u64) -> Option<flowc_ir::Site> {
        self.sites.get(usize::try_from(n.checked_sub(self.base)?).ok()?).copied()
    }

    /// Where the site numbered `n` is in the source, as an error names it
    /// (without the statement's text: see `Location::with_text`).
    pub fn location(&self, n: u64) -> Option<flowc_lang::interp::Location> {
        self.get(n).map(|site| site.location())
    }
}

/// Constants that do not fit a word.
pub enum Constants<'a> {
    /// In memory: cells of the heap the caller keeps pinned while the code
    /// lives; code holds their words.
    Rooted(&'a mut Vec<flowc_lang::heap::Root>),
    /// In an object file: constant `k` is word `k` of the data object
    /// `table`, which the runtime fills when the executable starts.
    Table { values: &'a mut Vec<Value>, table: cranelift_module::DataId },
}

/// The signature of a generated function with `n` parameters.
pub fn signature(module: &dyn cranelift_module::Module, n: usize) -> Signature {
    let mut sig = module.make_signature();
    for _ in 0..=n {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig.returns.push(AbiParam::new(types::I64));
    sig
}

/// The signature of a trace: the tail-call convention, so that traces can
/// continue in one another (`jump_trace`, linked exits) without growing
/// the stack, and only the context as argument: a trace finds its
/// parameters in the context's exit buffer, where whoever enters it —
/// an exit linked to it, a `jump_trace`, the entry wrapper — stores them.
/// (A tail call with every value as an argument cost the register
/// allocator more than the rest of a trace.)
pub fn trace_signature(module: &dyn cranelift_module::Module) -> Signature {
    let mut sig = signature(module, 0);
    sig.call_conv = cranelift_codegen::isa::CallConv::Tail;
    sig
}

/// Where fuel running out at loop header `blk` of `f` is raised: the
/// header's first statement; a header whose code is all gone (an empty
/// loop) still names its block.
pub(crate) fn header_site(f: &Function, blk: BlockId) -> Option<flowc_ir::Site> {
    let first = f.blocks[blk].insts.first().copied();
    first.map_or(f.sites.term(blk), |i| f.sites.inst(i)).or_else(|| {
        let function = (f.kind == flowc_ir::FunctionKind::Function).then_some(f.name);
        let block = f.blocks[blk].name?;
        Some(flowc_ir::Site { function, block, statement: 1, is_terminator: false })
    })
}

/// The signature `f` is compiled with.
pub fn signature_of(module: &dyn cranelift_module::Module, f: &Function) -> Signature {
    if f.kind == flowc_ir::FunctionKind::Trace {
        trace_signature(module)
    } else {
        signature(module, f.params.len())
    }
}

/// The Cranelift block each IR block starts at. (Maps of a lowering are
/// hash maps, not arena maps: a region of a split function holds a few of
/// the function's blocks and values, and an arena map's size is the
/// largest id it holds — per region, the whole function's.)
type Blocks = HashMap<BlockId, cranelift_codegen::ir::Block>;

/// Where lowering is, for the values live across a call made there
/// ([`frame::Frame::across_inst`]).
#[derive(Clone, Copy)]
enum Position {
    /// Inside an instruction.
    Inst(flowc_ir::InstId),
    /// In a block's terminator.
    Term(BlockId),
    /// Between them (a block's phis and counts), where calls only stop.
    Between,
}

struct Lowerer<'a, 'b> {
    b: FunctionBuilder<'b>,
    env: &'b mut Building<'a>,
    f: &'b Function,
    blocks: Blocks,
    /// Where each IR value's Cranelift value is ([`Home`]).
    home: Home,
    /// A function compiled whole: the words where the values that may
    /// point into the heap are kept for the collector ([`Roots`]).
    roots: Option<Roots>,
    /// Lowering the optimistic copy (else the generic one, or the only one).
    optimistic: bool,
    /// With an optimistic copy: where the generic copy enters it.
    loop_entries: Option<LoopEntries>,
    /// The instructions where the optimistic copy may leave for the generic
    /// one: arithmetic it assumes small that the generic copy does not.
    exit_points: std::collections::HashSet<flowc_ir::InstId>,
    /// Where the generic copy goes on after each exit point.
    conts: HashMap<flowc_ir::InstId, cranelift_codegen::ir::Block>,
    /// The number of each trace exit already lowered, by what defines it:
    /// resume record, label, tested value and kind (two guards may share a
    /// resume record and leave to different labels). Both copies of a guard
    /// leave by one exit, so failures are counted and bridges attached per
    /// guard.
    exit_numbers: HashMap<ExitAt, usize>,
    /// The IR block being lowered.
    current: BlockId,
    /// The runtime functions declared in the function, by [`RuntimeFn`].
    refs: [Option<FuncRef>; RuntimeFn::ALL.len()],
    ctx: ClValue,
    stop: cranelift_codegen::ir::Block,
    /// Uses of each value (by raw index: operands, phi inputs,
    /// terminators, resume data).
    uses: &'b [u32],
    /// The site index of the instruction being lowered, if it has one.
    site: Option<u64>,
    /// Where lowering is, for the values a call made there must leave
    /// for the collector ([`Lowerer::store_across`]).
    position: Position,
    /// Values certainly small integers: their tag tests are left out.
    small: &'b Small,
    /// Values that can never be unbound ([`flowc_ir::bound::surely_bound`],
    /// by raw value index): uses of them need no `key_not_found` test.
    bound: &'b bitvec::vec::BitVec,
    /// [`Facts::links`].
    links: &'b bitvec::vec::BitVec,
    /// [`Facts::link_tests`].
    link_tests: &'b HashMap<BlockId, flowc_ir::InstId>,
    /// [`Facts::switches`].
    switches: &'b HashMap<BlockId, switch::Chain>,
    /// [`Facts::guard_chains`].
    guard_chains: &'b HashMap<flowc_ir::InstId, switch::GuardChain>,
    /// [`Facts::fresh_sets`]: `set`s the heap's rows need not see.
    fresh_sets: &'b bitvec::vec::BitVec,
    /// Comparisons of small integers computed inline: the machine
    /// condition behind the result word, which guards and branches on the
    /// result test directly instead of testing the word.
    conds: HashMap<ValueId, ClValue>,
    /// Blocks a retreating edge enters (every cycle passes one): where fuel
    /// is counted.
    headers: &'b [bool],
    /// The cycle each block lies on, if any, by raw index
    /// ([`Lowerer::is_cold`], [`Lowerer::loop_entry`]).
    cycles: &'b [Option<u32>],
    /// The natural loops, for placing innermost loop bodies after their
    /// header.
    loops: &'b flowc_ir::loops::LoopForest,
    /// Traces: the loop iterations run so far (loaded from the context on
    /// entry, one more at every loop header, stored back on the way out).
    iterations: Option<Variable>,
    /// Traces: the block every exit ends in, made on first use: given the
    /// exit's link slot and its number, it continues in the slot's bridge,
    /// or returns the number. (One per function: a tail call in every exit
    /// cost the register allocator more than the rest of a trace.)
    leave: Option<cranelift_codegen::ir::Block>,
    /// What code the function gets ([`Plan`]): its blocks' inline paths,
    /// where slow paths go, when stops are tested.
    plan: Plan,
    /// Lowering one region of a split huge function ([`frame`]).
    split: Option<Region<'b>>,
    /// The function's runs per run of the program are known
    /// ([`Facts::with_runs`]): its blocks on no hot cycle are cold.
    runs_known: bool,
    /// The frame and stack pointers are stored on entry and after calls
    /// (functions), not before every runtime call (traces).
    frame_stored: bool,
    /// Lowering the instructions of a block of a huge function: runtime
    /// calls' stops are tested once, by [`Lowerer::flush_stop`]; and
    /// whether a call since the last test needs one.
    defer_stop: bool,
    stop_pending: bool,
}

/// What both code generators read of an IR function, computed in one walk
/// of its CFG and one of its instructions: the CFG, which operands are
/// certainly small integers, which values are surely bound, and the loop
/// headers. Baseline code reads only these ([`crate::baseline`]): the
/// dominator tree, loop forest and run bounds of [`Facts`] cost it as much
/// as its own code generation.
pub struct Shape {
    pub cfg: flowc_ir::cfg::Cfg,
    pub small: Small,
    bound: bitvec::vec::BitVec,
    headers: Vec<bool>,
    /// By resume record of a trace: the values an exit by it stores
    /// ([`exits::record_values`]; empty for other functions).
    records: Vec<std::sync::Arc<[ValueId]>>,
    /// For a trace without a loop of its own that may run without the
    /// driver seeing it (a bridge, an entry trace, a loop's preamble): the
    /// interpreter statements it stands in for, which its code adds to
    /// `Ctx::work` each time it is entered, at its entry block (whichever
    /// exit it then leaves by: an upper bound; nothing where the entry
    /// block is also jumped to, as a trace's loop header is). 0 (the
    /// default): nothing is counted.
    pub work: u32,
}

impl Shape {
    /// The shape of `f`.
    pub fn new(f: &Function) -> Shape {
        let cfg = flowc_ir::cfg::Cfg::new(f);
        let mut headers = cfg.retreating_targets();
        if f.kind == flowc_ir::FunctionKind::Trace && ix(f.entry) < headers.len() {
            // Traces continue in one another (linked exits, `jump_trace`): a
            // cycle through several traces passes their entries.
            headers[ix(f.entry)] = true;
        }
        let records = match f.kind {
            flowc_ir::FunctionKind::Trace => f.resumes.iter().map(|(r, _)| exits::record_values(f, r).into()).collect(),
            _ => Vec::new(),
        };
        Shape { small: Small::of(f), bound: flowc_ir::bound::surely_bound(f), headers, cfg, records, work: 0 }
    }

    /// The values an exit by resume record `r` stores, if made ahead.
    pub(crate) fn record_values(&self, r: flowc_ir::ResumeId) -> Option<&std::sync::Arc<[ValueId]>> {
        self.records.get(ix(r))
    }

    /// Whether block `b` is a loop header (a traces' entry too: traces
    /// continue in one another).
    pub fn is_header(&self, b: BlockId) -> bool {
        self.headers[ix(b)]
    }

    /// Whether operand `o` may be unbound ([`flowc_ir::bound`]).
    pub fn may_be_unbound(&self, o: &Operand) -> bool {
        flowc_ir::bound::may_be_unbound(&self.bound, o)
    }
}

/// What lowering to Cranelift reads of an IR function, computed once per
/// function: the regions of a split function share it.
pub struct Facts {
    pub shape: Shape,
    uses: Vec<u32>,
    /// The cycle each block lies on ([`flowc_ir::cfg::Cfg::cycles`]), by
    /// raw index, if the block is hot: in a function whose runs per run
    /// are known ([`Facts::with_runs`]), blocks that run at most
    /// [`crate::plan::policy::COLD_RUNS`] times per run count as on no cycle, and are lowered
    /// like code that runs once.
    cycles: Vec<Option<u32>>,
    pub loops: flowc_ir::loops::LoopForest,
    /// At most how many times each block runs per call
    /// ([`flowc_ir::frequency`]).
    pub bounds: flowc_ir::frequency::RunBounds,
    /// Whether the function's runs per run of the program are known
    /// ([`Facts::with_runs`]): then its blocks off hot cycles are cold.
    runs_known: bool,
    /// By raw value index: the results of `get`s the function walks, whose
    /// loads predict links laid out in a row ([`links`]; none in traces,
    /// whose recordings saw where links lie: `guard_at`).
    links: bitvec::vec::BitVec,
    /// The blocks whose branch tests the link they read last
    /// ([`links::link_tests`]).
    link_tests: HashMap<BlockId, flowc_ir::InstId>,
    /// By raw instruction index: the `set`s of a new object that nothing
    /// since its `new` could have made part of the heap's rows
    /// ([`links::fresh_sets`]), which need not show them the write.
    fresh_sets: bitvec::vec::BitVec,
    /// The chains of equality tests lowered as switches, by head block
    /// ([`switch`]).
    switches: HashMap<BlockId, switch::Chain>,
    /// The runs of guards of one value lowered as switches, by their first
    /// instruction ([`switch::guard_chains`]).
    guard_chains: HashMap<flowc_ir::InstId, switch::GuardChain>,
}

impl Facts {
    /// Whether block `b` lies on a hot cycle.
    pub fn on_cycle(&self, b: BlockId) -> bool {
        self.cycles[ix(b)].is_some()
    }

    /// Whether every block of the function is cold: code that runs at
    /// most [`crate::plan::policy::COLD_RUNS`] times per run of the program.
    pub fn all_cold(&self) -> bool {
        self.runs_known && self.cycles.iter().all(Option::is_none)
    }

    /// The facts of `f`, with its runs per run unknown: only a huge
    /// function's code outside loops is cold.
    pub fn new(f: &Function) -> Facts {
        Facts::with_shape(Shape::new(f), f)
    }

    /// [`Facts::new`], from `f`'s shape computed already.
    pub fn with_shape(shape: Shape, f: &Function) -> Facts {
        let cfg = &shape.cfg;
        let dom = flowc_ir::cfg::DomTree::new(f, cfg);
        let loops = flowc_ir::loops::LoopForest::with(f, cfg, &dom);
        let cycles = cfg.cycles();
        let bounds = flowc_ir::frequency::RunBounds::new(f, cfg, &dom, &loops, &cycles);
        let links = match f.kind {
            flowc_ir::FunctionKind::Trace => bitvec::vec::BitVec::new(),
            _ => links::walked_links(f),
        };
        let uses = count_uses(f);
        let link_tests = links::link_tests(f, cfg, &dom, &links, &uses);
        let fresh_sets = links::fresh_sets(f);
        let switches = switch::chains(f, cfg, &shape.headers, &uses);
        let guard_chains = switch::guard_chains(f, &uses);
        Facts {
            uses,
            cycles,
            loops,
            bounds,
            runs_known: false,
            shape,
            links,
            link_tests,
            fresh_sets,
            switches,
            guard_chains,
        }
    }

    /// The headers of `f`'s hot loops, in reverse postorder: where its
    /// tier-0 code counts iterations and its optimized tier can take over
    /// ([`crate::tiers`]).
    pub fn hot_headers(&self) -> Vec<BlockId> {
        self.shape
            .cfg
            .rpo
            .iter()
            .copied()
            .filter(|&b| self.shape.headers[ix(b)] && self.cycles[ix(b)].is_some())
            .collect()
    }

    /// These facts with every block cold: how tier-0 code is lowered
    /// ([`crate::tiers`]).
    pub fn every_block_cold(mut self) -> Facts {
        self.runs_known = true;
        self.cycles.iter_mut().for_each(|c| *c = None);
        self
    }

    /// These facts of `f` for when it runs at most `runs` times per run
    /// of the program ([`flowc_ir::frequency::function_runs`]; `None`:
    /// unknown): its blocks that run at most [`crate::plan::policy::COLD_RUNS`] times in all
    /// are cold.
    pub fn with_runs(mut self, f: &Function, runs: Option<u32>) -> Facts {
        self.runs_known = runs.is_some();
        if let Some(runs) = runs {
            for (b, _) in f.blocks.iter() {
                if self
                    .bounds
                    .at_most(b)
                    .and_then(|n| n.checked_mul(runs))
                    .is_some_and(|n| n <= crate::plan::policy::COLD_RUNS)
                {
                    self.cycles[ix(b)] = None;
                }
            }
        }
        self
    }
}

/// Stores the frame and stack pointer into the context: where a collection
/// during a runtime call starts walking frames (`flowc_runtime::frames`).
/// Cranelift keeps a function's stack pointer fixed between its prologue
/// and epilogue (outgoing arguments have their area in the frame).
fn store_frame(b: &mut FunctionBuilder, ctx: ClValue) {
    let fp = b.ins().get_frame_pointer(types::I64);
    let sp = b.ins().get_stack_pointer(types::I64);
    b.ins().store(MemFlagsData::trusted(), fp, ctx, offsets::LAST_FP);
    b.ins().store(MemFlagsData::trusted(), sp, ctx, offsets::LAST_SP);
}

/// Lowers IR function `f` into `ctx.func` (whole: see [`lower_region`]
/// for the regions of a split function).
pub fn lower(
    env: &mut Building,
    f: &Function,
    facts: &Facts,
    plan: &Plan,
    ctx: &mut cranelift_codegen::Context,
    fbctx: &mut FunctionBuilderContext,
) {
    lower_with(env, f, facts, plan, None, ctx, fbctx)
}

/// [`lower`], or with `osr` the function entered only at the loop headers
/// of its tier-0 code ([`osr`]).
fn lower_with(
    env: &mut Building,
    f: &Function,
    facts: &Facts,
    plan: &Plan,
    osr: Option<&osr::Osr>,
    ctx: &mut cranelift_codegen::Context,
    fbctx: &mut FunctionBuilderContext,
) {
    ctx.func.signature = match osr {
        Some(_) => frame::region_signature(&*env.module),
        None => signature_of(&*env.module, f),
    };
    let from_buffer = f.kind == flowc_ir::FunctionKind::Trace;
    let mut b = FunctionBuilder::new(&mut ctx.func, fbctx);
    // Reverse postorder: a block's dominators, which define what its
    // instructions and its edges' phi inputs use, come first.
    let order = &facts.shape.cfg.rpo;
    let make_blocks = |b: &mut FunctionBuilder| -> Blocks {
        let mut blocks = Blocks::default();
        for &blk in order {
            let cb = b.create_block();
            for _ in &f.blocks[blk].phis {
                b.append_block_param(cb, types::I64);
            }
            blocks.insert(blk, cb);
        }
        blocks
    };
    let blocks = make_blocks(&mut b);
    let exit_points =
        if plan.optimistic { optimistic_exits(f, &facts.shape.small, &facts.cycles) } else { Default::default() };
    let assumed = if exit_points.is_empty() { Vec::new() } else { Small::assumed_params(f) };
    // The optimistic copy's blocks: its own for the blocks on cycles, the
    // generic copy's for the others.
    let optimistic = (!exit_points.is_empty()).then(|| {
        let mut copy = blocks.clone();
        for &blk in order.iter().filter(|blk| facts.cycles[ix(**blk)].is_some()) {
            let cb = b.create_block();
            for _ in &f.blocks[blk].phis {
                b.append_block_param(cb, types::I64);
            }
            copy.insert(blk, cb);
        }
        (Small::optimistic(f, &assumed), copy)
    });
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (params, ctx_value) = if osr.is_some() {
        (Vec::new(), b.block_params(entry)[0])
    } else if from_buffer {
        let ctx_value = b.block_params(entry)[0];
        let buf = b.ins().load(types::I64, MemFlagsData::trusted(), ctx_value, offsets::EXIT_VALUES);
        let params: Vec<ClValue> = (0..f.params.len())
            .map(|k| b.ins().load(types::I64, MemFlagsData::trusted(), buf, (8 * k) as i32))
            .collect();
        (params, ctx_value)
    } else {
        let all = b.block_params(entry).to_vec();
        (all[..f.params.len()].to_vec(), all[f.params.len()])
    };
    // Functions keep one frame and stack pointer from entry to return:
    // they tell a collection during any runtime call where to start
    // walking frames, stored on entry and again after each call of a
    // function (which stored its own). A trace's frame can be replaced
    // by a tail call, so traces store them before every runtime call.
    let frame_stored = !from_buffer;
    if frame_stored {
        store_frame(&mut b, ctx_value);
    }
    let iterations = (f.kind == flowc_ir::FunctionKind::Trace).then(|| {
        let var = b.declare_var(types::I64);
        let n = b.ins().load(types::I64, MemFlagsData::trusted(), ctx_value, offsets::ITERATIONS);
        b.def_var(var, n);
        var
    });
    if f.kind == flowc_ir::FunctionKind::Trace && facts.shape.work > 0 && facts.shape.cfg.preds(f.entry).is_empty() {
        // The statements this piece stands in for, once per run of it
        // (`Shape::work`).
        let flags = MemFlagsData::trusted();
        let n = b.ins().load(types::I64, flags, ctx_value, offsets::WORK);
        let n = b.ins().iadd_imm_s(n, i64::from(facts.shape.work));
        b.ins().store(flags, n, ctx_value, offsets::WORK);
    }
    let small = &facts.shape.small;
    let roots = Roots::new(&mut b, f, &facts.shape.cfg, small);
    // With an optimistic copy, or entered at its loop headers with values
    // from the tier-0 frame, an IR value has several definitions.
    let mut home = Home::new(&mut b, f, &facts.shape.cfg, optimistic.is_some() || osr.is_some(), osr.map(|o| o.live()));
    for (&p, &param) in f.params.iter().zip(&params) {
        home.write(&mut b, p, param);
    }
    // The entry has no predecessors, so it is on no cycle: the function
    // starts in the generic copy, which enters the optimistic one at its
    // loops ([`Lowerer::loop_entry`]).
    let stubs = match osr {
        None => {
            b.ins().jump(blocks[&f.entry], &[]);
            Vec::new()
        }
        Some(osr) => osr::dispatch(&mut b, entry, osr),
    };
    let (optimistic_small, optimistic_blocks) = match optimistic {
        Some((small, blocks)) => (Some(small), Some(blocks)),
        None => (None, None),
    };
    let mut l = Lowerer::new(b, env, f, facts, *plan, blocks, ctx_value, None);
    l.home = home;
    l.roots = roots;
    l.exit_points = exit_points;
    l.iterations = iterations;
    l.frame_stored = frame_stored;
    l.finish_stop();
    if let (Some(small), Some(blocks)) = (&optimistic_small, &optimistic_blocks) {
        l.loop_entries = Some(LoopEntries::new(f, &facts.shape.cfg, &facts.shape.small, small, blocks.clone()));
    }
    if let Some(osr) = osr {
        let base = l.b.block_params(entry)[1];
        l.osr_stubs(osr, base, &stubs);
    }
    if let (Some(small), Some(blocks)) = (&optimistic_small, optimistic_blocks) {
        // The optimistic copy of the blocks on cycles first, then the
        // generic copy, which enters it at loop entries and which it
        // leaves to.
        let generic = (std::mem::replace(&mut l.small, small), std::mem::replace(&mut l.blocks, blocks));
        l.optimistic = true;
        for &blk in order.iter().filter(|blk| facts.cycles[ix(**blk)].is_some()) {
            l.block(blk);
        }
        l.optimistic = false;
        (l.small, l.blocks) = generic;
    }
    for &blk in order {
        l.block(blk);
    }
    l.fill_loop_entries();
    l.finish_leave();
    l.b.seal_all_blocks();
    let config = l.env.module.target_config();
    l.b.finalize(config);
}

impl<'a, 'b> Lowerer<'a, 'b> {
    /// A lowerer of `f` into `b`, whose IR blocks start at `blocks`.
    #[allow(clippy::too_many_arguments)]
    fn new(
        mut b: FunctionBuilder<'b>,
        env: &'b mut Building<'a>,
        f: &'b Function,
        facts: &'b Facts,
        plan: Plan,
        blocks: Blocks,
        ctx: ClValue,
        split: Option<Region<'b>>,
    ) -> Lowerer<'a, 'b> {
        let stop = b.create_block();
        b.set_cold_block(stop);
        Lowerer {
            b,
            env,
            f,
            blocks,
            home: Home::Values(HashMap::default()),
            roots: None,
            optimistic: false,
            loop_entries: None,
            exit_points: Default::default(),
            conts: HashMap::default(),
            exit_numbers: HashMap::default(),
            current: f.entry,
            refs: [None; RuntimeFn::ALL.len()],
            ctx,
            stop,
            uses: &facts.uses,
            site: None,
            position: Position::Between,
            small: &facts.shape.small,
            bound: &facts.shape.bound,
            links: &facts.links,
            link_tests: &facts.link_tests,
            switches: &facts.switches,
            guard_chains: &facts.guard_chains,
            fresh_sets: &facts.fresh_sets,
            conds: HashMap::default(),
            headers: &facts.shape.headers,
            cycles: &facts.cycles,
            runs_known: facts.runs_known,
            loops: &facts.loops,
            iterations: None,
            leave: None,
            plan,
            split,
            frame_stored: true,
            defer_stop: false,
            stop_pending: false,
        }
    }

    /// Fills the stop block: the run stopped (an error or `print`), the
    /// stop word goes back to the caller.
    fn finish_stop(&mut self) {
        self.b.switch_to_block(self.stop);
        self.store_iterations();
        let zero = self.konst(STOP.as_i64());
        self.b.ins().return_(&[zero]);
    }
}

/// How many times each value is used, by raw index.
pub(crate) fn count_uses(f: &Function) -> Vec<u32> {
    let mut uses = vec![0u32; f.values.len()];
    each_operand(f, |o, _, _| {
        if let Operand::Value(v) = o {
            uses[ix(*v)] += 1;
        }
    });
    uses
}

/// Every operand of `f`'s linked code, with where it is read: the block
/// `b` reading it, and for a phi's input the predecessor `p` whose edge
/// carries it (`visit(operand, b, Some(p))`). Instructions, the resume
/// records of guards, terminators and theirs.
pub(crate) fn each_operand(f: &Function, mut visit: impl FnMut(&Operand, BlockId, Option<BlockId>)) {
    for &b in &f.layout {
        for i in f.block_insts(b) {
            match &f.insts[i].kind {
                InstKind::Phi(inputs) => inputs.iter().for_each(|(p, o)| visit(o, b, Some(*p))),
                kind => kind.operands().for_each(|o| visit(o, b, None)),
            }
            if let InstKind::Guard { resume, .. } = &f.insts[i].kind {
                f.resumes[*resume].operands().for_each(|o| visit(o, b, None));
            }
        }
        f.blocks[b].term.operands().for_each(|o| visit(o, b, None));
        if let Some(r) = f.blocks[b].term.resume() {
            f.resumes[r].operands().for_each(|o| visit(o, b, None));
        }
    }
}

/// The comparison a block's branch tests, when it is the block's last
/// instruction and nothing else uses its result: it is emitted as a
/// compare-and-branch, without materializing the truth value.
fn fused_compare(f: &Function, blk: BlockId, uses: &[u32]) -> Option<flowc_ir::InstId> {
    let Terminator::Branch { cond: Operand::Value(c), .. } = &f.blocks[blk].term else { return None };
    let &last = f.blocks[blk].insts.last()?;
    let InstKind::Op { op: Operator::Known(op), args, .. } = &f.insts[last].kind else { return None };
    let compare = op.is_comparison();
    (compare && args.len() == 2 && f.insts[last].result == Some(*c) && uses.get(ix(*c)) == Some(&1)).then_some(last)
}

impl<'a, 'b> Lowerer<'a, 'b> {
    fn rt(&mut self, f: RuntimeFn) -> FuncRef {
        if let Some(r) = self.refs[f as usize] {
            return r;
        }
        let r = self.env.module.declare_func_in_func(self.env.runtime[f], self.b.func);
        self.refs[f as usize] = Some(r);
        r
    }

    fn call_rt(&mut self, f: RuntimeFn, args: &[ClValue]) -> ClValue {
        self.call_rt_at(f, args, self.site)
    }

    /// [`Lowerer::call_rt`], storing `site` (if any) as where an error the
    /// call raises happened.
    fn call_rt_at(&mut self, f: RuntimeFn, args: &[ClValue], site: Option<u64>) -> ClValue {
        debug_assert_eq!(args.len(), f.arity(), "{}'s arguments", f.name());
        debug_assert!(site.is_none() || f.stops(), "a site for {}, which cannot fail", f.name());
        if let Some(site) = site {
            // Where an error the call raises happened.
            let k = self.konst(site as i64);
            self.b.ins().store(MemFlagsData::trusted(), k, self.ctx, offsets::SITE);
        }
        if !self.frame_stored {
            store_frame(&mut self.b, self.ctx);
        }
        let r = self.rt(f);
        let mut all = vec![self.ctx];
        all.extend_from_slice(args);
        self.store_across();
        let call = self.b.ins().call(r, &all);
        self.map_roots(call);
        self.b.inst_results(call)[0]
    }

    /// A call of a runtime function that neither stops, collects nor
    /// reads the frame (`walk`, `row_write`): no site, no frame or roots
    /// stored, no stack map.
    fn call_rt_leaf(&mut self, f: RuntimeFn, args: &[ClValue]) -> ClValue {
        debug_assert!(!f.stops(), "{} may stop", f.name());
        let r = self.rt(f);
        let mut all = vec![self.ctx];
        all.extend_from_slice(args);
        let call = self.b.ins().call(r, &all);
        self.b.inst_results(call)[0]
    }

    /// Whether the block being lowered is cold: on no hot cycle
    /// ([`Facts`]), in a huge function or in one whose runs per run are
    /// known (the main graph, and functions it calls a bounded number of
    /// times). It runs at most once per call, or at most [`crate::plan::policy::COLD_RUNS`]
    /// times per run, so its operations call the runtime without inline
    /// paths, object operations included, and its runtime calls' stops
    /// are tested once per block ([`Lowerer::flush_stop`]): compiled code
    /// that is small and quick to compile, as only hot loops pay back the
    /// inline paths' size. (The generated program of 10^3 statements of
    /// `compile_scale`: main's Cranelift IR 12,300 instructions with
    /// inline paths everywhere, 10,200 without them off cycles, and
    /// 3,300 without them in its counted loops too, which run 78
    /// iterations in all.) In code whose hot loops get no inline paths
    /// ([`crate::plan::Plan::hot_paths`]) every block is cold.
    fn is_cold(&self) -> bool {
        self.plan.cold(self.on_hot_cycle(), self.runs_known)
    }

    /// Whether the block being lowered lies on a hot cycle ([`Facts`]).
    fn on_hot_cycle(&self) -> bool {
        self.cycles[ix(self.current)].is_some()
    }

    /// Lists the words of the function's [`Roots`] in the stack map of
    /// `call` (every call is a safepoint).
    fn map_roots(&mut self, call: cranelift_codegen::ir::Inst) {
        if let Some(roots) = &self.roots {
            roots.map(self.b.func, call);
        }
    }

    /// Before a call: the values that may point into the heap, live
    /// across the code being lowered, and read by the code from nowhere
    /// but their registers — every such value of a function compiled whole
    /// ([`Roots`]), the collector-only ones of a region
    /// ([`frame::Frame::for_collector_only`]) — stored in their words. The
    /// collector, which may run during the call, finds them there; the
    /// code keeps them in registers (cells do not move). So a hot path
    /// that makes no call stores none of them: before, a function stored
    /// each where it was defined (every `get` of an object, every link
    /// walked), and an optimized region gave them to Cranelift's stack
    /// maps, which stored each after its definition and read it back at
    /// every use. (Tier-0 regions, whose calls are everywhere, stored them
    /// where they were defined until 2026-12-05: stored before calls,
    /// fractal 5's residual runs natively in 1.72 s against 1.84.)
    fn store_across(&mut self) {
        /// Where the words are: the split function's frame at its address,
        /// or the function's own roots.
        enum Words<'r> {
            Frame(ClValue),
            Roots(&'r Roots),
        }
        let (frame, words) = match (&self.split, &self.roots) {
            (Some(r), _) => (&r.split.frame, Words::Frame(r.base)),
            (None, Some(roots)) => (roots.frame(), Words::Roots(roots)),
            (None, None) => return,
        };
        let values = match self.position {
            Position::Inst(i) => frame.across_inst(i),
            Position::Term(b) => frame.across_term(b),
            // A block's own code calls only to stop (out of fuel).
            Position::Between => &[],
        };
        for &v in values {
            let x = self.home.read(&mut self.b, v).expect("a value live across a call is defined where it is lowered");
            match words {
                Words::Frame(base) => {
                    let offset = frame.offset(v).expect("a collector-only value has a word");
                    self.b.ins().store(MemFlagsData::trusted(), x, base, offset);
                }
                Words::Roots(roots) => roots.store(&mut self.b, v, x),
            }
        }
    }

    fn konst(&mut self, w: i64) -> ClValue {
        self.b.ins().iconst(types::I64, w)
    }

    /// `op` on one or two words in the runtime (any values; the slow path
    /// of every inline operation); leaves to the stop block if it fails.
    fn runtime_op(&mut self, op: Op, args: &[ClValue]) -> ClValue {
        // The site travels in the description, not through the context.
        let desc = self.konst(flowc_runtime::runtime::op_desc(op as usize, args.len(), self.site) as i64);
        let b = if args.len() > 1 { args[1] } else { desc };
        let r = self.call_rt_at(RuntimeFn::Op, &[desc, args[0], b], None);
        self.check_stop(r);
        r
    }

    /// A new block for a path that is rarely taken (a failure, an
    /// overflow, a trace exit): Cranelift places it after the others, so
    /// the hot path runs straight through.
    fn cold_block(&mut self) -> cranelift_codegen::ir::Block {
        let blk = self.b.create_block();
        self.mark_cold(blk);
        blk
    }

    /// Has Cranelift place `blk` after the others — except in a huge
    /// function: its register allocator (the single-pass one) walks the
    /// blocks backwards and holds every value used in a block it has seen
    /// but defined in one it has not, so slow paths gathered at the end
    /// kept thousands of values live across the whole function (at
    /// 10^6 statements the allocator took most of the compile time).
    fn mark_cold(&mut self, blk: cranelift_codegen::ir::Block) {
        if self.plan.slow_paths_last() {
            self.b.set_cold_block(blk);
        }
    }

    /// Leaves to the stop block if `v` is the stop word, else continues.
    /// (In a huge function, only notes that the block must test the
    /// context's stop flag before it ends: see [`Lowerer::flush_stop`].)
    fn check_stop(&mut self, v: ClValue) {
        if self.defer_stop {
            self.stop_pending = true;
            return;
        }
        let cont = self.b.create_block();
        self.b.ins().brif(v, cont, &[], self.stop, &[]);
        self.b.switch_to_block(cont);
    }

    /// Leaves to the stop block if a call since the last test stopped the
    /// program. Huge functions do not test each runtime call's result:
    /// after a stop the runtime does nothing and returns the stop word
    /// (`Ctx::stopped`); their inline code only computes (objects go
    /// through the runtime, but for the fields of proven objects in hot
    /// loops, read and written in line after this test; an inline list
    /// read first checks for a non-zero pointer, and the stop word is
    /// zero), and the one test
    /// before the block's terminator, or before a call of a function,
    /// leaves before anything computed after the stop is used. One
    /// Cranelift block per IR block instead of one per call: the register
    /// allocator's cost is per block.
    fn flush_stop(&mut self) {
        if self.stop_pending {
            let cont = self.b.create_block();
            self.jump_unless_stopped(cont, &[]);
            self.b.switch_to_block(cont);
        }
    }

    /// Ends the current block in a jump to `target` with `args`, or to the
    /// stop block if a test is pending ([`Lowerer::flush_stop`]) and the
    /// program stopped: a block that ends in a jump needs no block of its
    /// own for the test.
    fn jump_unless_stopped(&mut self, target: cranelift_codegen::ir::Block, args: &[BlockArg]) {
        if std::mem::take(&mut self.stop_pending) {
            let stopped = self.b.ins().load(types::I64, MemFlagsData::trusted(), self.ctx, offsets::STOPPED);
            self.b.ins().brif(stopped, self.stop, &[], target, args);
        } else {
            self.b.ins().jump(target, args);
        }
    }

    fn operand(&mut self, o: &Operand) -> ClValue {
        match o {
            // A region's value from another region is in its frame word.
            Operand::Value(v) if !self.direct(*v) => self.read_word(*v),
            Operand::Value(v) => self.home.read(&mut self.b, *v).expect("a value defined before its use"),
            Operand::Const(c) => {
                if let Some(w) = word::immediate(c) {
                    return self.konst(w.as_i64());
                }
                match &mut self.env.constants {
                    Constants::Rooted(pool) => {
                        let root = flowc_lang::heap::Root::new(c);
                        let w = root.word();
                        pool.push(root);
                        self.konst(w.as_i64())
                    }
                    Constants::Table { values, table } => {
                        let k = match values.iter().position(|v| v == c) {
                            Some(k) => k,
                            None => {
                                values.push(c.clone());
                                values.len() - 1
                            }
                        };
                        let table = *table;
                        let gv = self.env.module.declare_data_in_func(table, self.b.func);
                        let base = self.b.ins().symbol_value(types::I64, gv);
                        self.b.ins().load(types::I64, MemFlagsData::trusted(), base, (8 * k) as i32)
                    }
                }
            }
        }
    }

    /// Lowers block `blk` whole.
    fn block(&mut self, blk: BlockId) {
        self.part(blk, 0, 0, self.f.blocks[blk].insts.len(), true);
    }

    /// Lowers instructions `start..end` of block `blk`, from its start
    /// (phis) when `start` is 0 and through its terminator when `last`;
    /// `piece` is the region piece holding instruction `start` (split
    /// functions; 0 elsewhere). A part that stops before the block's end
    /// continues in the region of the next piece.
    fn part(&mut self, blk: BlockId, piece: usize, start: usize, end: usize, last: bool) {
        self.current = blk;
        if let Some(r) = &mut self.split {
            r.piece = piece;
            r.loaded.clear();
        }
        if start > 0 {
            let cb =
                self.split.as_ref().map(|r| r.entry_blocks[&piece]).expect("a part starts mid-block only in a region");
            self.b.switch_to_block(cb);
        } else {
            self.block_start(blk);
        }
        let fused = if last { fused_compare(self.f, blk, self.uses) } else { None };
        // A link the branch tests, read in this part: lowered with the
        // branch, where its prediction is made (hot code).
        let link =
            self.link_tests.get(&blk).copied().filter(|_| last && fused.is_none() && start < end && !self.is_cold());
        self.defer_stop = self.plan.defer_stops(self.is_cold());
        // Guard chains become switches in hot code outside regions.
        let guard_chains = self.guard_chains;
        let guard_switches = self.split.is_none() && !self.is_cold();
        let mut k = start;
        while k < end {
            let i = self.f.blocks[blk].insts[k];
            if let Some(r) = &mut self.split {
                let at = r.split.regions.piece_at(blk, k);
                if at != r.piece {
                    r.piece = at;
                }
            }
            if let Some(chain) = guard_chains.get(&i).filter(|c| guard_switches && k + c.len <= end) {
                self.guard_switch(chain);
                k += chain.len;
                continue;
            }
            if Some(i) != fused && Some(i) != link {
                self.position = Position::Inst(i);
                self.inst(i);
            }
            k += 1;
        }
        self.position = Position::Between;
        // A block that ends in a jump tests for a stop in the jump itself
        // ([`Lowerer::jump_unless_stopped`]).
        let jumps = last && fused.is_none() && link.is_none() && matches!(self.f.blocks[blk].term, Terminator::Jump(_));
        if !jumps {
            self.flush_stop();
        }
        self.defer_stop = false;
        if !last {
            let next = self
                .split
                .as_ref()
                .map(|r| r.split.regions.piece_at(blk, end))
                .expect("a part ends mid-block only in a region");
            self.enter_region(next);
            return;
        }
        if let Some(r) = &mut self.split {
            r.piece = r.split.regions.last_piece(blk);
        }
        // The fused instruction's calls: what lives after it, the
        // terminator's operands included.
        self.position = match fused.or(link) {
            Some(i) => Position::Inst(i),
            None => Position::Term(blk),
        };
        match (fused, link) {
            (Some(i), _) => {
                self.at(self.f.sites.inst(i));
                self.b.set_srcloc(IrPlace::Inst(i).srcloc());
                // A dispatch chain's head: one switch, in hot code outside
                // regions (whose edges store phis per piece).
                let switches = self.switches;
                match switches.get(&blk).filter(|_| self.split.is_none() && !self.is_cold()) {
                    Some(chain) => self.switch_chain(chain),
                    None => self.compare_and_branch(blk, i),
                }
            }
            (None, Some(i)) => {
                self.at(self.f.sites.inst(i));
                self.b.set_srcloc(IrPlace::Inst(i).srcloc());
                self.link_and_branch(blk, i)
            }
            (None, None) => {
                self.at(self.f.sites.term(blk));
                self.b.set_srcloc(IrPlace::Term(blk).srcloc());
                self.terminator(blk)
            }
        }
        self.position = Position::Between;
        self.fill_edges();
    }

    /// The start of block `blk`: its phis, fuel and iteration counts.
    fn block_start(&mut self, blk: BlockId) {
        let cb = self.blocks[&blk];
        self.b.switch_to_block(cb);
        // The block's own code (fuel, iteration counts) belongs to no
        // instruction (crate::code_map).
        self.b.set_srcloc(cranelift_codegen::ir::SourceLoc::default());
        let params = self.b.block_params(cb).to_vec();
        if self.home.merges() {
            // A comparison's condition is reused only inside its own
            // Cranelift block: with two copies, dominance in the IR no
            // longer means dominance in the code.
            self.conds.clear();
        }
        for (k, &phi) in self.f.blocks[blk].phis.iter().enumerate() {
            if let Some(v) = self.f.insts[phi].result {
                self.set_value(v, params[k]);
            }
        }
        self.defer_stop = false;
        // Before fuel: the optimized tier counts this iteration's.
        self.count_iteration(blk, &params);
        if self.env.fuel && self.headers[ix(blk)] {
            self.count_fuel(blk);
        }
        if let Some(var) = self.iterations.filter(|_| self.headers[ix(blk)] && blk != self.f.entry) {
            let n = self.b.use_var(var);
            let n = self.b.ins().iadd_imm_s(n, 1);
            self.b.def_var(var, n);
        }
    }

    fn define(&mut self, i: flowc_ir::InstId, v: ClValue) {
        if let Some(r) = self.f.insts[i].result {
            self.set_value(r, v);
        }
    }

    /// Makes `v` the value of `r`: in its home, and, in a region, in its
    /// word of the frame where another region or an entry reads it there.
    /// (A value the collector must see reaches its word, or its word of the
    /// [`Roots`], before the calls it lives across:
    /// [`Lowerer::store_across`].)
    fn set_value(&mut self, r: ValueId, v: ClValue) {
        // A region: the value's word too, if it has one (read elsewhere, or
        // seen by the collector).
        if let Some(region) = &self.split {
            if let Some(offset) = region.split.frame.stored_at(r) {
                // A value only the collector reads from the frame goes
                // there at the calls it lives across
                // ([`Lowerer::store_across`]), not here.
                if !region.split.frame.for_collector_only(r) {
                    self.b.ins().store(MemFlagsData::trusted(), v, region.base, offset);
                }
            }
        }
        self.home.write(&mut self.b, r, v);
    }

    /// The machine condition a comparison of small integers left for `v`,
    /// if it is known here.
    fn cond(&self, v: ValueId) -> Option<ClValue> {
        self.conds.get(&v).copied().filter(|_| self.direct(v))
    }

    /// Makes `site` the current one (for the runtime calls that follow).
    fn at(&mut self, site: Option<flowc_ir::Site>) {
        self.site = site.map(|s| self.env.sites.number(s));
    }

    fn inst(&mut self, i: flowc_ir::InstId) {
        self.at(self.f.sites.inst(i));
        self.b.set_srcloc(IrPlace::Inst(i).srcloc());
        let kind = self.f.insts[i].kind.clone();
        match kind {
            InstKind::Op { op: Operator::Known(op), args, form } => {
                let known = self.known_small(&args);
                // A positive constant divisor below 2^30 (twice it fits 31 bits).
                let divisor = match args.get(1) {
                    Some(Operand::Const(Value::Int(k))) if (1..1 << 30).contains(k) => Some(*k),
                    _ => None,
                };
                let table = match (op, args.first()) {
                    (Op::ReadList, Some(Operand::Const(Value::List(l)))) => self.known_table(l),
                    _ => None,
                };
                let args: Vec<ClValue> = args.iter().map(|a| self.operand(a)).collect();
                if let Some(t) = table.filter(|t| form == Form::Word && t.immediate) {
                    // In range, and every element a word: one load.
                    let v = self.read_known_table(t, args[1]);
                    self.define(i, v);
                    return;
                }
                if op.is_comparison() && (form == Form::Word || known == [true, true]) {
                    // Small integers compare as words, and a comparison
                    // cannot fail: no slow path.
                    let c = self.b.ins().icmp(int_cc(op), args[0], args[1]);
                    let (one, zero) = (self.konst(ONE.as_i64()), self.konst(ZERO.as_i64()));
                    let v = self.b.ins().select(c, one, zero);
                    if let Some(r) = self.f.insts[i].result {
                        self.conds.insert(r, c);
                    }
                    self.define(i, v);
                    return;
                }
                let exit_point = self.exit_points.contains(&i);
                if exit_point && self.optimistic {
                    self.speculate(i, op, args[0], args[1], known, divisor);
                    return;
                }
                let result = self.f.insts[i].result;
                let v = if form == Form::Word && inline_word(op) && !self.divides_through_runtime(op, divisor) {
                    self.small_op(op, args[0], args[1], divisor)
                } else {
                    self.op(op, &args, known, divisor, table)
                };
                if let Some(r) = result {
                    self.set_value(r, v);
                }
                if exit_point {
                    // Where the optimistic copy joins this one.
                    let cont = self.cont(i);
                    self.b.ins().jump(cont, &[]);
                    self.b.switch_to_block(cont);
                    self.conds.clear();
                }
            }
            InstKind::Op { op, args, .. } => {
                let name = flowc_lang::Symbol::intern(op.name()).index() as i64;
                let mut vs: Vec<ClValue> = args.iter().take(2).map(|a| self.operand(a)).collect();
                let n = self.konst(args.len().min(2) as i64);
                while vs.len() < 2 {
                    vs.push(n);
                }
                let name = self.konst(name);
                let r = self.call_rt(RuntimeFn::MissingOp, &[name, n, vs[0], vs[1]]);
                self.check_stop(r);
                self.define(i, r);
            }
            InstKind::CheckBound(o) => {
                // Inline: a tag test, the runtime only on the cold failure
                // path (a call on the way would be a safepoint in every
                // loop an inlined call sits in).
                let v = self.operand(&o);
                self.fail_if_unbound(v);
                self.define(i, v);
            }
            InstKind::Unbound(var) => {
                let v = self.konst(word::unbound(var).as_i64());
                self.define(i, v);
            }
            InstKind::New(class) => {
                let r = self.new_object(class);
                self.define(i, r);
            }
            InstKind::Get { obj, field, proven } => {
                let o = self.operand(&obj);
                let walked = self.f.insts[i].result.is_some_and(|r| self.links.get(ix(r)).is_some_and(|b| *b));
                let r = self.get_field(o, field, proven, walked, None);
                self.define(i, r);
            }
            InstKind::Walk { obj, field, links } => {
                let o = self.operand(&obj);
                let r = self.walk(o, field, links, None);
                self.define(i, r);
            }
            InstKind::Set { obj, field, value, proven } => {
                let o = self.operand(&obj);
                let v = self.operand(&value);
                let may_be_unbound = self.may_read_unbound(&value);
                let watch = self.env.objects.watches(field) && !self.fresh_sets.get(ix(i)).is_some_and(|b| *b);
                self.set_field(o, field, v, proven, may_be_unbound, watch);
            }
            InstKind::Call { func, args } => {
                let args: Vec<ClValue> = args
                    .iter()
                    .map(|a| {
                        let v = self.operand(a);
                        self.check_use(a, v);
                        v
                    })
                    .collect();
                let r = self.call(func, &args);
                self.define(i, r);
            }
            InstKind::Phi(_) => {}
            InstKind::Guard { kind, resume, label } => {
                if let Some(r) = self.guard(&kind, resume, label) {
                    self.define(i, r);
                }
            }
            InstKind::Iterations(o) => {
                // Traces only (the checker sees to it): the count, a small
                // integer, untagged onto the iterations run.
                if let Some(var) = self.iterations {
                    let w = self.operand(&o);
                    let k = self.b.ins().sshr_imm_s(w, 1);
                    let n = self.b.use_var(var);
                    let n = self.b.ins().iadd(n, k);
                    self.b.def_var(var, n);
                }
            }
        }
    }

    /// Whether word `w` points at a heap cell (tag 0, not the stop word),
    /// as a condition.
    fn is_pointer(&mut self, w: ClValue) -> ClValue {
        let tag = self.b.ins().band_imm_s(w, word::TAG_MASK as i64);
        let pointer_tag = self.b.ins().icmp_imm_s(IntCC::Equal, tag, 0);
        let non_zero = self.b.ins().icmp_imm_s(IntCC::NotEqual, w, 0);
        self.b.ins().band(pointer_tag, non_zero)
    }

    /// Whether cell `c` (a pointer word) is of `kind`
    /// ([`flowc_lang::heap::cell`]), as a condition.
    fn cell_is(&mut self, c: ClValue, kind: u64) -> ClValue {
        use flowc_lang::heap::cell;
        let meta = self.b.ins().load(types::I64, MemFlagsData::trusted(), c, cell::META as i32);
        let k = self.b.ins().band_imm_s(meta, cell::KIND_MASK as i64);
        self.b.ins().icmp_imm_s(IntCC::Equal, k, kind as i64)
    }

    /// Whether operand `o` may be unbound at run time
    /// ([`flowc_ir::bound::surely_bound`]: a phi some unbound value may
    /// reach, an `unbound` result, a parameter of the main graph or a trace).
    fn may_be_unbound(&self, o: &Operand) -> bool {
        flowc_ir::bound::may_be_unbound(self.bound, o)
    }

    /// The use of operand `o` (lowered to `v`) where nothing else tests
    /// it — call arguments, returned and printed values (class tests and
    /// stores raise on their own): raises `key_not_found` if it may be unbound and is (the IR's
    /// rule that every use but a phi input reads the value).
    fn check_use(&mut self, o: &Operand, v: ClValue) {
        if self.may_read_unbound(o) {
            self.fail_if_unbound(v);
        }
    }

    /// Whether operand `o` may be unbound where it is read: it may be
    /// ([`Lowerer::may_be_unbound`]) and is not known a small integer.
    fn may_read_unbound(&self, o: &Operand) -> bool {
        self.may_be_unbound(o) && !self.small.operand(o)
    }

    /// Stops (raising `key_not_found`) if `v` is an unbound word.
    fn fail_if_unbound(&mut self, v: ClValue) {
        let tag = self.b.ins().band_imm_s(v, word::TAG_MASK as i64);
        let unbound = self.b.ins().icmp_imm_s(IntCC::Equal, tag, word::UNBOUND_TAG as i64);
        let fail = self.cold_block();
        let go = self.b.create_block();
        self.b.ins().brif(unbound, fail, &[], go, &[]);
        self.b.switch_to_block(fail);
        self.call_rt(RuntimeFn::CheckBound, &[v]);
        self.b.ins().jump(self.stop, &[]);
        self.b.switch_to_block(go);
    }

    /// One step of fuel at loop header `blk`: at 0 the run stops with
    /// `fuel_exhausted`, raised at the header's first statement.
    fn count_fuel(&mut self, blk: BlockId) {
        let flags = MemFlagsData::trusted();
        let fuel = self.b.ins().load(types::I64, flags, self.ctx, offsets::FUEL);
        let left = self.b.ins().iadd_imm_s(fuel, -1);
        self.b.ins().store(flags, left, self.ctx, offsets::FUEL);
        let (go, out) = (self.b.create_block(), self.cold_block());
        self.b.ins().brif(left, go, &[], out, &[]);
        self.b.switch_to_block(out);
        self.at(header_site(self.f, blk));
        self.call_rt(RuntimeFn::OutOfFuel, &[]);
        self.b.ins().jump(self.stop, &[]);
        self.b.switch_to_block(go);
    }

    /// A call with the depth check of the interpreter (`max_depth` frames).
    fn call(&mut self, func: flowc_lang::Symbol, args: &[ClValue]) -> ClValue {
        // Not with arguments computed after a stop.
        self.flush_stop();
        let flags = MemFlagsData::trusted();
        let depth = self.b.ins().load(types::I64, flags, self.ctx, offsets::DEPTH);
        let max = self.b.ins().load(types::I64, flags, self.ctx, offsets::MAX_DEPTH);
        let next = self.b.ins().iadd_imm_s(depth, 1);
        let over = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, next, max);
        let overflow = self.cold_block();
        let go = self.b.create_block();
        self.b.ins().brif(over, overflow, &[], go, &[]);
        self.b.switch_to_block(overflow);
        self.call_rt(RuntimeFn::StackOverflow, &[]);
        self.b.ins().jump(self.stop, &[]);
        self.b.switch_to_block(go);
        self.b.ins().store(flags, next, self.ctx, offsets::DEPTH);
        let mut all = args.to_vec();
        all.push(self.ctx);
        self.store_across();
        let call = match self.env.tiers.and_then(|t| t.slot_of(func)) {
            // A tiered function: what its slot holds (`crate::tiers`).
            Some(slot) => {
                let sig = signature(&*self.env.module, args.len());
                let sig = self.b.import_signature(sig);
                let slot = self.konst(slot as i64);
                let code = self.b.ins().load(types::I64, MemFlagsData::trusted(), slot, 0);
                self.b.ins().call_indirect(sig, code, &all)
            }
            None => {
                let (id, _) = self.env.funcs[&func];
                let fref = self.env.module.declare_func_in_func(id, self.b.func);
                self.b.ins().call(fref, &all)
            }
        };
        self.map_roots(call);
        let r = self.b.inst_results(call)[0];
        self.b.ins().store(flags, depth, self.ctx, offsets::DEPTH);
        if self.frame_stored {
            store_frame(&mut self.b, self.ctx);
        }
        self.check_stop(r);
        r
    }

    /// A block ending in `branch c` where `c = a CMP b` is its last
    /// instruction: compare and branch at once on small integers; other
    /// operands go through the runtime, whose truth value is tested.
    fn compare_and_branch(&mut self, blk: BlockId, i: flowc_ir::InstId) {
        let InstKind::Op { op: Operator::Known(op), args, form } = self.f.insts[i].kind.clone() else {
            unreachable!("fused_compare picks comparisons")
        };
        let Terminator::Branch { then_block, else_block, .. } = self.f.blocks[blk].term.clone() else {
            unreachable!("fused_compare picks branches")
        };
        let known = self.known_small(&args);
        let (a, b) = (self.operand(&args[0]), self.operand(&args[1]));
        let inline_only = form == Form::Word || known == [true, true];
        if self.is_cold() && !inline_only {
            // No tag test: cold code calls the runtime.
            let r = self.runtime_op(op, &[a, b]);
            let truthy = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, ZERO.as_i64());
            self.branch(blk, truthy, then_block, else_block);
            return;
        }
        let test = if form == Form::Word { None } else { self.fast_operands(op, a, b, known) };
        let Some(both) = test else {
            // Both operands small integers: one compare and branch.
            let c = self.b.ins().icmp(int_cc(op), a, b);
            self.branch(blk, c, then_block, else_block);
            return;
        };
        // The edges once, before the paths part: their arguments (in a
        // region, words loaded from the frame) dominate both.
        let targets = self.targets(blk, then_block, else_block);
        let fast = self.b.create_block();
        let slow = self.cold_block();
        self.b.ins().brif(both, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        let c = self.b.ins().icmp(int_cc(op), a, b);
        self.branch_to(blk, c, (then_block, else_block), &targets);
        self.b.switch_to_block(slow);
        let r = self.runtime_op(op, &[a, b]);
        let truthy = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, ZERO.as_i64());
        self.branch_to(blk, truthy, (then_block, else_block), &targets);
    }

    /// The links of dispatch chain `chain` as one switch on the integer
    /// tested ([`switch`]), from its head.
    fn switch_chain(&mut self, chain: &switch::Chain) {
        let x = self.operand(&Operand::Value(chain.value));
        // Every edge's block and arguments made here, at the head, which
        // dominates every way below (the links compute nothing else).
        let cases: Vec<(i64, (cranelift_codegen::ir::Block, Vec<BlockArg>))> =
            chain.cases.iter().map(|&(k, from, to)| (k, self.target(from, to))).collect();
        let (otherwise_cb, otherwise_args) = self.target(chain.default.0, chain.default.1);
        let (int, otherwise) = (self.b.create_block(), self.b.create_block());
        // Only an integer's word equals an integer's: any other value goes
        // where no test holds. (The integer tag's bit alone: an atom's or
        // an unbound word's low bits are not 0 either, and shifted they
        // would be some integer's.)
        let tag = self.b.ins().band_imm_s(x, word::INT_TAG as i64);
        self.b.ins().brif(tag, int, &[], otherwise, &[]);
        self.b.switch_to_block(int);
        let n = self.b.ins().sshr_imm_s(x, 1);
        let mut switch = cranelift_frontend::Switch::new();
        let mut edges = Vec::new();
        for (k, (cb, args)) in cases {
            // Entries jump without arguments: an edge with some goes
            // through a block that passes them.
            let entry = if args.is_empty() { cb } else { self.b.create_block() };
            switch.set_entry(k as u64 as u128, entry);
            if entry != cb {
                edges.push((entry, cb, args));
            }
        }
        switch.emit(&mut self.b, n, otherwise);
        for (entry, cb, args) in edges {
            self.b.switch_to_block(entry);
            self.b.ins().jump(cb, &args);
        }
        self.b.switch_to_block(otherwise);
        self.b.ins().jump(otherwise_cb, &otherwise_args);
    }

    /// Ends `blk` with a branch on `truthy` to its successors `then_block`
    /// and `else_block`. Cranelift places a branch's second target right
    /// after it, so at the header of a loop whose body starts at
    /// `then_block` (and not at `else_block`) the test is inverted and the
    /// body comes second: loops run straight into their body instead of
    /// jumping over their exit every iteration, and the block order keeps
    /// each loop together (see the module docs). (Cranelift folds the
    /// inversion of a comparison into the comparison.)
    fn branch(&mut self, blk: BlockId, truthy: ClValue, then_block: BlockId, else_block: BlockId) {
        let targets = self.targets(blk, then_block, else_block);
        self.branch_to(blk, truthy, (then_block, else_block), &targets);
    }

    /// The Cranelift blocks and arguments of the edges from `blk` to
    /// `then_block` and `else_block` ([`Lowerer::target`]).
    fn targets(
        &mut self,
        blk: BlockId,
        then_block: BlockId,
        else_block: BlockId,
    ) -> [(cranelift_codegen::ir::Block, Vec<BlockArg>); 2] {
        [self.target(blk, then_block), self.target(blk, else_block)]
    }

    /// [`Lowerer::branch`] along edges whose `targets` are made: a block
    /// that branches in two places (a comparison's inline and runtime
    /// paths) makes them once, where both are dominated by what computed
    /// their arguments.
    fn branch_to(
        &mut self,
        blk: BlockId,
        truthy: ClValue,
        (then_block, else_block): (BlockId, BlockId),
        [(then_cb, targs), (else_cb, eargs)]: &[(cranelift_codegen::ir::Block, Vec<BlockArg>); 2],
    ) {
        let (then_cb, else_cb) = (*then_cb, *else_cb);
        let this_loop = self.loops.loop_of(blk).filter(|&l| self.loops.header(l) == blk);
        let in_loop = |b: BlockId| this_loop.is_some_and(|l| self.loops.contains(l, b));
        if in_loop(then_block) && !in_loop(else_block) {
            let falsy = self.b.ins().icmp_imm_s(IntCC::Equal, truthy, 0);
            self.b.ins().brif(falsy, else_cb, eargs, then_cb, targs);
        } else {
            self.b.ins().brif(truthy, then_cb, targs, else_cb, eargs);
        }
    }

    /// The phi inputs `to` receives along the edge from `from`.
    fn edge_args(&mut self, from: BlockId, to: BlockId) -> Vec<BlockArg> {
        let mut out = Vec::new();
        for &phi in &self.f.blocks[to].phis.clone() {
            if let InstKind::Phi(inputs) = &self.f.insts[phi].kind {
                let o = inputs
                    .iter()
                    .find(|(p, _)| *p == from)
                    .map(|(_, o)| o.clone())
                    .expect("a phi input per predecessor");
                out.push(BlockArg::Value(self.operand(&o)));
            }
        }
        out
    }

    fn terminator(&mut self, blk: BlockId) {
        match self.f.blocks[blk].term.clone() {
            Terminator::Jump(t) => {
                let (target, args) = self.target(blk, t);
                self.jump_unless_stopped(target, &args);
            }
            Terminator::Branch { cond, then_block, else_block } => {
                let c = self.operand(&cond);
                let known = cond.as_value().and_then(|v| self.cond(v));
                if known.is_some() || self.small.operand(&cond) {
                    let truthy = match known {
                        Some(truthy) => truthy,
                        None => self.b.ins().icmp_imm_s(IntCC::NotEqual, c, ZERO.as_i64()),
                    };
                    self.branch(blk, truthy, then_block, else_block);
                    return;
                }
                // Unbound values fail when tested (a value known bound
                // is not: a loop's counter after its `check_bound`).
                self.check_use(&cond, c);
                let truthy = self.b.ins().icmp_imm_s(IntCC::NotEqual, c, ZERO.as_i64());
                self.branch(blk, truthy, then_block, else_block);
            }
            Terminator::IfClass { obj, class, then_block, else_block } => {
                let o = self.operand(&obj);
                let is = self.is_class(o, class);
                self.branch(blk, is, then_block, else_block);
            }
            Terminator::Print(o) => {
                let v = self.operand(&o);
                self.check_use(&o, v);
                self.call_rt(RuntimeFn::Print, &[v]);
                self.b.ins().jump(self.stop, &[]);
            }
            Terminator::Return(o) => {
                let v = self.operand(&o);
                self.check_use(&o, v);
                self.b.ins().return_(&[v]);
            }
            Terminator::Exit { resume, label } => self.leave(resume, label, None, Leaving::End),
            Terminator::JumpTrace { target, args } => self.jump_trace(target, &args),
            Terminator::Trap(t) => {
                let index = self.env.traps.len() as i64;
                self.env.traps.push(t.error_kind());
                let k = self.konst(index);
                self.call_rt(RuntimeFn::Trap, &[k]);
                self.b.ins().jump(self.stop, &[]);
            }
        }
    }
}
