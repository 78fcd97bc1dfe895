//! Compiling a whole IR module in memory (`flowc run --engine native`) and
//! running it.

use std::collections::HashMap;

use cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlagsData};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{FuncId, Linkage, Module as _};

use flowc_ir::{FunctionKind, Module};
use flowc_lang::interp::{ErrorKind, Outcome, RuntimeError};
use flowc_lang::{Symbol, Value};

use crate::lower::{self, signature, Env};
use crate::runtime::{self, Ctx};
use crate::word::{self, Word};

/// A compiled module, ready to run.
pub struct Native {
    /// Owns the code; dropping it frees the code.
    _jit: JITModule,
    /// `entry(args, ctx)`: loads the main function's arguments from an
    /// array and calls it.
    entry: *const u8,
    main_params: Vec<Symbol>,
    /// Constants the code points at (lists, big integers), boxed so their
    /// addresses are stable.
    #[allow(clippy::vec_box)]
    _pool: Vec<Box<Value>>,
    traps: Vec<ErrorKind>,
    immutable: Vec<(Symbol, Symbol)>,
}

fn isa() -> Result<cranelift_codegen::isa::OwnedTargetIsa, String> {
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").map_err(|e| e.to_string())?;
    flags.set("is_pic", "false").map_err(|e| e.to_string())?;
    let builder = cranelift_native::builder().map_err(|e| e.to_string())?;
    builder.finish(settings::Flags::new(flags)).map_err(|e| e.to_string())
}

impl Native {
    /// Compiles every function of `m`; `m` must have a main function.
    pub fn compile(m: &Module) -> Result<Native, String> {
        let mut builder = JITBuilder::with_isa(isa()?, cranelift_module::default_libcall_names());
        for (name, ptr) in runtime::symbols() {
            builder.symbol(name, ptr);
        }
        let mut jit = JITModule::new(builder);
        // The runtime's functions.
        let mut rt: HashMap<&'static str, FuncId> = HashMap::new();
        for (name, _) in runtime::symbols() {
            let n = match name {
                "rt_op" | "rt_missing_op" => 4,
                "rt_set" => 3,
                "rt_get" | "rt_is_class" => 2,
                "rt_stack_overflow" => 0,
                _ => 1,
            };
            let sig = signature(&jit, n);
            let id = jit.declare_function(name, Linkage::Import, &sig).map_err(|e| e.to_string())?;
            rt.insert(name, id);
        }
        // The module's functions.
        let main = m.main().ok_or("the module has no main function")?;
        let mut funcs: HashMap<Symbol, (FuncId, usize)> = HashMap::new();
        let mut ids = Vec::new();
        for (k, f) in m.functions.iter().enumerate() {
            if f.kind == FunctionKind::Trace {
                continue;
            }
            let sig = signature(&jit, f.params.len());
            let name = format!("f{k}_{}", sanitize(f.name.as_str()));
            let id = jit.declare_function(&name, Linkage::Local, &sig).map_err(|e| e.to_string())?;
            if f.kind == FunctionKind::Function {
                funcs.insert(f.name, (id, f.params.len()));
            }
            ids.push((id, k));
        }
        let main_index = m.functions.iter().position(|f| f.kind == FunctionKind::Main).unwrap();
        let main_id = ids.iter().find(|(_, k)| *k == main_index).unwrap().0;
        let mut pool = Vec::new();
        let mut traps = Vec::new();
        let mut ctx = jit.make_context();
        let mut fbctx = FunctionBuilderContext::new();
        for (id, k) in &ids {
            let mut env = Env { jit: &mut jit, funcs: &funcs, runtime: &rt, pool: &mut pool, traps: &mut traps };
            lower::lower(&mut env, &m.functions[*k], &mut ctx, &mut fbctx);
            jit.define_function(*id, &mut ctx).map_err(|e| format!("{e:?}"))?;
            jit.clear_context(&mut ctx);
        }
        // entry(args, ctx) = main(args[0], ..., args[n-1], ctx)
        let mut sig = jit.make_signature();
        sig.params.push(AbiParam::new(types::I64));
        sig.params.push(AbiParam::new(types::I64));
        sig.returns.push(AbiParam::new(types::I64));
        let entry_id = jit.declare_function("flowc_entry", Linkage::Export, &sig).map_err(|e| e.to_string())?;
        ctx.func.signature = sig;
        {
            let mut b = FunctionBuilder::new(&mut ctx.func, &mut fbctx);
            let block = b.create_block();
            b.append_block_params_for_function_params(block);
            b.switch_to_block(block);
            let (args, c) = (b.block_params(block)[0], b.block_params(block)[1]);
            let mut values = Vec::new();
            for k in 0..main.params.len() {
                values.push(b.ins().load(types::I64, MemFlagsData::trusted(), args, (8 * k) as i32));
            }
            values.push(c);
            let fref = jit.declare_func_in_func(main_id, b.func);
            let call = b.ins().call(fref, &values);
            let r = b.inst_results(call)[0];
            b.ins().return_(&[r]);
            b.seal_all_blocks();
            b.finalize(jit.target_config());
        }
        jit.define_function(entry_id, &mut ctx).map_err(|e| format!("{e:?}"))?;
        jit.clear_context(&mut ctx);
        jit.finalize_definitions().map_err(|e| e.to_string())?;
        let entry = jit.get_finalized_function(entry_id);
        let main_params =
            main.params.iter().map(|&p| main.values[p].name.unwrap_or_else(|| Symbol::intern("?"))).collect();
        let immutable = m.immutable.iter().flat_map(|(c, fs)| fs.iter().map(move |f| (*c, *f))).collect();
        Ok(Native { _jit: jit, entry, main_params, _pool: pool, traps, immutable })
    }

    /// Runs the program with environment `env` (parameters by name;
    /// missing ones are unbound). Deep recursion needs a big stack: call
    /// this on a thread with one (see [`crate::with_stack`]).
    pub fn run(&self, env: &[(Symbol, Value)], max_depth: usize) -> Result<Outcome, RuntimeError> {
        let mut ctx = Ctx::new(max_depth as u64, self.immutable.clone(), self.traps.clone());
        let args: Vec<Word> = self
            .main_params
            .iter()
            .map(|name| match env.iter().find(|(k, _)| k == name) {
                Some((_, v)) => ctx.word(v.clone()),
                None => word::unbound(*name),
            })
            .collect();
        // SAFETY: `entry` was compiled above with the signature
        // `extern "C" fn(*const u64, *mut Ctx) -> u64`; it reads exactly
        // `main_params.len()` words from `args`, which holds that many, and
        // passes `ctx` to the runtime, which is alive and not otherwise
        // borrowed during the call.
        let entry: extern "C" fn(*const Word, *mut Ctx) -> Word = unsafe { std::mem::transmute(self.entry) };
        let result = entry(args.as_ptr(), &mut ctx);
        if let Some(kind) = ctx.error.take() {
            return Err(RuntimeError { kind, at: None });
        }
        match (ctx.output.take(), result) {
            (Some(value), _) => Ok(Outcome { value, steps: 0, allocations: ctx.allocations }),
            (None, _) => Err(RuntimeError { kind: ErrorKind::ReturnOutsideFunction, at: None }),
        }
    }
}

fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}
