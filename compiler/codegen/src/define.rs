//! Declaring and defining a set of IR functions in a Cranelift module —
//! in memory ([`crate::in_memory`]: AOT modules and the JIT's traces) or in an object file for built
//! executables ([`crate::object`]) — with the runtime's functions as
//! imports and an entry wrapper `flowc_entry(args, ctx)` that loads the
//! entry function's arguments from an array and calls it — or, given a
//! [`Version`] of the entry specialized to small integer parameters
//! (`flowc_passes::versions`), calls that one when those arguments are
//! 32-bit integers.

use rustc_hash::FxHashMap as HashMap;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Linkage, Module};

use flowc_ir::{Function, FunctionKind, Module as IrModule};
use flowc_lang::interp::ErrorKind;
use flowc_lang::Symbol;

use crate::compile::{self, Compiler};
use crate::lower::{self, signature, Building, Constants, SiteTable};
use crate::plan::{Plan, Shape};
use crate::runtime::RuntimeFn;

/// What [`define`] produced.
pub struct Defined {
    /// The entry wrapper.
    pub entry: FuncId,
    /// The entry function's parameters, in order.
    pub params: Vec<Symbol>,
    /// Errors raised by `trap`, by index.
    pub traps: Vec<ErrorKind>,
    /// The sites of runtime calls.
    pub sites: SiteTable,
    /// Each function defined: its code's size and safepoints.
    pub safepoints: Vec<DefinedCode>,
    /// With [`Options::listing`]: the Cranelift IR of every function as
    /// lowered ([`crate::compile::Compiler::take_listing`]); else empty.
    pub listing: String,
    /// With [`Options::tiering`]: the tiered functions' slots and
    /// counters, by index in `functions` (the entry's small version
    /// last); the caller points the slots at the code.
    pub tiers: Option<crate::tiers::Tables>,
    /// Each function tiered region by region (with [`Options::tiering`]),
    /// as its tier-0 code was defined, by index in `functions` (the
    /// entry's small version last).
    pub by_region: Vec<Option<RegionTiered>>,
    /// Each function's id (the entry's small version last), the ids of
    /// those calls name, and the runtime's: what compiling more code into
    /// the module needs.
    pub ids: Vec<FuncId>,
    pub funcs: HashMap<Symbol, (FuncId, usize)>,
    pub runtime: RuntimeImports,
}

/// How code is generated.
#[derive(Copy, Clone, Debug, Default)]
pub struct Options {
    /// Count fuel at loop headers ([`crate::lower::Building::fuel`]); off by
    /// default, since it costs a memory update per iteration.
    pub fuel: bool,
    /// Split every function but traces into regions of at most this many
    /// instructions ([`crate::lower::frame`]), not only huge ones at
    /// [`crate::plan::policy::REGION_INSTS`]: the split lowering tried on every program (tests).
    pub split: Option<usize>,
    /// Compile functions that may be hot in tiers ([`crate::tiers`]):
    /// code run in memory only.
    pub tiering: Option<crate::tiers::Tiering>,
    /// Traces: every how many crossings (a power of two) a linked exit
    /// checks in with the driver, which decides what to do with the links
    /// it sees (the JIT's `LINK_CHECK`); `None`: never.
    pub link_check: Option<u64>,
    /// Keep the Cranelift IR of every function as lowered
    /// ([`Defined::listing`]).
    pub listing: bool,
    /// Tests: every optimized tier fails to compile, as one whose
    /// lowering or compiling errs would; the tier-0 code must run on.
    pub fail_tier_ups: bool,
    /// Tests: walks ([`crate::walks`]) in every function, not only huge
    /// ones.
    pub walks_everywhere: bool,
}

/// A version of the entry function optimized assuming the parameters at
/// positions `small` are 32-bit integers
/// ([`flowc_lang::ops::range::SMALL_PARAM`]).
pub struct Version<'f> {
    pub function: &'f Function,
    pub small: Vec<usize>,
}

/// The runtime's functions as imports of one module, by
/// [`RuntimeFn`].
#[derive(Clone)]
pub struct RuntimeImports(Vec<FuncId>);

impl std::ops::Index<RuntimeFn> for RuntimeImports {
    type Output = FuncId;
    fn index(&self, f: RuntimeFn) -> &FuncId {
        &self.0[f as usize]
    }
}

/// The runtime's functions ([`RuntimeFn::ALL`]), declared as imports of
/// `module` with their arities.
pub fn declare_runtime(module: &mut dyn Module) -> Result<RuntimeImports, String> {
    let ids = RuntimeFn::ALL.iter().map(|f| {
        let sig = signature(&*module, f.arity());
        module.declare_function(f.name(), Linkage::Import, &sig).map_err(|e| e.to_string())
    });
    Ok(RuntimeImports(ids.collect::<Result<_, _>>()?))
}

/// Declares `functions` under names starting with `prefix`; returns their
/// ids and, by name, those a call can name (kind `function`).
#[allow(clippy::type_complexity)]
pub fn declare_functions(
    module: &mut dyn Module,
    functions: &[&Function],
    prefix: &str,
) -> Result<(Vec<FuncId>, HashMap<Symbol, (FuncId, usize)>), String> {
    let mut funcs: HashMap<Symbol, (FuncId, usize)> = HashMap::default();
    let mut ids = Vec::new();
    for (k, f) in functions.iter().enumerate() {
        let sig = lower::signature_of(&*module, f);
        let name = format!("{prefix}{k}_{}", sanitize(f.name.as_str()));
        let id = module.declare_function(&name, Linkage::Local, &sig).map_err(|e| e.to_string())?;
        if f.kind == FunctionKind::Function {
            funcs.insert(f.name, (id, f.params.len()));
        }
        ids.push(id);
    }
    Ok((ids, funcs))
}

/// A function's safepoints: for each call in it, the offset of its return
/// address in the function's code and the offsets from the stack pointer
/// at the call of the words that may point into the heap.
pub type Safepoints = Vec<(u32, Vec<u32>)>;

/// A function as defined in a module: its id, the IR function's name, the
/// size of its machine code in bytes, its safepoints, and which IR
/// instruction each stretch of its code came from.
pub struct DefinedCode {
    pub id: FuncId,
    pub name: flowc_lang::Symbol,
    pub size: u32,
    pub safepoints: Safepoints,
    pub places: Vec<crate::code_map::PlaceRange>,
}

/// Lowers `f` into `env`'s module and has it compiled and defined as `id`
/// (through `env.compiler`: call [`compile::finish`] once all are
/// submitted); its traps, exits and safepoints are appended to `env`'s.
/// `facts` are `f`'s ([`lower::Facts::new`], with its runs per run of the
/// program where the caller knows them). Its [`Plan`] says how: whole or
/// split into regions ([`crate::lower::frame`]), by which settings.
pub fn define_function(env: &mut Building, f: &Function, id: FuncId, facts: lower::Facts) -> Result<(), String> {
    let mut fbctx = FunctionBuilderContext::new();
    let plan = Plan::of(f, &facts, env.split, env.links.as_ref().map(|l| l.tier));
    if let Shape::Regions { .. } = plan.shape {
        return define_split(env, f, &facts, id, &plan, Counting::Nothing, &mut fbctx).map(drop);
    }
    let mut ctx = env.compiler.context(&*env.module);
    lower::lower(env, f, &facts, &plan, &mut ctx, &mut fbctx);
    compile::submit(env, id, f.name, ctx, plan.codegen)
}

/// Defines the tier-0 code of `f`, function `index` of the program
/// ([`crate::tiers`], [`Plan::tier0`]): lowered as cold code (`facts` made
/// all cold), split into regions like a cold function's, with a driver
/// that counts calls and tiers up.
pub fn define_tier0(
    env: &mut Building,
    f: &Function,
    id: FuncId,
    facts: lower::Facts,
    index: usize,
) -> Result<(), String> {
    let mut fbctx = FunctionBuilderContext::new();
    let headers = facts.hot_headers();
    let facts = facts.every_block_cold();
    define_split(env, f, &facts, id, &Plan::tier0(), Counting::Calls(index, headers), &mut fbctx).map(drop)
}

/// A function tiered region by region ([`crate::tiers`],
/// [`Plan::by_region`]) as its tier-0 code was defined: what compiling
/// the optimized tier of one of its regions needs — its facts, its
/// regions and frame and their functions, and its regions' slots and
/// counters.
pub struct RegionTiered {
    pub facts: lower::Facts,
    pub split: lower::frame::Split,
    pub tables: crate::tiers::RegionTables,
}

/// Defines the tier-0 code of `f`, function `index` of the program,
/// tiered region by region ([`Plan::by_region`]): split as its plan says
/// (a huge function's regions, lowered for compile time), with its hot
/// loop headers entries of their regions, and regions that count their
/// entries and iterations and continue in their optimized tiers.
pub fn define_by_region(
    env: &mut Building,
    f: &Function,
    id: FuncId,
    facts: lower::Facts,
    index: usize,
) -> Result<RegionTiered, String> {
    let mut fbctx = FunctionBuilderContext::new();
    let plan = Plan::of(f, &facts, env.split, None).region_tier0();
    let headers = facts.hot_headers();
    let (split, tables) = define_split(env, f, &facts, id, &plan, Counting::Regions(index, headers), &mut fbctx)?;
    let tables = tables.expect("regions that count have tables");
    Ok(RegionTiered { facts, split, tables })
}

/// Defines the optimized tier of region `region` of a function tiered
/// region by region (`tiered`, its IR `f`) as `id`
/// ([`Plan::region_tier1`]).
pub fn define_region_tier1(
    env: &mut Building,
    f: &Function,
    tiered: &RegionTiered,
    region: usize,
    id: FuncId,
) -> Result<(), String> {
    let mut fbctx = FunctionBuilderContext::new();
    let mut ctx = env.compiler.context(&*env.module);
    let plan = tiered.split.plan.region_tier1();
    lower::lower_region(env, f, &tiered.facts, &tiered.split, region, Some(&plan), &mut ctx, &mut fbctx);
    compile::submit(env, id, f.name, ctx, plan.codegen)
}

/// What the regions of a split function count ([`crate::tiers`]).
enum Counting {
    /// Nothing: code that is not tiered.
    Nothing,
    /// Tier-0 code of function `index`, with hot loop headers `headers`:
    /// its driver counts calls, its headers iterations.
    Calls(usize, Vec<flowc_ir::BlockId>),
    /// Tier-0 code of function `index` tiered region by region, with hot
    /// loop headers `headers`: each region counts its entries and
    /// iterations.
    Regions(usize, Vec<flowc_ir::BlockId>),
}

/// The regions of `f` of at most `shape`'s instructions (and loop nests),
/// the blocks `headers` entries, and their frame. They depend on the
/// graph and on which values are small integers, not on which blocks are
/// cold: any `facts` of `f` give the same layout.
fn split_layout(
    f: &Function,
    facts: &lower::Facts,
    shape: Shape,
    headers: &[flowc_ir::BlockId],
) -> (flowc_ir::regions::Regions, lower::frame::Frame) {
    let Shape::Regions { max, max_loop } = shape else { unreachable!("a split plan's shape") };
    let regions = flowc_ir::regions::Regions::with_entries(f, &facts.shape.cfg, &facts.loops, max, max_loop, headers);
    let frame = lower::frame::Frame::new(f, &facts.shape.cfg, Some(&regions), |v| {
        !facts.shape.small.operand(&flowc_ir::Operand::Value(v))
    });
    (regions, frame)
}

/// Defines `id` as the on-stack replacement entries of tiered function
/// `f` ([`lower::lower_osr`]), compiled optimized: `facts` are its
/// optimized tier's (with its runs per run), from which its tier-0 code's
/// layout ([`define_tier0`]) is worked out again.
pub fn define_osr(env: &mut Building, f: &Function, id: FuncId, facts: lower::Facts) -> Result<(), String> {
    let mut fbctx = FunctionBuilderContext::new();
    let headers = facts.hot_headers();
    let (_, frame) = split_layout(f, &facts, Plan::tier0().shape, &headers);
    let plan = Plan::of(f, &facts, None, None);
    debug_assert_eq!(plan.shape, Shape::Whole, "a tiered function is compiled whole");
    let mut ctx = env.compiler.context(&*env.module);
    lower::lower_osr(env, f, &facts, &plan, &frame, &headers, &mut ctx, &mut fbctx)?;
    compile::submit(env, id, f.name, ctx, plan.codegen)
}

/// Defines `f` as `id`, split into regions as `plan` says: each region a
/// function of its own, compiled cheaply (a region at a time on each core, so that the
/// Cranelift structures of only a few exist at once) — but in code that
/// never tiers up, the regions with a block on a hot cycle, compiled
/// optimized ([`Plan::hot_region`]) — and `id` the driver that calls the
/// first. Returns the split, and the tables of regions that count
/// ([`Counting::Regions`]).
fn define_split(
    env: &mut Building,
    f: &Function,
    facts: &lower::Facts,
    id: FuncId,
    plan: &Plan,
    counting: Counting,
    fbctx: &mut FunctionBuilderContext,
) -> Result<(lower::frame::Split, Option<crate::tiers::RegionTables>), String> {
    let headers = match &counting {
        Counting::Nothing => &[][..],
        Counting::Calls(_, headers) | Counting::Regions(_, headers) => headers.as_slice(),
    };
    let (regions, frame) = split_layout(f, facts, plan.shape, headers);
    if f.is_huge() {
        // The layout's liveness and region tables of a huge function are
        // freed by now: returned, so that the peak of compiling its
        // regions is theirs alone (a main graph of 5,000 loops: 1.2 MB).
        flowc_runtime::release_freed_memory();
    }
    let sig = lower::frame::region_signature(&*env.module);
    let funcs = (0..regions.len())
        .map(|r| {
            let name = unique_name(&format!("{}.region{r}", f.name));
            env.module.declare_function(&name, Linkage::Local, &sig).map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (mut tier, mut by_region, mut tables) = (None, None, None);
    match counting {
        Counting::Nothing => {}
        Counting::Calls(index, headers) => {
            let counter = env.tiers.expect("tier-0 code has tables").counter(index);
            tier = Some(lower::frame::Tier0 { counter, index, headers });
        }
        Counting::Regions(index, headers) => {
            let after = env.tiers.expect("tier-0 code has tables").region_after;
            let t = crate::tiers::RegionTables::new(regions.len(), after);
            let (slots, counters) = (t.slots.as_ptr() as u64, t.counters.as_ptr() as u64);
            by_region = Some(lower::frame::ByRegion { index, slots, counters, headers });
            tables = Some(t);
        }
    }
    let counted = tier.as_ref().map(|t| &t.headers[..]).or(by_region.as_ref().map(|t| &t.headers[..])).unwrap_or(&[]);
    let header_numbers = lower::frame::header_numbers(counted);
    let split = lower::frame::Split { regions, frame, funcs, tier, by_region, plan: *plan, header_numbers };
    // Code that never tiers up — built ahead of time, run without tiering,
    // a huge function of the program compiled for the JIT's traces to
    // call, a tiered function's optimized tier split in tests — has its
    // hot regions compiled optimized from the start.
    let fixed = split.tier.is_none() && split.by_region.is_none();
    let optimized = plan.region_tier1();
    for (k, &region) in split.funcs.iter().enumerate() {
        let mut ctx = env.compiler.context(&*env.module);
        let tier1 = (fixed && Plan::hot_region(&split.regions, k, |b| facts.on_cycle(b))).then_some(&optimized);
        lower::lower_region(env, f, facts, &split, k, tier1, &mut ctx, fbctx);
        compile::submit(env, region, f.name, ctx, tier1.map_or(plan.codegen, |t| t.codegen))?;
    }
    let mut ctx = env.compiler.context(&*env.module);
    let driver_tier = split.tier.as_ref().map(|t| (t.counter, t.index));
    lower::frame::lower_driver(env, f, &split, driver_tier, &mut ctx, fbctx);
    compile::submit(env, id, f.name, ctx, plan.codegen)?;
    Ok((split, tables))
}

/// What was compiled into `ctx` as `id` (function `name`): its size,
/// safepoints and code map. Prints or writes its code when asked
/// (`FLOWC_DISASM`, `FLOWC_CODE_DIR`).
pub(crate) fn describe(name: Symbol, id: FuncId, ctx: &cranelift_codegen::Context) -> DefinedCode {
    let code = ctx.compiled_code().expect("a compiled function");
    // Every call is a safepoint, those with no word to keep too: the
    // walk goes through a frame only at a return address it knows.
    // Both lists are in code order.
    let mut maps = code.buffer.user_stack_maps().iter().peekable();
    let points = code
        .buffer
        .call_sites()
        .map(|site| {
            while maps.next_if(|(offset, _, _)| *offset < site.ret_addr).is_some() {}
            let slots = match maps.next_if(|(offset, _, _)| *offset == site.ret_addr) {
                Some((_, _, map)) => map.entries().map(|(_, slot)| slot).collect(),
                None => Vec::new(),
            };
            (site.ret_addr, slots)
        })
        .collect();
    let size = code.code_buffer().len() as u32;
    let places = crate::code_map::places(code);
    if flowc_lang::flags::on("FLOWC_DISASM") {
        // The final code, after block layout and branch resolution (the
        // address is not known before the module is finalized).
        eprint!("{}", crate::disasm::listing(&[(name, 0, code.code_buffer())]));
    }
    if let Some(dir) = std::env::var_os("FLOWC_CODE_DIR") {
        write_code(std::path::Path::new(&dir), name, code.code_buffer());
    }
    DefinedCode { id, name, size, safepoints: points, places }
}

/// Writes the final machine code of a function to `dir/NAME-K.bin` (`K`
/// counts the functions compiled so far in this process), for
/// `objdump -D -b binary -m i386:x86-64` (the bytes `FLOWC_DISASM` decodes).
/// A debugging aid: failures to write are reported and ignored.
fn write_code(dir: &std::path::Path, name: Symbol, code: &[u8]) {
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("{name}-{k}.bin"));
    if let Err(e) = std::fs::write(&path, code) {
        eprintln!("flowc: cannot write {}: {e}", path.display());
    }
}

/// Defines the wrapper `name(args, ctx)` that loads `target`'s arguments
/// from an array of words and calls it (compiled as `id`), or the
/// specialized version `(id, small positions)` when the arguments at those
/// positions are 32-bit integers. A function `slot_of` gives a code slot
/// for is called through it (tiered code, [`crate::tiers`]).
pub fn define_entry(
    module: &mut dyn Module,
    target: &Function,
    id: FuncId,
    version: Option<(FuncId, &[usize])>,
    slot_of: &dyn Fn(FuncId) -> Option<u64>,
    name: &str,
) -> Result<FuncId, String> {
    define_entry_of(module, target.params.len(), id, version, slot_of, name)
}

/// The one entry wrapper of a cache's traces, `extern "C" fn(target,
/// ctx) -> word`: calls the trace at address `target` (which finds its
/// arguments in the context's exit buffer) with the context, and returns
/// what it returns. One wrapper serves every trace and bridge, so none
/// costs a function of its own to compile. Hosts other than x86-64 only:
/// there [`crate::baseline::trace_entry`]'s seven instructions serve.
pub fn define_trace_entry(module: &mut dyn Module, name: &str) -> Result<FuncId, String> {
    let (entry_id, mut ctx) = declare_wrapper(module, name)?;
    let mut fbctx = FunctionBuilderContext::new();
    let trace_sig = lower::trace_signature(module);
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fbctx);
        let block = b.create_block();
        b.append_block_params_for_function_params(block);
        b.switch_to_block(block);
        let (target, c) = (b.block_params(block)[0], b.block_params(block)[1]);
        let sig_ref = b.import_signature(trace_sig);
        let call = b.ins().call_indirect(sig_ref, target, &[c]);
        let r = b.inst_results(call)[0];
        b.ins().return_(&[r]);
        b.seal_all_blocks();
        b.finalize(module.target_config());
    }
    module.define_function(entry_id, &mut ctx).map_err(|e| format!("{e:?}"))?;
    Ok(entry_id)
}

/// Declares the exported wrapper `name(word, ctx) -> word` (the entry
/// wrappers' signature, as [`crate::baseline::trace_entry`]'s) and makes a context for its body.
fn declare_wrapper(module: &mut dyn Module, name: &str) -> Result<(FuncId, cranelift_codegen::Context), String> {
    let sig = signature(&*module, 1);
    let id = module.declare_function(name, Linkage::Export, &sig).map_err(|e| e.to_string())?;
    let mut ctx = module.make_context();
    ctx.func.signature = sig;
    Ok((id, ctx))
}

/// [`define_entry`] for a target with `arity` parameters.
pub fn define_entry_of(
    module: &mut dyn Module,
    arity: usize,
    id: FuncId,
    version: Option<(FuncId, &[usize])>,
    slot_of: &dyn Fn(FuncId) -> Option<u64>,
    name: &str,
) -> Result<FuncId, String> {
    let (entry_id, mut ctx) = declare_wrapper(module, name)?;
    let mut fbctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fbctx);
        let block = b.create_block();
        b.append_block_params_for_function_params(block);
        b.switch_to_block(block);
        let (args, c) = (b.block_params(block)[0], b.block_params(block)[1]);
        let mut values = Vec::new();
        for k in 0..arity {
            values.push(b.ins().load(types::I64, MemFlagsData::trusted(), args, (8 * k) as i32));
        }
        values.push(c);
        let mut call_to = |b: &mut FunctionBuilder, id: FuncId| {
            let call = match slot_of(id) {
                // Tiered: what its slot holds (`crate::tiers`).
                Some(slot) => {
                    let sig = b.import_signature(signature(&*module, arity));
                    let slot = b.ins().iconst(types::I64, slot as i64);
                    let code = b.ins().load(types::I64, MemFlagsData::trusted(), slot, 0);
                    b.ins().call_indirect(sig, code, &values)
                }
                None => {
                    let fref = module.declare_func_in_func(id, b.func);
                    b.ins().call(fref, &values)
                }
            };
            let r = b.inst_results(call)[0];
            b.ins().return_(&[r]);
        };
        match version {
            Some((wid, small)) if !small.is_empty() => {
                // An integer word has tag bit 1; its value `w >> 1` is in
                // range when it survives a round trip through 32 bits.
                let in_range = |b: &mut FunctionBuilder, w| {
                    let tagged = b.ins().band_imm_s(w, 1);
                    let n = b.ins().sshr_imm_s(w, 1);
                    let n32 = b.ins().ireduce(types::I32, n);
                    let back = b.ins().sextend(types::I64, n32);
                    let fits = b.ins().icmp(IntCC::Equal, back, n);
                    let tagged = b.ins().icmp_imm_s(IntCC::NotEqual, tagged, 0);
                    b.ins().band(fits, tagged)
                };
                let tests: Vec<_> = small.iter().map(|&k| in_range(&mut b, values[k])).collect();
                let all = tests.into_iter().reduce(|x, y| b.ins().band(x, y)).expect("a small parameter");
                let (fast, generic) = (b.create_block(), b.create_block());
                b.ins().brif(all, fast, &[], generic, &[]);
                b.switch_to_block(fast);
                call_to(&mut b, wid);
                b.switch_to_block(generic);
                call_to(&mut b, id);
            }
            _ => call_to(&mut b, id),
        }
        b.seal_all_blocks();
        b.finalize(module.target_config());
    }
    module.define_function(entry_id, &mut ctx).map_err(|e| format!("{e:?}"))?;
    Ok(entry_id)
}

/// The main function of `words` as a [`Version`] of `generic` (the main
/// function of the same program), assuming the parameters named `small`.
pub fn version<'f>(generic: &Function, words: &'f IrModule, small: &[Symbol]) -> Result<Version<'f>, String> {
    let function = words.main().ok_or("the small version has no main function")?;
    if params(function) != params(generic) {
        return Err("the versions of main take different parameters".into());
    }
    let small = params(generic).iter().enumerate().filter(|(_, p)| small.contains(p)).map(|(k, _)| k).collect();
    Ok(Version { function, small })
}

/// The entry function's parameters, by name.
pub fn params(target: &Function) -> Vec<Symbol> {
    target.params.iter().map(|&p| target.values[p].name.unwrap_or_else(|| Symbol::intern("?"))).collect()
}

/// Defines `functions` (calls go to functions by name) and the entry
/// wrapper `flowc_entry` around `functions[entry]` in `module`.
pub fn define(
    module: &mut dyn Module,
    functions: &[&Function],
    entry: usize,
    version: Option<Version>,
    constants: Constants,
    objects: &lower::ObjectInfo,
    options: Options,
) -> Result<Defined, String> {
    let rt = declare_runtime(module)?;
    let (ids, funcs) = declare_functions(module, functions, "f")?;
    let small = match &version {
        Some(v) => Some(declare_functions(module, &[v.function], "w")?.0[0]),
        None => None,
    };
    let (mut traps, mut sites, mut safepoints) = (Vec::new(), SiteTable::default(), Vec::new());
    let functions_with_version = functions.len() + usize::from(version.is_some());
    let mut tables = options.tiering.map(|t| crate::tiers::Tables::new(functions_with_version, t));
    // Whole programs have no trace exits (traces go to a `TraceCache`).
    let mut exits = Vec::new();
    let insts =
        functions.iter().map(|f| f.insts.len()).sum::<usize>() + version.as_ref().map_or(0, |v| v.function.insts.len());
    let mut compiler = Compiler::for_work(insts);
    if options.listing {
        compiler.keep_listing();
    }
    // The entry (or its version for small parameters) runs once per run:
    // the functions it calls a bounded number of times can be cold.
    let all: Vec<(&Function, FuncId)> = functions
        .iter()
        .copied()
        .zip(ids.iter().copied())
        .chain(version.as_ref().map(|v| v.function).zip(small))
        .collect();
    let facts: Vec<lower::Facts> = all.iter().map(|(f, _)| lower::Facts::new(f)).collect();
    let entries: Vec<usize> = std::iter::once(entry).chain(small.map(|_| functions.len())).collect();
    let runs = flowc_ir::frequency::function_runs(
        &all.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
        &facts.iter().map(|x| &x.bounds).collect::<Vec<_>>(),
        &entries,
    );
    let facts: Vec<lower::Facts> =
        all.iter().zip(facts).zip(&runs).map(|((&(f, _), x), r)| x.with_runs(f, *r)).collect();
    // Huge functions tier up region by region, others as a whole.
    let by_region: Vec<bool> = all
        .iter()
        .zip(&facts)
        .map(|((f, _), x)| Plan::by_region(f, x, tables.is_some(), options.split.is_some()))
        .collect();
    if let Some(tables) = &mut tables {
        for (k, ((f, _), facts)) in all.iter().zip(&facts).enumerate() {
            if !by_region[k] && Plan::tiered(f, facts, true) {
                tables.tiered[k] = Some(runs[k]);
                tables.index.insert(f.name, k);
            }
        }
    }
    let mut env = Building {
        module: &mut *module,
        funcs: &funcs,
        runtime: &rt,
        constants,
        traps: &mut traps,
        exits: &mut exits,
        sites: &mut sites,
        fuel: options.fuel,
        split: options.split,
        links: None,
        safepoints: &mut safepoints,
        objects,
        compiler: &mut compiler,
        tiers: tables.as_ref(),
    };
    let mut region_tiered: Vec<Option<RegionTiered>> = all.iter().map(|_| None).collect();
    for (k, ((f, id), facts)) in all.iter().zip(facts).enumerate() {
        if by_region[k] {
            region_tiered[k] = Some(define_by_region(&mut env, f, *id, facts, k)?);
        } else if env.tiers.is_some_and(|t| t.tiered[k].is_some()) {
            define_tier0(&mut env, f, *id, facts, k)?;
        } else {
            define_function(&mut env, f, *id, facts)?;
        }
    }
    compile::finish(&mut env)?;
    let target = functions[entry];
    let version = version.as_ref().zip(small).map(|(v, id)| (id, v.small.as_slice()));
    // Through the slots of tiered entries: a later run of the same code
    // starts in the optimized tier once it is compiled.
    let slot_of = |id: FuncId| {
        let tables = tables.as_ref()?;
        let k = all.iter().position(|&(_, f)| f == id)?;
        tables.tiered[k].map(|_| tables.slots[k].as_ptr() as u64)
    };
    let entry_id = define_entry(module, target, ids[entry], version, &slot_of, "flowc_entry")?;
    let ids = all.iter().map(|&(_, id)| id).collect();
    Ok(Defined {
        entry: entry_id,
        params: params(target),
        traps,
        sites,
        safepoints,
        listing: compiler.take_listing(),
        tiers: tables,
        by_region: region_tiered,
        ids,
        funcs,
        runtime: rt,
    })
}

/// The host machine's instruction set, optimizing for speed.
pub fn isa() -> Result<cranelift_codegen::isa::OwnedTargetIsa, String> {
    isa_with(false)
}

/// [`isa`], position-independent when `pic` (object files).
pub fn isa_with(pic: bool) -> Result<cranelift_codegen::isa::OwnedTargetIsa, String> {
    make_isa(pic)
}

fn make_isa(pic: bool) -> Result<cranelift_codegen::isa::OwnedTargetIsa, String> {
    make_isa_with(pic, &[("opt_level", "speed")])
}

/// The host ISA with the settings every function needs and `settings`.
pub(crate) fn make_isa_with(
    pic: bool,
    settings: &[(&str, &str)],
) -> Result<cranelift_codegen::isa::OwnedTargetIsa, String> {
    let mut flags = settings::builder();
    for (name, value) in settings {
        flags.set(name, value).map_err(|e| e.to_string())?;
    }
    // Every function keeps its frame pointer: traces continue in one
    // another by tail calls (which need them), and the collector walks
    // compiled frames through them ([`flowc_runtime::frames`]).
    flags.set("preserve_frame_pointers", "true").map_err(|e| e.to_string())?;
    flags.set("is_pic", if pic { "true" } else { "false" }).map_err(|e| e.to_string())?;
    // Cranelift's IR verifier runs in debug builds (and so in tests) only.
    let verify = if cfg!(debug_assertions) { "true" } else { "false" };
    flags.set("enable_verifier", verify).map_err(|e| e.to_string())?;
    let builder = cranelift_native::builder().map_err(|e| e.to_string())?;
    builder.finish(settings::Flags::new(flags)).map_err(|e| e.to_string())
}

/// Finds out what the host's processor can do, as the first instruction
/// set made in a process would: the standard library keeps what it
/// found for the rest of the process. Its CPUID queries each leave a
/// virtual machine for its host: with the settings, some 100 µs of the
/// 250 µs a JIT run's trace cache took to make on the running thread,
/// which the JIT's preparing thread now spends instead where there is one
/// (`flowc_trace::jit::Preparing`: programs of 1,000 statements or more,
/// on a machine with a second core; smaller ones still pay it when their
/// first code is made).
pub fn detect_host() {
    let _ = cranelift_native::builder();
}

/// A name no other function of any module gets: `base` and a number, so
/// that code compiled again (a region, a function's optimized tier) is
/// declared anew, and profiles name what they sample (perf reads the names
/// of in-memory code from the map Cranelift's module writes; anonymous
/// functions are `.Lfn` and a number there).
pub fn unique_name(base: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}.{n}", sanitize(base))
}

fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}
