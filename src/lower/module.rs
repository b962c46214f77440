//! Module-level lowering: find the kernels of a file, lower each body with
//! `Adjoint`, and assemble warp's CPU or CUDA module around them.

use crate::text::Put;
use std::sync::LazyLock;

use std::cell::RefCell;

use super::adjoint::{
    Adjoint, BuiltFunc, Code, FuncTable, FunctionSource, FunctionText, LoweredBody,
};
use super::pyconst::{self, PyVal};
use super::templates::*;
use super::types::{
    ArrayKind, ConstVal, Query, Scalar, StructDef, StructId, Tile, Type, Value, composite_type,
};
use super::{KernelIr, LowerError, Lowered, Target, TargetIr};
use crate::lang::ast::*;
use crate::lang::parse_module;

/// What the module level tells the lowering: source lines (for the line
/// comments), the names bound to the warp module and names imported from it.
pub struct Scope<'a> {
    pub lines: Vec<&'a str>,
    /// The syntax tree's arena, where the lowering puts the statements it
    /// rewrites (`continue` in unrolled loops) and the names they bind.
    pub arena: &'a bumpalo::Bump,
    /// The file name printed in `// file:line` comments above functions.
    pub filename: String,
    /// Module-level `@wp.func` definitions with their C++ names.
    functions: Vec<(&'a FunctionDef<'a>, Pos, String)>,
    warp_aliases: Vec<String>,
    /// (local name, warp name) from `from warp import x as y`.
    warp_imports: Vec<(String, String)>,
    /// (local name, module) of `import math`, `import numpy as np`.
    py_modules: Vec<(String, &'static str)>,
    /// (local name, name in math/numpy) from `from math import pi as PI`.
    py_imports: Vec<(String, String)>,
    /// Module-level names and their values at the end of the import (`None`:
    /// assigned, but not statically computable): the last assignment wins.
    values: Vec<(String, Option<PyVal>)>,
    /// The kernels of the module, with the options warp builds each with.
    kernels: Vec<KernelDef<'a>>,
    /// `block_dim` of the file's own warp module (`#define WP_TILE_BLOCK_DIM`).
    pub block_dim: i128,
    /// `@wp.func_replay(f)` definitions: (f's name, the replay def, its position, its C++ name).
    replays: Vec<(String, &'a FunctionDef<'a>, Pos, String)>,
    /// `@wp.func_grad(f)` definitions: (f's name, the gradient def, its position).
    grads: Vec<(String, &'a FunctionDef<'a>, Pos)>,
    /// Bytes of code a kernel or function may generate, and the module's kernels together.
    pub max_generated: usize,
    /// Module-level names bound to types: `@wp.struct` classes and aliases
    /// such as `vec5 = wp.types.vector(length=5, dtype=float)`.
    type_names: Vec<(String, Value)>,
    /// Whether a module-level `@wp.func` is named after an operator's builtin
    /// (`add`, `mul`, ...): warp then tries it first for that operator.
    pub operator_funcs: bool,
    /// `@wp.func`s a module-level factory call created (`f1 = make_func(1)`).
    nested: Vec<NestedFunc<'a>>,
}

/// A `@wp.func` defined inside a plain module-level function (a factory),
/// one per call of the factory.
struct NestedFunc<'a> {
    def: &'a FunctionDef<'a>,
    pos: Pos,
    /// C++ name: warp's key (`factory__locals__name`) and the key's count.
    native: String,
    key: String,
    /// The factory's local values the function reads (closure variables).
    env: Vec<(String, PyVal)>,
}

/// The C++ snippets of a `@wp.func_native` function.
pub struct NativeSnippets {
    pub forward: String,
    pub adjoint: Option<String>,
    pub replay: Option<String>,
    /// warp takes the return annotation only when `@wp.func_native` is the one decorator.
    pub single_decorator: bool,
}

/// The `warp.config` settings that change generated code, as the file sets them.
#[derive(Clone, Copy, Debug)]
struct Config {
    enable_backward: bool,
    max_unroll: i128,
    default_grid_stride: bool,
    /// A setting whose effect on the output this version does not reproduce.
    unsupported: Option<&'static str>,
}

/// The options of one warp module that change generated code.
#[derive(Clone, Debug)]
struct ModOptions {
    enable_backward: bool,
    max_unroll: i128,
    block_dim: i128,
    default_grid_stride: Option<bool>,
    error: Option<String>,
}

impl ModOptions {
    /// A new module takes `max_unroll` and `enable_backward` from the config of the moment.
    fn new(c: &Config) -> Self {
        ModOptions {
            enable_backward: c.enable_backward,
            max_unroll: c.max_unroll,
            block_dim: 256,
            default_grid_stride: None,
            error: None,
        }
    }

    /// Applies `{"option": value, ...}`; `strict` (a kernel's `module_options`)
    /// rejects unknown names as warp does.
    fn apply(&mut self, items: &[(PyVal, PyVal)], strict: bool) -> Result<(), String> {
        for (k, v) in items {
            let PyVal::Str(k) = k else {
                return Err("module option names must be strings".into());
            };
            let bad = || format!("unsupported value for module option '{k}'");
            match (k.as_str(), v) {
                ("enable_backward", v) => self.enable_backward = v.truthy(),
                ("max_unroll", PyVal::Int(n)) => self.max_unroll = *n,
                ("block_dim", PyVal::Int(n)) => self.block_dim = *n,
                ("default_grid_stride", PyVal::None) => self.default_grid_stride = None,
                ("default_grid_stride", v) => self.default_grid_stride = Some(v.truthy()),
                ("mode", PyVal::Str(m)) if m == "release" => {}
                ("mode", PyVal::None) => {}
                ("mode", _) | ("lineinfo", PyVal::Bool(true)) => {
                    self.error = Some(format!(
                        "module option '{k}' (debug line information) is not supported by this version of the lowering"
                    ))
                }
                ("deterministic", PyVal::Str(m)) if m == "DeterministicMode.NOT_GUARANTEED" => {}
                ("deterministic", _) => {
                    self.error = Some(
                        "module option 'deterministic' is not supported by this version of the lowering"
                            .into(),
                    )
                }
                ("max_unroll" | "block_dim", _) => return Err(bad()),
                (
                    "fast_math"
                    | "fuse_fp"
                    | "lineinfo"
                    | "cuda_output"
                    | "optimization_level"
                    | "cpu_compiler_flags"
                    | "compile_time_trace"
                    | "strip_hash"
                    | "enable_mathdx_gemm"
                    | "enable_mathdx_solver"
                    | "enable_mathdx_fft"
                    | "deterministic_max_records"
                    | "extra_build_options",
                    _,
                ) => {}
                _ if strict => return Err(format!("unknown module option '{k}'")),
                _ => {}
            }
        }
        Ok(())
    }
}

/// Which warp module a kernel is registered in.
#[derive(Clone, Debug)]
enum ModuleRef {
    /// The file's own module.
    Main,
    /// `module="unique"`: a module of its own, with these options.
    Unique(ModOptions),
    /// A module named by a string or a `wp.Module` object.
    Named(String),
}

/// The options a kernel is generated with.
#[derive(Clone, Debug)]
pub struct KernelOptions {
    pub enable_backward: bool,
    /// CUDA kernels loop over a grid stride (warp's default), or return past the end.
    pub grid_stride: bool,
    pub max_unroll: usize,
    /// The module's `block_dim` (threads per block).
    pub block_dim: u32,
    /// `__launch_bounds__(...) ` and `WP_CLUSTER_DIMS(...) `, before `__global__`.
    pub cuda_attrs: String,
    /// `WP_MAXNREG(n) `, after `void`.
    pub cuda_regs: String,
    /// `enable_cuda_smem_spilling=True`: `WP_ENABLE_SMEM_SPILLING();` opens
    /// the CUDA kernel (a kernel that needs no shared memory).
    pub smem_spilling: bool,
}

type LResult<T> = Result<T, LowerError>;

fn err_at(pos: Pos, message: impl Into<String>) -> LowerError {
    LowerError {
        line: pos.line,
        col: pos.col,
        message: message.into(),
    }
}

impl<'a> Scope<'a> {
    fn new(
        source: &'a str,
        filename: &str,
        module: &'a Module<'a>,
        arena: &'a bumpalo::Bump,
    ) -> Self {
        let mut warp_aliases = Vec::new();
        let mut warp_imports = Vec::new();
        let mut py_modules = Vec::new();
        let mut py_imports = Vec::new();
        for stmt in module.body {
            match &stmt.kind {
                StmtKind::Import(names) => {
                    for (m, alias) in names.iter() {
                        if *m == "warp" {
                            warp_aliases.push(alias.unwrap_or("warp").to_string());
                        }
                        let known = match *m {
                            "math" => "math",
                            "numpy" => "numpy",
                            _ => continue,
                        };
                        py_modules.push((alias.unwrap_or(m).to_string(), known));
                    }
                }
                StmtKind::ImportFrom(m, names) if *m == "warp" => {
                    for (n, alias) in names.iter() {
                        warp_imports.push((alias.unwrap_or(n).to_string(), n.to_string()));
                    }
                }
                // `from warp._src.types import Vector, Matrix`: warp's type hints
                // (`Vector[wp.float32, Literal[3]]`, see `Scope::type_hint`).
                StmtKind::ImportFrom("warp._src.types", names) => {
                    for (n, alias) in names.iter() {
                        if matches!(*n, "Vector" | "Matrix" | "Quaternion" | "Transformation") {
                            warp_imports.push((alias.unwrap_or(n).to_string(), n.to_string()));
                        }
                    }
                }
                // `from warp._src import context`: its `builtin_functions["tid"]`.
                StmtKind::ImportFrom("warp._src", names) => {
                    for (n, alias) in names.iter() {
                        if *n == "context" {
                            py_modules.push((alias.unwrap_or(n).to_string(), "warp._src.context"));
                        }
                    }
                }
                StmtKind::ImportFrom(m, names) if *m == "math" || *m == "numpy" => {
                    for (n, alias) in names.iter() {
                        py_imports.push((alias.unwrap_or(n).to_string(), n.to_string()));
                    }
                }
                // warp's test helpers import warp as `wp`, and a star import passes it on.
                StmtKind::ImportFrom("warp.tests.unittest_utils", names)
                    if names.iter().any(|(n, _)| *n == "*") =>
                {
                    warp_aliases.push("wp".to_string());
                }
                _ => {}
            }
        }
        let mut scope = Scope {
            lines: split_lines(source),
            arena,
            filename: filename.to_string(),
            functions: Vec::new(),
            warp_aliases,
            warp_imports,
            py_modules,
            py_imports,
            values: Vec::new(),
            kernels: Vec::new(),
            block_dim: 256,
            replays: Vec::new(),
            grads: Vec::new(),
            max_generated: usize::MAX,
            type_names: Vec::new(),
            operator_funcs: false,
            nested: Vec::new(),
        };
        scope.collect_type_names(module);
        // warp numbers functions per name, globally, as they are decorated;
        // importing warp already defined some names.
        let mut counts: Vec<(String, usize)> = Vec::new();
        for stmt in module.body {
            if let StmtKind::FunctionDef(def) = &stmt.kind {
                if def.decorators.iter().any(|d| scope.is_func_decorator(d)) {
                    let key = native_identifier(def.name);
                    let n = match counts.iter_mut().find(|(k, _)| *k == key) {
                        Some(entry) => {
                            entry.1 += 1;
                            entry.1
                        }
                        None => {
                            let base = warp_defined_function_count(&key);
                            counts.push((key.clone(), base));
                            base
                        }
                    };
                    scope.operator_funcs |= matches!(
                        def.name,
                        "add"
                            | "sub"
                            | "mul"
                            | "div"
                            | "floordiv"
                            | "mod"
                            | "pow"
                            | "lshift"
                            | "rshift"
                            | "bit_and"
                            | "bit_or"
                            | "bit_xor"
                    );
                    scope.functions.push((def, stmt.pos, format!("{key}_{n}")));
                }
            }
        }
        for stmt in module.body {
            if let StmtKind::FunctionDef(def) = &stmt.kind {
                for d in def.decorators {
                    if let ExprKind::Call(f, args, _) = &d.kind {
                        if let (
                            true,
                            [
                                Expr {
                                    kind: ExprKind::Name(target),
                                    ..
                                },
                            ],
                        ) = (scope.names_warp(f, "func_replay"), &args[..])
                        {
                            // warp keys it `replay_<key>`, numbered like any function.
                            let key = format!("replay_{}", native_identifier(target));
                            let n = counts
                                .iter()
                                .find(|(k, _)| *k == key)
                                .map_or(0, |e| e.1 + 1);
                            scope.replays.push((
                                target.to_string(),
                                def,
                                stmt.pos,
                                format!("{key}_{n}"),
                            ));
                        }
                        if let (
                            true,
                            [
                                Expr {
                                    kind: ExprKind::Name(target),
                                    ..
                                },
                            ],
                        ) = (scope.names_warp(f, "func_grad"), &args[..])
                        {
                            scope.grads.push((target.to_string(), def, stmt.pos));
                        }
                    }
                }
            }
        }
        scope.run_module(module);
        scope
    }

    /// Runs the module-level statements in order, as the import does: the
    /// values of names, `wp.config` settings, module options, and each
    /// kernel with the options it is built with.
    fn run_module(&mut self, module: &'a Module<'a>) {
        let mut config = Config {
            enable_backward: true,
            max_unroll: 16,
            default_grid_stride: true,
            unsupported: None,
        };
        let mut main: Option<ModOptions> = None;
        let mut named: Vec<(String, ModOptions)> = Vec::new();
        let mut main_error: Option<String> = None;
        struct Pending<'m> {
            def: &'m FunctionDef<'m>,
            pos: Pos,
            module: ModuleRef,
            options: Result<KernelDecorator, LowerError>,
        }
        let mut pending: Vec<Pending<'a>> = Vec::new();
        // Plain (undecorated) module-level functions: possible factories.
        let mut factories: Vec<&'a FunctionDef<'a>> = Vec::new();
        let mut nested_counts: Vec<(String, usize)> = Vec::new();
        for stmt in module.body {
            if let StmtKind::Assign(targets, value) = &stmt.kind {
                if let ExprKind::Call(f, args, kwargs) = &value.kind {
                    if let (ExprKind::Name(fname), true) = (&f.kind, kwargs.is_empty()) {
                        if let Some(def) = factories.iter().rev().find(|d| d.name == *fname) {
                            let v = self.run_factory(def, args, &mut nested_counts);
                            for t in targets.iter() {
                                self.bind(t, v.clone());
                            }
                            continue;
                        }
                    }
                }
            }
            if let StmtKind::FunctionDef(def) = &stmt.kind {
                factories.retain(|d| d.name != def.name);
                if def.decorators.is_empty() {
                    factories.push(def);
                }
            }
            match &stmt.kind {
                // A plain class's attributes (`ONE = wp.constant(1)`), read by
                // kernels as `Flags.ONE`: kept as `Flags.ONE` values.
                StmtKind::ClassDef(class) if class.decorators.is_empty() => {
                    self.set_value(class.name, None);
                    // `Flags.`: the class itself (see `Scope::is_plain_class`).
                    self.set_value(&format!("{}.", class.name), None);
                    // An enum's members are their values too (`Task.LIFT.value`).
                    let is_enum = class.bases.iter().any(|b| {
                        matches!(b.kind, ExprKind::Name(n) | ExprKind::Attribute(_, n)
                            if matches!(n, "Enum" | "IntEnum" | "Flag" | "IntFlag"))
                    });
                    for s in class.body {
                        if let StmtKind::Assign(targets, value) = &s.kind {
                            let v = self.eval(value);
                            for t in targets.iter() {
                                if let ExprKind::Name(n) = t.kind {
                                    self.set_value(&format!("{}.{n}", class.name), v.clone());
                                    if is_enum {
                                        let member = format!("{}.{n}.value", class.name);
                                        self.set_value(&member, v.clone());
                                    }
                                }
                            }
                        }
                    }
                }
                StmtKind::Assign(targets, value) => {
                    if let [target] = &targets[..] {
                        if let Some(field) = self.config_field(target) {
                            let v = self.eval(value);
                            apply_config(&mut config, field, v.as_ref());
                            continue;
                        }
                    }
                    if let [target] = &targets[..] {
                        // `wp.get_module(NAME).options["option"] = value`
                        if let Some((module, key)) = self.module_option_target(target) {
                            let items = match (key, self.eval(value)) {
                                (Some(k), Some(v)) => vec![(PyVal::Str(k), v)],
                                _ => vec![(PyVal::Str("deterministic".into()), PyVal::None)],
                            };
                            let opts = match module {
                                None => main.get_or_insert_with(|| ModOptions::new(&config)),
                                Some(n) => {
                                    if !named.iter().any(|(k, _)| *k == n) {
                                        named.push((n.clone(), ModOptions::new(&config)));
                                    }
                                    &mut named.iter_mut().find(|(k, _)| *k == n).unwrap().1
                                }
                            };
                            if let Err(e) = opts.apply(&items, false) {
                                opts.error = Some(e);
                            }
                            continue;
                        }
                    }
                    let v = self.eval(value);
                    for t in targets.iter() {
                        self.bind(t, v.clone());
                    }
                }
                StmtKind::AnnAssign(target, _, Some(value)) => {
                    let v = self.eval(value);
                    self.bind(target, v);
                }
                StmtKind::AugAssign(target, op, value) => {
                    if let ExprKind::Name(n) = target.kind {
                        let v = match (self.value(n), self.eval(value)) {
                            (Some(a), Some(b)) => pyconst::binop(*op, &a, &b),
                            _ => None,
                        };
                        self.set_value(n, v);
                    }
                }
                StmtKind::Expr(Expr {
                    kind: ExprKind::Call(func, args, kwargs),
                    ..
                }) if self.names_warp(func, "set_module_options") => {
                    let target = kwargs
                        .iter()
                        .find(|k| k.arg == Some("module"))
                        .map(|k| self.module_name(&k.value));
                    let items = args.first().and_then(|a| self.eval_dict(a));
                    let opts = match &target {
                        None => main.get_or_insert_with(|| ModOptions::new(&config)),
                        Some(Some(n)) => {
                            if !named.iter().any(|(k, _)| k == n) {
                                named.push((n.clone(), ModOptions::new(&config)));
                            }
                            &mut named.iter_mut().find(|(k, _)| k == n).unwrap().1
                        }
                        // Another module's options: not this file's kernels.
                        Some(None) => continue,
                    };
                    match items {
                        Some(items) => {
                            if let Err(e) = opts.apply(&items, false) {
                                opts.error = Some(e);
                            }
                        }
                        None if target.is_none() => main_error = Some(
                            "the wp.set_module_options() argument cannot be evaluated statically"
                                .into(),
                        ),
                        None => {}
                    }
                }
                StmtKind::FunctionDef(def) => {
                    // The name now denotes this definition (`alias = func` binds it).
                    let native = self
                        .functions
                        .iter()
                        .find(|(d, _, _)| std::ptr::eq(*d, *def))
                        .map(|(_, _, n)| PyVal::Function(n.clone()));
                    self.set_value(def.name, native);
                    let mut kernel = None;
                    let mut warp_decorated = false;
                    for d in def.decorators {
                        if self.names_warp(d, "kernel") {
                            kernel = Some((ModuleRef::Main, Ok(KernelDecorator::default())));
                        } else if let ExprKind::Call(func, args, kwargs) = &d.kind {
                            if self.names_warp(func, "kernel") {
                                kernel = Some(self.kernel_decorator(args, kwargs, &config));
                            } else if ["func", "func_native", "func_grad", "func_replay", "struct"]
                                .iter()
                                .any(|a| self.names_warp(func, a))
                            {
                                warp_decorated = true;
                            }
                        } else if ["func", "struct"].iter().any(|a| self.names_warp(d, a)) {
                            warp_decorated = true;
                        }
                    }
                    if let Some((module, options)) = kernel {
                        match &module {
                            ModuleRef::Main => {
                                main.get_or_insert_with(|| ModOptions::new(&config));
                            }
                            ModuleRef::Named(n) => {
                                if !named.iter().any(|(k, _)| k == n) {
                                    named.push((n.clone(), ModOptions::new(&config)));
                                }
                            }
                            ModuleRef::Unique(_) => {}
                        }
                        pending.push(Pending {
                            def,
                            pos: stmt.pos,
                            module,
                            options,
                        });
                    } else if warp_decorated {
                        main.get_or_insert_with(|| ModOptions::new(&config));
                    }
                }
                _ => {}
            }
        }
        let main = main.unwrap_or_else(|| ModOptions::new(&config));
        self.block_dim = main.block_dim;
        for p in pending {
            let opts = match &p.module {
                ModuleRef::Main => &main,
                ModuleRef::Unique(o) => o,
                ModuleRef::Named(n) => &named.iter().find(|(k, _)| k == n).unwrap().1,
            };
            let name = p.options.as_ref().ok().and_then(|k| k.name.clone());
            let options = p.options.and_then(|k| {
                let fail = |m: &str| Err(err_at(p.pos, m));
                if let Some(e) = &opts.error {
                    return fail(e);
                }
                if matches!(p.module, ModuleRef::Main) {
                    if let Some(e) = &main_error {
                        return fail(e);
                    }
                }
                if let Some(e) = config.unsupported {
                    return fail(e);
                }
                if opts.block_dim == 1 {
                    return fail(
                        "block_dim=1 modules are not supported by this version of the lowering",
                    );
                }
                Ok(KernelOptions {
                    enable_backward: k.enable_backward.unwrap_or(opts.enable_backward),
                    grid_stride: k.grid_stride.unwrap_or(
                        opts.default_grid_stride
                            .unwrap_or(config.default_grid_stride),
                    ),
                    max_unroll: opts.max_unroll.clamp(0, 1 << 20) as usize,
                    block_dim: opts.block_dim.clamp(1, 1 << 20) as u32,
                    cuda_attrs: k.cuda_attrs,
                    cuda_regs: k.cuda_regs,
                    smem_spilling: k.smem_spilling,
                })
            });
            self.kernels.push(KernelDef {
                def: p.def,
                pos: p.pos,
                name,
                options,
            });
        }
    }

    /// Runs a call of plain module-level function `def` statically, when its
    /// body is a subset this version interprets: `@wp.func` definitions,
    /// `if`/`else` on values it can compute, assignments of such values and
    /// `return`. Each `@wp.func` it defines becomes a function of the module
    /// (warp numbers them per `factory__locals__name` key), reading the
    /// factory's locals as constants. `None` (nothing created) otherwise.
    fn run_factory(
        &mut self,
        def: &'a FunctionDef<'a>,
        args: &[Expr<'a>],
        counts: &mut Vec<(String, usize)>,
    ) -> Option<PyVal> {
        if def.has_complex_args || args.len() > def.args.len() {
            return None;
        }
        let mut env: Vec<(String, PyVal)> = Vec::new();
        for (i, p) in def.args.iter().enumerate() {
            let v = match args.get(i) {
                Some(a) => {
                    if matches!(a.kind, ExprKind::Starred(_)) {
                        return None;
                    }
                    self.eval(a)?
                }
                None => self.eval(p.default.as_ref()?)?,
            };
            env.push((p.name.to_string(), v));
        }
        let mut created: Vec<NestedFunc<'a>> = Vec::new();
        let result = self
            .factory_body(def, def.body, &mut env, &mut created, counts)
            .ok()??;
        for mut f in created {
            // Closures read the factory's variables as they are at its return.
            f.env = env.clone();
            self.nested.push(f);
        }
        Some(result)
    }

    fn factory_body(
        &self,
        factory: &'a FunctionDef<'a>,
        body: &'a [Stmt<'a>],
        env: &mut Vec<(String, PyVal)>,
        created: &mut Vec<NestedFunc<'a>>,
        counts: &mut Vec<(String, usize)>,
    ) -> Result<Option<PyVal>, ()> {
        for stmt in body {
            match &stmt.kind {
                StmtKind::Expr(Expr {
                    kind: ExprKind::Constant(_),
                    ..
                })
                | StmtKind::Pass => {}
                StmtKind::FunctionDef(inner) => {
                    if inner.decorators.len() != 1
                        || !inner.decorators.iter().all(|d| self.is_func_decorator(d))
                        || env.iter().any(|(n, _)| n == inner.name)
                    {
                        // Kernels, structs, overloads: not interpreted.
                        return Err(());
                    }
                    let key =
                        native_identifier(&format!("{}__locals__{}", factory.name, inner.name));
                    let n = match counts.iter_mut().find(|(k, _)| *k == key) {
                        Some(e) => {
                            e.1 += 1;
                            e.1
                        }
                        None => {
                            let base = warp_defined_function_count(&key);
                            counts.push((key.clone(), base));
                            base
                        }
                    };
                    let native = format!("{key}_{n}");
                    env.push((inner.name.to_string(), PyVal::Function(native.clone())));
                    created.push(NestedFunc {
                        def: inner,
                        pos: stmt.pos,
                        native,
                        key,
                        env: Vec::new(),
                    });
                }
                StmtKind::If(test, then, orelse) => {
                    let local = |n: &str| env.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
                    let branch = if self.eval_with(test, &local).ok_or(())?.truthy() {
                        then
                    } else {
                        orelse
                    };
                    if let Some(v) = self.factory_body(factory, branch, env, created, counts)? {
                        return Ok(Some(v));
                    }
                }
                StmtKind::Assign(targets, value) => {
                    let [
                        Expr {
                            kind: ExprKind::Name(n),
                            ..
                        },
                    ] = &targets[..]
                    else {
                        return Err(());
                    };
                    let local = |n: &str| env.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
                    let v = self.eval_with(value, &local).ok_or(())?;
                    env.retain(|(k, _)| k != n);
                    env.push((n.to_string(), v));
                }
                StmtKind::Return(Some(value)) => {
                    let local = |n: &str| env.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
                    return self.eval_with(value, &local).map(Some).ok_or(());
                }
                _ => return Err(()),
            }
        }
        Ok(None)
    }

    /// The closure variables of the factory-made `@wp.func` built as `native`.
    pub fn closure_env(&self, native: &str) -> &[(String, PyVal)] {
        if self.nested.is_empty() {
            return &[];
        }
        self.nested
            .iter()
            .find(|f| f.native == native)
            .map_or(&[], |f| &f.env[..])
    }

    /// `wp.get_module(M).options["key"]` as an assignment target: the module
    /// (`None` for the file's own) and the key, when it is a string.
    fn module_option_target(&self, target: &Expr<'a>) -> Option<(Option<String>, Option<String>)> {
        let ExprKind::Subscript([base, key]) = &target.kind else {
            return None;
        };
        let ExprKind::Attribute(obj, "options") = &base.kind else {
            return None;
        };
        let ExprKind::Call(func, args, _) = &obj.kind else {
            return None;
        };
        if !self.names_warp(func, "get_module") {
            return None;
        }
        let module = match args.first() {
            None => None,
            Some(a) => self.module_name(a),
        };
        let key = match self.eval(key) {
            Some(PyVal::Str(k)) => Some(k),
            _ => None,
        };
        Some((module, key))
    }

    /// `wp.config.NAME` as an assignment target: the NAME.
    fn config_field(&self, target: &Expr<'a>) -> Option<&'a str> {
        match &target.kind {
            ExprKind::Attribute(base, field) if self.names_warp(base, "config") => Some(field),
            _ => None,
        }
    }

    /// Binds an assignment target at module level.
    fn bind(&mut self, target: &Expr<'a>, v: Option<PyVal>) {
        match &target.kind {
            ExprKind::Name(n) => self.set_value(n, v),
            ExprKind::Tuple(items) | ExprKind::List(items) => {
                let parts = match v {
                    Some(PyVal::Tuple(vs)) if vs.len() == items.len() => {
                        vs.into_iter().map(Some).collect()
                    }
                    _ => vec![None; items.len()],
                };
                for (t, v) in items.iter().zip(parts) {
                    self.bind(t, v);
                }
            }
            _ => {}
        }
    }

    fn set_value(&mut self, name: &str, v: Option<PyVal>) {
        // A name bound again is no longer the class whose attributes were kept.
        if !name.contains('.') && self.values.iter().any(|(n, _)| n.contains('.')) {
            self.values.retain(|(n, _)| {
                n.strip_prefix(name)
                    .is_none_or(|rest| !rest.starts_with('.'))
            });
        }
        match self.values.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = v,
            None => self.values.push((name.to_string(), v)),
        }
    }

    fn value(&self, name: &str) -> Option<PyVal> {
        self.values
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.clone())
    }

    /// The warp module a `module=` argument names: `None` for the file's own
    /// module (`__name__`), else its name.
    fn module_name(&self, e: &Expr<'a>) -> Option<String> {
        match &e.kind {
            ExprKind::Name("__name__") => None,
            ExprKind::Name(n) => match self.value(n) {
                Some(PyVal::Str(s)) | Some(PyVal::WarpModule(s)) => Some(s),
                _ => Some(format!("<{n}>")),
            },
            _ => match self.eval(e) {
                Some(PyVal::Str(s)) | Some(PyVal::WarpModule(s)) => Some(s),
                _ => Some("<expression>".to_string()),
            },
        }
    }

    /// A dict argument: a literal, or a name bound to one.
    fn eval_dict(&self, e: &Expr<'a>) -> Option<Vec<(PyVal, PyVal)>> {
        match self.eval(e)? {
            PyVal::Dict(items) => Some(items),
            _ => None,
        }
    }

    /// The options of a `@wp.kernel(...)` decorator, and the module it names.
    fn kernel_decorator(
        &self,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
        config: &Config,
    ) -> (ModuleRef, LResult<KernelDecorator>) {
        let mut module = ModuleRef::Main;
        let mut out = KernelDecorator::default();
        let mut module_options = None;
        let mut launch_bounds = String::new();
        let mut cluster = String::new();
        let result = (|| {
            if let Some(a) = args.first() {
                return Err(err_at(a.pos, "unexpected positional argument to wp.kernel"));
            }
            for kw in kwargs.iter() {
                let value = &kw.value;
                let v = self.eval(value);
                let bad = |what: &str| {
                    Err(err_at(
                        value.pos,
                        format!("unsupported wp.kernel option value for {what}"),
                    ))
                };
                match (kw.arg, v) {
                    (Some("enable_backward"), Some(PyVal::None)) => {}
                    (Some("enable_backward"), Some(v)) => out.enable_backward = Some(v.truthy()),
                    (Some("grid_stride"), Some(PyVal::None)) => {}
                    (Some("grid_stride"), Some(v)) => out.grid_stride = Some(v.truthy()),
                    (Some("module"), Some(PyVal::None)) => {}
                    (Some("module"), Some(PyVal::Str(s))) if s == "unique" => {
                        module = ModuleRef::Unique(ModOptions::new(config))
                    }
                    (Some("module"), _) => {
                        module = match self.module_name(value) {
                            None => ModuleRef::Main,
                            Some(n) => ModuleRef::Named(n),
                        }
                    }
                    (Some("module_options"), Some(PyVal::None)) => {}
                    (Some("module_options"), Some(PyVal::Dict(items))) => {
                        module_options = Some((items, value.pos))
                    }
                    (Some("module_options"), _) => return bad("module_options"),
                    (Some("launch_bounds"), Some(PyVal::None)) => {}
                    (Some("launch_bounds"), Some(PyVal::Int(n))) => {
                        launch_bounds = format!("__launch_bounds__({n}) ")
                    }
                    (Some("launch_bounds"), Some(PyVal::Tuple(t))) => {
                        launch_bounds = match &t[..] {
                            [PyVal::Int(a)] => format!("__launch_bounds__({a}) "),
                            [PyVal::Int(a), PyVal::Int(b)] => {
                                format!("__launch_bounds__({a}, {b}) ")
                            }
                            _ => return bad("launch_bounds"),
                        }
                    }
                    (Some("cuda_max_registers"), Some(PyVal::None)) => {}
                    (Some("cuda_max_registers"), Some(PyVal::Int(n))) if n > 0 => {
                        out.cuda_regs = format!("WP_MAXNREG({n}) ")
                    }
                    (Some("cluster_dim"), Some(PyVal::None)) => {}
                    (Some("cluster_dim"), Some(PyVal::Int(n))) if (1..=16).contains(&n) => {
                        if n != 1 {
                            cluster = format!("WP_CLUSTER_DIMS({n}, 1, 1) ");
                        }
                    }
                    (Some("entry_point_abi"), Some(PyVal::None)) => {}
                    (Some("entry_point_abi"), Some(PyVal::Str(s))) if s == "warp" => {}
                    (Some("enable_cuda_smem_spilling"), Some(PyVal::Bool(b))) => {
                        out.smem_spilling = b
                    }
                    (Some("enable_cuda_smem_spilling"), Some(PyVal::None)) => {}
                    (Some("name"), Some(PyVal::None)) => {}
                    (Some("name"), Some(PyVal::Str(n)))
                        if !n.is_empty()
                            && !n.starts_with(|c: char| c.is_ascii_digit())
                            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                    {
                        out.name = Some(n)
                    }
                    (Some("name"), _) => return bad("name"),
                    (Some(k), _) => {
                        return Err(err_at(
                            value.pos,
                            format!(
                                "unsupported wp.kernel option '{k}' (or value) in this version of the lowering"
                            ),
                        ));
                    }
                    (None, _) => return Err(err_at(value.pos, "unsupported wp.kernel option")),
                }
            }
            Ok(())
        })();
        if let Some((items, pos)) = module_options {
            match &mut module {
                ModuleRef::Unique(o) => {
                    if let Err(e) = o.apply(&items, true) {
                        return (module, Err(err_at(pos, e)));
                    }
                }
                _ => {
                    return (
                        module,
                        Err(err_at(pos, "module_options requires module=\"unique\"")),
                    );
                }
            }
        }
        out.cuda_attrs = launch_bounds + &cluster;
        (module, result.map(|_| out))
    }

    /// The Python value of a module-level expression, when it can be computed statically.
    pub fn eval(&self, e: &Expr<'a>) -> Option<PyVal> {
        self.eval_with(e, &|_| None)
    }

    /// [`Scope::eval`], with `local` giving values for names it knows first.
    pub fn eval_with(&self, e: &Expr<'a>, local: &dyn Fn(&str) -> Option<PyVal>) -> Option<PyVal> {
        let ev = |x: &Expr<'a>| self.eval_with(x, local);
        match &e.kind {
            ExprKind::Constant(c) => match c {
                Constant::Int(v) => Some(PyVal::Int(*v)),
                Constant::Float(v) => Some(PyVal::Float(*v)),
                Constant::Bool(b) => Some(PyVal::Bool(*b)),
                Constant::Str(s) => Some(PyVal::Str(s.to_string())),
                Constant::None => Some(PyVal::None),
                _ => None,
            },
            ExprKind::Name(n) => {
                if let Some(v) = local(n) {
                    return Some(v);
                }
                if let Some(v) = self.values.iter().find(|(k, _)| k == n) {
                    return v.1.clone();
                }

                if let Some((_, m)) = self.py_imports.iter().find(|(l, _)| l == n) {
                    return pyconst::math_constant(m);
                }
                match *n {
                    "True" => Some(PyVal::Bool(true)),
                    "False" => Some(PyVal::Bool(false)),
                    _ => self.imported_builtin(n).and_then(|w| self.warp_constant(w)),
                }
            }
            ExprKind::Attribute(base, attr) => {
                if let ExprKind::Attribute(inner, "DeterministicMode") = &base.kind {
                    if matches!(&inner.kind, ExprKind::Name(m) if self.is_warp_module(m)) {
                        return Some(PyVal::Str(format!("DeterministicMode.{attr}")));
                    }
                }
                // `Task.LIFT.value`: an enum member's value.
                if let ExprKind::Attribute(class, member) = &base.kind {
                    if let ExprKind::Name(m) = &class.kind {
                        return self.class_attribute(m, &format!("{member}.{attr}"));
                    }
                }
                if let ExprKind::Name(m) = &base.kind {
                    if let Some(v) = self.class_attribute(m, attr) {
                        return Some(v);
                    }
                    if self.is_warp_module(m) && !self.values.iter().any(|(k, _)| k == m) {
                        return self
                            .warp_constant(attr)
                            .or_else(|| self.warp_function_value(attr));
                    }
                    if self.py_modules.iter().any(|(l, _)| l == m) {
                        return pyconst::math_constant(attr);
                    }
                }
                None
            }
            ExprKind::BinOp(lr, op) => pyconst::binop(*op, &ev(&lr[0])?, &ev(&lr[1])?),
            ExprKind::UnaryOp(op, x) => pyconst::unaryop(*op, &ev(x)?),
            ExprKind::BoolOp(is_and, values) => {
                let mut last = None;
                for v in values.iter() {
                    let x = ev(v)?;
                    let t = x.truthy();
                    last = Some(x);
                    if t != *is_and {
                        break;
                    }
                }
                last
            }
            ExprKind::Compare(left, comps) => {
                let mut l = ev(left)?;
                for (op, r) in comps.iter() {
                    let r = ev(r)?;
                    if !pyconst::compare(*op, &l, &r)? {
                        return Some(PyVal::Bool(false));
                    }
                    l = r;
                }
                Some(PyVal::Bool(true))
            }
            ExprKind::IfExp(test, body, orelse) => {
                if ev(test)?.truthy() {
                    ev(body)
                } else {
                    ev(orelse)
                }
            }
            ExprKind::Tuple(items) | ExprKind::List(items) => items
                .iter()
                .map(ev)
                .collect::<Option<Vec<_>>>()
                .map(PyVal::Tuple),
            ExprKind::Subscript([base, index])
                if matches!(&base.kind, ExprKind::Attribute(m, "builtin_functions")
                    if matches!(&m.kind, ExprKind::Name(m)
                        if self.py_modules.iter().any(|(l, k)| l == m && *k == "warp._src.context"))) =>
            {
                match ev(index)? {
                    PyVal::Str(k) => self.warp_function_value(&k),
                    _ => None,
                }
            }
            ExprKind::Subscript([base, index]) => match (ev(base)?, ev(index)?) {
                (PyVal::Tuple(items), PyVal::Int(i)) => {
                    let n = items.len() as i128;
                    let i = if i < 0 { i + n } else { i };
                    items.get(usize::try_from(i).ok()?).cloned()
                }
                (PyVal::Dict(items), k) => items.into_iter().find(|(x, _)| *x == k).map(|(_, v)| v),
                _ => None,
            },
            ExprKind::Other("Dict") => {
                // Names in a dict literal: only those bound to functions.
                let functions = |n: &str| match self.value(n) {
                    Some(f @ PyVal::Function(_)) => Some(f),
                    _ => None,
                };
                pyconst::dict_literal(&self.lines, e.pos, &functions).map(PyVal::Dict)
            }
            ExprKind::Call(func, args, kwargs) => {
                if !kwargs.is_empty() {
                    return None;
                }
                let vals = args.iter().map(ev).collect::<Option<Vec<_>>>();
                let name: &str = match &func.kind {
                    ExprKind::Attribute(base, attr) => match &base.kind {
                        ExprKind::Name(m) if self.is_warp_module(m) => {
                            let vals = vals?;
                            return match (*attr, &vals[..]) {
                                ("constant", [v]) => Some(v.clone()),
                                ("Module" | "get_module", [PyVal::Str(s), ..]) => {
                                    Some(PyVal::WarpModule(s.clone()))
                                }
                                (a, [v]) if Scalar::from_name(a).is_some() => {
                                    pyconst::warp_scalar(Scalar::from_name(a)?, v)
                                }
                                (a, vs) => pyconst::warp_composite(composite_type(a)?, vs),
                            };
                        }
                        ExprKind::Name(m) if self.py_modules.iter().any(|(l, _)| l == m) => {
                            return pyconst::math_call(attr, &vals?);
                        }
                        _ => return None,
                    },
                    ExprKind::Name(n) => n,
                    _ => return None,
                };
                let vals = vals?;
                if self.imported_builtin(name) == Some("constant") {
                    return vals.into_iter().next();
                }
                // A call of a module-level type alias (`vec3bool([True, False, True])`).
                if let Some(t) = self.type_name(name) {
                    return match (t, &vals[..]) {
                        (Value::Scalar(s), [v]) => pyconst::warp_scalar(s, v),
                        (t, vs) => pyconst::warp_composite(t, vs),
                    };
                }
                if let Some((_, m)) = self.py_imports.iter().find(|(l, _)| l == name) {
                    return pyconst::math_call(m, &vals);
                }
                if self.values.iter().any(|(k, _)| k == name) {
                    return None;
                }
                let num = |v: &PyVal| match *v {
                    PyVal::Int(i) => Some(i as f64),
                    PyVal::Bool(b) => Some(b as i32 as f64),
                    PyVal::Float(f) => Some(f),
                    _ => None,
                };
                match (name, &vals[..]) {
                    ("int", [PyVal::Float(f)]) if f.is_finite() => {
                        Some(PyVal::Int(f.trunc() as i128))
                    }
                    ("int", [PyVal::Int(i)]) => Some(PyVal::Int(*i)),
                    ("int", [PyVal::Bool(b)]) => Some(PyVal::Int(*b as i128)),
                    ("float", [v]) => num(v).map(PyVal::Float),
                    ("bool", [v]) => Some(PyVal::Bool(v.truthy())),
                    ("abs", [PyVal::Int(i)]) => Some(PyVal::Int(i.abs())),
                    ("abs", [PyVal::Float(f)]) => Some(PyVal::Float(f.abs())),
                    ("round", [PyVal::Float(f)]) => pyconst::py_round(*f).map(PyVal::Int),
                    ("round", [PyVal::Int(i)]) => Some(PyVal::Int(*i)),
                    ("min" | "max", vs) if vs.len() >= 2 => {
                        let mut best = vs[0].clone();
                        for v in &vs[1..] {
                            let less = pyconst::compare(CmpOp::Lt, v, &best)?;
                            let greater = pyconst::compare(CmpOp::Gt, v, &best)?;
                            if (name == "min" && less) || (name == "max" && greater) {
                                best = v.clone();
                            }
                        }
                        Some(best)
                    }
                    ("len", [PyVal::Tuple(t)]) => Some(PyVal::Int(t.len() as i128)),
                    ("len", [PyVal::Typed(t, ConstVal::Composite(_))]) => {
                        Some(PyVal::Int(match t {
                            Value::Vector(n, _) | Value::Matrix(n, _, _) => *n as i128,
                            Value::Quat(_) => 4,
                            Value::Transform(_) => 7,
                            _ => return None,
                        }))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `wp.pi`, `math.pi`, `np.e`: a constant attribute of the warp, math or numpy module.
    pub fn module_attribute_constant(&self, module: &str, attr: &str) -> Option<ConstVal> {
        if let Some(v) = self.class_attribute(module, attr) {
            return v.const_val();
        }
        if self.values.iter().any(|(k, _)| k == module) {
            return None;
        }
        if self.is_warp_module(module) {
            return self.warp_constant(attr)?.const_val();
        }
        if self.py_modules.iter().any(|(l, _)| l == module) {
            return pyconst::math_constant(attr)?.const_val();
        }
        None
    }

    /// Whether `name` is bound to a plain module-level class.
    pub fn is_plain_class(&self, name: &str) -> bool {
        self.values
            .iter()
            .any(|(k, _)| k.strip_suffix('.') == Some(name))
    }

    /// The value of attribute `attr` of the plain module-level class `class`.
    fn class_attribute(&self, class: &str, attr: &str) -> Option<PyVal> {
        if !self.is_plain_class(class) {
            return None;
        }
        self.value(&format!("{class}.{attr}"))
    }

    /// A constant of the warp module (`wp.pi`, ...).
    fn warp_constant(&self, name: &str) -> Option<PyVal> {
        super::builtins::warp_constant(name).map(PyVal::Float)
    }

    /// The overload of `@wp.func` `name` that takes arguments of `types`:
    /// definitions with the same parameter names and types replace one another
    /// (keeping the first one's place, like warp's overload dict); the first
    /// whose annotated types match wins, else the last definition (whose
    /// mismatch the caller reports).
    pub fn user_overload(
        &self,
        name: &str,
        types: &[Type],
    ) -> Option<(&'a FunctionDef<'a>, Pos, &str)> {
        let mut candidates = self.functions.iter().filter(|(d, _, _)| d.name == name);
        let first = candidates.next()?;
        let Some(second) = candidates.next() else {
            return Some((first.0, first.1, first.2.as_str()));
        };
        let signature = |d: &FunctionDef<'a>| -> Option<Vec<(&'a str, Type)>> {
            d.args
                .iter()
                .map(|a| Some((a.name, self.annotation_type(a.annotation.as_ref()?).ok()?)))
                .collect()
        };
        let mut set: Vec<(
            Option<Vec<(&'a str, Type)>>,
            &(&'a FunctionDef<'a>, Pos, String),
        )> = Vec::new();
        for f in [first, second].into_iter().chain(candidates) {
            let sig = signature(f.0);
            match set.iter_mut().find(|(s, _)| sig.is_some() && *s == sig) {
                Some(entry) => entry.1 = f,
                None => set.push((sig, f)),
            }
        }
        let matching = set.iter().find(|(sig, _)| {
            sig.as_ref().is_some_and(|s| {
                s.len() == types.len() && s.iter().zip(types).all(|((_, a), b)| a.strip_ref() == *b)
            })
        });
        // As warp: the overloads of concrete types first, then the generic
        // ones in definition order (one of the same templates replacing the
        // other in its place), the first whose templates the types fit.
        let generic = || {
            let mut templates: Vec<(Option<Vec<Template>>, &(&'a FunctionDef<'a>, Pos, String))> =
                Vec::new();
            for (_, f) in set.iter().filter(|(sig, _)| sig.is_none()) {
                let t = self.templates(f.0);
                match templates.iter_mut().find(|(u, _)| t.is_some() && *u == t) {
                    Some(entry) => entry.1 = f,
                    None => templates.push((t, f)),
                }
            }
            templates
                .into_iter()
                .find(|(_, f)| self.generic_fits(f.0, types))
                .map(|(_, f)| f)
        };
        let f = matching
            .map(|(_, f)| *f)
            .or_else(generic)
            .or(set.last().map(|(_, f)| *f))?;
        Some((f.0, f.1, f.2.as_str()))
    }

    /// A generic function's parameters as templates (None if one has no
    /// annotation this version reads).
    fn templates(&self, def: &FunctionDef) -> Option<Vec<Template>> {
        def.args
            .iter()
            .map(|a| {
                let e = a.annotation.as_ref()?;
                self.generic_template(e)
                    .or_else(|| self.annotation_type(e).ok().map(Template::Type))
            })
            .collect()
    }

    /// The template of a generic parameter's annotation: `Any`, or an array
    /// of `Any`; None for any other annotation.
    pub(super) fn generic_template(&self, e: &Expr) -> Option<Template> {
        if self.is_any_annotation(e) {
            return Some(Template::Any);
        }
        if let Some(Ok(TileAnnotation::Shapeless(dtype))) = self.tile_annotation(e) {
            return Some(Template::Tile(dtype));
        }
        if let Some(t) = self.generic_scalar_template(e) {
            return Some(t);
        }
        // `tuple[int, ...]`
        if let ExprKind::Subscript([base, index]) = &e.kind {
            if matches!(base.kind, ExprKind::Name("tuple")) && !self.is_module_name("tuple") {
                if let ExprKind::Tuple([_, last]) = &index.kind {
                    if matches!(last.kind, ExprKind::Constant(Constant::Ellipsis)) {
                        return Some(Template::Tuple);
                    }
                }
            }
        }
        self.generic_array(e)
            .map(|(kind, ndim)| Template::Array(kind, ndim))
    }

    /// `wp.Float` (`wp.Int`, `wp.Scalar`), or a vector or matrix of them
    /// (`wp.types.vector(3, wp.Float)`, `wp.types.matrix((2, 2), wp.Int)`).
    fn generic_scalar_template(&self, e: &Expr) -> Option<Template> {
        let class = |e: &Expr| self.warp_attr(e).and_then(ScalarClass::from_name);
        if let Some(c) = class(e) {
            return Some(Template::Scalar(c));
        }
        let ExprKind::Call(func, args, kwargs) = &e.kind else {
            return None;
        };
        match self.composite_call(func, args, kwargs)? {
            ("vector", _, n, dtype) => Some(Template::Composite(0, n, class(dtype?)?)),
            ("matrix", r, c, dtype) => Some(Template::Composite(r, c, class(dtype?)?)),
            _ => None,
        }
    }

    /// Whether a generic `@wp.func` takes arguments of `types`.
    fn generic_fits(&self, def: &FunctionDef, types: &[Type]) -> bool {
        self.templates(def).is_some_and(|ts| {
            ts.len() == types.len() && ts.iter().zip(types).all(|(p, t)| p.fits(t))
        })
    }

    /// The overloads of `@wp.func` `name`, in the order [`Scope::user_overload`]
    /// tries them (definitions of the same signature replace one another).
    pub fn overload_set(&self, name: &str) -> Vec<(&'a FunctionDef<'a>, Pos, &str)> {
        let signature = |d: &FunctionDef<'a>| -> Option<Vec<(&'a str, Type)>> {
            d.args
                .iter()
                .map(|a| Some((a.name, self.annotation_type(a.annotation.as_ref()?).ok()?)))
                .collect()
        };
        let mut set: Vec<(
            Option<Vec<(&'a str, Type)>>,
            &(&'a FunctionDef<'a>, Pos, String),
        )> = Vec::new();
        for f in self.functions.iter().filter(|(d, _, _)| d.name == name) {
            let sig = signature(f.0);
            match set.iter_mut().find(|(s, _)| sig.is_some() && *s == sig) {
                Some(entry) => entry.1 = f,
                None => set.push((sig, f)),
            }
        }
        set.into_iter()
            .map(|(_, f)| (f.0, f.1, f.2.as_str()))
            .collect()
    }

    /// Whether a definition of `@wp.func` `name` (or `=NATIVE`) has parameter defaults.
    pub fn function_has_defaults(&self, name: &str) -> bool {
        match name.strip_prefix('=') {
            Some(native) => self
                .functions
                .iter()
                .any(|(d, _, n)| n == native && d.has_defaults),
            None => self
                .functions
                .iter()
                .any(|(d, _, _)| d.name == name && d.has_defaults),
        }
    }

    /// `Any` (or `typing.Any`, `wp.Any`): a generic parameter, whose type each
    /// call of the function gives.
    pub fn is_any_annotation(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name("Any") => true,
            ExprKind::Attribute(b, "Any") => {
                matches!(&b.kind, ExprKind::Name("typing")) || self.names_warp(e, "Any")
            }
            _ => false,
        }
    }

    /// Whether `def` is a generic `@wp.func`: a parameter annotated `Any`.
    pub fn is_generic_function(&self, def: &FunctionDef) -> bool {
        def.args.iter().any(|a| {
            a.annotation
                .as_ref()
                .and_then(|e| self.generic_template(e))
                .is_some_and(|t| t.per_signature())
        })
    }

    /// The types a call of user function `def` builds it with: a generic
    /// function's are each call's (one instance per signature); a function
    /// with a shapeless tile parameter (`wp.tile[float]`) takes the first
    /// call's, and warp builds it once; any other, its annotations (empty).
    pub fn build_types<'t>(&self, def: &FunctionDef, types: &'t [Type]) -> &'t [Type] {
        let mut shapeless = false;
        for a in def.args {
            match a.annotation.as_ref().and_then(|e| self.generic_template(e)) {
                Some(t) if t.per_signature() => return types,
                Some(Template::Tile(_)) => shapeless = true,
                _ => {}
            }
        }
        if shapeless { types } else { &[] }
    }

    /// A parameter annotation that makes it a function parameter (`wp.Function`, `Callable`).
    pub fn is_function_annotation(&self, e: &Expr) -> bool {
        self.names_warp(e, "Function")
            || matches!(&e.kind, ExprKind::Name("Callable"))
            || matches!(&e.kind, ExprKind::Attribute(b, "Callable")
                if matches!(&b.kind, ExprKind::Name("typing")))
    }

    /// warp's key and C++ name of a function value (`wp.sin`: a builtin; else
    /// the C++ name of a module-level `@wp.func`).
    pub fn function_identity<'s>(&'s self, f: &'s str) -> (&'s str, &'s str) {
        if let Some(b) = f.strip_prefix("wp.") {
            return (b, b);
        }
        if let Some(n) = self.nested.iter().find(|n| n.native == f) {
            return (&n.key, &n.native);
        }
        match self.function_by_native(f) {
            Some((d, _, n)) => (d.name, n),
            None => (f, f),
        }
    }

    /// `wp.NAME` as a value: the builtin function NAME, written `wp.NAME`.
    fn warp_function_value(&self, attr: &str) -> Option<PyVal> {
        (super::builtins::is_known(attr)
            && composite_type(attr).is_none()
            && Scalar::from_name(attr).is_none())
        .then(|| PyVal::Function(format!("wp.{attr}")))
    }

    /// The module-level `@wp.func` called `name` (the last definition wins, as in Python).
    pub fn user_function(&self, name: &str) -> Option<(&'a FunctionDef<'a>, Pos, &str)> {
        self.functions
            .iter()
            .rev()
            .find(|(d, _, _)| d.name == name)
            .map(|(d, p, n)| (*d, *p, n.as_str()))
    }

    /// The `@wp.func_replay` of the function built as `native` (only when the
    /// function's name has a single definition: overloads are matched by warp
    /// on their signature, which this version does not do).
    pub fn replay_function(
        &self,
        def: &FunctionDef,
        _native: &str,
    ) -> Option<&(String, &'a FunctionDef<'a>, Pos, String)> {
        let single = self
            .functions
            .iter()
            .filter(|(d, _, _)| d.name == def.name)
            .count()
            == 1;
        if !single {
            return None;
        }
        self.replays.iter().rev().find(|(t, _, _, _)| t == def.name)
    }

    /// The `@wp.func_grad` of `def`: the last one for its name whose leading
    /// parameters have `def`'s types.
    pub fn custom_grad_of(&self, def: &FunctionDef) -> Option<(&'a FunctionDef<'a>, Pos)> {
        let types = |d: &FunctionDef, n: usize| -> Option<Vec<Type>> {
            d.args
                .get(..n)?
                .iter()
                .map(|a| self.annotation_type(a.annotation.as_ref()?).ok())
                .collect()
        };
        let n = def.args.len();
        let want = types(def, n)?;
        self.grads
            .iter()
            .rev()
            .filter(|(t, _, _)| t == def.name)
            .find(|(_, g, _)| types(g, n).as_ref() == Some(&want))
            .map(|(_, g, p)| (*g, *p))
    }

    /// The `@wp.func_grad` of the function built as `native`.
    pub fn custom_grad_of_native(&self, native: &str) -> Option<(&'a FunctionDef<'a>, Pos)> {
        let (def, _, _) = self.functions.iter().find(|(_, _, n)| n == native)?;
        self.custom_grad_of(def)
    }

    /// The replay definition whose C++ name is `native`.
    fn replay_of(&self, forward_native: &str) -> Option<(&'a FunctionDef<'a>, Pos, String)> {
        let (def, _, _) = self
            .functions
            .iter()
            .find(|(_, _, n)| n == forward_native)?;
        self.replay_function(def, forward_native)
            .map(|(_, d, p, n)| (*d, *p, n.clone()))
    }

    /// `@wp.func`, `@wp.func(...)` or `@wp.func_native(...)`.
    fn is_func_decorator(&self, d: &Expr) -> bool {
        match &d.kind {
            ExprKind::Call(f, args, _) => {
                (args.is_empty() && self.names_warp(f, "func")) || self.names_warp(f, "func_native")
            }
            _ => self.names_warp(d, "func"),
        }
    }

    /// The snippets of a `@wp.func_native(snippet, adj_snippet=..., replay_snippet=...)`
    /// function; `None` for other functions.
    pub fn native_snippets(&self, def: &FunctionDef) -> Option<LResult<NativeSnippets>> {
        let (args, kwargs, pos) = def.decorators.iter().find_map(|d| match &d.kind {
            ExprKind::Call(f, args, kwargs) if self.names_warp(f, "func_native") => {
                Some((args, kwargs, d.pos))
            }
            _ => None,
        })?;
        let mut values: [Option<&Expr>; 3] = [None, None, None];
        for (i, a) in args.iter().enumerate() {
            match values.get_mut(i) {
                Some(v) => *v = Some(a),
                None => {
                    return Some(Err(err_at(
                        a.pos,
                        "func_native() takes at most 3 arguments",
                    )));
                }
            }
        }
        for kw in kwargs.iter() {
            let i = match kw.arg {
                Some("snippet") => 0,
                Some("adj_snippet") => 1,
                Some("replay_snippet") => 2,
                _ => {
                    return Some(Err(err_at(
                        kw.value.pos,
                        "unexpected func_native() argument",
                    )));
                }
            };
            values[i] = Some(&kw.value);
        }
        let text = |e: Option<&Expr>| -> LResult<Option<String>> {
            match e {
                None => Ok(None),
                Some(e) => match self.eval(e) {
                    Some(PyVal::Str(s)) => Ok(Some(s)),
                    Some(PyVal::None) => Ok(None),
                    _ => Err(err_at(
                        e.pos,
                        "this native snippet cannot be evaluated statically by this version of the lowering",
                    )),
                },
            }
        };
        let forward = match text(values[0]) {
            Ok(Some(s)) => s,
            Ok(None) => return Some(Err(err_at(pos, "func_native() needs a snippet"))),
            Err(e) => return Some(Err(e)),
        };
        let adjoint = match text(values[1]) {
            Ok(s) => s,
            Err(e) => return Some(Err(e)),
        };
        let replay = match text(values[2]) {
            Ok(s) => s,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(NativeSnippets {
            forward,
            adjoint,
            replay,
            single_decorator: def.decorators.len() == 1,
        }))
    }

    /// The attribute `@wp.func(inline=...)` puts before a function's C++ definitions.
    pub fn inline_attr(&self, def: &FunctionDef) -> &'static str {
        for d in def.decorators {
            if let ExprKind::Call(f, _, kwargs) = &d.kind {
                if self.names_warp(f, "func") {
                    for k in kwargs.iter() {
                        if k.arg == Some("inline") {
                            return match self.eval(&k.value) {
                                Some(PyVal::Bool(true)) => "WP_FORCEINLINE ",
                                Some(PyVal::Bool(false)) => "WP_NOINLINE ",
                                _ => "",
                            };
                        }
                    }
                }
            }
        }
        ""
    }

    /// The `@wp.func` definition whose C++ name is `native`.
    pub fn function_by_native(&self, native: &str) -> Option<(&'a FunctionDef<'a>, Pos, &str)> {
        self.functions
            .iter()
            .find(|(_, _, n)| n == native)
            .map(|(d, p, n)| (*d, *p, n.as_str()))
            .or_else(|| {
                self.nested
                    .iter()
                    .find(|f| f.native == native)
                    .map(|f| (f.def, f.pos, f.native.as_str()))
            })
    }

    /// The `@wp.func` a module-level name is bound to (`TARGET = some_func`).
    pub fn module_function_alias(&self, name: &str) -> Option<String> {
        match self.values.iter().find(|(n, _)| n == name)? {
            (_, Some(PyVal::Function(f))) => Some(f.clone()),
            _ => None,
        }
    }

    /// A module-level constant referenced by name inside a kernel, with the
    /// type of the variable it becomes: a Python int, float or bool, or a warp
    /// scalar, vector, matrix, quaternion or transform value.
    pub fn module_typed_constant(&self, name: &str) -> Option<(Type, ConstVal)> {
        self.values
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_ref()?.typed_const())
    }

    /// A module-level int, float or bool referenced by name inside a kernel.
    pub fn module_constant(&self, name: &str) -> Option<ConstVal> {
        self.values
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_ref()?.const_val())
    }

    /// Why a module-level name cannot be used as a constant in a kernel, when it is one.
    pub fn module_value_problem(&self, name: &str) -> Option<String> {
        let (_, v) = self.values.iter().find(|(n, _)| n == name)?;
        Some(match v {
            None => format!(
                "the module-level value of '{name}' cannot be computed statically by this version of the lowering"
            ),
            Some(v) => format!("'{name}' ({v:?}) is not a constant value a kernel can use"),
        })
    }

    /// The C++ template spelling and element type of a `dtype=` argument:
    /// a Python builtin type keeps its name (`float`), a warp type is `wp::float32`.
    pub fn dtype_arg(&self, expr: &Expr) -> Option<(String, Scalar)> {
        let s = self.scalar_type(expr)?;
        match &expr.kind {
            ExprKind::Name(n) if matches!(*n, "float" | "int" | "bool") => Some((n.to_string(), s)),
            _ => Some((format!("wp::{}", s.name()), s)),
        }
    }

    pub fn is_warp_module(&self, name: &str) -> bool {
        self.warp_aliases.iter().any(|a| a == name)
    }

    /// The warp name behind a local name imported with `from warp import ...`.
    pub fn imported_builtin(&self, name: &str) -> Option<&str> {
        self.warp_imports
            .iter()
            .find(|(local, _)| local == name)
            .map(|(_, w)| w.as_str())
    }

    /// `expr` names warp attribute `attr` (`wp.kernel`, or `kernel` imported from warp).
    pub(super) fn names_warp(&self, expr: &Expr, attr: &str) -> bool {
        match &expr.kind {
            ExprKind::Attribute(base, a) => {
                *a == attr && matches!(&base.kind, ExprKind::Name(m) if self.is_warp_module(m))
            }
            ExprKind::Name(n) => self.imported_builtin(n) == Some(attr),
            _ => false,
        }
    }

    /// The module-level struct or type alias called `name`.
    /// Whether the module binds `name` itself (a value, function, import or type),
    /// which a kernel then sees before warp's own attributes.
    pub fn is_module_name(&self, name: &str) -> bool {
        self.values.iter().any(|(n, _)| n == name)
            || self.functions.iter().any(|(d, _, _)| d.name == name)
            || self.warp_aliases.iter().any(|n| n == name)
            || self.warp_imports.iter().any(|(n, _)| n == name)
            || self.py_modules.iter().any(|(n, _)| n == name)
            || self.py_imports.iter().any(|(n, _)| n == name)
            || self.type_names.iter().any(|(n, _)| n == name)
    }

    pub fn type_name(&self, name: &str) -> Option<Value> {
        self.type_names
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    /// `wp.X` or `wp.types.X` (or `X` imported from warp): the `X`.
    fn warp_attr<'e>(&self, expr: &'e Expr) -> Option<&'e str> {
        match &expr.kind {
            ExprKind::Attribute(base, a) => match &base.kind {
                ExprKind::Name(m) if self.is_warp_module(m) => Some(a),
                ExprKind::Attribute(inner, t) if *t == "types" => {
                    matches!(&inner.kind, ExprKind::Name(m) if self.is_warp_module(m)).then_some(*a)
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The scalar, vector, matrix, quaternion, transform or struct type an expression names.
    pub fn value_type(&self, expr: &Expr) -> Option<Value> {
        if let ExprKind::Name(n) = &expr.kind {
            if let Some(v) = self.type_name(n) {
                return Some(v);
            }
        }
        if let Some(s) = self.scalar_type(expr) {
            return Some(Value::Scalar(s));
        }
        if let ExprKind::Call(func, args, kwargs) = &expr.kind {
            return self.type_constructor_call(func, args, kwargs);
        }
        if let ExprKind::Subscript([base, index]) = &expr.kind {
            return self.type_hint(base, index);
        }
        let name = match &expr.kind {
            ExprKind::Name(n) => self.imported_builtin(n)?,
            _ => self.warp_attr(expr)?,
        };
        // `wp.Texture2D`: warp's C++ texture descriptor, passed by value.
        composite_type(name).or(match Query::from_name(name) {
            Some(Query::Texture(n)) => Some(Value::Texture(n)),
            _ => None,
        })
    }

    /// warp's subscript type hints: `Vector[dtype, Literal[N]]`,
    /// `Matrix[dtype, Literal[R], Literal[C]]`, `Quaternion[dtype]`,
    /// `Transformation[dtype]` (from `warp._src.types`).
    fn type_hint(&self, base: &Expr, index: &Expr) -> Option<Value> {
        let name = match &base.kind {
            ExprKind::Name(n) => self.imported_builtin(n)?,
            _ => self.warp_attr(base)?,
        };
        let items = match &index.kind {
            ExprKind::Tuple(items) => &items[..],
            _ => std::slice::from_ref(index),
        };
        let dim = |e: &Expr| {
            self.literal_int(e)
                .filter(|n| (1..=255).contains(n))
                .map(|n| n as u8)
        };
        match (name, items) {
            ("Vector", [dtype, n]) => Some(Value::Vector(dim(n)?, self.scalar_type(dtype)?)),
            ("Matrix", [dtype, r, c]) => {
                Some(Value::Matrix(dim(r)?, dim(c)?, self.scalar_type(dtype)?))
            }
            ("Quaternion", [dtype]) => Some(Value::Quat(self.scalar_type(dtype)?)),
            ("Transformation", [dtype]) => Some(Value::Transform(self.scalar_type(dtype)?)),
            _ => None,
        }
    }

    /// An integer a type hint gives: `8`, `Literal[8]`, or a module constant.
    fn literal_int(&self, e: &Expr) -> Option<i128> {
        let e = match &e.kind {
            ExprKind::Subscript([b, inner])
                if matches!(&b.kind, ExprKind::Name("Literal"))
                    || matches!(&b.kind, ExprKind::Attribute(_, "Literal")) =>
            {
                inner
            }
            _ => e,
        };
        match self.eval(e)? {
            PyVal::Int(n) | PyVal::Typed(_, ConstVal::Int(n)) => Some(n),
            _ => None,
        }
    }

    /// `wp.types.vector(length=N, dtype=T)`, `wp.types.matrix(shape=(R, C), dtype=T)`,
    /// `wp.types.quaternion(dtype=T)`, `wp.types.transformation(dtype=T)`.
    fn type_constructor_call(
        &self,
        func: &Expr,
        args: &[Expr],
        kwargs: &[Keyword],
    ) -> Option<Value> {
        let (name, rows, cols, dtype) = self.composite_call(func, args, kwargs)?;
        let dtype = match dtype {
            Some(e) => self.scalar_type(e)?,
            None => Scalar::Float32,
        };
        Some(match name {
            "vector" => Value::Vector(cols, dtype),
            "matrix" => Value::Matrix(rows, cols, dtype),
            "quaternion" => Value::Quat(dtype),
            _ => Value::Transform(dtype),
        })
    }

    /// A call of warp's `vector`, `matrix`, `quaternion` or `transformation`
    /// type factory, its arguments bound by position or keyword: the factory's
    /// name, the rows and columns (a vector's length as columns, rows 0; a
    /// `vector(0, ...)` is the empty vector a slice can make) and the `dtype`
    /// expression, if given.
    fn composite_call<'e>(
        &self,
        func: &Expr,
        args: &'e [Expr<'e>],
        kwargs: &'e [Keyword<'e>],
    ) -> Option<(&'static str, u8, u8, Option<&'e Expr<'e>>)> {
        let factory = match &func.kind {
            ExprKind::Name(n) => self.imported_builtin(n)?,
            _ => self.warp_attr(func)?,
        };
        let (name, params): (&'static str, &[&str]) = match factory {
            "vector" => ("vector", &["length", "dtype"]),
            "matrix" => ("matrix", &["shape", "dtype"]),
            "quaternion" => ("quaternion", &["dtype"]),
            "transformation" => ("transformation", &["dtype"]),
            _ => return None,
        };
        let mut bound: [Option<&Expr>; 2] = [None, None];
        for (i, a) in args.iter().enumerate() {
            *bound.get_mut(i).filter(|_| i < params.len())? = Some(a);
        }
        for kw in kwargs {
            let i = params.iter().position(|p| Some(*p) == kw.arg)?;
            bound[i] = Some(&kw.value);
        }
        let int = |e: &Expr| match e.kind {
            ExprKind::Constant(Constant::Int(n)) if (1..=255).contains(&n) => Some(n as u8),
            _ => None,
        };
        match name {
            "vector" => {
                let len = match bound[0]?.kind {
                    ExprKind::Constant(Constant::Int(0)) => 0,
                    _ => int(bound[0]?)?,
                };
                Some((name, 0, len, bound[1]))
            }
            "matrix" => {
                let ExprKind::Tuple([r, c]) = &bound[0]?.kind else {
                    return None;
                };
                Some((name, int(r)?, int(c)?, bound[1]))
            }
            _ => Some((name, 0, 0, bound[0])),
        }
    }

    /// Module-level `@wp.struct` classes and type aliases, in definition order.
    fn collect_type_names(&mut self, module: &Module) {
        for stmt in module.body {
            match &stmt.kind {
                StmtKind::ClassDef(class)
                    if class
                        .decorators
                        .iter()
                        .any(|d| self.names_warp(d, "struct")) =>
                {
                    let mut fields = Vec::new();
                    let mut ok = true;
                    for s in class.body {
                        if let StmtKind::AnnAssign(target, annotation, _) = &s.kind {
                            match (&target.kind, self.annotation_type(annotation)) {
                                (ExprKind::Name(n), Ok(t)) if !matches!(t, Type::Ref(_)) => {
                                    fields.push((n.to_string(), t))
                                }
                                _ => ok = false,
                            }
                        }
                    }
                    self.type_names.retain(|(n, _)| n != class.name);
                    if ok {
                        let key = native_identifier(class.name);
                        let id = StructId::intern(StructDef::new(&key, fields));
                        self.type_names
                            .push((class.name.to_string(), Value::Struct(id)));
                    }
                }
                StmtKind::Assign(targets, value) => {
                    // `T = wp.vec3`, or `np_type, wp_type = np.float64, wp.float64`:
                    // each name bound to the value in its place.
                    let pairs: Vec<(&Expr, &Expr)> = match (&targets[..], &value.kind) {
                        (
                            [
                                Expr {
                                    kind: ExprKind::Tuple(names),
                                    ..
                                },
                            ],
                            ExprKind::Tuple(values),
                        ) if names.len() == values.len() => {
                            names.iter().zip(values.iter()).collect()
                        }
                        ([target], _) => vec![(target, value)],
                        _ => Vec::new(),
                    };
                    for (target, value) in pairs {
                        let ExprKind::Name(name) = target.kind else {
                            continue;
                        };
                        let ty = match &value.kind {
                            ExprKind::Call(..) | ExprKind::Attribute(..) | ExprKind::Name(_) => {
                                self.value_type(value)
                            }
                            _ => None,
                        };
                        self.type_names.retain(|(n, _)| n != name);
                        if let Some(v) = ty {
                            self.type_names.push((name.to_string(), v));
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn scalar_type(&self, expr: &Expr) -> Option<Scalar> {
        let name = match &expr.kind {
            ExprKind::Name(n) => match *n {
                "float" => return Some(Scalar::Float32),
                "int" => return Some(Scalar::Int32),
                "bool" => return Some(Scalar::Bool),
                _ => self.imported_builtin(n)?,
            },
            _ => self.warp_attr(expr)?,
        };
        match name {
            "float" => Some(Scalar::Float32),
            "int" => Some(Scalar::Int32),
            "handle" => Some(Scalar::UInt64),
            n => Scalar::from_name(n),
        }
    }

    /// The type a parameter annotation denotes.
    pub fn annotation_type(&self, expr: &Expr) -> LResult<Type> {
        if let Some(v) = self.value_type(expr) {
            return Ok(v.to_type());
        }
        // `wp.ref[T]`: a parameter passed by reference (a pointer in C++).
        if let ExprKind::Subscript([base, index]) = &expr.kind {
            if self.names_warp(base, "ref") {
                return match self.annotation_type(index)? {
                    Type::Array { dtype, ndim, kind } => Ok(Type::ArrayRef { dtype, ndim, kind }),
                    t => match t.value() {
                        Some(v) => Ok(Type::Ref(v)),
                        None => Err(err_at(index.pos, "unsupported type in wp.ref[T]")),
                    },
                };
            }
        }
        // `tuple[wp.vec3, float]`: Python's `int` and `float` keep their names in C++.
        if let ExprKind::Subscript([base, index]) = &expr.kind {
            if matches!(base.kind, ExprKind::Name("tuple")) && !self.is_module_name("tuple") {
                let items = match &index.kind {
                    ExprKind::Tuple(items) => &items[..],
                    _ => std::slice::from_ref(index),
                };
                if items.is_empty() || items.len() > 64 {
                    return Err(err_at(expr.pos, "unsupported tuple annotation"));
                }
                let mut types = Vec::with_capacity(items.len());
                let mut python = 0u64;
                for (i, item) in items.iter().enumerate() {
                    if matches!(item.kind, ExprKind::Name("int" | "float")) {
                        python |= 1 << i;
                    }
                    types.push(self.annotation_type(item)?);
                }
                return Ok(Type::tuple_spelled(&types, python));
            }
        }
        if let Some(t) = self.array_annotation(expr, false) {
            return t;
        }
        match self.tile_annotation(expr) {
            Some(Ok(TileAnnotation::Shaped(t))) => return Ok(Type::Tile(t)),
            Some(Ok(TileAnnotation::Shapeless(_))) => {
                return Err(err_at(
                    expr.pos,
                    "a tile annotation without a shape is only supported on @wp.func parameters",
                ));
            }
            Some(Err(e)) => return Err(e),
            None => {}
        }
        // A query object as a function parameter: `wp.MeshQueryPoint`,
        // `wp.BvhQuery` (any BVH query), `wp.HashGridQuery[wp.float16]`.
        fn warp_name<'s>(scope: &'s Scope<'_>, e: &'s Expr<'_>) -> Option<&'s str> {
            match &e.kind {
                ExprKind::Name(n) => scope.imported_builtin(n),
                _ => scope.warp_attr(e),
            }
        }
        if let Some(q) = warp_name(self, expr)
            .and_then(Query::from_name)
            .filter(|q| *q != Query::MeshObject)
        {
            return Ok(Type::Query(q));
        }
        if let ExprKind::Subscript([base, index]) = &expr.kind {
            if warp_name(self, base) == Some("HashGridQuery") {
                if let Some(Value::Scalar(s)) = self.value_type(index).filter(|v| {
                    matches!(
                        v,
                        Value::Scalar(Scalar::Float16 | Scalar::Float32 | Scalar::Float64)
                    )
                }) {
                    return Ok(Type::Query(Query::HashGrid(s)));
                }
            }
        }
        Err(err_at(
            expr.pos,
            "unsupported type annotation for a kernel argument",
        ))
    }

    /// `wp.tile[dtype, M, N]` (or `Literal[M]`, or `(M, N)`): a register tile
    /// of that shape, warp's type for a `@wp.func` tile parameter; `wp.tile[dtype]`
    /// has no shape, which the function's first call gives (see
    /// [`Template::Tile`]). None when `expr` is no tile annotation.
    fn tile_annotation(&self, expr: &Expr) -> Option<LResult<TileAnnotation>> {
        let ExprKind::Subscript([base, index]) = &expr.kind else {
            return None;
        };
        if !self.names_warp(base, "tile") {
            return None;
        }
        let items = match &index.kind {
            ExprKind::Tuple(items) if !items.is_empty() => &items[..],
            _ => std::slice::from_ref(index),
        };
        let Some(dtype) = self.value_type(&items[0]) else {
            return Some(Err(err_at(items[0].pos, "unsupported tile element type")));
        };
        let mut dims: Vec<&Expr> = items[1..].iter().collect();
        if let [only] = dims[..] {
            if let ExprKind::Tuple(inner) = &only.kind {
                dims = inner.iter().collect();
            }
        }
        if dims.is_empty() {
            return Some(Ok(TileAnnotation::Shapeless(dtype)));
        }
        let mut shape = Vec::with_capacity(dims.len());
        for (i, d) in dims.iter().enumerate() {
            match self.literal_int(d) {
                Some(n) if n > 0 && n <= Tile::MAX_EXTENT as i128 => shape.push(n as u32),
                _ => {
                    return Some(Err(err_at(
                        d.pos,
                        format!("Tile dimension {i} must be a positive integer"),
                    )));
                }
            }
        }
        if shape.len() > 4 {
            return Some(Err(err_at(index.pos, "a tile has at most four dimensions")));
        }
        Some(Ok(TileAnnotation::Shaped(Tile::new(dtype, &shape))))
    }

    /// The array family (and its fixed dimension count, 0 where `ndim=` may set it)
    /// that `expr` names: `wp.array2d`, `wp.indexedarray`, `wp.fabricarray`, ...
    fn array_family(&self, expr: &Expr) -> Option<(ArrayKind, usize)> {
        const FAMILIES: [(&str, ArrayKind, usize); 13] = [
            ("array", ArrayKind::Array, 0),
            ("array1d", ArrayKind::Array, 1),
            ("array2d", ArrayKind::Array, 2),
            ("array3d", ArrayKind::Array, 3),
            ("array4d", ArrayKind::Array, 4),
            ("indexedarray", ArrayKind::Indexed, 0),
            ("indexedarray1d", ArrayKind::Indexed, 1),
            ("indexedarray2d", ArrayKind::Indexed, 2),
            ("indexedarray3d", ArrayKind::Indexed, 3),
            ("indexedarray4d", ArrayKind::Indexed, 4),
            ("fabricarray", ArrayKind::Fabric, 0),
            ("indexedfabricarray", ArrayKind::IndexedFabric, 0),
            ("fixedarray", ArrayKind::Fixed(0), 0),
        ];
        let name = match &expr.kind {
            ExprKind::Name(n) => self.imported_builtin(n)?,
            _ => self.warp_attr(expr)?,
        };
        FAMILIES
            .iter()
            .find(|(n, ..)| *n == name)
            .map(|&(_, kind, ndim)| (kind, ndim))
    }

    /// An array annotation: `wp.array(dtype=float, ndim=2)`, `wp.array2d[wp.vec3]`,
    /// `wp.indexedarray[float, Literal[2]]`, `wp.fixedarray(shape=(2, 3), dtype=int)`;
    /// None when `expr` names no array family.
    fn array_annotation(&self, expr: &Expr, generic: bool) -> Option<LResult<Type>> {
        let unsupported_dtype = |e: &Expr| {
            err_at(
                e.pos,
                "arrays of this dtype are not supported by this version of the lowering",
            )
        };
        // `2` or `Literal[2]`
        let ndim_of = |e: &Expr| -> LResult<usize> {
            match self.literal_int(e) {
                Some(n) if (1..=4).contains(&n) => Ok(n as usize),
                _ => Err(err_at(e.pos, "array ndim must be an integer from 1 to 4")),
            }
        };
        match &expr.kind {
            ExprKind::Subscript([base, index]) => {
                let (kind, fixed_ndim) = self.array_family(base)?;
                // `wp.indexedarray2d` and the others are functions, not subscriptable.
                if matches!(kind, ArrayKind::Fixed(_))
                    || (kind != ArrayKind::Array && fixed_ndim != 0)
                {
                    return Some(Err(err_at(
                        expr.pos,
                        "unsupported type annotation for a kernel argument",
                    )));
                }
                let (dtype, ndim) = match &index.kind {
                    ExprKind::Tuple(items) if items.len() == 2 && fixed_ndim == 0 => {
                        match ndim_of(&items[1]) {
                            Ok(n) => (&items[0], n),
                            Err(e) => return Some(Err(e)),
                        }
                    }
                    _ => (index, fixed_ndim.max(1)),
                };
                Some(
                    self.array_dtype(dtype, generic)
                        .map(|dtype| Type::Array { dtype, ndim, kind })
                        .ok_or_else(|| unsupported_dtype(dtype)),
                )
            }
            ExprKind::Call(func, args, kwargs) => {
                let (kind, fixed_ndim) = self.array_family(func)?;
                Some(self.array_call_annotation(expr, kind, fixed_ndim, args, kwargs, generic))
            }
            _ => None,
        }
    }

    fn array_call_annotation(
        &self,
        expr: &Expr,
        mut kind: ArrayKind,
        fixed_ndim: usize,
        args: &[Expr],
        kwargs: &[Keyword],
        generic: bool,
    ) -> LResult<Type> {
        let mut dtype = None;
        let mut ndim = fixed_ndim.max(1);
        for (k, a) in args.iter().enumerate() {
            if k == 0 {
                dtype = Some(a);
            } else {
                return Err(err_at(
                    a.pos,
                    "unexpected positional argument in array annotation",
                ));
            }
        }
        for kw in kwargs.iter() {
            match kw.arg {
                Some("dtype") => dtype = Some(&kw.value),
                Some("ndim") if fixed_ndim == 0 && !matches!(kind, ArrayKind::Fixed(_)) => match kw
                    .value
                    .kind
                {
                    ExprKind::Constant(Constant::Int(n)) if (1..=4).contains(&n) => {
                        ndim = n as usize
                    }
                    _ => {
                        return Err(err_at(kw.value.pos, "ndim must be an integer from 1 to 4"));
                    }
                },
                Some("shape") if matches!(kind, ArrayKind::Fixed(_)) => {
                    let dims: Vec<&Expr> = match &kw.value.kind {
                        ExprKind::Tuple(items) => items.iter().collect(),
                        _ => vec![&kw.value],
                    };
                    let mut size: u64 = 1;
                    for d in &dims {
                        match d.kind {
                            ExprKind::Constant(Constant::Int(n)) if n >= 0 => {
                                size = size.saturating_mul(n as u64)
                            }
                            _ => {
                                return Err(err_at(
                                    d.pos,
                                    "a fixed array's shape must be integer constants",
                                ));
                            }
                        }
                    }
                    if dims.is_empty() || dims.len() > 4 || size > u32::MAX as u64 {
                        return Err(err_at(kw.value.pos, "unsupported fixed array shape"));
                    }
                    ndim = dims.len();
                    kind = ArrayKind::Fixed(size as u32);
                }
                _ => {
                    return Err(err_at(
                        kw.value.pos,
                        "unsupported argument in array annotation",
                    ));
                }
            }
        }
        let dtype = dtype.ok_or_else(|| err_at(expr.pos, "array annotation needs a dtype"))?;
        let value = self.array_dtype(dtype, generic).ok_or_else(|| {
            err_at(
                dtype.pos,
                "arrays of this dtype are not supported by this version of the lowering",
            )
        })?;
        Ok(Type::Array {
            dtype: value,
            ndim,
            kind,
        })
    }

    /// An array annotation's dtype; with `generic`, `Any` stands for any
    /// (a placeholder: the caller keeps only the array's kind and ndim).
    fn array_dtype(&self, dtype: &Expr, generic: bool) -> Option<Value> {
        if generic && self.is_any_annotation(dtype) {
            return Some(Value::Scalar(Scalar::Float32));
        }
        self.value_type(dtype)
    }

    /// The kind and ndim of an array annotation whose dtype is `Any`
    /// (`wp.array[Any]`, `wp.array2d[Any]`, `wp.array(dtype=Any, ndim=2)`): a
    /// generic parameter that takes any array of that kind and ndim.
    pub fn generic_array(&self, expr: &Expr) -> Option<(ArrayKind, usize)> {
        let dtype = match &expr.kind {
            ExprKind::Subscript([_, index]) => match &index.kind {
                ExprKind::Tuple(items) if items.len() == 2 => &items[0],
                _ => index,
            },
            ExprKind::Call(_, args, kwargs) => kwargs
                .iter()
                .find(|k| k.arg == Some("dtype"))
                .map(|k| &k.value)
                .or(args.first())?,
            _ => return None,
        };
        if !self.is_any_annotation(dtype) {
            return None;
        }
        match self.array_annotation(expr, true)? {
            Ok(Type::Array { kind, ndim, .. }) => Some((kind, ndim)),
            _ => None,
        }
    }
}

/// A parameter of a generic `@wp.func`, as its overloads are told apart.
#[derive(PartialEq)]
pub(super) enum Template {
    Any,
    /// An array of `Any`: its kind and ndim.
    Array(ArrayKind, usize),
    /// warp's generic scalars `wp.Int`, `wp.Float`, `wp.Scalar` (a class of
    /// scalar types), alone or as the components of a vector or matrix of a
    /// given shape (`wp.types.vector(3, wp.Float)`; rows 0 for a vector).
    Scalar(ScalarClass),
    Composite(u8, u8, ScalarClass),
    /// `tuple[T, ...]`: a tuple of any length (warp builds one instance per
    /// signature, as for `Any`).
    Tuple,
    /// `wp.tile[dtype]`: a tile of that element type and any shape and
    /// storage. Unlike `Any`, it does not make the function generic: warp
    /// builds it once, on the types of its first call.
    Tile(Value),
    Type(Type),
}

/// warp's generic scalar types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ScalarClass {
    Int,
    Float,
    Any,
}

impl ScalarClass {
    fn from_name(name: &str) -> Option<ScalarClass> {
        match name {
            "Int" => Some(ScalarClass::Int),
            "Float" => Some(ScalarClass::Float),
            "Scalar" => Some(ScalarClass::Any),
            _ => None,
        }
    }

    fn has(self, s: Scalar) -> bool {
        match self {
            ScalarClass::Int => s.is_int(),
            ScalarClass::Float => s.is_float(),
            ScalarClass::Any => s != Scalar::Bool,
        }
    }
}

/// What a `wp.tile[...]` annotation says.
pub(super) enum TileAnnotation {
    Shaped(Tile),
    Shapeless(Value),
}

impl Template {
    /// Whether it makes a function generic (one instance per signature its
    /// calls give): all but a shapeless tile and a concrete type.
    pub(super) fn per_signature(&self) -> bool {
        !matches!(self, Template::Tile(_) | Template::Type(_))
    }

    /// Whether an argument of type `t` fits: `Any` takes any type, an array
    /// of `Any` any array of its kind and ndim, a type itself.
    pub(super) fn fits(&self, t: &Type) -> bool {
        match self {
            Template::Any => true,
            Template::Array(kind, ndim) => {
                matches!(t, Type::Array { kind: k, ndim: n, .. } if k.fits(*kind) && n == ndim)
            }
            Template::Tuple => matches!(t, Type::Tuple(_) | Type::IntTuple(_)),
            Template::Scalar(class) => matches!(t, Type::Scalar(s) if class.has(*s)),
            Template::Composite(0, n, class) => {
                matches!(t, Type::Vector(m, s) if m == n && class.has(*s))
            }
            Template::Composite(r, c, class) => {
                matches!(t, Type::Matrix(a, b, s) if a == r && b == c && class.has(*s))
            }
            Template::Tile(dtype) => matches!(t, Type::Tile(u) if u.dtype == *dtype),
            // warp's `types_equal` of tiles: the element type, whatever the shape.
            Template::Type(Type::Tile(p)) => matches!(t, Type::Tile(u) if u.dtype == p.dtype),
            Template::Type(p) => p.strip_ref() == *t,
        }
    }
}

/// warp's `make_full_qualified_name`: only `[0-9a-zA-Z_]` survive in C++ names.
pub fn native_identifier(name: &str) -> String {
    let kept = |c: char| c.is_ascii_alphanumeric() || c == '_';
    // Nearly every name is one already: a copy, not a string grown per character.
    if name.bytes().all(|b| kept(b as char)) {
        return name.to_owned();
    }
    name.chars().filter(|&c| kept(c)).collect()
}

/// How many `@wp.func`s of this name warp 1.19.0 itself defines when it is
/// imported (its math helpers); user functions of the same name count on.
fn warp_defined_function_count(key: &str) -> usize {
    match key {
        "transform_compose"
        | "transform_decompose"
        | "transform_from_matrix"
        | "transform_to_matrix" => 3,
        "norm_huber"
        | "norm_l1"
        | "norm_l2"
        | "norm_pseudo_huber"
        | "quat_between_vectors"
        | "quat_from_euler"
        | "quat_to_euler"
        | "quat_to_rpy"
        | "quat_twist"
        | "quat_twist_angle"
        | "quat_twist_angle_signed"
        | "smooth_normalize"
        | "transform_twist"
        | "transform_wrench"
        | "velocity_at_point" => 1,
        _ => 0,
    }
}

/// Python's `str.splitlines()` for the line terminators that occur in source files.
/// The line ends are found by memchr's SIMD search, counted first so the list is
/// allocated once (`str::split` searched a line at a time and grew the list by doubling).
fn split_lines(source: &str) -> Vec<&str> {
    let bytes = source.as_bytes();
    let mut lines = Vec::with_capacity(memchr::memchr_iter(b'\n', bytes).count() + 1);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', bytes).chain([bytes.len()]) {
        let line = &source[start..end];
        lines.push(line.strip_suffix('\r').unwrap_or(line));
        start = end + 1;
    }
    lines
}

/// A kernel found at module level, with its options, or why its decorator
/// cannot be honoured (kept per kernel, so `--keep-going` can pass over it).
#[derive(Clone)]
struct KernelDef<'m> {
    def: &'m FunctionDef<'m>,
    pos: Pos,
    /// The kernel's key when `name=` sets it.
    name: Option<String>,
    options: LResult<KernelOptions>,
}

/// What a `@wp.kernel(...)` decorator sets for the kernel itself.
#[derive(Clone, Debug, Default)]
struct KernelDecorator {
    /// `name=`: the kernel's key.
    name: Option<String>,
    enable_backward: Option<bool>,
    grid_stride: Option<bool>,
    cuda_attrs: String,
    cuda_regs: String,
    smem_spilling: bool,
}

/// Applies `wp.config.FIELD = v`.
fn apply_config(config: &mut Config, field: &str, v: Option<&PyVal>) {
    match (field, v) {
        ("enable_backward", Some(v)) => config.enable_backward = v.truthy(),
        ("max_unroll", Some(PyVal::Int(n))) => config.max_unroll = *n,
        ("default_grid_stride", Some(v)) => config.default_grid_stride = v.truthy(),
        ("mode", Some(PyVal::Str(m))) if m == "release" => {}
        (
            "lineinfo"
            | "verify_fp"
            | "verify_autograd_array_access"
            | "enable_vector_component_overwrites"
            | "llvm_cuda"
            | "legacy_scalar_return_types",
            Some(v),
        ) if !v.truthy() => {}
        ("line_directives", _) => {}
        (
            "enable_backward"
            | "max_unroll"
            | "default_grid_stride"
            | "mode"
            | "lineinfo"
            | "verify_fp"
            | "verify_autograd_array_access"
            | "enable_vector_component_overwrites"
            | "llvm_cuda"
            | "legacy_scalar_return_types"
            | "deterministic",
            _,
        ) => {
            config.unsupported = Some(
                "this wp.config setting (or a value not computable statically) is not supported by this version of the lowering",
            )
        }
        _ => {}
    }
}

/// A lowered kernel body, ready to be placed in either target's template.
struct KernelBody<'s> {
    name: String,
    mangled: String,
    enable_backward: bool,
    options: KernelOptions,
    adj: Adjoint<'s>,
}

fn mangle(source: &str, name: &str) -> String {
    use std::fmt::Write;
    let h = xxhash_rust::xxh3::xxh3_64_with_seed(source.as_bytes(), name.len() as u64)
        ^ xxhash_rust::xxh3::xxh3_64(name.as_bytes());
    let mut mangled = native_identifier(name);
    let _ = write!(mangled, "_{:08x}", h as u32);
    mangled
}

pub fn lower_module(
    source: &str,
    filename: &str,
    cpu: bool,
    cuda: bool,
    keep_going: bool,
    max_generated: usize,
) -> LResult<Lowered> {
    with_arena(|arena| {
        lower_parsed(
            source,
            parse_module(source, arena)?,
            arena,
            filename,
            (cpu, cuda, true),
            keep_going,
            max_generated,
        )
    })
}

/// Lowers a parsed module for the targets asked for. The CPU module source is
/// always assembled (the CPU checks read its entry points); the CUDA one only
/// when `cuda_module`, since its kernels are the whole of what the CUDA checks
/// need and joining tens of KB per sample that nobody keeps is pure cost.
///
/// With `keep_going`, a kernel that fails is left out of the module and its
/// error kept in `Lowered::skipped`; otherwise the first failure is the result.
/// A kernel whose code, or whose code with the kernels before it, passes
/// `max_generated` bytes fails (see `Adjoint::check_size`).
pub fn lower_parsed<'a>(
    source: &'a str,
    module: Module<'a>,
    arena: &'a bumpalo::Bump,
    filename: &str,
    (cpu, cuda, cuda_module): (bool, bool, bool),
    keep_going: bool,
    max_generated: usize,
) -> LResult<Lowered> {
    let mut scope = Scope::new(source, filename, &module, arena);
    scope.max_generated = max_generated;
    let scope = scope;
    // Code the module's kernels and functions have generated so far.
    let mut module_bytes = 0usize;
    let funcs = RefCell::new(FuncTable::default());
    let mut bodies = Vec::with_capacity(scope.kernels.len());
    let mut used_builtins: Vec<compact_str::CompactString> = Vec::new();
    let mut dtypes: Vec<Type> = Vec::with_capacity(16);
    let mut skipped = Vec::new();
    let mut features = super::Features::empty();
    for k in &scope.kernels {
        let built_before = funcs.borrow().built.len();
        let structs_before = funcs.borrow().structs.len();
        let lowered = k.options.clone().and_then(|options| {
            let mut adj = Adjoint::new(&scope, &funcs, k.def, false)?;
            adj.max_unroll = options.max_unroll;
            adj.block_dim = options.block_dim;
            adj.enable_backward = options.enable_backward;
            adj.lower_function(k.def, k.pos)?;
            // warp leaves the pragma out where the kernel needs shared memory,
            // which this version of the lowering does not total.
            if options.smem_spilling && adj.features().contains(super::Features::TILES) {
                return Err(err_at(
                    k.pos,
                    "enable_cuda_smem_spilling for a kernel with tiles is not supported by this version of the lowering",
                ));
            }
            if let (true, Some(e)) = (options.enable_backward, adj.slot_augassign_error.take()) {
                return Err(e);
            }
            if options.enable_backward {
                if let Some(e) = backward_ref_call_error(&adj, &funcs.borrow()) {
                    return Err(e);
                }
            }
            let bytes = adj.generated_bytes()
                + funcs.borrow().built[built_before..]
                    .iter()
                    .map(|(_, f)| f.generated_bytes)
                    .sum::<usize>();
            if module_bytes.saturating_add(bytes) > max_generated {
                return Err(super::size_limit_error(
                    k.pos.line,
                    k.pos.col,
                    "generated code of the module's kernels up to this one",
                    max_generated,
                ));
            }
            module_bytes += bytes;
            Ok((adj, options))
        });
        let (mut adj, options) = match lowered {
            Ok(lowered) => lowered,
            Err(e) if keep_going => {
                // The functions only this kernel reached go with it.
                funcs.borrow_mut().built.truncate(built_before);
                funcs
                    .borrow_mut()
                    .deferred
                    .retain(|(i, _)| *i < built_before);
                funcs.borrow_mut().grad_called.retain(|i| *i < built_before);
                funcs.borrow_mut().grads.retain(|i| *i < built_before);
                funcs.borrow_mut().structs.truncate(structs_before);
                skipped.push((k.def.name.to_string(), e));
                continue;
            }
            Err(e) => return Err(e),
        };
        features.insert(adj.features());
        adj.dtypes(&mut dtypes);
        // The names move to the module's list (nothing reads them from the body after).
        used_builtins.append(&mut adj.builtins_used);
        let name = k.name.clone().unwrap_or_else(|| k.def.name.to_string());
        bodies.push(KernelBody {
            mangled: mangle(source, &name),
            name,
            enable_backward: options.enable_backward,
            options,
            adj,
        });
    }
    // warp builds the replay functions of the functions it built after the kernels.
    let deferred = std::mem::take(&mut funcs.borrow_mut().deferred);
    for (idx, native) in deferred {
        let Some(forward) = funcs.borrow().built.get(idx).map(|(n, _)| n.clone()) else {
            continue;
        };
        let Some(native) = native else {
            // A custom gradient: lowered now, emitted as the function's adjoint.
            let Some((def, pos)) = scope.custom_grad_of_native(&forward) else {
                continue;
            };
            if let Ok(source) = super::adjoint::build_custom_grad(&scope, &funcs, def, pos, idx) {
                funcs.borrow_mut().built[idx].1.custom_grad_source = Some(source);
                funcs.borrow_mut().grads.push(idx);
            }
            continue;
        };
        let Some((def, pos, _)) = scope.replay_of(&forward) else {
            continue;
        };
        if funcs.borrow().built.iter().any(|(n, _)| *n == native) {
            continue;
        }
        let max_unroll = 16;
        if let Ok((i, _)) =
            super::adjoint::build_function(&scope, &funcs, def, pos, &native, max_unroll, &[], &[])
        {
            funcs.borrow_mut().built[i].1.forward_only = true;
        }
    }
    mark_backward_use(&mut funcs.borrow_mut(), &bodies);
    let table = funcs.borrow();
    let generate = |target, module| assemble(target, &scope, &table, &bodies, module);
    // What the kernels' functions and structs add (those of a kernel that
    // failed with keep-going were dropped from the table with it).
    for (_, f) in &table.built {
        features.insert(f.features.union(super::Features::FUNCS));
    }
    if !table.structs.is_empty() {
        features.insert(super::Features::STRUCTS);
    }
    Ok(Lowered {
        cpu: cpu.then(|| generate(Target::Cpu, true)),
        cuda: cuda.then(|| generate(Target::Cuda, cuda_module)),
        builtins: {
            // Sorted and unique, as a set of the kernels' names would list them.
            let mut names: Vec<&str> = used_builtins.iter().map(|n| n.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            names.into_iter().map(String::from).collect()
        },
        dtypes: {
            // Sorted and unique (a tree built for a handful of names cost more).
            let mut names: Vec<String> = dtypes.iter().map(Type::to_string).collect();
            names.sort_unstable();
            names.dedup();
            names
        },
        launch_dims: bodies
            .iter()
            .map(|k| k.adj.kernel_dim as u32)
            .max()
            .unwrap_or(0),
        features,
        skipped,
    })
}

/// warp refuses a call of a `wp.ref[T]` function without a manual adjoint
/// from a backward-enabled kernel, or from a function such a kernel reaches.
fn backward_ref_call_error(adj: &Adjoint<'_>, funcs: &FuncTable) -> Option<LowerError> {
    if let Some(e) = &adj.ref_call_error {
        return Some(e.clone());
    }
    let mut seen = vec![false; funcs.built.len()];
    let mut work: Vec<usize> = adj.called.clone();
    while let Some(i) = work.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        let f = &funcs.built[i].1;
        if let Some(e) = &f.backward_error {
            return Some(e.clone());
        }
        work.extend(f.callees.iter().copied());
    }
    None
}

/// A function's adjoint is generated only when a kernel with a backward pass reaches it.
fn mark_backward_use(funcs: &mut FuncTable, bodies: &[KernelBody<'_>]) {
    let mut work: Vec<usize> = bodies
        .iter()
        .filter(|k| k.enable_backward)
        .flat_map(|k| k.adj.called.iter().copied())
        .chain(funcs.grad_called.iter().copied())
        .collect();
    while let Some(i) = work.pop() {
        let f = &mut funcs.built[i].1;
        if !f.used_by_backward {
            f.used_by_backward = true;
            work.extend(f.callees.iter().copied());
        }
    }
}

/// A lowered `@wp.func` as the module keeps it: what its callers need now,
/// its body to be rendered if a module source asks for it.
pub(super) fn built_function(adj: Adjoint<'_>, def: &FunctionDef, native: &str) -> BuiltFunc {
    let ret = adj
        .return_var
        .as_ref()
        .and_then(|r| (r.len() == 1).then(|| adj.var(r[0]).ty.clone()));
    let params: Vec<Type> = adj.args.iter().map(|a| adj.var(*a).ty.clone()).collect();
    let outputs: Vec<Type> = match &adj.return_var {
        Some(r) if r.len() > 1 => r.iter().map(|v| adj.var(*v).ty.clone()).collect(),
        _ => Vec::new(),
    };
    BuiltFunc {
        native: native.to_string(),
        params,
        ret,
        outputs,
        inline_attr: "",
        forward_only: false,
        replay: None,
        callees: adj.called.clone(),
        used_by_backward: false,
        generated_bytes: adj.generated_bytes(),
        first_line: def.first_line,
        custom_grad: false,
        manual_ref_adjoint: false,
        backward_error: adj
            .ref_call_error
            .clone()
            .or_else(|| adj.slot_augassign_error.clone()),
        snippet: false,
        snippet_replay: None,
        custom_grad_source: None,
        features: adj.features(),
        // Only a function that uses tiles can hold structs in them.
        tile_structs: if adj.features().contains(super::Features::TILES) {
            adj.tile_structs()
        } else {
            Vec::new()
        },
        text: FunctionText::Lowered(adj.into_body(), Default::default()),
    }
}

/// The C++ parameter lists and bodies of `f`, rendered on first use.
fn function_source_text(f: &BuiltFunc) -> &FunctionSource {
    match &f.text {
        FunctionText::Written(text) => text,
        FunctionText::Lowered(body, text) => text.get_or_init(|| render_function_text(f, body)),
    }
}

/// A function's parameter as its forward signature declares it: `T var_x`.
fn forward_param(v: &super::adjoint::VarInfo) -> String {
    format!("{} var_{}", v.ty.ctype(false), v.label())
}

fn render_function_text(f: &BuiltFunc, body: &LoweredBody) -> FunctionSource {
    let indent = "    ";
    let code = body.code();
    // A tile parameter is `tile_x& var_x` of a template type `tile_x`.
    let mut tiles = Vec::new();
    let mut forward_args: Vec<String> = code
        .args
        .iter()
        .map(|a| {
            let v = code.var(*a);
            if matches!(v.ty, Type::Tile(_)) {
                tiles.push(format!("typename tile_{}", v.label()));
                format!("tile_{}& var_{}", v.label(), v.label())
            } else {
                forward_param(v)
            }
        })
        .collect();
    for (i, t) in f.outputs.iter().enumerate() {
        forward_args.push(format!("{} & ret_{i}", t.ctype(false)));
    }
    let mut reverse_args = forward_args.clone();
    for a in code.args {
        let v = code.var(*a);
        if matches!(v.ty, Type::Tile(_)) {
            reverse_args.push(format!("tile_{} & adj_{}", v.label(), v.label()));
            continue;
        }
        // A `wp.ref[T]` parameter's adjoint is a pointer too.
        let amp = if v.ty.is_ref() { "" } else { "& " };
        reverse_args.push(format!(
            "{} {amp}adj_{}",
            v.ty.adjoint_param().ctype(false),
            v.label()
        ));
    }
    if let Some(r) = &f.ret {
        reverse_args.push(format!("{} & adj_ret", r.ctype(false)));
    }
    for (i, t) in f.outputs.iter().enumerate() {
        reverse_args.push(format!("{} & adj_ret_{i}", t.ctype(false)));
    }
    FunctionSource {
        template: if tiles.is_empty() {
            String::new()
        } else {
            format!("template<{}>\n", tiles.join(", "))
        },
        forward_args,
        reverse_args,
        forward_body: forward_body(&code, Body::Function, indent),
        reverse_body: reverse_body(&code, Body::Function, indent),
    }
}

/// Renders a lowered `@wp.func_grad` function as the adjoint of a function of
/// `n` parameters: the forward parameters, their adjoints, then the gradient's
/// own (the adjoints of the outputs); its body is its forward code. Returns
/// the parameters, the body and the line of the gradient's definition.
pub(super) fn render_custom_grad(
    adj: &Adjoint<'_>,
    def: &FunctionDef,
    n: usize,
) -> (Vec<String>, String, usize) {
    let n = n.min(adj.args.len());
    let mut args: Vec<String> = adj.args[..n]
        .iter()
        .map(|a| forward_param(adj.var(*a)))
        .collect();
    for a in &adj.args[..n] {
        let v = adj.var(*a);
        let amp = if v.ty.is_ref() { "" } else { "& " };
        args.push(format!("{} {amp}adj_{}", v.ty.ctype(false), v.label()));
    }
    for a in &adj.args[n..] {
        let v = adj.var(*a);
        let amp = if v.ty.is_ref() { "" } else { "& " };
        args.push(format!("{} {amp}var_{}", v.ty.ctype(false), v.label()));
    }
    let body = format!(
        "\t// user-defined adjoint code\n{}",
        forward_body(&adj.code(), Body::Function, "    ")
    );
    (args, body, def.first_line)
}

fn function_source(target: Target, scope: &Scope<'_>, f: &BuiltFunc, reverse: bool) -> String {
    // Native snippets are emitted with the CUDA templates for both targets.
    let callable = if target == Target::Cuda || f.snippet {
        "CUDA_CALLABLE "
    } else {
        ""
    };
    let ret = f
        .ret
        .as_ref()
        .map_or("void".to_string(), |t| t.ctype(false).into_owned());
    let text = function_source_text(f);
    let (ret, name, args, body) = if reverse {
        let body = if f.used_by_backward || f.snippet {
            text.reverse_body.clone()
        } else {
            "\t// reverse mode disabled (no backward-enabled kernel depends on this function)\n"
                .to_string()
        };
        (
            "void".to_string(),
            format!("adj_{}", f.native),
            &text.reverse_args,
            body,
        )
    } else {
        (
            ret,
            f.native.clone(),
            &text.forward_args,
            text.forward_body.clone(),
        )
    };
    let mut out = format!(
        "{}\n// {}:{}\nstatic {}{callable}{ret} {name}(\n    {})\n{{\n{body}}}\n\n",
        text.template,
        scope.filename,
        f.first_line,
        f.inline_attr,
        args.join(",\n    ")
    );
    if let (false, Some(replay)) = (reverse, &f.snippet_replay) {
        out.put(&format!(
            "\n// {}:{}\nstatic {callable}{ret} replay_{name}(\n    {})\n{{\n{replay}}}\n\n",
            scope.filename,
            f.first_line,
            args.join(",\n    ")
        ));
    }
    out
}

/// The adjoint of `f` written by its `@wp.func_grad`.
fn custom_grad_source(
    target: Target,
    scope: &Scope<'_>,
    f: &BuiltFunc,
    (args, body, line): &(Vec<String>, String, usize),
) -> String {
    let callable = if target == Target::Cuda {
        "CUDA_CALLABLE "
    } else {
        ""
    };
    format!(
        "\n// {}:{}\nstatic {}{callable}void adj_{}(\n    {})\n{{\n{body}}}\n\n",
        scope.filename,
        line,
        f.inline_attr,
        f.native,
        args.join(",\n    ")
    )
}

fn assemble(
    target: Target,
    scope: &Scope<'_>,
    funcs: &FuncTable,
    bodies: &[KernelBody<'_>],
    with_module: bool,
) -> TargetIr {
    let kernels: Vec<KernelIr> = bodies
        .iter()
        .map(|k| {
            let (forward, backward) = match target {
                Target::Cuda => cuda_kernel(k),
                Target::Cpu => cpu_kernel(k),
            };
            KernelIr {
                name: k.name.clone(),
                forward,
                backward: backward.unwrap_or_default(),
            }
        })
        .collect();
    let module = with_module.then(|| module_source(target, scope, funcs, bodies, &kernels));
    TargetIr { module, kernels }
}

/// The whole module: header, every function, then per kernel its forward and
/// backward functions (and, for the CPU, its args struct and entry points).
fn module_source(
    target: Target,
    scope: &Scope<'_>,
    funcs: &FuncTable,
    bodies: &[KernelBody<'_>],
    kernels: &[KernelIr],
) -> String {
    // Every piece is made first and the module joined once at its exact size:
    // a module's IR is tens of KB, and growing a String by doubling, then
    // copying it behind the header, cost more than the pieces themselves.
    let mut functions: Vec<String> = funcs
        .built
        .iter()
        .map(|(_, f)| function_source(target, scope, f, false))
        .collect();
    // Then the adjoints: custom gradients first (in the order they were
    // built), then every other one (callees before callers, as built); a
    // function with a custom gradient has no adjoint of its own.
    functions.extend(funcs.grads.iter().filter_map(|&i| {
        let f = &funcs.built[i].1;
        let source = f.custom_grad_source.as_ref()?;
        Some(custom_grad_source(target, scope, f, source))
    }));
    functions.extend(
        funcs
            .built
            .iter()
            .filter(|(_, f)| !f.forward_only && !f.custom_grad)
            .map(|(_, f)| function_source(target, scope, f, true)),
    );
    // The CPU module's args structs and entry points.
    let cpu_parts: Vec<(String, String)> = match target {
        Target::Cuda => Vec::new(),
        Target::Cpu => bodies
            .iter()
            .map(|k| {
                let ndim = k.adj.kernel_dim.to_string();
                let fill = |t: &str| t.replace("@NAME@", &k.mangled).replace("@NDIM@", &ndim);
                let mut entries = fill(CPU_MODULE_FORWARD);
                if k.enable_backward {
                    entries.put(&fill(CPU_MODULE_BACKWARD));
                }
                (args_struct(k), entries)
            })
            .collect(),
    };
    // Structs held by tiles anywhere in the module (and the structs they
    // hold) are defined with the operators tile code instantiates.
    let mut tile_helpers: Vec<StructId> = Vec::new();
    let mut pending: Vec<StructId> = bodies
        .iter()
        .flat_map(|k| k.adj.tile_structs())
        .chain(
            funcs
                .built
                .iter()
                .flat_map(|(_, f)| f.tile_structs.iter().copied()),
        )
        .collect();
    while let Some(id) = pending.pop() {
        if !tile_helpers.contains(&id) {
            tile_helpers.push(id);
            pending.extend(id.def().fields.iter().filter_map(|(_, t)| match t {
                Type::Struct(c) => Some(*c),
                _ => None,
            }));
        }
    }
    let structs: Vec<String> = funcs
        .structs
        .iter()
        .map(|id| super::adjoint::structs::struct_source(id.def(), tile_helpers.contains(id)))
        .collect();
    let mut pieces: Vec<&str> =
        Vec::with_capacity(structs.len() + functions.len() + 8 * kernels.len());
    pieces.extend(structs.iter().map(String::as_str));
    pieces.extend(functions.iter().map(String::as_str));
    for (i, k) in kernels.iter().enumerate() {
        let cpu = cpu_parts.get(i);
        pieces.extend(cpu.map(|(args, _)| args.as_str()));
        pieces.extend(["\n\n", &k.forward, "\n\n"]);
        if !k.backward.is_empty() {
            pieces.extend(["\n\n", &k.backward, "\n\n"]);
        }
        pieces.extend(cpu.map(|(_, entries)| entries.as_str()));
    }
    let header = if target == Target::Cpu {
        CPU_HEADER
    } else {
        CUDA_HEADER
    };
    // SIMD substring search: the pieces are the whole module, tens of KB.
    static BFLOAT16: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new("bfloat16"));
    let bfloat16 = pieces.iter().any(|p| BFLOAT16.find(p.as_bytes()).is_some());
    let custom_header;
    let header = if scope.block_dim == 256 {
        header
    } else {
        custom_header = header.replace(
            "#define WP_TILE_BLOCK_DIM 256\n",
            &format!("#define WP_TILE_BLOCK_DIM {}\n", scope.block_dim),
        );
        &custom_header
    };
    let prefix = [if bfloat16 { "" } else { NO_BFLOAT16 }, header, CAST_MACROS];
    let len = prefix.iter().chain(&pieces).map(|p| p.len()).sum();
    let mut module = String::with_capacity(len);
    for p in prefix.iter().chain(&pieces) {
        module.put(p);
    }
    module
}

fn args_struct(k: &KernelBody<'_>) -> String {
    let mut s = format!("struct wp_args_{} {{\n", k.mangled);
    for &a in &k.adj.args {
        let v = k.adj.var(a);
        s.put(&format!("    {} {};\n", v.ty.ctype(false), v.label()));
    }
    s.put("};\n");
    s
}

/// Appends body lines under the function's indentation, as warp's `codegen_func_*` joins them.
fn push_lines<'l>(out: &mut String, indent: &str, lines: impl IntoIterator<Item = &'l str>) {
    for l in lines {
        out.put_all(&[indent, l, "\n"]);
    }
}

/// One body line built in place: `indent` + pieces + newline.
fn push_line(out: &mut String, indent: &str, pieces: &[&str]) {
    out.put(indent);
    for p in pieces {
        out.put(p);
    }
    out.push('\n');
}

fn push_argument_vars(out: &mut String, code: &Code<'_>, indent: &str, with_adjoints: bool) {
    push_lines(out, indent, ["//---------", "// argument vars"]);
    for &a in code.args {
        let v = code.var(a);
        push_typed(out, indent, &v.ty, v.name(), " = _wp_args->");
        out.put_all(&[v.label(), ";\n"]);
    }
    if with_adjoints {
        for &a in code.args {
            let v = code.var(a);
            push_typed(out, indent, &v.ty, v.adj(), " = _wp_adj_args->");
            out.put_all(&[v.label(), ";\n"]);
        }
    }
}

/// A declaration line, or its start: `indent`, the C++ type, a space, the
/// name, then `then`. All in one copy where the type is spelled whole.
fn push_typed(out: &mut String, indent: &str, ty: &Type, name: &str, then: &str) {
    match ty.spelled_ctype() {
        Some(ctype) => out.put_all(&[indent, ctype, " ", name, then]),
        None => {
            out.put(indent);
            ty.push_ctype(out, false);
            out.put_all(&[" ", name, then]);
        }
    }
}

/// Appends the primal-var block to `out` and, given `duals`, the dual-var
/// block to it: each local's C++ type is spelled once, in the primal line,
/// and the dual line copies it from there (a reference's adjoint is its
/// value type, the pointer type without its `*`).
fn push_primal_vars(
    out: &mut String,
    mut duals: Option<&mut String>,
    code: &Code<'_>,
    indent: &str,
    requires_grad: bool,
) {
    push_lines(out, indent, ["//---------", "// primal vars"]);
    if let Some(duals) = duals.as_deref_mut() {
        push_lines(duals, indent, ["//---------", "// dual vars"]);
    }
    for &id in code.locals {
        let v = code.var(id);
        if let Type::Tile(t) = v.ty {
            let ctype = t.ctype();
            push_line(
                out,
                indent,
                &[&ctype, " ", v.name(), " = ", &t.cinit(requires_grad), ";"],
            );
            if let Some(duals) = duals.as_deref_mut() {
                // Shared tiles hold their gradient: the adjoint aliases the primal.
                if t.shared {
                    push_line(
                        duals,
                        indent,
                        &[&ctype, "& ", v.adj(), " = ", v.name(), ";"],
                    );
                } else {
                    push_line(duals, indent, &[&ctype, " ", v.adj(), "{};"]);
                }
            }
            continue;
        }
        if let Type::TileStack(dtype, capacity) = v.ty {
            // Allocated in the block's shared memory; its adjoint is never used.
            let ctype = v.ty.ctype(false);
            let capacity = capacity.to_string();
            let init = [
                "wp::tile_stack_alloc<",
                &dtype.ctype(),
                ", ",
                &capacity,
                ">()",
            ]
            .concat();
            push_line(out, indent, &[&ctype, " ", v.name(), " = ", &init, ";"]);
            if let Some(duals) = duals.as_deref_mut() {
                push_line(duals, indent, &[&ctype, " ", v.adj(), ";"]);
            }
            continue;
        }
        let text = match v.ty {
            Type::Str(i) => Some(code.strings[i as usize].as_str()),
            Type::StorageStr(shared) => Some(if shared { "\"shared\"" } else { "\"register\"" }),
            _ => None,
        };
        let ctype = match text {
            Some(text) => {
                push_line(out, indent, &["const wp::str ", v.name(), " = ", text, ";"]);
                "wp::str"
            }
            None => {
                let prefix = if v.constant.is_some() { "const " } else { "" };
                let start = out.len() + indent.len() + prefix.len();
                match v.ty.spelled_ctype() {
                    Some(ctype) => out.put_all(&[indent, prefix, ctype]),
                    None => {
                        out.put_all(&[indent, prefix]);
                        v.ty.push_ctype(out, false);
                    }
                }
                let end = out.len();
                match v.constant {
                    None => out.put_all(&[" ", v.name(), ";\n"]),
                    Some(c) => {
                        out.put_all(&[" ", v.name(), " = "]);
                        c.push_c_str(out);
                        // warp's `constant_str` suffixes wide and unsigned integers.
                        if let (ConstVal::Int(_), Type::Scalar(s)) = (c, v.ty) {
                            out.put(match s {
                                Scalar::UInt32 => "u",
                                Scalar::Int64 => "ll",
                                Scalar::UInt64 => "ull",
                                _ => "",
                            });
                        }
                        out.put(";\n");
                    }
                }
                let ctype = &out[start..end];
                if v.ty.is_ref() {
                    ctype.strip_suffix('*').unwrap_or(ctype)
                } else {
                    ctype
                }
            }
        };
        if let Some(duals) = duals.as_deref_mut() {
            duals.put_all(&[indent, ctype, " ", v.adj(), " = {};\n"]);
        }
    }
}

/// Which function a body is generated for: argument loading and the exit of
/// the reverse pass depend on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Body {
    CpuKernel,
    CudaKernel,
    Function,
}

/// Bytes a body will take, roughly: enough that appending it rarely grows the string.
fn body_estimate(code: &Code<'_>, reverse: bool) -> usize {
    let pass = |text_len: usize, lines: usize| text_len + 9 * lines;
    let body = if reverse {
        let (replay, reverse) = (code.body_replay(), code.body_reverse());
        pass(replay.text_len(), replay.len()) + pass(reverse.text_len(), reverse.len())
    } else {
        pass(code.body_forward().text_len(), code.body_forward().len())
    };
    let declarations = code.locals.len() * if reverse { 2 } else { 1 };
    body + 64 * (declarations + code.args.len()) + 512
}

fn forward_body(code: &Code<'_>, kind: Body, indent: &str) -> String {
    let mut out = String::with_capacity(body_estimate(code, false));
    push_forward_body(&mut out, None, code, kind, indent);
    out
}

/// Where the parts of a forward body sit in the text it was appended to.
struct ForwardParts {
    /// The primal-var block.
    primal: std::ops::Range<usize>,
    /// The start of the statement lines when each was written as is (after
    /// the indent, then a newline; not so where a CUDA kernel's `return;`
    /// became `continue;`): the replay copies its runs of them from there.
    lines: Option<usize>,
}

/// Appends the forward body, and the dual-var block to `duals` if given
/// (see [`push_primal_vars`]).
fn push_forward_body(
    out: &mut String,
    duals: Option<&mut String>,
    code: &Code<'_>,
    kind: Body,
    indent: &str,
) -> ForwardParts {
    if kind == Body::CpuKernel {
        push_argument_vars(out, code, indent, false);
    }
    let primal_start = out.len();
    push_primal_vars(out, duals, code, indent, false);
    let primal = primal_start..out.len();
    push_lines(out, indent, ["//---------", "// forward"]);
    let mut lines = Some(out.len());
    if kind != Body::CudaKernel {
        code.body_forward().write_indented(out, indent, false);
        return ForwardParts { primal, lines };
    }
    // The lines between returns are written a run at a time; most bodies
    // have none, found by one search of their text.
    let forward = code.body_forward();
    if !forward.contains("return;") {
        forward.write_indented(out, indent, false);
        return ForwardParts { primal, lines };
    }
    let mut run_start = 0;
    for (i, f) in forward.iter().enumerate() {
        // A grid-stride CUDA kernel leaves the thread's iteration instead of returning.
        if is_return(f) {
            forward.write_indented_range(out, indent, run_start..i);
            push_line(out, indent, &[&f.replace("return;", "continue;")]);
            lines = None;
            run_start = i + 1;
        }
    }
    forward.write_indented_range(out, indent, run_start..forward.len());
    ForwardParts { primal, lines }
}

/// `line.trim_start().starts_with("return;")`, without decoding the
/// indentation char by char (every forward line of a CUDA kernel is asked).
fn is_return(line: &str) -> bool {
    // The ASCII whitespace of `char::is_whitespace`: U+0009 to U+000D and U+0020.
    let ascii_space = |b: &u8| matches!(b, b'\t'..=b'\r' | b' ');
    let rest = &line.as_bytes()[line.bytes().take_while(ascii_space).count()..];
    match rest.first() {
        // Other (Unicode) whitespace may follow: the exact test decides.
        Some(&b) if b >= 0x80 => line.trim_start().starts_with("return;"),
        _ => rest.starts_with(b"return;"),
    }
}

/// Whether the primal-var block reads the same in the forward and the
/// backward pass: only a shared tile's initializer names `requires_grad`.
fn primal_vars_pass_independent(code: &Code<'_>) -> bool {
    !code
        .locals
        .iter()
        .any(|&id| matches!(code.var(id).ty, Type::Tile(t) if t.shared && !t.view))
}

fn reverse_body(code: &Code<'_>, kind: Body, indent: &str) -> String {
    let (mut primal, mut duals) = (String::new(), String::new());
    push_primal_vars(&mut primal, Some(&mut duals), code, indent, true);
    let mut out = String::with_capacity(body_estimate(code, true));
    push_reverse_body(&mut out, code, kind, indent, (Some(&primal), &duals), None);
    out
}

/// Appends the backward body. `primal` is the forward pass's primal-var
/// block, at the same indent, when it reads the same in both passes
/// ([`primal_vars_pass_independent`]): copied rather than written again.
/// `duals` is the dual-var block, written with a primal-var block.
/// `forward_lines` is the forward pass's statement lines as they were
/// written at the same indent ([`ForwardParts::lines`]), if they were.
fn push_reverse_body(
    out: &mut String,
    code: &Code<'_>,
    kind: Body,
    indent: &str,
    (primal, duals): (Option<&str>, &str),
    forward_lines: Option<&str>,
) {
    if kind == Body::CpuKernel {
        push_argument_vars(out, code, indent, true);
    }
    match primal {
        Some(block) => out.put(block),
        None => push_primal_vars(out, None, code, indent, true),
    }
    out.put(duals);
    push_lines(out, indent, ["//---------", "// forward"]);
    code.body_replay()
        .write_indented(out, indent, code.body_forward(), forward_lines);
    push_lines(out, indent, ["//---------", "// reverse"]);
    code.body_reverse().write_indented(out, indent, true);
    push_lines(
        out,
        indent,
        [if kind == Body::CudaKernel {
            "continue;"
        } else {
            "return;"
        }],
    );
}

/// Appends `template` with each placeholder replaced by its pieces, in one pass.
fn fill_template(out: &mut String, template: &str, fills: &[(&str, &[&str])]) {
    let mut rest = template;
    while let Some(at) = memchr::memchr(b'@', rest.as_bytes()) {
        let hit = fills.iter().find(|(key, _)| rest[at..].starts_with(key));
        let Some((key, pieces)) = hit else {
            out.put(&rest[..=at]);
            rest = &rest[at + 1..];
            continue;
        };
        out.put(&rest[..at]);
        pieces.iter().for_each(|p| out.put(p));
        rest = &rest[at + key.len()..];
    }
    out.put(rest);
}

/// A buffer for a kernel's dual-var block: room for its lines if it has a
/// backward pass (~40 bytes each), none otherwise.
fn dual_vars_room(k: &KernelBody<'_>) -> String {
    let lines = if k.enable_backward {
        k.adj.locals.len() + 2
    } else {
        0
    };
    String::with_capacity(40 * lines)
}

fn cuda_kernel(k: &KernelBody<'_>) -> (String, Option<String>) {
    let indent = super::lines::CUDA_INDENT;
    let code = k.adj.code();
    const SEP: &str = ",\n    ";
    // The parameter lists written in place: `format!` per parameter and a
    // `join` cost more than the text (kernels take up to 16 parameters).
    let params = |out: &mut String, prefix: &str| {
        for &a in &k.adj.args {
            let v = k.adj.var(a);
            out.put(SEP);
            if prefix == "adj_" {
                v.ty.adjoint_param().push_ctype(out, false);
            } else {
                v.ty.push_ctype(out, false);
            }
            out.put_all(&[" ", prefix, v.label()]);
        }
    };
    let mut fwd_args = String::with_capacity(48 * (k.adj.args.len() + 1));
    fwd_args.put_all(&[
        "wp::launch_bounds_t<",
        itoa::Buffer::new().format(k.adj.kernel_dim),
        "> dim",
    ]);
    params(&mut fwd_args, "var_");
    let grid_stride = k.options.grid_stride;
    let (template, close, body_kind) = if grid_stride {
        (CUDA_KERNEL_OPEN, CUDA_KERNEL_CLOSE, Body::CudaKernel)
    } else {
        // Without the loop a body leaves with `return;`, as a function's does.
        (
            CUDA_LEAN_KERNEL_OPEN,
            CUDA_LEAN_KERNEL_CLOSE,
            Body::Function,
        )
    };
    let spill = if k.options.smem_spilling {
        "    WP_ENABLE_SMEM_SPILLING();\n"
    } else {
        ""
    };
    let open = |name: &str, args: &str, room: usize| {
        let mut s = String::with_capacity(template.len() + args.len() + room);
        fill_template(
            &mut s,
            template,
            &[
                ("@NAME@", &[&k.mangled, name]),
                ("@ARGS@", &[args]),
                ("@ATTRS@", &[&k.options.cuda_attrs]),
                ("@REGS@", &[&k.options.cuda_regs]),
                ("@SPILL@", &[spill]),
            ],
        );
        s
    };
    let mut forward = open(
        "_cuda_kernel_forward",
        &fwd_args,
        body_estimate(&code, false),
    );
    let mut duals = dual_vars_room(k);
    let with_duals = k.enable_backward.then_some(&mut duals);
    let parts = push_forward_body(&mut forward, with_duals, &code, body_kind, indent);
    forward.put(close);
    let backward = k.enable_backward.then(|| {
        let mut args = fwd_args;
        params(&mut args, "adj_");
        let mut b = open("_cuda_kernel_backward", &args, body_estimate(&code, true));
        let primal = primal_vars_pass_independent(&code).then(|| &forward[parts.primal]);
        let forward_lines = parts.lines.map(|at| &forward[at..]);
        push_reverse_body(
            &mut b,
            &code,
            body_kind,
            indent,
            (primal, &duals),
            forward_lines,
        );
        b.put(close);
        b
    });
    (forward, backward)
}

fn cpu_kernel(k: &KernelBody<'_>) -> (String, Option<String>) {
    let indent = "    ";
    let code = k.adj.code();
    let open = |kind: &str, args: &str| {
        CPU_KERNEL_OPEN
            .replace("@NAME@", &k.mangled)
            .replace("@KIND@", kind)
            .replace("@ARGS@", args)
    };
    let base = format!(
        "wp::launch_bounds_t<{}> dim,\n    size_t task_index",
        k.adj.kernel_dim
    );
    let mut forward = open(
        "forward",
        &format!("{base},\n    wp_args_{} *_wp_args", k.mangled),
    );
    forward.reserve(body_estimate(&code, false));
    let mut duals = dual_vars_room(k);
    let with_duals = k.enable_backward.then_some(&mut duals);
    let parts = push_forward_body(&mut forward, with_duals, &code, Body::CpuKernel, indent);
    forward.push('}');
    let backward = k.enable_backward.then(|| {
        let mut b = open(
            "backward",
            &format!(
                "{base},\n    wp_args_{0} *_wp_args,\n    wp_args_{0} *_wp_adj_args",
                k.mangled
            ),
        );
        b.reserve(body_estimate(&code, true));
        let primal = primal_vars_pass_independent(&code).then(|| &forward[parts.primal]);
        let forward_lines = parts.lines.map(|at| &forward[at..]);
        let declared = (primal, duals.as_str());
        push_reverse_body(
            &mut b,
            &code,
            Body::CpuKernel,
            indent,
            declared,
            forward_lines,
        );
        b.push('}');
        b
    });
    (forward, backward)
}

#[cfg(test)]
mod tests {
    use super::{is_return, split_lines};

    #[test]
    fn split_lines_is_split_at_newlines_without_carriage_returns() {
        for source in [
            "",
            "\n",
            "a",
            "a\nb",
            "a\r\nb\r\n",
            "\r\n\n x = 1\r\ny\rz\n é\n",
        ] {
            let expected: Vec<&str> = source
                .split('\n')
                .map(|l| l.strip_suffix('\r').unwrap_or(l))
                .collect();
            assert_eq!(split_lines(source), expected, "{source:?}");
        }
    }

    #[test]
    fn is_return_is_the_trimmed_prefix_test() {
        for line in [
            "return;",
            "        return;",
            "\t return; // x",
            "\u{a0}return;",
            " \u{2003}return;",
            "",
            "    ",
            "    returns;",
            "    // return;",
            "é return;",
            "\u{a0}x",
        ] {
            assert_eq!(
                is_return(line),
                line.trim_start().starts_with("return;"),
                "{line:?}"
            );
        }
    }
}
