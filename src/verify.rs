//! Pattern checks on the generated source, per target. They catch a lowering
//! that produced something which is not a launchable warp kernel (a missing
//! entry point, a broken grid-stride loop) before it reaches the dataset.
//! A failing row is rejected with a short, stable reason slug that the
//! manifest counts.

use crate::lower::{KernelIr, Target};

/// The CUDA grid-stride loop warp wraps every kernel body in, as three
/// pieces: start over blockDim/blockIdx/threadIdx, bound, stride over gridDim.
const GRID_STRIDE: [&str; 3] = [
    "_idx = static_cast<size_t>(blockDim.x) * static_cast<size_t>(blockIdx.x) + static_cast<size_t>(threadIdx.x);",
    "_idx < dim.size;",
    "_idx += static_cast<size_t>(blockDim.x) * static_cast<size_t>(gridDim.x))",
];

/// Block-level shared memory for tile programming, declared by every CUDA kernel.
const TILE_STORAGE: &str = "wp::tile_shared_storage_t tile_mem;";

/// Check one kernel's generated code for `target`. `module` is the whole
/// module source the kernel's functions were taken from.
pub fn verify(target: Target, ir: &KernelIr, module: &str) -> Result<(), &'static str> {
    match target {
        Target::Cuda => verify_cuda(ir, module),
        Target::Cpu => verify_cpu(ir, module),
    }
}

fn verify_cuda(ir: &KernelIr, module: &str) -> Result<(), &'static str> {
    let name = &ir.name;
    let hash = entry_hash(
        &ir.forward,
        "extern \"C\" __global__ void ",
        name,
        "_cuda_kernel_forward(",
    )
    .ok_or("cuda_missing_forward_entry")?;
    let backward = format!("extern \"C\" __global__ void {name}_{hash}_cuda_kernel_backward(");
    if !has_backward(ir, module, &backward) {
        return Err("cuda_missing_backward_entry");
    }
    for body in passes(ir) {
        if !GRID_STRIDE.iter().all(|p| body.contains(p)) {
            return Err("cuda_missing_grid_stride");
        }
        if !body.contains(TILE_STORAGE) {
            return Err("cuda_missing_tile_storage");
        }
        if !balanced(body) {
            return Err("cuda_unbalanced_braces");
        }
    }
    if !passes(ir).all(|body| module.contains(body)) {
        return Err("cuda_ir_not_in_module");
    }
    Ok(())
}

fn verify_cpu(ir: &KernelIr, module: &str) -> Result<(), &'static str> {
    let name = &ir.name;
    let hash = entry_hash(&ir.forward, "static void ", name, "_cpu_kernel_forward(")
        .ok_or("cpu_missing_forward_kernel")?;
    if !has_backward(
        ir,
        module,
        &format!("static void {name}_{hash}_cpu_kernel_backward("),
    ) {
        return Err("cpu_missing_backward_kernel");
    }
    if !passes(ir).all(balanced) {
        return Err("cpu_unbalanced_braces");
    }
    if !module.contains(&format!("WP_API void {name}_{hash}_cpu_forward(")) {
        return Err("cpu_missing_forward_entry");
    }
    let entry = format!("WP_API void {name}_{hash}_cpu_backward(");
    if module.contains(&entry) == ir.backward.is_empty() {
        return Err("cpu_missing_backward_entry");
    }
    if !passes(ir).all(|body| module.contains(body)) {
        return Err("cpu_ir_not_in_module");
    }
    Ok(())
}

/// Whether the backward function is as it should be: present and starting
/// with `signature`, or, for a kernel declared `enable_backward=False`,
/// empty and absent from the module as well.
fn has_backward(ir: &KernelIr, module: &str, signature: &str) -> bool {
    if ir.backward.is_empty() {
        !module.contains(signature)
    } else {
        ir.backward.contains(signature)
    }
}

/// The functions to check: forward, and backward unless it is disabled.
fn passes(ir: &KernelIr) -> impl Iterator<Item = &str> {
    std::iter::once(ir.forward.as_str()).chain(Some(ir.backward.as_str()).filter(|b| !b.is_empty()))
}

/// Find `{prefix}{name}_{8 hex}{suffix}` in `text` and return the hash.
fn entry_hash<'t>(text: &'t str, prefix: &str, name: &str, suffix: &str) -> Option<&'t str> {
    let needle = format!("{prefix}{name}_");
    text.match_indices(&needle).find_map(|(at, _)| {
        let rest = &text[at + needle.len()..];
        let hash = rest.get(..8)?;
        (hash.bytes().all(|b| b.is_ascii_hexdigit()) && rest[8..].starts_with(suffix))
            .then_some(hash)
    })
}

/// Braces balance outside `//` comments (the comments echo Python source),
/// and the function has a body at all.
fn balanced(code: &str) -> bool {
    let mut depth = 0i64;
    let mut opened = false;
    for line in code.lines() {
        let code = line.find("//").map_or(line, |i| &line[..i]);
        for b in code.bytes() {
            match b {
                b'{' => {
                    depth += 1;
                    opened = true;
                }
                b'}' => {
                    depth -= 1;
                    if depth < 0 {
                        return false;
                    }
                }
                _ => {}
            }
        }
    }
    opened && depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A skeleton with the shape of warp's CUDA kernels (not its output: only
    /// the lines the rules look at).
    fn cuda_fn(name: &str, pass: &str) -> String {
        format!(
            "extern \"C\" __global__ void {name}_0badf00d_cuda_kernel_{pass}(\n    wp::launch_bounds_t<1> dim)\n{{\n    {TILE_STORAGE}\n\n    for (size_t {}\n         {}\n         {}\n    {{\n        // y[i] = {{}}\n    }}\n}}\n",
            GRID_STRIDE[0], GRID_STRIDE[1], GRID_STRIDE[2]
        )
    }

    fn cuda_ir() -> (KernelIr, String) {
        let ir = KernelIr {
            name: "k".into(),
            forward: cuda_fn("k", "forward"),
            backward: cuda_fn("k", "backward"),
        };
        let module = format!(
            "#include \"builtin.h\"\n\n{}\n\n{}\n",
            ir.forward, ir.backward
        );
        (ir, module)
    }

    #[test]
    fn cuda_rules() {
        let (ir, module) = cuda_ir();
        assert_eq!(verify(Target::Cuda, &ir, &module), Ok(()));
        let mutate = |f: &dyn Fn(&mut KernelIr)| {
            let mut bad = ir.clone();
            f(&mut bad);
            verify(Target::Cuda, &bad, &module)
        };
        assert_eq!(
            mutate(&|k| k.forward = k.forward.replace("gridDim", "blockDim")),
            Err("cuda_missing_grid_stride")
        );
        assert_eq!(
            mutate(&|k| k.backward = k.backward.replace("tile_mem;", "mem;")),
            Err("cuda_missing_tile_storage")
        );
        assert_eq!(
            mutate(&|k| k.forward = k.forward.replace("__global__ ", "")),
            Err("cuda_missing_forward_entry")
        );
        assert_eq!(
            mutate(&|k| k.backward = k.backward.replace("0badf00d", "0badf00e")),
            Err("cuda_missing_backward_entry")
        );
        assert_eq!(
            mutate(&|k| k.name = "j".into()),
            Err("cuda_missing_forward_entry")
        );
        assert_eq!(
            mutate(&|k| k.forward.push('}')),
            Err("cuda_unbalanced_braces")
        );
        assert_eq!(
            mutate(&|k| k.forward = k.forward.replace("    {\n", "    {\n\n")),
            Err("cuda_ir_not_in_module")
        );
        // enable_backward=False: fine only if the module has no backward either.
        let fwd_only = KernelIr {
            backward: String::new(),
            ..ir.clone()
        };
        assert_eq!(
            verify(Target::Cuda, &fwd_only, &module),
            Err("cuda_missing_backward_entry")
        );
        assert_eq!(verify(Target::Cuda, &fwd_only, &ir.forward), Ok(()));
    }

    #[test]
    fn cpu_rules() {
        let f = |pass: &str| {
            format!(
                "template <bool c>\nstatic void k_12345678_cpu_kernel_{pass}(\n    size_t task_index)\n{{\n    return;\n}}\n"
            )
        };
        let ir = KernelIr {
            name: "k".into(),
            forward: f("forward"),
            backward: f("backward"),
        };
        let entries = "WP_API void k_12345678_cpu_forward(\n)\n{\n}\nWP_API void k_12345678_cpu_backward(\n)\n{\n}\n";
        let module = format!("{}\n{}\n{entries}", ir.forward, ir.backward);
        assert_eq!(verify(Target::Cpu, &ir, &module), Ok(()));
        let no_bwd = module.replace("_cpu_backward(", "_cpu_bwd(");
        assert_eq!(
            verify(Target::Cpu, &ir, &no_bwd),
            Err("cpu_missing_backward_entry")
        );
        let no_fwd = module.replace(
            "WP_API void k_12345678_cpu_forward",
            "void k_12345678_cpu_forward",
        );
        assert_eq!(
            verify(Target::Cpu, &ir, &no_fwd),
            Err("cpu_missing_forward_entry")
        );
        let mut bad = ir.clone();
        bad.backward = bad.backward.replace("static void", "void");
        assert_eq!(
            verify(Target::Cpu, &bad, &module),
            Err("cpu_missing_backward_kernel")
        );
        // enable_backward=False: no backward function, and no entry point for one.
        let fwd_only = KernelIr {
            backward: String::new(),
            ..ir.clone()
        };
        let module_fwd = format!(
            "{}\nWP_API void k_12345678_cpu_forward(\n)\n{{\n}}\n",
            ir.forward
        );
        assert_eq!(verify(Target::Cpu, &fwd_only, &module_fwd), Ok(()));
        assert_eq!(
            verify(Target::Cpu, &fwd_only, &module),
            Err("cpu_missing_backward_kernel")
        );
        // A CUDA kernel is not a CPU kernel.
        let (cuda, cuda_module) = cuda_ir();
        assert_eq!(
            verify(Target::Cpu, &cuda, &cuda_module),
            Err("cpu_missing_forward_kernel")
        );
    }
}
