//! Object files for executables (`flowc build`): the module's functions
//! compiled by the same lowering as the JIT into a relocatable object
//! (cranelift-object), with a `main` that calls the runtime's
//! [`flowc_rt_main`](flowc_runtime::start::flowc_rt_main) and the
//! [`Program`](flowc_runtime::start::Program) description it reads.
//! Linking the object with `libflowc_runtime.a` gives the executable.

use cranelift_codegen::ir::{types, AbiParam, InstBuilder};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{DataDescription, DataId, Linkage, Module as _};
use cranelift_object::{ObjectBuilder, ObjectModule};

use flowc_ir::{Function, FunctionKind, Module, Site};
use flowc_lang::syntax::prolog::write_env;
use flowc_lang::{Symbol, Value};
use flowc_runtime::start::encode_trap;

use crate::define::{self, isa_with};
use crate::lower::Constants;

/// Module `m`'s functions compiled into a fresh object module, as
/// [`object`] compiles them.
struct Program {
    obj: ObjectModule,
    defined: define::Defined,
    /// The constants the code reads from the table `pool`, by index.
    values: Vec<Value>,
    pool: DataId,
    /// The slots of objects.
    layout: &'static flowc_lang::heap::Layout,
}

fn define_program(
    m: &Module,
    words: Option<(&Module, &[Symbol])>,
    options: define::Options,
) -> Result<Program, String> {
    let m = &*crate::walks::with_walks(m, options.walks_everywhere);
    let words = words.map(|(w, small)| (crate::walks::with_walks(w, options.walks_everywhere), small));
    let words = words.as_ref().map(|(w, small)| (&**w, *small));
    let functions: Vec<&Function> = m.functions.iter().filter(|f| f.kind != FunctionKind::Trace).collect();
    let main = functions.iter().position(|f| f.kind == FunctionKind::Main).ok_or("the module has no main function")?;
    let builder = ObjectBuilder::new(isa_with(true)?, "flowc", cranelift_module::default_libcall_names())
        .map_err(|e| e.to_string())?;
    let mut obj = ObjectModule::new(builder);
    let pool = obj.declare_data("flowc_pool", Linkage::Local, true, false).map_err(|e| e.to_string())?;
    let mut values: Vec<Value> = Vec::new();
    let version = words.map(|(w, small)| define::version(functions[main], w, small)).transpose()?;
    let constants = Constants::Table { values: &mut values, table: pool };
    // The slots of objects: both versions' fields (see `Native::compile_versions`).
    let field_names = m.layout().fields().iter().chain(words.map_or(&[][..], |(w, _)| w.layout().fields()));
    let layout = flowc_lang::heap::Layout::of(field_names.copied());
    let running = functions.iter().copied().chain(version.as_ref().map(|v| v.function));
    let objects = crate::lower::ObjectInfo::of_program(layout, &m.immutable, false, running);
    let defined = define::define(&mut obj, &functions, main, version, constants, &objects, options)?;
    Ok(Program { obj, defined, values, pool, layout })
}

/// The Cranelift IR of module `m`'s functions as `flowc build` lowers
/// them (whole, optimized tier, constants from a table; before Cranelift
/// optimizes them): per function a `; NAME (CODEGEN)` line, then its text.
/// What the filetests' `lower` directive shows.
pub fn lowered(m: &Module) -> Result<String, String> {
    let options = define::Options { listing: true, ..Default::default() };
    Ok(define_program(m, None, options)?.defined.listing)
}

/// The object file for module `m` (which must have a main function) and,
/// if given, the small version of its main function (see
/// [`crate::Native::compile_versions`]);
/// `default_env` is what the executable runs with when given no `--env`;
/// `describe` renders a source site as error messages show it; with
/// `fuel`, the code counts loop iterations so that the executable can take
/// `--fuel` (it costs a memory update per iteration).
pub fn object(
    m: &Module,
    words: Option<(&Module, &[Symbol])>,
    default_env: &[(Symbol, Value)],
    max_depth: usize,
    describe: &dyn Fn(Site) -> String,
    fuel: bool,
) -> Result<Vec<u8>, String> {
    let options = define::Options { fuel, ..Default::default() };
    let Program { mut obj, defined, values, pool, layout } = define_program(m, words, options)?;

    // The constant table, filled at start-up.
    let mut desc = DataDescription::new();
    desc.define_zeroinit(8 * values.len().max(1));
    desc.set_align(8);
    obj.define_data(pool, &desc).map_err(|e| e.to_string())?;

    let constants: Vec<(Symbol, Value)> = values
        .iter()
        .map(|v| match v {
            Value::Object(_) => Err("an object constant cannot be written to an executable".to_owned()),
            v => Ok((Symbol::intern("k"), v.clone())),
        })
        .collect::<Result<_, _>>()?;
    let mut constants_text = String::new();
    write_env(&mut constants_text, &constants);
    let mut env_text = String::new();
    write_env(&mut env_text, default_env);
    // After everything above has interned what it names.
    let mut symbols = Vec::new();
    let count = Symbol::count();
    for k in 0..count {
        symbols.extend_from_slice(Symbol::from_index(k).as_str().as_bytes());
        symbols.push(0);
    }
    let params: Vec<u64> = defined.params.iter().map(|p| p.index() as u64).collect();
    let mut traps: Vec<u64> = Vec::new();
    for t in &defined.traps {
        traps.extend(encode_trap(t).ok_or_else(|| format!("a trap raising {t} cannot be written"))?);
    }
    let layout_fields: Vec<u64> = layout.fields().iter().map(|f| f.index() as u64).collect();
    let immutable: Vec<u64> = m
        .immutable
        .iter()
        .flat_map(|(c, fs)| fs.iter().flat_map(move |f| [c.index() as u64, f.index() as u64]))
        .collect();

    let blob = |obj: &mut ObjectModule, name: &str, bytes: Vec<u8>| -> Result<DataId, String> {
        let id = obj.declare_data(name, Linkage::Local, false, false).map_err(|e| e.to_string())?;
        let mut d = DataDescription::new();
        d.define(bytes.into_boxed_slice());
        // Word arrays are read as words.
        d.set_align(8);
        obj.define_data(id, &d).map_err(|e| e.to_string())?;
        Ok(id)
    };
    let c_string = |s: String| {
        let mut b = s.into_bytes();
        b.push(0);
        b
    };
    let words = |ws: &[u64]| ws.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
    let constants_id = blob(&mut obj, "flowc_constants", c_string(constants_text))?;
    let symbols_id = blob(&mut obj, "flowc_symbols", symbols)?;
    let params_id = blob(&mut obj, "flowc_params", words(&params))?;
    let traps_id = blob(&mut obj, "flowc_traps", words(&traps))?;
    let immutable_id = blob(&mut obj, "flowc_immutable", words(&immutable))?;
    let env_id = blob(&mut obj, "flowc_default_env", c_string(env_text))?;
    let site_lines: String = defined.sites.sites.iter().map(|s| describe(*s).replace('\n', " ") + "\n").collect();
    let sites_id = blob(&mut obj, "flowc_sites", c_string(site_lines))?;
    let fields_id = blob(&mut obj, "flowc_fields", words(&layout_fields))?;
    // The safepoints, for the collector: per function its address and its
    // safepoints' range in `flowc_safepoints` (each: the return address's
    // offset, the number of slots, the slots' offsets from the stack
    // pointer).
    let mut points: Vec<u64> = Vec::new();
    let mut functions_desc = DataDescription::new();
    functions_desc.set_align(8);
    let mut function_words: Vec<u64> = Vec::new();
    let mut relocations = Vec::new();
    for d in &defined.safepoints {
        let (id, safepoints) = (&d.id, &d.safepoints);
        relocations.push((function_words.len() * 8, *id));
        function_words.extend([0, points.len() as u64, safepoints.len() as u64]);
        for (offset, slots) in safepoints {
            points.extend([*offset as u64, slots.len() as u64]);
            points.extend(slots.iter().map(|&o| o as u64));
        }
    }
    let safepoint_count = defined.safepoints.len();
    functions_desc.define(words(&function_words).into_boxed_slice());
    for (offset, id) in relocations {
        let f = obj.declare_func_in_data(id, &mut functions_desc);
        functions_desc.write_function_addr(offset as u32, f);
    }
    let functions_id =
        obj.declare_data("flowc_safepoint_functions", Linkage::Local, false, false).map_err(|e| e.to_string())?;
    obj.define_data(functions_id, &functions_desc).map_err(|e| e.to_string())?;
    let points_id = blob(&mut obj, "flowc_safepoints", words(&points))?;

    // The program description, with the layout of `start::Program`.
    let program = obj.declare_data("flowc_program", Linkage::Local, false, false).map_err(|e| e.to_string())?;
    let mut d = DataDescription::new();
    d.set_align(8);
    let mut fields = vec![0u64; 22];
    fields[2] = values.len() as u64;
    fields[5] = count as u64;
    fields[7] = params.len() as u64;
    fields[9] = defined.traps.len() as u64;
    fields[11] = (immutable.len() / 2) as u64;
    fields[13] = max_depth as u64;
    fields[14] = flowc_runtime::start::ABI;
    fields[17] = layout_fields.len() as u64;
    fields[19] = safepoint_count as u64;
    fields[21] = u64::from(fuel);
    d.define(words(&fields).into_boxed_slice());
    let entry = obj.declare_func_in_data(defined.entry, &mut d);
    d.write_function_addr(0, entry);
    for (offset, id) in [
        (8, pool),
        (24, constants_id),
        (32, symbols_id),
        (48, params_id),
        (64, traps_id),
        (80, immutable_id),
        (96, env_id),
        (120, sites_id),
        (128, fields_id),
        (144, functions_id),
        (160, points_id),
    ] {
        let gv = obj.declare_data_in_data(id, &mut d);
        d.write_data_addr(offset, gv, 0);
    }
    obj.define_data(program, &d).map_err(|e| e.to_string())?;

    // int main(int argc, char **argv) { return flowc_rt_main(argc, argv, &flowc_program); }
    let mut sig = obj.make_signature();
    sig.params.push(AbiParam::new(types::I32));
    sig.params.push(AbiParam::new(types::I64));
    sig.returns.push(AbiParam::new(types::I32));
    let mut rt_sig = sig.clone();
    rt_sig.params.push(AbiParam::new(types::I64));
    let rt_main = obj.declare_function("flowc_rt_main", Linkage::Import, &rt_sig).map_err(|e| e.to_string())?;
    let main_id = obj.declare_function("main", Linkage::Export, &sig).map_err(|e| e.to_string())?;
    let mut ctx = obj.make_context();
    ctx.func.signature = sig;
    let mut fbctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fbctx);
        let block = b.create_block();
        b.append_block_params_for_function_params(block);
        b.switch_to_block(block);
        let (argc, argv) = (b.block_params(block)[0], b.block_params(block)[1]);
        let gv = obj.declare_data_in_func(program, b.func);
        let p = b.ins().symbol_value(types::I64, gv);
        let callee = obj.declare_func_in_func(rt_main, b.func);
        let call = b.ins().call(callee, &[argc, argv, p]);
        let r = b.inst_results(call)[0];
        b.ins().return_(&[r]);
        b.seal_all_blocks();
        b.finalize(obj.target_config());
    }
    obj.define_function(main_id, &mut ctx).map_err(|e| format!("{e:?}"))?;
    obj.finish().emit().map_err(|e| e.to_string())
}
